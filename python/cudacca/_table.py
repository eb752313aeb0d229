"""The table of components: one row per label, one numpy array per column (regionprops_table's shape)."""

from __future__ import annotations

import numpy as np

from . import _core

#: Columns of `properties="basic"` (the default): cheap, from the sums every analysis makes.
BASIC = ("label", "num_pixels", "area", "bbox", "centroid")

#: Everything ITK's ShapeLabelObject holds that needs no extra pass over the pixels.
SHAPE = (
    "num_pixels_on_border",
    "perimeter_on_border",
    "perimeter_on_border_ratio",
    "perimeter",
    "roundness",
    "principal_moments",
    "principal_axes",
    "elongation",
    "flatness",
    "equivalent_spherical_radius",
    "equivalent_spherical_perimeter",
    "equivalent_ellipsoid_diameter",
)

#: On request only: they read every object's pixels again (ITK computes them only when asked, too).
ON_REQUEST = ("feret_diameter", "oriented_bounding_box_size", "oriented_bounding_box_origin")

ALL = BASIC + SHAPE

_PERIMETER = ("perimeter", "roundness", "perimeter_on_border_ratio")


def resolve_properties(properties):
    """The list of column groups asked for: "basic", "all", or names (groups such as "bbox" or split names
    such as "bbox-0"; "label" is always there)."""
    if properties is None or properties == "basic":
        names = list(BASIC)
    elif properties == "all":
        names = list(ALL)
    else:
        if isinstance(properties, str):
            properties = [properties]
        names = ["label"]
        for p in properties:
            group = p.split("-")[0] if "-" in p and p.split("-")[0] in BASIC + SHAPE + ON_REQUEST else p
            if group in ("all", "basic"):
                names.extend(ALL if group == "all" else BASIC)
                continue
            if group not in BASIC + SHAPE + ON_REQUEST:
                known = ", ".join(BASIC + SHAPE + ON_REQUEST)
                raise ValueError(f"unknown property {p!r}; known: {known}")
            names.append(group)
    seen = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return seen


def needs_shape_sums(names):
    return any(n in SHAPE or n in ON_REQUEST for n in names)


def needs_perimeter(names):
    return any(n in _PERIMETER for n in names)


class Table(dict):
    """Columns by name, each a 1-D numpy array of one value per label (in label order), as
    skimage.measure.regionprops_table returns them: vector attributes are split into name-0, name-1, ...
    in the array's axis order (0 is the first numpy axis: z in 3-D), principal_axes-m-c is component c of
    the m-th principal axis. `to_pandas()` makes a DataFrame."""

    def to_pandas(self):
        import pandas

        return pandas.DataFrame(dict(self))

    def __repr__(self):
        n = len(next(iter(self.values()))) if self else 0
        return f"<cudacca.Table: {n} rows, columns {', '.join(self.keys())}>"


def build(analysis, names, count, skip_value, ndim, spacing, origin, direction):
    """Allocates the asked columns, lets the engine fill them in one call, and splits them by component."""
    arrays = {}
    for name in names:
        if name == "label":
            continue
        info = _core.column_info(name, ndim)
        components, is_float = info[0], info[1]
        arrays[name] = np.empty((components, count), dtype=np.float64 if is_float else _integer_type(name))
    feret = "feret_diameter" in names
    obb = "oriented_bounding_box_size" in names or "oriented_bounding_box_origin" in names
    flat = {name: a.reshape(-1) for name, a in arrays.items()}
    analysis.fill_columns(flat, list(spacing), list(origin), [float(v) for row in direction for v in row], feret, obb)
    table = Table()
    for name in names:
        if name == "label":
            k = np.arange(count, dtype=np.uint64)
            table["label"] = np.where(k >= skip_value, k + 1, k)
            continue
        a = arrays[name]
        if a.shape[0] == 1:
            table[name] = a[0]
        elif name == "principal_axes":
            for m in range(ndim):
                for c in range(ndim):
                    table[f"{name}-{m}-{c}"] = a[m * ndim + c]
        else:
            for c in range(a.shape[0]):
                table[f"{name}-{c}"] = a[c]
    return table


def _integer_type(name):
    return np.int64 if name == "bbox" else np.uint64
