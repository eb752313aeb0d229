"""What the napari widget's run does, without Qt or napari: the foreground from a layer's data and the widget's
choices, labels and the objects' table in physical units, frame by frame for stacks. Kept apart from the widget so
that it runs, is tested and is timed where napari is not installed (the GPU machine's benchmark)."""

from __future__ import annotations

import dataclasses
import time

import numpy as np

import cudacca
from .._dask import is_dask_array

#: The connectivities offered, by image dimension: (the widget's text, label()'s value).
CONNECTIVITIES = {
    2: (("face (4)", "face"), ("full (8)", "full")),
    3: (("face (6)", "face"), ("faces and edges (18)", 2), ("full (26)", "full")),
}


@dataclasses.dataclass
class Settings:
    """The widget's choices. `lower`/`upper` (inclusive) make an Image layer's foreground; a Labels layer's is its
    non-zero pixels, or with `multilabel` each value a class. `min_size` is in pixels, or in the layer's physical
    units (the product of its `scale`) with `physical`. `keep_largest` 0 keeps all (per class with multilabel).
    `spatial_dims` is 2 or 3: axes before them are frames (a time series or a stack), labelled one (`frame`, its
    index along the leading axes) or all (`frame` None)."""

    lower: float | None = None
    upper: float | None = None
    multilabel: bool = False
    connectivity: object = "face"
    min_size: float = 0.0
    physical: bool = False
    keep_largest: int = 0
    sort: bool = False
    spatial_dims: int = 2
    frame: tuple | None = None
    backend: str = "auto"


@dataclasses.dataclass
class Result:
    """`labels`: the label image, of the layer's shape (all frames) or of one frame with a leading axis of length 1
    per frame axis (`frame`); `table`: a pandas DataFrame, one row per object, with `index` (the label, as napari's
    Labels features want it) and, for stacks, `frame`; `backend`: what labelled it (last_backend())."""

    labels: object
    table: object
    backend: str
    seconds: float
    frame: tuple | None = None
    spatial_dims: int = 2


def _as_array(data):
    """A layer's data as an array label() takes: numpy, Dask (Zarr arrays become Dask arrays, labelled chunk by
    chunk without loading the volume), or CuPy."""
    if type(data).__module__.split(".")[0] == "zarr":
        import dask.array as da

        return da.from_zarr(data)
    return data


def foreground(data, settings, is_labels):
    """The image label() is given: an Image layer's pixels within [lower, upper] (either bound may be None: no bound)
    as a boolean array (lazy for Dask), a Labels layer's data as it is. One comparison pass where there is one bound
    (or the upper one cannot exclude a value of the dtype), two otherwise, the second in place: on a 512³ float32
    volume the threshold is as long as the GPU's labeling, so no pass is spent on a conversion."""
    if is_labels:
        return data
    lower, upper = settings.lower, settings.upper
    if lower is not None and upper is not None and lower > upper:
        raise ValueError(f"the threshold's lower bound {lower:g} is above its upper bound {upper:g}")
    dtype = np.dtype(data.dtype)
    if upper is not None and (upper == np.inf or (dtype.kind in "iu" and upper >= np.iinfo(dtype).max)):
        upper = None
    if lower is not None and dtype.kind in "iu" and lower <= np.iinfo(dtype).min:
        lower = None
    if lower is None and upper is None:
        return data == data if dtype.kind == "f" else np.ones_like(data, dtype=bool)  # NaN is not within any bound
    if lower is None:
        return data <= upper
    within = data >= lower
    if upper is None:
        return within
    if isinstance(within, np.ndarray):
        return np.logical_and(within, data <= upper, out=within)
    return within & (data <= upper)


def check(data, settings, is_labels, mask=None, intensity=None):
    """Raises ValueError with a sentence for what a run cannot do with these layers and choices."""
    shape = tuple(data.shape)
    d = settings.spatial_dims
    if getattr(data, "ndim", 0) == 0 or len(shape) < d:
        raise ValueError(f"the layer has {len(shape)} dimensions; a {d}-D image needs at least {d}")
    if d not in (2, 3):
        raise ValueError("the image dimension must be 2 or 3")
    dtype = np.dtype(data.dtype)
    if dtype.kind not in "biuf":
        raise ValueError(f"the layer's pixels are {dtype}: an RGB or complex layer cannot be labelled; choose a "
                         "single-channel layer")
    if settings.multilabel and (not is_labels or dtype.kind not in "biu"):
        raise ValueError("each value a class needs a Labels layer of integers")
    for name, other in (("mask", mask), ("intensity", intensity)):
        if other is not None and tuple(other.shape) != shape:
            raise ValueError(f"the {name} layer's shape {tuple(other.shape)} is not the input's {shape}")
    if is_dask_array(_as_array(data)) and (mask is not None or intensity is not None):
        raise ValueError("a Dask or Zarr layer is labelled chunk by chunk, without a mask or intensity layer")
    if not is_labels and settings.lower is not None and settings.upper is not None and settings.lower > settings.upper:
        raise ValueError(f"the threshold's lower bound {settings.lower:g} is above its upper bound {settings.upper:g}")
    if settings.keep_largest < 0 or settings.min_size < 0:
        raise ValueError("the minimum size and the number of objects kept must not be negative")


def _options(settings, spacing):
    """What label() and label_batch() take alike from the settings."""
    size = {"min_physical_size": float(settings.min_size)} if settings.physical else \
        {"min_size": int(round(settings.min_size))}
    return dict(connectivity=settings.connectivity, sort=settings.sort, keep_largest=int(settings.keep_largest) or None,
                spacing=spacing, return_table=True, backend=settings.backend, **size)


def _frame_result(image, settings, spacing, mask, intensity):
    kwargs = _options(settings, spacing)
    kwargs.update(multilabel=settings.multilabel, per_class=settings.multilabel and kwargs["keep_largest"] is not None)
    if mask is not None:
        kwargs["mask"] = mask
    if intensity is not None:
        kwargs["intensity"] = intensity
        kwargs["properties"] = ["basic", "intensity_mean", "intensity_min", "intensity_max", "intensity_stddev"]
    labels, table = cudacca.label(image, **kwargs)
    return labels, table.to_pandas()


def _with_index(table):
    table.insert(0, "index", table["label"].to_numpy())
    return table


#: Frames go to label_batch in groups of about this many pixels: a call each, after which the progress is said and
#: a cancel is heeded.
BATCH_PIXELS = 1 << 24


def _continue_numbering(labels, table, offset):
    """A frame's (or a group's) labels and table["label"] after the `offset` labels of the frames before, background
    staying 0: one numbering over a stack, so that each object of each frame is its own label (napari looks features
    up by label). Returns the labels and the next offset."""
    if not len(table):
        return labels, offset
    dtype = labels.dtype if offset + len(table) < np.iinfo(labels.dtype).max else np.dtype(np.uint64)
    if isinstance(labels, np.ndarray):
        labels = labels.astype(dtype, copy=False)
        labels[labels != 0] += dtype.type(offset)
    else:  # lazy (Dask)
        labels = np.where(labels != 0, labels.astype(dtype) + dtype.type(offset), dtype.type(0))
    table["label"] = table["label"].astype(np.int64) + offset
    return labels, int(table["label"].max())


def _stack(pieces, leading, frame_shape):
    """The frames' (or groups of frames') labels as one array of shape leading + frame_shape, in one dtype."""
    flat = [p.reshape((-1,) + frame_shape) for p in pieces]
    if is_dask_array(flat[0]):
        import dask.array as da

        return da.concatenate(flat).reshape(tuple(leading) + frame_shape)
    dtype = np.result_type(*[p.dtype for p in flat])
    return np.concatenate([p.astype(dtype, copy=False) for p in flat]).reshape(tuple(leading) + frame_shape)


def _add_frame_columns(table, index_of_rows, leading):
    """The frame columns first: `frame` for one leading axis, `frame-0`, `frame-1`, ... for more."""
    indices = np.unravel_index(np.asarray(index_of_rows, np.int64), leading)
    for axis, values in enumerate(indices):
        table.insert(axis, "frame" if len(leading) == 1 else f"frame-{axis}", values)


def _every_frame_in_batches(data, settings, is_labels, spacing, leading):
    """Every frame of a stack (no mask, intensity or classes) through label_batch, a group of frames per call, with
    one numbering over the stack: yields the progress, returns the labels and the table."""
    import pandas

    d = settings.spatial_dims
    frame_shape = tuple(data.shape[-d:])
    count = int(np.prod(leading))
    stack = data.reshape((count,) + frame_shape)
    per_call = max(1, BATCH_PIXELS // max(1, int(np.prod(frame_shape))))
    pieces, tables, offset = [], [], 0
    for first in range(0, count, per_call):
        labels, table = cudacca.label_batch(foreground(stack[first:first + per_call], settings, is_labels),
                                            running_labels=True, **_options(settings, spacing))
        table = table.to_pandas()
        labels, offset = _continue_numbering(labels, table, offset)
        _add_frame_columns(table, first + table.pop("image").to_numpy(), leading)
        pieces.append(labels)
        tables.append(table)
        yield min(count, first + per_call), count
    table = _with_index(pandas.concat(tables, ignore_index=True))
    return _stack(pieces, leading, frame_shape), table


def run(data, settings, **options):
    """iter_run() to its end: the Result."""
    steps = iter_run(data, settings, **options)
    while True:
        try:
            next(steps)
        except StopIteration as end:
            return end.value


def iter_run(data, settings, *, is_labels=False, scale=None, mask=None, intensity=None):
    """Labels and measures a layer's data with the widget's `settings` (check() first), as a generator: it yields
    (frames done, frames in all) after each frame and returns the Result, so that a napari worker shows the progress
    and can stop it between frames. `scale`: the layer's scale (one value per axis); its spatial part is the
    spacing, so that areas, volumes and centroids are physical."""
    start = time.perf_counter()
    check(data, settings, is_labels, mask, intensity)
    data = _as_array(data)
    d = settings.spatial_dims
    leading = tuple(data.shape[:-d])
    scale = np.ones(len(data.shape)) if scale is None else np.asarray(scale, np.float64)
    spacing = tuple(float(s) for s in scale[-d:])

    def pick(array, index):
        return None if array is None else _as_array(array)[index]

    def result(labels, table, frame=None):
        return Result(labels, table, cudacca.last_backend()[1], time.perf_counter() - start, frame, d)

    if not leading:
        labels, table = _frame_result(foreground(data, settings, is_labels), settings, spacing, mask, intensity)
        yield 1, 1
        return result(labels, _with_index(table))

    if settings.frame is None and mask is None and intensity is None and not settings.multilabel \
            and not is_dask_array(data):
        return result(*(yield from _every_frame_in_batches(data, settings, is_labels, spacing, leading)))
    frames = [settings.frame] if settings.frame is not None else list(np.ndindex(*leading))
    pieces, tables, offset = [], [], 0
    for done, index in enumerate(frames):
        index = tuple(int(i) for i in index)
        labels, table = _frame_result(foreground(data[index], settings, is_labels), settings, spacing,
                                      pick(mask, index), pick(intensity, index))
        if settings.frame is None:
            labels, offset = _continue_numbering(labels, table, offset)
        _add_frame_columns(table, np.full(len(table), np.ravel_multi_index(index, leading)), leading)
        pieces.append(labels)
        tables.append(table)
        yield done + 1, len(frames)
    import pandas

    table = _with_index(pandas.concat(tables, ignore_index=True))
    if settings.frame is not None:
        labels = pieces[0].reshape((1,) * len(leading) + pieces[0].shape)
        return result(labels, table, tuple(frames[0]))
    return result(_stack(pieces, leading, tuple(data.shape[-d:])), table)
