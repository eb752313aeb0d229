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
// Naive features (the paper's baseline): after labeling, one thread per pixel adds 1, x, y, z and its
// bounding box to its component with atomics. Contention grows with component size, which is what the
// run-based variants avoid. Kept for the paper's comparison.
#ifndef itkCCANaiveFeatures_cuh
#define itkCCANaiveFeatures_cuh

#include "itkCCARunFeatures.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

__global__ void
PixelAtomicFeaturesKernel(const std::uint32_t * __restrict__ bits, const std::uint32_t * __restrict__ firstRun,
                          const std::uint32_t * __restrict__ runLabel, DeviceGeometry g, DeviceFeatures features)
{
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t word = GlobalWarpId(); word < g.numWords; word += WarpCount())
  {
    const std::uint32_t row = static_cast<std::uint32_t>(word / g.wordsPerRow);
    const std::uint32_t wordInRow = static_cast<std::uint32_t>(word - static_cast<std::uint64_t>(row) * g.wordsPerRow);
    const RowWord       w = LoadRowWord(bits, static_cast<std::uint32_t>(word), wordInRow, g.wordsPerRow);
    if (!((w.bits >> lane) & 1u))
    {
      continue;
    }
    const std::uint32_t label = runLabel[RunOfPixel(firstRun[word], w.Starts(), lane)];
    const std::uint32_t index[3] = { wordInRow * 32u + lane, row % g.height, row / g.height };
    atomicAdd(features.Sum(SumPixels, label), 1ull);
    for (int d = 0; d < 3; ++d)
    {
      atomicAdd(features.Sum(SumIndex0 + d, label), static_cast<unsigned long long>(index[d]));
      atomicMin(features.boundingBoxMin[d] + label, index[d]);
      atomicMax(features.boundingBoxMax[d] + label, index[d]);
    }
  }
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
