#!/usr/bin/env python3
"""Label the bundled CT slice from Python and measure its bone components.

Usage: CudaConnectedComponentAnalysisExample.py [input.mha] [threshold]
  (defaults: test/Data/Input/CTSlice.mha, 250 HU: bone)
Needs the module built with its Python wrapping (README, "From Python").
"""
import sys
from pathlib import Path

import numpy as np

import itk

here = Path(__file__).resolve().parent
input_file = sys.argv[1] if len(sys.argv) > 1 else str(here.parent / "test" / "Data" / "Input" / "CTSlice.mha")
threshold = float(sys.argv[2]) if len(sys.argv) > 2 else 250.0

ct = itk.imread(input_file, itk.F)
# Objects: pixels at or above the threshold, as an unsigned char mask with the CT's geometry.
bone = itk.image_from_array((itk.array_view_from_image(ct) >= threshold).astype(np.uint8))
bone.CopyInformation(ct)

# Functional form: the label image (output 0), labels identical to itk.connected_component_image_filter.
labels = itk.cuda_connected_component_analysis_image_filter(bone, fully_connected=True)
print("label image:", itk.template(labels)[1], "max label", int(itk.array_view_from_image(labels).max()))

# Object form: the LabelMap of ShapeLabelObjects and the per-component table.
cca = itk.CudaConnectedComponentAnalysisImageFilter.New(bone, fully_connected=True)
cca.Update()
print(f"{cca.GetObjectCount()} components, engine: {cca.GetBackendDescription()}")
print(f"times: analyze {cca.GetAnalyzeTime() * 1e3:.2f} ms, label image {cca.GetWriteLabelsTime() * 1e3:.2f} ms, "
      f"LabelMap {cca.GetBuildLabelMapTime() * 1e3:.2f} ms")

table = cca.GetComponentFeaturesAsArrays()         # dict of NumPy arrays, one row per label
largest = np.argsort(table["PhysicalSize"])[::-1][:5]
for k in largest:
    label = int(table["Label"][k])
    shape = cca.GetLabelMap().GetLabelObject(label)
    print(f"label {label:3d}: {table['PhysicalSize'][k]:8.1f} mm2, perimeter {shape.GetPerimeter():7.1f} mm, "
          f"centroid ({table['Centroid-0'][k]:.1f}, {table['Centroid-1'][k]:.1f}) mm")

# The LabelMap goes on through ITK's LabelMap filters: keep components of at least 20 mm2.
lm_type = type(cca.GetLabelMap())
opening = itk.ShapeOpeningLabelMapFilter[lm_type].New(cca.GetLabelMap())
opening.SetAttribute("PhysicalSize")
opening.SetLambda(20.0)
kept = itk.LabelMapToLabelImageFilter[lm_type, itk.Image[itk.US, 2]].New(opening)
kept.Update()
print("components of 20 mm2 or more:", len(np.unique(itk.array_view_from_image(kept.GetOutput()))) - 1)
