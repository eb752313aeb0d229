"""`python -m cudacca.benchmark --napari`: the napari widget's run against the same work done with the libraries
napari users have, on one volume (a --size3d³ float32 image of blobs and noise, thresholded, full connectivity;
labels and a table of label, area, bbox and centroid).

Rows, each where its library is installed:
  widget run, auto / cpu   what the widget's worker runs (cudacca.napari._compute.run: threshold, label, table as a
                           DataFrame), without Qt, on the automatic backend and on the CPU engine
  skimage                  the threshold, skimage.measure.label and regionprops_table (napari-skimage-regionprops'
                           measurements are regionprops_table's)
  napari-skimage-regionprops  its regionprops_table function on the same labels (measurements only)
  cc3d                     the threshold, cc3d.connected_components and cc3d.statistics
"""

from __future__ import annotations

import json

import numpy as np

import cudacca
from . import _compute
from ..benchmark import best, blobs


def volume(side, seed=5):
    """Blobs of 4-voxel cells at 40 % with Gaussian noise: a thresholded microscopy-like volume."""
    rng = np.random.default_rng(seed)
    image = blobs((side,) * 3, 0.4, 4, seed).astype(np.float32) * 100
    image += rng.normal(0, 20, image.shape).astype(np.float32)
    return image


def napari_rows(args):
    side = args.size3d
    image = volume(side)
    lower = 50.0
    settings = _compute.Settings(lower=lower, connectivity="full", spatial_dims=3)
    rows = {}
    objects = None
    for backend in ("auto", "cpu"):
        settings.backend = backend
        # after a warm-up: the engine made, pandas imported
        seconds, result = best(lambda: _compute.run(image, settings), args.repeat)
        rows[f"widget run, {backend}"] = {"seconds": seconds, "objects": len(result.table),
                                          "backend": result.backend}
        objects = len(result.table) if objects is None else objects
    try:
        from skimage import measure

        def skimage_run():
            labels = measure.label(image >= lower, connectivity=3)
            return labels, measure.regionprops_table(labels, properties=("label", "area", "bbox", "centroid"))

        seconds, (labels, table) = best(skimage_run, 1, warmup=False)
        rows["skimage"] = {"seconds": seconds, "objects": len(table["label"])}
        try:
            import napari_skimage_regionprops as nsr

            seconds, table = best(lambda: nsr.regionprops_table(image, labels, size=True, intensity=False,
                                                                position=True), 1, warmup=False)
            rows["napari-skimage-regionprops (measurements only)"] = {"seconds": seconds,
                                                                      "objects": len(table["label"])}
        except ImportError:
            pass
    except ImportError:
        pass
    try:
        import cc3d

        def cc3d_run():
            labels = cc3d.connected_components((image >= lower).astype(np.uint8), connectivity=26)
            return cc3d.statistics(labels)

        seconds, stats = best(cc3d_run, 1, warmup=False)
        rows["cc3d"] = {"seconds": seconds, "objects": len(stats["voxel_counts"]) - 1}
    except ImportError:
        pass
    print(f"napari widget run on a {side}³ float32 volume (threshold, full connectivity, labels + table); "
          f"GPU: {cudacca.cuda_available()}", flush=True)
    mine = rows["widget run, auto"]["seconds"]
    for name, row in rows.items():
        if row["objects"] != objects:
            row["error"] = f"{row['objects']} objects, the widget's run {objects}"
        note = f"  ({row['backend']})" if "backend" in row else f"  widget run {row['seconds'] / mine:6.1f}x faster"
        print(f"  {name:48s} {row['seconds'] * 1e3:10.1f} ms  {row['objects']:8d} objects{note}"
              + (f"  ERROR: {row['error']}" if "error" in row else ""), flush=True)
    report = {"napari": {"image": f"3D {side}³ float32 blobs + noise, threshold {lower}", "rows": rows}}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 1 if any("error" in r for r in rows.values()) else 0
