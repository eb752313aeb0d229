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
#ifndef itkCCAProductDifference_h
#define itkCCAProductDifference_h

// The covariance numerators N·Σqiqj − Σqi·Σqj of the LabelMap's moments need 128 bits before they become
// doubles: the compiler's 128-bit integers where it has them, a portable two-halves product elsewhere.

#include <cmath>
#include <cstdint>
#include <utility>

namespace itk
{
namespace cca
{

/** (a·b − c·d) for 64-bit unsigned a, b, c, d, exact until the one final rounding to double: the products
 * in 128 bits (the compiler's type where it has one, else two 64-bit halves, as on MSVC). */
#if defined(__SIZEOF_INT128__)
inline double
ProductDifference(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d)
{
  return static_cast<double>(static_cast<__int128>(a) * b - static_cast<__int128>(c) * d);
}
#else
struct UInt128
{
  std::uint64_t high;
  std::uint64_t low;
};

inline UInt128
Multiply(std::uint64_t a, std::uint64_t b)
{
  const std::uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const std::uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const std::uint64_t middle = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return { p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32), (middle << 32) | (p00 & 0xffffffffu) };
}

inline double
ProductDifference(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d)
{
  UInt128    p = Multiply(a, b), q = Multiply(c, d);
  const bool negative = p.high < q.high || (p.high == q.high && p.low < q.low);
  if (negative)
  {
    std::swap(p, q);
  }
  const UInt128 difference{ p.high - q.high - (p.low < q.low ? 1u : 0u), p.low - q.low };
  const double  magnitude = std::ldexp(static_cast<double>(difference.high), 64) + static_cast<double>(difference.low);
  return negative ? -magnitude : magnitude;
}
#endif

} // namespace cca
} // namespace itk

#endif
