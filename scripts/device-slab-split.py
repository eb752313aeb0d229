"""Where a slabbed analysis' time goes: a volume of scripts/device-large-volume.py analyzed in slabs by the CUDA
engine (the 1700³ one by its pixel limit, or a smaller one under --budget), against each slab analyzed alone as an
image of its own, twice each, in one process.

For each round: the analysis in slabs (no outputs); the slabs alone from numpy (upload and labeling, without the
merge's host work) and, with CuPy, already on the device (labeling alone); the label image written by the slabbed
analysis against each slab's labels written alone after its own analysis.

    python3 scripts/device-slab-split.py [--side 1700] [--budget 0] [--json out.json]
"""

import argparse
import json
import os
import re
import runpy
import time

import numpy as np

import cudacca
from cudacca import _label


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--side", type=int, default=1700)
    p.add_argument("--budget", type=float, default=0)
    p.add_argument("--json")
    args = p.parse_args()
    large = runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "device-large-volume.py"),
                           run_name="slab-split")
    image = large["volume"](args.side, 0.5, 4, 22)
    labels = np.ones(image.shape, np.uint32)  # pages touched before any clock starts
    analysis = _label._analysis()
    budget = int(args.budget)

    def analyze(im, budget=0):
        return analysis.run(im, None, 1, "cuda", 0, 0, 0, 0.0, 0, False, 1.0, False, False, 0, 0, budget)

    try:
        import cupy
    except ImportError:
        cupy = None

    rows = []
    for _ in range(2):
        count, in_slabs = timed(lambda: analyze(image, budget))
        _, write_in_slabs = timed(lambda: analysis.write_labels(labels, 0, 0))
        slabs = analysis.number_of_slabs
        description = analysis.description
        # The slab engine takes the thinner remainder first, then slabs of the planes its description names.
        match = re.search(r"in (\d+) slabs of up to (\d+) planes", description)
        per_slab = int(match.group(2)) if match else args.side
        thin = args.side % per_slab or per_slab
        bounds = [0] + list(range(thin, args.side + 1, per_slab))
        alone, alone_write, on_device, pieces = 0.0, 0.0, 0.0, 0
        for a, b in zip(bounds[:-1], bounds[1:]):
            n, seconds = timed(lambda: analyze(image[a:b]))
            _, written = timed(lambda: analysis.write_labels(labels[a:b], 0, 0))
            alone += seconds
            alone_write += written
            pieces += n
            if cupy is not None:
                slab = cupy.asarray(image[a:b])
                cupy.cuda.runtime.deviceSynchronize()
                _, seconds = timed(lambda: analyze(slab))
                on_device += seconds
                del slab
        row = {"description": description, "components": count, "slabs": slabs, "pieces": pieces,
               "analysis_in_slabs_s": in_slabs, "slabs_alone_s": alone, "slabs_alone_on_device_s": on_device,
               "merge_and_host_work_s": in_slabs - alone,
               "labels_in_slabs_s": write_in_slabs, "labels_of_slabs_alone_s": alone_write}
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": cudacca.cuda_available(), "side": args.side, "budget": budget, "rounds": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
