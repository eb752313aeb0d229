#==========================================================================
#
#   Copyright NumFOCUS
#
#   Licensed under the Apache License, Version 2.0 (the "License");
#   you may not use this file except in compliance with the License.
#   You may obtain a copy of the License at
#
#          https://www.apache.org/licenses/LICENSE-2.0.txt
#
#   Unless required by applicable law or agreed to in writing, software
#   distributed under the License is distributed on an "AS IS" BASIS,
#   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
#   See the License for the specific language governing permissions and
#   limitations under the License.
#
#==========================================================================
"""The Python wrapping of CudaConnectedComponentAnalysisImageFilter against ITK's own filters.

Usage: CudaConnectedComponentAnalysisPythonTest.py CASE BACKEND
  CASE:    labels | labelmap | numpy | downstream | features | badinput
  BACKEND: cpu | cuda | auto   (cuda exits 77, skipped, where no CUDA device is usable)
"""
import sys

import numpy as np

import itk

SKIP = 77
BACKENDS = {
    "cpu": itk.CudaConnectedComponentAnalysisEnums.Backend_CPU,
    "cuda": itk.CudaConnectedComponentAnalysisEnums.Backend_CUDA,
    "auto": itk.CudaConnectedComponentAnalysisEnums.Backend_Automatic,
}
CCA = itk.CudaConnectedComponentAnalysisImageFilter


def cuda_device_count():
    """The static GetCudaDeviceCount() of any instantiation: 0 without a device or a CUDA engine."""
    return list(CCA.values())[0].GetCudaDeviceCount()


def random_array(shape, density, granularity, seed, dtype=np.uint8):
    """Blocks of granularity^D pixels, foreground with probability density (the paper's images)."""
    rng = np.random.default_rng(seed)
    blocks = tuple(-(-s // granularity) for s in shape)
    on = rng.random(blocks) < density
    for axis in range(len(shape)):
        on = np.repeat(on, granularity, axis=axis)
    on = on[tuple(slice(0, s) for s in shape)]
    values = rng.integers(1, np.iinfo(dtype).max, size=shape, dtype=dtype, endpoint=True)
    return np.where(on, values, 0).astype(dtype)


def with_geometry(array, rotate):
    """An itk.Image with anisotropic spacing, a non-zero origin and, if asked, a rotated direction."""
    image = itk.image_from_array(np.ascontiguousarray(array))
    dim = image.GetImageDimension()
    image.SetSpacing([0.5, 1.25, 2.0][:dim])
    image.SetOrigin([-10.0, 3.5, 7.0][:dim])
    if rotate:
        angle = np.deg2rad(30.0)
        matrix = np.eye(dim)
        matrix[0:2, 0:2] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
        image.SetDirection(itk.matrix_from_array(matrix))
    return image


def itk_labels(image, fully, label_type):
    label_image_type = itk.Image[label_type, image.GetImageDimension()]
    cc = itk.ConnectedComponentImageFilter[type(image), label_image_type].New(image)
    cc.SetFullyConnected(fully)
    cc.Update()
    return cc.GetOutput(), cc.GetObjectCount()


def new_filter(image, label_type, backend, **kwargs):
    """The wrapped instantiation for this input and label type (mask = input, ITK's Python LabelMap)."""
    dim = image.GetImageDimension()
    lm = itk.LabelMap[itk.StatisticsLabelObject[itk.UL, dim]]
    filter_type = CCA[type(image), itk.Image[label_type, dim], type(image), lm]
    f = filter_type.New(image, **kwargs)
    f.SetBackend(BACKENDS[backend])
    return f


def check_backend(f, backend):
    used = f.GetBackendUsed()
    if backend != "auto" and used != BACKENDS[backend]:
        raise AssertionError(f"ran on backend {used}, asked for {backend}")


def flood_labels(array, max_non_zero, wrap=None):
    """Labels in raster order of first pixels, joining the neighbors whose offset has at most `max_non_zero` non-zero
    components: the smallest pixel number spread over each component until nothing changes, then renumbered.
    Along the array axes that `wrap` marks, the neighbor past the last index is the first."""
    fg = array != 0
    big = np.iinfo(np.int64).max
    lab = np.where(fg, np.arange(array.size, dtype=np.int64).reshape(array.shape), big)
    offsets = [o for o in np.ndindex(*(3,) * array.ndim) if 0 < sum(v != 1 for v in o) <= max_non_zero]
    wrap = wrap or (False,) * array.ndim
    while True:
        new = lab.copy()
        for o in offsets:
            dst = tuple(slice(max(0, 1 - v), n - max(0, v - 1)) for v, n in zip(o, array.shape))
            src = tuple(slice(max(0, v - 1), n - max(0, 1 - v)) for v, n in zip(o, array.shape))
            new[dst] = np.minimum(new[dst], lab[src])
            if any(wrap):
                # the wrapped neighbors: the whole array rolled, the axes that do not wrap cut as above
                rolled = np.roll(lab, shift=[1 - v if w else 0 for v, w in zip(o, wrap)], axis=tuple(range(array.ndim)))
                cut = tuple(slice(None) if w else d for w, d in zip(wrap, dst))
                new[cut] = np.minimum(new[cut], rolled[tuple(slice(None) if w else s for w, s in zip(wrap, src))])
        new = np.where(fg, new, big)
        if np.array_equal(new, lab):
            break
        lab = new
    roots = np.unique(lab[fg])  # each component's smallest pixel number: its first pixel, in raster order
    out = np.zeros(array.shape, np.int64)
    out[fg] = np.searchsorted(roots, lab[fg]) + 1
    return out


def case_labels(backend):
    """Label images equal to ConnectedComponentImageFilter's: object and functional forms, 2D and 3D,
    both connectivities, every wrapped input type, labels in UL and US, odd sizes, 1xN and Nx1."""
    compared = 0
    shapes = [(1, 1), (1, 257), (257, 1), (31, 33), (200, 173), (1, 1, 1), (17, 23, 29), (40, 33, 21)]
    for shape in shapes:
        for seed, (density, granularity) in enumerate([(0.3, 1), (0.5, 2), (0.6, 1), (0.8, 4)]):
            for pixel in (np.uint8, np.uint16):
                image = itk.image_from_array(random_array(shape, density, granularity, seed, pixel))
                for fully in (False, True):
                    for label_type in (itk.UL, itk.US):
                        expected, count = itk_labels(image, fully, label_type)
                        f = new_filter(image, label_type, backend, fully_connected=fully)
                        f.Update()
                        check_backend(f, backend)
                        np.testing.assert_array_equal(itk.array_view_from_image(f.GetOutput()),
                                                      itk.array_view_from_image(expected))
                        assert f.GetObjectCount() == count, (f.GetObjectCount(), count)
                        compared += 1
                    # the functional form: the label image (output 0) with the first wrapped label type
                    if backend != "cuda":
                        labels = itk.cuda_connected_component_analysis_image_filter(
                            image, fully_connected=fully, backend=BACKENDS[backend])
                        expected, _ = itk_labels(image, fully, itk.template(labels)[1][0])
                        np.testing.assert_array_equal(itk.array_view_from_image(labels),
                                                      itk.array_view_from_image(expected))
                        compared += 1
    # Past ITK: SetConnectivity(18), faces and edges in 3D, against the flood fill above.
    for shape in [(1, 1, 1), (17, 23, 29), (40, 33, 21)]:
        for seed, (density, granularity) in enumerate([(0.3, 1), (0.5, 2), (0.6, 1)]):
            array = random_array(shape, density, granularity, seed)
            image = itk.image_from_array(array)
            f = new_filter(image, itk.UL, backend, connectivity=18)
            f.Update()
            check_backend(f, backend)
            assert f.GetConnectivity() == 18 and not f.GetFullyConnected()
            np.testing.assert_array_equal(itk.array_view_from_image(f.GetOutput()), flood_labels(array, 2))
            compared += 1
    # Past ITK: SetPeriodic, the image wrapping along chosen axes, against the flood fill over the wrapped image.
    for shape, periodic in [((17, 23), (True, False)), ((9, 8, 7), (True, False, True)), ((1, 6, 5), (True,) * 3)]:
        array = random_array(shape, 0.5, 1, len(shape))
        image = itk.image_from_array(array)
        f = new_filter(image, itk.UL, backend)
        f.SetPeriodic(periodic)
        f.Update()
        check_backend(f, backend)
        assert tuple(f.GetPeriodic()) == periodic
        # ITK's axes are the array's reversed
        np.testing.assert_array_equal(itk.array_view_from_image(f.GetOutput()),
                                      flood_labels(array, 1, wrap=periodic[::-1]))
        compared += 1
    print(f"{compared} label images equal to ConnectedComponentImageFilter's (or, at 18 and periodic, a flood "
          "fill's)")


def close(a, b, rel=1e-9, scale=0.0):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return np.all(np.abs(a - b) <= rel * np.maximum(np.abs(a), np.abs(b)) + 1e-9 * scale)


def case_labelmap(backend):
    """Attributes of every object equal to LabelImageToShapeLabelMapFilter's on ITK's labels."""
    objects = 0
    for shape, fully in [((120, 97), False), ((120, 97), True), ((31, 27, 19), False), ((31, 27, 19), True)]:
        for rotate in (False, True):
            image = with_geometry(random_array(shape, 0.55, 2, 5 + len(shape)), rotate)
            dim = image.GetImageDimension()
            expected_labels, count = itk_labels(image, fully, itk.US)
            shape_filter = itk.LabelImageToShapeLabelMapFilter[type(expected_labels),
                                                               itk.LabelMap[itk.StatisticsLabelObject[itk.UL, dim]]].New(expected_labels)
            shape_filter.Update()
            expected = shape_filter.GetOutput()

            f = new_filter(image, itk.US, backend, fully_connected=fully)
            f.Update()
            check_backend(f, backend)
            ours = f.GetLabelMap()
            assert ours.GetNumberOfLabelObjects() == expected.GetNumberOfLabelObjects() == count
            extent = max(np.abs(np.asarray(image.GetOrigin()))) + max(shape) * 2.0
            for label in expected.GetLabels():
                a = ours.GetLabelObject(label)
                b = expected.GetLabelObject(label)
                assert a.GetNumberOfPixels() == b.GetNumberOfPixels()
                assert a.GetNumberOfLines() == b.GetNumberOfLines()
                assert a.GetBoundingBox() == b.GetBoundingBox()
                assert a.GetNumberOfPixelsOnBorder() == b.GetNumberOfPixelsOnBorder()
                for name in ("PhysicalSize", "Perimeter", "PerimeterOnBorder", "Roundness",
                             "EquivalentSphericalRadius", "EquivalentSphericalPerimeter"):
                    va, vb = getattr(a, "Get" + name)(), getattr(b, "Get" + name)()
                    assert close(va, vb), (label, name, va, vb)
                assert close(a.GetCentroid(), b.GetCentroid(), scale=extent), (label, a.GetCentroid(), b.GetCentroid())
                # Moments: ITK sums physical coordinates in double, a residue of ~1e-16 |origin|^2 (docs/filter.md, "Differences from ITK").
                assert close(a.GetPrincipalMoments(), b.GetPrincipalMoments(), scale=extent**2), label
                objects += 1
    print(f"{objects} objects with ITK's attributes")


def case_numpy(backend):
    """image_from_array -> filter -> array_view_from_image keeps spacing, origin and direction."""
    for shape in [(64, 48), (12, 20, 16)]:
        array = random_array(shape, 0.5, 1, 11)
        image = with_geometry(array, rotate=True)
        labels = itk.cuda_connected_component_analysis_image_filter(image, backend=BACKENDS[backend]) \
            if backend != "cuda" else None
        f = new_filter(image, itk.UL, backend)
        f.Update()
        check_backend(f, backend)
        for out in [f.GetOutput()] + ([labels] if labels is not None else []):
            assert tuple(out.GetSpacing()) == tuple(image.GetSpacing())
            assert tuple(out.GetOrigin()) == tuple(image.GetOrigin())
            assert np.array_equal(itk.array_from_matrix(out.GetDirection()), itk.array_from_matrix(image.GetDirection()))
            view = itk.array_view_from_image(out)
            assert view.shape == array.shape
            assert np.array_equal(view > 0, array > 0)
        expected, _ = itk_labels(image, False, itk.UL)
        np.testing.assert_array_equal(itk.array_view_from_image(f.GetOutput()), itk.array_view_from_image(expected))
        lm = f.GetLabelMap()
        assert tuple(lm.GetSpacing()) == tuple(image.GetSpacing())
        assert tuple(lm.GetOrigin()) == tuple(image.GetOrigin())
    print("NumPy round trip keeps the geometry")


def case_downstream(backend):
    """The LabelMap output feeds ITK's wrapped LabelMap filters and gives what ITK's own map gives."""
    for shape in [(150, 130), (30, 26, 22)]:
        image = with_geometry(random_array(shape, 0.5, 2, 21), rotate=False)
        dim = image.GetImageDimension()
        lm_type = itk.LabelMap[itk.StatisticsLabelObject[itk.UL, dim]]
        label_image_type = itk.Image[itk.US, dim]
        expected_labels, _ = itk_labels(image, False, itk.US)
        itk_map = itk.LabelImageToShapeLabelMapFilter[label_image_type, lm_type].New(expected_labels)

        f = new_filter(image, itk.US, backend)
        f.Update()
        check_backend(f, backend)

        results = []
        for source in (f.GetLabelMap(), itk_map.GetOutput()):
            opening = itk.ShapeOpeningLabelMapFilter[lm_type].New(source)
            opening.SetAttribute("PhysicalSize")
            opening.SetLambda(8.0)
            to_image = itk.LabelMapToLabelImageFilter[lm_type, label_image_type].New(opening)
            to_image.Update()
            results.append(itk.array_from_image(to_image.GetOutput()))
        np.testing.assert_array_equal(results[0], results[1])
        assert results[0].any()

        back = itk.LabelMapToLabelImageFilter[lm_type, label_image_type].New(f.GetLabelMap())
        back.Update()
        back = back.GetOutput()
        np.testing.assert_array_equal(itk.array_view_from_image(back), itk.array_view_from_image(f.GetOutput()))
    print("LabelMap output accepted by ShapeOpeningLabelMapFilter and LabelMapToLabelImageFilter")


def case_features(backend):
    """GetComponentFeaturesAsArrays(), with the LabelMap skipped, against ITK's shape attributes."""
    image = with_geometry(random_array((90, 70, 11), 0.5, 2, 31), rotate=True)
    f = new_filter(image, itk.UL, backend)
    f.SetGenerateLabelMap(False)
    f.Update()
    check_backend(f, backend)
    assert f.GetLabelMap().GetNumberOfLabelObjects() == 0, "GenerateLabelMapOff() built a LabelMap"
    table = f.GetComponentFeaturesAsArrays()
    times = [f.GetAnalyzeTime(), f.GetWriteLabelsTime(), f.GetExportRunsTime(), f.GetBuildLabelMapTime()]
    assert times[0] > 0 and times[2] == 0 and times[3] == 0, times
    assert f.GetBackendDescription()

    expected_labels, count = itk_labels(image, False, itk.US)
    itk_map = itk.LabelImageToShapeLabelMapFilter[itk.Image[itk.US, 3],
                                                  itk.LabelMap[itk.StatisticsLabelObject[itk.UL, 3]]].New(expected_labels)
    itk_map.Update()
    m = itk_map.GetOutput()
    assert set(table) == set(f.GetComponentFeatureTableColumnNames().split())
    assert len(table["Label"]) == count == f.GetObjectCount()
    np.testing.assert_array_equal(table["Label"], np.arange(1, count + 1))
    for k, label in enumerate(table["Label"]):
        o = m.GetLabelObject(int(label))
        assert table["NumberOfPixels"][k] == o.GetNumberOfPixels()
        assert close(table["PhysicalSize"][k], o.GetPhysicalSize())
        assert close([table[f"Centroid-{i}"][k] for i in range(3)], o.GetCentroid(), scale=200.0)
        box = o.GetBoundingBox()
        assert [table[f"BoundingBoxIndex-{i}"][k] for i in range(3)] == list(box.GetIndex())
        assert [table[f"BoundingBoxSize-{i}"][k] for i in range(3)] == list(box.GetSize())
        assert table["Extent"][k] == o.GetNumberOfPixels() / float(np.prod(list(box.GetSize())))
    assert table["NumberOfPixels"].dtype == np.int64 and table["Extent"].dtype == np.float64

    empty = new_filter(itk.image_from_array(np.zeros((5, 7), np.uint8)), itk.UL, backend)
    empty.Update()
    assert all(len(v) == 0 for v in empty.GetComponentFeaturesAsArrays().values())
    print(f"{count} rows of the feature table equal to ITK's attributes")


def case_intensity(backend):
    """SetFeatureImage() (a float image, any wrapped scalar type): the LabelMap's StatisticsLabelObject attributes and
    GetIntensityFeaturesAsArrays() against ITK's LabelImageToStatisticsLabelMapFilter on ITK's labels (the median and
    the histogram are not computed). Tolerances as the C++ test's (itkCudaConnectedComponentAnalysisIntensityTest)."""
    objects = 0
    for shape in [(97, 61), (31, 29, 17)]:
        image = with_geometry(random_array(shape, 0.5, 1, 41 + len(shape)), rotate=True)
        rng = np.random.default_rng(len(shape))
        feature = itk.image_from_array(rng.uniform(1.0, 500.0, size=shape).astype(np.float32))
        feature.CopyInformation(image)
        dim = image.GetImageDimension()
        f = new_filter(image, itk.UL, backend)
        f.SetFeatureImage(feature)
        f.Update()
        check_backend(f, backend)
        table = f.GetIntensityFeaturesAsArrays()
        expected_labels, count = itk_labels(image, False, itk.US)
        stats_type = itk.LabelImageToStatisticsLabelMapFilter[itk.Image[itk.US, dim], type(feature),
                                                               itk.LabelMap[itk.StatisticsLabelObject[itk.UL, dim]]]
        stats = stats_type.New(Input=expected_labels, FeatureImage=feature)
        stats.SetComputePerimeter(False)
        stats.Update()
        m = stats.GetOutput()
        ours = f.GetLabelMap()
        assert len(table["Label"]) == count == ours.GetNumberOfLabelObjects() == m.GetNumberOfLabelObjects()
        for k, label in enumerate(table["Label"]):
            r = m.GetLabelObject(int(label))
            o = ours.GetLabelObject(int(label))
            n = r.GetNumberOfPixels()
            assert o.GetMinimum() == r.GetMinimum() == table["Minimum"][k]
            assert o.GetMaximum() == r.GetMaximum() == table["Maximum"][k]
            assert list(o.GetMinimumIndex()) == list(r.GetMinimumIndex()) == [table[f"MinimumIndex-{i}"][k] for i in range(dim)]
            assert list(o.GetMaximumIndex()) == list(r.GetMaximumIndex()) == [table[f"MaximumIndex-{i}"][k] for i in range(dim)]
            assert close(o.GetMean(), r.GetMean(), scale=500.0) and table["Mean"][k] == o.GetMean()
            assert close(o.GetSum(), r.GetSum(), scale=500.0 * n)
            assert close(o.GetVariance(), r.GetVariance(), scale=500.0**2)
            assert close(o.GetStandardDeviation(), r.GetStandardDeviation(), scale=500.0**2 / max(r.GetStandardDeviation(), 1e-9))
            assert close(list(o.GetCenterOfGravity()), list(r.GetCenterOfGravity()), scale=200.0)
            assert close([table[f"CenterOfGravity-{i}"][k] for i in range(dim)], list(o.GetCenterOfGravity()))
            assert close(list(o.GetWeightedPrincipalMoments()), list(r.GetWeightedPrincipalMoments()), scale=1e3)
        objects += count
    plain = new_filter(image, itk.UL, backend)
    plain.Update()
    expect_error(plain.GetIntensityFeatureTable, "no feature image")
    print(f"{objects} objects' intensity statistics equal to LabelImageToStatisticsLabelMapFilter's")


def expect_error(call, *fragments):
    try:
        call()
    except RuntimeError as error:
        text = str(error)
        for fragment in fragments:
            assert fragment in text, f"{fragment!r} not in: {text}"
        return text
    raise AssertionError(f"no exception; expected one with {fragments}")


def case_badinput(backend):
    """Bad input raises a Python exception carrying ITK's message, never a crash."""
    image = itk.image_from_array(random_array((40, 30), 0.5, 1, 41))
    f = new_filter(image, itk.UL, backend)
    f.SetMaskImage(itk.image_from_array(np.ones((10, 30), np.uint8)))
    print(expect_error(f.Update, "mask", "differs from the input"))

    # 300x300 isolated pixels: 22500 objects fit US, 90000 do not.
    checker = np.zeros((600, 600), np.uint16)
    checker[::2, ::2] = 1
    g = new_filter(itk.image_from_array(checker), itk.US, backend)
    print(expect_error(g.Update, "Number of objects (90000) greater than maximum of output pixel type (65535)"))

    if backend == "cpu" and cuda_device_count() == 0:
        h = new_filter(image, itk.UL, "cuda")
        print(expect_error(h.Update, "CUDA"))
    # the filter stays usable after an exception
    f.SetMaskImage(image)
    f.Update()
    assert f.GetObjectCount() > 0
    print("bad input raised ITK's exceptions")


def case_postprocessing(backend):
    """MinimumObjectSize, SortByObjectSize, NumberOfObjectsToKeep as keyword arguments, equal to
    ConnectedComponentImageFilter -> RelabelComponentImageFilter; the LabelMap holds the kept objects."""
    compared = 0
    for shape in [(1, 257), (61, 97), (17, 23, 29)]:
        for seed, (density, granularity) in enumerate([(0.3, 1), (0.6, 2)]):
            image = itk.image_from_array(random_array(shape, density, granularity, seed))
            cc, count = itk_labels(image, False, itk.US)  # RelabelComponentImageFilter is wrapped for US, not UL
            for minimum, keep, sort in [(3, 0, True), (2, 0, False), (0, 2, True)]:
                relabel = itk.RelabelComponentImageFilter[type(cc), type(cc)].New(cc)
                relabel.SetMinimumObjectSize(minimum)
                relabel.SetSortByObjectSize(True)
                relabel.Update()
                expected = itk.array_from_image(relabel.GetOutput())
                if keep:
                    expected[expected > keep] = 0
                if not sort:
                    # the kept components in label order: ConnectedComponentImageFilter's order
                    kept = np.where(expected > 0, itk.array_view_from_image(cc), 0)
                    relabel = itk.RelabelComponentImageFilter[type(cc), type(cc)].New(itk.image_from_array(kept))
                    relabel.SetSortByObjectSize(False)
                    relabel.Update()
                    expected = itk.array_from_image(relabel.GetOutput())
                f = new_filter(image, itk.US, backend, minimum_object_size=minimum,
                               number_of_objects_to_keep=keep, sort_by_object_size=sort)
                f.Update()
                check_backend(f, backend)
                np.testing.assert_array_equal(itk.array_view_from_image(f.GetOutput()), expected)
                assert f.GetOriginalObjectCount() == count, (f.GetOriginalObjectCount(), count)
                assert f.GetObjectCount() == int(expected.max()), (f.GetObjectCount(), expected.max())
                lm = f.GetLabelMap()
                assert lm.GetNumberOfLabelObjects() == f.GetObjectCount()
                for n in range(lm.GetNumberOfLabelObjects()):
                    obj = lm.GetNthLabelObject(n)
                    assert obj.GetNumberOfPixels() == int((expected == obj.GetLabel()).sum()), obj.GetLabel()
                compared += 1
    print(f"{compared} post-processed label images equal to RelabelComponentImageFilter's")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 1
    case, backend = sys.argv[1], sys.argv[2]
    if backend == "cuda" and cuda_device_count() == 0:
        print("CCA_TEST_SKIPPED: no CUDA device (or no CUDA engine in this build)")
        return SKIP
    globals()["case_" + case](backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())
