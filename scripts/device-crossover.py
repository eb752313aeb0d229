#!/usr/bin/env python3
"""Per-call time of the CPU and CUDA engines on small host images (numpy in/out, labels + the basic table), to
place the automatic backend's size threshold (AutomaticCudaFromPixels in src/core/itkCCAEngineChoice.h): the
images of `python -m cudacca.benchmark --latency` (blobs of 4-pixel cells at 40 % density, face connectivity) at
sides around the crossover. Run on a GPU machine with the cudacca wheel importable:
python3 scripts/device-crossover.py [--json OUT]"""
import argparse
import json

import cudacca
from cudacca.benchmark import BASIC, blobs, per_call

SHAPES = [(s, s) for s in (32, 48, 64, 80, 96, 112, 128, 160, 192, 256, 320, 384, 448, 512)] + \
         [(s, s, s) for s in (12, 16, 20, 24, 28, 32, 40, 48, 56, 64)]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--json")
    args = p.parse_args()
    rows = []
    print(f"{'image':>12} {'pixels':>8} {'cpu ms':>8} {'cuda ms':>8}  faster", flush=True)
    for shape in SHAPES:
        image = blobs(shape, 0.4, 4, 7)
        times = {}
        for backend in ("cpu", "cuda"):
            cudacca.label(image, return_table=True, properties=BASIC, backend=backend)  # engine made
            times[backend] = per_call(
                lambda: cudacca.label(image, return_table=True, properties=BASIC, backend=backend), seconds=0.5,
                most=400)[0]
        name = "x".join(map(str, shape))
        faster = "cpu" if times["cpu"] <= times["cuda"] else "cuda"
        print(f"{name:>12} {image.size:>8} {times['cpu']:8.3f} {times['cuda']:8.3f}  {faster}", flush=True)
        rows.append({"shape": shape, "pixels": int(image.size), "cpu_ms": times["cpu"], "cuda_ms": times["cuda"]})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
