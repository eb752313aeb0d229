"""cudacca.label(): connected components of an array, as ITK's ConnectedComponentImageFilter labels them."""

from __future__ import annotations

import atexit
import functools
import math
import operator
import threading
import warnings

import numpy as np

from . import _arrays, _core, _dask, _table

_local = threading.local()

#: The connectivities users name (scikit-image's 1 .. ndim, cc3d's neighbor counts) as the engines' value: the most
#: non-zero components of a joining neighbor's offset.
_CONNECTIVITY = {1: {1: 1, 2: 1}, 2: {1: 1, 4: 1, 2: 2, 8: 2}, 3: {1: 1, 6: 1, 2: 2, 18: 2, 3: 3, 26: 3}}


@atexit.register
def _release():
    """The main thread's facade goes before the interpreter (its engines are cached in C++ regardless)."""
    _local.__dict__.pop("analysis", None)


#: Pixel types (NumPy's dtype.char) the engines read as they are: bool, the integers, float32 and float64.
_PLAIN_PIXEL_TYPES = frozenset("?bBhHiIlLqQfd")


def _analysis():
    a = getattr(_local, "analysis", None)
    if a is None:
        a = _local.analysis = _core.Analysis()
    return a


def _analyze(analysis, stream, image, mask, connectivity, backend, device, threads, min_size, min_physical_size, keep, sort,
             pixel_volume, shape_sums, perimeter, batch_extent=0, memory_budget=0, multilabel=False, per_class=False,
             class_values=False, intensity=None, periodic_axes=0, value_tolerance=-1.0):
    """One engine analysis of `image` (on the caller's CUDA `stream` for a device array, else 0), then the engines'
    pending warning (the automatic backend's CPU fallback) as a RuntimeWarning at the user's call; returns the
    component count."""
    count = analysis.run(image, mask, int(connectivity), backend, int(device), int(threads), int(min_size),
                         float(min_physical_size), int(keep), bool(sort), float(pixel_volume), bool(shape_sums),
                         bool(perimeter), int(stream), int(batch_extent), int(memory_budget), bool(multilabel),
                         bool(per_class), bool(class_values), intensity, int(periodic_axes),
                         float(value_tolerance))
    text = _core.take_warning()
    if text:
        warnings.warn("cudacca: " + text.strip(), RuntimeWarning, stacklevel=3)  # the user's call of label()/label_batch()
    return count


def _companion(array, name, inp):
    """An array that goes with the image (the mask, the intensity image): None, or its input, checked to have the
    image's shape and to be where the image is."""
    if array is None:
        return None
    companion = _arrays.as_input(array, name)
    if companion.shape != inp.shape:
        raise ValueError(f"{name}: shape {companion.shape} differs from the image's {inp.shape}")
    if companion.device != inp.device:
        where = "host memory" if inp.device < 0 else f"CUDA device {inp.device}"
        raise ValueError(f"{name}: must be where the image is ({where})")
    return companion


def _non_negative(value, name):
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must not be negative")
    return value


def _connectivity(connectivity, ndim):
    """The engines' connectivity: the most non-zero components a joining neighbor's offset has (1: face neighbors,
    ndim: all neighbors), from scikit-image's or cc3d's number or 'face' / 'full'."""
    if connectivity is None:
        return 1
    if isinstance(connectivity, str):
        if connectivity in ("face", "full"):
            return ndim if connectivity == "full" else 1
        raise ValueError("connectivity: 'face', 'full', 1 .. ndim (scikit-image) or 4/8, 6/18/26 (cc3d)")
    table = _CONNECTIVITY[ndim]
    if connectivity not in table:
        allowed = ", ".join(str(k) for k in table)
        raise ValueError(
            f"connectivity {connectivity!r} is not one for {ndim}-D images: {allowed} "
            "(scikit-image's most non-zero offset components, or cc3d's number of neighbors)"
        )
    return table[connectivity]


def _periodic_axes(periodic, ndim):
    """The engines' periodic axes: bit d for ITK's axis d (array axis ndim - 1 - d)."""
    if periodic is None or periodic is False:
        return 0
    if periodic is True:
        return (1 << ndim) - 1
    try:
        axes = [operator.index(a) for a in periodic]
    except TypeError:
        raise ValueError(f"periodic: True, False or a sequence of array axes, not {periodic!r}") from None
    bits = 0
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"periodic: axis {a} is not an axis of a {ndim}-D image")
        bits |= 1 << (ndim - 1 - a % ndim)
    return bits


def _geometry(inp, spacing):
    """Region start, spacing, origin and direction in ITK's axis order (x first), from the itk.Image (its
    buffered region) or from `spacing` (given in the array's axis order, as scikit-image takes it)."""
    d = inp.ndim
    if inp.itk_image is None:
        return _array_geometry(d, spacing)
    image = inp.itk_image
    start = [int(i) for i in image.GetBufferedRegion().GetIndex()]
    itk_spacing = [float(s) for s in image.GetSpacing()]
    origin = [float(s) for s in image.GetOrigin()]
    m = image.GetDirection().GetVnlMatrix()
    direction = [[float(m.get(i, j)) for j in range(d)] for i in range(d)]
    if spacing is not None:
        raise ValueError("spacing: an itk.Image carries its own spacing; leave spacing out")
    return start, itk_spacing, origin, direction


def _array_geometry(d, spacing):
    """The geometry of a plain d-D array: `spacing` (array axis order) or 1, origin 0, identity direction."""
    if spacing is None:
        return _unit_geometry(d)
    s = [float(v) for v in np.atleast_1d(np.asarray(spacing, dtype=np.float64))]
    if len(s) != d or not all(np.isfinite(v) and v > 0 for v in s):
        raise ValueError(f"spacing: {d} positive finite values expected (array axis order), got {spacing!r}")
    start, _, origin, direction = _unit_geometry(d)
    return start, tuple(s[::-1]), origin, direction


@functools.lru_cache(maxsize=None)
def _unit_geometry(d):
    """Start 0, spacing 1, origin 0, identity direction, as tuples (shared between calls, never changed)."""
    return (0,) * d, (1.0,) * d, (0.0,) * d, tuple(tuple(1.0 if i == j else 0.0 for j in range(d)) for i in range(d))


def label(
    image,
    *,
    connectivity=None,
    background=0,
    mask=None,
    min_size=0,
    min_physical_size=0.0,
    keep_largest=None,
    sort=False,
    spacing=None,
    return_table=False,
    properties=None,
    dtype=None,
    backend="auto",
    device=0,
    threads=0,
    memory_budget=0,
    multilabel=False,
    per_class=False,
    class_values=False,
    intensity=None,
    periodic=False,
    delta=None,
    output=None,
):
    """Labels the connected components of `image` and, with `return_table`, measures them.

    image: a 1-D, 2-D or 3-D array of any real scalar type (numpy, CuPy, PyTorch, an itk.Image, or what
        numpy.asarray takes). Pixels other than `background` are objects. The last axis is the fastest
        (ITK's x). CuPy and PyTorch CUDA arrays are labelled where they are, on the caller's stream. A Dask
        array (of numpy or CuPy chunks) is labelled chunk by chunk, joined at the chunks' faces, without gathering
        it: the labels come back as a lazy Dask array of the same chunks (CuPy chunks: CuPy labels, on their GPU),
        the table (basic columns) computed; no mask then. Needs dask and scipy.
    connectivity: None or 1 or "face" (the default, as ITK: 4 in 2-D, 6 in 3-D), ndim or "full" (8, 26), or in 3-D
        2 (faces and edges: 18); cc3d's 4/8 and 6/18/26 are understood.
    background: the input value that is not an object (default 0).
    mask: optional array of the image's shape, where the image is; zero mask pixels are background.
    min_size: components of fewer pixels are removed (become 0).
    min_physical_size: components of a physical size (pixels × the product of the spacing) below it are removed.
    keep_largest: keep only the N largest components (True: 1).
    sort: number the components by decreasing size (ITK's RelabelComponentImageFilter), else in raster
        order of their first pixel (ITK's ConnectedComponentImageFilter).
    spacing: pixel spacing in the array's axis order (an itk.Image brings its own, with origin and direction).
    return_table: also return a Table (dict of 1-D columns, arrays like the labels; to_pandas() with pandas).
    properties: the table's columns: "basic" (default: label, num_pixels, area, bbox, centroid), "all"
        (ITK's ShapeLabelObject attributes), or a list of names; "feret_diameter" and
        "oriented_bounding_box_size"/"_origin" only when named.
    dtype: the label dtype (default uint32, uint64 beyond; int32/int64 for PyTorch); too small raises
        OverflowError.
    backend: "auto" (host images under 24,576 pixels: the CPU engine, faster there; larger: the GPU when
        there is one, else the CPU engine, said once by a RuntimeWarning), "cuda" or "cpu". Device arrays
        always run on their own GPU.
    device: the CUDA device for host arrays.
    threads: CPU engine threads (0: all; for a Dask array, per chunk task, and 0 means 1: Dask runs the chunks'
        tasks side by side). They are kept from call to call, as OpenMP keeps its own, and wait 0.2 ms for the next
        pass before they sleep. An image is split into blocks of rows of 8,192 pixels or more, one per thread.
    memory_budget: the most working memory, in bytes, one analysis may take (GPU memory for the CUDA engine),
        counted at its worst case per pixel; a host image that needs more is labelled in slabs along its first
        axis and merged, with the same result. 0 (default): the image whole (slabs below 2^32 pixels on the
        GPU), and slabs of half as many planes each time the engine runs out of memory.
    multilabel: the image holds classes (an integer array, a multi-class segmentation): a component is a connected
        set of pixels of the same non-zero value (cc3d's multi-label mode; ITK's ScalarConnectedComponentImageFilter
        with a distance of 0), and the table gets a "class" column (the input's dtype; int64 for PyTorch). Both
        engines label it, GPU arrays where they are, Dask arrays chunk by chunk (pieces of one class joined across
        the chunks' faces); background must be 0.
    per_class: with multilabel, keep_largest keeps the N largest components of each class (nnU-Net's "largest
        component per class"); min_size and min_physical_size act per component either way.
    class_values: with multilabel, the returned image holds each kept component's class instead of its label --
        the segmentation cleaned by min_size / keep_largest (dtype: the input's unless `dtype` says otherwise).
    intensity: an intensity image of the image's shape, where the image is (any real scalar type: CT's int16, PET's
        float32): each component's intensity statistics are summed in the labeling pass (on the GPU with the CUDA
        engine) and added to the table: by default intensity_mean, intensity_min, intensity_max, intensity_stddev
        (ITK's: the sample standard deviation, N - 1; scikit-image's intensity_std divides by N), intensity_sum and
        centroid_weighted (ITK's center of gravity, a physical point), with "all" or by name also
        intensity_variance (N - 1), intensity_skewness, intensity_kurtosis, weighted_principal_moments, weighted_principal_axes,
        weighted_elongation, weighted_flatness -- ITK's LabelImageToStatisticsLabelMapFilter's values (its median
        and histogram are not computed). Not for Dask arrays, and not with a memory_budget.
    periodic: the image wraps around (a torus: simulations, tiled crystals, unrolled cylinders): True along every
        axis, or a sequence of array axes. The pixel past an axis' last index is its first, at every connectivity,
        so that components crossing the opposite faces are one (cc3d's periodic_boundary, which has 4, 8 and 6).
        The table describes each component's pixels as they lie in the image: its bbox spans both faces where it
        wraps, its centroid is the mean of its pixels' indices (cc3d's statistics), its perimeter and border
        counts take the image's border as the border. The labels, in raster order of first pixels, are joined
        on the host after the engine's labeling (GPU arrays: their table's columns come from the host). 2-D and 3-D;
        not for Dask arrays or batches, not with an intensity image.
    delta: value-tolerance connectivity on a scalar image (continuous values: a CT, a distance map, a simulation
        field): neighbors join only where both are non-zero and their values differ by at most delta -- exactly for
        integer arrays, in the dtype's precision for floating-point ones (cc3d's delta; ITK's
        ScalarConnectedComponentImageFilter with a distance threshold, which itself labels the zero pixels too unless
        masked). Both engines, every connectivity, GPU arrays where they are (a union-find over pixels, then the
        multi-label stages). delta=0 on an integer image is multilabel=True. Background must be 0; not with
        multilabel, periodic, a memory_budget, Dask arrays or batches.
    output: an array to write the labels into (scipy.ndimage.label's `output`), returned as the labels: the
        image's shape, of its library and where it is, C-contiguous and writable, of an integer dtype in this
        machine's byte order (which sets the labels' dtype), sharing no memory with the inputs. Reused from call
        to call, it saves a large label image's fresh pages; labels into page-locked host memory
        (cupyx.empty_pinned, PyTorch's pin_memory()) come down from the GPU by DMA alone past 2 MB, as a
        page-locked image goes up. Not for itk.Image or Dask input.

    Returns the label image in the input's library and on its device (numpy for numpy and other host input,
    CuPy or PyTorch for those, an itk.Image with the input's region and geometry for an itk.Image), and with
    return_table=True the Table, whose columns are arrays of that library on that device. Background is 0,
    the components are numbered 1 .. N.
    """
    if (per_class or class_values) and not multilabel:
        raise ValueError("per_class and class_values need multilabel=True")
    if multilabel and background not in (None, 0):
        raise ValueError("multilabel: the background must be 0 (the classes are the non-zero values)")
    if intensity is not None and not return_table:
        raise ValueError("intensity: its statistics go to the table; pass return_table=True")
    if keep_largest is True:
        keep_largest = 1
    keep = int(keep_largest or 0)
    if keep < 0 or int(min_size) < 0 or float(min_physical_size) < 0:
        raise ValueError("min_size, min_physical_size and keep_largest must not be negative")
    if backend not in ("auto", "cuda", "cpu"):
        raise ValueError("backend: 'auto', 'cuda' or 'cpu'")
    if delta is not None:
        delta = float(delta)
        if not delta >= 0 or delta == float("inf"):
            raise ValueError(f"delta: a finite distance of 0 or more, not {delta!r}")
        if multilabel:
            raise ValueError("delta and multilabel: multilabel is delta=0 on the classes; pass one")
        if background not in (None, 0):
            raise ValueError("delta: the background must be 0 (the values are compared as they are)")
    on_gpu = type(image) is not np.ndarray and _arrays._library_of(image) == "cupy" and backend != "cpu"
    if ((on_gpu or type(image) is np.ndarray) and image.dtype.char in _PLAIN_PIXEL_TYPES and image.dtype.isnative
            and image.flags.c_contiguous and 0 < image.ndim <= 3 and image.size > 0 and mask is None
            and intensity is None and delta is None and not multilabel and (periodic is None or periodic is False)
            and (background is None or background == 0)
            and (not return_table or (names := _table.basic_names(properties)) is not None)):
        # The common call (a numpy or CuPy image; its labels, and the default columns) without the general path's
        # wrapping, which is most of a small image's time: the same engine calls, the same outputs.
        start, itk_spacing, origin, direction = _array_geometry(image.ndim, spacing)
        if output is not None:
            dtype = _arrays.check_output(output, "cupy" if on_gpu else "numpy",
                                         int(image.device.id) if on_gpu else -1, image.shape, dtype, (image,))
        analysis = _analysis()
        args = (_connectivity(connectivity, image.ndim), backend, device, threads, min_size, min_physical_size, keep,
                sort, math.prod(itk_spacing), False, False)
        budget = _non_negative(memory_budget, "memory_budget")
        if on_gpu:
            import cupy

            with cupy.cuda.Device(image.device.id):  # the outputs on the image's GPU, the caller's stream there
                stream = cupy.cuda.get_current_stream().ptr or _arrays._LEGACY_STREAM
                count = _analyze(analysis, stream, image, None, *args, memory_budget=budget)
                label_type = _arrays.label_dtype(dtype, count, "cupy")  # raises where the labels do not fit
                labels = output if output is not None else cupy.empty(image.shape, dtype=label_type)
                analysis.write_labels(labels, 0, 0)
                if not return_table:
                    return labels
                inp = _arrays.Input(image, "cupy", image.device.id, stream)
                return labels, _table.basic_table(analysis, inp, names, count, start, itk_spacing, origin, direction,
                                                  int(threads))
        count = _analyze(analysis, 0, image, None, *args, memory_budget=budget)
        label_type = _arrays.label_dtype(dtype, count, "numpy")  # raises where the labels do not fit
        labels = output if output is not None else _arrays.host_empty(image.shape, label_type)
        analysis.write_labels(labels, 0, 0)
        if not return_table:
            return labels
        return labels, _table.basic_table(analysis, _arrays.Input(image, "numpy", -1), names, count, start,
                                          itk_spacing, origin, direction, int(threads))
    if _dask.is_dask_array(image):
        if output is not None:
            raise ValueError("output: not for Dask arrays (their labels come back as a lazy Dask array)")
        if delta is not None:
            raise ValueError("delta: not for Dask arrays (label the array in memory)")
        if periodic not in (None, False):
            raise ValueError("periodic: not for Dask arrays (label the array in memory)")
        if intensity is not None:
            raise ValueError("intensity: not for Dask arrays yet (label the chunks' statistics in memory)")
        # Chunk by chunk, joined at the chunks' faces (_dask.py): the labels lazily, the table computed.
        if image.ndim not in (1, 2, 3):
            raise ValueError(f"image: {image.ndim}-D; cudacca labels 1-D, 2-D and 3-D arrays")
        if mask is not None or properties not in (None, "basic"):
            raise ValueError("a Dask array takes no mask, and its table has the basic columns only (properties='basic')")
        return _dask.label(image, connectivity=_connectivity(connectivity, image.ndim), background=background,
                           min_size=int(min_size), min_physical_size=float(min_physical_size),
                           keep=keep, sort=bool(sort), spacing=spacing, return_table=return_table,
                           dtype=dtype, backend=backend, device=device, threads=threads, multilabel=multilabel,
                           per_class=per_class, class_values=class_values, label_in_memory=label)
    inp = _arrays.as_input(image, "image")
    neighbors = _connectivity(connectivity, inp.ndim)
    periodic_axes = _periodic_axes(periodic, inp.ndim)
    mask_input = _companion(mask, "mask", inp)
    if inp.device >= 0 and backend == "cpu":
        raise ValueError(
            "backend='cpu' with an array on the GPU: the CPU engine cannot read GPU memory; "
            "copy it to the host first (e.g. .get() or .cpu()) or use backend='auto'/'cuda'"
        )
    intensity_input = _companion(intensity, "intensity", inp)
    if output is not None:
        if inp.itk_image is not None:
            raise ValueError("output: not for an itk.Image (its labels come back as an itk.Image of its geometry)")
        dtype = _arrays.check_output(output, inp.library, inp.device, inp.shape, dtype,
                                     (inp.array, getattr(mask_input, "array", None),
                                      getattr(intensity_input, "array", None)))
    start, itk_spacing, origin, direction = _geometry(inp, spacing)
    names = _table.resolve_properties(properties, intensity=intensity is not None) if return_table else []
    if multilabel and return_table:
        names.append(_table.CLASS)
    pixel_volume = math.prod(itk_spacing)  # in order, as np.prod: the same double

    analysis = _analysis()
    # Kept to the end: an image analyzed in slabs is read again while its labels are written.
    objects = _arrays.foreground(inp, background)
    count = _analyze(analysis, inp.stream, objects,
                     mask_input.array if mask_input is not None else None, neighbors, backend, device, threads,
                     min_size, min_physical_size, keep, sort, pixel_volume,
                     _table.needs_shape_sums(names), _table.needs_perimeter(names),
                     memory_budget=_non_negative(memory_budget, "memory_budget"), multilabel=multilabel,
                     per_class=per_class, class_values=class_values,
                     intensity=intensity_input.array if intensity_input is not None else None,
                     periodic_axes=periodic_axes, value_tolerance=-1.0 if delta is None else delta)

    if class_values:
        # The cleaned segmentation keeps the classes' type; the engine refuses classes the dtype cannot hold.
        label_dtype = np.dtype(dtype) if dtype is not None else _arrays.numpy_dtype(inp.array)
    else:
        label_dtype = _arrays.label_dtype(dtype, count, inp.library)
    labels = output if output is not None else inp.empty(label_dtype)
    analysis.write_labels(labels, 0, 0)
    if inp.itk_image is not None:
        labels = _to_itk(labels, inp.itk_image)
    if not return_table:
        return labels
    table = _table.build(analysis, inp, names, count, start, itk_spacing, origin, direction, int(threads))
    if multilabel and inp.library in ("numpy", "cupy"):
        # the int64's bits, as the input's values (PyTorch keeps int64: it has few unsigned types)
        table[_table.CLASS] = table[_table.CLASS].astype(inp.array.dtype)
    return labels, table


def _to_itk(labels, like):
    return _arrays.itk_image_like(labels, like)


def last_backend():
    """The engine that ran this thread's last label() call: "cuda" or "cpu", and its description."""
    a = _analysis()
    return a.backend_used, a.description
