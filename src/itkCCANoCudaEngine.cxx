/*=========================================================================
 *  CUDA entry points of a CPU-only build (no CUDA compiler at configure time).
 *=========================================================================*/
#include "itkCCAEngine.h"

namespace itk
{
namespace cca
{

bool
IsCudaEngineCompiled()
{
  return false;
}

int
GetCudaDeviceCount(std::string * reason)
{
  if (reason)
  {
    *reason = "this build has no CUDA engine (configured without a CUDA compiler)";
  }
  return 0;
}

std::unique_ptr<Engine>
CreateCudaEngine(int)
{
  throw EngineUnavailable("the CUDA engine was requested, but this build has no CUDA engine "
                          "(configured without a CUDA compiler)");
}

} // namespace cca
} // namespace itk

#include "itkCCABenchmark.h"

namespace itk
{
namespace cca
{
DeviceResidentTimings
BenchmarkCudaDeviceResident(const LabelingRequest &, int, int, int)
{
  throw EngineUnavailable("this build has no CUDA engine (configured without a CUDA compiler)");
}

TransferRates
BenchmarkCudaTransfers(int, std::uint64_t, int)
{
  throw EngineUnavailable("this build has no CUDA engine (configured without a CUDA compiler)");
}
} // namespace cca
} // namespace itk
