"""cudacca.contacts() and region_graph(): which labels of a label image touch, and how much (cc3d's contacts and
region_graph), on the GPU with the CUDA engine."""

from __future__ import annotations

import numpy as np

from . import _arrays, _dask, _label, _table


def _pairs(labels, connectivity, backend, device, threads):
    if backend not in ("auto", "cuda", "cpu"):
        raise ValueError("backend: 'auto', 'cuda' or 'cpu'")
    if _dask.is_dask_array(labels):
        raise ValueError("labels: not for Dask arrays (compute() them, or label them with cudacca.label first)")
    inp = _arrays.as_input(labels, "labels")
    if inp.device >= 0 and backend == "cpu":
        raise ValueError("backend='cpu' with labels on the GPU: copy them to the host first, or use 'auto'/'cuda'")
    dtype = _arrays.numpy_dtype(inp.array)
    if dtype.kind not in "iub":
        raise TypeError(f"labels: an integer array, not {dtype}")
    neighbors = _label._connectivity(connectivity, inp.ndim)
    rows = _label._analysis().contacts(inp.array, neighbors, backend, int(device), int(threads), int(inp.stream))
    return inp, dtype, rows


def _label_columns(inp, dtype, rows):
    table = _table.Table()
    for name, row in (("label_1", rows[0]), ("label_2", rows[1])):
        column = np.ascontiguousarray(row)
        table[name] = inp.from_host(column if inp.library == "torch" else column.astype(dtype))
    return table


def contacts(labels, *, connectivity=None, spacing=None, backend="auto", device=0, threads=0):
    """The pairs of touching labels of a label image and how much they touch (cc3d.contacts and region_graph).

    labels: a 1-D, 2-D or 3-D integer array (numpy, CuPy, PyTorch, an itk.Image, or what numpy.asarray takes): 0 is
        background, no label negative. CuPy and PyTorch CUDA arrays are read where they are, on the caller's stream,
        by the CUDA engine.
    connectivity: which neighbors touch, as for label() (default: face neighbors; cc3d's contacts defaults to 26).
    spacing: pixel spacing in the array's axis order (cc3d's anisotropy; an itk.Image brings its own).
    backend, device, threads: as for label() ("auto": the CPU engine for small images, else the GPU; labels of 2^30
        or more go to the CPU engine, said once).

    Returns a Table, one row per pair label_1 < label_2 in increasing order, with the columns label_1 and label_2
    (the labels' dtype; int64 for PyTorch), num_contacts (the neighbor pairs at the connectivity between them:
    cc3d's surface_area=False) and contact_area (the shared faces' physical area: each face neighbor pair adds the
    product of the spacing along the other axes, edge and corner neighbors nothing: cc3d's surface_area=True with
    anisotropy), arrays of the labels' library on their device.
    """
    inp, dtype, rows = _pairs(labels, connectivity, backend, device, threads)
    _, itk_spacing, _, _ = _label._geometry(inp, spacing)
    ndim = inp.ndim
    area = np.zeros(len(rows[0]), np.float64)
    for d in range(ndim):  # ITK's axis d: the face's area is the product of the other axes' spacing
        other = float(np.prod([itk_spacing[e] for e in range(ndim) if e != d]))
        area += rows[3 + d].astype(np.float64) * other
    table = _label_columns(inp, dtype, rows)
    count = np.ascontiguousarray(rows[2])
    table["num_contacts"] = inp.from_host(count)
    table["contact_area"] = inp.from_host(area)
    return table


def region_graph(labels, *, connectivity=None, backend="auto", device=0, threads=0):
    """The pairs of touching labels of a label image (cc3d.region_graph): a Table with label_1 < label_2 per row,
    in increasing order. Options as contacts()."""
    inp, dtype, rows = _pairs(labels, connectivity, backend, device, threads)
    return _label_columns(inp, dtype, rows)
