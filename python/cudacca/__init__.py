"""cudacca: connected component analysis on the GPU (CUDA) or the CPU, for numpy, CuPy, PyTorch and ITK images.

    import cudacca
    labels, table = cudacca.label(image > 0.5, connectivity="full", min_size=10, return_table=True)

Labels are identical to ITK's ConnectedComponentImageFilter (and, with sort=True, RelabelComponentImageFilter);
the table's attributes are ITK's ShapeLabelObject's. See docs/python.md.
"""

from ._core import EngineError
from ._batch import label_batch
from ._contacts import contacts, region_graph
from ._label import label, last_backend
from ._table import ALL, BASIC, ON_REQUEST, SHAPE, Table
from . import _core

__version__ = "0.1.0"


def cuda_available():
    """(True, "") where a CUDA device can be used, else (False, why not)."""
    if not _core.cuda_compiled():
        return False, "this build has no CUDA engine (built without nvcc)"
    n, reason = _core.cuda_device_count()
    return n > 0, reason


def set_host_cache_limit(nbytes):
    """Sets how much host memory, in bytes, the package keeps for reuse once the large numpy outputs that used it
    (label images and table columns of 1 MiB or more) are gone; returns the limit before. A fresh array's pages are
    faulted in and zeroed by the system at its first touch, which for large outputs costs more than filling them:
    calls in a loop reuse the memory instead, as CuPy's memory pools do. The default is a sixteenth of the memory,
    at most 4 GiB; 0 keeps nothing."""
    if int(nbytes) < 0:
        raise ValueError("set_host_cache_limit: the limit must be >= 0")
    return _core.set_host_cache_limit(int(nbytes))


def free_host_cache():
    """Returns the host memory kept for reuse (set_host_cache_limit) to the system; outputs in use keep theirs."""
    _core.free_host_cache()


def host_cache_info():
    """The host memory cache (set_host_cache_limit): a dict of cached_bytes (kept, unused), used_bytes (in outputs
    alive now) and limit."""
    return dict(_core.host_cache_info())


__all__ = ["label", "label_batch", "contacts", "region_graph", "Table", "EngineError", "cuda_available", "last_backend", "set_host_cache_limit", "free_host_cache", "host_cache_info", "BASIC", "SHAPE", "ALL", "ON_REQUEST"]
