"""Per-call cost of label()'s common call on its short path and on the general path, in one process, on the same
images (the benchmark's --latency images: blobs of 4-pixel cells at 40 % density; labels + the default table),
with cc3d's label + statistics beside them where installed; then a loop over 1,000 different 256² images on both
paths. The general path is taken by emptying cudacca._label._PLAIN_PIXEL_TYPES, as python/tests/test_common_call.py
does.

    python3 scripts/device-common-call.py [--json out.json]
"""

import argparse
import json

import numpy as np

import cudacca
from cudacca import _label
from cudacca.benchmark import blobs, per_call

SHAPES = ((64, 64), (128, 128), (256, 256), (512, 512), (32, 32, 32), (64, 64, 64))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json")
    args = p.parse_args()
    gpu = cudacca.cuda_available()[0]
    try:
        import cupy
    except ImportError:
        cupy = None
    try:
        import cc3d
    except ImportError:
        cc3d = None
    plain = _label._PLAIN_PIXEL_TYPES
    rows = {}
    for shape in SHAPES:
        image = blobs(shape, 0.4, 4, 7)
        cases = [("numpy, auto", image, "auto", None), ("numpy, cpu", image, "cpu", None)]
        if gpu:
            cases.append(("numpy, cuda", image, "cuda", None))
            if cupy is not None:
                cases.append(("cupy", cupy.asarray(image), "auto", cupy.cuda.runtime.deviceSynchronize))
        r = rows["x".join(map(str, shape))] = {}
        for name, array, backend, sync in cases:
            call = lambda: cudacca.label(array, return_table=True, backend=backend)  # noqa: E731
            for path, types in (("short", plain), ("general", frozenset())):
                _label._PLAIN_PIXEL_TYPES = types
                r[f"{name}, {path}"] = per_call(call, seconds=1.0, most=2000, sync=sync)[0]
            _label._PLAIN_PIXEL_TYPES = plain
        if cc3d is not None:
            c = 4 if image.ndim == 2 else 6
            r["cc3d + statistics"] = per_call(
                lambda: cc3d.statistics(cc3d.connected_components(image, connectivity=c)), seconds=1.0, most=2000)[0]
        print("x".join(map(str, shape)), {k: round(v, 4) for k, v in r.items()}, flush=True)
    # A loop over many different images (label_batch's comparison): the same calls, each image once per round.
    stack = np.stack([blobs((256, 256), 0.4, 4, 100 + i) for i in range(1000)])
    loop = rows["loop of 1000 different 256x256 images, numpy auto"] = {}
    for _ in range(2):
        for path, types in (("short", plain), ("general", frozenset())):
            _label._PLAIN_PIXEL_TYPES = types
            t = per_call(lambda: [cudacca.label(im, return_table=True) for im in stack], seconds=2.0, most=3)[0]
            loop[path] = min(loop.get(path, t), t)
        _label._PLAIN_PIXEL_TYPES = plain
    print("loop of 1000 x 256x256, ms:", {k: round(v, 1) for k, v in loop.items()}, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"per_call_ms_median": rows}, f, indent=1)


if __name__ == "__main__":
    main()
