"""cudacca.label() against scikit-image and cc3d, every input type, and bad input. (ITK: test_itk.py.)"""

import itertools
import subprocess
import sys

import numpy as np
import pytest

import cudacca
from conftest import BACKENDS, DENSITY_GRANULARITY, random_image, valued_image


def reference_labels(image, full=False):
    """scikit-image's labels, equal to ITK's ConnectedComponentImageFilter's (test_itk.py shows both)."""
    from skimage import measure

    return measure.label(image, connectivity=image.ndim if full else 1, background=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_all_ones_and_empty(backend):
    for shape in [(31, 17), (7, 9, 11)]:
        ones = np.ones(shape, np.uint8)
        labels, table = cudacca.label(ones, backend=backend, return_table=True)
        assert (labels == 1).all() and list(table["num_pixels"]) == [ones.size]
        labels, table = cudacca.label(np.zeros(shape, np.float32), backend=backend, return_table=True)
        assert (labels == 0).all() and len(table["label"]) == 0

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(1, 1), (1, 40), (40, 1), (45, 77), (13, 17, 19), (200,)])
def test_labels_and_regionprops_equal_skimage(backend, shape):
    from skimage import measure

    # every connectivity of the dimension (scikit-image's number; 2 in 3-D: faces and edges, cc3d's 18)
    for connectivity, (d, g) in itertools.product(range(1, len(shape) + 1), DENSITY_GRANULARITY):
        image = random_image(shape, d, g, seed=len(shape) * 100 + int(d * 10) + g)
        expected = measure.label(image, connectivity=connectivity, background=0)
        labels, table = cudacca.label(image, connectivity=connectivity, return_table=True, backend=backend,
                                      properties=["basic", "extent"])
        np.testing.assert_array_equal(labels, expected)
        if expected.max() == 0 or len(shape) == 1:  # regionprops takes 2-D and 3-D images
            continue
        props = measure.regionprops_table(expected, properties=("label", "area", "bbox", "centroid", "extent"))
        np.testing.assert_array_equal(table["extent"], props["extent"])
        np.testing.assert_array_equal(table["label"], props["label"])
        np.testing.assert_array_equal(table["num_pixels"], props["area"])
        for c in range(2 * len(shape)):
            np.testing.assert_array_equal(table[f"bbox-{c}"], props[f"bbox-{c}"])
        for c in range(len(shape)):
            np.testing.assert_allclose(table[f"centroid-{c}"], props[f"centroid-{c}"], rtol=1e-12)

# Above the CUDA engine's one-launch limit (2^18 pixels), so that binary input takes its general path (a kernel per
# stage): rows of 1, 2, 4, 15, 17 and 141 bitmask words, slices of 2, 7, 61 and 1,000 rows, odd sides, one side of 1.
GENERAL_PATH_SHAPES = [(613, 517), (9000, 33), (300001, 1), (70, 61, 97), (9, 7, 4500), (300, 2, 450), (300, 1000, 1)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", GENERAL_PATH_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_large_images_equal_skimage(backend, shape):
    from skimage import measure

    rng = np.random.default_rng(sum(shape))
    checkerboard = (np.indices(shape).sum(axis=0) % 2).astype(np.uint8)  # a run at every other pixel
    stripes = (np.indices(shape)[-1] % 2).astype(np.uint8)
    for connectivity in range(1, len(shape) + 1):
        images = [random_image(shape, d, g, seed=int(rng.integers(1 << 30))) for d, g in DENSITY_GRANULARITY]
        images += [checkerboard, stripes, valued_image(shape, 3, 2, seed=connectivity, dtype=np.uint8)]
        for image in images:
            multilabel = image.max() > 1
            # scikit-image numbers an image with a side of 1 in another order: its squeezed image instead
            flat = np.squeeze(image)
            expected = measure.label(flat, connectivity=min(connectivity, flat.ndim), background=0).reshape(shape)
            labels = cudacca.label(image, connectivity=connectivity, multilabel=multilabel, backend=backend)
            np.testing.assert_array_equal(labels, expected, err_msg=f"connectivity {connectivity}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(5, 37, 61, 97), (4, 613, 129)], ids=lambda s: "x".join(map(str, s)))
def test_large_batch_equals_skimage(backend, shape):
    """A batch on the general path: nothing joins across its images."""
    from skimage import measure

    images = [random_image(shape[1:], 0.6, 1 + i % 2, seed=i) for i in range(shape[0])]
    for connectivity in (1, len(shape) - 1):
        labels = cudacca.label_batch(np.stack(images), connectivity=connectivity, backend=backend)
        for i, image in enumerate(images):
            expected = measure.label(image, connectivity=connectivity, background=0)
            np.testing.assert_array_equal(labels[i], expected, err_msg=f"image {i}, connectivity {connectivity}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_sizes_equal_cc3d(backend):
    cc3d = pytest.importorskip("cc3d")
    for shape, connectivity in [((97, 89), 4), ((97, 89), 8), ((31, 29, 27), 6), ((31, 29, 27), 18),
                                ((31, 29, 27), 26)]:
        image = random_image(shape, 0.5, 1, seed=connectivity)
        theirs = cc3d.connected_components(image, connectivity=connectivity)
        ours, table = cudacca.label(image, connectivity=connectivity, return_table=True, backend=backend)
        # the same partition: each of our labels is exactly one of theirs
        pairs = np.unique(np.stack([ours.ravel(), theirs.ravel().astype(np.uint64)]), axis=1)
        assert pairs.shape[1] == len(np.unique(ours)) == len(np.unique(theirs))
        stats = cc3d.statistics(theirs)
        assert sorted(table["num_pixels"].tolist()) == sorted(stats["voxel_counts"][1:].tolist())

@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"])
def test_every_scalar_type(dtype):
    values = random_image((23, 29), 0.5, 1, seed=3).astype(np.float64) * np.array(-3.5 if dtype[0] in "if" else 3)
    image = values.astype(dtype)
    expected = reference_labels(image != 0)
    for backend in BACKENDS:
        np.testing.assert_array_equal(cudacca.label(image, backend=backend), expected)

@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"])
def test_rows_of_every_width_and_value(dtype):
    """The row scan reads 64 pixels at a time: rows shorter than, equal to and just past multiples of 64, runs
    across the 64-pixel boundaries, and the values whose test for zero is easy to get wrong (NaN and the smallest
    subnormal are foreground, -0.0 is not; a 64-bit value whose low or high 32 bits are zero is foreground), in the
    image and in the mask."""
    info = np.finfo(dtype) if dtype.startswith("float") else None
    special = {"float32": [np.nan, info.smallest_subnormal if info else 0, -1.0],
               "float64": [np.nan, info.smallest_subnormal if info else 0, 1e300],
               "int64": [2**32, -(2**32), 1, -(2**63)], "uint64": [2**32, 2**63, 1, 2**64 - 1]}
    rng = np.random.default_rng(64)
    for width in (1, 2, 63, 64, 65, 127, 128, 129, 200, 256):
        for d, g in [(0.5, 1), (0.3, 5), (0.9, 1), (0.02, 1), (0.98, 70)]:
            cells = random_image((9, width), d, g, seed=width + g)
            values = np.zeros(cells.shape, dtype)
            if dtype in special:
                choices = np.array(special[dtype], dtype=dtype)
                values[cells != 0] = choices[rng.integers(0, len(choices), int((cells != 0).sum()))]
                values[(cells == 0) & (rng.random(cells.shape) < 0.5)] = -0.0 if dtype.startswith("float") else 0
            else:
                values[cells != 0] = 1
            foreground = values != 0
            assert (foreground == (cells != 0)).all()  # the values chosen are what the test says they are
            mask = random_image(values.shape, 0.7, 3, seed=width).astype(dtype) * (values.dtype.type(1))
            for backend in BACKENDS:
                np.testing.assert_array_equal(cudacca.label(values, backend=backend), reference_labels(foreground))
                np.testing.assert_array_equal(cudacca.label(values, mask=mask, backend=backend),
                                              reference_labels(foreground & (mask != 0)))

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["coins", "camera", "horse", "binary_blobs"])
def test_real_images_equal_skimage(backend, name):
    from skimage import data, measure

    if name == "binary_blobs":
        image = data.binary_blobs(length=256, n_dim=3, volume_fraction=0.3, rng=1)
    elif name == "horse":
        image = ~data.horse()
    else:
        picture = getattr(data, name)()
        image = picture > np.median(picture)
    for full in (False, True):
        expected = reference_labels(image, full)
        labels, table = cudacca.label(image, connectivity="full" if full else "face", return_table=True, backend=backend)
        np.testing.assert_array_equal(labels, expected)
        props = measure.regionprops_table(expected, properties=("area", "bbox"))
        np.testing.assert_array_equal(table["num_pixels"], props["area"])
        np.testing.assert_array_equal(table["bbox-0"], props["bbox-0"])


def test_background_value_mask_spacing_and_layout():
    image = random_image((40, 50), 0.5, 2, seed=11).astype(np.int16) + 4  # background value 4
    expected = reference_labels(image != 4)
    np.testing.assert_array_equal(cudacca.label(image, background=4), expected)
    mask = np.zeros(image.shape, np.uint8)
    mask[:, :25] = 1
    masked = cudacca.label(image, background=4, mask=mask)
    np.testing.assert_array_equal(masked, reference_labels((image != 4) & (mask != 0)))
    big_endian = image.astype(">i2")
    np.testing.assert_array_equal(cudacca.label(big_endian, background=4), expected)
    fortran = np.asfortranarray(image)
    np.testing.assert_array_equal(cudacca.label(fortran, background=4), expected)  # copied, same answer
    strided = np.zeros((40, 100), np.int16) + 4
    strided[:, ::2] = image
    np.testing.assert_array_equal(cudacca.label(strided[:, ::2], background=4), expected)
    _, table = cudacca.label(image != 4, spacing=(2.0, 0.5), min_physical_size=3.0, return_table=True)
    assert (table["area"] >= 3.0).all()
    np.testing.assert_allclose(table["area"], table["num_pixels"] * 1.0)

def test_bad_input_raises_clearly():
    with pytest.raises(ValueError, match="0-d"):
        cudacca.label(np.uint8(1))
    with pytest.raises(ValueError, match="4-D"):
        cudacca.label(np.zeros((2, 2, 2, 2), np.uint8))
    with pytest.raises(TypeError, match="complex"):
        cudacca.label(np.zeros((4, 4), np.complex64))
    with pytest.raises(TypeError, match="object"):
        cudacca.label(np.array([[None, 1]], dtype=object))
    with pytest.raises(TypeError, match="float16"):
        cudacca.label(np.zeros((4, 4), np.float16))
    with pytest.raises(ValueError, match="empty"):
        cudacca.label(np.zeros((0, 4), np.uint8))
    with pytest.raises(ValueError, match="shape"):
        cudacca.label(np.zeros((4, 4), np.uint8), mask=np.zeros((4, 5), np.uint8))
    with pytest.raises(ValueError, match="connectivity"):
        cudacca.label(np.zeros((4, 4), np.uint8), connectivity=18)  # a 3-D connectivity
    with pytest.raises(ValueError, match="connectivity"):
        cudacca.label(np.zeros((4, 4, 4), np.uint8), connectivity=4)
    with pytest.raises(ValueError, match="negative"):
        cudacca.label(np.zeros((4, 4), np.uint8), min_size=-1)
    with pytest.raises(ValueError, match="spacing"):
        cudacca.label(np.zeros((4, 4), np.uint8), spacing=(1.0, 0.0))
    with pytest.raises(ValueError, match="unknown property"):
        cudacca.label(np.ones((4, 4), np.uint8), return_table=True, properties=["volume"])
    checker = np.indices((40, 40)).sum(axis=0) % 2  # 800 one-pixel components under face connectivity
    with pytest.raises(OverflowError, match="label overflow"):
        cudacca.label(checker, dtype=np.uint8)
    assert cudacca.label(checker, dtype=np.uint16).max() == 800

@pytest.mark.parametrize("backend", BACKENDS)
def test_output_array_is_written_and_returned(backend):
    """`output`: the caller's label array is written (every pixel, background included) and returned, on the
    common call's short path, the general path (a mask) and in slabs, with the table unchanged."""
    image = random_image((300, 257), 0.5, 1, seed=31)
    expected, expected_table = cudacca.label(image, return_table=True, backend=backend)
    for dtype in (np.uint32, np.int64, np.uint16):
        output = np.full(image.shape, 7, dtype)
        got, table = cudacca.label(image, return_table=True, backend=backend, output=output)
        assert got is output
        np.testing.assert_array_equal(output, expected)
        for k in expected_table:
            np.testing.assert_array_equal(table[k], expected_table[k])
    output = np.full(image.shape, 7, np.uint32)
    assert cudacca.label(image, mask=np.ones_like(image), backend=backend, output=output) is output
    np.testing.assert_array_equal(output, expected)
    volume = random_image((40, 30, 20), 0.5, 1, seed=32)
    output = np.full(volume.shape, 7, np.uint32)
    cudacca.label(volume, memory_budget=20000, backend=backend, output=output)
    assert cudacca._label._analysis().number_of_slabs > 1
    np.testing.assert_array_equal(output, cudacca.label(volume, backend=backend))


def test_output_array_errors():
    image = random_image((30, 20), 0.5, 1, seed=33)
    with pytest.raises(OverflowError, match="label overflow"):
        cudacca.label(np.indices((40, 40)).sum(axis=0) % 2, output=np.zeros((40, 40), np.uint8))
    with pytest.raises(ValueError, match="shape"):
        cudacca.label(image, output=np.zeros((20, 30), np.uint32))
    with pytest.raises(TypeError, match="integer type"):
        cudacca.label(image, output=np.zeros(image.shape, np.float32))
    with pytest.raises(TypeError, match="byte order"):
        cudacca.label(image, output=np.zeros(image.shape, ">u4"))
    with pytest.raises(ValueError, match="C-contiguous"):
        cudacca.label(image, output=np.zeros(image.shape[::-1], np.uint32).T)
    read_only = np.zeros(image.shape, np.uint32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        cudacca.label(image, output=read_only)
    with pytest.raises(ValueError, match="dtype"):
        cudacca.label(image, output=np.zeros(image.shape, np.uint32), dtype=np.uint64)
    as_int = image.astype(np.uint32)
    with pytest.raises(ValueError, match="shares memory"):
        cudacca.label(as_int, output=as_int)
    with pytest.raises(ValueError, match="shares memory"):
        cudacca.label(image.astype(np.int32), mask=as_int, output=as_int)
    with pytest.raises(TypeError, match="numpy array"):
        cudacca.label(image, output=[[0] * 20] * 30)


def test_without_a_gpu_the_cpu_engine_is_said_once():
    if cudacca.cuda_available()[0]:
        pytest.skip("a GPU is usable here")
    code = (
        "import warnings, numpy as np, cudacca\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    for _ in range(3): cudacca.label(np.ones((256, 256), np.uint8))\n"  # past the size rule (24,576 pixels)
        "print(len(w), cudacca.last_backend()[0]); print(w[0].message)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    first, message = out.splitlines()[:2]
    assert first == "1 cpu"
    assert "using the CPU engine" in message


def test_repeated_requests_resolve_alike():
    """Property lists are resolved once per distinct request and handed out as copies: a multilabel call, which adds
    the class column to its list, leaves the next call's table as asked; lists, tuples and generators of the same
    names give the same columns; unknown names are refused every time; the label column is 1 .. N."""
    image = random_image((37, 29), 0.5, 2, seed=11)
    classes = image * np.uint8(3)
    for _ in range(2):
        _, with_class = cudacca.label(classes, multilabel=True, return_table=True, properties=["area", "bbox"])
        assert list(with_class) == ["label", "area", "bbox-0", "bbox-1", "bbox-2", "bbox-3", "class"]
        labels, plain = cudacca.label(image, return_table=True, properties=["area", "bbox"])
        assert list(plain) == ["label", "area", "bbox-0", "bbox-1", "bbox-2", "bbox-3"]
        np.testing.assert_array_equal(plain["label"], np.arange(1, labels.max() + 1, dtype=np.uint64))
    for request in (("area", "bbox"), (n for n in ["area", "bbox"])):
        _, again = cudacca.label(image, return_table=True, properties=request)
        assert list(again) == list(plain)
        for k in plain:
            np.testing.assert_array_equal(again[k], plain[k])
    for _ in range(2):
        with pytest.raises(ValueError, match="unknown property 'areas'"):
            cudacca.label(image, return_table=True, properties=["areas"])
