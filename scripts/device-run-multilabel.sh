set -o pipefail
export CTEST_JOBS=8
source .device-bundle/env.sh
ldd "$BUNDLE_BUILD/test/CudaConnectedComponentAnalysisTestDriver" | grep -i "not found" | head -3
SANITIZE=0 bash scripts/device-check.sh 2>&1 | tail -5
cp device-logs/ctest-gpu.log $OUT/ 2>/dev/null
d="$BUNDLE_BUILD/test/CudaConnectedComponentAnalysisTestDriver"
s() { tool=$1; name=$2; shift 2; timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 "$d" "$@" > $OUT/san-$tool-$name.log 2>&1; echo "$tool $name: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool-$name.log | tail -n1)"; }
{ s memcheck ml-perclass itkCudaConnectedComponentAnalysisMultiLabelTest perclass cuda
  s racecheck ml-perclass itkCudaConnectedComponentAnalysisMultiLabelTest perclass cuda
  s memcheck ct1 itkCudaConnectedComponentAnalysisRegressionTest $PWD/test/Data/Input/CTSlice.mha 250 /tmp/ct1.mha 1 cuda
  s racecheck ct1 itkCudaConnectedComponentAnalysisRegressionTest $PWD/test/Data/Input/CTSlice.mha 250 /tmp/ct1.mha 1 cuda
  s memcheck labelmap3d itkCudaConnectedComponentAnalysisLabelMapTest cuda 1 3 0
} 2>&1 | tee $OUT/sanitizer-summary.txt
cd $OUT && tar czf sanitizer-logs.tgz san-*.log && rm -f san-*.log
