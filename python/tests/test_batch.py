"""cudacca.label_batch(): each image of a stack labelled on its own, equal to one label() call per image."""

import numpy as np
import pytest

import cudacca
from conftest import BACKENDS, random_image


def _per_image(images, **kw):
    labels, tables = [], []
    for i, im in enumerate(images):
        lab, t = cudacca.label(im, return_table=True, **kw)
        labels.append(lab)
        t["image"] = np.full(len(t["label"]), i, dtype=np.int64)
        tables.append(t)
    return np.stack(labels), {k: np.concatenate([t[k] for t in tables]) for k in tables[0]}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(7, 33, 29), (5, 1, 40), (9, 40, 1), (4, 13, 11, 9), (3, 1, 1, 1), (6, 50)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("full", [False, True], ids=["face", "full"])
@pytest.mark.parametrize("post", [{}, {"keep_largest": 2}, {"sort": True}, {"keep_largest": 3, "sort": True}],
                         ids=["all", "keep2", "sort", "keep3sorted"])
def test_batch_equals_per_image(backend, shape, full, post):
    rng = np.random.default_rng(sum(shape))
    images = [random_image(shape[1:], rng.uniform(0.2, 0.8), int(rng.integers(1, 4)), seed=int(rng.integers(1 << 30)))
              for _ in range(shape[0])]
    images[0][...] = 0  # an image without objects
    if shape[0] > 2:
        images[1][...] = 1  # one object filling its image, touching the separators
    stack = np.stack(images)
    kw = dict(connectivity="full" if full else "face", min_size=2, spacing=[0.5, 1.5, 2.5][: len(shape) - 1], **post)
    expected_labels, expected = _per_image(images, backend=backend, **kw)
    labels, table = cudacca.label_batch(stack, return_table=True, backend=backend, **kw)
    np.testing.assert_array_equal(labels, expected_labels)
    assert set(table) == set(expected)
    for k in expected:  # exactly: the same integer sums, the same operations
        np.testing.assert_array_equal(table[k], expected[k], err_msg=k)
    running = cudacca.label_batch(list(images), backend=backend, running_labels=True, **kw)
    assert running.max() == len(table["label"])
    np.testing.assert_array_equal(running > 0, labels > 0)


def test_batch_refuses_mixed_images():
    a = np.zeros((4, 5), np.uint8)
    with pytest.raises(ValueError, match=r"images\[1\]: shape"):
        cudacca.label_batch([a, np.zeros((4, 6), np.uint8)])
    with pytest.raises(TypeError, match=r"images\[2\]: dtype"):
        cudacca.label_batch([a, a, a.astype(np.float32)])
    with pytest.raises(TypeError, match=r"images\[1\]: complex"):
        cudacca.label_batch([a, a.astype(np.complex64)])
    with pytest.raises(ValueError, match="empty list"):
        cudacca.label_batch([])


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_background_value(backend):
    """A background other than 0: as label() reads it, image by image."""
    rng = np.random.default_rng(5)
    stack = rng.integers(0, 3, size=(4, 17, 19)).astype(np.int16)
    labels = cudacca.label_batch(stack, background=2, backend=backend)
    for i in range(len(stack)):
        np.testing.assert_array_equal(labels[i], cudacca.label(stack[i], background=2, backend=backend))


@pytest.mark.parametrize("library", ["cupy", "torch"])
@pytest.mark.parametrize("post", [{}, {"keep_largest": 2, "sort": True}], ids=["all", "keep2sorted"])
@pytest.mark.parametrize("shape", [(7, 33, 29), (4, 13, 11, 9), (6, 50)], ids=lambda s: "x".join(map(str, s)))
def test_batch_on_device(library, post, shape):
    """A stack in GPU memory: labels (restarted per image on the device) and table equal the CPU engine's."""
    if not cudacca.cuda_available()[0]:
        pytest.skip("no CUDA device")
    lib = pytest.importorskip(library)
    rng = np.random.default_rng(len(shape))
    stack = (rng.random(shape) < 0.5).astype(np.uint8)
    kw = dict(connectivity="full", min_size=2, return_table=True, **post)
    expected, table = cudacca.label_batch(stack, backend="cpu", **kw)
    device_stack = lib.asarray(stack) if library == "cupy" else lib.from_numpy(stack).cuda()
    for running in (False, True):
        labels, t = cudacca.label_batch(device_stack, running_labels=running, **kw)
        host = labels.get() if library == "cupy" else labels.cpu().numpy()
        if running:
            expected_running, _ = cudacca.label_batch(stack, backend="cpu", running_labels=True, **kw)
            np.testing.assert_array_equal(host, expected_running)
        else:
            np.testing.assert_array_equal(host, expected)
            for k in table:
                got = t[k].get() if library == "cupy" else t[k].cpu().numpy()
                np.testing.assert_array_equal(got, table[k], err_msg=k)
