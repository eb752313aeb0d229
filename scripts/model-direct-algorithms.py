"""A sequential model of the direct algorithms' kernels (cuda/research/itkCCADirectHA4.cuh,
cuda/research/itkCCADirectBlockUnionFind.cu): HA4's 64-bit distance operators, sub-run nodes, carried run starts, strip
and border unions, features and relabel, and BUF's 4x4 bitset merge, run one thread after another and compared
with scipy.ndimage.label (HA4: 4-connectivity, labels, S, Σx, Σy, box, roots at each component's first pixel;
BUF: 8-connectivity, labels), both put into raster order. It checks the logic, not the GPU: not the races, not
CUDA's intrinsics. Written before any GPU ran these kernels; the GPU test CCAGPUDirectAlgorithms is the check.

    python3 scripts/model-direct-algorithms.py     # needs numpy and scipy; prints the cases that differ
"""
import numpy as np
from scipy import ndimage
M64 = (1 << 64) - 1

def clz64(v):
    return 64 - v.bit_length() if v else 64
def ffs64(v):
    return (v & -v).bit_length() if v else 0
def start_distance(word, b):
    return 0 if b == 0 else clz64(~(word << (64 - b)) & M64)
def end_distance(word, b):
    rest = ~(word >> b) & M64
    return 64 - b if rest == 0 else ffs64(rest) - 1
def is_set(w, b): return (w >> b) & 1
def is_start(w, b): return is_set(w, b) and (b == 0 or not is_set(w, b - 1))
def load_word(img, y, x0):
    H, W = img.shape
    w = 0
    if 0 <= y < H:
        for b in range(64):
            if x0 + b < W and img[y, x0 + b]:
                w |= 1 << b
    return w
def node_of(word, b, first): return first + b - start_distance(word, b)

def find(L, n):
    while L[n] != n:
        n = L[n]
    return n
def unite(L, a, b):
    while True:
        a, b = find(L, a), find(L, b)
        if a == b: return
        lo, hi = min(a, b), max(a, b)
        prev = L[hi]; L[hi] = min(L[hi], lo)
        if prev == hi: return
        a, b = lo, prev

def ha4(img, rows=4):
    H, W = img.shape
    L = {}
    strips = (H + rows - 1) // rows
    for s in range(strips):
        run_start = [None] * rows
        for x0 in range(0, W, 64):
            words = [load_word(img, s * rows + ty, x0) for ty in range(rows)]
            for ty in range(rows):
                y = s * rows + ty
                if y >= H: continue
                word = words[ty]
                for b in range(64):
                    if is_start(word, b):
                        node = y * W + x0 + b
                        L[node] = run_start[ty] if (b == 0 and run_start[ty] is not None) else node
            for ty in range(1, rows):
                y = s * rows + ty
                if y >= H: continue
                word, above = words[ty], words[ty - 1]
                both = word & above
                for b in range(64):
                    if is_set(both, b) and (is_start(word, b) or is_start(above, b)):
                        unite(L, node_of(word, b, y * W + x0), node_of(above, b, (y - 1) * W + x0))
            for ty in range(rows):
                y = s * rows + ty
                word = words[ty]
                if is_set(word, 63):
                    st = 64 - clz64(~word & M64)
                    run_start[ty] = run_start[ty] if (st == 0 and run_start[ty] is not None) else y * W + x0 + st
                else:
                    run_start[ty] = None
    for s in range(1, strips):
        y = s * rows
        for x0 in range(0, W, 64):
            word, above = load_word(img, y, x0), load_word(img, y - 1, x0)
            for b in range(64):
                if is_set(word & above, b) and (is_start(word, b) or is_start(above, b)):
                    unite(L, node_of(word, b, y * W + x0), node_of(above, b, (y - 1) * W + x0))
    # features + relabel
    feats = {}
    out = np.zeros((H, W), np.int64)
    for y in range(H):
        for x0 in range(0, W, 64):
            word = load_word(img, y, x0)
            for b in range(64):
                if is_start(word, b):
                    root = find(L, y * W + x0 + b)
                    c = end_distance(word, b); x = x0 + b
                    f = feats.setdefault(root, [0, 0, 0, 1 << 40, 1 << 40, 0, 0])
                    f[0] += c; f[1] += c * x + c * (c - 1) // 2; f[2] += y * c
                    f[3] = min(f[3], x); f[4] = min(f[4], y); f[5] = max(f[5], x + c - 1); f[6] = max(f[6], y)
                if is_set(word, b):
                    st = b - start_distance(word, b)
                    out[y, x0 + b] = find(L, y * W + x0 + st)
    return out, feats

def buf(img):
    H, W = img.shape
    L = {}
    fg = lambda x, y: 0 <= x < W and 0 <= y < H and img[y, x]
    for y in range(0, H, 2):
        for x in range(0, W, 2):
            L[y * W + x] = y * W + x
    for y in range(0, H, 2):
        for x in range(0, W, 2):
            around = 0
            if fg(x, y): around |= 0x777
            if fg(x + 1, y): around |= 0x777 << 1
            if fg(x, y + 1): around |= 0x777 << 4
            if not around: continue
            i = y * W + x
            at = lambda bit, px, py: (around >> bit & 1) and fg(px, py)
            if at(0, x - 1, y - 1): unite(L, i, (y - 2) * W + x - 2)
            if at(1, x, y - 1) or at(2, x + 1, y - 1): unite(L, i, (y - 2) * W + x)
            if at(3, x + 2, y - 1): unite(L, i, (y - 2) * W + x + 2)
            if at(4, x - 1, y) or at(8, x - 1, y + 1): unite(L, i, y * W + x - 2)
    out = np.zeros((H, W), np.int64)
    for y in range(H):
        for x in range(W):
            if img[y, x]:
                out[y, x] = find(L, (y // 2 * 2) * W + x // 2 * 2)
    return out

def raster(img, ids):
    H, W = img.shape
    first = {}
    for i, (v, f) in enumerate(zip(ids.ravel(), img.ravel())):
        if f and v not in first: first[v] = i
    order = {v: r + 1 for r, v in enumerate(sorted(first, key=first.get))}
    return np.where(img, np.vectorize(lambda v: order.get(v, 0))(ids), 0), first

rng = np.random.default_rng(0)
bad = 0
cases = [(1, 1), (1, 200), (200, 1), (3, 5), (9, 130), (17, 129), (33, 64), (40, 200), (7, 63), (5, 65)]
for (H, W) in cases:
    for d in (0.0, 0.3, 0.6, 0.9, 1.0):
        for g in (1, 3):
            img = (rng.random(((H + g - 1) // g, (W + g - 1) // g)) < d).repeat(g, 0).repeat(g, 1)[:H, :W].astype(np.uint8)
            exp4, _ = ndimage.label(img, structure=[[0, 1, 0], [1, 1, 1], [0, 1, 0]])
            exp8, _ = ndimage.label(img, structure=np.ones((3, 3)))
            out, feats = ha4(img)
            lab, first = raster(img, out)
            ok = np.array_equal(lab, exp4)
            # features vs expected per label
            for root, f in feats.items():
                l = lab.ravel()[root] if img.ravel()[root] else -1
                ys, xs = np.nonzero(exp4 == l)
                if l <= 0 or f != [len(xs), int(xs.sum()), int(ys.sum()), int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())] or first[root] != root:
                    ok = False
            ok = ok and len(feats) == exp4.max()
            lb, _ = raster(img, buf(img))
            okb = np.array_equal(lb, exp8)
            if not (ok and okb):
                bad += 1
                print("MISMATCH", H, W, d, g, "ha4" if not ok else "", "buf" if not okb else "")
print("cases with a mismatch:", bad)
raise SystemExit(1 if bad else 0)
