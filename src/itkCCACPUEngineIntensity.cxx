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
// The intensity stage of the CPU engine's Analyze() (issue 23): every component's pixels of the feature image
// added in raster order, one pixel after the other, as StatisticsLabelMapFilter walks an object's lines (its
// sums therefore carry ITK's own rounding), then written as the IntensitySums columns in parallel.

#include "itkCCACPUEngine.h"
#include "itkCCAIntensityAccumulator.h"
#include "itkCCAIntensityStatistics.h"
#include "itkCCAParallelFor.h"

#include <cstdint>
#include <vector>

namespace itk
{
namespace cca
{
namespace cpu
{

void
CPUEngine::AccumulateIntensities(const Request & request)
{
  const std::uint64_t k = m_Features.size();
  m_Intensity.Resize(k);
  double lowest = 0;
  double highest = 0;
  FeatureValueLimits(request.featureKind, lowest, highest);
  std::vector<IntensityAccumulator> accumulators(static_cast<std::size_t>(k));
  for (auto & a : accumulators)
  {
    a.Reset(lowest, highest);
  }
  const std::uint64_t * component = m_Parent.Data();
  DispatchScalarKind(request.featureKind, [&](auto tag) {
    using FeaturePixelType = decltype(tag);
    const auto * feature = static_cast<const FeaturePixelType *>(request.feature);
    for (const RowBlock & block : m_Blocks)
    {
      for (std::uint64_t row = block.firstRow; row < block.endRow; ++row)
      {
        const RowRuns       runs = RunsOfRow(block, row);
        const std::uint64_t y = row % m_Size[1];
        const std::uint64_t z = row / m_Size[1];
        const std::uint64_t rowStart = row * m_Size[0];
        for (std::uint64_t i = 0; i < runs.count; ++i)
        {
          const std::uint64_t    c = component[runs.firstId + i];
          const ComponentSums &  box = m_Features[static_cast<std::size_t>(c)];
          IntensityAccumulator & a = accumulators[static_cast<std::size_t>(c)];
          const double           qy = static_cast<double>(y - box.boundingBoxMin[1]);
          const double           qz = static_cast<double>(z - box.boundingBoxMin[2]);
          for (std::uint64_t x = runs.runs[i].begin; x < runs.runs[i].end; ++x)
          {
            a.Add(static_cast<double>(feature[rowStart + x]),
                  rowStart + x,
                  static_cast<double>(x - box.boundingBoxMin[0]),
                  qy,
                  qz);
          }
        }
      }
    }
  });
  ParallelForRange(m_NumberOfThreads, k, 1u << 14, [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t c = first; c < last; ++c)
    {
      const auto & box = m_Features[static_cast<std::size_t>(c)].boundingBoxMin;
      const std::uint64_t reference[3] = { box[0], box[1], box[2] };
      StoreIntensityColumns(
        accumulators[static_cast<std::size_t>(c)], c, k, reference, m_Intensity.values.data(), m_Intensity.integers.data());
    }
  });
}

} // namespace cpu
} // namespace cca
} // namespace itk
