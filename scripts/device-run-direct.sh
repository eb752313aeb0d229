# On a GPU machine (carry .device-bundle, or .whl with bundle.tar.xz): the direct algorithms' GPU test
# (BUF, HA4, HA4+OTF, HA4+CD against ITK) and the feature variants' test (with the labels-only variant),
# compute-sanitizer memcheck, racecheck (shared memory only) and initcheck on the small form of the direct test
# and memcheck on the variants' test, then (BENCH=1) the paper's benchmark with every Table 1 row: mode a
# (FLSL+CD) and b (labels + features), --variants 1 (naive, FLSL, FLSL+OTF), --direct (HA4 rows, BUF, and our
# labels only) at 8192², both connectivities, and the real images of the test data.
# Environment: TESTS (ctest -R regex, empty: none), SANITIZE 0|1|variants, BENCH 0|1, SIZE, RUNS, BENCH_TIMEOUT.
set -o pipefail
bash scripts/device-unpack.sh
source .device-bundle/env.sh
nvidia-smi -L | tee "$OUT"/device.txt
d="$BUNDLE_BUILD/test/CudaConnectedComponentAnalysisTestDriver"
b="$BUNDLE_BUILD/examples/CudaConnectedComponentAnalysisBenchmark"
tests=${TESTS-CCAGPUDirectAlgorithms|CCAGPUFeatureVariants}
if [ -n "$tests" ]; then
  ctest --test-dir "$BUNDLE_BUILD" -R "$tests" --output-on-failure > "$OUT"/ctest-direct.log 2>&1
  grep -E "tests passed|\*\*\*|images checked|DIFFER|differ" "$OUT"/ctest-direct.log | head -20
fi
s() { tool=$1; shift; log="$OUT"/san-$tool-$1.log
  timeout ${SAN_TIMEOUT:-240} compute-sanitizer --tool $tool --error-exitcode 99 "$d" \
    itkCudaConnectedComponentAnalysisGPUTest "$@" > $log 2>&1
  echo "$tool $*: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $log | tail -n1)"; }
if [ "${BENCH:-0}" = 1 ]; then
  timeout ${BENCH_TIMEOUT:-400} "$b" --modes ab --variants 1 --direct buf,buf-halving,ha4,ha4-otf,ha4-cd --size ${SIZE:-8192} \
    --runs ${RUNS:-10} --warmup 1 --connectivity both --json "$OUT"/direct-${SIZE:-8192}.json \
    2>"$OUT"/direct-${SIZE:-8192}.err | tee "$OUT"/direct-${SIZE:-8192}.txt
  timeout 120 "$b" --modes a --size 256 --runs ${RUNS:-10} --series ones --direct buf,buf-halving,ha4,ha4-otf,ha4-cd \
    --direct-images test/Data/Input/CTSlice.mha,test/Data/Input/Anatomical.nii.gz --json "$OUT"/direct-images.json \
    > "$OUT"/direct-images.txt 2>&1; sed -n '/Real images/,$p' "$OUT"/direct-images.txt
fi
# After the benchmark, so that it runs alone (SANITIZE=variants: the variants' memcheck only).
if [ "${SANITIZE:-1}" = 1 ]; then
  { s memcheck direct small & s racecheck direct small & s initcheck direct small & s memcheck variants & wait; } 2>&1 \
    | tee "$OUT"/sanitizer-summary-direct.txt
elif [ "${SANITIZE:-1}" = variants ]; then
  s memcheck variants | tee "$OUT"/sanitizer-summary-direct.txt
fi
