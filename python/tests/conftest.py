"""Shared helpers of cudacca's tests: random images as the C++ suite makes them (density x granularity)."""

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


@pytest.fixture
def rng():
    return np.random.default_rng(20261124)
