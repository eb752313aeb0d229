"""cudacca.label_batch(): a stack of same-shape images, each labelled on its own, in one engine call.

The stack is handed to the engine as it lies in memory, one image after the other along the slowest axis, with
the images' extent along that axis (Request::batchExtent): no component joins one image to the next, each
component's box and centroid are taken within its image from integer sums made relative first
(BasicColumns::batchStride), so the labels and the table equal the per-image calls' exactly, and the engine
writes the labels numbered from 1 in each image (or over the batch). A batch of 1-D images is a 2-D image
whose rows are the images.
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
                return cupy.stack([_arrays.as_input(im).array for im in images])
        if first.library == "torch":
            import torch

            return torch.stack([_arrays.as_input(im).array for im in images])
        return np.stack([_arrays.as_input(im).array for im in images])
    return images


def label_batch(images, *, connectivity=None, background=0, min_size=0, min_physical_size=0.0, keep_largest=None,
                sort=False, spacing=None, return_table=False, running_labels=False, dtype=None, backend="auto",
                device=0, threads=0):
    """Labels each image of a stack on its own, in one call: `images` is an array of N images (a 3-D array of
    N 2-D images, a 4-D array of N 3-D patches; numpy, CuPy or PyTorch) or a list of same-shape arrays.

    Returns labels of shape (N, ...) (each image numbered 1, 2, ... or, with running_labels, one numbering over
    the batch) and, with return_table, one Table of the basic columns (label, num_pixels, area, bbox, centroid,
    each image's own) with an `image` column, in the order of the labels. Options as label(); keep_largest and
    sort act on each image on its own (its N largest, numbered by decreasing size), as a loop of label() calls.
    """
    if keep_largest is True:
        keep_largest = 1
    keep = int(keep_largest or 0)
    if keep < 0 or int(min_size) < 0 or float(min_physical_size) < 0:
        raise ValueError("min_size, min_physical_size and keep_largest must not be negative")
    stacked = _stack(images)
    whole = _arrays.as_input(stacked, "images", max_dims=4)
    if whole.ndim < 2 or whole.ndim > 4:
        raise ValueError(f"images: a stack of 1-D, 2-D or 3-D images (2 to 4 dimensions), not {whole.ndim}-D")
    n = whole.shape[0]
    per = tuple(whole.shape[1:])
    d = len(per)
    neighbors = _label._connectivity(connectivity, d)
    if spacing is not None and len(np.atleast_1d(spacing)) != d:
        raise ValueError(f"spacing: {d} values expected (one image's axes)")
    # The engine's image: the stack as it lies, the images along its slowest axis (1-D images: its rows).
    if d == 1:
        shape, extent = (n, per[0]), 1
    else:
        shape, extent = (n * per[0],) + per[1:], per[0]
    objects = _arrays.foreground(whole, background).reshape(shape)
    inp = _arrays.Input(objects, whole.library, whole.device, whole.stream)
    _, itk_spacing, origin, direction = _label._geometry(inp, _engine_spacing(spacing, d))
    start = [0] * len(shape)
    analysis = _label._analysis()
    count = _label._analyze(analysis, inp.stream, objects, None, neighbors, backend, device, threads, min_size,
                            min_physical_size, keep, sort, np.prod(itk_spacing), False, False, extent)
    basic = ["num_pixels", "area", "bbox", "centroid"] if return_table else []
    columns = _table.write_basic(analysis, inp, ["image"] + basic, count, start, itk_spacing, origin, direction,
                                 extent)
    if d == 1:  # the rows' axis is the image's index, not an axis of the images
        for name, rows in (("bbox", [1, 3]), ("centroid", [1])):
            if name in columns:
                columns[name] = columns[name][rows]
    image_of = columns["image"][0]
    per_image = _bincount(image_of, n, inp)
    first = _cumsum_exclusive(per_image, inp)
    most = count if running_labels else (int(per_image.max()) if n and count else 0)
    label_dtype = _arrays.label_dtype(dtype, most, inp.library)
    labels = inp.empty(label_dtype, shape)
    if inp.device >= 0 and not running_labels and _fits(dtype, count, inp, label_dtype) and _subtracts(labels, inp):
        # On the GPU: the engine numbers over the batch and one pass here restarts each image's numbers, which
        # costs less than the engine's per-image table (its components' images to the host and the table back).
        analysis.write_labels(labels, 0, 0, False)
        _restart_on_device(labels, first, int(np.prod(per)), inp)
    else:
        analysis.write_labels(labels, 0, 0, not running_labels)
    labels = labels.reshape((n,) + per)
    if not return_table:
        return labels
    table = _table.Table()
    table["image"] = image_of
    k = _arange(count, inp)
    table["label"] = k + 1 if running_labels else k + 1 - first[image_of]
    _table.add_columns(table, columns, basic, d)
    return labels, table


def _fits(dtype, count, inp, label_dtype):
    """Whether the batch-wide numbers (up to `count`) fit the per-image labels' dtype."""
    try:
        return _arrays.label_dtype(dtype, count, inp.library) == label_dtype
    except OverflowError:
        return False


def _subtracts(labels, inp):
    """Whether the labels' library does arithmetic on their dtype (PyTorch has little for uint16/32/64)."""
    if inp.library != "torch":
        return True
    import torch

    return labels.dtype in (torch.int16, torch.int32, torch.int64)


_RESTART_KERNEL = None


def _restart_on_device(labels, first, pixels_per_image, inp):
    """labels (numbered over the batch, image by image) minus the count of components of the images before, in
    place, background staying 0: one pass over the labels on their GPU."""
    if inp.library == "torch":
        view = labels.view(first.shape[0], -1)
        view -= (view > 0) * first.view(-1, 1).to(view.dtype)
        return
    import cupy

    global _RESTART_KERNEL
    if _RESTART_KERNEL is None:
        _RESTART_KERNEL = cupy.ElementwiseKernel("raw int64 first, int64 per", "T y",
                                                 "if (y != 0) y = y - (T)first[i / per];", "cudacca_restart_labels")
    with cupy.cuda.Device(inp.device):
        _RESTART_KERNEL(first, pixels_per_image, labels.reshape(-1))


def _engine_spacing(spacing, d):
    """The spacing in the engine image's axis order (a batch of 1-D images: its rows 1 apart)."""
    if spacing is None or d != 1:
        return spacing
    return [1.0, float(np.atleast_1d(spacing)[0])]


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
