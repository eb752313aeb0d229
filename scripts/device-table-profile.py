#!/usr/bin/env python3
"""Where a host call's time goes when the table is large: each step of cudacca.label(numpy, return_table=True) timed
on its own -- the analysis, the label write, the basic columns, the label column -- for the benchmark's many-object
images, beside the same calls with labels only, as a first call (no host memory kept), and from CuPy (no host
transfer). Run on a GPU machine with the cudacca wheel importable:
python3 scripts/device-table-profile.py [--json OUT]"""
import argparse
import importlib
import json
import time
from collections import defaultdict

import numpy as np

import cudacca
from cudacca import _label, _table
from cudacca.benchmark import BASIC, best, blobs

CASES = [("2d 8192 d.2 g1 c1", (8192, 8192), 0.2, 1, 1), ("3d 512 d.2 g1 c1", (512, 512, 512), 0.2, 1, 1),
         ("2d 8192 d.6 g16 c2", (8192, 8192), 0.6, 16, 2)]

STEPS = defaultdict(list)


class Timed:
    """The Analysis object with each method call timed."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        f = getattr(self._inner, name)
        if not callable(f):
            return f

        def timed(*args, **kwargs):
            t = time.perf_counter()
            out = f(*args, **kwargs)
            STEPS[name].append(time.perf_counter() - t)
            return out

        return timed


def wrap(module, name):
    f = getattr(module, name)

    def timed(*args, **kwargs):
        t = time.perf_counter()
        out = f(*args, **kwargs)
        STEPS[module.__name__.split(".")[-1] + "." + name].append(time.perf_counter() - t)
        return out

    setattr(module, name, timed)


def best_ms(fn, sync=None):
    """The fastest of 5 calls after a warm-up, in ms (the benchmark's own timing)."""
    return 1e3 * best(fn, 5, sync)[0]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--json")
    args = p.parse_args()
    original = _label._analysis
    results = []
    for name, shape, density, granularity, connectivity in CASES:
        image = blobs(shape, density, granularity, 7)
        row = {"case": name}
        row["labels_ms"] = best_ms(lambda: cudacca.label(image, connectivity=connectivity))
        row["labels_table_ms"] = best_ms(
            lambda: cudacca.label(image, connectivity=connectivity, return_table=True, properties=BASIC))
        if hasattr(cudacca, "free_host_cache"):
            # A first call: no memory kept from earlier outputs (each run's outputs dropped before the next).
            firsts = []
            for _ in range(5):
                cudacca.free_host_cache()
                t = time.perf_counter()
                out = cudacca.label(image, connectivity=connectivity, return_table=True, properties=BASIC)
                firsts.append(time.perf_counter() - t)
                del out
            row["labels_table_first_ms"] = 1e3 * min(firsts)
        _label._analysis = lambda: Timed(original())
        wrap(_table, "write_basic")
        wrap(_table, "build")
        STEPS.clear()
        for _ in range(5):
            labels, table = cudacca.label(image, connectivity=connectivity, return_table=True, properties=BASIC)
        _label._analysis = original
        row["steps_ms"] = {k: 1e3 * min(v[1:]) for k, v in STEPS.items()}
        row["objects"] = int(len(table["label"]))
        n = row["objects"]
        row["numpy_empty_fill_7xN_ms"] = best_ms(lambda: np.empty((7, n)).fill(1.0))
        row["numpy_arange_N_ms"] = best_ms(lambda: np.arange(1, n + 1, dtype=np.int64))
        row["numpy_empty_labels_fill_ms"] = best_ms(lambda: np.empty(shape, np.uint32).fill(1))
        try:
            import cupy

            d = cupy.asarray(image)
            sync = cupy.cuda.Device().synchronize
            row["cupy_labels_ms"] = best_ms(lambda: cudacca.label(d, connectivity=connectivity), sync=sync)
            row["cupy_labels_table_ms"] = best_ms(
                lambda: cudacca.label(d, connectivity=connectivity, return_table=True, properties=BASIC), sync=sync)
        except ImportError:
            pass
        importlib.reload(_table)  # undoes the wraps
        print(json.dumps(row), flush=True)
        results.append(row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
