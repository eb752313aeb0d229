/*=========================================================================
 *  Device-resident timing of the CUDA engine, for examples/CudaConnectedComponentAnalysisBenchmark:
 *  the image is uploaded once, then each run is timed with CUDA events around the on-device work
 *  only (the paper's method). ITK-free; throws EngineUnavailable in a build without CUDA.
 *=========================================================================*/
#ifndef itkCCABenchmark_h
#define itkCCABenchmark_h

#include "itkCCAEngine.h"

namespace itk
{
namespace cca
{

struct DeviceResidentTimings
{
  std::string         device;
  std::uint64_t       components = 0;
  std::vector<double> featuresMs;          ///< labeling + features, features left on the device
  std::vector<double> featuresAndLabelsMs; ///< the same plus the label image written on the device
};

CudaConnectedComponentAnalysis_EXPORT DeviceResidentTimings
BenchmarkCudaDeviceResident(const LabelingRequest & hostRequest, int deviceId, int warmupRuns, int timedRuns);

} // namespace cca
} // namespace itk

#endif
