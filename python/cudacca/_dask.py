"""cudacca.label() on a Dask array: each chunk labelled on its own, the chunks' faces joined, one numbering.

The result is the in-memory result: ITK's labels (raster order of each component's first pixel) and the same
table, without ever gathering the volume. Three steps:

1. Per chunk (a Dask task each, wherever the scheduler runs it): label() on the chunk, then what the merge needs,
   all of it small: each component's first pixel, its pixel count, index sums and bounding box, and the labels of
   the chunk's first and last slice along every axis.
2. Per chunk boundary (a Dask task each, fed the faces where they are): the two facing planes (the last slice of
   the chunks before it, the first slice of those after it, across the whole array) give the pairs of labels that
   touch (with full connectivity also diagonally, shifted by one in the other axes, which also covers chunks that
   meet only at an edge or a corner), each pair once. Only the pairs reach the caller, never the faces.
   On the caller: the chunks' labels made distinct (an offset per chunk); the connected components of the pairs
   are the image's components. They are numbered by their first pixel (the smallest of their pieces'), the table
   is summed from the pieces, and the post-processing (minimum size, the N largest, sorting) is decided there.
3. The labels: a lazy Dask array whose chunks label their pixels again and map them through their chunk's table
   (labelling twice costs less than keeping every chunk's labels until the merge is known).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np


def is_dask_array(obj):
    return type(obj).__module__.split(".")[0] == "dask" and hasattr(obj, "chunks") and hasattr(obj, "to_delayed")


def _is_cupy(array):
    return type(array).__module__.split(".")[0] == "cupy"


def _host(array):
    """A small per-chunk result on the host (CuPy chunks: their table columns and faces)."""
    return array.get() if _is_cupy(array) else np.asarray(array)


def _label_chunk(label_in_memory, chunk, connectivity, background, backend, device, threads, multilabel=False):
    """label() of one chunk: a CuPy chunk on its GPU, where it is; anything else as a numpy array."""
    return label_in_memory(chunk if _is_cupy(chunk) else np.asarray(chunk), connectivity=connectivity,
                           background=background, return_table=True, backend=backend, device=device, threads=threads,
                           multilabel=multilabel)


# The chunk's labels appear in raster order (1 first, then 2, ...): label j's first pixel is where the running
# maximum of the labels first reaches j. Both finders below use that; neither sorts, nor sends a large component's
# pixels all to one address (a scatter-min over every pixel did: 0.4 s per 64 M-pixel chunk on an H100).
_SEGMENT = 256  # pixels per GPU thread


def _first_pixels(flat, k, block=1 << 20):
    """Each label's first flat index on the host, block by block (cache-sized, no whole-chunk temporaries); a block
    without a new label costs one max."""
    first = np.empty(k, np.int64)
    top = 0
    for start in range(0, flat.size, block):
        part = flat[start:start + block]
        high = int(part.max()) if part.size else 0
        if high <= top:
            continue
        running = np.maximum.accumulate(part)
        first[top:high] = start + np.searchsorted(running, np.arange(top + 1, high + 1), side="left")
        top = high
    return first


@functools.lru_cache(maxsize=None)
def _first_pixel_kernel(ctype):
    """A thread walks _SEGMENT pixels keeping their running maximum; where it steps up it may be the label's first
    pixel (every true first pixel is such a step), and an atomic minimum keeps the smallest: one atomic per step,
    at most a few per thread, not one per pixel."""
    import cupy

    return cupy.RawKernel(r"""
extern "C" __global__ void first_pixel(const %(t)s* labels, long long n, unsigned long long* first) {
  long long begin = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * %(seg)d;
  if (begin >= n) return;
  long long end = begin + %(seg)d < n ? begin + %(seg)d : n;
  %(t)s top = 0;
  for (long long i = begin; i < end; ++i) {
    %(t)s v = labels[i];
    if (v > top) { top = v; atomicMin(first + (v - 1), (unsigned long long)i); }
  }
}""" % {"t": ctype, "seg": _SEGMENT}, "first_pixel")


def _first_pixels_gpu(labels, k):
    """Each label's first flat index, found on the chunk's GPU."""
    import cupy

    ctype = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}[labels.dtype.itemsize]
    with labels.device:  # the chunk's GPU, not the current one
        flat = cupy.ascontiguousarray(labels).ravel()
        first = cupy.full(k, flat.size, cupy.uint64)
        threads = -(-flat.size // _SEGMENT)
        if k and threads:
            _first_pixel_kernel(ctype)(((threads + 255) // 256,), (256,), (flat, cupy.int64(flat.size), first))
        return first.get().astype(np.int64)


def _chunk_summary(label_in_memory, chunk, start, connectivity, background, backend, device, threads,
                   multilabel=False):
    """Step 1 for one chunk at `start` (its first index per axis): count, first pixels (global raster index),
    pixel counts, global index sums and bounding boxes (array axis order), its labels on its faces, and with
    multi-label input each component's class."""
    labels, table = _label_chunk(label_in_memory, chunk, connectivity, background, backend, device, threads, multilabel)
    table = {name: _host(column) for name, column in table.items()}  # K rows: small next to the chunk
    k = len(table["label"])
    d = labels.ndim
    first = _first_pixels_gpu(labels, k) if _is_cupy(labels) else _first_pixels(labels.ravel(), k)
    local = np.unravel_index(first, labels.shape)
    n = np.asarray(table["num_pixels"], dtype=np.uint64)
    summary = {
        "count": k,
        "first": tuple(np.asarray(local[a], dtype=np.int64) + start[a] for a in range(d)),
        "num_pixels": n,
        # Index sums from the chunk's centroids (spacing 1, so the centroid is the mean index), rounded back to
        # the integers they are (exact below 2^52).
        "index_sum": [np.rint(np.asarray(table[f"centroid-{a}"], dtype=np.float64) * n.astype(np.float64))
                      + float(start[a]) * n.astype(np.float64) for a in range(d)],
        "bbox_min": [np.asarray(table[f"bbox-{a}"], dtype=np.int64) + start[a] for a in range(d)],
        "bbox_max": [np.asarray(table[f"bbox-{a + d}"], dtype=np.int64) + start[a] for a in range(d)],
        # In the labels' own type (uint32): they go to the boundary tasks only.
        "faces": [(_host(labels.take(0, axis=a)), _host(labels.take(-1, axis=a))) for a in range(d)],
        # Multi-label input: pieces of different classes that touch across a boundary stay apart.
        "class": np.asarray(table["class"]).astype(np.int64) if multilabel else np.zeros(k, np.int64),
    }
    return summary


def _relabel_chunk(label_in_memory, chunk, connectivity, background, backend, device, threads, table,
                   multilabel=False):
    """Step 3 for one chunk: its labels again, through its chunk's table (final label, or with class_values the
    class, per chunk label)."""
    labels, _ = _label_chunk(label_in_memory, chunk, connectivity, background, backend, device, threads, multilabel)
    if _is_cupy(labels):
        import cupy

        with labels.device:
            return cupy.asarray(table)[labels]  # on the chunk's GPU, as it came
    return table[labels]


def _face_plane(faces, shape):
    """One plane across the whole array from its chunks' faces (`faces`: (chunk number, face) in the order of
    the chunk grid `shape` of the other axes), each label coded as chunk number * 2^32 + label (0: background)."""
    blocks = np.empty(shape, dtype=object)
    for rest, (number, face) in zip(np.ndindex(*shape), faces):
        face = np.asarray(face)
        blocks[rest] = np.where(face > 0, face.astype(np.int64) + (np.int64(number) << 32), 0)
    return np.block(blocks.tolist()) if blocks.ndim > 0 else blocks[()]


def _boundary_pairs(before_faces, after_faces, shape, connectivity):
    """The coded label pairs that touch across one chunk boundary, each once (a Dask task: the faces stay on the
    workers, only the pairs reach the caller)."""
    return _unique_pairs(_touching_pairs(_face_plane(before_faces, shape), _face_plane(after_faces, shape),
                                         connectivity))


def _unique_pairs(pairs):
    """np.unique(pairs, axis=1) (the same pairs in the same order), ten times faster: each row ranked by a 1-D
    unique, the pair of ranks as one int64 sorted once (axis=1 sorts a structured view, 0.2 s per million pixels of
    face; with full connectivity 2 s per 1024² boundary)."""
    if pairs.shape[1] == 0:
        return pairs
    a_values, a_rank = np.unique(pairs[0], return_inverse=True)
    b_values, b_rank = np.unique(pairs[1], return_inverse=True)
    width = np.int64(len(b_values))
    key = np.unique(a_rank.astype(np.int64).ravel() * width + b_rank.astype(np.int64).ravel())
    return np.stack([a_values[key // width], b_values[key % width]])


def _without_faces(summary):
    return {k: v for k, v in summary.items() if k != "faces"}


def _touching_pairs(before, after, connectivity):
    """Pairs of (global) labels that touch across a boundary: `before` is the plane just before it, `after` the
    plane just after it, both over the whole array: the library's rule for the slabs' faces, in C++."""
    from . import _core

    return _core.touching_pairs(np.ascontiguousarray(before, np.int64), np.ascontiguousarray(after, np.int64),
                                int(connectivity))


def label(image, *, connectivity, background, min_size, min_physical_size, keep, sort, spacing, return_table, dtype,
          backend, device, threads, multilabel=False, per_class=False, class_values=False, label_in_memory):
    """cudacca.label() for a Dask array (see _label.label for the arguments). `label_in_memory` is cudacca.label
    itself, which labels each chunk (passed in, so that this module imports nothing of _label.py)."""
    import dask
    import dask.array as da
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from . import _arrays, _table

    # Dask runs the chunks' tasks side by side already (a thread or a worker each): each CPU analysis on one thread
    # unless asked otherwise, not one thread per core in every task at once.
    threads = int(threads) or 1
    d = image.ndim
    if d not in (1, 2, 3):
        raise ValueError(f"image: {d}-D; cudacca labels 1-D, 2-D and 3-D arrays")
    if any(np.isnan(c).any() for c in map(np.asarray, image.chunks)):
        raise ValueError("image: a Dask array of unknown chunk sizes; call compute_chunk_sizes() on it first")
    spacing_array = [1.0] * d if spacing is None else [float(v) for v in np.atleast_1d(spacing)]
    if len(spacing_array) != d or not all(np.isfinite(v) and v > 0 for v in spacing_array):
        raise ValueError(f"spacing: {d} positive finite values expected (array axis order), got {spacing!r}")
    _arrays.label_dtype(dtype, 0, "numpy")  # a dtype that cannot hold labels is refused before any work
    if multilabel and np.dtype(image.dtype).kind not in "iub":
        raise ValueError(f"multilabel: the classes must be integers, not {image.dtype}")
    if image.size == 0:
        return label_in_memory(np.asarray(image), connectivity=connectivity, return_table=return_table,
                            multilabel=multilabel)
    if any(0 in c for c in image.chunks):  # empty chunks would separate the layers around them
        image = image.rechunk(tuple(tuple(s for s in c if s) for c in image.chunks))
    starts = [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64) for c in image.chunks]
    grid = image.to_delayed()
    locations = list(itertools.product(*(range(len(c)) for c in image.chunks)))
    full = {loc: dask.delayed(_chunk_summary)(label_in_memory, grid[loc],
                                              tuple(int(starts[a][loc[a]]) for a in range(d)), connectivity, background,
                                              backend, device, threads, multilabel)
            for loc in locations}
    number = {loc: i for i, loc in enumerate(locations)}

    def layer_faces(axis, index, side):
        """(chunk number, face) of every chunk of layer `index` along `axis`, in grid order of the other axes;
        the faces themselves stay where their chunks were summarized."""
        others = [len(image.chunks[a]) for a in range(d) if a != axis]
        faces = []
        for rest in np.ndindex(*others):
            loc = list(rest)
            loc.insert(axis, index)
            loc = tuple(loc)
            faces.append((number[loc], full[loc]["faces"][axis][side]))
        return faces, tuple(others)

    boundaries = []
    for axis in range(d):
        for index in range(len(image.chunks[axis]) - 1):
            before, shape = layer_faces(axis, index, 1)
            after, _ = layer_faces(axis, index + 1, 0)
            boundaries.append(dask.delayed(_boundary_pairs)(before, after, shape, connectivity))
    small = [dask.delayed(_without_faces)(full[loc]) for loc in locations]
    small, boundaries = dask.compute(small, boundaries)
    summaries = dict(zip(locations, small))

    # Distinct labels per chunk: chunk c's label j (1..k) is offset[c] + j; 0 stays background.
    offsets, total = {}, 0
    for loc in locations:
        offsets[loc] = total
        total += summaries[loc]["count"]
    chunk_offset = np.array([offsets[loc] for loc in locations], np.int64)
    coded = np.concatenate([np.zeros((2, 0), np.int64)] + list(boundaries), axis=1)
    pairs = chunk_offset[coded >> 32] + (coded & 0xFFFFFFFF) - 1  # 0-based nodes
    piece_class = np.concatenate([np.zeros(0, np.int64)] + [summaries[loc]["class"] for loc in locations])
    if multilabel:
        pairs = pairs[:, piece_class[pairs[0]] == piece_class[pairs[1]]]  # touching and of one value
    graph = coo_matrix((np.ones(pairs.shape[1], bool), (pairs[0], pairs[1])), shape=(total, total))
    _, component = connected_components(graph, directed=False) if total else (0, np.zeros(0, np.int64))

    # Per piece (chunk label), in the global order of the offsets.
    def gather(key, a=None):
        parts = [summaries[loc][key] if a is None else summaries[loc][key][a] for loc in locations]
        return np.concatenate(parts) if parts else np.zeros(0)

    shape = image.shape
    first = np.ravel_multi_index(tuple(gather("first", a) for a in range(d)), shape) if total else np.zeros(0, np.int64)
    count = int(component.max()) + 1 if total else 0
    first_of = np.full(count, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first_of, component, first)
    order = np.argsort(first_of, kind="stable")  # ITK's numbering: raster order of each component's first pixel
    rank = np.empty(count, np.int64)
    rank[order] = np.arange(count)
    node_rank = rank[component]  # each piece's component, numbered 0..count-1 as ITK would

    n = np.zeros(count, np.uint64)
    np.add.at(n, node_rank, gather("num_pixels").astype(np.uint64))
    class_of = np.zeros(count, np.int64)
    class_of[node_rank] = piece_class  # every piece of a component holds its class
    index_sum = []
    box_min, box_max = [], []
    for a in range(d):
        s = np.zeros(count, np.float64)
        np.add.at(s, node_rank, gather("index_sum", a))
        index_sum.append(s)
        lo = np.full(count, np.iinfo(np.int64).max, np.int64)
        hi = np.zeros(count, np.int64)
        np.minimum.at(lo, node_rank, gather("bbox_min", a))
        np.maximum.at(hi, node_rank, gather("bbox_max", a))
        box_min.append(lo)
        box_max.append(hi)

    # Post-processing as the engines decide it: removal by size, then the N largest, then the numbering. The
    # pixel volume multiplied in ITK's axis order (x first), as label() and the engines do: bit for bit.
    pixel_volume = float(np.prod(spacing_array[::-1]))
    kept = (n >= np.uint64(min_size)) & (n.astype(np.float64) * pixel_volume >= min_physical_size)
    candidates = np.flatnonzero(kept)
    if keep:
        # The N largest (ties: raster order, the candidates' order), of the image or of each class.
        groups = [candidates[class_of[candidates] == c] for c in np.unique(class_of[candidates])] if per_class \
            else [candidates]
        largest = np.concatenate([np.zeros(0, np.int64)] + [g[np.argsort(-n[g].astype(np.int64), kind="stable")][:keep]
                                                            for g in groups])
        kept = np.zeros(count, bool)
        kept[largest] = True
        candidates = np.flatnonzero(kept)
    if sort:
        candidates = candidates[np.argsort(-n[candidates].astype(np.int64), kind="stable")]
    new_label = np.zeros(count, np.int64)  # 0: removed
    new_label[candidates] = np.arange(1, len(candidates) + 1)
    kept_count = len(candidates)

    if class_values:
        # The cleaned segmentation: each kept component's class, in the input's dtype unless asked otherwise.
        label_dtype = np.dtype(dtype) if dtype is not None else np.dtype(image.dtype)
        kept_classes = class_of[candidates]
        limits = np.iinfo(label_dtype) if label_dtype.kind in "iu" else None
        if kept_classes.size and (limits is None or kept_classes.min() < limits.min or kept_classes.max() > limits.max):
            raise ValueError(f"class_values: the classes {kept_classes.min()} .. {kept_classes.max()} do not fit "
                             f"the output pixel type {label_dtype}")
    else:
        label_dtype = _arrays.label_dtype(dtype, kept_count, "numpy")
    # The labels' chunk type is the input's: CuPy chunks give CuPy labels, each on its chunk's GPU.
    if _is_cupy(image._meta):
        import cupy

        meta = cupy.empty((0,) * d, dtype=label_dtype)
    else:
        meta = np.empty((0,) * d, dtype=label_dtype)
    tables = {}
    for loc in locations:
        k = summaries[loc]["count"]
        t = np.zeros(k + 1, label_dtype)
        pieces = node_rank[offsets[loc]:offsets[loc] + k]
        t[1:] = np.where(new_label[pieces] > 0, class_of[pieces], 0) if class_values else new_label[pieces]
        tables[loc] = t
    # Each chunk's task carries its own table only.
    blocks = np.empty(grid.shape, dtype=object)
    for loc in locations:
        task = dask.delayed(_relabel_chunk)(label_in_memory, grid[loc], connectivity, background, backend, device, threads,
                                            tables[loc], multilabel)
        blocks[loc] = da.from_delayed(task, shape=tuple(image.chunks[a][loc[a]] for a in range(d)), dtype=label_dtype,
                                      meta=meta)
    labels = da.block(blocks.tolist())
    if not return_table:
        return labels

    rows = candidates
    table = _table.Table()
    table["label"] = np.arange(1, kept_count + 1, dtype=np.uint64)
    table["num_pixels"] = n[rows]
    table["area"] = n[rows].astype(np.float64) * pixel_volume
    for a in range(d):
        table[f"bbox-{a}"] = box_min[a][rows]
    for a in range(d):
        table[f"bbox-{a + d}"] = box_max[a][rows]
    for a in range(d):
        table[f"centroid-{a}"] = index_sum[a][rows] / n[rows].astype(np.float64) * spacing_array[a]
    if multilabel:
        table["class"] = class_of[rows].astype(image.dtype)  # as label() gives it: the input's dtype
    return labels, table
