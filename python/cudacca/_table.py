"""The table of components: one row per label, one numpy array per column (regionprops_table's shape)."""

from __future__ import annotations

import functools

import numpy as np

from . import _arrays, _core

#: The attributes the engines measure, defined once in C++ (itkCudaConnectedComponentAnalysisAttributes.h), in column
#: order: (name, group, layout, integer, needs shape sums, needs perimeter, needs intensity, description).
ATTRIBUTES = tuple(_core.attributes())


def _names(*groups):
    return tuple(a[0] for a in ATTRIBUTES if a[1] in groups)


#: Columns of `properties="basic"` (the default): cheap, from the sums every analysis makes.
BASIC = ("label",) + _names("basic")

#: Everything else that needs no extra pass over the pixels: ITK's ShapeLabelObject attributes, and extent.
SHAPE = _names("shape")

#: On request only: they read every object's pixels again (ITK computes them only when asked, too).
ON_REQUEST = tuple(a[0] for a in ATTRIBUTES if a[1] == "on_request" and not a[6])

#: Multi-label input (label(multilabel=True)) only: each component's class, the input value of its pixels, in the
#: input's dtype; added to the table there whatever `properties` says.
CLASS = "class"

ALL = BASIC + SHAPE

#: With an intensity image (label(intensity=...)): ITK's StatisticsLabelObject attributes (scikit-image's names where
#: it has them), summed by the engine in the labeling pass. The first ones come by default, all with "all", the
#: pixel indices of the extremes only by name.
INTENSITY_DEFAULT = _names("intensity_default")
INTENSITY = INTENSITY_DEFAULT + _names("intensity")
INTENSITY_ON_REQUEST = tuple(a[0] for a in ATTRIBUTES if a[1] == "on_request" and a[6])

_PERIMETER = tuple(a[0] for a in ATTRIBUTES if a[5])
_SHAPE_SUMS = tuple(a[0] for a in ATTRIBUTES if a[4])
_PERIMETER_SET = frozenset(_PERIMETER)
_SHAPE_SUMS_SET = frozenset(_SHAPE_SUMS)

#: Columns of more than one value (one per axis, or a matrix): always split, name-0 ... (also for 1-D images).
_VECTOR = tuple(a[0] for a in ATTRIBUTES if a[2] != "scalar")
_MATRIX = tuple(a[0] for a in ATTRIBUTES if a[2] == "axis_matrix")

#: Integer columns: counts unsigned, indices (bbox, the extremes' pixel indices) signed, as numpy's.
_INTEGER_DTYPE = {a[0]: (np.uint64 if a[2] == "scalar" else np.int64) for a in ATTRIBUTES if a[3]}


def resolve_properties(properties, intensity=False):
    """The list of column groups asked for: "basic", "all", or names (groups such as "bbox" or split names
    such as "bbox-0"; "label" is always there). With an intensity image the intensity columns are known too, and
    come by default (INTENSITY_DEFAULT; "all": INTENSITY). Resolved once per distinct request: a small call's
    table costs microseconds."""
    try:
        key = properties if properties is None or isinstance(properties, str) else tuple(properties)
        hash(key)
    except TypeError:
        return _resolve_properties(properties, intensity)
    return list(_resolved(key, bool(intensity)))


@functools.lru_cache(maxsize=256)
def _resolved(properties, intensity):
    return tuple(_resolve_properties(properties, intensity))


def _resolve_properties(properties, intensity):
    known_names = BASIC + SHAPE + ON_REQUEST + (INTENSITY + INTENSITY_ON_REQUEST if intensity else ())
    if properties is None or properties == "basic":
        names = list(BASIC) + (list(INTENSITY_DEFAULT) if intensity else [])
    elif properties == "all":
        names = list(ALL) + (list(INTENSITY) if intensity else [])
    else:
        if isinstance(properties, str):
            properties = [properties]
        names = ["label"]
        for p in properties:
            group = p.split("-")[0] if "-" in p and p.split("-")[0] in known_names else p
            if group in ("all", "basic"):
                names.extend(ALL if group == "all" else BASIC)
                if intensity:
                    names.extend(INTENSITY if group == "all" else INTENSITY_DEFAULT)
                continue
            if (group in INTENSITY or group in INTENSITY_ON_REQUEST) and not intensity:
                raise ValueError(f"property {p!r} needs an intensity image (label(..., intensity=...))")
            if group not in known_names:
                known = ", ".join(known_names)
                raise ValueError(f"unknown property {p!r}; known: {known}")
            names.append(group)
    seen = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return seen


def needs_shape_sums(names):
    return not _SHAPE_SUMS_SET.isdisjoint(names)


def needs_perimeter(names):
    return not _PERIMETER_SET.isdisjoint(names)


class Table(dict):
    """Columns by name, each a 1-D array of one value per label (in label order), as
    skimage.measure.regionprops_table returns them; numpy for host images, CuPy or PyTorch on the image's
    device for those. Coordinates (bbox, centroid, oriented_bounding_box_origin, the components of
    principal_axes-m-c) are split in the array's axis order (0 is the first numpy axis: z in 3-D);
    principal_moments, equivalent_ellipsoid_diameter and oriented_bounding_box_size are per principal axis,
    ascending moments. `to_pandas()` makes a DataFrame (needs pandas)."""

    def to_pandas(self):
        """A pandas DataFrame (device columns are copied to the host)."""
        import pandas

        return pandas.DataFrame({k: _to_numpy(v) for k, v in self.items()})

    def __repr__(self):
        n = len(next(iter(self.values()))) if self else 0
        return f"<cudacca.Table: {n} rows, columns {', '.join(self.keys())}>"


_BASIC_COLUMNS = ("label", "num_pixels", "area", "bbox", "centroid", "image", CLASS)
_BASIC_DTYPE = {"area": np.float64, "centroid": np.float64, "bbox": np.int64, "image": np.int64, CLASS: np.int64}


def write_basic(analysis, inp, names, count, start, spacing, origin, direction, batch_stride=0):
    """The basic columns among `names` (the labels 1..K included; a batch's `image`), each a (components, count)
    block written by the engine straight from its per-sum arrays into an array where the image is (numpy, or CuPy /
    PyTorch on its GPU)."""
    ndim = inp.ndim
    # Components merged on the host (periodic boundaries) have host columns, moved where the image is after.
    on_host = inp.device >= 0 and not analysis.device_columns
    arrays = {}
    for name in names:
        if name in _BASIC_COLUMNS:
            components = 2 * ndim if name == "bbox" else ndim if name == "centroid" else 1
            dtype = _BASIC_DTYPE.get(name, np.uint64)
            shape = (components, count)
            arrays[name] = _arrays.host_empty(shape, dtype) if on_host else inp.empty_table(shape, dtype)
    if arrays and count > 0:
        analysis.write_basic_columns(arrays, list(start), list(spacing), list(origin),
                                     [float(v) for row in direction for v in row], batch_stride)
    if on_host:
        arrays = {name: inp.from_host(a) for name, a in arrays.items()}
    return arrays


def add_columns(table, arrays, names, ndim):
    """Adds the (components, count) blocks `arrays` to `table` as 1-D columns, in the order of `names`."""
    for name in names:
        a = arrays[name]
        for c, column in enumerate(_column_names(name, ndim, a.shape[0])):
            table[column] = a[c]
    return table


@functools.lru_cache(maxsize=1024)
def _column_names(name, ndim, components):
    """The 1-D column names of a (components, count) block: the name; name-c per component; name-m-c for a
    matrix (row m, component c)."""
    if name not in _VECTOR:
        return (name,)
    if name in _MATRIX:
        return tuple(f"{name}-{m}-{c}" for m in range(ndim) for c in range(ndim))
    return tuple(f"{name}-{c}" for c in range(components))


@functools.lru_cache(maxsize=None)
def _basic_rows(ndim):
    """The default table's columns as write_basic_table lays them out, one 64-bit row each: per name of BASIC, its
    (row, 1-D column name, dtype)s; and the number of rows."""
    rows = {"label": ((0, "label", np.dtype(np.uint64)),)}
    r = 1
    for name in BASIC[1:]:
        components = 2 * ndim if name == "bbox" else ndim if name == "centroid" else 1
        dtype = np.dtype(_BASIC_DTYPE.get(name, np.uint64))
        rows[name] = tuple((r + c, column, dtype) for c, column in enumerate(_column_names(name, ndim, components)))
        r += components
    return rows, r


@functools.lru_cache(maxsize=256)
def _basic_layout(ndim, names):
    """The columns of `names` in a basic table block: the block's row count, and per 1-D column in the table's order
    (column name, row, index of its dtype in (uint64, int64, float64))."""
    rows, row_count = _basic_rows(ndim)
    kinds = (np.dtype(np.uint64), _INT64, _FLOAT64)
    return row_count, tuple((column, r, kinds.index(dtype)) for name in names for r, column, dtype in rows[name])


def basic_names(properties):
    """The columns `properties` asks for where they are default ones only (None, "basic", or a list or tuple of
    names among them), as a tuple, else None (an iterator is left unread, for the general path)."""
    if properties is None or isinstance(properties, (str, tuple)):
        try:
            return _basic_names(properties)
        except TypeError:  # a tuple holding something unhashable: the general path's message
            return None
    if isinstance(properties, list):
        return _basic_names(tuple(properties)) if all(isinstance(p, str) for p in properties) else None
    return None


@functools.lru_cache(maxsize=256)
def _basic_names(properties):
    names = tuple(resolve_properties(properties))
    return names if _BASIC_SET.issuperset(names) else None


_BASIC_SET = frozenset(BASIC)


@functools.lru_cache(maxsize=8)
def _flat(direction):
    """A direction matrix (a tuple of rows) as the engine takes it, row-major."""
    return [float(v) for row in direction for v in row]


def basic_table(analysis, inp, names, count, start, spacing, origin, direction, threads):
    """The default columns `names` (basic_names()) of a numpy or CuPy image's analysis. A small table is one block of
    64-bit rows, where the image is, written by one engine call (labels included), its columns views of it: a small
    call's table costs a few microseconds. A large one is build()'s columns, each in memory of its own, so that a
    column kept keeps no other alive."""
    row_count, layout = _basic_layout(inp.ndim, names)
    if count * row_count * 8 >= _arrays._CACHED_OUTPUT_BYTES or (inp.device >= 0 and not analysis.device_columns):
        return build(analysis, inp, list(names), count, start, spacing, origin, direction, threads)
    if inp.library == "numpy":
        block = np.empty((row_count, count), np.uint64)  # under _CACHED_OUTPUT_BYTES: host_empty's np.empty
    else:
        block = inp.empty_table((row_count, count), np.uint64)
    if count > 0:
        analysis.write_basic_table(block, start, spacing, origin, _flat(direction))
    table = Table()
    if inp.library == "cupy":
        # Each row made straight from the block's memory: CuPy's view() and indexing cost twice as much.
        import cupy

        memory = block.data
        dtypes = (block.dtype, _INT64, _FLOAT64)
        for column, r, kind in layout:
            table[column] = cupy.ndarray((count,), dtypes[kind], memory + r * count * 8)
        return table
    typed = (block, block.view(_INT64), block.view(_FLOAT64))
    for column, r, kind in layout:
        table[column] = typed[kind][r]
    return table


_INT64, _FLOAT64 = np.dtype(np.int64), np.dtype(np.float64)


def build(analysis, inp, names, count, start, spacing, origin, direction, threads):
    """The asked columns: the basic ones (the labels included) from the engine where the image is (write_basic),
    the shape ones computed on the host (and moved there)."""
    ndim = inp.ndim
    basic = write_basic(analysis, inp, names, count, start, spacing, origin, direction)
    shape = {}
    for name in names:
        if name in basic:
            continue
        components, is_float = _core.column_info(name, ndim)[:2]
        shape[name] = _arrays.host_empty((components, count), np.float64 if is_float else _INTEGER_DTYPE[name])
    if shape and count > 0:
        feret = "feret_diameter" in names
        obb = "oriented_bounding_box_size" in names or "oriented_bounding_box_origin" in names
        flat = {name: a.reshape(-1) for name, a in shape.items()}
        analysis.fill_columns(flat, list(start), list(spacing), list(origin), [float(v) for row in direction for v in row],
                              feret, obb, threads)
    shape = {name: inp.from_host(a) for name, a in shape.items()}
    return add_columns(Table(), {**basic, **shape}, names, ndim)


def _to_numpy(a):
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "get"):  # CuPy
        return a.get()
    return a.cpu().numpy()  # PyTorch
