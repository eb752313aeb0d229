#!/usr/bin/env bash
# Install what is missing, build, run the tests. Without a CUDA device the gpu-labelled tests are
# reported as skipped (exit 77), not failed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$jobs" "$@"
