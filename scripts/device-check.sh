#!/usr/bin/env bash
# Runs on a GPU machine without ITK, from the repository root, with .device-bundle carried (the build's
# executables, CTest files and the ITK libraries they load):
#   the gpu-labelled tests, then compute-sanitizer memcheck and racecheck on the GPU test cases that
#   fit its slowdown: the binaries built on the Debian machine. Then the GPU machine's own toolchain builds and
#   tests the sdist (scripts/device-own-build.sh: dist/ or .whl/ carried with the sdist and the pinned build
#   wheels; OWN_BUILD=0 leaves it out). Logs go to $OUT (or ./device-logs).
set -uo pipefail
out=${OUT:-device-logs}; mkdir -p "$out"
source .device-bundle/env.sh
driver="$BUNDLE_BUILD/test/CudaConnectedComponentAnalysisTestDriver"
data="$PWD/test/Data/Input"
nvidia-smi -L | tee "$out/device.txt"
# In parallel (the reference filters are CPU-bound), except the out-of-memory test, which takes the
# device's memory itself and runs alone afterwards.
if [ "${RUN_CTEST:-1}" = 1 ]; then
  { ctest --test-dir "$BUNDLE_BUILD" -L gpu -E CCAGPUOutOfMemory --output-on-failure -j"${CTEST_JOBS:-6}" ${CTEST_ARGS:-}
    ctest --test-dir "$BUNDLE_BUILD" -L gpu -R CCAGPUOutOfMemory --output-on-failure ${CTEST_ARGS:-}
  } 2>&1 | tee "$out/ctest-gpu.log" | grep -E "tests passed|\*\*\*|Total Test time"
fi
sanitize() { # tool name args...
  local tool=$1 name=$2; shift 2
  compute-sanitizer --tool "$tool" --error-exitcode 99 "$driver" "$@" > "$out/sanitizer-$tool-$name.log" 2>&1
  echo "compute-sanitizer $tool $name: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool-$name.log" | tail -n 1)"
}
if [ "${SANITIZE:-1}" = 1 ]; then
  for tool in memcheck racecheck; do
    for fully in 0 1; do
      sanitize $tool ct$fully itkCudaConnectedComponentAnalysisRegressionTest "$data/CTSlice.mha" 250 /tmp/ct$fully.mha $fully cuda
      sanitize $tool synthetic$fully itkCudaConnectedComponentAnalysisRegressionTest "$data/Synthetic.png" 1 /tmp/s$fully.png $fully cuda
    done
    sanitize $tool badinput itkCudaConnectedComponentAnalysisBadInputTest cuda
    sanitize $tool labelmap2d itkCudaConnectedComponentAnalysisLabelMapTest cuda 0 2 0
    sanitize $tool labelmap3d itkCudaConnectedComponentAnalysisLabelMapTest cuda 1 3 0
    sanitize $tool repeat itkCudaConnectedComponentAnalysisPipelineTest repeat cuda
    sanitize $tool postprocessing itkCudaConnectedComponentAnalysisPostProcessingTest keepn cuda
    sanitize $tool postprocessing-edge itkCudaConnectedComponentAnalysisPostProcessingTest edge cuda
  done
  sanitize memcheck slab-filter itkCudaConnectedComponentAnalysisSlabTest filter cuda
  compute-sanitizer --tool memcheck --error-exitcode 99 "$driver" itkCudaConnectedComponentAnalysisExactnessTest cuda 1 3 \
    > "$out/sanitizer-memcheck-exactness3d.log" 2>&1
  echo "compute-sanitizer memcheck exactness3d: exit $? :: $(grep 'ERROR SUMMARY' "$out/sanitizer-memcheck-exactness3d.log" | tail -n 1)"
fi 2>&1 | tee "$out/sanitizer-summary.txt"
if [ "${OWN_BUILD:-1}" = 1 ]; then
  if ls dist/cudacca-*.tar.gz .whl/cudacca-*.tar.gz >/dev/null 2>&1; then
    bash "$(dirname "${BASH_SOURCE[0]}")/device-own-build.sh" 2>&1 | tee "$out/own-build-summary.txt"
  else
    echo "own build: NOT RUN -- no sdist carried (dist/ or .whl/); the GPU machine's toolchain is untested" \
      | tee "$out/own-build-summary.txt"
  fi
fi
