"""Shared helpers of cudacca's tests: random images as the C++ suite makes them (density x granularity), and a
reference labeling over an explicit pixel graph."""

import itertools

import numpy as np
import pytest

import cudacca

#: The engines every test runs on: the CPU engine, and the CUDA engine where a GPU is usable.
BACKENDS = ["cpu"] + (["cuda"] if cudacca.cuda_available()[0] else [])
DENSITY_GRANULARITY = [(0.2, 1), (0.5, 1), (0.8, 1), (0.4, 4), (0.6, 3)]


def random_image(shape, density, granularity, seed):
    """A binary image of `shape` whose cells of granularity^ndim pixels are on with probability density."""
    rng = np.random.default_rng(seed)
    coarse = tuple(-(-s // granularity) for s in shape)
    cells = rng.random(coarse) < density
    image = cells
    for axis in range(len(shape)):
        image = np.repeat(image, granularity, axis=axis)
    return np.ascontiguousarray(image[tuple(slice(0, s) for s in shape)]).astype(np.uint8)


def valued_image(shape, levels, granularity, seed, dtype, noise=0.3, density=0.85):
    """Values 1 .. levels in blocks of granularity^ndim pixels, a `noise` share of the pixels another value, zeros
    (background) on a 1 - `density` share."""
    rng = np.random.default_rng(seed)
    blocks = rng.integers(1, levels + 1, size=tuple(-(-s // granularity) for s in shape))
    for axis in range(len(shape)):
        blocks = np.repeat(blocks, granularity, axis=axis)
    blocks = blocks[tuple(slice(0, s) for s in shape)]
    values = np.where(rng.random(shape) < noise, rng.integers(1, levels + 1, size=shape), blocks)
    return (values * (random_image(shape, density, 1, seed + 1) != 0)).astype(dtype)


def offsets(ndim, connectivity):
    """Half the neighborhood (the first non-zero component positive): each neighbor pair once."""
    for o in itertools.product((-1, 0, 1), repeat=ndim):
        nonzero = [c for c in o if c != 0]
        if nonzero and len(nonzero) <= connectivity and nonzero[0] > 0:
            yield o


def reference_components(image, connectivity, axes=(), delta=None):
    """Labels in raster order of first pixels of the graph whose edges join foreground (non-zero) pixels at offsets of
    at most `connectivity` non-zero components, wrapping along the array axes `axes`, and with `delta` only where
    their values differ by at most it (exactly: integers compared as Python ints, floats in their dtype): scipy's
    connected_components on that graph."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    fg = image != 0
    n = image.size
    index = np.arange(n).reshape(image.shape)
    rows, cols = [], []
    for o in offsets(image.ndim, connectivity):
        # the neighbor of p at p + o: rolled by -o; where an axis does not wrap, the pixels whose neighbor
        # would leave the image have none
        neighbor = np.roll(index, shift=[-c for c in o], axis=tuple(range(image.ndim)))
        valid = fg & fg.reshape(-1)[neighbor]
        if delta is not None:
            a, b = image, image.reshape(-1)[neighbor]
            if image.dtype.kind == "f":
                close = np.abs(a - b) <= image.dtype.type(delta)  # the difference rounded to the dtype
            else:
                close = np.abs(a.astype(object) - b.astype(object)) <= int(delta)  # exact
            valid &= close.astype(bool)
        for axis, c in enumerate(o):
            if c != 0 and axis not in axes:
                edge = [slice(None)] * image.ndim
                edge[axis] = slice(-1, None) if c > 0 else slice(0, 1)
                valid[tuple(edge)] = False
        rows.append(index[valid])
        cols.append(neighbor[valid])
    rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    cols = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    _, component = connected_components(graph, directed=False)
    component = component.reshape(-1)
    flat_fg = fg.reshape(-1)
    # raster order of first pixels
    first = {}
    labels = np.zeros(n, np.int64)
    for p in np.flatnonzero(flat_fg):
        labels[p] = first.setdefault(component[p], len(first) + 1)
    return labels.reshape(image.shape)



@pytest.fixture
def rng():
    return np.random.default_rng(20261124)
