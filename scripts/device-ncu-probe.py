#!/usr/bin/env python3
"""One cudacca.label(CuPy image, return_table=True) call inside an NVTX range "prof", after two warm-up calls, for
ncu to time kernel by kernel: ncu --nvtx --nvtx-include prof/ --metrics gpu__time_duration.sum --print-summary
per-kernel python3 scripts/device-ncu-probe.py ARGS > out.txt; python3 scripts/ncu-kernel-times.py out.txt.
ARGS: SHAPE DENSITY GRANULARITY [CONNECTIVITY] (the benchmark's blobs, e.g. 512x512x512 0.6 1 full), or spheres."""
import sys, cupy as cp, numpy as np, cudacca
from cudacca.benchmark import blobs, spheres, BASIC
if sys.argv[1] == "spheres":
    img = cp.asarray(spheres((512,) * 3, 32768, 4.0, 3)); kw = {}
else:
    shape = tuple(int(x) for x in sys.argv[1].split("x")); d = float(sys.argv[2]); g = int(sys.argv[3])
    img = cp.asarray(blobs(shape, d, g, 1))
    kw = dict(connectivity=sys.argv[4]) if len(sys.argv) > 4 else {}
for _ in range(2):
    cudacca.label(img, return_table=True, properties=BASIC, **kw)
cp.cuda.Device().synchronize()
cp.cuda.nvtx.RangePush("prof")
cudacca.label(img, return_table=True, properties=BASIC, **kw)
cp.cuda.Device().synchronize()
cp.cuda.nvtx.RangePop()
