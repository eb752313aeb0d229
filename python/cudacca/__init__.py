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


__all__ = ["label", "label_batch", "contacts", "region_graph", "Table", "EngineError", "cuda_available", "last_backend", "BASIC", "SHAPE", "ALL", "ON_REQUEST"]
