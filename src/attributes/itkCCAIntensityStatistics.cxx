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
// StatisticsLabelMapFilter::ThreadedProcessLabelObject's final computations, step by step in its order, from the
// engines' sums. Where ITK sums v·p·pᵀ over physical points p and centers afterwards, the sums here are taken
// relative to the bounding box's first index and centered in index space before the direction and spacing
// are applied: the same moments (p = M·q + o, so the origin and the reference cancel), without ITK's loss
// of digits far from the origin.

#include "itkCCAIntensityStatistics.h"

#include "itkCCAPhysicalSpace.h"
#include "itkCCAScalarDispatch.h"
#include "itkCCASymmetricEigensystem.h"

#include <cmath>
#include <limits>

namespace itk
{
namespace cca
{
namespace
{

template <unsigned int D>
void
ComputeOf(const IntensitySums & in, std::uint64_t k, const Geometry & geometry, bool weightedMoments,
          IntensityStatistics & out)
{
  using Column = IntensitySums::Column;
  const PhysicalSpace<D> space(geometry);
  const double           n = static_cast<double>(in.Get(IntensitySums::NumberOfPixels, k));
  const double           sum = in.Get(IntensitySums::Sum, k);
  const double           sum2 = in.Get(IntensitySums::Sum2, k);
  const double           sum3 = in.Get(IntensitySums::Sum3, k);
  const double           sum4 = in.Get(IntensitySums::Sum4, k);

  out.minimum = in.Get(IntensitySums::Minimum, k);
  out.maximum = in.Get(IntensitySums::Maximum, k);
  out.sum = sum;
  const double mean = sum / n;
  const double variance = (n > 1) ? (sum2 - (std::pow(sum, 2) / n)) / (n - 1) : 0;
  const double sigma = std::sqrt(variance);
  const double mean2 = mean * mean;
  out.mean = mean;
  out.variance = variance;
  out.standardDeviation = sigma;
  out.skewness = std::abs(variance * sigma) > std::numeric_limits<double>::min()
                   ? ((sum3 - 3.0 * mean * sum2) / n + 2.0 * mean * mean2) / (variance * sigma)
                   : 0.0;
  out.kurtosis = std::abs(variance) > std::numeric_limits<double>::min()
                   ? ((sum4 - 4.0 * mean * sum3 + 6.0 * mean2 * sum2) / n - 3.0 * mean2 * mean2) / (variance * variance) -
                       3.0
                   : 0.0;

  // The extremes' indices: linear in the engine's index space, then ITK's index (the region's start added).
  for (int e = 0; e < 2; ++e)
  {
    std::uint64_t linear = in.Get(e == 0 ? IntensitySums::MinimumIndex : IntensitySums::MaximumIndex, k);
    auto &        index = e == 0 ? out.minimumIndex : out.maximumIndex;
    index = { { 0, 0, 0 } };
    for (unsigned int d = 0; d < D; ++d)
    {
      const std::uint64_t size = geometry.size[d];
      index[d] = geometry.start[d] + static_cast<std::int64_t>(linear % size);
      linear /= size;
    }
  }

  out.centerOfGravity = { { 0, 0, 0 } };
  out.weightedPrincipalMoments = { { 0, 0, 0 } };
  out.weightedPrincipalAxes = {};
  out.weightedElongation = 0;
  out.weightedFlatness = 0;
  out.weightedMoments = weightedMoments;
  double elongation = 0;
  double flatness = 0;
  if (NotAlmostZero(sum))
  {
    // Center of gravity and central moments in index space (q relative to the box's first index), divided by
    // the total mass as ITK does.
    double c[D];
    double reference[D];
    for (unsigned int i = 0; i < D; ++i)
    {
      c[i] = in.Get(static_cast<Column>(IntensitySums::Weighted0 + i), k) / sum;
      reference[i] = static_cast<double>(geometry.start[i]) +
                     static_cast<double>(in.Get(static_cast<IntensitySums::IntegerColumn>(IntensitySums::Reference0 + i), k));
    }
    static constexpr unsigned productColumn[3][3] = { { 0, 3, 4 }, { 3, 1, 5 }, { 4, 5, 2 } };
    SquareMatrix<D> covariance{};
    for (unsigned int i = 0; i < D; ++i)
    {
      for (unsigned int j = 0; j < D; ++j)
      {
        covariance[i][j] =
          in.Get(static_cast<Column>(IntensitySums::Weighted00 + productColumn[i][j]), k) / sum - c[i] * c[j];
      }
    }
    // The center of gravity: the origin plus M times the weighted mean index.
    for (unsigned int i = 0; i < D; ++i)
    {
      double point = space.origin[i];
      for (unsigned int j = 0; j < D; ++j)
      {
        point += space.indexToPhysical[i][j] * (reference[j] + c[j]);
      }
      out.centerOfGravity[i] = point;
    }
    if (!weightedMoments)
    {
      return;
    }
    // C = M·Cov·Mᵀ, then "the normalized second order central moment of a pixel" on the diagonal, as ITK adds it
    // (the spacing along index axis i, in physical axis i).
    SquareMatrix<D> central = space.CovarianceToPhysical(covariance);
    for (unsigned int i = 0; i < D; ++i)
    {
      central[i][i] += space.spacing[i] * space.spacing[i] / 12.0;
    }
    std::array<double, 3> principalMoments{ { 0, 0, 0 } };
    SquareMatrix<D>       principalAxes{};
    SymmetricEigensystem<D>(central, principalMoments, principalAxes);
    // A proper rotation: the last axis times the determinant (ITK: the product of the eigenvalues of a general
    // eigen-solver, the same ±1 up to rounding).
    const double det = Determinant<D>(principalAxes);
    for (unsigned int i = 0; i < D; ++i)
    {
      principalAxes[D - 1][i] *= det;
    }
    for (unsigned int i = 0; i < D; ++i)
    {
      out.weightedPrincipalMoments[i] = principalMoments[i];
      for (unsigned int j = 0; j < D; ++j)
      {
        out.weightedPrincipalAxes[i][j] = principalAxes[i][j];
      }
    }
    if (D < 2)
    {
      elongation = 1;
      flatness = 1;
    }
    else if (NotAlmostZero(principalMoments[0]))
    {
      elongation = std::sqrt(principalMoments[D - 1] / principalMoments[D - 2]);
      flatness = std::sqrt(principalMoments[1] / principalMoments[0]);
    }
  }
  out.weightedElongation = elongation;
  out.weightedFlatness = flatness;
}

} // namespace

void
ComputeIntensityStatistics(const IntensitySums & intensity, std::uint64_t k, const Geometry & geometry,
                           bool weightedMoments, IntensityStatistics & statistics)
{
  if (k >= intensity.numberOfComponents)
  {
    throw Error("no intensity sums for component " + std::to_string(k) + " (the analysis had no feature image?)");
  }
  switch (geometry.dimension)
  {
    case 1:
      return ComputeOf<1>(intensity, k, geometry, weightedMoments, statistics);
    case 2:
      return ComputeOf<2>(intensity, k, geometry, weightedMoments, statistics);
    default:
      return ComputeOf<3>(intensity, k, geometry, weightedMoments, statistics);
  }
}

void
FeatureValueLimits(ScalarKind kind, double & lowest, double & highest)
{
  DispatchScalarKind(kind, [&](auto tag) {
    using T = decltype(tag);
    // NumericTraits<T>::NonpositiveMin(): lowest() for every scalar type (min() for integers, -max() for reals).
    lowest = static_cast<double>(std::numeric_limits<T>::lowest());
    highest = static_cast<double>(std::numeric_limits<T>::max());
  });
}

} // namespace cca
} // namespace itk
