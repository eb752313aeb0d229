"""Shared helpers of cudacca's tests: random images as the C++ suite makes them (density x granularity)."""

import numpy as np
import pytest


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
