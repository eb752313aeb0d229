#!/usr/bin/env python3
"""Writes a random 3D NIfTI-1 volume (uint8, blocks of `granularity` voxels on at `density`, 0.8 mm voxels) for
trying `cca` on a large volume where no real one is at hand: make-random-nifti.py OUT.nii SIDE DENSITY GRANULARITY.
Needs only numpy. write_nifti() is also make-ct-like-nifti.py's writer."""
import gzip
import struct
import sys

import numpy as np

# numpy dtype -> NIfTI-1 datatype code and bits per voxel
_DATATYPES = {np.dtype(np.uint8): (2, 8), np.dtype(np.int16): (4, 16)}


def write_nifti(out, volume, spacing):
    """Writes `volume` (z, y, x) as a NIfTI-1 file (gzip-compressed where `out` ends in .gz) with the voxel size
    `spacing` (x, y, z) in mm and a sform that flips x and y (as scanners' RAS files do)."""
    depth, height, width = volume.shape
    datatype, bits = _DATATYPES[volume.dtype]
    header = bytearray(348)
    struct.pack_into("<i", header, 0, 348)
    struct.pack_into("<8h", header, 40, 3, width, height, depth, 1, 1, 1, 1)
    struct.pack_into("<hh", header, 70, datatype, bits)
    struct.pack_into("<8f", header, 76, 1.0, *spacing, 1, 1, 1, 1)
    struct.pack_into("<f", header, 108, 352.0)  # vox_offset
    struct.pack_into("<f", header, 112, 1.0)  # scl_slope
    struct.pack_into("<b", header, 123, 10)  # xyzt_units: mm, s
    struct.pack_into("<h", header, 254, 1)  # sform_code
    sx, sy, sz = spacing
    for row, values in enumerate(([-sx, 0, 0, 0], [0, -sy, 0, 0], [0, 0, sz, 0])):
        struct.pack_into("<4f", header, 280 + 16 * row, *values)
    header[344:348] = b"n+1\0"
    with (gzip.open(out, "wb", compresslevel=6) if out.endswith(".gz") else open(out, "wb")) as f:
        f.write(header)
        f.write(b"\0\0\0\0")
        f.write(np.ascontiguousarray(volume.astype(volume.dtype.newbyteorder("<"))).tobytes())  # x fastest


def main():
    out, side, density, granularity = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    rng = np.random.default_rng(7)
    blocks = -(-side // granularity)
    on = (rng.random((blocks, blocks, blocks)) < density).astype(np.uint8)
    volume = np.repeat(np.repeat(np.repeat(on, granularity, 0), granularity, 1), granularity, 2)[:side, :side, :side]
    write_nifti(out, volume, (0.8, 0.8, 0.8))


if __name__ == "__main__":
    main()
