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
#ifndef itkCCAValueTolerance_h
#define itkCCAValueTolerance_h

// Value-tolerance connectivity (Connectivity::valueTolerance): the rule by which two neighboring foreground pixels
// join, written once for both engines (the CPU engine's pixel union-find, itkCCAValueTolerance.cxx, and the CUDA
// engine's, cuda/itkCCAValueToleranceStages.cu), and the host labeling the CPU engine runs before its multi-label
// stages.

#include "itkCCARunMath.h" // CCA_HOST_DEVICE
#include "itkCCATypes.h"

#include <cstdint>
#include <type_traits>

namespace itk
{
namespace cca
{

/** |a - b| <= tolerance: exactly for integer pixels (the tolerance's integer part), in the pixel type's precision
 * for floating-point ones (the difference rounded to the type, the tolerance too), as ITK's
 * ScalarConnectedComponentImageFilter and cc3d compare. A NaN joins nothing. */
template <typename T>
class ValueCloseness
{
public:
  explicit ValueCloseness(double tolerance)
  {
    if constexpr (std::is_floating_point<T>::value)
    {
      m_Threshold = static_cast<T>(tolerance);
    }
    else
    {
      m_Threshold = tolerance >= 18446744073709551615.0 ? UINT64_MAX : static_cast<std::uint64_t>(tolerance);
    }
  }

  CCA_HOST_DEVICE bool
  operator()(T a, T b) const
  {
    if constexpr (std::is_floating_point<T>::value)
    {
      const T difference = a > b ? a - b : b - a;
      return difference <= m_Threshold;
    }
    else
    {
      using U = typename std::make_unsigned<T>::type;
      const U difference = a > b ? static_cast<U>(static_cast<U>(a) - static_cast<U>(b))
                                 : static_cast<U>(static_cast<U>(b) - static_cast<U>(a));
      return static_cast<std::uint64_t>(difference) <= m_Threshold;
    }
  }

private:
  typename std::conditional<std::is_floating_point<T>::value, T, std::uint64_t>::type m_Threshold;
};

/** The CPU engine's first stage under value tolerance: the components of the request's foreground (non-zero input
 * inside the mask), neighbors at its connectivity joining where ValueCloseness says so, as one class per pixel into
 * `classes` (the image's size): 0 for background, else 1 + the component's first pixel's index (raster order). A
 * multi-label analysis of the classes labels exactly those components. TId: uint32 below 2^32 pixels, else uint64.
 * Host work on `numberOfThreads` threads. */
template <typename TId>
void
LabelWithinTolerance(const Request & request, unsigned numberOfThreads, TId * classes);

} // namespace cca
} // namespace itk

#endif
