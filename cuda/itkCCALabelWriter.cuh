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
// Writes the label image directly in the output pixel type: one warp per 32 pixels, each lane finds
// its run from the word's start bits (same rank arithmetic as the merge) and reads the run's label,
// renumbered through the post-processing's table where there is one.
#ifndef itkCCALabelWriter_cuh
#define itkCCALabelWriter_cuh

#include "itkCCADeviceGeometry.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

/** A pass (itkCCAFlslSegments.cuh): its kernel is in itkCCACudaStages.cu; the small-image kernel runs it too.
 * Multi-label input: `breaks` (the value-change bits), and, for the cleaned segmentation, `classOfIndex`: the
 * value written for each (new) index instead of its label. */
template <typename TOutput>
__device__ __forceinline__ void
WriteLabelsPass(const std::uint32_t * bits, const std::uint32_t * firstRun, const std::uint32_t * runLabel,
                const unsigned long long * newIndex, TOutput * output, TOutput background, unsigned long long skipValue,
                const DeviceGeometry & g, const std::uint32_t * breaks = nullptr,
                const long long * classOfIndex = nullptr)
{
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t word = GlobalWarpId(); word < g.numWords; word += WarpCount())
  {
    const std::uint32_t row = static_cast<std::uint32_t>(word / g.wordsPerRow);
    const std::uint32_t wordInRow = static_cast<std::uint32_t>(word - static_cast<std::uint64_t>(row) * g.wordsPerRow);
    const std::uint32_t x = wordInRow * 32u + lane;
    if (x >= g.width)
    {
      continue;
    }
    const RowWord w = LoadRowWord(bits, static_cast<std::uint32_t>(word), wordInRow, g.wordsPerRow, breaks);
    TOutput       value = background;
    if ((w.bits >> lane) & 1u)
    {
      unsigned long long k = runLabel[RunOfPixel(firstRun[word], w.Starts(), lane)];
      // After post-processing, the component's new index, or ~0 where it was removed (background).
      k = newIndex ? newIndex[k] : k;
      // ITK's consecutive numbering steps over the background value.
      value = k == ~0ull       ? background
              : classOfIndex ? static_cast<TOutput>(classOfIndex[k])
                             : static_cast<TOutput>(k >= skipValue ? k + 1u : k);
    }
    output[static_cast<std::uint64_t>(row) * g.width + x] = value;
  }
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
