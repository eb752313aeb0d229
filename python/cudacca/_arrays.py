"""Arrays in and out: numpy (host), CuPy and PyTorch (host or CUDA), itk.Image (host, with its geometry).

The engines read a C-contiguous array of up to three dimensions, the last axis the fastest (ITK's x). What
is handed over is checked here with messages that say what to do; other layouts are copied once, on the
array's own device, and said so in the docs (docs/python.md).
"""

from __future__ import annotations

import math

import numpy as np

from . import _core

#: cudaStreamLegacy: CuPy and PyTorch report the legacy default stream as 0, which the engine reads as "none".
_LEGACY_STREAM = 1

_SUPPORTED_KINDS = "bool, int8..int64, uint8..uint64, float32, float64"


class Input:
    """An image (or mask) as the engines take it, and how to make outputs of the same kind."""

    def __init__(self, array, library, device, stream=0, itk_image=None):
        self.array = array  # numpy.ndarray, cupy.ndarray or torch.Tensor, C-contiguous
        self.library = library  # "numpy", "cupy" or "torch"
        self.device = device  # -1: host memory, else the CUDA device
        self.stream = stream  # device arrays: the caller's current CUDA stream (a handle, never 0); host: 0
        self.itk_image = itk_image  # the itk.Image it came from, if any

    @property
    def shape(self):
        return tuple(int(s) for s in self.array.shape)

    @property
    def ndim(self):
        return len(self.array.shape)

    def empty(self, dtype, shape=None):
        """An uninitialized array (of the image's shape by default) on the image's device, in its library."""
        dtype = np.dtype(dtype)
        shape = self.shape if shape is None else tuple(shape)
        if self.library == "numpy":
            return host_empty(shape, dtype)
        if self.library == "cupy":
            import cupy

            with cupy.cuda.Device(self.device):
                return cupy.empty(shape, dtype=dtype)
        import torch

        torch_dtype = {
            np.dtype(np.uint8): torch.uint8,
            np.dtype(np.int16): torch.int16,
            np.dtype(np.int32): torch.int32,
            np.dtype(np.int64): torch.int64,
            np.dtype(np.float64): torch.float64,
            np.dtype(np.uint16): getattr(torch, "uint16", None),
            np.dtype(np.uint32): getattr(torch, "uint32", None),
            np.dtype(np.uint64): getattr(torch, "uint64", None),
        }.get(dtype)
        if torch_dtype is None:
            raise TypeError(f"label dtype {dtype} has no PyTorch equivalent here; use int32 or int64")
        device = "cpu" if self.device < 0 else f"cuda:{self.device}"
        return torch.empty(shape, dtype=torch_dtype, device=device)


    def empty_table(self, shape, dtype):
        """A table column block where the image is; PyTorch columns of unsigned counts are int64."""
        if self.library == "torch" and np.dtype(dtype) == np.uint64:
            dtype = np.int64
        if self.library == "torch" or self.library == "cupy":
            return self.empty(dtype, shape)
        return host_empty(shape, dtype)

    def from_host(self, array):
        """A host array moved where the image is."""
        if self.device < 0 or self.library == "numpy":
            if self.library != "torch":
                return array
            import torch

            return torch.from_numpy(array.astype(np.int64) if array.dtype == np.uint64 else array)
        if self.library == "cupy":
            import cupy

            with cupy.cuda.Device(self.device):
                return cupy.asarray(array)
        import torch

        if array.dtype == np.uint64:
            array = array.astype(np.int64)
        return torch.from_numpy(array).to(f"cuda:{self.device}")


#: Host outputs from this size on come from the package's memory cache (_core.host_empty): below it, malloc reuses
#: freed memory itself, and a fresh block's page faults cost little.
_CACHED_OUTPUT_BYTES = 1 << 20


def host_empty(shape, dtype):
    """An uninitialized numpy array; a large one in memory reused from earlier outputs (set_host_cache_limit)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes >= _CACHED_OUTPUT_BYTES:
        block = _core.host_empty(int(nbytes))
        if block is not None:
            return block.view(dtype).reshape(shape)
    return np.empty(shape, dtype=dtype)


def _library_of(obj):
    module = type(obj).__module__.split(".")[0]
    if module in ("cupy", "torch", "numpy"):
        return module
    return None


def _is_itk_image(obj):
    return type(obj).__module__.startswith("itk.") and hasattr(obj, "GetLargestPossibleRegion")


def _check_dtype(dtype, what):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        raise TypeError(f"{what}: complex pixels ({dtype}) are not supported; pass the magnitude or one part")
    if dtype.kind not in "biuf" or dtype.itemsize > 8 or dtype == np.float16:
        raise TypeError(f"{what}: pixel type {dtype} is not supported ({_SUPPORTED_KINDS})")
    return dtype


def _check_shape(shape, what, max_dims=3):
    if len(shape) == 0:
        raise ValueError(f"{what}: a 0-d array (a scalar) has no components; pass a 1-D, 2-D or 3-D array")
    if len(shape) > max_dims:
        raise ValueError(
            f"{what}: {len(shape)}-D arrays are not supported (1 to {max_dims} dimensions); "
            "for a stack of images use cudacca.label_batch"
        )
    if any(s == 0 for s in shape):
        raise ValueError(f"{what}: the array is empty (shape {tuple(shape)})")


def as_input(obj, what="image", max_dims=3):
    """Wraps `obj` (numpy, CuPy, PyTorch, itk.Image, or anything numpy.asarray takes) for the engines."""
    if _is_itk_image(obj):
        import itk

        if obj.GetNumberOfComponentsPerPixel() != 1:
            raise TypeError(f"{what}: an itk.Image of {obj.GetNumberOfComponentsPerPixel()}-component pixels "
                            "(RGB, vector) is not a scalar image; pass one component")
        view = itk.array_view_from_image(obj)
        _check_shape(view.shape, what)
        _check_dtype(view.dtype, what)
        return Input(np.ascontiguousarray(view), "numpy", -1, itk_image=obj)
    library = _library_of(obj)
    if library == "cupy":
        import cupy

        _check_shape(obj.shape, what, max_dims)
        _check_dtype(obj.dtype, what)
        device = int(obj.device.id)
        with cupy.cuda.Device(device):
            array = cupy.ascontiguousarray(obj)
            stream = cupy.cuda.get_current_stream().ptr
        return Input(array, "cupy", device, stream or _LEGACY_STREAM)
    if library == "torch":
        import torch

        _check_shape(tuple(obj.shape), what, max_dims)
        if obj.is_complex():
            raise TypeError(f"{what}: complex pixels ({obj.dtype}) are not supported; pass the magnitude or one part")
        if obj.dtype in (torch.float16, torch.bfloat16):
            raise TypeError(f"{what}: pixel type {obj.dtype} is not supported ({_SUPPORTED_KINDS})")
        if obj.requires_grad:
            obj = obj.detach()
        array = obj.contiguous()
        if array.is_cuda:
            device = array.device.index if array.device.index is not None else torch.cuda.current_device()
            stream = torch.cuda.current_stream(device).cuda_stream
            return Input(array, "torch", device, stream or _LEGACY_STREAM)
        if array.device.type != "cpu":
            raise ValueError(f"{what}: tensors must be on the CPU or a CUDA device, not {array.device}")
        return Input(array, "torch", -1)
    if hasattr(obj, "__cuda_array_interface__") or (
        hasattr(obj, "__dlpack_device__") and obj.__dlpack_device__()[0] not in (1, 3)
    ):
        raise TypeError(
            f"{what}: device arrays are taken from CuPy and PyTorch; convert this one "
            "(e.g. cupy.asarray(x) or torch.from_dlpack(x))"
        )
    array = np.asarray(obj)
    if array.dtype == object:
        raise TypeError(f"{what}: an object array is not an image ({_SUPPORTED_KINDS})")
    _check_shape(array.shape, what, max_dims)
    _check_dtype(array.dtype, what)
    if not array.dtype.isnative:  # big-endian data from a file: one copy in this machine's byte order
        array = array.astype(array.dtype.newbyteorder("="))
    return Input(np.ascontiguousarray(array), "numpy", -1)


def itk_image_like(array, like=None):
    """An itk.Image holding `array` (numpy axis order), with `like`'s region and geometry where given.

    Made by size rather than with itk.image_from_array, which takes an array with a length-1 axis (both C- and
    Fortran-contiguous) for a Fortran-ordered one and transposes it."""
    import itk
    from itk.support.types import itkCType

    d = array.ndim
    try:
        image_type = itk.Image[itkCType.GetCTypeForDType(array.dtype), d]
    except Exception as e:  # itk's wrapping has no such image type
        raise TypeError(f"this itk build wraps no {d}-D image of {array.dtype}; pass dtype= one it wraps "
                        "(uint8, uint16, uint32, uint64, int32)") from e
    image = image_type.New()
    if like is not None:
        image.CopyInformation(like)
        image.SetRegions(like.GetBufferedRegion())
    else:
        size = itk.Size[d]()
        for i, s in enumerate(reversed(array.shape)):
            size[i] = int(s)
        image.SetRegions(itk.ImageRegion[d](size))
    image.Allocate()
    itk.array_view_from_image(image)[...] = array
    return image


def foreground(inp, background):
    """The image as the engines read it: non-zero pixels are objects. A non-zero background value is turned
    into a boolean image (pixels != background), in the image's library, on its device."""
    if background is None or background == 0:
        return inp.array
    if inp.library == "cupy":
        import cupy

        with cupy.cuda.Device(inp.device):  # on the image's device, not the current one
            return inp.array != background
    return inp.array != background


def _memory_span(array):
    """[first byte, one past the last) of a numpy, CuPy or PyTorch array's elements."""
    library = _library_of(array)
    if library == "torch":
        start = array.data_ptr()
        return start, start + array.numel() * array.element_size()
    start = array.data.ptr if library == "cupy" else array.__array_interface__["data"][0]
    return start, start + array.nbytes


def numpy_dtype(array):
    """The NumPy dtype of a numpy, CuPy or PyTorch array."""
    if isinstance(array.dtype, np.dtype):
        return array.dtype
    return np.dtype(str(array.dtype).split(".")[-1])  # torch.uint8 -> uint8


def check_output(output, library, device, shape, dtype, inputs):
    """label()'s `output`, the caller's array for the labels: of the image's library (`library`), on its device
    (`device`, -1: host memory) and of its `shape`, C-contiguous, writable, of an integer dtype that `dtype`, if
    given, equals, sharing no memory with `inputs` (the arrays the engines read: the image, a mask, an intensity
    image, each C-contiguous; the engines may read them again while they write the labels). Returns its dtype as
    numpy's."""
    where = "host memory" if device < 0 else f"CUDA device {device}"
    if _library_of(output) != library or (library == "numpy" and not isinstance(output, np.ndarray)):
        raise TypeError(f"output: a {library} array in {where}, as the image is, not {type(output).__name__}")
    if library == "torch":
        if output.device.type not in ("cpu", "cuda"):
            raise ValueError(f"output: must be in {where}, where the image is, not on {output.device}")
        out_device = -1 if output.device.type == "cpu" else (output.device.index or 0)
        contiguous, writable = output.is_contiguous(), True
    else:
        out_device = int(output.device.id) if library == "cupy" else -1
        contiguous = output.flags.c_contiguous
        writable = library == "cupy" or output.flags.writeable  # CuPy arrays are always writable
    out_dtype = numpy_dtype(output)
    if out_device != device:
        raise ValueError(f"output: must be in {where}, where the image is")
    if tuple(output.shape) != tuple(shape):
        raise ValueError(f"output: shape {tuple(output.shape)} differs from the image's {tuple(shape)}")
    if not contiguous or not writable:
        raise ValueError("output: must be C-contiguous and writable")
    if out_dtype.kind not in "iu" or not out_dtype.isnative:
        raise TypeError(f"output: labels need an integer type in this machine's byte order, not {out_dtype}")
    if dtype is not None and np.dtype(dtype) != out_dtype:
        raise ValueError(f"output: its dtype {out_dtype} differs from dtype={np.dtype(dtype)}; pass one of them")
    begin, end = _memory_span(output)
    for array in inputs:
        if array is not None:
            other_begin, other_end = _memory_span(array)
            if begin < other_end and other_begin < end:
                raise ValueError("output: shares memory with the image or another input; pass an array of its own")
    return out_dtype


def label_dtype(dtype, count, library):
    """The label image's dtype: `dtype`, or by default the smallest of uint32 / uint64 (int32 / int64 for torch)
    that holds `count` labels; refused when it is no integer type or cannot hold them."""
    if dtype is None:
        if library == "torch":
            return np.dtype(np.int32) if count < 2**31 - 1 else np.dtype(np.int64)
        return np.dtype(np.uint32) if count < 2**32 - 1 else np.dtype(np.uint64)
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"dtype: labels need an integer type, not {dtype}")
    if count > np.iinfo(dtype).max:
        raise OverflowError(
            f"label overflow: {count} components do not fit in {dtype} (largest label {np.iinfo(dtype).max}); "
            "pass a wider dtype, or min_size / keep_largest to keep fewer"
        )
    return dtype
