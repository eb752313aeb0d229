#!/usr/bin/env python3
"""Are two builds of cudacca bit-identical? Labels and every table column of the same random images (2-D and 3-D,
densities x granularities, both connectivities, with an intensity image, post-processing, multi-label), through
each build in its own process, compared by SHA-256 of the arrays' bytes. Columns only one build has are listed, not
compared.

usage: scripts/compare-builds.py SITE_A SITE_B [--backends cpu,cuda] [--cupy]
       (--cupy: CuPy arrays in and out, which take the CUDA engine: --backends cuda)
       (SITE_*: a folder holding an installed cudacca, e.g. pip install --target SITE wheel)
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys


def cases():
    for shape in [(1, 1), (1, 97), (97, 1), (61, 83), (509, 253), (17, 23, 29), (64, 64, 64)]:
        for density, granularity in [(0.2, 1), (0.5, 1), (0.8, 1), (0.4, 4), (0.6, 3)]:
            for full in (False, True):
                yield shape, density, granularity, full


def dump(backends, use_cupy):
    import numpy as np

    import cudacca

    out = {}
    for backend in backends:
        for shape, density, granularity, full in cases():
            rng = np.random.default_rng(abs(hash((shape, density, granularity))) % 2**32)
            coarse = tuple(-(-s // granularity) for s in shape)
            image = rng.random(coarse) < density
            for axis in range(len(shape)):
                image = np.repeat(image, granularity, axis=axis)
            image = np.ascontiguousarray(image[tuple(slice(0, s) for s in shape)]).astype(np.uint8)
            intensity = rng.uniform(0, 1000, size=shape)
            classes = (image * rng.integers(1, 4, size=shape)).astype(np.uint16)
            runs = {
                "all": dict(properties="all", intensity=intensity),
                "sorted": dict(min_size=3, sort=True, keep_largest=5),
                "multilabel": dict(multilabel=True, properties="all"),
            }
            for name, kwargs in runs.items():
                data = classes if name == "multilabel" else image
                if use_cupy:
                    import cupy

                    data = cupy.asarray(data)
                    if "intensity" in kwargs:
                        kwargs = dict(kwargs, intensity=cupy.asarray(kwargs["intensity"]))
                labels, table = cudacca.label(data, connectivity=len(shape) if full else 1, backend=backend,
                                              return_table=True, **kwargs)
                key = f"{backend} {shape} d{density} g{granularity} {'full' if full else 'face'} {name}"
                arrays = {"labels": labels, **table}
                out[key] = {}
                for column, a in arrays.items():
                    a = a.get() if hasattr(a, "get") else np.asarray(a)
                    out[key][column] = hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
    json.dump(out, sys.stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sites", nargs="*")
    parser.add_argument("--backends", default="cpu,cuda")
    parser.add_argument("--cupy", action="store_true")
    parser.add_argument("--dump", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        dump(args.backends.split(","), args.cupy)
        return 0
    results = []
    for site in args.sites:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(site))
        command = [sys.executable, os.path.abspath(__file__), "--dump", "--backends", args.backends]
        command += ["--cupy"] if args.cupy else []
        run = subprocess.run(command, env=env, capture_output=True, text=True, cwd="/tmp")
        if run.returncode != 0:
            print(f"{site}: the dump failed:\n{run.stderr[-3000:]}")
            return 2
        results.append(json.loads(run.stdout))
    a, b = results
    compared = differ = 0
    only = set()
    for key in a:
        for column in set(a[key]) | set(b[key]):
            if column not in a[key] or column not in b[key]:
                only.add(column)
                continue
            compared += 1
            if a[key][column] != b[key][column]:
                differ += 1
                print(f"DIFFERS: {key} {column}")
    print(f"{len(a)} runs, {compared} arrays compared, {differ} differ; columns of one build only: "
          f"{', '.join(sorted(only)) or 'none'}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
