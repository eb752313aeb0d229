"""cudacca.label() against ITK (pip's itk 5.4.7): labels, post-processing and the table against
ConnectedComponentImageFilter, RelabelComponentImageFilter and LabelImageToShapeLabelMapFilter."""

import os

import numpy as np
import pytest

import cudacca
from conftest import BACKENDS, DENSITY_GRANULARITY, random_image

itk = pytest.importorskip("itk")
from cudacca._arrays import itk_image_like  # noqa: E402

SHAPES = [(1, 1), (1, 57), (57, 1), (37, 53), (64, 64), (1, 1, 1), (5, 1, 7), (1, 9, 1), (17, 23, 29), (32, 32, 32)]
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

def _shape_map(label_image):
    """ITK's LabelImageToShapeLabelMapFilter on a label image, with Feret and OBB, as {label: object}."""
    labels = itk.array_from_image(label_image).astype(np.uint16)
    image = itk_image_like(labels, like=label_image)  # its region (index included) and geometry
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


def test_region_index_and_vector_pixels():
    """An itk.Image whose region starts elsewhere than 0 (as ExtractImageFilter makes them): the labels keep
    the region, the table's boxes and centroids are ITK's (absolute index, physical point)."""
    array = random_image((23, 31), 0.4, 2, seed=3)
    image = itk_image_like(array)
    region = itk.ImageRegion[2]()
    region.SetIndex([5, 7])
    region.SetSize([31, 23])
    image.SetRegions(region)
    image.Allocate()
    itk.array_view_from_image(image)[...] = array
    image.SetOrigin([1.5, -2.0])
    image.SetSpacing([0.5, 2.0])
    labels, table = cudacca.label(image, return_table=True, properties=["bbox", "centroid", "principal_moments"])
    assert list(labels.GetBufferedRegion().GetIndex()) == [5, 7]
    objects = _shape_map(labels)
    for row, lab in enumerate(table["label"].tolist()):
        o = objects[lab]
        box = o.GetBoundingBox()
        assert [table["bbox-1"][row], table["bbox-0"][row]] == list(box.GetIndex())
        _close([table["centroid-1"][row], table["centroid-0"][row]], list(o.GetCentroid()), "centroid")
        _close([table[f"principal_moments-{c}"][row] for c in range(2)], list(o.GetPrincipalMoments()), "moments")
    rgb = itk.Image[itk.RGBPixel[itk.UC], 2].New()
    rgb.SetRegions(itk.ImageRegion[2](itk.Size[2]([4, 4])))
    rgb.Allocate()
    with pytest.raises(TypeError, match="3-component pixels"):
        cudacca.label(rgb)
