#!/usr/bin/env bash
# The main job: install what is missing, build, and run the command-line tool `cca` on the bundled 3D sample
# (test/Data/Input/Anatomical.nii.gz, a 2 mm T1 MRI): bright tissue (>= 9000) with 26-connectivity, islands
# under 50 mm^3 removed, objects numbered by size; writes the label image and the tables of every object's
# shape attributes into $BUILD_DIR/sample/ and prints the summary. Extra options go to the tool
# (./scripts/run-sample.sh --backend cpu; cca --help lists them).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
out="$BUILD_DIR/sample"
mkdir -p "$out"
"$BUILD_DIR/examples/cca" "$root/test/Data/Input/Anatomical.nii.gz" --lower 9000 --connectivity full \
  --min-physical-size 50 --sort --output "$out/labels.nii.gz" --csv "$out/objects.csv" --json "$out/objects.json" "$@"
