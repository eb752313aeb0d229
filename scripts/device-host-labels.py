#!/usr/bin/env python3
"""A numpy image's labels and basic table, cudacca.label() on the CUDA engine, into an ordinary label array and into a
page-locked one (output=): the minimum of --repeat calls per image, and the label image's SHA-256, so that two
wheels can be compared in one session (the same pixels, the same bits). Run on a GPU machine with the wheel
importable and CuPy installed (for the page-locked arrays):
python3 scripts/device-host-labels.py [--repeat 7] [--json OUT]"""
import argparse
import hashlib
import json
import time

import cupyx
import numpy as np

import cudacca
from cudacca.benchmark import BASIC, blobs, spheres

CASES = [("3d 512 d.6 g1 full", lambda: blobs((512,) * 3, 0.6, 1, 1), 3),
         ("3d 512 d.2 g1 face", lambda: blobs((512,) * 3, 0.2, 1, 1), 1),
         ("3d 512 spheres full", lambda: spheres((512,) * 3, 32768, 4.0, 3), 3),
         ("2d 8192 d.6 g16 full", lambda: blobs((8192, 8192), 0.6, 16, 1), 2)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--json")
    args = p.parse_args()
    rows = []
    for name, make, connectivity in CASES:
        image = make()
        row = {"image": name, "objects": None}
        for where in ("ordinary", "page-locked"):
            labels = (cupyx.empty_pinned(image.shape, np.uint32) if where == "page-locked"
                      else np.ones(image.shape, np.uint32))
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                _, table = cudacca.label(image, connectivity=connectivity, backend="cuda", return_table=True,
                                         properties=BASIC, output=labels)
                times.append(time.perf_counter() - start)
            row[where + "_ms"] = 1e3 * min(times)
            row[where + "_sha256"] = hashlib.sha256(labels.tobytes()).hexdigest()[:16]
            row["objects"] = int(len(table["label"]))
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
