"""On a GPU: a uint8 volume above 2^32 voxels labelled by the CUDA engine in slabs (labels +
basic table), checked voxel for voxel and column for column against the CPU engine on the whole volume, timed
against the PCIe bound; then a volume cut by a small memory budget against the same volume whole.

With --pinned, the large volume again from page-locked host memory into a page-locked label array (label()'s
`output`, reused from call to call): both copies by DMA, without staging, and no fresh pages for the labels.
With --forced-side 0, no forced-budget volume.

Usage: python3 scripts/device-large-volume.py [--side 1700] [--granularity 4] [--density 0.5] [--pinned]
       [--forced-side 1024] [--json FILE]"""

import argparse
import json
import time

import numpy as np

import cudacca
from cudacca import _label
from cudacca.benchmark import transfer_bounds


def volume(side, density, granularity, seed):
    """Cells of granularity^3 voxels on with probability `density`, uint8, C order."""
    rng = np.random.default_rng(seed)
    cells = -(-side // granularity)
    on = (rng.random((cells, cells, cells), dtype=np.float32) < density).astype(np.uint8)
    image = np.repeat(np.repeat(np.repeat(on, granularity, 0), granularity, 1), granularity, 2)
    return np.ascontiguousarray(image[:side, :side, :side])


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def same(a, b, planes=64):
    """Voxel for voxel, a few planes at a time (no volume-sized temporaries)."""
    return all(np.array_equal(a[z:z + planes], b[z:z + planes]) for z in range(0, a.shape[0], planes))


def same_table(a, b):
    return list(a.keys()) == list(b.keys()) and all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


def run(image, budget, what):
    """CUDA (twice: the first with its allocations) and the CPU engine on the same volume, compared."""
    rows = {}
    (labels, table), first = timed(lambda: cudacca.label(image, backend="cuda", return_table=True,
                                                          memory_budget=budget))
    slabs = _label._analysis().number_of_slabs
    del labels, table
    (labels, table), again = timed(lambda: cudacca.label(image, backend="cuda", return_table=True,
                                                          memory_budget=budget))
    # Where the time goes, on label()'s own engine (warm) and into its labels (their pages touched already): the
    # analysis (slabs analyzed, merged) and the label image (slabs again where needed, written).
    analysis = _label._analysis()
    count, analyze = timed(lambda: analysis.run(image, None, 1, "cuda", 0, 0, 0, 0.0, 0, False, 1.0, False,
                                                False, 0, 0, budget))
    _, write = timed(lambda: analysis.write_labels(labels, 0, 0))
    fresh, touch = timed(lambda: np.ones(image.shape, labels.dtype))  # what a fresh label array's pages cost
    del fresh
    (cpu_labels, cpu_table), cpu = timed(lambda: cudacca.label(image, backend="cpu", return_table=True))
    (ok_labels, compare) = timed(lambda: same(labels, cpu_labels))
    rows = {"what": what, "shape": list(image.shape), "voxels": int(image.size), "slabs": int(slabs),
            "components": int(len(table["label"])), "cuda_first_s": first, "cuda_s": again, "cpu_engine_s": cpu,
            "labels_equal": bool(ok_labels), "table_equal": bool(same_table(table, cpu_table)),
            "compare_s": compare, "label_dtype": str(labels.dtype),
            "split": {"analyze_s": analyze, "write_labels_s": write, "count": int(count),
                      "first_touch_of_a_label_array_s": touch}}
    print(json.dumps(rows), flush=True)
    return rows, labels


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--side", type=int, default=1700)
    p.add_argument("--granularity", type=int, default=4)
    p.add_argument("--density", type=float, default=0.5)
    p.add_argument("--forced-side", type=int, default=1024)
    p.add_argument("--forced-budget", type=float, default=4e9)
    p.add_argument("--pinned", action="store_true")
    p.add_argument("--json")
    args = p.parse_args()
    out = {"device": cudacca.cuda_available(), "bounds": transfer_bounds()}
    print(json.dumps(out), flush=True)

    image, made = timed(lambda: volume(args.side, args.density, args.granularity, 22))
    print(f"volume {image.shape} ({image.size / 2**32:.2f} x 2^32 voxels) made in {made:.1f} s", flush=True)
    row, labels = run(image, 0, f"{args.side}^3 uint8, g={args.granularity}, d={args.density}, default budget")
    bounds = out["bounds"]
    if bounds:
        # The least that must cross PCIe: the volume up once, the labels down once.
        up, down = image.nbytes, labels.nbytes
        row["pcie_bound_s"] = up / bounds["h2d"] + down / bounds["d2h"]
        row["pcie_bytes"] = up + down
        row["effective_GBps"] = (up + down) / row["cuda_s"] / 1e9
        row["fraction_of_bound"] = row["pcie_bound_s"] / row["cuda_s"]
    out["large"] = row
    if args.pinned:
        import cupyx

        (pinned_image, pinned_labels), allocate = timed(lambda: (cupyx.empty_pinned(image.shape, image.dtype),
                                                                 cupyx.empty_pinned(image.shape, labels.dtype)))
        pinned_image[...] = image
        calls = []
        for _ in range(3):
            (_, table), seconds = timed(lambda: cudacca.label(pinned_image, backend="cuda", return_table=True,
                                                              output=pinned_labels))
            calls.append(seconds)
        pinned = {"allocate_s": allocate, "calls_s": calls, "labels_equal": bool(same(pinned_labels, labels)),
                  "components": int(len(table["label"]))}
        if bounds:
            pinned["fraction_of_bound"] = row["pcie_bound_s"] / min(calls)
        print("pinned:", json.dumps(pinned), flush=True)
        row["pinned"] = pinned
        del pinned_image, pinned_labels
        import cupy

        cupy.get_default_pinned_memory_pool().free_all_blocks()  # unlocked again, not kept in CuPy's pool
    del labels, image
    if args.forced_side == 0:
        print(json.dumps(out, indent=1), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
        ok = row["labels_equal"] and row["table_equal"] and row.get("pinned", {}).get("labels_equal", True)
        print("large volume:", "identical" if ok else "DIFFERENT")
        raise SystemExit(0 if ok else 1)

    image = volume(args.forced_side, args.density, args.granularity, 23)
    forced, _ = run(image, int(args.forced_budget), f"{args.forced_side}^3 under a {args.forced_budget:.0e} B budget")
    (whole_labels, whole_table), whole = timed(lambda: cudacca.label(image, backend="cuda", return_table=True,
                                                                     memory_budget=1 << 40))
    forced["cuda_whole_s"] = whole
    forced["whole_slabs"] = int(_label._analysis().number_of_slabs)
    out["forced"] = forced
    print(json.dumps(out, indent=1), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    ok = all(r["labels_equal"] and r["table_equal"] for r in (row, forced)) and \
        row.get("pinned", {}).get("labels_equal", True)
    print("large volume:", "identical" if ok else "DIFFERENT")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
