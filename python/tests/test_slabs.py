"""Slabs: an image labelled under a memory budget that cuts it into slabs along its first axis gives
the labels and every table column of the whole image, on each engine."""

import itertools

import numpy as np
import pytest

import cudacca
from cudacca import _label
from conftest import BACKENDS, DENSITY_GRANULARITY, random_image


def columns_equal(a, b):
    assert list(a.keys()) == list(b.keys())
    for name in a:
        np.testing.assert_array_equal(np.asarray(a[name]), np.asarray(b[name]), err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(40, 1), (45, 77), (13, 17, 19), (30, 1, 1), (40, 9, 33)])
@pytest.mark.parametrize("budget", [1, 200_000])
def test_slabbed_equals_whole(backend, shape, budget):
    for connectivity, (d, g) in itertools.product(range(1, len(shape) + 1), DENSITY_GRANULARITY):
        image = random_image(shape, d, g, seed=sum(shape) + int(d * 10) + g)
        kwargs = dict(connectivity=connectivity, return_table=True, properties="all", backend=backend,
                      spacing=(0.5,) * (len(shape) - 1) + (2.0,))
        labels, table = cudacca.label(image, **kwargs)
        slab_labels, slab_table = cudacca.label(image, memory_budget=budget, **kwargs)
        if budget == 1:  # one plane per slab
            assert _label._analysis().number_of_slabs == shape[0]  # (this thread's analysis)
        if backend == "cuda" and budget == 1 and shape[0] > 1:
            # slabs no thinner with half the budget: the CUDA engine alternates with a second engine, which holds
            # the slab before the last, and the two write the label image at once
            assert "on two engines" in _label._analysis().description
        np.testing.assert_array_equal(slab_labels, labels)
        columns_equal(slab_table, table)
        # post-processing decided on the merged components
        kept = cudacca.label(image, min_size=3, keep_largest=5, sort=True, connectivity=kwargs["connectivity"],
                             backend=backend)
        np.testing.assert_array_equal(
            cudacca.label(image, min_size=3, keep_largest=5, sort=True, connectivity=kwargs["connectivity"],
                          backend=backend, memory_budget=budget),
            kept)


@pytest.mark.parametrize("backend", BACKENDS)
def test_slabbed_with_a_background_value(backend):
    """A non-zero background makes a temporary foreground image, read again while slabbed labels are written."""
    image = random_image((37, 29, 11), 0.5, 2, seed=7) * 3 + 2  # background 2, objects 5
    labels = cudacca.label(image, background=2, backend=backend)
    np.testing.assert_array_equal(cudacca.label(image, background=2, backend=backend, memory_budget=1), labels)
    assert labels.max() > 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_slab_tables_kept_between_calls(backend):
    """The slab engine's host tables outlive each analysis (the facade keeps them): calls of more, fewer and again
    more components, and other slab counts, each give the whole image's labels and table, and a repeated call
    the same bits."""
    large = random_image((61, 47, 23), 0.2, 1, seed=31)  # thousands of components
    small = random_image((20, 30, 9), 0.6, 3, seed=32)
    kwargs = dict(return_table=True, properties="all", backend=backend)
    whole = {id(im): cudacca.label(im, **kwargs) for im in (large, small)}
    results = []
    for image, budget in ((large, 1), (small, 1), (large, 60_000), (small, 1), (large, 1), (large, 1)):
        labels, table = cudacca.label(image, memory_budget=budget, **kwargs)
        assert _label._analysis().number_of_slabs > 1
        np.testing.assert_array_equal(labels, whole[id(image)][0])
        columns_equal(table, whole[id(image)][1])
        results.append((labels, table))
    np.testing.assert_array_equal(results[-1][0], results[-2][0])
    for name in results[-1][1]:
        assert results[-1][1][name].tobytes() == results[-2][1][name].tobytes(), name


def test_a_negative_budget_is_refused():
    with pytest.raises(ValueError, match="memory_budget"):
        cudacca.label(np.ones((4, 4), np.uint8), memory_budget=-1)
