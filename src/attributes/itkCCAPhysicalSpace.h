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
// The few pieces of ITK that the shape attributes need, ITK-free so that the Python package (no ITK at run
// time) computes them with the same code as the filter, bit for bit as ITK computes them: an image's
// index-to-physical mapping (ImageBase; the centroid's is in itkCCABasicAttributes.h), Math::NotAlmostEquals against
// zero, GeometryUtilities' hypersphere formulas and vnl_determinant of 2 and 3 rows. Each says which ITK code it
// follows; the filter's tests compare the results with LabelImageToShapeLabelMapFilter's.
#ifndef itkCCAPhysicalSpace_h
#define itkCCAPhysicalSpace_h

#include "itkCCATypes.h"

#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>

namespace itk
{
namespace cca
{

template <unsigned int D>
using SquareMatrix = std::array<std::array<double, D>, D>;

template <unsigned int D>
using IndexOf = std::array<std::int64_t, D>;

/** itk::Math::pi. */
constexpr double Pi = 3.1415926535897932384626433832795028841971693993751;

/** Math::NotAlmostEquals(x, 0.0): FloatAlmostEqual's default (4 ULPs, 0.1·epsilon absolute) against zero
 * reduces to |x| > 0.1·epsilon (a number of the other sign, or more than 4 ULPs from 0, is not equal). */
inline bool
NotAlmostZero(double x)
{
  return !(std::abs(x - 0.0) <= 0.1 * DBL_EPSILON);
}

/** GeometryUtilities::GammaN2p1: Γ(n/2 + 1). */
inline double
GammaN2p1(long n)
{
  if (n % 2 == 0)
  {
    long factorial = 1;
    for (long k = n / 2; k > 1; --k)
    {
      factorial *= k;
    }
    return static_cast<double>(factorial);
  }
  long doubleFactorial = 1;
  for (long k = n; k > 1; k -= 2)
  {
    doubleFactorial *= k;
  }
  return std::sqrt(Pi) * static_cast<double>(doubleFactorial) / std::pow(2, (n + 1) / 2.0);
}

/** GeometryUtilities::HyperSphereVolume, HyperSpherePerimeter, HyperSphereRadiusFromVolume. */
inline double
HyperSphereVolume(int dimension, double radius)
{
  const double d = static_cast<double>(dimension);
  return std::pow(Pi, d * 0.5) * std::pow(radius, d) / GammaN2p1(dimension);
}
inline double
HyperSpherePerimeter(int dimension, double radius)
{
  return dimension * HyperSphereVolume(dimension, radius) / radius;
}
inline double
HyperSphereRadiusFromVolume(int dimension, double volume)
{
  return std::pow(volume * GammaN2p1(dimension) / std::pow(Pi, dimension * 0.5), 1.0 / dimension);
}

/** vnl_determinant of the rows of a D x D matrix (D = 1, 2, 3), in its order of operations. */
template <unsigned int D>
double
Determinant(const SquareMatrix<D> & m)
{
  if constexpr (D == 1)
  {
    return m[0][0];
  }
  else if constexpr (D == 2)
  {
    return m[0][0] * m[1][1] - m[0][1] * m[1][0];
  }
  else
  {
    return +m[0][0] * m[1][1] * m[2][2] - m[0][0] * m[2][1] * m[1][2] - m[1][0] * m[0][1] * m[2][2] +
           m[1][0] * m[2][1] * m[0][2] + m[2][0] * m[0][1] * m[1][2] - m[2][0] * m[1][1] * m[0][2];
  }
}

/** An image's region and physical space (Geometry, in dimension D), with ImageBase's transforms in its order
 * of operations: M = Direction·diag(spacing) (ImageBase computes it as that product, whose other terms are
 * zeros), a point = M·index + origin. */
template <unsigned int D>
struct PhysicalSpace
{
  IndexOf<D>                   start{};
  std::array<std::uint64_t, D> size{};
  std::array<double, D>        origin{};
  std::array<double, D>        spacing{};
  SquareMatrix<D>              direction{};
  SquareMatrix<D>              indexToPhysical{};

  explicit PhysicalSpace(const Geometry & g)
  {
    for (unsigned int i = 0; i < D; ++i)
    {
      start[i] = g.start[i];
      size[i] = g.size[i];
      origin[i] = g.origin[i];
      spacing[i] = g.spacing[i];
      for (unsigned int j = 0; j < D; ++j)
      {
        direction[i][j] = g.direction[i][j];
        indexToPhysical[i][j] = g.direction[i][j] * g.spacing[j];
      }
    }
  }

  /** ImageBase::TransformIndexToPhysicalPoint (the origin first, as ITK adds it). */
  std::array<double, D>
  IndexToPoint(const IndexOf<D> & index) const
  {
    std::array<double, D> point;
    for (unsigned int i = 0; i < D; ++i)
    {
      point[i] = origin[i];
      for (unsigned int j = 0; j < D; ++j)
      {
        point[i] += indexToPhysical[i][j] * static_cast<double>(index[j]);
      }
    }
    return point;
  }

  /** An index-space covariance in physical space, M·Cov·Mᵀ, summed in the order ShapeLabelMapFilter and
   * StatisticsLabelMapFilter sum it. */
  SquareMatrix<D>
  CovarianceToPhysical(const SquareMatrix<D> & covariance) const
  {
    SquareMatrix<D> physical{};
    for (unsigned int i = 0; i < D; ++i)
    {
      for (unsigned int j = 0; j < D; ++j)
      {
        double c = 0;
        for (unsigned int p = 0; p < D; ++p)
        {
          for (unsigned int q = 0; q < D; ++q)
          {
            c += indexToPhysical[i][p] * covariance[p][q] * indexToPhysical[j][q];
          }
        }
        physical[i][j] = c;
      }
    }
    return physical;
  }

  /** ImageBase::TransformLocalVectorToPhysicalVector. */
  std::array<double, D>
  LocalVectorToPhysical(const std::array<double, D> & v) const
  {
    std::array<double, D> out;
    for (unsigned int i = 0; i < D; ++i)
    {
      double sum = 0;
      for (unsigned int j = 0; j < D; ++j)
      {
        sum += direction[i][j] * v[j];
      }
      out[i] = sum;
    }
    return out;
  }

  /** ImageRegion::IsInside. */
  bool
  IsInside(const IndexOf<D> & index) const
  {
    for (unsigned int i = 0; i < D; ++i)
    {
      if (index[i] < start[i] || index[i] >= start[i] + static_cast<std::int64_t>(size[i]))
      {
        return false;
      }
    }
    return true;
  }
};

} // namespace cca
} // namespace itk

#endif
