"""cudacca.label(multilabel=True): equal-value connectivity against scikit-image and cc3d, the class
column, per-class clean-up against a loop over the classes, and the refusals."""

import itertools

import numpy as np
import pytest

import cudacca
from conftest import random_image

# The CUDA engine does not label multi-label input yet: "auto" takes the CPU engine (and says so once from
# 24,576 pixels), "cpu" is the CPU engine.
ML_BACKENDS = ["cpu", "auto"]


def class_map(shape, density, granularity, classes, seed):
    """Blocks of `granularity` pixels on with probability `density`, each block of one class from `classes`."""
    on = random_image(shape, density, granularity, seed=seed).astype(bool)
    rng = np.random.default_rng(seed + 1)
    blocks = tuple((s + granularity - 1) // granularity for s in shape)
    per_block = rng.choice(np.asarray(classes), size=blocks)
    full = per_block
    for axis in range(len(shape)):
        full = np.repeat(full, granularity, axis=axis)
    full = full[tuple(slice(0, s) for s in shape)]
    return np.where(on, full, 0).astype(np.asarray(classes).dtype)


def same_partition(a, b):
    """Labels equal up to renaming, background the same pixels."""
    assert ((a == 0) == (b == 0)).all()
    pairs = np.unique(np.stack([a.ravel(), b.ravel()]), axis=1)
    assert len(np.unique(pairs[0])) == pairs.shape[1] and len(np.unique(pairs[1])) == pairs.shape[1]


SHAPES = [(1, 1), (1, 33), (33, 1), (45, 77), (13, 17, 19), (1, 1, 9), (120,)]


@pytest.mark.parametrize("backend", ML_BACKENDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_multilabel_equals_skimage_and_cc3d(backend, shape):
    import cc3d
    from skimage import measure

    for (density, granularity, classes, connectivity) in itertools.product(
        [0.4, 0.8, 1.0], [1, 3], [[1, 2], [1, 2, 9, 200], [-4, 3, 7]], range(1, len(shape) + 1)
    ):
        dtype = np.int16 if min(classes) < 0 else np.uint8
        image = class_map(shape, density, granularity, np.asarray(classes, dtype), seed=sum(shape) + granularity)
        # scikit-image labels each value's regions apart, numbered in raster order of first pixels: ITK's order
        expected = measure.label(image, connectivity=connectivity, background=0)
        labels, table = cudacca.label(image, connectivity=connectivity, multilabel=True, return_table=True,
                                      backend=backend)
        np.testing.assert_array_equal(labels, expected)
        assert table["class"].dtype == image.dtype
        flat = image.ravel()
        values, first = np.unique(labels.ravel(), return_index=True)
        first = first[values != 0]  # first pixel of labels 1..N
        np.testing.assert_array_equal(table["class"], flat[first])
        np.testing.assert_array_equal(table["num_pixels"], np.bincount(labels.ravel())[1:])
        if len(shape) >= 2:
            cc3d_connectivity = {2: (4, 8), 3: (6, 18, 26)}[len(shape)][connectivity - 1]
            theirs = cc3d.connected_components(image, connectivity=cc3d_connectivity)
            same_partition(labels, theirs)
            counts = cc3d.statistics(theirs)["voxel_counts"][1:]
            assert sorted(counts.tolist()) == sorted(table["num_pixels"].tolist())


def per_class_reference(image, connectivity, keep, min_size):
    """A loop over the classes: scikit-image's labels of each class, its `keep` largest of at least `min_size`
    pixels (ties: the first label), written back as the class: the cleaned segmentation."""
    from skimage import measure

    out = np.zeros_like(image)
    for c in np.unique(image):
        if c == 0:
            continue
        labels = measure.label(image == c, connectivity=connectivity, background=0)
        sizes = np.bincount(labels.ravel())[1:]
        order = sorted(range(len(sizes)), key=lambda i: (-sizes[i], i))
        kept = [i + 1 for i in order if sizes[i] >= min_size][:keep]
        out[np.isin(labels, kept)] = c
    return out


@pytest.mark.parametrize("backend", ML_BACKENDS)
@pytest.mark.parametrize("shape", [(45, 77), (13, 17, 19), (1, 40)])
def test_per_class_keep_largest_equals_a_loop_over_classes(backend, shape):
    for (density, granularity, keep, min_size, full) in itertools.product(
        [0.5, 0.8], [1, 2], [1, 2], [0, 3], [False, True]
    ):
        image = class_map(shape, density, granularity, np.asarray([1, 2, 5], np.uint8), seed=7 * keep + granularity)
        connectivity = len(shape) if full else 1
        expected = per_class_reference(image, connectivity, keep, min_size)
        cleaned = cudacca.label(image, connectivity=connectivity, multilabel=True, per_class=True,
                                keep_largest=keep, min_size=min_size, class_values=True, backend=backend)
        assert cleaned.dtype == image.dtype
        np.testing.assert_array_equal(cleaned, expected)
        # the same components numbered, sorted by size: each kept component once, its class in the table
        labels, table = cudacca.label(image, connectivity=connectivity, multilabel=True, per_class=True,
                                      keep_largest=keep, min_size=min_size, sort=True, return_table=True,
                                      backend=backend)
        np.testing.assert_array_equal(labels > 0, expected > 0)
        assert (np.diff(table["num_pixels"].astype(np.int64)) <= 0).all()
        for c in np.unique(expected[expected > 0]):
            assert (table["class"] == c).sum() <= keep


def test_multilabel_refusals():
    image = class_map((20, 30), 0.7, 2, np.asarray([3, 300], np.uint16), seed=3)
    with pytest.raises(ValueError, match="multilabel=True"):
        cudacca.label(image, per_class=True)
    with pytest.raises(ValueError, match="background must be 0"):
        cudacca.label(image, multilabel=True, background=3)
    with pytest.raises(Exception, match="integer pixel type"):
        cudacca.label(image.astype(np.float32), multilabel=True, backend="cpu")
    with pytest.raises(Exception, match="does not fit the output pixel type"):
        cudacca.label(image, multilabel=True, class_values=True, dtype=np.uint8, backend="cpu")
    # a memory budget cuts the class map into slabs (here one row each): the same labels and table
    whole = cudacca.label(image, multilabel=True, return_table=True, properties="all", backend="cpu")
    slabs = cudacca.label(image, multilabel=True, return_table=True, properties="all", backend="cpu", memory_budget=1)
    from cudacca import _label

    assert _label._analysis().number_of_slabs == image.shape[0]  # one row per slab: every row a cut
    np.testing.assert_array_equal(slabs[0], whole[0])
    for k in whole[1]:
        np.testing.assert_allclose(slabs[1][k], whole[1][k], rtol=1e-12, atol=1e-12, err_msg=k)
    # the same image labelled once the options are right
    cleaned = cudacca.label(image, multilabel=True, class_values=True, backend="cpu")
    np.testing.assert_array_equal(cleaned, image)  # nothing removed: the segmentation itself
