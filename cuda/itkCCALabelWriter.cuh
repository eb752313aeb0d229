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
// Writes the label image directly in the output pixel type: a warp per 32 words, each lane finding its pixel's
// run from the word's start bits (same rank arithmetic as the merge) and reading the run's label, renumbered
// through the post-processing's table where there is one.
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
  // A warp takes `span` consecutive words (up to 32; fewer where the image has too few words to keep every warp
  // busy): lane j loads word j's bits, run starts and first run (coalesced loads), then the warp writes the words
  // one after another, each lane one pixel, with those values shuffled across. One load per word per warp where
  // each lane of a warp per word loaded them all itself, and the words' label gathers, independent of one
  // another, overlap.
  const std::uint64_t warps = WarpCount();
  const std::uint64_t span = std::uint64_t{ 32 } < (g.numWords + warps - 1) / warps ? 32u : (g.numWords + warps - 1) / warps;
  for (std::uint64_t first = GlobalWarpId() * span; first < g.numWords; first += warps * span)
  {
    const std::uint64_t mine = first + lane;
    std::uint32_t       mineBits = 0, mineStarts = 0, mineFirstRun = 0, mineRow = 0, mineWordInRow = 0;
    if (lane < span && mine < g.numWords)
    {
      mineRow = static_cast<std::uint32_t>(mine / g.wordsPerRow);
      mineWordInRow = static_cast<std::uint32_t>(mine - static_cast<std::uint64_t>(mineRow) * g.wordsPerRow);
      const RowWord w = LoadRowWord(bits, static_cast<std::uint32_t>(mine), mineWordInRow, g.wordsPerRow, breaks);
      mineBits = w.bits;
      mineStarts = w.Starts();
      mineFirstRun = mineBits != 0 ? firstRun[mine] : 0u;
    }
    const unsigned count = static_cast<unsigned>(g.numWords - first < span ? g.numWords - first : span); // warp-uniform
#pragma unroll 4
    for (unsigned i = 0; i < count; ++i)
    {
      const std::uint32_t wordBits = __shfl_sync(FullWarp, mineBits, i);
      const std::uint32_t starts = __shfl_sync(FullWarp, mineStarts, i);
      const std::uint32_t wordFirstRun = __shfl_sync(FullWarp, mineFirstRun, i);
      const std::uint32_t row = __shfl_sync(FullWarp, mineRow, i);
      const std::uint32_t x = __shfl_sync(FullWarp, mineWordInRow, i) * 32u + lane;
      if (x >= g.width)
      {
        continue;
      }
      TOutput value = background;
      if ((wordBits >> lane) & 1u)
      {
        unsigned long long k = runLabel[RunOfPixel(wordFirstRun, starts, lane)];
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
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
