# The GPU machine's run of the intensity statistics (and the multi-label pieces not run on a GPU before):
# the whole gpu ctest, then compute-sanitizer memcheck and racecheck on the intensity and multi-label cases that
# fit its slowdown, four at a time. Carry .device-bundle; logs to $OUT.
set -o pipefail
export CTEST_JOBS=8
source .device-bundle/env.sh
ldd "$BUNDLE_BUILD/test/CudaConnectedComponentAnalysisTestDriver" | grep -i "not found" | head -3
if [ "${RUN_CTEST:-1}" = 1 ]; then
  SANITIZE=0 bash scripts/device-check.sh 2>&1 | tail -5
  cp device-logs/ctest-gpu.log $OUT/ 2>/dev/null
fi
d="$BUNDLE_BUILD/test/CudaConnectedComponentAnalysisTestDriver"
data=$PWD/test/Data/Input
s() { tool=$1; name=$2; shift 2; timeout ${SAN_TIMEOUT:-240} compute-sanitizer --tool $tool --error-exitcode 99 "$d" "$@" > $OUT/san-$tool-$name.log 2>&1; echo "$tool $name: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san-$tool-$name.log | tail -n1)"; }
{
  s memcheck int-selection itkCudaConnectedComponentAnalysisIntensityTest selection cuda &
  s racecheck int-selection itkCudaConnectedComponentAnalysisIntensityTest selection cuda &
  s memcheck int-real itkCudaConnectedComponentAnalysisIntensityTest real cuda $data/Anatomical.nii.gz $data/CTSlice.mha &
  s racecheck int-real itkCudaConnectedComponentAnalysisIntensityTest real cuda $data/Anatomical.nii.gz $data/CTSlice.mha &
  wait
  s memcheck ml-real itkCudaConnectedComponentAnalysisMultiLabelTest real cuda $data/Anatomical.nii.gz $data/CTSlice.mha &
  s racecheck ml-real itkCudaConnectedComponentAnalysisMultiLabelTest real cuda $data/Anatomical.nii.gz $data/CTSlice.mha &
  s memcheck ml-slabs itkCudaConnectedComponentAnalysisMultiLabelTest slabs cuda &
  s racecheck int-refusals itkCudaConnectedComponentAnalysisIntensityTest refusals cuda &
  wait
} 2>&1 | tee $OUT/sanitizer-summary.txt
cd $OUT && tar czf sanitizer-logs.tgz san-*.log && rm -f san-*.log
