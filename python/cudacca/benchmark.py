"""Times cudacca against the libraries users have, in one run on the same images: labels + a table of
label, area, bounding box and centroid.

    python -m cudacca.benchmark --help
    python -m cudacca.benchmark                      # 2-D 8192², 3-D 512³ at d = 0.2 .. 0.8, and spheres
    python -m cudacca.benchmark --quick              # small images, to check that everything runs

Rows (each where its library is installed and, for the GPU rows, a GPU is usable):
  cudacca numpy        host array in, labels + table out (numpy)
  cudacca numpy 1st    the numpy row with no host memory kept from earlier outputs (cudacca.free_host_cache() before
                       each call): a session's first call; the numpy row's calls reuse the memory of the ones before
  cudacca pinned       the numpy row with page-locked host memory (cupyx.empty_pinned) in and out: the labels
                       written into one `output` array reused by every call; both copies by DMA, without staging
  cudacca cupy         CuPy array in, CuPy labels + CuPy table out, nothing of the image through the host
  cc3d                 cc3d.connected_components + cc3d.statistics (CPU)
  opencv               cv2.connectedComponentsWithStats (CPU, its own threads; 2-D images only)
  skimage              skimage.measure.label + regionprops_table (CPU)
  cupyx+cucim          cupyx.scipy.ndimage.label + cucim.skimage.measure.regionprops_table (GPU, CuPy in/out)
  itk                  itk.ConnectedComponentImageFilter + LabelImageToShapeLabelMapFilter (CPU, pip's itk)
With --napari: the napari widget's run on one volume (cudacca/napari/_benchmark.py says what each row does).
With --zarr: a volume in a Zarr store, labelled chunk by chunk and written back to Zarr, by cudacca's Dask path
(labels + table) and by dask-image's ndmeasure.label (labels), on the same scheduler in the same run.
Bounds: the PCIe bound of a host call (image up, labels and table down, at the measured pinned copy rates) and the
device-memory bound of a device call (image read once, labels and table written once, at the measured device copy
rate); the table's bytes are those of its columns (label, area, bbox, centroid; 8 bytes each per object).
Times are the minimum of --repeat runs after a warm-up; every row labels the same pixels.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

import cudacca
from cudacca._arrays import itk_image_like
from cudacca._table import _to_numpy

BASIC = ("label", "area", "bbox", "centroid")
CPU_ROWS = ("cc3d", "opencv", "skimage", "itk")


def blobs(shape, density, granularity, seed):
    rng = np.random.default_rng(seed)
    coarse = tuple(-(-s // granularity) for s in shape)
    image = rng.random(coarse, dtype=np.float32) < density
    for axis in range(len(shape)):
        image = np.repeat(image, granularity, axis=axis)
    return np.ascontiguousarray(image[tuple(slice(0, s) for s in shape)]).astype(np.uint8)


def spheres(shape, count, radius, seed):
    """A realistic volume: `count` balls of radius ~`radius` (cells, nuclei, lesions), overlapping at times."""
    rng = np.random.default_rng(seed)
    image = np.zeros(shape, np.uint8)
    r = int(np.ceil(radius * 1.5))
    grid = np.indices((2 * r + 1,) * len(shape)) - r
    dist2 = (grid**2).sum(axis=0)
    for _ in range(count):
        c = [int(rng.integers(0, s)) for s in shape]
        rad = radius * rng.uniform(0.5, 1.5)
        ball = dist2 <= rad * rad
        sl_img, sl_ball = [], []
        for ci, s in zip(c, shape):
            lo, hi = ci - r, ci + r + 1
            sl_img.append(slice(max(lo, 0), min(hi, s)))
            sl_ball.append(slice(max(lo, 0) - lo, 2 * r + 1 - (hi - min(hi, s))))
        image[tuple(sl_img)] |= ball[tuple(sl_ball)]
    return image


def best(fn, repeat, sync=None, warmup=True):
    if warmup:
        fn()
        if sync:
            sync()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        if sync:
            sync()
        times.append(time.perf_counter() - t)
    return min(times), out


def rows_for(image, repeat, skip, connectivity):
    ndim = image.ndim
    full = connectivity == "full"
    results = {}

    def add(name, fn, sync=None):
        if name in skip:
            return
        cpu = name in CPU_ROWS
        try:
            # the CPU libraries take seconds on the large images and need no warm-up: one run each
            seconds, count = best(fn, 1 if cpu else repeat, sync, warmup=not cpu)
            results[name] = {"seconds": seconds, "objects": int(count)}
        except Exception as e:  # a library missing or failing: said in the report, not fatal
            results[name] = {"error": f"{type(e).__name__}: {e}"[:200]}

    def ours_numpy():
        labels, table = cudacca.label(image, connectivity=connectivity, return_table=True, properties=BASIC)
        return len(table["label"])

    add("cudacca numpy", ours_numpy)
    if "cudacca numpy 1st" not in skip and hasattr(cudacca, "free_host_cache"):
        # The same call with no memory kept from earlier outputs (set_host_cache_limit): as a session's first call,
        # or one whose earlier results are all still alive.
        times = []
        for _ in range(repeat):
            cudacca.free_host_cache()
            t = time.perf_counter()
            count = ours_numpy()
            times.append(time.perf_counter() - t)
        results["cudacca numpy 1st"] = {"seconds": min(times), "objects": int(count)}
    gpu = cudacca.cuda_available()[0]
    if gpu and "cudacca pinned" not in skip:
        try:
            import cupyx

            pinned_image = cupyx.empty_pinned(image.shape, image.dtype)
            pinned_image[...] = image
            pinned_labels = cupyx.empty_pinned(image.shape, np.uint32)

            def ours_pinned():
                labels, table = cudacca.label(pinned_image, connectivity=connectivity, return_table=True,
                                              properties=BASIC, output=pinned_labels)
                return len(table["label"])

            add("cudacca pinned", ours_pinned)
        except ImportError:
            pass
    if gpu:
        try:
            import cupy

            d_image = cupy.asarray(image)

            def ours_cupy():
                labels, table = cudacca.label(d_image, connectivity=connectivity, return_table=True, properties=BASIC)
                return len(table["label"])

            add("cudacca cupy", ours_cupy, cupy.cuda.runtime.deviceSynchronize)
        except ImportError:
            pass
    try:
        import cc3d

        c = (8 if full else 4) if ndim == 2 else (26 if full else 6)

        def theirs_cc3d():
            labels, n = cc3d.connected_components(image, connectivity=c, return_N=True)
            cc3d.statistics(labels)
            return n

        add("cc3d", theirs_cc3d)
    except ImportError:
        pass
    if ndim == 2:
        try:
            import cv2

            def theirs_opencv():
                # labels (int32), and per label its box, area and centroid; label 0 is the background
                n, labels, stats, centroids = cv2.connectedComponentsWithStats(image, connectivity=8 if full else 4,
                                                                               ltype=cv2.CV_32S)
                return n - 1

            add("opencv", theirs_opencv)
        except ImportError:
            pass
    try:
        from skimage import measure

        def theirs_skimage():
            labels = measure.label(image, connectivity=ndim if full else 1)
            return len(measure.regionprops_table(labels, properties=BASIC)["label"])

        add("skimage", theirs_skimage)
    except ImportError:
        pass
    if gpu:
        try:
            import cupy
            from cupyx.scipy import ndimage as cnd
            from cucim.skimage import measure as cmeasure

            d_image = cupy.asarray(image)
            structure = cupy.ones((3,) * ndim, bool) if full else None

            def theirs_cupyx():
                labels, n = cnd.label(d_image, structure=structure)
                t = cmeasure.regionprops_table(labels, properties=BASIC)
                return len(t["label"])

            add("cupyx+cucim", theirs_cupyx, cupy.cuda.runtime.deviceSynchronize)
        except ImportError:
            pass
    try:
        import itk

        itk_image = itk_image_like(image)

        def theirs_itk():
            # pip's itk wraps LabelImageToShapeLabelMapFilter for 8- and 16-bit labels: past 65535 objects
            # this row reports ITK's overflow error
            cc = itk.ConnectedComponentImageFilter[type(itk_image), itk.Image[itk.US, ndim]].New(itk_image)
            cc.SetFullyConnected(full)
            shape = itk.LabelImageToShapeLabelMapFilter.New(cc.GetOutput())
            shape.SetComputePerimeter(False)
            shape.Update()
            return shape.GetOutput().GetNumberOfLabelObjects()

        add("itk", theirs_itk)
    except ImportError:
        pass
    return results


LATENCY_SIZES = ((64, 64), (128, 128), (256, 256), (512, 512), (2048, 2048), (32, 32, 32), (64, 64, 64),
                 (128, 128, 128), (256, 256, 256))


def per_call(fn, seconds=0.3, most=200, sync=None):
    """Median and 90th percentile of one call, in ms, over as many calls as fit in `seconds` (at most `most`)."""
    fn()
    if sync:
        sync()
    times = []
    start = time.perf_counter()
    while len(times) < most and (len(times) < 5 or time.perf_counter() - start < seconds):
        t = time.perf_counter()
        fn()
        if sync:
            sync()
        times.append(time.perf_counter() - t)
    times = np.array(times) * 1e3
    return float(np.median(times)), float(np.percentile(times, 90)), len(times)


def call_bounds(image, objects, bounds):
    """The seconds a call on `image` takes at least: the PCIe bound of a host call (image up; uint32 labels and the
    table down: label, area, bbox, centroid, 2 + 3 * ndim values of 8 bytes per object) and the device-memory bound
    of a device call (the image read and the same outputs written once)."""
    out_bytes = image.size * 4 + objects * 8 * (2 + 3 * image.ndim)
    return (image.nbytes / bounds["h2d"] + out_bytes / bounds["d2h"], (image.nbytes + out_bytes) / bounds["device"])


def latency(args):
    """Per-call cost on small and medium images (the per-call table): blobs of 4-pixel cells at 40 % density,
    labels + table (label, area, bbox, centroid), face connectivity; with a GPU, each cudacca row's share of its
    bound (call_bounds), and cc3d's time over each row's."""
    gpu = cudacca.cuda_available()[0]
    bounds = transfer_bounds() if gpu else None
    print(f"cudacca {cudacca.__version__}; GPU: {cudacca.cuda_available()}; bounds: {bounds}", flush=True)
    rows = {}
    for shape in LATENCY_SIZES:
        image = blobs(shape, 0.4, 4, 7)
        name = "x".join(map(str, shape))
        r = rows[name] = {}

        def ours(backend, arr=image, sync=None):
            return lambda: cudacca.label(arr, return_table=True, properties=BASIC, backend=backend)

        r["cudacca numpy, auto"] = per_call(ours("auto"))
        r["cudacca numpy, cpu"] = per_call(ours("cpu"))
        if gpu:
            r["cudacca numpy, cuda"] = per_call(ours("cuda"))
            try:
                import cupy

                d = cupy.asarray(image)
                r["cudacca cupy"] = per_call(ours("auto", d), sync=cupy.cuda.runtime.deviceSynchronize)
                from cupyx.scipy import ndimage as cnd

                r["cupyx label, host in/out (labels only)"] = per_call(lambda: cnd.label(cupy.asarray(image))[0].get())
            except ImportError:
                pass
        try:
            import cc3d

            c = 4 if image.ndim == 2 else 6
            r["cc3d + statistics"] = per_call(lambda: cc3d.statistics(cc3d.connected_components(image, connectivity=c)))
        except ImportError:
            pass
        objects = len(cudacca.label(image, return_table=True, properties=BASIC, backend="auto")[1]["label"])
        r["auto chose"] = cudacca.last_backend()[0]
        print(f"\n{name}: {objects} objects; auto chose {r['auto chose']}", flush=True)
        pcie, device = call_bounds(image, objects, bounds) if bounds else (None, None)
        cc3d_ms = r.get("cc3d + statistics", (None,))[0]
        for row, v in r.items():
            if isinstance(v, str):
                continue
            line = f"  {row:40s} {v[0]:8.3f} ms median, {v[1]:8.3f} 90th percentile ({v[2]} calls)"
            if row.startswith("cudacca") and bounds:
                bound = device if row.endswith("cupy") else pcie
                kind = "device-memory" if row.endswith("cupy") else "PCIe"
                line += f"  {100 * bound * 1e3 / v[0]:5.1f} % of the {kind} bound ({bound * 1e3:.4f} ms)"
            if row.startswith("cudacca") and cc3d_ms:
                line += f"  cc3d {cc3d_ms / v[0]:5.1f}x this"
            print(line, flush=True)
        if bounds:
            r["pcie bound ms"], r["device bound ms"] = pcie * 1e3, device * 1e3
    # The batch target: 1,000 images of 256² (labels + table) against one 8192² image of the same
    # pixels and against a cc3d loop over the same images.
    stack = np.stack([blobs((256, 256), 0.4, 4, 100 + i) for i in range(1000)])
    big = blobs((8192, 8192), 0.4, 4, 7)  # the same number of pixels (67 M)
    batch = rows["batch 1000x256x256"] = {}
    batch["cudacca label_batch, numpy"] = per_call(
        lambda: cudacca.label_batch(stack, return_table=True), seconds=1.0, most=5)
    batch["cudacca label, numpy, one 8192x8192"] = per_call(
        lambda: cudacca.label(big, return_table=True, properties=BASIC), seconds=1.0, most=5)
    batch["cudacca label loop, numpy"] = per_call(
        lambda: [cudacca.label(im, return_table=True, properties=BASIC) for im in stack], seconds=1.0, most=3)
    if gpu:
        try:
            import cupy

            d_stack, d_big = cupy.asarray(stack), cupy.asarray(big)
            sync = cupy.cuda.runtime.deviceSynchronize
            batch["cudacca label_batch, cupy"] = per_call(
                lambda: cudacca.label_batch(d_stack, return_table=True), seconds=1.0, most=10, sync=sync)
            batch["cudacca label, cupy, one 8192x8192"] = per_call(
                lambda: cudacca.label(d_big, return_table=True, properties=BASIC), seconds=1.0, most=10, sync=sync)
        except ImportError:
            pass
    try:
        import cc3d

        batch["cc3d loop"] = per_call(
            lambda: [cc3d.statistics(cc3d.connected_components(im, connectivity=4)) for im in stack], seconds=1.0, most=3)
    except ImportError:
        pass
    print("batch 1000x256x256", {k: f"{v[0]:.2f}/{v[1]:.2f} ms ({v[2]})" for k, v in batch.items()}, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"latency": rows}, f, indent=1)
    return 0


def transfer_bounds():
    """Pinned host<->device and device<->device copy rates (bytes/s), or None without CuPy and a GPU."""
    try:
        import cupy
    except ImportError:
        return None
    n = 1 << 28
    pinned = cupy.cuda.alloc_pinned_memory(n)
    host = np.frombuffer(pinned, np.uint8, n)
    dev = cupy.empty(n, np.uint8)
    dev2 = cupy.empty(n, np.uint8)
    sync = cupy.cuda.runtime.deviceSynchronize
    h2d, _ = best(lambda: dev.set(host), 5, sync)
    d2h, _ = best(lambda: dev.get(out=host), 5, sync)
    d2d, _ = best(lambda: dev2.__setitem__(Ellipsis, dev), 5, sync)
    return {"h2d": n / h2d, "d2h": n / d2h, "device": 2 * n / d2d}


def zarr_rows(args):
    """cudacca.label(dask array) against dask_image.ndmeasure.label on one Zarr volume, both read from and
    written to Zarr on Dask's default (threaded) scheduler; the component counts must agree."""
    import os
    import tempfile

    import dask
    import dask.array as da
    import scipy.ndimage
    from dask_image import ndmeasure

    side, chunk = args.size3d, args.zarr_chunk
    report = {"zarr": [], "dask": dask.__version__}
    with tempfile.TemporaryDirectory() as folder:
        for d in [float(x) for x in args.densities.split(",")]:
            source = os.path.join(folder, f"in{d}.zarr")
            da.from_array(blobs((side,) * 3, d, args.granularity, 4), chunks=chunk).to_zarr(source)
            full = args.connectivity == "full"
            structure = scipy.ndimage.generate_binary_structure(3, 3 if full else 1)

            def ours(d=d):
                labels, table = cudacca.label(da.from_zarr(source), connectivity=args.connectivity,
                                              return_table=True)
                labels.to_zarr(os.path.join(folder, f"ours{d}.zarr"), overwrite=True)
                return len(table["label"])

            def theirs(d=d):
                labels, count = ndmeasure.label(da.from_zarr(source), structure)
                count = int(count.compute())
                labels.to_zarr(os.path.join(folder, f"theirs{d}.zarr"), overwrite=True)
                return count

            row = {"image": f"3D {side}³ d={d} g={args.granularity}, chunks {chunk}³", "pixels": side ** 3}
            for name, fn in (("cudacca dask", ours), ("dask-image", theirs)):
                seconds, count = best(fn, args.repeat)
                row[name] = {"seconds": seconds, "objects": count}
            if row["cudacca dask"]["objects"] != row["dask-image"]["objects"]:
                row["error"] = "component counts differ"
            report["zarr"].append(row)
            ratio = row["dask-image"]["seconds"] / row["cudacca dask"]["seconds"]
            print(f"{row['image']}: cudacca (labels + table) {row['cudacca dask']['seconds']:.3f} s, "
                  f"dask-image (labels) {row['dask-image']['seconds']:.3f} s -> {ratio:.1f}x; "
                  f"{row['cudacca dask']['objects']} / {row['dask-image']['objects']} objects", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if any("error" in r for r in report["zarr"]) else 0


def class_map(side, classes, seed):
    """A segmentation-like volume: 8³ blocks each of one of `classes` classes (0, background, as likely as any
    class), so that a class's blocks touch into components of every size, and 1 % of the voxels flipped to a
    random class (islands): what "keep the largest component of each class" cleans."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, classes + 1, size=(-(-side // 8),) * 3, dtype=np.int64)
    image = np.repeat(np.repeat(np.repeat(coarse, 8, 0), 8, 1), 8, 2)[:side, :side, :side]
    flip = rng.random(image.shape) < 0.01
    image[flip] = rng.integers(1, classes + 1, size=int(flip.sum()))
    dtype = np.uint8 if classes < 256 else np.uint16
    return np.ascontiguousarray(image.astype(dtype))


def multiclass_rows(args):
    """The multi-class row: the largest component of each class of a --size3d³ volume of --classes classes, written
    back as the class (nnU-Net's post-processing), by cudacca (one multi-label pass), cc3d (a largest_k loop over
    the classes, as users write it, and its multi-label labeling + statistics) and MONAI's
    KeepLargestConnectedComponent where installed. Each result's kept voxels per class must agree."""
    import cc3d

    side, classes = args.size3d, args.classes
    image = class_map(side, classes, 5)
    full = args.connectivity == "full"
    conn = 26 if full else 6
    values = np.unique(image)
    values = values[values != 0]

    def ours():
        return cudacca.label(image, connectivity=args.connectivity, multilabel=True, per_class=True, keep_largest=1,
                             class_values=True)

    def cc3d_loop():
        out = np.zeros_like(image)
        for c in values:
            out[cc3d.largest_k(image == c, k=1, connectivity=conn, binary_image=True) > 0] = c
        return out

    def cc3d_multilabel():
        labels = cc3d.connected_components(image, connectivity=conn)
        counts = cc3d.statistics(labels)["voxel_counts"]
        first = np.zeros(len(counts), np.int64)  # each label's class, from one of its voxels
        flat = labels.ravel()
        first[flat] = image.ravel()
        keep = np.zeros(len(counts), bool)
        for c in values:
            members = np.flatnonzero(first == c)
            members = members[members != 0]
            if members.size:
                keep[members[np.argmax(counts[members])]] = True
        return np.where(keep[labels], image, 0).astype(image.dtype)

    def monai():
        from monai.transforms import KeepLargestConnectedComponent

        transform = KeepLargestConnectedComponent(applied_labels=[int(c) for c in values], is_onehot=False,
                                                  independent=True, connectivity=3 if full else 1)
        try:
            import torch

            if torch.cuda.is_available():  # MONAI's GPU path (cuCIM's label where installed, else its CPU fallback)
                out = transform(torch.as_tensor(image[None], device="cuda"))
                return out.cpu().numpy()[0] if hasattr(out, "cpu") else np.asarray(out)[0]
        except ImportError:
            pass
        return np.asarray(transform(image[None]))[0]

    row = {"image": f"3D {side}³, {classes} classes, 8³ blocks + 1 % islands", "pixels": int(image.size),
           "backend": None}
    reference = None
    for name, fn in (("cudacca", ours), ("cc3d largest_k loop", cc3d_loop), ("cc3d multilabel", cc3d_multilabel),
                     ("monai", monai)):
        try:
            seconds, out = best(fn, 1 if name != "cudacca" else args.repeat, warmup=name == "cudacca")
        except Exception as e:  # a library missing or failing: said in the report
            row[name] = {"error": f"{type(e).__name__}: {e}"[:200]}
            continue
        kept = np.bincount(out.ravel(), minlength=int(values.max()) + 1)[1:]
        row[name] = {"seconds": seconds}
        if reference is None:
            reference = kept
        elif not np.array_equal(kept, reference):
            row[name]["error"] = "kept voxels per class differ from cudacca's"
        if name == "cudacca":
            row["backend"] = cudacca.last_backend()[1]
    print(f"{row['image']} ({row['backend']}):", flush=True)
    for name in ("cudacca", "cc3d largest_k loop", "cc3d multilabel", "monai"):
        r = row[name]
        if "seconds" in r:
            extra = "" if name == "cudacca" else f"  cudacca {r['seconds'] / row['cudacca']['seconds']:.1f}x faster"
            print(f"  {name:20s} {r['seconds']:8.3f} s{extra}{'  ' + r['error'] if 'error' in r else ''}", flush=True)
        else:
            print(f"  {name:20s} {r['error']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"multiclass": row}, f, indent=1)
    return 1 if any("seconds" in r and "error" in r for r in row.values() if isinstance(r, dict)) else 0


def cc3d_option_rows(args):
    """Rows for the options cc3d has beside plain labeling, on a --size2d² and a --size3d³ image, against cc3d on the
    same pixels, each result checked against cc3d's: 18-connectivity (3-D), periodic boundaries (8 in 2-D, 6 in 3-D),
    value tolerance (delta 2 at 4 and 6, where cc3d 4.1.1 follows the definition) and contacts (pairs and neighbor
    counts at 4 and 6). Ours with numpy arrays (automatic backend); where CuPy and a GPU are there, also with CuPy
    arrays and with numpy arrays on the CPU engine (the machine without a GPU)."""
    import cc3d

    try:
        import cupy
    except ImportError:
        cupy = None
    on_gpu = cupy is not None and cudacca.cuda_available()[0]
    report = []
    dims = [int(d) for d in args.dims.split(",")]
    for ndim, side in ((2, args.size2d), (3, args.size3d)):
        if ndim not in dims:
            continue
        shape = (side,) * ndim
        binary = blobs(shape, 0.5, max(1, args.granularity), 4)
        values = (binary * np.random.default_rng(5).integers(1, 10, size=shape)).astype(np.uint8)
        classes = cudacca.label(values, multilabel=True)  # a label image whose labels touch
        face = 4 if ndim == 2 else 6
        cases = [] if ndim == 2 else [
            ("conn 18", binary, lambda a, be: cudacca.label(a, connectivity=18, backend=be),
             lambda: cc3d.connected_components(binary, connectivity=18)),
        ]
        cases += [
            ("periodic", binary, lambda a, be: cudacca.label(a, connectivity=2 if ndim == 2 else 1, periodic=True,
                                                     backend=be),
             lambda: cc3d.connected_components(binary, connectivity=8 if ndim == 2 else 6, periodic_boundary=True)),
            ("delta 2", values, lambda a, be: cudacca.label(a, connectivity=1, delta=2, backend=be),
             lambda: cc3d.connected_components(values, connectivity=face, delta=2)),
            ("contacts", classes, lambda a, be: cudacca.contacts(a, connectivity=1, backend=be),
             lambda: cc3d.contacts(classes, connectivity=face, surface_area=False)),
        ]
        for name, image, ours, theirs in cases:
            row = {"image": f"{ndim}D {side}{'²' if ndim == 2 else '³'}", "option": name, "pixels": int(image.size)}
            seconds, reference = best(theirs, 1, warmup=False)
            row["cc3d"] = seconds
            runs = [("numpy", image, None, "auto")]
            if on_gpu:
                runs += [("cupy", cupy.asarray(image), cupy.cuda.Device().synchronize, "auto"),
                         ("cpu", image, None, "cpu")]
            for lib, array, sync, backend in runs:
                seconds, out = best(lambda: ours(array, backend), args.repeat, sync=sync)
                if name == "contacts":
                    got = {(int(a), int(b)): float(n) for a, b, n in
                           zip(*(_to_numpy(out[k]) for k in ("label_1", "label_2", "num_contacts")))}
                    same = got == reference
                else:
                    same = np.array_equal(_to_numpy(out), reference)
                row[f"cudacca {lib}"] = seconds
                row[f"cudacca {lib} equals cc3d"] = bool(same)
            report.append(row)
            line = f"{row['image']:10s} {name:9s} cc3d {row['cc3d'] * 1e3:10.2f} ms"
            for lib in ("numpy", "cupy", "cpu"):
                if f"cudacca {lib}" in row:
                    line += (f"  cudacca {lib} {row[f'cudacca {lib}'] * 1e3:9.2f} ms"
                             f" ({row['cc3d'] / row[f'cudacca {lib}']:.1f}x"
                             f"{'' if row[f'cudacca {lib} equals cc3d'] else ', DIFFERS from cc3d'})")
            print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cc3d_options": report}, f, indent=1)
    return 0 if all(v for r in report for k, v in r.items() if k.endswith("equals cc3d")) else 1


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m cudacca.benchmark", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="512² and 64³ images: checks that every row runs")
    p.add_argument("--size2d", type=int, default=8192, help="side of the 2-D images (default 8192)")
    p.add_argument("--size3d", type=int, default=512, help="side of the 3-D images (default 512)")
    p.add_argument("--densities", default="0.2,0.4,0.6,0.8", help="foreground densities (default 0.2,0.4,0.6,0.8)")
    p.add_argument("--granularity", type=int, default=1, help="blob cell size in pixels (default 1: the hard case)")
    p.add_argument("--connectivity", choices=("face", "full"), default="full")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per row (the minimum is reported)")
    p.add_argument("--skip", default="", help="comma-separated rows to leave out, e.g. 'skimage,itk'")
    p.add_argument("--blob-skip", default="",
                   help="rows to leave out on the random images only, e.g. 'skimage' (minutes at 8192²)")
    p.add_argument("--cpu-densities", default=None,
                   help="run the CPU libraries (cc3d, skimage, itk) only at these densities (and on the spheres)")
    p.add_argument("--json", help="also write the results to this JSON file")
    p.add_argument("--latency", action="store_true",
                   help="instead: the per-call cost on 64² .. 2048² and 32³ .. 256³ (median/p90 of many calls)")
    p.add_argument("--zarr", action="store_true",
                   help="instead: a --size3d³ Zarr volume through cudacca's Dask path and dask-image's ndmeasure.label")
    p.add_argument("--zarr-chunk", type=int, default=128, help="the Zarr volume's chunk side (default 128)")
    p.add_argument("--multiclass", action="store_true",
                   help="instead: the largest component of each class of a --size3d³ multi-class volume, "
                        "against cc3d and MONAI")
    p.add_argument("--dims", default="2,3", help="--cc3d-options: the image dimensions to run (default 2,3)")
    p.add_argument("--classes", type=int, default=100, help="--multiclass: the number of classes (default 100)")
    p.add_argument("--napari", action="store_true",
                   help="instead: the napari widget's run on a --size3d³ volume against scikit-image and cc3d")
    p.add_argument("--cc3d-options", action="store_true",
                   help="instead: periodic boundaries, value tolerance (delta) and contacts against cc3d on a "
                        "--size2d² and a --size3d³ image")
    args = p.parse_args(argv)
    if args.latency:
        return latency(args)
    if args.zarr:
        return zarr_rows(args)
    if args.multiclass:
        return multiclass_rows(args)
    if args.napari:
        from .napari._benchmark import napari_rows

        return napari_rows(args)
    if args.quick:
        args.size2d, args.size3d = 512, 64
    if args.cc3d_options:
        return cc3d_option_rows(args)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    densities = [float(d) for d in args.densities.split(",")]
    bounds = transfer_bounds() if cudacca.cuda_available()[0] else None
    cpu_densities = densities if args.cpu_densities is None else [float(d) for d in args.cpu_densities.split(",")]
    images = []
    for d in densities:
        images.append((f"2D {args.size2d}² d={d}", d, lambda d=d: blobs((args.size2d,) * 2, d, args.granularity, 1)))
    for d in densities:
        images.append((f"3D {args.size3d}³ d={d}", d, lambda d=d: blobs((args.size3d,) * 3, d, args.granularity, 2)))
    n_spheres = max(50, (args.size3d // 8) ** 3 // 8)
    images.append((f"3D {args.size3d}³ {n_spheres} spheres", None,
                   lambda: spheres((args.size3d,) * 3, n_spheres, 4.0, 3)))
    print(f"cudacca {cudacca.__version__}; GPU: {cudacca.cuda_available()}; bounds: {bounds}", flush=True)
    report = {"bounds": bounds, "images": []}
    for name, density, make in images:
        image = make()
        image_skip = set(skip)
        if density is not None:
            image_skip |= {s.strip() for s in args.blob_skip.split(",") if s.strip()}
            if density not in cpu_densities:
                image_skip |= set(CPU_ROWS)
        rows = rows_for(image, args.repeat, image_skip, args.connectivity)
        entry = {"image": name, "pixels": int(image.size), "rows": rows}
        if bounds:
            objects = next((r["objects"] for r in rows.values() if "objects" in r), 0)
            entry["pcie_bound_s"], entry["device_bound_s"] = call_bounds(image, objects, bounds)
        report["images"].append(entry)
        print(f"\n{name}: {image.size / 1e6:.1f} M pixels", flush=True)
        ours = rows.get("cudacca cupy", rows.get("cudacca numpy", {})).get("seconds")
        for row, r in rows.items():
            if "error" in r:
                print(f"  {row:16s} {r['error']}")
                continue
            line = f"  {row:16s} {r['seconds'] * 1e3:10.2f} ms  {image.size / r['seconds'] / 1e9:7.3f} Gpx/s  {r['objects']:9d} objects"
            if row.startswith("cudacca") and bounds:
                bound = entry["device_bound_s"] if row.endswith("cupy") else entry["pcie_bound_s"]
                line += f"  {100 * bound / r['seconds']:5.1f} % of the {'device-memory' if row.endswith('cupy') else 'PCIe'} bound"
            elif not row.startswith("cudacca") and "seconds" in rows.get("cudacca numpy", {}):
                mine = rows["cudacca cupy"]["seconds"] if row == "cupyx+cucim" and "cudacca cupy" in rows else rows["cudacca numpy"]["seconds"]
                line += f"  cudacca {r['seconds'] / mine:7.1f}x faster"
                first = rows.get("cudacca numpy 1st", {}).get("seconds")
                if first and row != "cupyx+cucim":
                    line += f" ({r['seconds'] / first:.1f}x on a first call)"
            print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
