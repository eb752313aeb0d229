"""cudacca.label(periodic=...): components joined across the image's opposite faces, at every connectivity and
along every set of axes, against a union-find over the wrapped pixel graph written here and cc3d's
periodic_boundary (4, 8 and 6); the basic table against scikit-image's regionprops of those labels; bad input."""

import itertools

import numpy as np
import pytest

import cudacca
from conftest import BACKENDS, DENSITY_GRANULARITY, random_image, reference_components


def axis_sets(ndim):
    for k in range(1, ndim + 1):
        yield from itertools.combinations(range(ndim), k)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(1, 1), (1, 23), (23, 1), (2, 9), (37, 29), (9, 8, 7), (1, 6, 5), (5, 2, 1),
                                   (17, 13, 11)])
def test_periodic_equals_union_find_over_the_wrapped_graph(backend, shape):
    from skimage import measure

    ndim = len(shape)
    for connectivity, axes, (d, g) in itertools.product(range(1, ndim + 1), axis_sets(ndim), DENSITY_GRANULARITY[:3]):
        image = random_image(shape, d, g, seed=sum(shape) + connectivity * 7 + len(axes) * 3 + int(d * 10))
        expected = reference_components(image, connectivity, axes)
        labels, table = cudacca.label(image, connectivity=connectivity, periodic=axes, return_table=True,
                                      backend=backend)
        np.testing.assert_array_equal(labels, expected, err_msg=f"connectivity {connectivity}, axes {axes}")
        if expected.max() == 0:
            continue
        # the table describes the pixels as they lie in the image
        props = measure.regionprops_table(expected, properties=("label", "area", "bbox", "centroid"))
        np.testing.assert_array_equal(table["num_pixels"], props["area"])
        for c in range(2 * ndim):
            np.testing.assert_array_equal(table[f"bbox-{c}"], props[f"bbox-{c}"])
        for c in range(ndim):
            np.testing.assert_allclose(table[f"centroid-{c}"], props[f"centroid-{c}"], rtol=1e-12)
    # (ITK's shape attributes of the same labels: CCAConnectivity compares the LabelMap with ITK's.)


@pytest.mark.parametrize("backend", BACKENDS)
def test_periodic_equals_cc3d(backend):
    cc3d = pytest.importorskip("cc3d")
    for shape, connectivity in [((97, 89), 4), ((97, 89), 8), ((31, 29, 27), 6), ((1, 50), 4), ((40, 1, 3), 6)]:
        for d, g in DENSITY_GRANULARITY:
            image = random_image(shape, d, g, seed=connectivity + int(d * 10) + g)
            theirs = cc3d.connected_components(image, connectivity=connectivity, periodic_boundary=True)
            ours = cudacca.label(image, connectivity=connectivity, periodic=True, backend=backend)
            np.testing.assert_array_equal(ours, theirs, err_msg=f"{shape} connectivity {connectivity} d {d} g {g}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_periodic_with_post_processing_multilabel_and_slabs(backend):
    image = random_image((41, 37, 9), 0.45, 2, seed=5)
    expected = reference_components(image, 1, (0, 2))
    sizes = np.bincount(expected.reshape(-1))[1:]
    # in slabs (a budget far below the image's need): the same labels
    slabs = cudacca.label(image, periodic=(0, -1), memory_budget=1, backend=backend)
    np.testing.assert_array_equal(slabs, expected)
    # the largest component and a minimum size act on the joined components
    largest = cudacca.label(image, periodic=(0, 2), keep_largest=True, backend=backend)
    np.testing.assert_array_equal(largest, (expected == np.argmax(sizes) + 1).astype(largest.dtype))
    kept = cudacca.label(image, periodic=(0, 2), min_size=int(np.median(sizes)), backend=backend)
    assert kept.max() == (sizes >= int(np.median(sizes))).sum()
    # multi-label: pieces of one class join across the faces, of two classes not
    classes = (image * (1 + (np.arange(image.shape[2]) >= 4))).astype(np.uint8)
    ours = cudacca.label(classes, multilabel=True, periodic=True, backend=backend)
    for value in (1, 2):
        part = reference_components(classes == value, 1, (0, 1, 2))
        assert len(np.unique(ours[classes == value])) == part.max()
        # the same partition
        pairs = np.unique(np.stack([ours[classes == value], part[classes == value]]), axis=1)
        assert pairs.shape[1] == part.max()


def test_periodic_bad_input_raises_clearly():
    with pytest.raises(ValueError, match="not an axis of a 2-D image"):
        cudacca.label(np.ones((4, 4), np.uint8), periodic=(2,))
    with pytest.raises(ValueError, match="a sequence of array axes"):
        cudacca.label(np.ones((4, 4), np.uint8), periodic="x")
    with pytest.raises(RuntimeError, match="2-D or 3-D image"):
        cudacca.label(np.ones(9, np.uint8), periodic=True)
    with pytest.raises(RuntimeError, match="not computed with periodic boundaries"):
        cudacca.label(np.ones((4, 4), np.uint8), periodic=True, return_table=True, intensity=np.ones((4, 4)))


def test_periodic_not_for_dask_arrays():
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="not for Dask arrays"):
        cudacca.label(da.ones((4, 4), dtype=np.uint8, chunks=2), periodic=True)
