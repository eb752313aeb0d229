#!/usr/bin/env python3
"""Writes a CT-like NIfTI-1 volume for timing `cca` as users run it (a compressed CT, thresholded at bone):
int16, 300 x 512 x 512 (0.8 x 0.8 x 1.5 mm), air at -1000 HU, an elliptic body at 40 HU, Gaussian noise of 25 HU
and 2,900 bright cubes of 350-1500 HU: make-ct-like-nifti.py OUT.nii.gz. Needs only numpy. Then, for example:
cca OUT.nii.gz --lower 300 --connectivity full --output labels.nii.gz --csv table.csv"""
import gzip
import struct
import sys

import numpy as np


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
    header = bytearray(348)
    struct.pack_into("<i", header, 0, 348)
    struct.pack_into("<8h", header, 40, 3, width, height, depth, 1, 1, 1, 1)
    struct.pack_into("<hh", header, 70, 4, 16)  # DT_SIGNED_SHORT, 16 bits
    struct.pack_into("<8f", header, 76, 1.0, 0.8, 0.8, 1.5, 1, 1, 1, 1)
    struct.pack_into("<f", header, 108, 352.0)  # vox_offset
    struct.pack_into("<f", header, 112, 1.0)  # scl_slope
    struct.pack_into("<b", header, 123, 10)  # xyzt_units: mm, s
    struct.pack_into("<h", header, 254, 1)  # sform_code
    for row, values in enumerate(([-0.8, 0, 0, 0], [0, -0.8, 0, 0], [0, 0, 1.5, 0])):
        struct.pack_into("<4f", header, 280 + 16 * row, *values)
    header[344:348] = b"n+1\0"
    with gzip.open(out, "wb", compresslevel=6) as f:
        f.write(bytes(header) + b"\0" * 4 + volume.astype("<i2").tobytes())


if __name__ == "__main__":
    main()
