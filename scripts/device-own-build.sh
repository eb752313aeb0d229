#!/usr/bin/env bash
# Runs on a GPU machine, from the repository root: the project built there, by that machine's own
# compilers (its image sets CXX and CUDAHOSTCXX to /opt/gcc/bin/g++, a GCC 13.3 with no shared libstdc++; nvcc
# 13), from the sdist made here (`python3 -m build --sdist -o dist .`), then tested on its GPU. Carried:
# dist/ or .whl/ (the sdist) and .whl/ (the pinned build wheels nanobind, scikit-build-core, pathspec, packaging;
# pylibs.tar.xz: cc3d 4.1.1's cp312 wheel unpacked, for the comparisons). scripts/device-check.sh calls it after the
# Debian machine's binaries (unless OWN_BUILD=0); alone: `bash scripts/device-own-build.sh`. Logs go to $OUT.
#  1. the wheel, built with pip from the sdist: its exported symbols (PyInit__core alone), the GPU pytest;
#  2. the engines' ITK-free test (test/engine), configured with CMake there: ctest, then compute-sanitizer
#     memcheck and racecheck on its CUDA case.
set -uo pipefail
out=${OUT:-device-logs}; mkdir -p "$out"
repo=$PWD
status=0
# The newest sdist carried (make it from the tree under test: python3 -m build --sdist -o dist .).
sdist=$(ls -t dist/cudacca-*.tar.gz .whl/cudacca-*.tar.gz 2>/dev/null | head -n 1)
[ -n "$sdist" ] || { echo "device-own-build: no sdist in dist/ or .whl/ (python3 -m build --sdist -o dist .)"; exit 2; }
echo "sdist: $sdist ($(date -r "$sdist" '+%F %T'))"
for tool in nanobind scikit_build_core pathspec packaging; do
  [ "$(ls .whl/$tool-*.whl 2>/dev/null | wc -l)" = 1 ] || { echo "device-own-build: .whl/ needs one $tool wheel"; exit 2; }
done
archs=${OWN_CUDA_ARCHITECTURES:-90}
{
  echo "compilers: CXX=${CXX:-} CUDAHOSTCXX=${CUDAHOSTCXX:-}; c++ = $(command -v c++) ($(c++ --version | head -n 1))"
  for cxx in ${CXX:-} c++; do echo "libstdc++.so as $cxx finds it: $($cxx -print-file-name=libstdc++.so)"; done
  nvcc --version | tail -n 1; cmake --version | head -n 1
} 2>&1 | tee "$out/own-toolchain.txt"

# 1. The wheel.
bt=/tmp/own-build-tools; rm -rf "$bt" /tmp/own-wheel /tmp/own-site
python3 -m pip install -q --no-index --no-deps --target "$bt" .whl/nanobind-*.whl .whl/scikit_build_core-*.whl \
  .whl/pathspec-*.whl .whl/packaging-*.whl
start=$(date +%s)
PYTHONPATH=$bt CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=$archs" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
  python3 -m pip wheel -v --no-build-isolation --no-deps -w /tmp/own-wheel "$sdist" > "$out/own-wheel-build.log" 2>&1
rc=$?; echo "own wheel build: exit $rc, $(( $(date +%s) - start )) s :: $(ls /tmp/own-wheel 2>/dev/null)"
[ $rc = 0 ] || { tail -n 30 "$out/own-wheel-build.log"; exit 1; }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/own-site /tmp/own-wheel/cudacca-*.whl
[ -f .whl/pylibs.tar.xz ] && tar xJf .whl/pylibs.tar.xz -C /tmp/own-site
if exports=$(bash scripts/check-wheel-exports.sh /tmp/own-wheel/cudacca-*.whl); then
  echo "own wheel: $exports"
else
  echo "own wheel: $exports"; status=1
fi
(cd /tmp && PYTHONPATH=/tmp/own-site python3 -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning -rs \
  "$repo/python/tests") > "$out/own-pytest-gpu.log" 2>&1
rc=$?; [ $rc = 0 ] || status=1
echo "own wheel pytest: exit $rc :: $(tail -n 1 "$out/own-pytest-gpu.log")"

# 2. The engines' test, ITK-free, from the sdist's sources (OWN_ENGINE=0 leaves it out: a change to Python alone).
[ "${OWN_ENGINE:-1}" = 1 ] || exit $status
src=/tmp/own-src; rm -rf "$src" /tmp/own-engine; mkdir -p "$src"; tar xzf "$sdist" -C "$src" --strip-components 1
start=$(date +%s)
{ cmake -S "$src/test/engine" -B /tmp/own-engine -G Ninja -DCMAKE_CUDA_ARCHITECTURES="$archs" \
  && cmake --build /tmp/own-engine -j"$(nproc)"; } > "$out/own-engine-build.log" 2>&1
rc=$?; echo "own engine test build: exit $rc, $(( $(date +%s) - start )) s"
[ $rc = 0 ] || { tail -n 30 "$out/own-engine-build.log"; exit 1; }
ctest --test-dir /tmp/own-engine -V > "$out/own-engine-ctest.log" 2>&1
rc=$?; [ $rc = 0 ] || status=1
echo "own engine ctest: exit $rc :: $(grep -E 'tests passed' "$out/own-engine-ctest.log")"
grep -E "engine \(" "$out/own-engine-ctest.log" | sed 's/^/  /'
for tool in memcheck racecheck; do
  compute-sanitizer --tool "$tool" --error-exitcode 99 /tmp/own-engine/CudaConnectedComponentAnalysisEngineTest cuda 2 \
    > "$out/own-sanitizer-$tool-engine.log" 2>&1
  rc=$?; [ $rc = 0 ] || status=1
  echo "own compute-sanitizer $tool engine: exit $rc :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/own-sanitizer-$tool-engine.log" | tail -n 1)"
done
exit $status
