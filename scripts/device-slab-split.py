"""Where a slabbed analysis' time goes: the 1700³ volume of scripts/device-large-volume.py analyzed (no outputs) in
its two slabs by the CUDA engine, against each slab analyzed alone as an image of its own (its upload and labeling,
without the merge's host work), twice each, in one process.

    python3 scripts/device-slab-split.py [--side 1700] [--json out.json]
"""

import argparse
import json
import os
import runpy
import time

import cudacca
from cudacca import _label


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--side", type=int, default=1700)
    p.add_argument("--json")
    args = p.parse_args()
    large = runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "device-large-volume.py"),
                           run_name="slab-split")
    image = large["volume"](args.side, 0.5, 4, 22)
    analysis = _label._analysis()

    def analyze(im):
        start = time.perf_counter()
        count = analysis.run(im, None, 1, "cuda", 0, 0, 0, 0.0, 0, False, 1.0, False, False, 0)
        return count, time.perf_counter() - start

    rows = []
    for _ in range(2):
        count, whole = analyze(image)
        slabs = analysis.number_of_slabs
        # The slab engine takes the thinner remainder first: planes [0, thin) and [thin, side).
        per_slab = 0xFFFFFFFE // (args.side * args.side)
        thin = args.side % per_slab or per_slab
        count0, first = analyze(image[:thin])
        count1, second = analyze(image[thin:])
        row = {"components": count, "slabs": slabs, "analysis_in_slabs_s": whole, "thin_slab_alone_s": first,
               "thick_slab_alone_s": second, "pieces": count0 + count1,
               "merge_and_host_work_s": whole - first - second}
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": cudacca.cuda_available(), "side": args.side, "rounds": rows}, f, indent=1)


if __name__ == "__main__":
    main()
