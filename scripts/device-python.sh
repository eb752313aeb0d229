#!/usr/bin/env bash
# Runs on a GPU machine, from the repository root, with .whl carried (the cp312 cudacca wheel built
# with nvcc, and pylibs.tar.xz: the comparisons' libraries unpacked, cc3d among them; optionally dasklibs.tar.xz,
# dask and distributed with their dependencies, and cucim.tar.xz, cuCIM's skimage part, each unpacked the same
# way): the Python suite with the CUDA engine and CuPy/PyTorch inputs, compute-sanitizer on a Python session, then
# (BENCH=1) the benchmark.
# Logs go to $OUT (or ./device-logs).
set -uo pipefail
out=${OUT:-device-logs}; mkdir -p "$out"
status=0
site=/tmp/site; rm -rf "$site"; mkdir -p "$site"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/cudacca-*.whl
tar xJf .whl/pylibs.tar.xz -C "$site"
# Optional: dask and scipy for the Dask tests with CuPy chunks (python/tests/test_dask.py), when carried.
[ -f .whl/dasklibs.tar.xz ] && tar xJf .whl/dasklibs.tar.xz -C "$site"
# Optional: cuCIM's skimage part, for the benchmark's cupyx+cucim row.
[ -f .whl/cucim.tar.xz ] && tar xJf .whl/cucim.tar.xz -C "$site"
export PYTHONPATH=$site
repo=$PWD
python3 -c 'import cudacca, cupy, torch, cc3d; print("cudacca", cudacca.__version__, cudacca.cuda_available(), "cupy", cupy.__version__, "torch", torch.__version__)' 2>&1 | tee "$out/python-env.txt"
if [ "${PYTEST:-1}" = 1 ]; then
  (cd /tmp && python3 -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning -rs "$repo/python/tests") > "$out/pytest-gpu.log" 2>&1
  rc=$?; [ $rc = 0 ] || status=1
  echo "pytest: exit $rc :: $(tail -n 1 "$out/pytest-gpu.log")"
fi
if [ "${SANITIZE:-1}" = 1 ]; then
  for tool in memcheck racecheck; do
    (cd /tmp && compute-sanitizer --tool "$tool" --error-exitcode 99 python3 "$repo/scripts/device-python-sanitize.py") \
      > "$out/sanitizer-$tool-python.log" 2>&1
    rc=$?; [ $rc = 0 ] || status=1
    echo "compute-sanitizer $tool python: exit $rc :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool-python.log" | tail -n 1)"
  done
fi
if [ "${LARGE:-0}" = 1 ]; then
  (cd /tmp && python3 "$repo/scripts/device-large-volume.py" ${LARGE_ARGS:-} --json "$out/large-volume.json") \
    > "$out/large-volume.log" 2>&1
  rc=$?; [ $rc = 0 ] || status=1
  echo "large volume: exit $rc"; tail -n 40 "$out/large-volume.log"
fi
if [ "${BENCH:-0}" = 1 ]; then
  (cd /tmp && python3 -m cudacca.benchmark ${BENCH_ARGS:-} --json "$out/benchmark.json") > "$out/benchmark.log" 2>&1
  rc=$?; [ $rc = 0 ] || status=1
  echo "benchmark: exit $rc"; cat "$out/benchmark.log"
fi
exit $status
