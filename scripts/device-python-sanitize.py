"""A Python session under compute-sanitizer (scripts/device-python.sh): cudacca.label on CuPy and PyTorch
arrays, 2-D and 3-D, both connectivities, post-processing and the whole table, page-locked host arrays in and out,
and cudacca.label_batch, each against the CPU engine."""

import sys

import numpy as np
import cupy
import torch

import cudacca
from cudacca._table import _to_numpy

rng = np.random.default_rng(1)
failures = 0
for shape in [(1, 1), (3, 257), (129, 131), (33, 35, 37)]:
    for density in (0.3, 0.7):
        image = (rng.random(shape) < density).astype(np.uint8)
        for full in ("face", "full"):
            kw = dict(connectivity=full, return_table=True, properties=list(cudacca.ALL) + list(cudacca.ON_REQUEST))
            expected, table = cudacca.label(image, backend="cpu", **kw)
            for device_image in (cupy.asarray(image), torch.from_numpy(image).cuda()):
                labels, t = cudacca.label(device_image, **kw)
                host = labels.get() if isinstance(labels, cupy.ndarray) else labels.cpu().numpy()
                same = np.array_equal(host, expected) and all(np.allclose(_to_numpy(t[k]), table[k], rtol=1e-12) for k in t)
                failures += not same
            sorted_labels = cudacca.label(cupy.asarray(image), connectivity=full, sort=True, min_size=3)
            failures += not np.array_equal(sorted_labels.get(), cudacca.label(image, connectivity=full, sort=True, min_size=3, backend="cpu"))
# Above the one-launch limit (2^18 pixels): the general path (a kernel per stage), binary and multi-label input.
for shape in [(613, 517), (70, 61, 97)]:
    image = (rng.random(shape) < 0.6).astype(np.uint8)
    valued = image * rng.integers(1, 4, size=shape, dtype=np.uint8)
    for full in ("face", "full"):
        for pixels, multilabel in ((image, False), (valued, True)):
            expected = cudacca.label(pixels, connectivity=full, multilabel=multilabel, backend="cpu")
            labels = cudacca.label(cupy.asarray(pixels), connectivity=full, multilabel=multilabel)
            failures += not np.array_equal(labels.get(), expected)
# Page-locked host memory in and out (label()'s `output`), past one staging chunk: the copies by DMA alone.
import cupyx  # noqa: E402

image = (rng.random((1500, 1500)) < 0.5).astype(np.uint8)  # 2.25 MB up, 9 MB of labels down
expected = cudacca.label(image, connectivity="full", backend="cpu")
pinned_image = cupyx.empty_pinned(image.shape, image.dtype)
pinned_image[...] = image
pinned_labels = cupyx.zeros_pinned(image.shape, np.uint32)
cudacca.label(pinned_image, connectivity="full", backend="cuda", output=pinned_labels)
failures += not np.array_equal(pinned_labels, expected)
# Batches (label_batch: the engines' batch merge, the per-image labels and post-processing) on the device.
for stack_shape in [(7, 33, 29), (4, 13, 11, 9), (6, 50)]:
    stack = (rng.random(stack_shape) < 0.5).astype(np.uint8)
    for post in ({}, {"keep_largest": 2, "sort": True}):
        kw = dict(connectivity="full", min_size=2, return_table=True, **post)
        expected, table = cudacca.label_batch(stack, backend="cpu", **kw)
        for device_stack in (cupy.asarray(stack), torch.from_numpy(stack).cuda()):
            labels, t = cudacca.label_batch(device_stack, **kw)
            host = labels.get() if isinstance(labels, cupy.ndarray) else labels.cpu().numpy()
            failures += not (np.array_equal(host, expected) and all(np.array_equal(_to_numpy(t[k]), table[k]) for k in t))
print("device sessions compared with the CPU engine; failures:", failures)
sys.exit(1 if failures else 0)
