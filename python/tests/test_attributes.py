"""The attribute table (one C++ list, itkCudaConnectedComponentAnalysisAttributes.h) and the Python table made from
it: every attribute it lists comes out of label() with its layout, and nothing else does."""

import numpy as np
import pytest

import cudacca
from cudacca import _table
from conftest import BACKENDS, random_image


def test_names_are_unique_and_grouped():
    names = [a[0] for a in _table.ATTRIBUTES]
    assert len(names) == len(set(names))
    assert {a[1] for a in _table.ATTRIBUTES} <= {"basic", "shape", "on_request", "intensity_default", "intensity"}
    # the groups cover every attribute exactly once
    groups = (list(_table.BASIC[1:]) + list(_table.SHAPE) + list(_table.ON_REQUEST) + list(_table.INTENSITY) +
              list(_table.INTENSITY_ON_REQUEST))
    assert sorted(groups) == sorted(names)
    assert "extent" in _table.SHAPE and "extent" in cudacca.ALL


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(1, 1), (23, 31), (7, 9, 11)])
def test_every_attribute_has_its_layout(backend, shape):
    image = random_image(shape, 0.5, 2, seed=7)
    image[(0,) * len(shape)] = 1
    intensity = np.arange(image.size, dtype=np.float64).reshape(shape)
    names = [a[0] for a in _table.ATTRIBUTES]
    _, table = cudacca.label(image, intensity=intensity, properties=names, return_table=True, backend=backend)
    d = len(shape)
    count = len(table["label"])
    expected = ["label"]
    for name, _, layout, integer, *_ in _table.ATTRIBUTES:
        n = {"scalar": 1, "per_axis": d, "per_principal_axis": d, "bbox": 2 * d, "axis_matrix": d * d}[layout]
        columns = ([name] if layout == "scalar" else
                   [f"{name}-{m}-{c}" for m in range(d) for c in range(d)] if layout == "axis_matrix" else
                   [f"{name}-{c}" for c in range(n)])
        expected += columns
        for c in columns:
            assert len(table[c]) == count
            assert (table[c].dtype.kind in "iu") == integer, c
    assert sorted(table) == sorted(expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_extent_equals_skimage(backend):
    from skimage import measure

    for shape in [(1, 1), (1, 40), (40, 1), (61, 97), (17, 23, 29)]:
        image = random_image(shape, 0.4, 3, seed=sum(shape))
        for connectivity in sorted({1, len(shape)}):  # face, full
            labels, table = cudacca.label(image, connectivity=connectivity, properties=["extent"], return_table=True,
                                          backend=backend)
            if labels.max() == 0:
                continue
            props = measure.regionprops_table(labels.astype(np.int64), properties=("label", "extent"))
            np.testing.assert_array_equal(table["label"], props["label"])
            np.testing.assert_array_equal(table["extent"], props["extent"])
