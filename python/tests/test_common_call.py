"""The common call -- a numpy or CuPy image, its labels and the default columns -- takes a short path of its own
(cudacca._label; one engine call writes a small table). It must give what the general path gives for the same
request: the same labels, columns (their library, order and dtypes) and errors."""

import warnings

import numpy as np
import pytest

import cudacca
from conftest import BACKENDS, random_image


try:
    import cupy

    LIBRARIES = ["numpy"] + (["cupy"] if cudacca.cuda_available()[0] else [])
except ImportError:
    LIBRARIES = ["numpy"]

#: Where each library's images are labeled: numpy's on every engine, CuPy's on their GPU.
CASES = [("numpy", backend) for backend in BACKENDS] + [("cupy", "auto")] * ("cupy" in LIBRARIES)


def _as(library, image):
    return cupy.asarray(image) if library == "cupy" else image


def _general(image, **request):
    """label() on the general path: no pixel type is taken as plain."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(cudacca._label, "_PLAIN_PIXEL_TYPES", frozenset())
        return cudacca.label(image, **request)


def _host(a):
    return a.get() if hasattr(a, "get") else a


@pytest.fixture
def short_path_calls(monkeypatch):
    """Counts the short path's tables, so that a test knows which path it compared."""
    calls = []
    original = cudacca._table.basic_table

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(cudacca._table, "basic_table", counted)
    return calls


def _assert_same(result, expected):
    if not isinstance(expected, tuple):
        assert type(result) is type(expected) and result.dtype == expected.dtype
        np.testing.assert_array_equal(_host(result), _host(expected))
        return
    _assert_same(result[0], expected[0])
    table, expected_table = result[1], expected[1]
    assert type(table) is type(expected_table)
    assert list(table) == list(expected_table)
    for name, column in expected_table.items():
        assert type(table[name]) is type(column), name
        assert table[name].dtype == column.dtype, name
        assert table[name].shape == column.shape, name
        np.testing.assert_array_equal(_host(table[name]), _host(column), err_msg=name)


SHAPES = [(1,), (37,), (1, 1), (1, 29), (29, 1), (45, 38), (9, 11, 13), (1, 7, 1)]
REQUESTS = [
    dict(),
    dict(return_table=True),
    dict(return_table=True, properties="basic", connectivity="full"),
    dict(return_table=True, properties=("label", "area", "bbox", "centroid")),
    dict(return_table=True, properties=["centroid", "num_pixels"], spacing="anisotropic"),
    dict(return_table=True, properties="bbox-1", min_size=3, sort=True),
    dict(return_table=True, keep_largest=2, dtype=np.uint64),
    dict(return_table=True, min_physical_size=2.5, spacing="anisotropic", dtype=np.int32),
]


@pytest.mark.parametrize("library, backend", CASES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_short_path_equals_general_path(library, backend, shape, short_path_calls):
    for seed, (density, granularity) in enumerate([(0.2, 1), (0.5, 1), (0.6, 2), (0.0, 1), (1.0, 1)]):
        image = _as(library, random_image(shape, density, granularity, seed))
        for request in REQUESTS:
            request = dict(request, backend=backend)
            if request.get("spacing") == "anisotropic":
                request["spacing"] = [0.5, 1.25, 2.0][: image.ndim]
            calls = len(short_path_calls)
            result = cudacca.label(image, **request)
            assert len(short_path_calls) == calls + bool(request.get("return_table"))
            _assert_same(result, _general(image, **request))
            assert len(short_path_calls) == calls + bool(request.get("return_table"))  # the general path took none


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(37,), (45, 38), (9, 11, 13)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("budget", [1, 30_000])
def test_short_path_in_slabs(backend, shape, budget, short_path_calls):
    """Under a memory budget a host image is analyzed in slabs (2-D and 3-D): the slab engine writes the block."""
    for seed, (density, granularity) in enumerate([(0.2, 1), (0.5, 2)]):
        image = random_image(shape, density, granularity, seed)
        request = dict(return_table=True, backend=backend, memory_budget=budget, connectivity="full")
        result = cudacca.label(image, **request)
        if len(shape) > 1:
            assert cudacca._label._analysis().number_of_slabs > 1
        _assert_same(result, _general(image, **request))
        _assert_same(result, cudacca.label(image, return_table=True, backend=backend, connectivity="full"))
    assert len(short_path_calls) == 4


@pytest.mark.parametrize("library, backend", CASES)
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float32, np.float64])
def test_short_path_pixel_types(library, backend, dtype, short_path_calls):
    image = random_image((23, 31), 0.5, 1, seed=4).astype(dtype)
    if dtype in (np.float32, np.float64):
        image = image * np.asarray(0.25, dtype)  # non-zero fractions are objects too
    image = _as(library, image)
    _assert_same(cudacca.label(image, return_table=True, backend=backend),
                 _general(image, return_table=True, backend=backend))
    assert len(short_path_calls) == 1


@pytest.mark.parametrize("library, backend", CASES)
def test_large_table_keeps_columns_in_memory_of_their_own(library, backend, monkeypatch, short_path_calls):
    """Past the host cache's size the short path's table is the general path's columns, each in its own memory."""
    image = _as(library, random_image((64, 70), 0.2, 1, seed=5))
    small = cudacca.label(image, return_table=True, backend=backend)
    monkeypatch.setattr(cudacca._arrays, "_CACHED_OUTPUT_BYTES", 64)
    large = cudacca.label(image, return_table=True, backend=backend)
    assert len(short_path_calls) == 2
    _assert_same(large, small)
    _assert_same(large, _general(image, return_table=True, backend=backend))
    label, area = large[1]["label"], large[1]["area"]
    if library == "cupy":
        assert label.data.ptr + label.nbytes <= area.data.ptr or area.data.ptr + area.nbytes <= label.data.ptr
    else:
        assert not np.shares_memory(label, area)
    # the small table is one block: the columns are rows of it
    if library == "cupy":
        assert small[1]["label"].data.mem is small[1]["num_pixels"].data.mem
        assert small[1]["num_pixels"].data.ptr == small[1]["label"].data.ptr + small[1]["label"].nbytes
    else:
        assert small[1]["label"].base is small[1]["num_pixels"].base


def test_short_path_leaves_other_requests_to_the_general_path(short_path_calls):
    image = random_image((20, 24), 0.5, 1, seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for request in (dict(properties="all"), dict(properties=["label", "perimeter"]), dict(mask=image),
                        dict(background=1), dict(periodic=True), dict(multilabel=True), dict(delta=0.5),
                        dict(intensity=image), dict(properties=(n for n in ["label", "area"]))):
            cudacca.label(image, return_table=True, backend="cpu", **request)
        cudacca.label(np.asfortranarray(image), return_table=True, backend="cpu")
        cudacca.label(image.astype(">u2"), return_table=True, backend="cpu")
        cudacca.label(image[:, ::2], return_table=True, backend="cpu")
        cudacca.label(image.tolist(), return_table=True, backend="cpu")
    assert short_path_calls == []


@pytest.mark.parametrize(
    "request_, error",
    [(dict(connectivity=5), ValueError), (dict(min_size=-1), ValueError),
     (dict(properties=["area", "nope"]), ValueError), (dict(memory_budget=-1), ValueError),
     (dict(backend="gpu"), ValueError), (dict(spacing=[1.0]), ValueError),
     (dict(dtype=np.float32), TypeError), (dict(dtype=np.uint8, properties="basic"), OverflowError)],
)
@pytest.mark.parametrize("library", LIBRARIES)
def test_short_path_errors_are_the_general_paths(library, request_, error):
    image = _as(library, random_image((30, 300), 0.5, 1, seed=7))  # > 255 components: uint8 labels overflow
    request = {"backend": "cpu" if library == "numpy" else "auto", "return_table": True, **request_}
    messages = []
    for label in (cudacca.label, _general):
        with pytest.raises(error) as info:
            label(image, **request)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("library", LIBRARIES)
def test_no_components_image(library):
    labels, table = cudacca.label(_as(library, np.zeros((5, 6), np.uint8)), return_table=True)
    assert labels.dtype == np.uint32 and not labels.any()
    assert all(len(column) == 0 for column in table.values())
    assert list(table) == ["label", "num_pixels", "area", "bbox-0", "bbox-1", "bbox-2", "bbox-3", "centroid-0",
                           "centroid-1"]
