#!/usr/bin/env python3
"""Writes a random 3D NIfTI-1 volume (uint8, blocks of `granularity` voxels on at `density`, 0.8 mm voxels) for
trying `cca` on a large volume where no real one is at hand: make-random-nifti.py OUT.nii SIDE DENSITY GRANULARITY.
Needs only numpy."""
import struct
import sys

import numpy as np


def main():
    out, side, density, granularity = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    rng = np.random.default_rng(7)
    blocks = -(-side // granularity)
    on = (rng.random((blocks, blocks, blocks)) < density).astype(np.uint8)
    volume = np.repeat(np.repeat(np.repeat(on, granularity, 0), granularity, 1), granularity, 2)[:side, :side, :side]
    header = bytearray(348)
    struct.pack_into("<i", header, 0, 348)
    struct.pack_into("<8h", header, 40, 3, side, side, side, 1, 1, 1, 1)
    struct.pack_into("<hh", header, 70, 2, 8)  # DT_UNSIGNED_CHAR, 8 bits
    struct.pack_into("<8f", header, 76, 1.0, 0.8, 0.8, 0.8, 1, 1, 1, 1)
    struct.pack_into("<f", header, 108, 352.0)  # vox_offset
    struct.pack_into("<f", header, 112, 1.0)  # scl_slope
    struct.pack_into("<b", header, 123, 10)  # xyzt_units: mm, s
    struct.pack_into("<h", header, 254, 1)  # sform_code
    for row, values in enumerate(([-0.8, 0, 0, 0], [0, -0.8, 0, 0], [0, 0, 0.8, 0])):
        struct.pack_into("<4f", header, 280 + 16 * row, *values)
    header[344:348] = b"n+1\0"
    with open(out, "wb") as f:
        f.write(header)
        f.write(b"\0\0\0\0")
        f.write(np.ascontiguousarray(volume).tobytes())  # x fastest: numpy's last axis is x


if __name__ == "__main__":
    main()
