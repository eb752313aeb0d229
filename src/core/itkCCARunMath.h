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
#ifndef itkCCARunMath_h
#define itkCCARunMath_h

#include <cstdint>

// One run's closed-form contributions to a component's sums, written once for both engines (as ITK's
// itkScanlineFilterCommon.h holds the run logic its labeling filters share): the CPU engine (src/) calls
// these as inline host functions, the CUDA engine (cuda/) as device functions. The header includes no
// ITK and no CUDA header. A run is the half-open x interval [begin, end) of one row (y, z).
#ifdef __CUDACC__
#  define CCA_HOST_DEVICE __host__ __device__ __forceinline__
#else
#  define CCA_HOST_DEVICE inline
#endif

namespace itk
{
namespace cca
{
namespace runmath
{

/** Σx over [begin, end): (begin + end - 1) * length / 2, halving whichever factor is even so that no
 * intermediate product exceeds the result. */
CCA_HOST_DEVICE std::uint64_t
                SumOfRange(std::uint64_t begin, std::uint64_t end)
{
  const std::uint64_t length = end - begin;
  const std::uint64_t firstPlusLast = begin + end - 1;
  return (length % 2 == 0) ? (length / 2) * firstPlusLast : length * (firstPlusLast / 2);
}

/** Σx² over [begin, end): L·x0² + x0·L(L − 1) + (L − 1)L(2L − 1)/6 for L = end − begin, x0 = begin.
 * The division by 6 is done on the factors, which it divides exactly, so that the rest is wrapping
 * 64-bit arithmetic: each term is exact modulo 2^64, and so is the sum, which is therefore exact
 * whenever it fits in 64 bits. */
CCA_HOST_DEVICE std::uint64_t
                SumOfSquaresOfRange(std::uint64_t begin, std::uint64_t end)
{
  const std::uint64_t length = end - begin;
  std::uint64_t       a = length - 1;
  std::uint64_t       b = length;
  std::uint64_t       c = 2 * length - 1;
  if (a % 2 == 0)
  {
    a /= 2;
  }
  else
  {
    b /= 2;
  }
  // One of L - 1, L and 2L - 1 is a multiple of 3 (and stays one after the halving above).
  if (a % 3 == 0)
  {
    a /= 3;
  }
  else if (b % 3 == 0)
  {
    b /= 3;
  }
  else
  {
    c /= 3;
  }
  return length * begin * begin + begin * length * (length - 1) + a * b * c;
}

/** Length of the intersection of [a0, a1) and [b0, b1); signed coordinates allowed (intervals shifted
 * by one to the left may start at -1). */
template <typename T>
CCA_HOST_DEVICE T
Overlap(T a0, T a1, T b0, T b1)
{
  const T lo = a0 > b0 ? a0 : b0;
  const T hi = a1 < b1 ? a1 : b1;
  return hi > lo ? hi - lo : T{ 0 };
}

/** Σx, Σy, Σz of the run's pixels; `sumX` is SumOfRange(begin, end). */
CCA_HOST_DEVICE void
RunIndexSums(std::uint64_t sumX, std::uint64_t length, std::uint64_t y, std::uint64_t z, std::uint64_t sums[3])
{
  sums[0] = sumX;
  sums[1] = y * length;
  sums[2] = z * length;
}

/** Σxx, Σyy, Σzz, Σxy, Σxz, Σyz of the run's pixels (ComponentSums::indexProductSum's order). */
CCA_HOST_DEVICE void
RunIndexProductSums(std::uint64_t begin, std::uint64_t end, std::uint64_t sumX, std::uint64_t y, std::uint64_t z,
                    std::uint64_t products[6])
{
  const std::uint64_t length = end - begin;
  products[0] = SumOfSquaresOfRange(begin, end);
  products[1] = length * y * y;
  products[2] = length * z * z;
  products[3] = y * sumX;
  products[4] = z * sumX;
  products[5] = length * y * z;
}

/** The run's pixels on the image border, as ITK's ShapeLabelMapFilter counts NumberOfPixelsOnBorder:
 * all of them when the row's y or z is a first or last index (`rowOnBorder`), else the run's end
 * pixels that touch x = 0 or x = rowLength − 1 (a single pixel at both ends counts once). */
CCA_HOST_DEVICE std::uint64_t
                RunPixelsOnBorder(std::uint64_t begin, std::uint64_t end, std::uint64_t rowLength, bool rowOnBorder)
{
  const std::uint64_t length = end - begin;
  if (rowOnBorder)
  {
    return length;
  }
  const std::uint64_t atFirst = begin == 0 ? 1 : 0;
  const std::uint64_t atLast = end == rowLength ? 1 : 0;
  return atFirst + atLast - (atFirst & atLast & (length == 1 ? 1 : 0));
}

/** The run's pixel faces perpendicular to x on the image border (ITK's PerimeterOnBorder along x,
 * before the spacing): one at x = 0, one at x = rowLength − 1. */
CCA_HOST_DEVICE std::uint64_t
                RunXBorderFaces(std::uint64_t begin, std::uint64_t end, std::uint64_t rowLength)
{
  return (begin == 0 ? 1 : 0) + (end == rowLength ? 1 : 0);
}

/** The run's pixel faces perpendicular to y (or z) on the border: `length` per border side the row's
 * y (or z) lies on (0, 1 or 2 sides). */
CCA_HOST_DEVICE std::uint64_t
                RunRowBorderFaces(std::uint64_t length, std::uint64_t index, std::uint64_t size)
{
  return length * ((index == 0 ? 1 : 0) + (index + 1 == size ? 1 : 0));
}

} // namespace runmath
} // namespace cca
} // namespace itk

#endif
