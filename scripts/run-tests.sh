#!/usr/bin/env bash
# Install what is missing, build, run the tests. Without a CUDA device the gpu-labelled tests are
# reported as skipped, not failed.
#  1. standalone against Debian's ITK 5.2.1 (build/): the C++ tests;
#  2. the Python package cudacca: wheels built with pip into fresh venvs, pytest (scripts/python-tests.sh);
#  3. where an ITK 5.4.7 SDK is found (ITK_SDK_DIR, else an itk-sdk folder beside the checkout; docs/building.md,
#     "The ITK 5.4.7 SDK"), also as an ITK external module with its Python wrapping (build-itk54/, against a fresh
#     copy of the SDK's build tree): C++ and Python tests. CCA_SKIP_ITK_SDK=1 leaves this part out.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$jobs" "$@"

# The Python package (pip install ., pytest against pip's itk, scikit-image and cc3d). CCA_SKIP_PYTHON=1
# leaves it out.
if [ "${CCA_SKIP_PYTHON:-0}" != 1 ]; then
  "$root/scripts/python-tests.sh"
fi

# ITK_SDK_DIR first; else the first itk-sdk folder with a setup.sh beside the checkout (../*/itk-sdk), which is
# where a provided SDK is unpacked next to the source.
sdk=${ITK_SDK_DIR:-}
if [ -z "$sdk" ]; then
  for candidate in "$(cd "$root/.." && pwd)"/*/itk-sdk; do
    if [ -x "$candidate/setup.sh" ]; then sdk=$candidate; break; fi
  done
  sdk=${sdk:-$(cd "$root/.." && pwd)/*/itk-sdk}
fi
if [ "${CCA_SKIP_ITK_SDK:-0}" != 1 ] && [ -x "$sdk/setup.sh" ]; then
  echo "== External module against ITK 5.4.7 with Python wrapping ($sdk)"
  cache=$("$sdk/setup.sh" --fresh)
  build54=${BUILD_DIR_ITK54:-$root/build-itk54}
  cmake -C "$cache" -S "$root" -B "$build54" -G Ninja -DBUILD_TESTING=ON ${CMAKE_ARGS:-}
  cmake --build "$build54" -j"$jobs"
  ctest --test-dir "$build54" --output-on-failure -j"$jobs" "$@"
else
  echo "== No ITK SDK at $sdk: the external-module and Python tests are not run"
fi
