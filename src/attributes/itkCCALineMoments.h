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
#ifndef itkCCALineMoments_h
#define itkCCALineMoments_h

// Second moments of components too long for the engines' 64-bit sums.
// Both engines accumulate Σq_i·q_j in wrapping 64-bit integers, exact whenever the true sum is below 2^64,
// which a component's is when N·max(q)² < 2^64 (Cauchy-Schwarz covers the cross terms). A longer component
// (a run of millions of pixels along one axis) has its covariance numerators N·Σq_iq_j − Σq_i·Σq_j
// recomputed here from its lines, with q taken from its bounding box's corner: the numerator does not
// change under a shift, so the result is the same integer, hence the same double, as the 64-bit path gives
// wherever both apply; the sums in 128 bits, the numerators in signed 128 bits. Only the few components
// that need it pay for it, and the engines (and their GPU kernels) stay as they are.

#include <array>
#include <cstdint>
#include <limits>

namespace itk
{
namespace cca
{

/** Whether the engine's 64-bit Σq_i·q_j of a component with `numberOfPixels` pixels, whose largest index
 * (engine space, zero-based) along any axis is `largestIndex`, are exact: N·m² ≤ 2^64 − 1. */
inline bool
ProductSumsFitIn64Bits(std::uint64_t numberOfPixels, std::uint64_t largestIndex)
{
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  return largestIndex == 0 ||
         (numberOfPixels <= max / largestIndex && numberOfPixels * largestIndex <= max / largestIndex);
}

#if defined(__SIZEOF_INT128__)
/** Whether the recomputation from lines is available (it needs the compiler's 128-bit integers). */
constexpr bool LineMomentsAvailable = true;

/** Covariance numerators N·Σr_i·r_j − Σr_i·Σr_j (rows i, columns j; D ≤ 3) of one component from its
 * lines, r = line index − `corner` (the component's bounding-box start, so r ≥ 0). `LineIndex(l)` gives line
 * l's start index (an indexable of D signed values) and `LineLength(l)` its length, for l in [first, last).
 * Exact while N²·extent² < 2^127 (CanMeasureMoments checks that for the image). */
template <unsigned int D, typename TIndexOf, typename TLengthOf>
std::array<std::array<double, 3>, 3>
CovarianceNumeratorsFromLines(const std::array<std::int64_t, 3> & corner, std::uint64_t first, std::uint64_t last,
                              TIndexOf && LineIndex, TLengthOf && LineLength)
{
  using Wide = unsigned __int128;
  Wide n = 0;
  Wide sum[3] = { 0, 0, 0 };
  Wide product[3][3] = { { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } };
  for (std::uint64_t l = first; l < last; ++l)
  {
    const auto & index = LineIndex(l);
    const Wide   length = LineLength(l);
    Wide         r[3] = { 0, 0, 0 };
    for (unsigned int d = 0; d < D; ++d)
    {
      r[d] = static_cast<Wide>(static_cast<std::int64_t>(index[d]) - corner[d]);
    }
    // Along x the line covers r0 .. r0 + L − 1: Σx = L·r0 + L(L−1)/2, Σx² = L·r0² + r0·L(L−1) + (L−1)L(2L−1)/6.
    const Wide triangle = length * (length - 1) / 2;
    const Wide sumX = length * r[0] + triangle;
    const Wide sumXX = length * r[0] * r[0] + 2 * r[0] * triangle + (length - 1) * length * (2 * length - 1) / 6;
    n += length;
    sum[0] += sumX;
    product[0][0] += sumXX;
    for (unsigned int i = 1; i < D; ++i)
    {
      sum[i] += length * r[i];
      product[0][i] += sumX * r[i];
      for (unsigned int j = i; j < D; ++j)
      {
        product[i][j] += length * r[i] * r[j];
      }
    }
  }
  std::array<std::array<double, 3>, 3> numerators{};
  for (unsigned int i = 0; i < D; ++i)
  {
    for (unsigned int j = i; j < D; ++j)
    {
      const __int128 value = static_cast<__int128>(n * product[i][j]) - static_cast<__int128>(sum[i] * sum[j]);
      numerators[i][j] = numerators[j][i] = static_cast<double>(value);
    }
  }
  return numerators;
}
#else
constexpr bool LineMomentsAvailable = false;
#endif

/** Whether the LabelMap's moments of every component of an image of this size (unused dimensions 1) can be
 * computed exactly: with the recomputation from lines, N²·(side − 1)² < 2^127 for the longest side (a side of
 * about 3.6·10^9 pixels for a one-row image); without it, the 64-bit bound on the whole image. */
inline bool
CanMeasureMoments(const std::array<std::uint64_t, 3> & size)
{
  const long double pixels = static_cast<long double>(size[0]) * size[1] * size[2];
  for (unsigned int d = 0; d < 3; ++d)
  {
    const long double side = static_cast<long double>(size[d]);
    if (LineMomentsAvailable)
    {
      // (pixels·(side − 1))² < 2^127  ⇔  pixels·(side − 1) < 2^63.5 ≈ 1.3043·10^19 (with a margin)
      if (pixels * (side - 1) >= 1.3e19L)
      {
        return false;
      }
    }
    else if (pixels / side * ((side - 1) * side * (2 * side - 1) / 6) >= 18446744073709551616.0L)
    {
      return false;
    }
  }
  return true;
}

} // namespace cca
} // namespace itk

#endif
