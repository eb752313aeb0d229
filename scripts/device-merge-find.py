#!/usr/bin/env python3
"""The merge's union-find on the GPU, on the images that stress it: CuPy in/out, labels + the basic table, the
minimum of --repeat calls after a warm-up, and a digest of the labels so that builds can be compared image by image
(the same digest: the same labels). Dense percolating volumes (one component of millions of runs), many objects,
spheres, and chains built to make union-find trees deep (a one-pixel column, a serpentine, a staircase).

    python3 scripts/device-merge-find.py [--json out.json] [--repeat 5]
"""

import argparse
import hashlib
import json
import time

import cupy
import numpy as np

import cudacca
from cudacca.benchmark import blobs, spheres


def serpentine(side):
    """Rows of ones joined at alternate ends: one component whose runs form a chain through the whole image."""
    image = np.zeros((side, side), np.uint8)
    image[::2] = 1
    image[1::4, -1] = 1
    image[3::4, 0] = 1
    return image


def staircase(side):
    """3-D: a diagonal of short runs, each touching the next only across a slice and a row (26-connectivity)."""
    image = np.zeros((side, side, side), np.uint8)
    i = np.arange(side)
    image[i, i, :4] = 1
    return image


def images():
    yield "3D 512³ d=0.6 g=1", lambda: blobs((512,) * 3, 0.6, 1, 2), ("full", 18, "face")
    yield "3D 512³ d=0.4 g=1", lambda: blobs((512,) * 3, 0.4, 1, 2), ("full",)
    yield "3D 512³ d=0.2 g=1", lambda: blobs((512,) * 3, 0.2, 1, 2), ("full",)
    yield "3D 512³ spheres", lambda: spheres((512,) * 3, 32768, 4.0, 3), ("full",)
    yield "2D 8192² d=0.6 g=1", lambda: blobs((8192,) * 2, 0.6, 1, 1), ("full", "face")
    yield "2D 8192² all ones", lambda: np.ones((8192, 8192), np.uint8), ("face",)
    yield "2D 8192² one column", lambda: np.pad(np.ones((8192, 1), np.uint8), ((0, 0), (4000, 4191))), ("face",)
    yield "2D 8192² serpentine", lambda: serpentine(8192), ("face",)
    yield "3D 512³ staircase", lambda: staircase(512), ("full",)


def cached(name, make, folder="/tmp/merge-find-images"):
    """The image, made once per machine (several builds run this script in turn)."""
    import os

    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, hashlib.sha256(name.encode()).hexdigest()[:12] + ".npy")
    if not os.path.exists(path):
        np.save(path, make())
    return np.load(path)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--json")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    rows = []
    for name, make, connectivities in images():
        host = cached(name, make)
        device = cupy.asarray(host)
        for connectivity in connectivities:
            call = lambda: cudacca.label(device, connectivity=connectivity, return_table=True)  # noqa: E731
            labels, table = call()
            cupy.cuda.Device().synchronize()
            digest = hashlib.sha256(labels.get().tobytes()).hexdigest()[:16]
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                call()
                cupy.cuda.Device().synchronize()
                times.append(time.perf_counter() - start)
            row = {"image": name, "connectivity": connectivity, "ms": min(times) * 1e3, "objects": len(table["label"]),
                   "digest": digest}
            rows.append(row)
            print(f"{name:24s} {str(connectivity):5s} {row['ms']:9.3f} ms  {row['objects']:9d} objects  {digest}",
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
