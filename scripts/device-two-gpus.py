"""Issue 26 on a machine with two GPUs (nvidia-h100-x2 / nvidia-h200-x2), not yet run: cudacca's Dask path on a
volume through two Dask workers, each pinned to its own GPU (CUDA_VISIBLE_DEVICES per worker process), against the
same two workers both on GPU 0 (same volume, same chunking); labels and table must be identical, and the times,
GB/s and the speed-up are printed and written to --json. Keep NVLink multicast off (NCCL_NVLS_ENABLE=0: the device
notes); nothing here uses NCCL.

    python3 scripts/device-two-gpus.py --side 1024 --chunk 128 --density 0.3 --json $OUT/two-gpus.json
"""

import argparse
import json
import os
import time

import numpy as np

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")


def volume(side, density, seed):
    rng = np.random.default_rng(seed)
    image = np.empty((side, side, side), np.uint8)
    for z in range(side):  # plane by plane: no float64 copy of the whole volume
        image[z] = rng.random((side, side), dtype=np.float32) < density
    return image


def run(devices, image, chunk, connectivity, backend="cuda"):
    """Labels + table through two worker processes pinned to `devices` (a pair of CUDA ordinals); seconds."""
    import dask.array as da
    import distributed

    import cudacca

    specs = {f"w{i}": {"cls": distributed.Nanny,
                       "options": {"nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(d), "NCCL_NVLS_ENABLE": "0"}}}
             for i, d in enumerate(devices)}
    scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": None}}
    with distributed.SpecCluster(workers=specs, scheduler=scheduler) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(len(devices))
        array = da.from_array(image, chunks=(chunk, image.shape[1], image.shape[2]))
        start = time.perf_counter()
        with distributed.get_task_stream(client) as stream:
            labels, table = cudacca.label(array, connectivity=connectivity, return_table=True, backend=backend)
            computed = labels.compute()
        seconds = time.perf_counter() - start
        workers = sorted({task["worker"] for task in stream.data})
    return computed, {k: np.asarray(v) for k, v in table.items()}, seconds, workers


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--side", type=int, default=1024)
    p.add_argument("--chunk", type=int, default=128, help="planes per chunk (slowest axis)")
    p.add_argument("--density", type=float, default=0.3)
    p.add_argument("--connectivity", default="face")
    p.add_argument("--json", default="two-gpus.json")
    p.add_argument("--backend", default="cuda", help="cpu: a dry run of the script without a GPU")
    args = p.parse_args()
    image = volume(args.side, args.density, 26)
    rows = {}
    results = {}
    for name, devices in (("one GPU (two workers on GPU 0)", (0, 0)), ("two GPUs (a worker on each)", (0, 1))):
        run(devices, image[: 2 * args.chunk], args.chunk, args.connectivity, args.backend)  # warm-up: contexts, engines
        labels, table, seconds, workers = run(devices, image, args.chunk, args.connectivity, args.backend)
        results[name] = (labels, table)
        gbps = (image.nbytes + labels.nbytes) / seconds / 1e9
        rows[name] = {"seconds": seconds, "GB_per_s_in_plus_labels_out": gbps, "workers": workers,
                      "components": int(len(table["label"]))}
        print(f"{name}: {seconds:.3f} s, {gbps:.1f} GB/s (input in + labels out), {len(table['label'])} components, "
              f"workers {workers}", flush=True)
    (a_labels, a_table), (b_labels, b_table) = results.values()
    identical = bool(np.array_equal(a_labels, b_labels)) and all(np.array_equal(a_table[k], b_table[k]) for k in a_table)
    one, two = (r["seconds"] for r in rows.values())
    summary = {"side": args.side, "chunk": args.chunk, "density": args.density, "connectivity": args.connectivity,
               "identical": identical, "speedup": one / two, "rows": rows}
    print(f"identical: {identical}; two GPUs {one / two:.2f}x the one-GPU time", flush=True)
    with open(args.json, "w") as f:
        json.dump(summary, f, indent=1)
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
