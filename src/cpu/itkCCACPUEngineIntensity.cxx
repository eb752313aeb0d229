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
// The intensity stage of the CPU engine's Analyze(): every component's pixels of the feature image
// added in raster order, one pixel after the other, as StatisticsLabelMapFilter walks an object's lines; the
// components on the engine's threads, each by one thread, so that the sums do not depend on the thread count.

#include "itkCCACPUEngine.h"
#include "itkCCAIntensityAccumulator.h"
#include "itkCCAIntensityStatistics.h"
#include "itkCCAParallelFor.h"

#include <cstdint>

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
  // Each component's runs together, in raster order (the LabelMap's grouping, in engine index space): then the
  // components are summed on the engine's threads, each one's pixels in ITK's order, whatever the thread count.
  LineLayout layout;
  layout.sizeY = m_Size[1];
  layout.dimension = m_Dimension;
  Lines lines;
  PlaceLinesByComponent(layout, lines);
  DispatchScalarKind(request.featureKind, [&](auto tag) {
    using FeaturePixelType = decltype(tag);
    const auto * feature = static_cast<const FeaturePixelType *>(request.feature);
    ParallelForRange(m_NumberOfThreads, k, 1u << 10, [&](std::uint64_t first, std::uint64_t last) {
      for (std::uint64_t c = first; c < last; ++c)
      {
        const auto &         box = m_Features[static_cast<std::size_t>(c)].boundingBoxMin;
        IntensityAccumulator a;
        a.Reset(lowest, highest);
        for (std::uint64_t l = lines.firstLine[c]; l < lines.firstLine[c + 1]; ++l)
        {
          const auto &        index = lines.index[l];
          const std::uint64_t x0 = static_cast<std::uint64_t>(index[0]);
          const std::uint64_t y = static_cast<std::uint64_t>(index[1]);
          const std::uint64_t z = static_cast<std::uint64_t>(index[2]);
          const std::uint64_t rowStart = (y + z * m_Size[1]) * m_Size[0];
          const double        qy = static_cast<double>(y - box[1]);
          const double        qz = static_cast<double>(z - box[2]);
          for (std::uint64_t x = x0; x < x0 + lines.length[l]; ++x)
          {
            a.Add(static_cast<double>(feature[rowStart + x]), rowStart + x, static_cast<double>(x - box[0]), qy, qz);
          }
        }
        const std::uint64_t reference[3] = { box[0], box[1], box[2] };
        StoreIntensityColumns(a, c, k, reference, m_Intensity.values.data(), m_Intensity.integers.data());
      }
    });
  });
}

} // namespace cpu
} // namespace cca
} // namespace itk
