"""cudacca's napari plugin: the dock widget "Connected components" (Plugins menu), registered by the manifest
napari.yaml when cudacca is installed with napari (`pip install "cudacca[napari]"`). The widget lives in _widget.py
(napari and Qt); what a run computes, in _compute.py (neither)."""
