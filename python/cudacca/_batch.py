"""cudacca.label_batch(): a stack of same-shape images, each labelled on its own, in one engine call.

The images are laid one after the other along their slowest axis with one background row (2-D) or slice (3-D)
between them, which no component can cross under either connectivity; that one image is labelled once. The
engine then takes each component's box and centroid within its image from integer sums made relative first
(BasicColumns::batchStride), so the table equals the per-image calls' exactly, and each image's labels are
renumbered from 1 (raster order puts each image's labels in one consecutive range).
"""

from __future__ import annotations

import numpy as np

from . import _arrays, _core, _label, _table


def _stack(images):
    if isinstance(images, (list, tuple)):
        if len(images) == 0:
            raise ValueError("images: an empty list")
        first = _arrays.as_input(images[0], "images[0]")
        for i, im in enumerate(images[1:], start=1):
            other = _arrays.as_input(im, f"images[{i}]")
            if other.shape != first.shape or other.library != first.library or other.device != first.device:
                raise ValueError(f"images[{i}]: shape {other.shape} on {other.library}/{other.device} differs from "
                                 f"images[0]'s {first.shape} on {first.library}/{first.device}; a batch is one shape")
            if str(other.array.dtype) != str(first.array.dtype):
                raise TypeError(f"images[{i}]: dtype {other.array.dtype} differs from images[0]'s {first.array.dtype}")
        if first.library == "cupy":
            import cupy

            with cupy.cuda.Device(first.device):
                return cupy.stack([_arrays.as_input(im).array for im in images]), first
        if first.library == "torch":
            import torch

            return torch.stack([_arrays.as_input(im).array for im in images]), first
        return np.stack([_arrays.as_input(im).array for im in images]), first
    return images, None


def label_batch(images, *, connectivity=None, background=0, min_size=0, min_physical_size=0.0, spacing=None,
                return_table=False, running_labels=False, dtype=None, backend="auto", device=0, threads=0):
    """Labels each image of a stack on its own, in one call: `images` is an array of N images (a 3-D array of
    N 2-D images, a 4-D array of N 3-D patches; numpy, CuPy or PyTorch) or a list of same-shape arrays.

    Returns labels of shape (N, ...) (each image numbered 1, 2, ... or, with running_labels, one numbering over
    the batch) and, with return_table, one Table of the basic columns (label, num_pixels, area, bbox, centroid,
    each image's own) with an `image` column. Options as label(); sorting and keep_largest are per image and not
    offered here yet.
    """
    stacked, _ = _stack(images)
    whole = _arrays.as_input(stacked, "images", max_dims=4)
    if whole.ndim < 2 or whole.ndim > 4:
        raise ValueError(f"images: a stack of 1-D, 2-D or 3-D images (2 to 4 dimensions), not {whole.ndim}-D")
    n = whole.shape[0]
    per = whole.shape[1:]
    stride = per[0] + 1
    # One pass makes the objects (pixels other than the background, as label() reads them) and the separators.
    padded = whole.empty(np.uint8, (n * stride,) + tuple(per[1:]))
    padded[...] = 0
    view = padded.reshape((n, stride) + tuple(per[1:]))
    value = 0 if background is None else background
    if whole.library == "cupy":
        import cupy

        with cupy.cuda.Device(whole.device):
            view[:, : per[0]] = whole.array != value
    else:
        view[:, : per[0]] = whole.array != value
    inp = _arrays.Input(padded, whole.library, whole.device, whole.stream)

    fully = _label._fully_connected(connectivity, len(per))
    if spacing is not None and len(np.atleast_1d(spacing)) != len(per):
        raise ValueError(f"spacing: {len(per)} values expected (one image's axes)")
    start, itk_spacing, origin, direction = _label._geometry(inp, spacing)
    analysis = _label._analysis()
    count = _label._analyze(analysis, inp, padded, None, fully, backend, device, threads, min_size,
                            min_physical_size, 0, False, np.prod(itk_spacing), False, False)
    global_labels = inp.empty(_label._label_dtype(None, count, inp.library))
    analysis.write_labels(global_labels, 0, 0)
    d = len(per)
    basic = ["num_pixels", "area", "bbox", "centroid"] if return_table else []
    columns = _table.write_basic(analysis, inp, ["image"] + basic, count, start, itk_spacing, origin, direction,
                                 stride)
    image_of = columns["image"][0]
    per_image = _bincount(image_of, n, inp)
    first = _cumsum_exclusive(per_image, inp)
    labels = global_labels.reshape((n, stride) + tuple(per[1:]))[:, : per[0]]
    out_dtype = _label._label_dtype(dtype, count if running_labels else (int(per_image.max()) if n else 0), inp.library)
    if running_labels:
        labels = labels.astype(out_dtype) if hasattr(labels, "astype") else labels.to(labels.dtype)
    else:
        shape = (n,) + (1,) * d
        offsets = first.reshape(shape)
        if inp.library == "torch":
            offsets = offsets.to(labels.dtype)
            labels = (labels - offsets) * (labels > 0)
        else:
            offsets = offsets.astype(labels.dtype)
            labels = ((labels - offsets) * (labels > 0)).astype(out_dtype)
    labels = _contiguous(labels, inp)
    if not return_table:
        return labels
    table = _table.Table()
    table["image"] = image_of
    k = _arange(count, inp)
    table["label"] = k + 1 if running_labels else k + 1 - first[image_of]
    _table.add_columns(table, columns, basic, d)
    return labels, table


def _xp(inp):
    if inp.library == "cupy":
        import cupy

        return cupy
    return np


def _bincount(values, n, inp):
    if inp.library == "torch":
        import torch

        return torch.bincount(values, minlength=n)
    return _xp(inp).bincount(values, minlength=n) if len(values) else _xp(inp).zeros(n, dtype=np.int64)


def _cumsum_exclusive(counts, inp):
    if inp.library == "torch":
        import torch

        return torch.cumsum(counts, 0) - counts
    xp = _xp(inp)
    return (xp.cumsum(counts) - counts).astype(np.int64)


def _arange(count, inp):
    if inp.library == "torch":
        import torch

        return torch.arange(count, dtype=torch.int64, device="cpu" if inp.device < 0 else f"cuda:{inp.device}")
    return _xp(inp).arange(count, dtype=np.int64)


def _contiguous(array, inp):
    if inp.library == "torch":
        return array.contiguous()
    return _xp(inp).ascontiguousarray(array)
