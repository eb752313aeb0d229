"""On a machine with two GPUs (nvidia-h100-x2 / nvidia-h200-x2): cudacca's Dask path on a volume larger
than the forced GPU memory budget, through Dask workers pinned to GPUs (CUDA_VISIBLE_DEVICES per worker process):

  reference   cudacca.label() of the whole volume in this process on GPU 0, memory_budget forced below what the
              volume needs (the slab path): "the one-GPU result"
  1 worker    one worker on GPU 0
  2 on GPU 0  two workers both on GPU 0 (the same host parallelism as the next row, one GPU)
  2 GPUs      two workers, one on each GPU

Same volume and chunking in every row. The chunks are made on the workers and persisted there before the clock
starts (as if read from Zarr), so the input never crosses the client. Timed: step 1 (every chunk labelled +
faces + boundary pairs, `dask.compute` inside cudacca), the merge on the client (connected components of the
pairs, the table, post-processing), step 2 (every chunk labelled again and relabelled, persisted on the workers).
Identity: the table's columns equal the reference's and every chunk's labels hash (SHA-256, on the workers) to
the reference's chunk. `--chunks cupy` makes the chunks CuPy arrays on each worker's GPU (labels stay there).
The PCIe bound: a pinned 1 GiB host<->device copy timed on each GPU (CuPy), two links = the sum. Keep NVLink
multicast off (NCCL_NVLS_ENABLE=0: the device notes); nothing here uses NCCL.

    python3 scripts/device-two-gpus.py --side 1024 --chunk 64 --density 0.3 --json $OUT/two-gpus.json
    python3 scripts/device-two-gpus.py --backend cpu --side 96 --chunk 16   # a dry run without a GPU
"""

import argparse
import hashlib
import json
import os
import time

import numpy as np

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")  # the workers inherit it: no INFO lines
SEED = 26


GRANULARITY = int(os.environ.get("TWO_GPUS_GRANULARITY", "1"))


def planes(z0, z1, shape, density):
    """Planes z0..z1 of the volume: plane z from its own seed (that of z // granularity), so any chunking makes the
    same volume; with granularity g the benchmark's blocks of g³ pixels (the environment carries g to the workers)."""
    g = GRANULARITY
    out = np.empty((z1 - z0,) + tuple(shape), np.uint8)
    coarse = tuple(-(-s // g) for s in shape)
    for z in range(z0, z1):
        plane = np.random.default_rng([SEED, z // g]).random(coarse, dtype=np.float32) < density
        out[z - z0] = np.repeat(np.repeat(plane, g, 0), g, 1)[: shape[0], : shape[1]]
    return out


def make_chunk(block_info=None, *, plane, density, cupy_chunks):
    (z0, z1), _, _ = block_info[None]["array-location"]
    chunk = planes(z0, z1, plane, density)
    if cupy_chunks:
        import cupy

        return cupy.asarray(chunk)
    return chunk


def digest(block):
    if type(block).__module__.split(".")[0] == "cupy":
        block = block.get()
    return hashlib.sha256(np.ascontiguousarray(block).view(np.uint8)).hexdigest()


def pcie_bound():
    """GB/s of a pinned 1 GiB copy host->device and device->host on each GPU (CuPy), or None without CuPy."""
    try:
        import cupy
    except ImportError:
        return None
    n = 1 << 30
    out = []
    for d in range(cupy.cuda.runtime.getDeviceCount()):
        with cupy.cuda.Device(d):
            host = cupy.cuda.alloc_pinned_memory(n)
            h = np.frombuffer(host, np.uint8, n)
            g = cupy.empty(n, np.uint8)
            row = {"device": d}
            for name, copy in (("h2d", lambda: g.set(h)), ("d2h", lambda: g.get(out=h))):
                copy()
                cupy.cuda.Device(d).synchronize()
                best = 1e9
                for _ in range(3):
                    t = time.perf_counter()
                    copy()
                    cupy.cuda.Device(d).synchronize()
                    best = min(best, time.perf_counter() - t)
                row[name + "_GB_per_s"] = n / best / 1e9
            out.append(row)
            del g, h, host
    return out


def run(name, devices, args, shape, ref_table, ref_digests, cupy_chunks):
    import dask
    import dask.array as da
    import distributed
    from dask.utils import key_split

    import cudacca

    env = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1", "TWO_GPUS_GRANULARITY": str(GRANULARITY)}
    specs = {f"w{i}": {"cls": distributed.Nanny,
                       "options": {"nthreads": 1, "memory_limit": 0, "env": dict(env, CUDA_VISIBLE_DEVICES=str(d))}}
             for i, d in enumerate(devices)}
    scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": None}}
    with distributed.SpecCluster(workers=specs, scheduler=scheduler) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(len(devices))
        chunks = (args.chunk, shape[1], shape[2])
        image = da.map_blocks(make_chunk, chunks=da.core.normalize_chunks(chunks, shape), dtype=np.uint8,
                              plane=shape[1:], density=args.density, cupy_chunks=cupy_chunks,
                              meta=__import__("cupy").empty((0, 0, 0), np.uint8) if cupy_chunks else None)
        image = image.persist()
        distributed.wait(image)
        held = {w: len(keys) for w, keys in client.has_what().items()}
        warm, _ = cudacca.label(image[: 2 * args.chunk], connectivity=args.connectivity, return_table=True,
                                backend=args.backend)
        distributed.wait(warm.persist())  # warm-up on the workers: CUDA contexts, engines

        marks = []
        compute = dask.compute

        def timed_compute(*a, **k):
            result = compute(*a, **k)
            marks.append(time.perf_counter())
            return result

        dask.compute = timed_compute
        try:
            with distributed.get_task_stream(client) as stream:
                start = time.perf_counter()
                labels, table = cudacca.label(image, connectivity=args.connectivity, return_table=True,
                                              backend=args.backend)
                merged = time.perf_counter()
                labels = labels.persist()
                distributed.wait(labels)
                end = time.perf_counter()
        finally:
            dask.compute = compute
        per_worker, per_function = {}, {}
        for task in stream.data:
            per_worker[task["worker"]] = per_worker.get(task["worker"], 0) + 1
            # Where the workers' time goes: compute seconds per task function (_chunk_summary, _boundary_pairs,
            # _relabel_chunk, ...), summed over the workers.
            prefix = key_split(task["key"])
            for part in task.get("startstops", ()):
                if part.get("action") == "compute":
                    per_function[prefix] = per_function.get(prefix, 0.0) + part["stop"] - part["start"]
        digests = dask.compute([dask.delayed(digest)(b) for b in labels.to_delayed().ravel()])[0]
        table = {k: (v.get() if hasattr(v, "get") else np.asarray(v)) for k, v in table.items()}
    same_table = set(table) == set(ref_table) and all(np.array_equal(table[k], ref_table[k]) for k in ref_table)
    same_labels = digests == ref_digests
    seconds = end - start
    voxels = int(np.prod(shape))
    row = {"devices": list(devices), "chunks": "cupy" if cupy_chunks else "numpy", "seconds": seconds,
           "step1_chunks_s": marks[0] - start, "merge_on_client_s": merged - marks[0], "step2_relabel_s": end - merged,
           "Gvoxels_per_s": voxels / seconds / 1e9,
           # bytes over PCIe with host chunks: the chunk up in step 1 and again in step 2, the labels down
           "pcie_GB_per_s": (2 * voxels + voxels * 4) / seconds / 1e9 if not cupy_chunks else None,
           "tasks_per_worker": per_worker, "compute_s_per_function": per_function, "input_chunks_per_worker": held, "components": int(len(table["label"])),
           "identical_table": bool(same_table), "identical_labels": bool(same_labels)}
    print(f"{name} [{row['chunks']} chunks]: {seconds:.3f} s (step 1 {row['step1_chunks_s']:.3f}, merge "
          f"{row['merge_on_client_s']:.3f}, step 2 {row['step2_relabel_s']:.3f}), {row['Gvoxels_per_s']:.2f} Gvox/s, "
          f"tasks per worker {list(per_worker.values())}, identical table {same_table}, labels {same_labels}",
          flush=True)
    print("  worker compute seconds per function: " +
          ", ".join(f"{k} {v:.3f}" for k, v in sorted(per_function.items(), key=lambda kv: -kv[1])), flush=True)
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--side", type=int, default=1024)
    p.add_argument("--chunk", type=int, default=64, help="planes per chunk (slowest axis)")
    p.add_argument("--density", type=float, default=0.3)
    p.add_argument("--granularity", type=int, default=1, help="blocks of g³ pixels, as the benchmark's g")
    p.add_argument("--connectivity", default="face")
    p.add_argument("--budget", type=float, default=1e9, help="the reference's forced memory_budget, bytes")
    p.add_argument("--chunks", default="numpy,cupy", help="chunk types to run: numpy, cupy or both")
    p.add_argument("--json", default="two-gpus.json")
    p.add_argument("--backend", default="cuda", help="cpu: a dry run of the script without a GPU")
    args = p.parse_args()
    global GRANULARITY
    GRANULARITY = args.granularity
    os.environ["TWO_GPUS_GRANULARITY"] = str(args.granularity)  # the workers' planes()
    import cudacca

    shape = (args.side, args.side, args.side)
    image = planes(0, args.side, shape[1:], args.density)
    cudacca.label(image[:8], connectivity=args.connectivity, backend=args.backend)  # warm-up
    start = time.perf_counter()
    ref_labels, ref_table = cudacca.label(image, connectivity=args.connectivity, return_table=True,
                                          backend=args.backend, memory_budget=int(args.budget))
    ref_seconds = time.perf_counter() - start
    ref_table = {k: np.asarray(v) for k, v in ref_table.items()}
    ref_digests = [digest(ref_labels[z:z + args.chunk]) for z in range(0, args.side, args.chunk)]
    del image, ref_labels
    print(f"reference: in-process, GPU 0, memory_budget {args.budget:.3g} B (volume {np.prod(shape) * 5 / 1e9:.2f} GB "
          f"in + labels): {ref_seconds:.3f} s, {len(ref_table['label'])} components", flush=True)
    summary = {"side": args.side, "chunk": args.chunk, "density": args.density, "granularity": args.granularity, "connectivity": args.connectivity,
               "budget": args.budget, "reference_seconds": ref_seconds, "components": int(len(ref_table["label"])),
               "pcie": pcie_bound() if args.backend != "cpu" else None, "rows": {}}
    print("pcie:", summary["pcie"], flush=True)
    ok = True
    for chunk_type in args.chunks.split(","):
        cupy_chunks = chunk_type == "cupy"
        if cupy_chunks and args.backend == "cpu":
            continue
        for name, devices in (("1 worker, GPU 0", (0,)), ("2 workers, GPU 0", (0, 0)), ("2 workers, GPUs 0+1", (0, 1))):
            row = run(name, devices, args, shape, ref_table, ref_digests, cupy_chunks)
            summary["rows"][f"{chunk_type}: {name}"] = row
            ok = ok and row["identical_table"] and row["identical_labels"]
        rows = [summary["rows"][f"{chunk_type}: {n}"]["seconds"] for n in
                ("1 worker, GPU 0", "2 workers, GPU 0", "2 workers, GPUs 0+1")]
        print(f"{chunk_type} chunks: two GPUs {rows[0] / rows[2]:.2f}x one worker on one GPU, "
              f"{rows[1] / rows[2]:.2f}x two workers on one GPU", flush=True)
        summary[f"speedup_{chunk_type}"] = {"vs_1_worker": rows[0] / rows[2], "vs_2_workers_1_gpu": rows[1] / rows[2]}
    summary["identical"] = ok
    print(f"identical: {ok}", flush=True)
    with open(args.json, "w") as f:
        json.dump(summary, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
