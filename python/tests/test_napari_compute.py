"""The napari widget's run without napari (cudacca.napari._compute): its labels and table equal cudacca.label's on
the same foreground, frames of stacks, physical units from the layer's scale, Dask and Zarr data, refusals."""

import numpy as np
import pytest

import cudacca
from conftest import BACKENDS, random_image

pandas = pytest.importorskip("pandas")
from cudacca.napari import _compute  # noqa: E402


def noisy(shape, seed):
    rng = np.random.default_rng(seed)
    return (random_image(shape, 0.5, 3, seed) * 100 + rng.normal(0, 20, shape)).astype(np.float32)


def assert_table_equal(result_table, table, drop=()):
    expected = table.to_pandas()
    got = result_table.drop(columns=["index", *drop])
    assert list(got.columns) == list(expected.columns)
    for column in expected.columns:
        np.testing.assert_array_equal(got[column].to_numpy(), expected[column].to_numpy(), err_msg=column)
    np.testing.assert_array_equal(result_table["index"].to_numpy(), result_table["label"].to_numpy())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape, connectivity", [((61, 77), "face"), ((61, 77), "full"), ((17, 29, 23), 2),
                                                 ((17, 29, 23), "full")])
def test_threshold_equals_label(backend, shape, connectivity):
    data = noisy(shape, seed=len(shape))
    settings = _compute.Settings(lower=50, upper=1e9, connectivity=connectivity, spatial_dims=len(shape),
                                 backend=backend, min_size=3, sort=True)
    result = _compute.run(data, settings, scale=(1.0,) * len(shape))
    labels, table = cudacca.label((data >= 50).astype(np.uint8), connectivity=connectivity, min_size=3, sort=True,
                                  spacing=(1.0,) * len(shape), return_table=True, backend=backend)
    np.testing.assert_array_equal(result.labels, labels)
    assert_table_equal(result.table, table)
    assert result.frame is None and result.backend == cudacca.last_backend()[1]


def test_physical_minimum_size_from_the_scale():
    """An anisotropic volume (scale 2.5 × 0.5 × 0.5): a minimum size of 3.0 physical units keeps exactly the
    objects of at least 3.0 / 0.625 = 4.8 pixels, and areas and centroids are physical."""
    data = random_image((12, 40, 44), 0.3, 1, seed=5)
    scale = (2.5, 0.5, 0.5)
    plain = _compute.run(data, _compute.Settings(spatial_dims=3), is_labels=True, scale=scale)
    kept = _compute.run(data, _compute.Settings(spatial_dims=3, min_size=3.0, physical=True), is_labels=True,
                        scale=scale)
    voxel = np.prod(scale)
    sizes = plain.table["num_pixels"].to_numpy()
    assert 0 < (sizes * voxel < 3.0).sum() < len(sizes)  # the image has objects on both sides of the bound
    assert len(kept.table) == (sizes * voxel >= 3.0).sum()
    np.testing.assert_allclose(kept.table["area"], kept.table["num_pixels"] * voxel)
    expected = cudacca.label(data, min_physical_size=3.0, spacing=scale)
    np.testing.assert_array_equal(kept.labels, expected)
    centroid = kept.table["centroid-0"].to_numpy()
    z = np.nonzero(expected == 1)[0]
    np.testing.assert_allclose(centroid[0], z.mean() * 2.5, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", ["one batch", "batches of two frames", "frame by frame"])
def test_every_frame_of_a_time_series(backend, path, monkeypatch):
    frames = np.stack([random_image((30, 41), 0.45, 2, seed=s) for s in range(5)])
    frames[3] = 0  # a frame without objects
    if path == "batches of two frames":
        monkeypatch.setattr(_compute, "BATCH_PIXELS", 2 * 30 * 41)
    # a mask (of ones: the same foreground) takes the frame-by-frame path
    mask = np.ones(frames.shape, np.uint8) if path == "frame by frame" else None
    result = _compute.run(frames, _compute.Settings(spatial_dims=2, backend=backend, keep_largest=3),
                          is_labels=True, scale=(1.0, 0.7, 0.7), mask=mask)
    assert result.labels.shape == frames.shape
    offset = 0
    for t in range(len(frames)):
        labels, table = cudacca.label(frames[t], keep_largest=3, spacing=(0.7, 0.7), return_table=True,
                                      backend=backend)
        # one numbering over the stack: frame t's labels follow the earlier frames'
        expected = np.where(labels != 0, labels.astype(np.int64) + offset, 0)
        np.testing.assert_array_equal(result.labels[t], expected)
        rows = result.table[result.table["frame"] == t]
        np.testing.assert_array_equal(rows["label"].to_numpy(), table["label"].astype(np.int64) + offset)
        np.testing.assert_array_equal(rows["num_pixels"].to_numpy(), table["num_pixels"])
        offset += len(table["label"])
    assert len(np.unique(result.table["index"])) == len(result.table)


def test_every_frame_of_a_4d_stack():
    stack = np.stack([np.stack([random_image((9, 20, 21), 0.4, 2, seed=10 * t + c) for c in range(2)])
                      for t in range(3)])  # (t, c, z, y, x)
    result = _compute.run(stack, _compute.Settings(spatial_dims=3, connectivity="full", sort=True), is_labels=True)
    assert result.labels.shape == stack.shape
    offset = 0
    for t, c in np.ndindex(3, 2):
        labels, table = cudacca.label(stack[t, c], connectivity="full", sort=True, return_table=True)
        np.testing.assert_array_equal(result.labels[t, c], np.where(labels != 0, labels.astype(np.int64) + offset, 0))
        rows = result.table[(result.table["frame-0"] == t) & (result.table["frame-1"] == c)]
        np.testing.assert_array_equal(rows["num_pixels"].to_numpy(), table["num_pixels"])
        np.testing.assert_allclose(rows["centroid-0"].to_numpy(), table["centroid-0"], rtol=1e-12)
        offset += len(table["label"])


def test_the_current_frame_of_a_4d_stack():
    stack = np.stack([np.stack([random_image((9, 20, 21), 0.4, 2, seed=10 * t + c) for c in range(2)])
                      for t in range(3)])  # (t, c, z, y, x)
    result = _compute.run(stack, _compute.Settings(spatial_dims=3, frame=(2, 1)), is_labels=True)
    assert result.labels.shape == (1, 1, 9, 20, 21) and result.frame == (2, 1)
    labels, table = cudacca.label(stack[2, 1], return_table=True, spacing=(1.0, 1.0, 1.0))
    np.testing.assert_array_equal(result.labels[0, 0], labels)
    assert (result.table["frame-0"] == 2).all() and (result.table["frame-1"] == 1).all()
    assert_table_equal(result.table, table, drop=["frame-0", "frame-1"])


def test_multiclass_mask_and_intensity():
    rng = np.random.default_rng(3)
    classes = (random_image((50, 60), 0.6, 3, seed=1) * rng.integers(1, 4, (50, 60))).astype(np.uint16)
    settings = _compute.Settings(multilabel=True, keep_largest=1)
    result = _compute.run(classes, settings, is_labels=True)
    expected, table = cudacca.label(classes, multilabel=True, keep_largest=1, per_class=True, return_table=True,
                                    spacing=(1.0, 1.0))
    np.testing.assert_array_equal(result.labels, expected)
    assert_table_equal(result.table, table)
    assert sorted(result.table["class"]) == sorted(np.unique(classes[classes != 0]))

    intensity = rng.normal(10, 3, classes.shape)
    mask = np.zeros(classes.shape, np.uint8)
    mask[:, :35] = 1
    result = _compute.run(classes, _compute.Settings(), is_labels=True, mask=mask, intensity=intensity)
    labels = cudacca.label(classes, mask=mask)
    np.testing.assert_array_equal(result.labels, labels)
    for row in result.table.itertuples():
        pixels = intensity[labels == row.label]
        np.testing.assert_allclose(row.intensity_mean, pixels.mean(), rtol=1e-9)
        assert row.intensity_min == pixels.min() and row.intensity_max == pixels.max()


def test_dask_and_zarr_layers_chunk_by_chunk():
    da = pytest.importorskip("dask.array")
    pytest.importorskip("scipy")
    data = noisy((40, 50, 45), seed=9)
    settings = _compute.Settings(lower=50, upper=1e9, spatial_dims=3, connectivity="full", sort=True)
    expected = _compute.run(data, settings)
    lazy = _compute.run(da.from_array(data, chunks=(16, 20, 20)), settings)
    assert type(lazy.labels).__module__.split(".")[0] == "dask"
    np.testing.assert_array_equal(lazy.labels.compute(), expected.labels)
    pandas.testing.assert_frame_equal(lazy.table, expected.table, check_dtype=False)
    zarr = pytest.importorskip("zarr")
    stored = zarr.create_array(store={}, shape=data.shape, chunks=(16, 25, 45), dtype=data.dtype)
    stored[...] = data
    from_zarr = _compute.run(stored, settings)
    np.testing.assert_array_equal(np.asarray(from_zarr.labels), expected.labels)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "float32", "float64"])
def test_threshold_bounds(dtype):
    """Each pair of bounds (none, either, both; bounds at the dtype's limits, which the threshold may skip) gives
    exactly the pixels within them, NaN never; numpy and Dask alike."""
    rng = np.random.default_rng(8)
    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo("uint8" if dtype == "bool" else dtype)
    values = rng.integers(max(info.min, -300), min(info.max, 300), (30, 40)).astype(dtype)
    if dtype.startswith("float"):
        values[::7, ::5] = np.nan
    bounds = [(None, None), (10, None), (None, 10), (-20, 100), (info.min, None), (None, info.max),
              (float(info.min), float(info.max)), (50, 50)]
    for lower, upper in bounds:
        expected = np.ones(values.shape, bool)
        if lower is not None:
            expected &= values >= lower
        if upper is not None:
            expected &= values <= upper
        if dtype.startswith("float"):
            expected &= ~np.isnan(values)
        settings = _compute.Settings(lower=lower, upper=upper)
        np.testing.assert_array_equal(_compute.foreground(values, settings, False), expected,
                                      err_msg=f"{lower} {upper}")
        result = _compute.run(values, settings)
        np.testing.assert_array_equal(result.labels, cudacca.label(expected))
        try:
            import dask.array as da
        except ImportError:
            continue
        lazy = _compute.foreground(da.from_array(values, chunks=(16, 16)), settings, False)
        np.testing.assert_array_equal(np.asarray(lazy), expected)


def test_choices_refused_with_a_sentence():
    image = np.zeros((20, 30), np.float32)
    with pytest.raises(ValueError, match="lower bound 5 is above its upper bound 1"):
        _compute.run(image, _compute.Settings(lower=5, upper=1))
    with pytest.raises(ValueError, match="mask layer's shape"):
        _compute.run(image, _compute.Settings(), mask=np.ones((20, 31), np.uint8))
    with pytest.raises(ValueError, match="Labels layer of integers"):
        _compute.run(image, _compute.Settings(multilabel=True), is_labels=True)
    with pytest.raises(ValueError, match="RGB"):
        _compute.run(np.zeros((4, 4), dtype=[("r", "u1"), ("g", "u1"), ("b", "u1")]), _compute.Settings())
    with pytest.raises(ValueError, match="a 3-D image needs at least 3"):
        _compute.run(image, _compute.Settings(spatial_dims=3))
    with pytest.raises(ValueError, match="must not be negative"):
        _compute.run(image, _compute.Settings(min_size=-1))
