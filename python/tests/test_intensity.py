"""cudacca.label(intensity=...): each component's intensity statistics, summed by the engine in the
labeling pass, against numpy per label (ITK's formulas: the sample variance, N - 1; the skewness and kurtosis as
ITK's StatisticsLabelMapFilter writes them), against ITK's LabelImageToStatisticsLabelMapFilter through itk, after
the post-processing, with multi-label input, and the refusals."""

import numpy as np
import pytest

import cudacca
from conftest import random_image

BACKENDS = ["cpu", "auto"]


def reference(labels, intensity, count):
    """Per label 1..count: the statistics computed in float64 with numpy, and the weighted centroid (index space,
    array axis order)."""
    flat = labels.ravel()
    values = intensity.ravel().astype(np.float64)
    index = np.indices(labels.shape).reshape(labels.ndim, -1).astype(np.float64)
    rows = {k: [] for k in ("mean", "min", "max", "stddev", "variance", "sum", "skewness", "kurtosis", "centroid")}
    order = np.argsort(flat, kind="stable")
    bounds = np.searchsorted(flat[order], np.arange(1, count + 2))
    for k in range(count):
        pick = order[bounds[k]:bounds[k + 1]]
        v = values[pick]
        n = v.size
        mean = v.mean()
        variance = v.var(ddof=1) if n > 1 else 0.0
        sigma = np.sqrt(variance)
        rows["mean"].append(mean)
        rows["min"].append(v.min())
        rows["max"].append(v.max())
        rows["sum"].append(v.sum())
        rows["variance"].append(variance)
        rows["stddev"].append(sigma)
        # ITK: the population's central moments over the sample variance's powers
        rows["skewness"].append(np.mean((v - mean) ** 3) / sigma**3 if sigma > 0 else 0.0)
        rows["kurtosis"].append(np.mean((v - mean) ** 4) / variance**2 - 3.0 if variance > 0 else 0.0)
        rows["centroid"].append((index[:, pick] * v).sum(axis=1) / v.sum())
    return {k: np.asarray(v) for k, v in rows.items()}


def close(ours, expected, scale, what):
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-9 * scale, err_msg=what)


def check(table, labels, intensity, what):
    count = int(labels.max())
    assert len(table["label"]) == count
    if count == 0:
        return
    ref = reference(labels, intensity, count)
    m = float(np.abs(intensity).max()) or 1.0
    assert len(table["label"]) == count
    np.testing.assert_array_equal(table["intensity_min"], ref["min"], err_msg=what)
    np.testing.assert_array_equal(table["intensity_max"], ref["max"], err_msg=what)
    n = np.bincount(labels.ravel(), minlength=count + 1)[1:]
    close(table["intensity_mean"], ref["mean"], m, what + " mean")
    close(table["intensity_sum"], ref["sum"], m * n.max(), what + " sum")
    close(table["intensity_variance"], ref["variance"], m * m, what + " variance")
    sigma = ref["stddev"]
    np.testing.assert_allclose(table["intensity_stddev"], sigma, rtol=1e-9, atol=1e-9 * m, err_msg=what)
    big = sigma > 1e-3 * m
    if big.any():
        close(table["intensity_skewness"][big], ref["skewness"][big], 10 * (m / sigma[big].min()) ** 3, what + " skewness")
        close(table["intensity_kurtosis"][big], ref["kurtosis"][big], 20 * (m / sigma[big].min()) ** 4, what + " kurtosis")
    mass = np.abs(ref["sum"]) > 1e-6 * m * n
    for axis in range(labels.ndim if mass.any() else 0):
        col = table[f"centroid_weighted-{axis}"]
        close(col[mass], ref["centroid"][mass, axis], max(labels.shape) * m * n.max() / np.abs(ref["sum"][mass]).min(),
              what + f" centroid_weighted-{axis}")


SHAPES = [(1, 1), (1, 41), (41, 1), (61, 97), (17, 23, 29)]
DTYPES = [np.float32, np.int16, np.uint8, np.float64]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_statistics_equal_numpy(backend, shape, dtype):
    rng = np.random.default_rng(sum(shape))
    for density, granularity in ((0.2, 1), (0.5, 4), (0.8, 1)):
        image = random_image(shape, density, granularity, seed=len(shape) * 7 + granularity)
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            intensity = rng.integers(max(info.min, -1024), min(info.max, 3000), size=shape, endpoint=True).astype(dtype)
        else:
            intensity = rng.uniform(-100, 1000, size=shape).astype(dtype)
        for connectivity in ("face", "full"):
            labels, table = cudacca.label(image, connectivity=connectivity, intensity=intensity, return_table=True,
                                          backend=backend, properties="all")
            check(table, labels, intensity, f"{shape} {dtype.__name__} d={density} g={granularity} {connectivity}")


def test_default_and_named_columns():
    image = random_image((30, 40), 0.5, 2, seed=2)
    intensity = np.arange(image.size, dtype=np.float32).reshape(image.shape)
    _, table = cudacca.label(image, intensity=intensity, return_table=True)
    assert list(table) == ["label", "num_pixels", "area", "bbox-0", "bbox-1", "bbox-2", "bbox-3", "centroid-0",
                           "centroid-1", "intensity_min", "intensity_max", "intensity_sum", "intensity_mean",
                           "intensity_stddev", "centroid_weighted-0", "centroid_weighted-1"]
    _, named = cudacca.label(image, intensity=intensity, return_table=True, properties=["intensity_kurtosis"])
    assert list(named) == ["label", "intensity_kurtosis"]


def test_minimum_and_maximum_index_follow_itk_order():
    """Equal extremes: ITK keeps the last pixel in raster order (v <= min); the table's min/max equal that value."""
    image = np.ones((3, 5), np.uint8)
    intensity = np.array([[2, 1, 2, 9, 1], [9, 1, 2, 2, 9], [1, 9, 5, 5, 5]], np.uint8)
    labels, table = cudacca.label(image, intensity=intensity, return_table=True, backend="cpu",
                                  properties=["intensity_min", "intensity_max", "intensity_min_index",
                                              "intensity_max_index"])
    assert table["intensity_min"][0] == 1 and table["intensity_max"][0] == 9
    # the last 1 and the last 9 in raster order, in the array's axis order
    assert [table[f"intensity_min_index-{c}"][0] for c in range(2)] == [2, 0]
    assert [table[f"intensity_max_index-{c}"][0] for c in range(2)] == [2, 1]
    assert table["intensity_min_index-0"].dtype == np.int64


@pytest.mark.parametrize("backend", BACKENDS)
def test_itk_statistics_label_map(backend):
    """Through an itk.Image (spacing, origin and direction): the table equals ITK's own LabelImageToStatisticsLabelMap
    on the same labels."""
    itk = pytest.importorskip("itk")
    image = random_image((23, 31, 37), 0.5, 2, seed=3)
    rng = np.random.default_rng(5)
    values = rng.uniform(1, 500, size=image.shape).astype(np.float32)
    itk_image = itk.image_from_array(image)
    itk_image.SetSpacing([0.7, 1.3, 2.1])
    itk_image.SetOrigin([-250.0, 40.5, 1000.0])
    itk_values = itk.image_from_array(values)
    itk_values.CopyInformation(itk_image)
    labels, table = cudacca.label(itk_image, intensity=itk_values, return_table=True, backend=backend,
                                  properties="all")
    label_image = itk.image_from_array(itk.array_from_image(labels).astype(np.uint16))
    label_image.CopyInformation(itk_image)
    key = next(k for k in itk.LabelImageToStatisticsLabelMapFilter.keys()
               if k[0] is type(label_image) and k[1] is type(itk_values))
    stats = itk.LabelImageToStatisticsLabelMapFilter[key].New(
        Input=label_image, FeatureImage=itk_values, BackgroundValue=0, ComputePerimeter=False)
    stats.Update()
    label_map = stats.GetOutput()
    assert label_map.GetNumberOfLabelObjects() == len(table["label"])
    for row, label in enumerate(table["label"]):
        o = label_map.GetLabelObject(int(label))
        assert table["intensity_min"][row] == o.GetMinimum() and table["intensity_max"][row] == o.GetMaximum()
        scale = 500.0
        for name, value in (("intensity_mean", o.GetMean()), ("intensity_stddev", o.GetStandardDeviation()),
                            ("intensity_variance", o.GetVariance() / scale)):
            ours = table[name][row] / (scale if name == "intensity_variance" else 1.0)
            assert abs(ours - value) <= 1e-9 * scale, (name, ours, value)
        assert abs(table["intensity_sum"][row] - o.GetSum()) <= 1e-9 * scale * o.GetNumberOfPixels()
        cog = o.GetCenterOfGravity()
        for axis in range(3):  # the table's axis 0 is numpy's first axis: ITK's z
            assert abs(table[f"centroid_weighted-{axis}"][row] - cog[2 - axis]) <= 1e-9 * 2000, axis
        moments = o.GetWeightedPrincipalMoments()
        for i in range(3):
            assert abs(table[f"weighted_principal_moments-{i}"][row] - moments[i]) <= 1e-9 * max(1.0, abs(moments[2]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_statistics_follow_the_post_processing(backend):
    image = random_image((64, 80), 0.6, 2, seed=9)
    intensity = np.random.default_rng(2).uniform(0, 100, size=image.shape)
    for kwargs in ({"keep_largest": 3}, {"min_size": 6, "sort": True}):
        labels, table = cudacca.label(image, intensity=intensity, return_table=True, backend=backend,
                                      properties="all", **kwargs)
        check(table, labels, intensity, str(kwargs))


@pytest.mark.parametrize("backend", BACKENDS)
def test_multilabel_statistics(backend):
    rng = np.random.default_rng(4)
    classes = rng.integers(0, 4, size=(40, 50)).astype(np.uint8)
    intensity = rng.normal(100, 20, size=classes.shape).astype(np.float32)
    labels, table = cudacca.label(classes, multilabel=True, intensity=intensity, return_table=True, backend=backend,
                                  properties="all")
    check(table, labels, intensity, "multilabel")
    for row in range(len(table["label"])):
        assert (classes[labels == table["label"][row]] == table["class"][row]).all()


def test_refusals():
    image = random_image((20, 30), 0.5, 1, seed=1)
    intensity = np.zeros((20, 30), np.float32)
    with pytest.raises(ValueError, match="shape"):
        cudacca.label(image, intensity=np.zeros((20, 31)), return_table=True)
    with pytest.raises(ValueError, match="return_table"):
        cudacca.label(image, intensity=intensity)
    with pytest.raises(ValueError, match="intensity image"):
        cudacca.label(image, properties=["intensity_mean"], return_table=True)
    with pytest.raises(Exception, match="memory budget"):
        cudacca.label(image, intensity=intensity, return_table=True, memory_budget=1000)
    dask_array = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="Dask"):
        cudacca.label(dask_array.from_array(image, chunks=10), intensity=intensity, return_table=True)
