#!/usr/bin/env python3
"""Print the Markdown tables of docs/performance.md from the benchmark results kept beside this script.

usage: python3 examples/benchmark/results/make_tables.py                              # print the tables
       python3 examples/benchmark/results/make_tables.py --check docs/performance.md    # each table on the page?

Standard library only. Each table is printed under a '### ' heading naming the section of
docs/performance.md it belongs to and the file(s) it comes from; README.md in this folder says what each file
is (device, date, command). Every figure is read from those files: nothing here is typed in by hand except the
A100 figures of the paper's Table 1 (Lemaitre et al., ICASSP 2021), which the ratios compare against.
"""
import json
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return json.load(f)


def num(x):
    """3 significant digits; whole numbers with thousands separators from 1,000 on."""
    if x >= 999.5:
        return f"{round(x):,}"
    return f"{x:.3g}"


def ratio(x):
    """A speed-up: one decimal below 100, whole above."""
    return f"{x:.1f}×" if x < 99.95 else f"{round(x):,}×"


def sig(x, digits=3):
    """`digits` significant digits, trailing zeros kept (1.00, 38.0, 110)."""
    return f"{x:#.{digits}g}".rstrip(".")


def ms(x):
    """Milliseconds: 3 decimals below 10 ms, one above."""
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def section(title, sources, text):
    print(f"### {title}\n\n({', '.join(sources)})\n\n{text}\n")


# ---------------------------------------------------------------------------------------------- user's path
USER_PATH = ("h100-2026-11-23e-user-path-2d.json", "h100-2026-11-23e-user-path-3d-conn6.json",
             "h100-2026-11-23e-user-path-3d-conn26.json")


def image_name(dimension, size):
    return f"2D {size}²" if dimension == 2 else f"3D {size}³"


def user_path():
    rows, split, memory, label_only = [], [], [], []
    for name in USER_PATH:
        up = load(name)["user_path"]
        for s in sorted(up["summary"], key=lambda s: (s["connectivity"], s["granularity"])):
            size = next(r["size"] for r in up["rows"] if r["dimension"] == s["dimension"])
            rows.append([image_name(s["dimension"], size), s["connectivity"], s["granularity"], num(s["cuda_mpix_s"]),
                         num(s["cpu_engine_mpix_s"]), num(s["itk_mpix_s"]), ratio(s["cuda_vs_itk"]),
                         ratio(s["cpu_engine_vs_itk"]), num(s["paper_metric_device_resident_mpix_s"])])
        # the largest object count of the face-connectivity runs: g = 1, d = 0.2
        for r in up["rows"]:
            if r["granularity"] == 1 and r["density"] == 0.2 and r["connectivity"] in (4, 6):
                img = image_name(r["dimension"], r["size"])
                for key, engine in (("cuda", "CUDA"), ("cpu_engine", "CPU engine")):
                    e = r[key]
                    sp = e["split"]
                    split.append([img, engine, f"{e['objects']:,}", f"{sp['analyze_s']:.3f}",
                                  f"{sp['write_labels_s']:.3f}", f"{sp['export_runs_s']:.3f}",
                                  f"{sp['build_labelmap_s']:.3f}", f"{e['seconds']:.3f}"])
                i = r["itk"]
                split.append([img, "ITK", f"{i['objects']:,}", f"CC {i['split']['connected_components_s']:.3f}", "",
                              "", f"shape {i['split']['shape_label_map_s']:.3f}", f"{i['seconds']:.3f}"])
                memory.append([img, f"{r['cuda']['objects']:,}"] + [
                    f"{r[k]['peak_extra_rss_bytes'] / 1e9:.1f} GB / {r[k]['held_rss_bytes'] / r[k]['objects']:,.0f} B"
                    for k in ("cuda", "cpu_engine", "itk")])
        run = "2D" if "2d" in name else ("3D, 6-conn. run" if "conn6" in name else "3D, 26-conn. run")
        for li in up["label_image_only"]:
            label_only.append([f"{run}: {li['image']}", f"{li['seconds'] * 1e3:.1f}", f"{li['split']['analyze_s'] * 1e3:.1f}",
                               f"{li['split']['write_labels_s'] * 1e3:.1f}", f"{li['pcie_bound_seconds'] * 1e3:.1f}",
                               f"{li['fraction_of_bound']:.0%}"])
    section("The user's path", USER_PATH, table(
        ["image", "conn", "g", "CUDA", "CPU engine", "ITK", "CUDA / ITK", "CPU engine / ITK",
         "device-resident analysis alone"], rows))
    section("The user's path: time split at the largest object count (g = 1, d = 0.2)", USER_PATH, table(
        ["image", "engine", "objects", "analyze", "label image", "lines", "LabelMap build", "total"], split))
    section("The user's path: label image alone against the PCIe bound", USER_PATH, table(
        ["run: image", "label image (ms)", "of which analysis", "of which the copy into the new label image",
         "PCIe bound (ms)", "of the bound"], label_only))
    section("The user's path: memory (peak above the inputs / held per object)", USER_PATH, table(
        ["image (g = 1, d = 0.2)", "objects", "CUDA", "CPU engine", "ITK's pipeline"], memory))


def huge_pages():
    names = ("h100-2026-11-23b-user-path-3d-g1-rusage.json", "h100-2026-11-23b-user-path-3d-g1-rusage-glibc-hugetlb.json")
    rows = []
    for name, heap in zip(names, ("default", "huge pages")):
        for r in load(name)["user_path"]["rows"]:
            c = r["cuda"]
            rows.append([heap, r["density"], f"{c['objects']:,}", f"{c['seconds']:.2f}",
                         f"{c['split']['build_labelmap_s']:.2f}", f"{c['held_rss_bytes'] / c['objects']:,.0f}"])
    section("The LabelMap build with huge pages for the heap (3D 512³, g = 1, 6-connectivity, CUDA engine)", names,
            table(["heap", "d", "objects", "update (s)", "LabelMap build (s)", "held per object (B)"], rows))


# ---------------------------------------------------------------------------------------------- post-processing
def post_processing():
    name = "h100-2026-11-23b-postprocessing-labelmap.json"
    pp = load(name)["post_processing"]
    labels, labelmap = [], []
    for r in pp:
        itk = r["itk_connected_components_s"] + r["itk_relabel_s"]
        labels.append([r["density"], f"{r['objects']:,}", f"{r['kept']:,}", f"{r['cuda_post_s']:.3f}",
                       f"{r['cuda_plain_s']:.3f}", f"{r['cpu_post_s']:.3f}",
                       f"{r['itk_connected_components_s']:.2f} + {r['itk_relabel_s']:.2f}", ratio(itk / r["cuda_post_s"])])
        itk_map = itk + r["itk_shape_label_map_s"]
        labelmap.append([r["density"], f"{r['kept']:,}", f"{r['cuda_post_labelmap_s']:.3f}",
                         f"{r['cpu_post_labelmap_s']:.2f}",
                         f"{r['itk_connected_components_s']:.2f} + {r['itk_relabel_s']:.2f} + "
                         f"{r['itk_shape_label_map_s']:.2f}", ratio(itk_map / r["cuda_post_labelmap_s"])])
    section("Post-processing: label image", [name], table(
        ["d", "objects", "kept", "CUDA", "CUDA without post-processing", "CPU engine", "ITK CC + Relabel",
         "ITK / CUDA"], labels))
    section("Post-processing: label image + LabelMap", [name], table(
        ["d", "kept", "CUDA", "CPU engine", "ITK CC + Relabel + ShapeLabelMap", "ITK / CUDA"], labelmap))


# ---------------------------------------------------------------------------------------------- per-call cost
def latency_cpp():
    name = "h100-2026-11-25c-latency-cpp-mapped-io.json"
    lat = load(name)["latency"]["rows"]
    images = []
    for r in lat:
        if "image" in r and r["image"] not in images:
            images.append(r["image"])
    cell = {(r["row"], r["image"]): r for r in lat if "image" in r}
    labels = {
        "facade, CUDA engine": "facade, CUDA engine: labels + basic columns",
        "facade, CPU engine": "facade, CPU engine",
        "facade, automatic": "facade, automatic",
        "filter, CUDA engine: label image": "filter, CUDA engine: label image",
        "filter, CUDA engine: label image + table": "filter, CUDA engine: label image + table",
        "filter, CUDA engine: label image + LabelMap": "filter, CUDA engine: label image + LabelMap",
        "filter, automatic: label image + table": "filter, automatic: label image + table",
    }
    rows = [[label] + [ms(cell[(row, i)]["median_ms"]) for i in images] for row, label in labels.items()]
    rows.append(["the automatic backend ran"] + [cell[("facade, automatic", i)]["engine"].upper() for i in images])
    rows.append(["filter (label image + table) / facade, CUDA"] + [
        f"{cell[('filter, CUDA engine: label image + table', i)]['median_ms'] / cell[('facade, CUDA engine', i)]['median_ms']:.2f}"
        for i in images])
    short = [i.replace("x", "×") for i in images]
    section("Per-call cost from C++", [name], table(["per call, ms (median)"] + short, rows))
    batch = [[r["engine"].upper(), f"{r['batch_median_ms']:.1f}", f"{r['one_image_median_ms']:.1f}",
              f"{r['one_image_median_ms'] / r['batch_median_ms']:.0%}", f"{r['loop_median_ms']:.1f}"]
             for r in lat if r["row"] == "batch"]
    section("Batches from C++ (1,000 images of 256²)", [name], table(
        ["facade, engine", "batch (ms)", "one image of the same pixels (ms)", "batch / one image (throughput)",
         "a loop of 1,000 calls (ms)"], batch))


def latency_python():
    name = "h200-2026-11-28d-latency-python-c11441c.json"
    lat = load(name)["latency"]
    images = [k for k in lat if not k.startswith("batch")]
    rows_ = ["cudacca numpy, auto", "cudacca numpy, cpu", "cudacca numpy, cuda", "cudacca cupy",
             "cupyx label, host in/out (labels only)", "cc3d + statistics"]
    rows = [[r] + [ms(lat[i][r][0]) for i in images] for r in rows_]
    rows.insert(1, ["the automatic backend ran"] + [lat[i]["auto chose"].upper() for i in images])
    section("Per-call cost from Python", [name], table(
        ["per call, ms (median)"] + [i.replace("x", "×") for i in images], rows))
    (key, b), = ((k, v) for k, v in lat.items() if k.startswith("batch"))
    images, side = re.match(r"batch (\d+)x(\d+)x", key).groups()
    rows = [["numpy in/out", ms(b["cudacca label_batch, numpy"][0]), ms(b["cudacca label, numpy, one 8192x8192"][0]),
             ms(b["cudacca label loop, numpy"][0]), num(b["cc3d loop"][0])],
            ["CuPy in/out", ms(b["cudacca label_batch, cupy"][0]), ms(b["cudacca label, cupy, one 8192x8192"][0]),
             "—", "—"]]
    section(f"Batches from Python ({int(images):,} images of {side}²)", [name], table(
        ["ms (median)", "cudacca label_batch", "one 8192² image, label", f"a loop of {int(images):,} label calls",
         "a cc3d loop"], rows))


LOOP = "loop of 1000 different 256x256 images, numpy auto"


def common_call():
    name = "h200-2026-11-28d-common-call-675365a.json"
    lat = load(name)["per_call_ms_median"]
    images = [k for k in lat if k != LOOP]
    rows_ = ["numpy, auto", "numpy, cpu", "numpy, cuda", "cupy"]
    rows = [[f"{r}, {path} path"] + [ms(lat[i][f"{r}, {path}"]) for i in images] for r in rows_
            for path in ("short", "general")]
    rows.append(["cc3d + statistics"] + [ms(lat[i]["cc3d + statistics"]) for i in images])
    rows.append(["cc3d / numpy auto, short path"] + [ratio(lat[i]["cc3d + statistics"] / lat[i]["numpy, auto, short"])
                                                      for i in images])
    section("The common call's short path against the general path (same process)", [name], table(
        ["per call, ms (median)"] + [i.replace("x", "×") for i in images], rows))
    loop = lat[LOOP]
    section("A loop of label() over 1,000 different 256² images, on each path (same process)", [name], table(
        ["ms (best of 2 rounds)", "short path", "general path"],
        [["numpy, auto", f"{loop['short']:.1f}", f"{loop['general']:.1f}"]]))


def crossover_h200():
    names = ("h200-2026-11-28d-crossover-1cfbbc1.json", "h200-2026-11-28d-crossover-675365a.json")
    before, after = (load(n) for n in names)
    rows = []
    for old, new in zip(before, after):
        faster = "CPU" if new["cpu_ms"] <= new["cuda_ms"] else "CUDA"
        rows.append(["×".join(map(str, new["shape"])), f"{new['pixels']:,}", f"{old['cpu_ms']:.3f}",
                     f"{new['cpu_ms']:.3f}", f"{old['cuda_ms']:.3f}", f"{new['cuda_ms']:.3f}", faster])
    section("The CPU engine's row scan: per call against the CUDA engine, before and after (ms)", list(names), table(
        ["image", "pixels", "CPU engine, before", "CPU engine, after", "CUDA engine, before", "CUDA engine, after",
         "faster after"], rows))


MERGE_FIND = (("halving (675365a)", "h200-2026-11-28d-merge-find-halving-675365a.json"),
              ("reads only", "h200-2026-11-28d-merge-find-read-only.json"),
              ("start node pointed at the root", "h200-2026-11-28d-merge-find-pointing-start.json"),
              ("reads only (c11441c)", "h200-2026-11-28d-merge-find-c11441c.json"))


def merge_find():
    runs = [load(n)["rows"] for _, n in MERGE_FIND]
    rows = []
    for i, first in enumerate(runs[0]):
        same = all(r[i]["digest"] == first["digest"] and r[i]["image"] == first["image"] for r in runs)
        rows.append([first["image"], first["connectivity"], f"{first['objects']:,}"] +
                    [f"{r[i]['ms']:.3f}" for r in runs] + ["yes" if same else "NO"])
    section("The merge's find, CuPy in/out, labels + table (ms, minimum of 5)", [n for _, n in MERGE_FIND], table(
        ["image", "connectivity", "objects"] + [k for k, _ in MERGE_FIND] + ["same labels"], rows))


# ---------------------------------------------------------------------------------------------- Python package
def python_package():
    name = "h100-2026-11-24-python-benchmark.json"
    bench = load(name)
    rows = []
    for im in bench["images"]:
        r = im["rows"]

        def t(k):
            return num(r[k]["seconds"] * 1e3) if k in r else "—"

        rows.append([im["image"], f"{r['cudacca cupy']['objects']:,}", t("cudacca cupy"),
                     f"{im['device_bound_s'] * 1e3:.2f}", t("cudacca numpy"), f"{im['pcie_bound_s'] * 1e3:.1f}",
                     t("cupyx+cucim"), t("cc3d"), t("skimage")])
    section("The Python package against other libraries (ms)", [name], table(
        ["image", "objects", "cudacca, CuPy in/out", "device-memory bound", "cudacca, numpy in/out", "PCIe bound",
         "cupyx label + cuCIM regionprops_table", "cc3d label + statistics", "scikit-image label + regionprops_table"],
        rows))


PYTHON_H200 = ("h200-2026-11-28a-python-benchmark-eec36d0.json", "h200-2026-11-28a-python-benchmark-0b108e0.json")


def bounds_with_table(bench, im):
    """(PCIe, device-memory) bounds in s of one image with the table's bytes counted (label, area, bbox, centroid:
    2 + 3 * ndim values of 8 bytes per object), from the run's measured copy rates: the earlier benchmark's own
    bounds counted the labels alone."""
    b = bench["bounds"]
    ndim = 2 if im["image"].startswith("2D") else 3
    objects = next(r["objects"] for r in im["rows"].values() if "objects" in r)
    out = im["pixels"] * 4 + objects * 8 * (2 + 3 * ndim)
    return im["pixels"] / b["h2d"] + out / b["d2h"], (im["pixels"] + out) / b["device"]


def python_host_device_h200(pair=PYTHON_H200, title="The Python package on an H200, before and after"):
    before, after = (load(n) for n in pair)
    rows = []
    for old, new in zip(before["images"], after["images"]):
        pcie, device = bounds_with_table(after, new)
        pcie_old, device_old = bounds_with_table(before, old)
        o, n = old["rows"], new["rows"]

        def t(r, k, bound):
            s = r[k]["seconds"]
            return f"{ms(s * 1e3)} ({100 * bound / s:.0f} %)"

        rows.append([new["image"], f"{n['cudacca numpy']['objects']:,}", f"{pcie * 1e3:.1f}",
                     t(o, "cudacca numpy", pcie_old), t(n, "cudacca numpy", pcie), t(n, "cudacca numpy 1st", pcie),
                     f"{device * 1e3:.2f}", t(o, "cudacca cupy", device_old), t(n, "cudacca cupy", device),
                     num(n["cc3d"]["seconds"] * 1e3) if "cc3d" in n else "—"])
    section(f"{title} (ms, % of the bound)", list(pair), table(
        ["image", "objects", "PCIe bound", "numpy, before", "numpy, after", "numpy, after, first call",
         "device-memory bound", "CuPy, before", "CuPy, after", "cc3d label + statistics"], rows))


NAPARI = (("c11441c: threshold in two passes and a conversion", "h200-2026-11-28d-napari-512-c11441c.json"),
          ("5588a31: threshold in one pass", "h200-2026-11-28d-napari-512-5588a31.json"))


def napari_widget():
    runs = [(label, load(n)["napari"]["rows"]) for label, n in NAPARI]
    names = list(runs[-1][1])
    rows = []
    for name in names:
        row = [name, f"{runs[-1][1][name]['objects']:,}"]
        for _, r in runs:
            row.append(f"{r[name]['seconds'] * 1e3:,.1f}" if name in r else "—")
        mine = runs[-1][1]["widget run, auto"]["seconds"]
        row.append("—" if name.startswith("widget") else f"{runs[-1][1][name]['seconds'] / mine:.0f}×")
        rows.append(row)
    section("The napari widget's run on 512³ against scikit-image and cc3d (ms)", [n for _, n in NAPARI], table(
        ["run", "objects"] + [label for label, _ in runs] + ["the widget's run (auto) faster, at 5588a31"], rows))


def python_host_device_h200_merge():
    python_host_device_h200(("h200-2026-11-28a-python-benchmark-0b108e0.json",
                             "h200-2026-11-28d-python-benchmark-c11441c.json"),
                            "The Python package on an H200, after the merge's read-only find")


def table_profile():
    name = "h200-2026-11-28a-table-profile.json"
    rounds = load(name)["rounds"]
    rows = []
    for i, case in enumerate(rounds["eec36d0"][0]):

        def best(build, key):
            return min(r[i][key] for r in rounds[build])

        def step(build, key):
            return min(r[i]["steps_ms"].get(key, 0.0) for r in rounds[build])

        rows.append([case["case"], f"{case['objects']:,}", f"{best('eec36d0', 'labels_ms'):.1f}",
                     f"{best('c877aeb', 'labels_ms'):.1f}", f"{best('eec36d0', 'labels_table_ms'):.1f}",
                     f"{best('c877aeb', 'labels_table_ms'):.1f}", f"{best('c877aeb', 'labels_table_first_ms'):.1f}",
                     f"{step('eec36d0', 'write_labels'):.1f} → {step('c877aeb', 'write_labels'):.1f}",
                     f"{step('eec36d0', 'write_basic_columns'):.1f} → {step('c877aeb', 'write_basic_columns'):.1f}",
                     f"{step('eec36d0', '_table.build') - step('eec36d0', '_table.write_basic'):.1f} → "
                     f"{step('c877aeb', '_table.build') - step('c877aeb', '_table.write_basic'):.1f}"])
    section("The host table: a numpy call's steps, before and after (ms)", [name], table(
        ["image", "objects", "labels, before", "labels, after", "labels + table, before", "labels + table, after",
         "after, first call", "label write", "basic columns", "label column and the rest"], rows))


# ---------------------------------------------------------------------------------------------- the paper's Table 1
# Lemaitre et al., ICASSP 2021, Table 1: average CCA throughput (Gpix/s), 8192², NVIDIA A100, 4-connectivity.
PAPER = {
    "naive": (0.966, 0.994, 0.985, 0.337),
    "HA": (4.22, 13.2, 25.8, 16.6),
    "HA+OTF": (14.6, 28.7, 59.3, 66.2),
    "HA+CD": (13.8, 23.9, 27.4, 16.6),
    "FLSL": (4.85, 19.1, 61.9, 244),
    "FLSL+OTF": (20.8, 65.1, 160, 238),
    "FLSL+CD": (24.5, 83.2, 170, 244),
}
OURS = {"naive": "a-naive", "HA": "a-ha4", "HA+OTF": "a-ha4-otf", "HA+CD": "a-ha4-cd",
        "FLSL": "a-flsl", "FLSL+OTF": "a-otf", "FLSL+CD": "a"}
SERIES = ("g1", "g4", "g16", "ones")
SERIES_NAMES = ("g = 1", "g = 4", "g = 16", "all ones")


def rates(report):
    """(mode, connectivity, series) -> (total pixels / total time, mean of the per-image rates), Gpix/s, from the
    minimum time of each image."""
    pixels = report["size"] ** 2
    times = defaultdict(list)
    for r in report["results"]:
        times[(r["mode"], r["connectivity"], r["granularity"])].append(r["min_ms"])
    return {k: (len(v) * pixels / (sum(v) * 1e6), sum(pixels / (t * 1e6) for t in v) / len(v))
            for k, v in times.items()}


def paper_table():
    name = "h100-2026-11-27c-8192-direct-e74add3.json"
    g = rates(load(name))
    rows = []
    for alg, mode in OURS.items():
        cells = []
        for s, paper in zip(SERIES, PAPER[alg]):
            total, mean = g[(mode, 4, s)]
            cells.append(f"{sig(total)} / {paper} ({sig(total / paper, 2)}×) [{sig(mean)}]")
        rows.append([alg] + cells)
    section("The paper's Table 1: H100 against the paper's A100 (4-connectivity)", [name],
            table(["algorithm"] + list(SERIES_NAMES), rows))


def buf_table():
    name = "h100-2026-11-27e-8192-buf-e6d41e2.json"
    g = rates(load(name))
    rows = []
    for mode, label in (("ccl-buf", "BUF labels, its own numbering"),
                        ("ccl-buf-raster", "BUF labels, raster order (ITK's numbering)"),
                        ("ccl-buf-halving", "BUF with a path-halving find, its own numbering"),
                        ("ccl-ours", "ours, labels only (raster order)"), ("b", "ours, labels + features"),
                        ("a", "ours, features only")):
        cells = []
        for s in SERIES:
            total, mean = g[(mode, 8, s)]
            cells.append(sig(total) if s == "ones" else f"{sig(total)} [{sig(mean)}]")
        rows.append([label] + cells)
    section("BUF against our labels (8-connectivity)", [name], table([""] + list(SERIES_NAMES), rows))


def transfers():
    name = "h100-2026-11-23e-transfers.json"
    t = load(name)["transfers"]
    rows = [["pinned host memory (the PCIe bound)", f"{t['pinned_to_device_gb_s']:.1f}", f"{t['pinned_to_host_gb_s']:.1f}"],
            ["ordinary (pageable) host memory, plain cudaMemcpy", f"{t['pageable_to_device_gb_s']:.1f}",
             f"{t['pageable_to_host_gb_s']:.1f}"],
            ["the engine's staged path from/to an ordinary buffer",
             f"{t['staged_to_device_gb_s']:.1f} ({t['staged_to_device_gb_s'] / t['pinned_to_device_gb_s']:.0%})",
             f"{t['staged_to_host_gb_s']:.1f} ({t['staged_to_host_gb_s'] / t['pinned_to_host_gb_s']:.0%})"]]
    section(f"Host-device copies of a {t['bytes'] / 1e6:.0f} MB buffer (GB/s)", [name],
            table(["", "to device", "to host"], rows))


# ---------------------------------------------------------------------------------------------- past one GPU
def large_volume(name="h100-2026-11-25d-large-volume-1700.json"):
    v = load(name)
    big, forced = v["large"], v["forced"]
    budget = float(re.search(r"under a (\S+) B budget", forced["what"]).group(1))
    rows = [[f"{big['shape'][0]}³ ({big['voxels'] / 1e9:.2f}·10⁹ voxels), default budget", f"{big['components']:,}",
             big["slabs"], f"{big['cuda_s']:.2f}", f"{big['cuda_first_s']:.2f}", f"{big['split']['analyze_s']:.2f}",
             f"{big['split']['write_labels_s']:.2f}", f"{big['cpu_engine_s']:.2f}",
             f"{big['pcie_bound_s']:.2f} ({big['fraction_of_bound']:.0%})"],
            [f"{forced['shape'][0]}³ under a {budget / 1e9:g} GB budget",
             f"{forced['components']:,}",
             forced["slabs"], f"{forced['cuda_s']:.2f}", f"{forced['cuda_first_s']:.2f}",
             f"{forced['split']['analyze_s']:.2f}", f"{forced['split']['write_labels_s']:.2f}",
             f"{forced['cpu_engine_s']:.2f}", f"whole, one slab: {forced['cuda_whole_s']:.2f}"]]
    same = all(x[k] for x in (big, forced) for k in ("labels_equal", "table_equal"))
    section(f"A volume above 2³² voxels (s), {name.split('-')[0].upper()}", [name], table(
        ["volume (uint8)", "components", "slabs", "CUDA engine", "first call", "of which the analysis",
         "of which the label image", "CPU engine, whole", "PCIe bound (CUDA's fraction of it)"], rows)
        + f"\n\nlabels and table equal to the CPU engine's: {same}")


def zarr():
    name = "cpu2-2026-11-25d-zarr-dask-image-256.json"
    z = load(name)
    rows = [[r["image"], f"{r['cudacca dask']['objects']:,}", f"{r['cudacca dask']['seconds']:.2f}",
             f"{r['dask-image']['seconds']:.1f}", ratio(r["dask-image"]["seconds"] / r["cudacca dask"]["seconds"])]
            for r in z["zarr"]]
    section("A Zarr volume through Dask (s)", [name], table(
        ["volume", "objects", "cudacca Dask path (labels + table)", "dask-image ndmeasure.label (labels only)", ""],
        rows))


def two_gpus():
    txt, js = "h100x2-2026-11-25g-two-gpus-1024-g4-first-pixels.txt", "h100x2-2026-11-25g-two-gpus-1024-g4-fe7d4f3.json"
    with open(os.path.join(HERE, txt), encoding="utf-8") as f:
        lines = f.read().splitlines()
    pattern = re.compile(r"^(.*) \[(numpy|cupy) chunks\]: ([\d.]+) s \(step 1 ([\d.]+), merge ([\d.]+), step 2 ([\d.]+)\)")
    runs = {}
    for line in lines:
        m = pattern.match(line)
        if m:
            runs[(m.group(1), m.group(2))] = "%s (%s / %s / %s)" % m.group(3, 4, 5, 6)
    earlier = load(js)["rows"]["cupy: 2 workers, GPUs 0+1"]
    runs.setdefault(("2 workers, GPUs 0+1", "cupy"), "%.3f (%.3f / %.3f / %.3f)*" % (
        earlier["seconds"], earlier["step1_chunks_s"], earlier["merge_on_client_s"], earlier["step2_relabel_s"]))
    reference = re.search(r"^reference: .*: ([\d.]+) s", lines[0]).group(1)
    rows = [[who, runs[(who, "numpy")], runs[(who, "cupy")]]
            for who in ("1 worker, GPU 0", "2 workers, GPU 0", "2 workers, GPUs 0+1")]
    rows.append(["reference: whole volume in one process, slabs (1 GB budget)", reference, ""])
    speedup = next(l for l in lines if l.startswith("numpy chunks: two GPUs"))
    section("Two GPUs of one host through Dask (s: total (step 1 / merge / step 2))", [txt, js], table(
        ["Dask workers (one thread each)", "NumPy chunks", "CuPy chunks"], rows)
        + f"\n\n{speedup}\n\n* from {js}, the run before (see the README); not reached in the later run")


# ---------------------------------------------------------------------------------------------- multi-class, intensity
def multiclass():
    name = "h100-2026-11-25f-multiclass-512-face.json"
    m = load(name)["multiclass"]
    base = m["cudacca"]["seconds"]
    rows = [["cudacca label(multilabel=True, per_class=True, keep_largest=1, class_values=True)", f"{base:.3f}", ""]]
    for k, label in (("cc3d largest_k loop", "cc3d largest_k loop over the classes"),
                     ("cc3d multilabel", "cc3d multi-label labeling + statistics + a mask"),
                     ("monai", "MONAI KeepLargestConnectedComponent on a CUDA tensor")):
        rows.append([label, f"{m[k]['seconds']:.2f}", ratio(m[k]["seconds"] / base)])
    section(f"Multi-class clean-up on the GPU: {m['image']}", [name], table(
        ["", "seconds", "cudacca faster by"], rows))
    names = ("cpu2-2026-11-25e-multiclass-256-face.json", "cpu2-2026-11-25e-multiclass-256-full.json")
    rows = []
    for n in names:
        m = load(n)["multiclass"]
        base = m["cudacca"]["seconds"]
        rows.append(["face (6)" if "face" in n else "full (26)", f"{base:.3f}",
                     f"{m['cc3d largest_k loop']['seconds']:.1f} ({ratio(m['cc3d largest_k loop']['seconds'] / base)})",
                     f"{m['cc3d multilabel']['seconds']:.3f} ({ratio(m['cc3d multilabel']['seconds'] / base)})"])
    section(f"Multi-class clean-up without a GPU ({m['backend']}): {m['image']}", names, table(
        ["connectivity", "cudacca (s)", "cc3d largest_k loop", "cc3d multi-label + statistics + mask"], rows))


def intensity():
    name = "h100-2026-11-25f-intensity-512-d05-final.json"
    rows = []
    for r in load(name)["intensity"]:
        itk = r["itk_connected_components_s"] + r["itk_statistics_label_map_s"]
        rows.append([r["density"], f"{r['objects']:,}"] +
                    [f"{r[k]:.3f}" for k in ("cuda_labels_s", "cuda_table_s", "cuda_labelmap_s", "cpu_labels_s",
                                              "cpu_table_s", "cpu_labelmap_s")] +
                    [f"{r['itk_connected_components_s']:.2f} + {r['itk_statistics_label_map_s']:.2f}",
                     ratio(itk / r["cuda_table_s"]), ratio(itk / r["cuda_labelmap_s"])])
    section("Intensity statistics, 3D 512³ (s)", [name], table(
        ["d", "objects", "CUDA labels", "CUDA + table", "CUDA + LabelMap", "CPU labels", "CPU + table",
         "CPU + LabelMap", "ITK CC + statistics", "ITK / CUDA table", "ITK / CUDA LabelMap"], rows))


def main():
    for f in (user_path, huge_pages, post_processing, latency_cpp, latency_python, python_package, python_host_device_h200, table_profile,
              paper_table, buf_table,
              transfers, large_volume, large_volume_h200, zarr, two_gpus, multiclass, intensity, common_call,
              crossover_h200, merge_find, python_host_device_h200_merge, napari_widget, python_peers_h200,
              stream_ordered_outputs, cpu_worker_pool):
        f()


STREAM_ORDER = ("4b00586", "f8817a5")


def stream_ordered_outputs():
    """Per call from Python, before and after the device outputs' ordering on the caller's stream: four rounds of
    `--latency` per build, alternating, one H200 machine; each cell the range of the rounds' medians."""
    names = {build: [f"h200-2026-11-29a-latency-python-{build}-{i}.json" for i in range(1, 5)] for build in STREAM_ORDER}
    runs = {build: [load(n)["latency"] for n in names[build]] for build in STREAM_ORDER}
    images = [k for k in runs["f8817a5"][0] if not k.startswith("batch")]

    def span(build, image, row):
        values = [r[image][row][0] for r in runs[build]]
        return f"{ms(min(values))}–{ms(max(values))}"

    def cc3d_over_auto(image):
        values = [r[image]["cc3d + statistics"][0] / r[image]["cudacca numpy, auto"][0] for r in runs["f8817a5"]]
        return f"{min(values):.1f}–{max(values):.1f}×"

    rows = [["CuPy in/out, before (4b00586)"] + [span("4b00586", i, "cudacca cupy") for i in images],
            ["CuPy in/out, after (f8817a5)"] + [span("f8817a5", i, "cudacca cupy") for i in images],
            ["numpy in/out, auto, after"] + [span("f8817a5", i, "cudacca numpy, auto") for i in images],
            ["the automatic backend ran"] + [runs["f8817a5"][0][i]["auto chose"].upper() for i in images],
            ["cc3d + statistics, after"] + [span("f8817a5", i, "cc3d + statistics") for i in images],
            ["cc3d / numpy auto, after"] + [cc3d_over_auto(i) for i in images]]
    section("Device outputs ordered on the caller's stream: per call from Python (ms, median; the range of 4 rounds)",
            names["4b00586"] + names["f8817a5"],
            table(["per call, ms"] + [i.replace("x", "×") for i in images], rows))
    batch = [[k for k in r if k.startswith("batch")][0] for r in runs["f8817a5"]]
    rows = []
    for lib in ("numpy", "cupy"):
        ratios = [r[b][f"cudacca label, {lib}, one 8192x8192"][0] / r[b][f"cudacca label_batch, {lib}"][0]
                  for r, b in zip(runs["f8817a5"], batch)]
        one = [r[b][f"cudacca label, {lib}, one 8192x8192"][0] for r, b in zip(runs["f8817a5"], batch)]
        stack = [r[b][f"cudacca label_batch, {lib}"][0] for r, b in zip(runs["f8817a5"], batch)]
        rows.append([lib, f"{ms(min(stack))}–{ms(max(stack))}", f"{ms(min(one))}–{ms(max(one))}",
                     f"{min(ratios):.2f}–{max(ratios):.2f}"])
    section("Batches of 1,000 × 256² against one 8192² image, after (ms, median; the range of 4 rounds)",
            names["f8817a5"], table(["input", "label_batch", "one 8192² image", "batch throughput / one image's"], rows))


PEERS = "h200-2026-11-29a-python-benchmark-f8817a5.json"


def python_peers_h200():
    """The whole benchmark with the peers in the same run: every cudacca row against its bound, the peers' times."""
    bench = load(PEERS)
    rows = []
    for im in bench["images"]:
        r = im["rows"]
        pcie, device = im["pcie_bound_s"], im["device_bound_s"]

        def ours(k, bound):
            s = r[k]["seconds"]
            return f"{ms(s * 1e3)} ({100 * bound / s:.0f} %)"

        def peer(k, mine):
            if k not in r or "seconds" not in r[k]:
                return "—"
            return f"{num(r[k]['seconds'] * 1e3)} ({ratio(r[k]['seconds'] / r[mine]['seconds'])})"

        rows.append([im["image"], f"{r['cudacca numpy']['objects']:,}", f"{pcie * 1e3:.2f}",
                     ours("cudacca numpy", pcie), ours("cudacca numpy 1st", pcie), ours("cudacca pinned", pcie),
                     f"{device * 1e3:.3f}", ours("cudacca cupy", device),
                     peer("cc3d", "cudacca numpy"), peer("opencv", "cudacca numpy"),
                     peer("cupyx+cucim", "cudacca cupy")])
    section("The Python package and its peers in one run on an H200 (ms; cudacca: % of the bound; peers: their time "
            "over cudacca's, numpy rows for the CPU peers, CuPy for cupyx+cuCIM)", [PEERS], table(
        ["image", "objects", "PCIe bound", "numpy", "numpy, first call", "page-locked in and out",
         "device-memory bound", "CuPy", "cc3d", "OpenCV", "cupyx + cuCIM"], rows))


def large_volume_h200():
    large_volume("h200-2026-11-28b-large-volume-b52a860.json")
    large_volume("h200-2026-11-28c-large-volume-a282224.json")
    name = "h200-2026-11-28c-slab-split-a282224.json"
    rounds = load(name)["rounds"]
    rows = [[f"{i + 1}", f"{r['analysis_in_slabs_s']:.3f}", f"{r['thin_slab_alone_s']:.3f}",
             f"{r['thick_slab_alone_s']:.3f}", f"{r['merge_and_host_work_s']:.3f}"] for i, r in enumerate(rounds)]
    section("The 1700³ analysis in slabs against its slabs alone (s)", [name], table(
        ["call", "analysis in 2 slabs", "thin slab alone", "thick slab alone", "the merge's host work"], rows))


def cpu_worker_pool():
    """The CPU engine's passes on a pool of threads kept from call to call: per call before and with the pool's first
    version (one machine start, two rounds each); the smallest block, 8,192 against 16,384 pixels (another start,
    three rounds each); the committed build's CPU and CUDA engines per call (a third start)."""
    def span(values, digits=ms):
        return f"{digits(min(values))}–{digits(max(values))}"

    names = {b: [f"h200-2026-11-29b-latency-python-{b}-{i}.json" for i in (1, 2)] for b in ("f8817a5", "pool-lock")}
    runs = {b: [load(n)["latency"] for n in names[b]] for b in names}
    images = [k for k in runs["f8817a5"][0] if not k.startswith("batch")]
    rows = []
    for label, build, row in (("CPU engine, threads started for each pass (f8817a5)", "f8817a5", "cudacca numpy, cpu"),
                              ("CPU engine, the pool (first version)", "pool-lock", "cudacca numpy, cpu"),
                              ("CUDA engine (f8817a5)", "f8817a5", "cudacca numpy, cuda"),
                              ("cc3d + statistics", "f8817a5", "cc3d + statistics")):
        rows.append([label] + [span([r[i][row][0] for r in runs[build]]) for i in images])
    section("The CPU engine's worker pool: numpy in/out per call (ms, median; the range of 2 rounds)",
            names["f8817a5"] + names["pool-lock"], table(["per call, ms"] + [i.replace("x", "×") for i in images], rows))

    blocks = {b: [load(f"h200-2026-11-29c-cpu-block-{b}-{i}.json") for i in (1, 2, 3)] for b in (8192, 16384)}
    shapes = list(blocks[8192][0])
    rows = [[f"{b:,} pixels"] + [span([r[k] for r in blocks[b]]) for k in shapes] for b in blocks]
    section("The CPU engine's smallest block of rows (ms per call, median; the range of 3 rounds)",
            [f"h200-2026-11-29c-cpu-block-{b}-1.json … -3.json" for b in blocks],
            table(["smallest block"] + [k.replace("x", "×") for k in shapes], rows))

    cross_name, latency_name = "h200-2026-11-29d-crossover-7769509.json", "h200-2026-11-29d-latency-python-7769509.json"
    rows = [["×".join(map(str, c["shape"])), f"{c['pixels']:,}", f"{c['cpu_ms']:.3f}", f"{c['cuda_ms']:.3f}",
             "CPU" if c["cpu_ms"] <= c["cuda_ms"] else "CUDA",
             "CPU" if c["pixels"] < 24576 else "CUDA"] for c in load(cross_name)]
    section("The CPU engine with the pool against the CUDA engine, numpy in/out per call (ms, median; 7769509)",
            [cross_name], table(["image", "pixels", "CPU engine", "CUDA engine", "faster", "automatic backend"], rows))
    latency = load(latency_name)["latency"]
    images = [k for k in latency if not k.startswith("batch")]
    rows = [[label] + [ms(latency[i][row][0]) for i in images]
            for label, row in (("numpy, automatic backend", "cudacca numpy, auto"), ("numpy, CPU engine", "cudacca numpy, cpu"),
                               ("numpy, CUDA engine", "cudacca numpy, cuda"), ("CuPy in/out", "cudacca cupy"),
                               ("cc3d + statistics", "cc3d + statistics"))]
    rows.append(["the automatic backend ran"] + [latency[i]["auto chose"].upper() for i in images])
    rows.append(["cc3d / numpy automatic"] + [ratio(latency[i]["cc3d + statistics"][0] / latency[i]["cudacca numpy, auto"][0])
                                              for i in images])
    section("Per call from Python at 7769509 (ms, median)", [latency_name],
            table(["per call, ms"] + [i.replace("x", "×") for i in images], rows))

    builds = (("e", "197804d"), ("e", "rows-per-block"), ("f", "c99cec0"), ("f", "parallel-numbering"))
    names = {b: [f"h200-2026-11-29{start}-cpu-many-objects-{b}-{i}.json" for i in (1, 2)] for start, b in builds}
    runs = {b: [load(n) for n in names[b]] for b in names}
    rows = [[k.replace("x", "×"), f"{runs['197804d'][0][k][1]:,}"] + [span([r[k][0] for r in runs[b]]) for _, b in builds]
            for k in runs["197804d"][0]]
    section("The CPU engine on millions of objects: its feature rows and its numbering of components (ms per call, "
            "median; the range of 2 rounds; two machine starts)", [n for b in names for n in names[b]],
            table(["image", "objects", "rows refilled serially (197804d)", "rows cleared per block",
                   "numbered serially (c99cec0, another start)", "numbered in parallel"], rows))


def check(page):
    """Exit 1 unless every table printed above appears, line for line, in `page` (docs/performance.md)."""
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main()
    with open(page, encoding="utf-8") as f:
        text = f.read()
    tables, current = [], []
    for line in out.getvalue().splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    missing = [t for t in tables if "\n".join(t) not in text]
    for t in missing:
        print(f"not in {page}:\n" + "\n".join(t) + "\n")
    print(f"{len(tables) - len(missing)} of {len(tables)} tables found in {page}")
    return 1 if missing else 0


if __name__ == "__main__":
    if "--check" in sys.argv:
        sys.exit(check(sys.argv[sys.argv.index("--check") + 1]))
    main()
