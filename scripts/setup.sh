#!/usr/bin/env bash
# Installs what the build needs and is missing (Debian/Ubuntu packages), then configures and builds.
# Sourced by run-sample.sh and run-tests.sh. BUILD_DIR (default: build) and extra CMake arguments in
# CMAKE_ARGS may be set by the caller.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}

"$root/scripts/install-missing.sh" setup cmake g++ gcc make libinsighttoolkit5-dev nlohmann-json3-dev libdeflate-dev

# The CUDA toolkit is optional: where nvcc exists (on PATH or in /usr/local/cuda) the CUDA engine is
# built, else CMake says once that this is a CPU-only build.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$root" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j"$jobs"
