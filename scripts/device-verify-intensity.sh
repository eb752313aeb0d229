# On a GPU machine, .whl carried (bundle.tar.xz, the cp312 wheel, pylibs.tar.xz): a short re-check of issue
# 23's GPU pieces after a change (the gpu ctest of the intensity, tool and multi-label cases; memcheck and racecheck
# on the intensity cases; the Python intensity and device tests), then benchmark mode i (SIZE3D, default 512).
set -o pipefail
export PYTHONUNBUFFERED=1 CTEST_JOBS=8
bash scripts/device-unpack.sh
source .device-bundle/env.sh
nvidia-smi -L | tee $OUT/device.txt
ctest --test-dir "$BUNDLE_BUILD" -L gpu -R "CCAIntensity|CCATool_intensity|CCAMultiLabel" -j8 --output-on-failure \
  > $OUT/ctest-gpu.log 2>&1; grep -E "tests passed|\*\*\*" $OUT/ctest-gpu.log
[ "${SANITIZE:-1}" = 1 ] && RUN_CTEST=0 bash scripts/device-run-intensity.sh 2>&1 | grep -E "int-"
site=/tmp/site; rm -rf "$site"; mkdir -p "$site"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/cudacca-*.whl
tar xJf .whl/pylibs.tar.xz -C "$site"
export PYTHONPATH=$site
repo=$PWD
(cd /tmp && python3 -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning "$repo/python/tests/test_intensity.py" \
  "$repo/python/tests/test_device.py" -k "intensity or multilabel or two_workers") > $OUT/pytest-gpu.log 2>&1
echo "pytest: exit $? :: $(tail -n 1 $OUT/pytest-gpu.log)"
python3 -c "from monai.utils import optional_import; print('monai cucim:', optional_import('cucim')[1])" 2>&1 | tail -1
[ "${BENCH:-1}" = 1 ] && timeout ${BENCH_TIMEOUT:-300} "$BUNDLE_BUILD/examples/CudaConnectedComponentAnalysisBenchmark" --modes i \
  --size3d ${SIZE3D:-512} --densities ${DENSITIES:-0.2,0.5,0.8} --runs 2 --cpu-runs 1 --json $OUT/intensity.json 2>&1 \
  | tee $OUT/intensity.txt
