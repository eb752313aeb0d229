#!/usr/bin/env bash
# The main job: install what is missing, build, and label the bundled sample (a CT slice, bone at
# >= 250 HU), printing the components and their pixel count, bounding box and centroid.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
"$BUILD_DIR/examples/CudaConnectedComponentAnalysisExample" "$root/test/Data/Input/CTSlice.mha" 250 "$@"
