#!/usr/bin/env python3
"""Writes a CT-like NIfTI-1 volume for timing `cca` as users run it (a compressed CT, thresholded at bone):
int16, 300 x 512 x 512 (0.8 x 0.8 x 1.5 mm), air at -1000 HU, an elliptic body at 40 HU, Gaussian noise of 25 HU
and 2,900 bright cubes of 350-1500 HU: make-ct-like-nifti.py OUT.nii.gz. Needs only numpy. Then, for example:
cca OUT.nii.gz --lower 300 --connectivity full --output labels.nii.gz --csv table.csv"""
import importlib.util
import os
import sys

import numpy as np

_spec = importlib.util.spec_from_file_location(
    "make_random_nifti", os.path.join(os.path.dirname(os.path.abspath(__file__)), "make-random-nifti.py"))
_writer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_writer)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(3)
    depth, height, width = 300, 512, 512
    _, y, x = np.ogrid[:depth, :height, :width]
    volume = np.full((depth, height, width), -1000, np.int16)
    body = ((y - 256) / 200.0) ** 2 + ((x - 256) / 230.0) ** 2 < 1
    volume[np.broadcast_to(body, volume.shape)] = 40
    volume += rng.normal(0, 25, volume.shape).astype(np.int16)
    for _ in range(2900):
        cz, cy, cx = rng.integers(3, depth - 3), rng.integers(60, height - 60), rng.integers(40, width - 40)
        r = rng.integers(1, 4)
        volume[cz - r:cz + r + 1, cy - r:cy + r + 1, cx - r:cx + r + 1] = rng.integers(350, 1500)
    _writer.write_nifti(out, volume, (0.8, 0.8, 1.5))


if __name__ == "__main__":
    main()
