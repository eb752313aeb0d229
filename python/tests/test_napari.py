"""The napari dock widget in a headless viewer (napari's make_napari_viewer fixture; Qt under Xvfb or offscreen):
its Labels layer equals cudacca.label's output and its features the table, the layer's scale is honoured, stacks,
a Dask layer, refusals as notifications, cancelling, the table's row selection and CSV export. Skipped where napari
is not installed (scripts/python-tests.sh installs it in a venv of its own)."""

import numpy as np
import pytest

pytest.importorskip("napari")
pytest.importorskip("pytestqt")

import cudacca  # noqa: E402
from conftest import random_image  # noqa: E402
from cudacca.napari._widget import ConnectedComponentsWidget  # noqa: E402
from napari.utils.notifications import notification_manager  # noqa: E402


@pytest.fixture
def viewer_and_widget(make_napari_viewer):
    viewer = make_napari_viewer()
    widget = ConnectedComponentsWidget(viewer)
    viewer.window.add_dock_widget(widget)
    return viewer, widget


def run_to_end(qtbot, widget):
    worker = widget.run()
    assert worker is not None
    qtbot.waitUntil(lambda: widget.worker is None, timeout=60000)
    return widget.output_layer


def features_equal(layer, table):
    features = layer.features
    np.testing.assert_array_equal(features["index"], features["label"])
    for column, values in table.items():
        np.testing.assert_array_equal(features[column].to_numpy(), np.asarray(values), err_msg=column)


def test_image_2d_threshold(qtbot, viewer_and_widget):
    viewer, widget = viewer_and_widget
    rng = np.random.default_rng(1)
    data = (random_image((90, 120), 0.5, 4, seed=2) * 200 + rng.normal(0, 30, (90, 120))).astype(np.float32)
    viewer.add_image(data, name="cells", scale=(0.5, 0.25), translate=(10, -4))
    widget.input_combo.setCurrentText("cells")
    widget.lower.setValue(100)  # no upper bound: "at most" unchecked
    widget.connectivity_combo.setCurrentIndex(1)  # full
    widget.sort.setChecked(True)
    layer = run_to_end(qtbot, widget)
    labels, table = cudacca.label(data >= 100, connectivity="full", sort=True, spacing=(0.5, 0.25),
                                  return_table=True)
    np.testing.assert_array_equal(layer.data, labels)
    features_equal(layer, table)
    assert layer.name == "cells components"
    np.testing.assert_array_equal(layer.scale, (0.5, 0.25))
    np.testing.assert_array_equal(layer.translate, (10, -4))
    assert widget.table_model.rowCount() == len(table["label"]) > 10
    assert str(len(table["label"])) in widget.status.text()
    # the output is not offered as an input
    assert "cells components" not in [widget.input_combo.itemText(i) for i in range(widget.input_combo.count())]
    widget.dims_combo.setCurrentText("3-D")  # a row click follows the run's dimension, not the combo box's
    # a row click selects its object and centers the camera on its centroid (world coordinates)
    widget.select_row(3)
    assert layer.selected_label == table["label"][3]
    camera = viewer.scene.camera if hasattr(viewer, "scene") else viewer.camera
    np.testing.assert_allclose(camera.center[-2:],
                               (10 + table["centroid-0"][3], -4 + table["centroid-1"][3]))


def test_anisotropic_volume_physical_minimum_size(qtbot, viewer_and_widget, tmp_path):
    viewer, widget = viewer_and_widget
    data = random_image((14, 50, 52), 0.3, 1, seed=7)
    viewer.add_labels(data, name="mask", scale=(3.0, 0.6, 0.6))
    widget.input_combo.setCurrentText("mask")
    assert widget.spatial_dims() == 3
    widget.units_combo.setCurrentIndex(1)  # physical units
    widget.min_size.setValue(4.0)
    layer = run_to_end(qtbot, widget)
    labels, table = cudacca.label(data, min_physical_size=4.0, spacing=(3.0, 0.6, 0.6), return_table=True)
    np.testing.assert_array_equal(layer.data, labels)
    features_equal(layer, table)
    # exactly the objects under 4.0 (1.08 per voxel: under 4 voxels) were dropped
    all_sizes = np.bincount(cudacca.label(data).ravel())[1:]
    assert len(table["label"]) == (all_sizes * 1.08 >= 4.0).sum() < len(all_sizes)
    # the slice slider follows a clicked object, to the slice nearest its centroid
    widget.select_row(5)
    assert viewer.dims.point[0] == pytest.approx(round(table["centroid-0"][5] / 3.0) * 3.0)
    path = tmp_path / "objects.csv"
    widget.export_csv(path)
    import pandas

    exported = pandas.read_csv(path)
    assert list(exported.columns) == list(table.keys())
    np.testing.assert_allclose(exported["area"], table["area"], rtol=1e-12)


def test_time_series_current_and_every_frame(qtbot, viewer_and_widget):
    viewer, widget = viewer_and_widget
    frames = np.stack([random_image((40, 48), 0.4, 2, seed=t) for t in range(6)])
    viewer.add_labels(frames, name="movie")
    widget.input_combo.setCurrentText("movie")
    assert widget.spatial_dims() == 3  # a 3-D layer is taken for a volume
    widget.dims_combo.setCurrentText("2-D")
    assert widget.frames_combo.isEnabled()
    viewer.dims.set_point(0, 4)
    widget.frames_combo.setCurrentText("current frame")
    layer = run_to_end(qtbot, widget)
    assert layer.data.shape == (1, 40, 48) and layer.translate[0] == 4
    labels, table = cudacca.label(frames[4], return_table=True)
    np.testing.assert_array_equal(layer.data[0], labels)
    assert (layer.features["frame"] == 4).all()

    widget.frames_combo.setCurrentText("every frame")
    layer = run_to_end(qtbot, widget)
    assert layer.data.shape == frames.shape and widget.progress.maximum() == 6
    assert len([candidate for candidate in viewer.layers if candidate.name.startswith("movie components")]) == 1
    for t in range(6):
        own = cudacca.label(frames[t])
        np.testing.assert_array_equal(layer.data[t] != 0, own != 0)
        assert len(np.unique(layer.data[t][layer.data[t] != 0])) == own.max()
    assert len(np.unique(layer.features["index"])) == len(layer.features)


def test_small_float_values(qtbot, viewer_and_widget):
    """A layer of values around 1e-5: the threshold's default lies within them (not rounded to 0)."""
    viewer, widget = viewer_and_widget
    data = (random_image((50, 60), 0.5, 3, seed=12) * 2e-5 + 1e-6).astype(np.float32)
    viewer.add_image(data, name="faint")
    widget.input_combo.setCurrentText("faint")
    assert 1e-6 < widget.lower.value() < 2.1e-5
    layer = run_to_end(qtbot, widget)
    np.testing.assert_array_equal(layer.data, cudacca.label(data >= widget.lower.value()))
    assert layer.data.max() > 0


def test_dask_layer(qtbot, viewer_and_widget):
    da = pytest.importorskip("dask.array")
    pytest.importorskip("scipy")
    viewer, widget = viewer_and_widget
    data = random_image((24, 40, 40), 0.35, 2, seed=4)
    viewer.add_image(da.from_array(data.astype(np.float32), chunks=(8, 20, 20)), name="lazy",
                     contrast_limits=(0, 1))
    widget.input_combo.setCurrentText("lazy")
    widget.lower.setValue(0.5)
    widget.use_upper.setChecked(True)
    widget.upper.setValue(2)
    layer = run_to_end(qtbot, widget)
    labels, table = cudacca.label(data, return_table=True, spacing=(1.0, 1.0, 1.0))
    np.testing.assert_array_equal(np.asarray(layer.data), labels)
    features_equal(layer, table)


def test_bad_choices_are_notifications(qtbot, viewer_and_widget):
    viewer, widget = viewer_and_widget
    viewer.add_image(np.zeros((20, 30, 3), np.uint8), name="photo", rgb=True)
    viewer.add_labels(np.zeros((20, 31), np.uint8), name="wrong mask")
    viewer.add_image(np.zeros((20, 30), np.float32), name="gray")
    before = len(notification_manager.records)
    widget.input_combo.setCurrentText("photo")
    assert widget.run() is None
    widget.input_combo.setCurrentText("gray")
    widget.mask_combo.setCurrentText("wrong mask")
    assert widget.run() is None
    messages = [str(n.message) for n in notification_manager.records[before:]]
    assert any("RGB" in m for m in messages) and any("mask layer's shape" in m for m in messages), messages
    assert widget.output_layer is None and widget.run_button.isEnabled()


def test_cancel_leaves_the_viewer_usable(qtbot, viewer_and_widget, monkeypatch):
    from cudacca.napari import _compute

    viewer, widget = viewer_and_widget
    monkeypatch.setattr(_compute, "BATCH_PIXELS", 10 * 64 * 64)  # 100 calls of 10 frames, cancelled in between
    frames = np.stack([random_image((64, 64), 0.5, 1, seed=t) for t in range(1000)])
    viewer.add_labels(frames, name="long")
    widget.input_combo.setCurrentText("long")
    widget.dims_combo.setCurrentText("2-D")
    widget.frames_combo.setCurrentText("every frame")
    worker = widget.run()
    widget.cancel()
    qtbot.waitUntil(lambda: widget.worker is None, timeout=60000)
    assert worker.abort_requested
    assert widget.output_layer is None and "cancelled" in widget.status.text()
    assert widget.progress.value() < 1000  # stopped before its last frame
    # and the next run works
    widget.frames_combo.setCurrentText("current frame")
    layer = run_to_end(qtbot, widget)
    assert layer.data.shape == (1, 64, 64)


def test_the_manifest_registers_the_widget():
    npe2 = pytest.importorskip("npe2")
    import importlib.resources

    manifest = npe2.PluginManifest.from_file(importlib.resources.files("cudacca.napari") / "napari.yaml")
    (widget,) = manifest.contributions.widgets
    assert widget.display_name == "Connected components"
    (command,) = manifest.contributions.commands
    assert command.python_name == "cudacca.napari._widget:ConnectedComponentsWidget"
    from importlib.metadata import entry_points

    if any(ep.value == "cudacca.napari:napari.yaml" for ep in entry_points(group="napari.manifest")):
        pm = npe2.PluginManager.instance()
        pm.discover()
        assert "cudacca" in [m.name for m in pm.iter_manifests()]
        assert "cudacca.connected_components" in [w.command for w in pm.iter_widgets()]
