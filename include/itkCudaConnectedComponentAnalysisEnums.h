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
// Enumerations of itk::CudaConnectedComponentAnalysisImageFilter.
#ifndef itkCudaConnectedComponentAnalysisEnums_h
#define itkCudaConnectedComponentAnalysisEnums_h

#include "CudaConnectedComponentAnalysisExport.h"

#include <cstdint>
#include <ostream>

namespace itk
{
/** \class CudaConnectedComponentAnalysisEnums
 * \brief Enumerations of CudaConnectedComponentAnalysisImageFilter.
 * \ingroup CudaConnectedComponentAnalysis
 */
class CudaConnectedComponentAnalysis_EXPORT CudaConnectedComponentAnalysisEnums
{
public:
  /** \class Backend
   * \brief Which engine labels the image.
   *
   * Automatic: the CPU engine for images of fewer than 24,576 pixels (where it is faster), else the CUDA
   * engine when a usable device exists (and the image fits its 32-bit index type), else the CPU engine,
   * said once per process. CUDA: the CUDA engine or an exception.
   * CPU: the CPU engine.
   * \ingroup CudaConnectedComponentAnalysis
   */
  enum class Backend : std::uint8_t
  {
    Automatic,
    CUDA,
    CPU
  };

  /** The backend in a word, for messages: "automatic", "CUDA" or "CPU". */
  static const char *
  BackendName(Backend value);
};

CudaConnectedComponentAnalysis_EXPORT std::ostream &
operator<<(std::ostream & out, const CudaConnectedComponentAnalysisEnums::Backend value);

} // namespace itk

#endif
