/*=========================================================================
 *
 *  Copyright NumFOCUS
 *
 *  Licensed under the Apache License, Version 2.0 (the "License");
 *  you may not use this file except in compliance with the License.
 *  You may obtain a copy of the License at
 *
 *         http://www.apache.org/licenses/LICENSE-2.0.txt
 *
 *  Unless required by applicable law or agreed to in writing, software
 *  distributed under the License is distributed on an "AS IS" BASIS,
 *  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 *  See the License for the specific language governing permissions and
 *  limitations under the License.
 *
 *=========================================================================*/
#include "itkCudaConnectedComponentAnalysisEnums.h"

namespace itk
{
const char *
CudaConnectedComponentAnalysisEnums::BackendName(Backend value)
{
  switch (value)
  {
    case Backend::Automatic:
      return "automatic";
    case Backend::CUDA:
      return "CUDA";
    case Backend::CPU:
      return "CPU";
  }
  return "invalid";
}

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
