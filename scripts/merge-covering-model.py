#!/usr/bin/env python3
"""A pixel-level model of the GPU merge's pair rules (cuda/itkCCAFlslMerge.cuh): the overlapping and diagonal pairs of
a row and its preceding neighbor rows, the overlapping pairs that CoveringNeighborRows() covers skipped, united by a
plain union-find, against scipy.ndimage.label on random volumes at every connectivity. With the diagonal rule on, the
diagonal pairs covered at the neighbor run's pixel are skipped too: the rule written out in docs/performance.md, tried
in the kernel and not kept (fewer unions, yet slower on most images). It checks the rules, not the kernel (the GPU
suites do that), and prints how many unions each makes.

    python3 scripts/merge-covering-model.py [seed] [volumes]
"""
import sys

import numpy as np
import scipy.ndimage as ndi

# The preceding neighbor rows (dy, dz), as PrecedingNeighborRowOffsets() orders them: A, C, B, D.
ROW_A, ROW_C, ROW_B = (-1, 0), (0, -1), (-1, -1)
PRECEDING_ROWS = (ROW_A, ROW_C, ROW_B, (1, -1))


def neighbor_rows(connectivity):
    """[(dy, dz, widened)] of the rows the connectivity joins (1: faces, 2: and edges, 3: all), and per row the
    covering rows that cover it (C covers A, B and D; A covers B; none with face connectivity)."""
    joins = lambda nonzero: nonzero <= connectivity  # noqa: E731
    rows = []
    for dy, dz in PRECEDING_ROWS:
        nonzero = (dy != 0) + (dz != 0)
        if joins(nonzero):
            rows.append((dy, dz, joins(nonzero + 1)))
    offsets = [(dy, dz) for dy, dz, _ in rows]
    covering = [[] for _ in rows]
    if ROW_C in offsets and ROW_A in offsets and joins(2):
        for n, offset in enumerate(offsets):
            if offset != ROW_C:
                covering[n].append(ROW_C)
            if offset == ROW_B:
                covering[n].append(ROW_A)
    return rows, covering


def label_by_runs(image, connectivity, cover_diagonals):
    """The partition the merge makes (run ids per pixel, each run's root), the unions made and those skipped."""
    depth, height, width = image.shape
    run_of = -np.ones(image.shape, int)
    parent = []
    for z in range(depth):
        for y in range(height):
            for x in range(width):
                if image[z, y, x]:
                    if x > 0 and image[z, y, x - 1]:
                        run_of[z, y, x] = run_of[z, y, x - 1]
                    else:
                        run_of[z, y, x] = len(parent)
                        parent.append(len(parent))

    def find(a):
        while parent[a] != a:
            a = parent[a]
        return a

    def unite(a, b):
        a, b = find(a), find(b)
        if a != b:
            parent[max(a, b)] = min(a, b)

    def foreground(z, y, x):
        return 0 <= z < depth and 0 <= y < height and 0 <= x < width and bool(image[z, y, x])

    rows, covering = neighbor_rows(connectivity)
    made = skipped = 0
    for z in range(depth):
        for y in range(height):
            for n, (dy, dz, widened) in enumerate(rows):
                ny, nz = y + dy, z + dz
                if not (0 <= ny < height and nz >= 0):
                    continue

                def covered(x):
                    return any(foreground(z + cz, y + cy, x) for cy, cz in covering[n])

                def pair(x, neighbor_x, may_skip):
                    nonlocal made, skipped
                    if may_skip and covered(neighbor_x):
                        skipped += 1
                    else:
                        unite(run_of[z, y, x], run_of[nz, ny, neighbor_x])
                        made += 1

                for x in range(width):
                    here, there = foreground(z, y, x), foreground(nz, ny, x)
                    here_starts = here and not foreground(z, y, x - 1)
                    there_starts = there and not foreground(nz, ny, x - 1)
                    if here and there and (here_starts or there_starts):
                        pair(x, x, True)  # overlapping runs, at their first common pixel
                    if widened and here and not there:
                        if not foreground(z, y, x + 1) and foreground(nz, ny, x + 1):
                            pair(x, x + 1, cover_diagonals)  # this run ends at x, the neighbor's starts at x + 1
                        if here_starts and foreground(nz, ny, x - 1):
                            pair(x, x - 1, cover_diagonals)  # the neighbor's run ends at x - 1, this one starts at x
    labels = np.zeros(image.shape, int)
    inside = run_of >= 0
    labels[inside] = [find(r) + 1 for r in run_of[inside]]
    return labels, made, skipped


def same_partition(a, b):
    """The same foreground, split into the same components (whatever their numbers)."""
    inside = a > 0
    if not np.array_equal(inside, b > 0):
        return False
    pairs = set(zip(a[inside], b[inside]))
    return len(pairs) == len(set(a[inside])) == len(set(b[inside]))


def main():
    rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    volumes = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    cases = mismatches = 0
    unions = {False: 0, True: 0}
    for _ in range(volumes):
        shape = tuple(rng.integers(1, 9, 3))
        density = rng.uniform(0.2, 0.9)
        image = rng.random(shape) < density
        for connectivity in (1, 2, 3):
            expected, _ = ndi.label(image, ndi.generate_binary_structure(3, connectivity))
            cases += 1
            for cover_diagonals in (False, True):
                labels, made, _ = label_by_runs(image, connectivity, cover_diagonals)
                unions[cover_diagonals] += made
                if not same_partition(labels, expected):
                    mismatches += 1
                    print("MISMATCH", shape, density, connectivity, "diagonals covered" if cover_diagonals else "")
    print("cases", cases, "mismatches (either rule)", mismatches, "unions: overlaps covered", unions[False],
          "diagonals covered too", unions[True])
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
