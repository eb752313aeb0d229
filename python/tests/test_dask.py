"""cudacca.label() on Dask arrays: equal to the in-memory result, whatever the chunking; on a LocalCluster too."""

import numpy as np
import pytest

import cudacca
from conftest import BACKENDS, random_image

da = pytest.importorskip("dask.array")
pytest.importorskip("scipy")


def assert_same(result, expected):
    labels, table = result
    exp_labels, exp_table = expected
    computed = labels.compute()
    assert computed.dtype == exp_labels.dtype
    np.testing.assert_array_equal(computed, exp_labels)
    assert list(table) == list(exp_table)
    for k in table:
        assert table[k].dtype == exp_table[k].dtype, k
        if np.issubdtype(table[k].dtype, np.floating):
            np.testing.assert_allclose(table[k], exp_table[k], rtol=1e-12, atol=1e-12, err_msg=k)
        else:
            np.testing.assert_array_equal(table[k], exp_table[k], err_msg=k)


CASES = [((57, 61), (7, 11)), ((57, 61), (20, 61)), ((57, 61), (1, 61)), ((57, 61), (57, 1)), ((300,), (7,)),
         ((23, 19, 17), (5, 4, 6)), ((23, 19, 17), (23, 19, 1)), ((23, 19, 17), (8, 19, 17))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape, chunks", CASES)
@pytest.mark.parametrize("connectivity", ["face", 2, "full"])
def test_dask_equals_in_memory(backend, shape, chunks, connectivity):
    """Chunkings that cut components many times (down to one-pixel slabs), every connectivity (2: faces and edges,
    18 in 3-D), 1-D to 3-D."""
    for density, granularity, seed in [(0.3, 1, 1), (0.6, 2, 2), (0.8, 3, 3), (1.0, 1, 4)]:
        image = random_image(shape, density, granularity, seed)
        expected = cudacca.label(image, connectivity=connectivity, return_table=True, backend=backend)
        result = cudacca.label(da.from_array(image, chunks=chunks), connectivity=connectivity, return_table=True,
                               backend=backend)
        assert_same(result, expected)


@pytest.mark.parametrize("options", [dict(min_size=4), dict(keep_largest=3), dict(sort=True),
                                     dict(keep_largest=2, sort=True, min_size=2),
                                     dict(min_physical_size=3.0, spacing=(0.5, 2.0)),
                                     dict(background=1, dtype=np.uint16)])
def test_dask_post_processing_and_options(options):
    image = random_image((64, 48), 0.55, 1, seed=9)
    expected = cudacca.label(image, return_table=True, backend="cpu", **options)
    result = cudacca.label(da.from_array(image, chunks=(9, 13)), return_table=True, backend="cpu", **options)
    assert_same(result, expected)


def test_dask_labels_stay_lazy_and_keep_the_chunks():
    image = random_image((40, 40), 0.5, 2, seed=5)
    labels = cudacca.label(da.from_array(image, chunks=(10, 15)))
    assert isinstance(labels, da.Array) and labels.chunks == ((10,) * 4, (15, 15, 10))
    np.testing.assert_array_equal(labels.compute(), cudacca.label(image))


def test_dask_refuses_what_it_does_not_do():
    image = da.zeros((8, 8), dtype=np.uint8, chunks=4)
    with pytest.raises(ValueError, match="no mask"):
        cudacca.label(image, mask=np.ones((8, 8), np.uint8))
    with pytest.raises(ValueError, match="basic"):
        cudacca.label(image, return_table=True, properties="all")


def test_dask_on_a_local_cluster_with_two_workers():
    distributed = pytest.importorskip("distributed")
    image = random_image((48, 40, 24), 0.5, 1, seed=11)
    expected = cudacca.label(image, connectivity="full", return_table=True, backend="cpu")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            result = cudacca.label(da.from_array(image, chunks=(12, 20, 8)), connectivity="full", return_table=True,
                                   backend="cpu")
            assert_same(result, expected)


def _die_once(block, marker, block_info=None):
    """The identity, except that the first time it sees the chunk at the origin its worker process dies."""
    import os

    if block_info and block_info[0]["chunk-location"] == (0, 0, 0):
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL)  # one death only, whichever worker comes first
        except FileExistsError:
            return block
        os.close(fd)
        os._exit(1)
    return block


def test_dask_survives_a_worker_killed_mid_run(tmp_path):
    """A worker process dies while it holds a chunk's task: the nanny restarts it, the scheduler runs the lost
    tasks again, and the result is the in-memory one."""
    distributed = pytest.importorskip("distributed")
    image = random_image((48, 40, 24), 0.5, 1, seed=17)
    expected = cudacca.label(image, connectivity="full", return_table=True, backend="cpu")
    marker = str(tmp_path / "died")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            chunks = da.from_array(image, chunks=(12, 20, 8)).map_blocks(_die_once, marker, dtype=image.dtype)
            result = cudacca.label(chunks, connectivity="full", return_table=True, backend="cpu")
            assert_same(result, expected)
    import os

    assert os.path.exists(marker)  # a worker did die


def test_dask_zarr_in_and_out(tmp_path):
    """A volume chunked on disk (Zarr), labelled and written back chunk by chunk: the in-memory result."""
    zarr = pytest.importorskip("zarr")
    image = random_image((40, 36, 30), 0.3, 1, seed=13)
    stored = zarr.create_array(store=str(tmp_path / "in.zarr"), shape=image.shape, chunks=(10, 12, 7),
                               dtype=image.dtype)
    stored[:] = image
    labels, table = cudacca.label(da.from_zarr(str(tmp_path / "in.zarr")), return_table=True, backend="cpu")
    labels.to_zarr(str(tmp_path / "labels.zarr"))
    expected, expected_table = cudacca.label(image, return_table=True, backend="cpu")
    written = zarr.open_array(str(tmp_path / "labels.zarr"), mode="r")
    assert written.chunks == (10, 12, 7)
    np.testing.assert_array_equal(written[:], expected)
    assert len(table["label"]) == len(expected_table["label"]) > 100
    np.testing.assert_allclose(table["centroid-2"], expected_table["centroid-2"], rtol=1e-12)


@pytest.mark.parametrize("options", [dict(min_physical_size=0.006000000000000001, spacing=(0.3, 0.2, 0.1)),
                                     dict(keep_largest=1000, sort=True), dict(keep_largest=3, min_size=2, sort=True),
                                     dict(min_size=3, connectivity="full")])
def test_dask_post_processing_in_3d(options):
    """3-D, with a spacing whose product depends on the order of the factors (ITK's: x first)."""
    image = random_image((21, 18, 15), 0.3, 1, seed=17)
    expected = cudacca.label(image, return_table=True, backend="cpu", **options)
    result = cudacca.label(da.from_array(image, chunks=(6, 5, 4)), return_table=True, backend="cpu", **options)
    assert_same(result, expected)


def test_dask_empty_chunks_and_bad_arguments():
    image = random_image((20, 16), 0.5, 1, seed=19)
    chunked = da.from_array(image, chunks=((5, 0, 15), (8, 0, 8)))
    assert_same(cudacca.label(chunked, return_table=True, backend="cpu"),
                cudacca.label(image, return_table=True, backend="cpu"))
    with pytest.raises(ValueError, match="spacing"):
        cudacca.label(chunked, spacing=(1.0,))
    with pytest.raises(TypeError, match="integer"):
        cudacca.label(chunked, dtype=np.float32)
    with pytest.raises(ValueError, match="4-D"):
        cudacca.label(da.zeros((2, 2, 2, 2), chunks=1), connectivity=8)


def _first_pixels_by_definition(flat, k):
    """Each label's first flat index, by its definition: the smallest index holding it."""
    first = np.full(k, flat.size, np.int64)
    np.minimum.at(first, flat[flat > 0].astype(np.int64) - 1, np.flatnonzero(flat))
    return first


@pytest.mark.parametrize("shape, density, granularity", [((1,), 1.0, 1), ((1,), 0.0, 1), ((300,), 0.5, 1),
                                                         ((33, 70), 0.9, 1), ((40, 50, 60), 0.3, 1),
                                                         ((40, 50, 60), 0.6, 4)])
def test_first_pixels_of_a_chunk(shape, density, granularity):
    """The chunk summary's first pixel of every label (the global numbering rests on it), found block by block from
    the running maximum: equal to the smallest index of each label, with blocks smaller and larger than a row."""
    from cudacca import _dask

    flat = cudacca.label(random_image(shape, density, granularity, seed=sum(shape)), backend="cpu").ravel()
    k = int(flat.max()) if flat.size else 0
    expected = _first_pixels_by_definition(flat, k)
    for block in (1, 7, 64, 1 << 20):
        np.testing.assert_array_equal(_dask._first_pixels(flat, k, block=block), expected)


@pytest.mark.parametrize("n", [0, 1, 7, 5000])
def test_unique_pairs_as_numpy_gives_them(n):
    """The boundary's touching pairs made unique through ranks: the pairs np.unique(axis=1) gives, in its order,
    codes above 2^32 (chunk number * 2^32 + label) included."""
    from cudacca import _dask

    rng = np.random.default_rng(n)
    pairs = rng.integers(1, 40, size=(2, n)) + (rng.integers(0, 4, size=(2, n)) << 32)
    np.testing.assert_array_equal(_dask._unique_pairs(pairs), np.unique(pairs, axis=1))


def test_first_pixels_of_a_cupy_chunk():
    """The same on the GPU (a thread per 256 pixels, an atomic minimum where its running maximum steps up), for
    every label width the chunk may have."""
    cupy = pytest.importorskip("cupy")
    if not cudacca.cuda_available()[0]:
        pytest.skip("no usable GPU")
    from cudacca import _dask

    for shape, density, granularity in (((1,), 1.0, 1), ((255,), 0.5, 1), ((257,), 0.5, 1), ((40, 50, 60), 0.3, 1),
                                        ((64, 256, 256), 0.6, 4)):
        labels = cudacca.label(random_image(shape, density, granularity, seed=sum(shape)), backend="cpu")
        k = int(labels.max())
        expected = _first_pixels_by_definition(labels.ravel(), k)
        for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
            if k <= np.iinfo(dtype).max:
                np.testing.assert_array_equal(_dask._first_pixels_gpu(cupy.asarray(labels.astype(dtype)), k),
                                              expected, err_msg=f"{shape} {dtype}")


def test_dask_cupy_chunks_stay_on_the_gpu():
    """A Dask array of CuPy chunks: each chunk labelled on the GPU where it is, the labels CuPy chunks again; only
    the per-chunk tables and faces come to the host. The result is the in-memory one."""
    cupy = pytest.importorskip("cupy")
    if not cudacca.cuda_available()[0]:
        pytest.skip("no usable GPU")
    image = random_image((40, 36, 30), 0.4, 1, seed=19)
    for full in (False, True):
        connectivity = "full" if full else "face"
        expected, expected_table = cudacca.label(image, connectivity=connectivity, return_table=True, backend="cpu")
        chunks = da.from_array(cupy.asarray(image), chunks=(10, 12, 15))
        labels, table = cudacca.label(chunks, connectivity=connectivity, return_table=True, min_size=2)
        kept = cudacca.label(image, connectivity=connectivity, backend="cpu", min_size=2)
        computed = labels.compute()
        assert isinstance(computed, cupy.ndarray)
        np.testing.assert_array_equal(computed.get(), kept)
        labels, table = cudacca.label(chunks, connectivity=connectivity, return_table=True)
        np.testing.assert_array_equal(labels.compute().get(), expected)
        for k in table:
            np.testing.assert_allclose(np.asarray(table[k]), np.asarray(expected_table[k]), rtol=1e-12, err_msg=k)


def _class_map(shape, seed, classes=(1, 2, 7)):
    """Blocks of 3 pixels on at 80 %, each of one class: classes meet face to face across many chunk faces."""
    on = random_image(shape, 0.8, 3, seed=seed).astype(bool)
    rng = np.random.default_rng(seed)
    full = rng.choice(np.asarray(classes, np.uint8), size=tuple(-(-s // 3) for s in shape))
    for axis in range(len(shape)):
        full = np.repeat(full, 3, axis=axis)
    return np.where(on, full[tuple(slice(0, s) for s in shape)], 0).astype(np.uint8)


@pytest.mark.parametrize("shape, chunks", CASES)
@pytest.mark.parametrize("connectivity", ["face", "full"])
def test_dask_multilabel_equals_in_memory(shape, chunks, connectivity):
    """Multi-label input chunk by chunk: pieces join across a chunk face only where their classes are
    equal; labels, table (its class column) and the per-class cleaned segmentation equal the in-memory result."""
    image = _class_map(shape, seed=sum(shape))
    chunked = da.from_array(image, chunks=chunks)
    expected = cudacca.label(image, connectivity=connectivity, multilabel=True, return_table=True, backend="cpu")
    assert_same(cudacca.label(chunked, connectivity=connectivity, multilabel=True, return_table=True, backend="cpu"),
                expected)
    options = dict(connectivity=connectivity, multilabel=True, per_class=True, keep_largest=1, backend="cpu")
    cleaned = cudacca.label(image, class_values=True, **options)
    np.testing.assert_array_equal(cudacca.label(chunked, class_values=True, **options).compute(), cleaned)
    assert_same(cudacca.label(chunked, return_table=True, sort=True, min_size=2, **options),
                cudacca.label(image, return_table=True, sort=True, min_size=2, **options))
