"""Large host outputs in memory reused from earlier outputs (cudacca.set_host_cache_limit): the values of fresh
memory, no memory handed to two live arrays, nothing kept past the limit."""

import numpy as np
import pytest

import cudacca
from conftest import BACKENDS, random_image

SHAPE = (160, 130)
PROPERTIES = ["basic", "extent", "perimeter"]


@pytest.fixture
def cache_limit(monkeypatch):
    """Every output in the cache, as large ones are (small images keep the test short); the limit restored and the
    cache emptied after the test."""
    monkeypatch.setattr(cudacca._arrays, "_CACHED_OUTPUT_BYTES", 1)
    before = cudacca.set_host_cache_limit(1 << 30)
    yield
    cudacca.set_host_cache_limit(before)
    cudacca.free_host_cache()


def _label(image, backend):
    return cudacca.label(image, return_table=True, backend=backend, properties=PROPERTIES)


def _assert_same(result, expected):
    labels, table = result
    np.testing.assert_array_equal(labels, expected[0])
    assert list(table) == list(expected[1])
    for name, column in expected[1].items():
        np.testing.assert_array_equal(table[name], column, err_msg=name)
        assert table[name].dtype == column.dtype, name


@pytest.mark.parametrize("backend", BACKENDS)
def test_reused_memory_gives_the_values_of_fresh_memory(backend, cache_limit):
    from skimage import measure

    images = [random_image(SHAPE, 0.2, 1, seed=1), random_image(SHAPE, 0.5, 2, seed=2),
              random_image(SHAPE[::-1], 0.3, 1, seed=3)]
    # Fresh memory: nothing cached.
    cudacca.set_host_cache_limit(0)
    fresh = [_label(image, backend) for image in images]
    assert cudacca.host_cache_info()["cached_bytes"] == 0
    for image, (labels, table) in zip(images, fresh):
        np.testing.assert_array_equal(labels, measure.label(image, connectivity=1))
        np.testing.assert_array_equal(table["label"], np.arange(1, labels.max() + 1, dtype=np.uint64))

    cudacca.set_host_cache_limit(1 << 30)
    in_use = cudacca.host_cache_info()["used_bytes"]  # by the fresh results
    first = _label(images[0], backend)
    used = cudacca.host_cache_info()["used_bytes"] - in_use
    assert used >= first[0].nbytes + first[1]["label"].nbytes  # the labels and the label column at least
    del first
    info = cudacca.host_cache_info()
    assert info["used_bytes"] == in_use and info["cached_bytes"] == used

    # The next calls take those blocks: their values are those of fresh memory, whatever the blocks held.
    second = _label(images[1], backend)
    assert cudacca.host_cache_info()["cached_bytes"] < used
    _assert_same(second, fresh[1])
    third = _label(images[0], backend)  # while the second result lives: other blocks
    _assert_same(third, fresh[0])
    for a in (second[0], *second[1].values()):
        for b in (third[0], *third[1].values()):
            assert not np.shares_memory(a, b)
    # Writing into one result leaves the other alone.
    second[0][...] = 0
    _assert_same(third, fresh[0])
    del second
    _assert_same(_label(images[2], backend), fresh[2])  # another shape in the same blocks


def test_nothing_is_kept_past_the_limit(cache_limit):
    image = random_image(SHAPE, 0.2, 1, seed=4)
    in_use = cudacca.host_cache_info()["used_bytes"]
    labels, table = _label(image, "cpu")
    used = cudacca.host_cache_info()["used_bytes"] - in_use
    assert used >= 10 * 4096  # a block per output array, whole pages each
    limit = used // 2
    cudacca.set_host_cache_limit(limit)
    del labels, table
    info = cudacca.host_cache_info()
    assert info == {"cached_bytes": info["cached_bytes"], "used_bytes": in_use, "limit": limit}
    assert 0 < info["cached_bytes"] <= limit
    assert cudacca.set_host_cache_limit(0) == limit
    assert cudacca.host_cache_info()["cached_bytes"] == 0
    with pytest.raises(ValueError, match=">= 0"):
        cudacca.set_host_cache_limit(-1)


def test_only_large_outputs_use_the_cache():
    used = cudacca.host_cache_info()["used_bytes"]
    labels, table = cudacca.label(random_image((64, 64), 0.5, 1, seed=5), return_table=True)
    assert labels.base is None and cudacca.host_cache_info()["used_bytes"] == used
    labels = cudacca.label(np.ones((512, 1024), np.uint8))  # 2 MiB of labels
    assert cudacca.host_cache_info()["used_bytes"] == used + labels.nbytes
    np.testing.assert_array_equal(labels, 1)


@pytest.mark.parametrize("shape", [(1100, 1000), (97, 101, 103)])
def test_large_tables_equal_the_cpu_engines(shape):
    """Columns of several MB: the CUDA engine's come down as one staged transfer whose chunks span the columns'
    borders (each lane a slice of the whole), the CPU engine's are written in place: the same values."""
    image = random_image(shape, 0.2, 1, seed=6)
    expected = cudacca.label(image, return_table=True, backend="cpu", properties="all")
    assert len(expected[1]["label"]) * 8 * 8 > 4 << 20  # past one staging chunk of 2 MB
    for backend in BACKENDS:
        for _ in range(2):  # fresh memory, then the first call's blocks
            result = cudacca.label(image, return_table=True, backend=backend, properties="all")
            _assert_same(result, expected)
            del result


def test_threads_share_the_cache_safely(cache_limit):
    """Calls on several threads take and give back blocks at once (the engine runs without the GIL): each result
    equals the one-thread result of its image, and no two live results share memory."""
    from concurrent.futures import ThreadPoolExecutor

    images = [random_image(SHAPE, 0.2 + 0.1 * (i % 4), 1 + i % 3, seed=10 + i) for i in range(8)]
    expected = [_label(image, "cpu") for image in images]

    def run(i):
        results = [_label(images[(i + k) % len(images)], "cpu") for k in range(12)]
        for k, result in enumerate(results):
            _assert_same(result, expected[(i + k) % len(images)])
        return results[-1]

    with ThreadPoolExecutor(4) as pool:
        last = list(pool.map(run, range(4)))
    for a in range(len(last)):
        for b in range(a + 1, len(last)):
            assert not np.shares_memory(last[a][0], last[b][0])
