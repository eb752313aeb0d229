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
#ifndef itkCCAIntensityAccumulator_h
#define itkCCAIntensityAccumulator_h

// One component's intensity sums while they are accumulated, written once for both engines: the
// CPU engine adds every pixel of a component in raster order, as ITK's StatisticsLabelMapFilter does, the
// CUDA engine adds pixels per lane and then joins lanes with Join() in a fixed order. ITK-free, CUDA-free
// (itkCCARunMath.h's CCA_HOST_DEVICE).

#include "itkCCARunMath.h"
#include "itkCCATypes.h"

#include <cstdint>

namespace itk
{
namespace cca
{

/** What StatisticsLabelMapFilter::ThreadedProcessLabelObject sums per object, in index space relative to a
 * reference index (the component's bounding box minimum). Minimum/maximum take the later pixel on ties, as
 * ITK's `v <= min`, `v >= max` in raster order do; here by comparing the indices, so that the order in which the
 * pixels are added does not matter (a CUDA lane adds its own run before the chunk's long runs, which may precede
 * it), and Join() likewise prefers the larger linear index on equal values. */
struct IntensityAccumulator
{
  std::uint64_t count;
  double        sum, sum2, sum3, sum4;
  double        minimum, maximum;
  std::uint64_t minimumIndex, maximumIndex;
  double        weighted[3];        ///< Σv·q_d, q = index - reference
  double        weightedProduct[6]; ///< Σv·q_i·q_j: 00, 11, 22, 01, 02, 12

  /** Empty sums; `lowest` and `highest` are the feature type's NumericTraits NonpositiveMin() and max(), which
   * ITK starts its maximum and minimum from. */
  CCA_HOST_DEVICE void
  Reset(double lowest, double highest)
  {
    count = 0;
    sum = sum2 = sum3 = sum4 = 0;
    minimum = highest;
    maximum = lowest;
    minimumIndex = maximumIndex = 0;
    for (int i = 0; i < 3; ++i)
    {
      weighted[i] = 0;
    }
    for (int i = 0; i < 6; ++i)
    {
      weightedProduct[i] = 0;
    }
  }

  /** One pixel of value v at linear index `index`, q relative to the reference. */
  CCA_HOST_DEVICE void
  Add(double v, std::uint64_t index, double qx, double qy, double qz)
  {
    if (v < minimum || (v == minimum && index >= minimumIndex))
    {
      minimum = v;
      minimumIndex = index;
    }
    if (v > maximum || (v == maximum && index >= maximumIndex))
    {
      maximum = v;
      maximumIndex = index;
    }
    const double v2 = v * v;
    ++count;
    sum += v;
    sum2 += v2;
    sum3 += v2 * v;
    sum4 += v2 * v2;
    const double vx = v * qx;
    const double vy = v * qy;
    const double vz = v * qz;
    weighted[0] += vx;
    weighted[1] += vy;
    weighted[2] += vz;
    weightedProduct[0] += vx * qx;
    weightedProduct[1] += vy * qy;
    weightedProduct[2] += vz * qz;
    weightedProduct[3] += vx * qy;
    weightedProduct[4] += vx * qz;
    weightedProduct[5] += vy * qz;
  }

  /** Adds `other`'s pixels (sums add; extremes: the later pixel on equal values, whichever side it came from). */
  CCA_HOST_DEVICE void
  Join(const IntensityAccumulator & other)
  {
    if (other.minimum < minimum || (other.minimum == minimum && other.minimumIndex > minimumIndex))
    {
      minimum = other.minimum;
      minimumIndex = other.minimumIndex;
    }
    if (other.maximum > maximum || (other.maximum == maximum && other.maximumIndex > maximumIndex))
    {
      maximum = other.maximum;
      maximumIndex = other.maximumIndex;
    }
    count += other.count;
    sum += other.sum;
    sum2 += other.sum2;
    sum3 += other.sum3;
    sum4 += other.sum4;
    for (int i = 0; i < 3; ++i)
    {
      weighted[i] += other.weighted[i];
    }
    for (int i = 0; i < 6; ++i)
    {
      weightedProduct[i] += other.weightedProduct[i];
    }
  }
};

/** Writes component k's sums into the IntensitySums layout (`values`: NumberOfColumns columns of
 * `numberOfComponents`; `integers`: NumberOfIntegerColumns), `reference` the index the weighted sums are relative
 * to; host or device memory. */
CCA_HOST_DEVICE void
StoreIntensityColumns(const IntensityAccumulator & a, std::uint64_t k, std::uint64_t numberOfComponents,
                      const std::uint64_t reference[3], double * values, std::uint64_t * integers)
{
  const double column[] = { a.sum,
                            a.sum2,
                            a.sum3,
                            a.sum4,
                            a.minimum,
                            a.maximum,
                            a.weighted[0],
                            a.weighted[1],
                            a.weighted[2],
                            a.weightedProduct[0],
                            a.weightedProduct[1],
                            a.weightedProduct[2],
                            a.weightedProduct[3],
                            a.weightedProduct[4],
                            a.weightedProduct[5] };
  static_assert(sizeof(column) / sizeof(column[0]) == IntensitySums::NumberOfColumns, "one value per column");
  for (unsigned c = 0; c < IntensitySums::NumberOfColumns; ++c)
  {
    values[c * numberOfComponents + k] = column[c];
  }
  integers[IntensitySums::MinimumIndex * numberOfComponents + k] = a.minimumIndex;
  integers[IntensitySums::MaximumIndex * numberOfComponents + k] = a.maximumIndex;
  integers[IntensitySums::NumberOfPixels * numberOfComponents + k] = a.count;
  for (unsigned d = 0; d < 3; ++d)
  {
    integers[(IntensitySums::Reference0 + d) * numberOfComponents + k] = reference[d];
  }
}

} // namespace cca
} // namespace itk

#endif
