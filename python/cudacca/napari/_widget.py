"""The napari dock widget "Connected components": a layer's objects labelled and measured (cudacca.label), in a
worker thread, into a Labels layer with the layer's scale and the objects' table as its features, shown in a table
that selects an object in the viewer when its row is clicked."""

from __future__ import annotations

import numpy as np
from napari.layers import Image, Labels
from napari.qt.threading import create_worker
from napari.utils.notifications import show_error, show_info
from qtpy.QtCore import QAbstractTableModel, QModelIndex, Qt
from qtpy.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel,
                            QProgressBar, QPushButton, QSpinBox, QTableView, QVBoxLayout, QWidget)

import cudacca
from . import _compute

NONE = "(none)"


class FeaturesModel(QAbstractTableModel):
    """A pandas DataFrame as a Qt table, read cell by cell as the view shows them: a million objects cost no
    widget of their own."""

    def __init__(self):
        super().__init__()
        self.frame = None

    def set_frame(self, frame):
        self.beginResetModel()
        self.frame = frame
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):  # noqa: N802 (Qt's names)
        return 0 if self.frame is None or parent.isValid() else len(self.frame)

    def columnCount(self, parent=QModelIndex()):  # noqa: N802
        return 0 if self.frame is None or parent.isValid() else self.frame.shape[1]

    def data(self, index, role=Qt.DisplayRole):
        if role != Qt.DisplayRole or self.frame is None:
            return None
        value = self.frame.iat[index.row(), index.column()]
        return f"{value:.6g}" if isinstance(value, (float, np.floating)) else str(value)

    def headerData(self, section, orientation, role=Qt.DisplayRole):  # noqa: N802
        if role != Qt.DisplayRole or self.frame is None:
            return None
        return str(self.frame.columns[section]) if orientation == Qt.Horizontal else str(section + 1)


class ConnectedComponentsWidget(QWidget):
    """Input: an Image layer with a threshold, or a Labels layer (binary, or each value a class); an optional mask
    and intensity layer. Options: connectivity, minimum size in pixels or physical units (the layer's scale), the N
    largest kept, numbering by size, the image dimension (axes before it are frames: the current one or all).
    Output: a Labels layer "<input> components" with the input's scale and translate and the table as its
    features."""

    def __init__(self, napari_viewer):
        super().__init__()
        self.viewer = napari_viewer
        self.worker = None
        self.result = None
        self.output_layer = None
        self._defaults_for = None

        form = QFormLayout()
        self.input_combo = QComboBox()
        self.lower = self._spin()
        self.upper = self._spin()
        self.upper.setEnabled(False)
        self.use_upper = QCheckBox("at most")
        self.use_upper.toggled.connect(self.upper.setEnabled)
        threshold = QHBoxLayout()
        threshold.addWidget(self.lower)
        threshold.addWidget(self.use_upper)
        threshold.addWidget(self.upper)
        self.threshold_label = QLabel("Threshold")
        self.multilabel = QCheckBox("each value a class (multi-class segmentation)")
        self.mask_combo = QComboBox()
        self.intensity_combo = QComboBox()
        self.dims_combo = QComboBox()
        self.dims_combo.addItems(["2-D", "3-D"])
        self.frames_combo = QComboBox()
        self.frames_combo.addItems(["current frame", "every frame"])
        self.connectivity_combo = QComboBox()
        self.min_size = QDoubleSpinBox()
        self.min_size.setRange(0, 1e15)
        self.min_size.setDecimals(3)
        self.units_combo = QComboBox()
        self.units_combo.addItems(["pixels", "physical units (layer scale)"])
        size = QHBoxLayout()
        size.addWidget(self.min_size)
        size.addWidget(self.units_combo)
        self.keep_largest = QSpinBox()
        self.keep_largest.setRange(0, 2**31 - 1)
        self.keep_largest.setSpecialValueText("all")
        self.sort = QCheckBox("number by decreasing size")
        self.backend_combo = QComboBox()
        self.backend_combo.addItems(["auto", "cuda", "cpu"])
        form.addRow("Input layer", self.input_combo)
        form.addRow(self.threshold_label, threshold)
        form.addRow("", self.multilabel)
        form.addRow("Mask layer", self.mask_combo)
        form.addRow("Intensity layer", self.intensity_combo)
        form.addRow("Image dimension", self.dims_combo)
        form.addRow("Frames", self.frames_combo)
        form.addRow("Connectivity", self.connectivity_combo)
        form.addRow("Minimum size", size)
        form.addRow("Keep largest", self.keep_largest)
        form.addRow("", self.sort)
        form.addRow("Backend", self.backend_combo)

        available, why = cudacca.cuda_available()
        self.device_label = QLabel("GPU: the CUDA engine" if available else f"No GPU: the CPU engine labels. {why}")
        self.device_label.setWordWrap(True)
        self.run_button = QPushButton("Run")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        self.progress = QProgressBar()
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.table_model = FeaturesModel()
        self.table_view = QTableView()
        self.table_view.setModel(self.table_model)
        self.table_view.setSelectionBehavior(QTableView.SelectRows)
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setEnabled(False)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.device_label)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.table_view)
        layout.addWidget(self.export_button)

        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.export_button.clicked.connect(self._export_clicked)
        self.table_view.clicked.connect(lambda index: self.select_row(index.row()))
        self.input_combo.currentTextChanged.connect(self._input_changed)
        self.dims_combo.currentTextChanged.connect(self._dims_changed)
        for emitter in self._layer_list_events():
            emitter.connect(self._refresh_layers)
        self._refresh_layers()
        self._dims_changed()

    @staticmethod
    def _spin():
        spin = QDoubleSpinBox()
        spin.setRange(-1e300, 1e300)
        spin.setDecimals(4)
        return spin

    # ------------------------------------------------------------------------------------------------ the choices
    def _layers(self, *types):
        return [layer for layer in self.viewer.layers if isinstance(layer, types) and layer is not self.output_layer]

    def _layer_list_events(self):
        events = self.viewer.layers.events
        return events.inserted, events.removed, events.reordered

    def _refresh_layers(self, event=None):
        try:
            self.input_combo.count()
        except RuntimeError:  # the widget was closed and its Qt objects deleted: stop listening to the viewer
            for emitter in self._layer_list_events():
                emitter.disconnect(self._refresh_layers)
            return
        for combo, types, optional in ((self.input_combo, (Image, Labels), False),
                                       (self.mask_combo, (Image, Labels), True),
                                       (self.intensity_combo, (Image,), True)):
            current = combo.currentText()
            names = ([NONE] if optional else []) + [layer.name for layer in self._layers(*types)]
            combo.blockSignals(True)
            combo.clear()
            combo.addItems(names)
            if current in names:
                combo.setCurrentText(current)
            combo.blockSignals(False)
        self._input_changed()

    def _layer(self, combo):
        name = combo.currentText()
        return None if name in ("", NONE) or name not in self.viewer.layers else self.viewer.layers[name]

    def _input_changed(self, *_):
        layer = self._layer(self.input_combo)
        is_labels = isinstance(layer, Labels)
        for widget in (self.lower, self.upper, self.use_upper, self.threshold_label):
            widget.setVisible(not is_labels)
        self.multilabel.setVisible(is_labels)
        if layer is not None and layer is not self._defaults_for:
            # a layer chosen (or first seen): the threshold's defaults from its contrast limits, the image dimension
            self._defaults_for = layer
            if isinstance(layer, Image) and not layer.rgb:
                low, high = (float(v) for v in layer.contrast_limits)
                # enough decimals for the layer's range: 4 significant digits below its span
                span = abs(float(layer.contrast_limits_range[1]) - float(layer.contrast_limits_range[0]))
                decimals = int(min(12, max(4, 4 - np.floor(np.log10(span))))) if span > 0 else 4
                for spin in (self.lower, self.upper):
                    spin.setDecimals(decimals)
                self.lower.setValue((low + high) / 2)
                self.upper.setValue(max(high, float(layer.contrast_limits_range[1])))
            self.dims_combo.setCurrentText("3-D" if layer.ndim >= 3 and not self._first_axis_is_time(layer) else "2-D")
        self._dims_changed()

    def _first_axis_is_time(self, layer):
        # A 3-D layer is taken for a volume unless the viewer calls its first axis time; the user says otherwise.
        labels = self.viewer.dims.axis_labels[-layer.ndim:]
        return str(labels[0]).lower() in ("t", "time", "frame", "frames")

    def _dims_changed(self, *_):
        d = self.spatial_dims()
        current = self.connectivity_combo.currentIndex()
        self.connectivity_combo.clear()
        self.connectivity_combo.addItems([text for text, _ in _compute.CONNECTIVITIES[d]])
        self.connectivity_combo.setCurrentIndex(current if 0 <= current < self.connectivity_combo.count() else 0)
        layer = self._layer(self.input_combo)
        self.frames_combo.setEnabled(layer is not None and layer.ndim > d)

    def spatial_dims(self):
        return 3 if self.dims_combo.currentText() == "3-D" else 2

    def settings(self):
        """The widget's choices as _compute.Settings."""
        layer = self._layer(self.input_combo)
        d = self.spatial_dims()
        frame = None
        if layer is not None and layer.ndim > d and self.frames_combo.currentText() == "current frame":
            # the slider's position on the layer's leading axes (the viewer's last axes are the layer's)
            point = np.asarray(self.viewer.dims.point[-layer.ndim:], np.float64)
            leading = layer.ndim - d
            translate, scale = np.asarray(layer.translate)[:leading], np.asarray(layer.scale)[:leading]
            index = np.round((point[:leading] - translate) / scale)
            frame = tuple(int(np.clip(i, 0, n - 1)) for i, n in zip(index, layer.data.shape[:leading]))
        return _compute.Settings(
            lower=self.lower.value(), upper=self.upper.value() if self.use_upper.isChecked() else None,
            multilabel=self.multilabel.isChecked(),
            connectivity=_compute.CONNECTIVITIES[d][self.connectivity_combo.currentIndex()][1],
            min_size=self.min_size.value(), physical=self.units_combo.currentIndex() == 1,
            keep_largest=self.keep_largest.value(), sort=self.sort.isChecked(), spatial_dims=d, frame=frame,
            backend=self.backend_combo.currentText())

    # ------------------------------------------------------------------------------------------------ the run
    def run(self):
        """Starts a run in a worker thread and returns the worker (None where the choices are refused, said by a
        notification)."""
        if self.worker is not None:
            show_info("a run is in progress")
            return None
        layer = self._layer(self.input_combo)
        if layer is None:
            show_error("Connected components: choose an input layer")
            return None
        mask, intensity = self._layer(self.mask_combo), self._layer(self.intensity_combo)
        try:
            if isinstance(layer, Image) and layer.rgb:
                raise ValueError(f"{layer.name} is an RGB layer; choose a single-channel layer")
            if getattr(layer, "multiscale", False):
                raise ValueError(f"{layer.name} is multiscale; label its full-resolution level as a layer of its own")
            settings = self.settings()
            options = dict(is_labels=isinstance(layer, Labels), scale=np.asarray(layer.scale),
                           mask=None if mask is None else mask.data,
                           intensity=None if intensity is None else intensity.data)
            _compute.check(layer.data, settings, options["is_labels"], options["mask"], options["intensity"])
        except ValueError as error:
            show_error(f"Connected components: {error}")
            return None
        self.progress.setRange(0, 0)  # busy until the first frame is done
        self.status.setText(f"labelling {layer.name} …")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        worker = create_worker(_compute.iter_run, layer.data, settings, _start_thread=False, **options)
        worker.yielded.connect(self._progressed)
        worker.returned.connect(lambda result: self._show(result, layer, settings))
        worker.errored.connect(self._failed)
        worker.aborted.connect(lambda: self.status.setText("cancelled"))
        worker.finished.connect(self._finished)
        self.worker = worker
        worker.start()
        return worker

    def _failed(self, error):
        self.status.setText(f"failed: {error}")
        show_error(f"Connected components: {error}")

    def cancel(self):
        """Stops the run after the frame in progress; the viewer keeps what it had."""
        if self.worker is not None:
            self.worker.quit()

    def _progressed(self, step):
        done, total = step
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    def _finished(self):
        self.worker = None
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if self.progress.maximum() == 0:  # ended before a frame was done: no longer busy
            self.progress.setRange(0, 1)
            self.progress.setValue(0)

    def _show(self, result, layer, settings):
        self.result = result
        translate = np.asarray(layer.translate, np.float64).copy()
        if result.frame is not None:
            translate[:len(result.frame)] += np.asarray(result.frame) * np.asarray(layer.scale)[:len(result.frame)]
        name = f"{layer.name} components"
        if self.output_layer is not None and self.output_layer in self.viewer.layers:
            self.viewer.layers.remove(self.output_layer)
        self.output_layer = self.viewer.add_labels(result.labels, name=name, scale=layer.scale, translate=translate,
                                                   features=result.table)
        self._refresh_layers()  # the layer was inserted before it was known as the output: out of the choices
        self.table_model.set_frame(result.table)
        self.export_button.setEnabled(True)
        count = len(result.table)
        self.status.setText(f"{count:,} object{'' if count == 1 else 's'} in {result.seconds:.3f} s ({result.backend})")

    # ------------------------------------------------------------------------------------------------ the table
    def select_row(self, row):
        """Selects the object of the table's row in the output layer and brings it into view: the sliders of the
        axes not displayed to its centroid, the camera centered on it."""
        table, layer = self.table_model.frame, self.output_layer
        if table is None or layer is None or not 0 <= row < len(table):
            return
        layer.selected_label = int(table["index"].iat[row])
        d = self.result.labels.ndim
        spatial = self.result.spatial_dims  # the run's, whatever the combo box says now
        centroid = [float(table[f"centroid-{c}"].iat[row]) for c in range(spatial)]
        frames = [float(table[c].iat[row]) for c in table.columns if c == "frame" or c.startswith("frame-")]
        if self.result.frame is not None:
            frames = [0.0] * len(frames)
        index_or_physical = np.asarray(frames + centroid, np.float64)
        world = np.asarray(layer.translate) + np.concatenate(
            [index_or_physical[:len(frames)] * np.asarray(layer.scale)[:len(frames)], index_or_physical[len(frames):]])
        offset = self.viewer.dims.ndim - d
        step = list(self.viewer.dims.point)
        for axis in range(d):
            step[offset + axis] = world[axis]
        self.viewer.dims.point = step
        displayed = [axis - offset for axis in self.viewer.dims.displayed if axis >= offset]
        # napari 0.9 moved the camera to viewer.scene
        camera = self.viewer.scene.camera if hasattr(self.viewer, "scene") else self.viewer.camera
        camera.center = tuple(world[axis] for axis in displayed)

    def export_csv(self, path):
        """Writes the table (without napari's index column) to `path`."""
        self.table_model.frame.drop(columns="index").to_csv(path, index=False)

    def _export_clicked(self):
        path, _ = QFileDialog.getSaveFileName(self, "Export the objects' table", "objects.csv", "CSV (*.csv)")
        if path:
            self.export_csv(path)
