"""cudacca.label() against ITK (pip's itk 5.4), scikit-image and cc3d on random and real images."""

import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

import cudacca
from cudacca._arrays import itk_image_like
from conftest import random_image

itk = pytest.importorskip("itk")

BACKENDS = ["cpu"] + (["cuda"] if cudacca.cuda_available()[0] else [])
SHAPES = [(1, 1), (1, 57), (57, 1), (37, 53), (64, 64), (1, 1, 1), (5, 1, 7), (1, 9, 1), (17, 23, 29), (32, 32, 32)]
DENSITY_GRANULARITY = [(0.2, 1), (0.5, 1), (0.8, 1), (0.4, 4), (0.6, 3)]
REPO = os.path.join(os.path.dirname(__file__), "..", "..")


def itk_labels(image, fully_connected):
    out = itk.connected_component_image_filter(itk_image_like(image), fully_connected=fully_connected)
    return itk.array_from_image(out)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("full", [False, True], ids=["face", "full"])
def test_labels_equal_itk(backend, shape, full):
    for i, (d, g) in enumerate(DENSITY_GRANULARITY):
        image = random_image(shape, d, g, seed=hash((shape, i)) % 2**32)
        expected = itk_labels(image, full)
        got = cudacca.label(image, connectivity="full" if full else "face", backend=backend)
        assert got.dtype == np.uint32
        np.testing.assert_array_equal(got, expected, err_msg=f"d={d} g={g}")
        assert cudacca.last_backend()[0] == backend


@pytest.mark.parametrize("backend", BACKENDS)
def test_all_ones_and_empty(backend):
    for shape in [(31, 17), (7, 9, 11)]:
        ones = np.ones(shape, np.uint8)
        labels, table = cudacca.label(ones, backend=backend, return_table=True)
        assert (labels == 1).all() and list(table["num_pixels"]) == [ones.size]
        labels, table = cudacca.label(np.zeros(shape, np.float32), backend=backend, return_table=True)
        assert (labels == 0).all() and len(table["label"]) == 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ndim", [2, 3])
def test_sort_and_min_size_equal_relabel(backend, ndim):
    shape = (61, 47) if ndim == 2 else (19, 23, 21)
    image = random_image(shape, 0.45, 2, seed=ndim)
    cc = itk.connected_component_image_filter(itk_image_like(image), fully_connected=True)
    for minimum in (0, 5):
        relabel = itk.relabel_component_image_filter(cc, minimum_object_size=minimum)
        got = cudacca.label(image, connectivity=ndim, sort=True, min_size=minimum, backend=backend)
        np.testing.assert_array_equal(got, itk.array_from_image(relabel))
    largest = cudacca.label(image, connectivity=ndim, keep_largest=True, backend=backend)
    sizes = np.bincount(itk.array_from_image(cc).ravel())[1:]
    assert largest.max() == 1 and (largest == 1).sum() == sizes.max()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(1, 1), (1, 40), (40, 1), (45, 77), (13, 17, 19), (200,)])
def test_labels_and_regionprops_equal_skimage(backend, shape):
    from skimage import measure

    for full, (d, g) in itertools.product([False, True], DENSITY_GRANULARITY):
        image = random_image(shape, d, g, seed=len(shape) * 100 + int(d * 10) + g)
        connectivity = len(shape) if full else 1
        expected = measure.label(image, connectivity=connectivity, background=0)
        labels, table = cudacca.label(image, connectivity=connectivity, return_table=True, backend=backend)
        np.testing.assert_array_equal(labels, expected)
        if expected.max() == 0 or len(shape) == 1:  # regionprops takes 2-D and 3-D images
            continue
        props = measure.regionprops_table(expected, properties=("label", "area", "bbox", "centroid"))
        np.testing.assert_array_equal(table["label"], props["label"])
        np.testing.assert_array_equal(table["num_pixels"], props["area"])
        for c in range(2 * len(shape)):
            np.testing.assert_array_equal(table[f"bbox-{c}"], props[f"bbox-{c}"])
        for c in range(len(shape)):
            np.testing.assert_allclose(table[f"centroid-{c}"], props[f"centroid-{c}"], rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sizes_equal_cc3d(backend):
    cc3d = pytest.importorskip("cc3d")
    for shape, connectivity in [((97, 89), 4), ((97, 89), 8), ((31, 29, 27), 6), ((31, 29, 27), 26)]:
        image = random_image(shape, 0.5, 1, seed=connectivity)
        theirs = cc3d.connected_components(image, connectivity=connectivity)
        ours, table = cudacca.label(image, connectivity=connectivity, return_table=True, backend=backend)
        # the same partition: each of our labels is exactly one of theirs
        pairs = np.unique(np.stack([ours.ravel(), theirs.ravel().astype(np.uint64)]), axis=1)
        assert pairs.shape[1] == len(np.unique(ours)) == len(np.unique(theirs))
        stats = cc3d.statistics(theirs)
        assert sorted(table["num_pixels"].tolist()) == sorted(stats["voxel_counts"][1:].tolist())


def _shape_map(label_image):
    """ITK's LabelImageToShapeLabelMapFilter on a label image, with Feret and OBB, as {label: object}."""
    labels = itk.array_from_image(label_image).astype(np.uint16)
    image = itk_image_like(labels)
    image.CopyInformation(label_image)
    f = itk.LabelImageToShapeLabelMapFilter.New(image)
    f.SetComputeFeretDiameter(True)
    f.SetComputeOrientedBoundingBox(True)
    f.SetComputePerimeter(True)
    f.Update()
    m = f.GetOutput()
    return {int(m.GetNthLabelObject(i).GetLabel()): m.GetNthLabelObject(i) for i in range(m.GetNumberOfLabelObjects())}


def _close(a, b, what):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * max(1.0, float(np.max(np.abs(b)))), err_msg=what)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ndim", [2, 3])
def test_table_equals_itk_shape_label_map(backend, ndim):
    shape = (41, 37) if ndim == 2 else (15, 17, 13)
    array = random_image(shape, 0.35, 3, seed=7 + ndim)
    image = itk_image_like(array)
    spacing = [0.7, 1.3, 2.1][:ndim]
    image.SetSpacing(spacing)
    image.SetOrigin([-12.5, 3.25, 100.0][:ndim])
    angle = 0.3
    direction = np.eye(ndim)
    direction[0, 0], direction[0, 1], direction[1, 0], direction[1, 1] = np.cos(angle), -np.sin(angle), np.sin(angle), np.cos(angle)
    image.SetDirection(itk.matrix_from_array(direction))
    properties = list(cudacca.ALL) + list(cudacca.ON_REQUEST)
    labels, table = cudacca.label(image, connectivity="full", return_table=True, properties=properties, backend=backend)
    assert isinstance(labels, itk.Image)
    assert tuple(labels.GetSpacing()) == tuple(image.GetSpacing())
    assert tuple(labels.GetOrigin()) == tuple(image.GetOrigin())
    np.testing.assert_array_equal(itk.array_from_matrix(labels.GetDirection()), direction)
    np.testing.assert_array_equal(itk.array_from_image(labels), itk_labels(array, True))
    objects = _shape_map(labels)
    assert sorted(objects) == table["label"].tolist()
    rev = list(range(ndim))[::-1]  # ITK's axis i is the table's component ndim-1-i
    for row, lab in enumerate(table["label"].tolist()):
        o = objects[lab]
        assert table["num_pixels"][row] == o.GetNumberOfPixels()
        _close(table["area"][row], o.GetPhysicalSize(), "area")
        region = o.GetBoundingBox()
        for c in range(ndim):
            assert table[f"bbox-{c}"][row] == region.GetIndex()[rev[c]]
            assert table[f"bbox-{ndim + c}"][row] == region.GetIndex()[rev[c]] + region.GetSize()[rev[c]]
        _close([table[f"centroid-{c}"][row] for c in range(ndim)], [o.GetCentroid()[rev[c]] for c in range(ndim)], "centroid")
        _close([table[f"principal_moments-{c}"][row] for c in range(ndim)], list(o.GetPrincipalMoments()), "moments")
        axes = itk.array_from_matrix(o.GetPrincipalAxes())
        ours = np.array([[table[f"principal_axes-{m}-{c}"][row] for c in range(ndim)] for m in range(ndim)])
        _close(ours[:, ::-1], axes, "principal axes")
        for name, getter in [
            ("elongation", o.GetElongation),
            ("flatness", o.GetFlatness),
            ("perimeter", o.GetPerimeter),
            ("roundness", o.GetRoundness),
            ("perimeter_on_border", o.GetPerimeterOnBorder),
            ("perimeter_on_border_ratio", o.GetPerimeterOnBorderRatio),
            ("equivalent_spherical_radius", o.GetEquivalentSphericalRadius),
            ("equivalent_spherical_perimeter", o.GetEquivalentSphericalPerimeter),
            ("feret_diameter", o.GetFeretDiameter),
        ]:
            _close(table[name][row], getter(), name)
        assert table["num_pixels_on_border"][row] == o.GetNumberOfPixelsOnBorder()
        _close([table[f"equivalent_ellipsoid_diameter-{c}"][row] for c in range(ndim)], list(o.GetEquivalentEllipsoidDiameter()), "ellipsoid")
        _close([table[f"oriented_bounding_box_size-{c}"][row] for c in range(ndim)], list(o.GetOrientedBoundingBoxSize()), "obb size")
        _close([table[f"oriented_bounding_box_origin-{c}"][row] for c in range(ndim)], [o.GetOrientedBoundingBoxOrigin()[rev[c]] for c in range(ndim)], "obb origin")


def test_real_image_equals_itk():
    path = os.path.join(REPO, "test", "Data", "Input", "Anatomical.nii.gz")
    image = itk.imread(path)
    array = itk.array_from_image(image)
    foreground = (array >= 9000).astype(np.uint8)
    fg_image = itk_image_like(foreground)
    fg_image.CopyInformation(image)
    for backend in BACKENDS:
        labels, table = cudacca.label(fg_image, connectivity="full", sort=True, min_physical_size=50.0,
                                      return_table=True, properties="all", backend=backend)
        cc = itk.connected_component_image_filter(fg_image, fully_connected=True)
        spacing = np.prod(image.GetSpacing())
        relabel = itk.relabel_component_image_filter(cc, minimum_object_size=int(np.ceil(50.0 / spacing)))
        np.testing.assert_array_equal(itk.array_from_image(labels), itk.array_from_image(relabel))
        assert table["num_pixels"][0] == 16466  # the README's sample: one object of 16466 pixels kept
        _close(table["area"], table["num_pixels"] * spacing, "area")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"])
def test_every_scalar_type(dtype):
    values = random_image((23, 29), 0.5, 1, seed=3).astype(np.float64) * np.array(-3.5 if dtype[0] in "if" else 3)
    image = values.astype(dtype)
    expected = itk_labels((image != 0).astype(np.uint8), False)
    np.testing.assert_array_equal(cudacca.label(image, backend="cpu"), expected)


def test_background_value_mask_spacing_and_layout():
    image = random_image((40, 50), 0.5, 2, seed=11).astype(np.int16) + 4  # background value 4
    expected = itk_labels((image != 4).astype(np.uint8), False)
    np.testing.assert_array_equal(cudacca.label(image, background=4), expected)
    mask = np.zeros(image.shape, np.uint8)
    mask[:, :25] = 1
    masked = cudacca.label(image, background=4, mask=mask)
    np.testing.assert_array_equal(masked, itk_labels(((image != 4) & (mask != 0)).astype(np.uint8), False))
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
        cudacca.label(np.zeros((4, 4, 4), np.uint8), connectivity=18)
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


def test_without_a_gpu_the_cpu_engine_is_said_once():
    if cudacca.cuda_available()[0]:
        pytest.skip("a GPU is usable here")
    code = (
        "import warnings, numpy as np, cudacca\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    for _ in range(3): cudacca.label(np.ones((8, 8), np.uint8))\n"
        "print(len(w), cudacca.last_backend()[0]); print(w[0].message)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    first, message = out.splitlines()[:2]
    assert first == "1 cpu"
    assert "using the CPU engine" in message
