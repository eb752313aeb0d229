# Issue 28 on the lent GPU (carry .whl with bundle.tar.xz): the direct algorithms' GPU test (BUF, HA4, HA4+OTF,
# HA4+CD against ITK) and the feature variants' test, compute-sanitizer memcheck, racecheck (shared memory only)
# and initcheck on the small form of the direct test, then (BENCH=1) the paper's benchmark with every Table 1 row: mode a (FLSL+CD) and b (labels +
# features), --variants 1 (naive, FLSL, FLSL+OTF) and --direct (HA4 rows, BUF) at 8192², both connectivities.
set -o pipefail
bash scripts/device-unpack.sh
source .device-bundle/env.sh
nvidia-smi -L | tee $OUT/device.txt
ctest --test-dir "$BUNDLE_BUILD" -R "CCAGPUDirectAlgorithms|CCAGPUFeatureVariants" --output-on-failure \
  > $OUT/ctest-direct.log 2>&1; grep -E "tests passed|\*\*\*|images checked|DIFFER|differ" $OUT/ctest-direct.log | head -20
d="$BUNDLE_BUILD/test/CudaConnectedComponentAnalysisTestDriver"
s() { tool=$1; timeout ${SAN_TIMEOUT:-240} compute-sanitizer --tool $tool --error-exitcode 99 "$d" \
  itkCudaConnectedComponentAnalysisGPUTest direct small > $OUT/san-$tool-direct.log 2>&1
  echo "$tool direct small: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool-direct.log | tail -n1)"; }
if [ "${SANITIZE:-1}" = 1 ]; then
  { s memcheck & s racecheck & s initcheck & wait; } 2>&1 | tee $OUT/sanitizer-summary-direct.txt
fi
if [ "${BENCH:-0}" = 1 ]; then
  timeout ${BENCH_TIMEOUT:-400} "$BUNDLE_BUILD/examples/CudaConnectedComponentAnalysisBenchmark" --modes ab \
    --variants 1 --direct buf,ha4,ha4-otf,ha4-cd --size ${SIZE:-8192} --runs ${RUNS:-10} --warmup 1 \
    --connectivity both --json $OUT/direct-${SIZE:-8192}.json 2>$OUT/direct-${SIZE:-8192}.err | tee $OUT/direct-${SIZE:-8192}.txt
fi
