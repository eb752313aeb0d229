"""The CPU engine's threads: its passes run on a pool of threads kept from call to call (src/core/itkCCAWorkerPool.cxx).
Calls from several Python threads at once (one takes the pool, the others start threads of their own), thread counts
changing between calls, and a forked child (which has none of its parent's threads) must all give the single-threaded
engine's labels and table, and return."""

import multiprocessing
import os
import sys
import threading

import numpy as np
import pytest
import scipy.ndimage as ndi

import cudacca
from conftest import random_image

#: Sizes the CPU engine splits into several blocks of rows (one per thread, 8,192 pixels or more each), 2-D and 3-D,
#: with a row of odd length and a block boundary inside a slice.
IMAGES = [((300, 301), 0.5, 1), ((257, 263), 0.4, 4), ((45, 39, 41), 0.4, 1), ((33, 64, 65), 0.6, 3)]


def _reference(image, threads=1):
    return cudacca.label(image, backend="cpu", threads=threads, return_table=True, connectivity="full")


def _same(a, b):
    labels_a, table_a = a
    labels_b, table_b = b
    return np.array_equal(labels_a, labels_b) and table_a.keys() == table_b.keys() and all(
        np.array_equal(table_a[k], table_b[k]) for k in table_a)


@pytest.mark.parametrize("shape,density,granularity", IMAGES)
def test_thread_counts_give_the_single_threaded_result(shape, density, granularity):
    image = random_image(shape, density, granularity, seed=11)
    expected = _reference(image)
    labels, _ = expected
    scipy_labels, count = ndi.label(image, structure=np.ones((3,) * image.ndim))
    assert labels.max() == count
    assert np.array_equal(labels > 0, scipy_labels > 0)
    for threads in (2, 3, 8, 0, 2, 16, 0):
        assert _same(_reference(image, threads), expected), threads


@pytest.mark.parametrize("request_kind", ["multilabel", "intensity", "per_class", "delta", "periodic", "all"])
@pytest.mark.parametrize("shape", [(300, 301), (33, 64, 65)])
def test_every_request_is_the_same_on_any_number_of_threads(request_kind, shape):
    """The multi-label, intensity, value-tolerance and periodic stages and the shape attributes, split into up to 16
    blocks: bit for bit the single-threaded labels and table (sums are joined in block order)."""
    rng = np.random.default_rng(len(shape))
    classes = (random_image(shape, 0.7, 2, seed=3) * rng.integers(1, 5, size=shape)).astype(np.uint8)
    request = {"multilabel": dict(multilabel=True), "per_class": dict(multilabel=True, keep_largest=2, per_class=True),
               "intensity": dict(intensity=rng.normal(100, 20, size=shape).astype(np.float32)),
               "delta": dict(delta=1.0), "periodic": dict(periodic=True), "all": dict(properties="all")}[request_kind]
    image = classes if request_kind in ("multilabel", "per_class", "delta") else (classes > 0).astype(np.uint8)
    for connectivity in range(1, len(shape) + 1):
        expected = cudacca.label(image, backend="cpu", threads=1, connectivity=connectivity, return_table=True,
                                 **request)
        for threads in (3, 16):
            labels, table = cudacca.label(image, backend="cpu", threads=threads, connectivity=connectivity,
                                          return_table=True, **request)
            assert np.array_equal(labels, expected[0])
            assert table.keys() == expected[1].keys()
            for column in table:
                assert np.array_equal(table[column], expected[1][column], equal_nan=True), (column, threads)


def test_concurrent_calls_from_threads():
    images = [random_image(shape, density, granularity, seed=20 + i)
              for i, (shape, density, granularity) in enumerate(IMAGES)]
    expected = [_reference(image) for image in images]
    failures = []
    start = threading.Barrier(6)

    def work(t):
        start.wait()
        for r in range(12):
            i = (t + r) % len(images)
            if not _same(_reference(images[i], threads=(0, 2, 4)[(t + r) % 3]), expected[i]):
                failures.append((t, r, i))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a labeling thread did not return"
    assert not failures


def _label_in_child(image):
    labels, table = _reference(image, threads=0)
    return labels, dict(table)


@pytest.mark.skipif(sys.platform == "win32" or "fork" not in multiprocessing.get_all_start_methods(),
                    reason="needs fork()")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Python 3.12 warns of fork() in a threaded process
def test_forked_child_after_the_pool_started():
    image = random_image((300, 301), 0.5, 1, seed=5)
    expected = _reference(image, threads=0)  # the pool's threads exist in the parent from here on
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        results = [pool.apply_async(_label_in_child, (image,)) for _ in range(4)]
        for result in results:
            labels, table = result.get(timeout=120)
            assert _same((labels, table), expected)
    assert os.getpid() > 0  # the parent goes on using its pool
    assert _same(_reference(image, threads=0), expected)
