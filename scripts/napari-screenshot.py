#!/usr/bin/env python3
"""The screenshot in docs/napari.md: the dock widget "Connected components" on the bundled MRI sample
(test/Data/Input/Anatomical.nii.gz, 2 mm voxels), as README's `cca` example runs it (tissue >= 9000, full
connectivity, objects under 50 mm³ removed, numbered by size), the first row of the table clicked. Needs a display:

    xvfb-run -a -s "-screen 0 1600x1000x24" python scripts/napari-screenshot.py docs/images/napari-widget.png

with cudacca[napari] and nibabel installed."""

import sys
import time
from pathlib import Path

import napari
import nibabel
import numpy as np
from napari.qt import get_qapp

from cudacca.napari._widget import ConnectedComponentsWidget


def main(out):
    root = Path(__file__).resolve().parent.parent
    nifti = nibabel.load(root / "test/Data/Input/Anatomical.nii.gz")
    # NIfTI's (x, y, z) as numpy's (z, y, x), the last axis fastest as ITK and cudacca read it
    volume = np.asarray(nifti.dataobj).transpose(2, 1, 0)
    spacing = tuple(float(s) for s in nifti.header.get_zooms()[::-1])
    viewer = napari.Viewer(show=True)
    viewer.window.resize(1500, 950)
    viewer.add_image(volume, name="Anatomical", scale=spacing, colormap="gray")
    widget = ConnectedComponentsWidget(viewer)
    viewer.window.add_dock_widget(widget, name="Connected components", area="right")
    widget.input_combo.setCurrentText("Anatomical")
    widget.lower.setValue(9000)
    widget.connectivity_combo.setCurrentText("full (26)")
    widget.units_combo.setCurrentIndex(1)
    widget.min_size.setValue(50)
    widget.sort.setChecked(True)
    widget.run()
    app = get_qapp()
    deadline = time.time() + 60
    while widget.worker is not None and time.time() < deadline:
        app.processEvents()
        time.sleep(0.01)
    if widget.output_layer is None:
        raise SystemExit("napari-screenshot: the run made no layer")
    viewer.reset_view()
    widget.select_row(0)
    for _ in range(20):
        app.processEvents()
        time.sleep(0.02)
    image = viewer.screenshot(path=out, canvas_only=False, flash=False)
    print(f"{out}: {image.shape[1]}x{image.shape[0]}; {widget.status.text()}")
    viewer.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "napari-widget.png")
