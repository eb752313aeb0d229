#include "itkCudaConnectedComponentAnalysisEnums.h"

namespace itk
{
std::ostream &
operator<<(std::ostream & out, const CudaConnectedComponentAnalysisEnums::Backend value)
{
  switch (value)
  {
    case CudaConnectedComponentAnalysisEnums::Backend::Automatic:
      return out << "itk::CudaConnectedComponentAnalysisEnums::Backend::Automatic";
    case CudaConnectedComponentAnalysisEnums::Backend::CUDA:
      return out << "itk::CudaConnectedComponentAnalysisEnums::Backend::CUDA";
    case CudaConnectedComponentAnalysisEnums::Backend::CPU:
      return out << "itk::CudaConnectedComponentAnalysisEnums::Backend::CPU";
  }
  return out << "INVALID VALUE FOR itk::CudaConnectedComponentAnalysisEnums::Backend";
}
} // namespace itk
