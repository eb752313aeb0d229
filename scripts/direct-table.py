#!/usr/bin/env python3
"""The direct algorithms' tables from one benchmark JSON (examples/CudaConnectedComponentAnalysisBenchmark --direct ...):
the ICASSP paper's Table 1 (its seven rows, 4-connectivity) beside its A100 figures with the ratio, the
per-density times of the HA and FLSL rows at each granularity (where the ordering differs from the paper's),
and BUF against our labels path at 8-connectivity. Gpix/s from the minimum time, averaged over densities.

usage: scripts/direct-table.py BENCHMARK.json
"""
import json
import os
import sys
from collections import defaultdict

# The paper's A100 figures and our modes' names, as the results' tables use them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "benchmark", "results"))
from make_tables import OURS, PAPER, SERIES  # noqa: E402


def main(path):
    with open(path) as f:
        report = json.load(f)
    pixels = report["size"] ** 2
    ms = defaultdict(list)
    for r in report["results"]:
        ms[(r["mode"], r["connectivity"], r["granularity"])].append(r["min_ms"])
    # total pixels / total time, and the mean of the per-image rates
    gpix = {k: len(v) * pixels / (sum(v) * 1e6) for k, v in ms.items()}
    mean = {k: sum(pixels / (t * 1e6) for t in v) / len(v) for k, v in ms.items()}
    print(f"{report['device']}, {report['size']}^2, {report['runs']} runs")
    print("\n| algorithm | " + " | ".join(f"{g}: here / A100 (ratio)" for g in SERIES) + " |")
    print("|---|" + "---|" * len(SERIES))
    for name, mode in OURS.items():
        cells = []
        for g, paper in zip(SERIES, PAPER[name]):
            ours = gpix.get((mode, 4, g))
            cells.append("-" if ours is None else
                         f"{ours:.3g} / {paper} ({ours / paper:.2g}x) [{mean[(mode, 4, g)]:.3g}]")
        print(f"| {name} | " + " | ".join(cells) + " |")

    times = defaultdict(dict)  # (mode, conn, g) -> density -> min ms
    for r in report["results"]:
        times[(r["mode"], r["connectivity"], r["granularity"])][r["density"]] = r["min_ms"]
    for g in ("g1", "g4", "g16"):
        print(f"\nper density, {g}, conn 4, ms (min): " + ", ".join(OURS))
        for d in sorted(times[("a", 4, g)]):
            print(f"  d={d:.1f}: " + "  ".join(f"{times[(m, 4, g)].get(d, float('nan')):7.3f}" for m in OURS.values()))

    print("\n| 8-connectivity | " + " | ".join(SERIES) + " |")
    print("|---|" + "---|" * len(SERIES))
    for mode, label in (("ccl-buf", "BUF labels, its own numbering"), ("ccl-buf-raster", "BUF labels, raster order"),
                        ("ccl-buf-halving", "BUF with a path-halving find, its own numbering"),
                        ("ccl-ours", "ours, labels only"), ("b", "ours, labels + features"),
                        ("a", "ours, features only")):
        cells = (f"{gpix.get((mode, 8, g), float('nan')):.3g} [{mean.get((mode, 8, g), float('nan')):.3g}]"
                 for g in SERIES)
        print(f"| {label} | " + " | ".join(cells) + " |")
    for g in SERIES:
        print(f"\nper density, {g}, conn 8, ms (min): BUF, BUF raster, ours labels, ours labels + features")
        for d in sorted(times[("b", 8, g)]):
            print(f"  d={d:.1f}: " + "  ".join(f"{times[(m, 8, g)].get(d, float('nan')):7.3f}"
                                              for m in ("ccl-buf", "ccl-buf-raster", "ccl-ours", "b")))


if __name__ == "__main__":
    main(sys.argv[1])
