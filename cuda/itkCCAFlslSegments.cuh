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
// FLSL segment detection (Lemaitre et al. 2021, Alg. 1), split in three light passes:
//  1. foreground bits: one warp per 32 pixels, the foreground test fused into the load, __ballot_sync;
//  2. run starts counted per word (edges = bits ^ funnel-shifted bits), then a prefix scan (cub);
//  3. run boundaries compress-stored: the rank of each edge inside its word (__popc) plus the scan
//     gives the run's global id, so runs are dense and in raster order (full runs, not sub-runs).
#ifndef itkCCAFlslSegments_cuh
#define itkCCAFlslSegments_cuh

#include "itkCCADeviceGeometry.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

/** bits[word] = foreground (pixel != 0, as ITK) of the word's 32 pixels. */
template <typename TInput>
__global__ void
BuildForegroundBitsKernel(const TInput * __restrict__ input, std::uint32_t * __restrict__ bits, DeviceGeometry g)
{
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t word = GlobalWarpId(); word < g.numWords; word += WarpCount())
  {
    const std::uint32_t row = static_cast<std::uint32_t>(word / g.wordsPerRow);
    const std::uint32_t x =
      static_cast<std::uint32_t>(word - static_cast<std::uint64_t>(row) * g.wordsPerRow) * 32u + lane;
    bool foreground = false;
    if (x < g.width)
    {
      foreground = input[static_cast<std::uint64_t>(row) * g.width + x] != TInput(0);
    }
    const std::uint32_t ballot = __ballot_sync(FullWarp, foreground);
    if (lane == 0)
    {
      bits[word] = ballot;
    }
  }
}

/** The same with 16-byte loads: each lane tests 16 / sizeof(T) consecutive pixels, and the lanes that
 * share a word OR their bits together with shuffles. Rows must hold a whole number of 32·16/sizeof(T)
 * pixel chunks and the buffer must be 16-byte aligned (the engine checks both). One load instruction
 * per 16 bytes instead of one per pixel: what keeps 1-byte images at memory speed. */
template <typename TInput>
__global__ void
BuildForegroundBitsVectorKernel(const TInput * __restrict__ input, std::uint32_t * __restrict__ bits, DeviceGeometry g)
{
  constexpr unsigned  PixelsPerLane = 16 / sizeof(TInput);
  constexpr unsigned  LanesPerWord = 32 / PixelsPerLane;
  constexpr unsigned  PixelsPerChunk = 32 * PixelsPerLane;
  const unsigned      lane = threadIdx.x & 31u;
  const std::uint32_t chunksPerRow = g.width / PixelsPerChunk;
  const std::uint64_t numChunks = static_cast<std::uint64_t>(g.numRows) * chunksPerRow;
  for (std::uint64_t chunk = GlobalWarpId(); chunk < numChunks; chunk += WarpCount())
  {
    const std::uint32_t row = static_cast<std::uint32_t>(chunk / chunksPerRow);
    const std::uint32_t c = static_cast<std::uint32_t>(chunk - static_cast<std::uint64_t>(row) * chunksPerRow);
    const uint4         v = reinterpret_cast<const uint4 *>(input + static_cast<std::uint64_t>(row) * g.width +
                                                    static_cast<std::uint64_t>(c) * PixelsPerChunk)[lane];
    TInput              pixels[PixelsPerLane];
    memcpy(pixels, &v, sizeof(v));
    std::uint32_t m = 0;
#pragma unroll
    for (unsigned i = 0; i < PixelsPerLane; ++i)
    {
      m |= static_cast<std::uint32_t>(pixels[i] != TInput(0)) << i;
    }
    m <<= (lane % LanesPerWord) * PixelsPerLane;
#pragma unroll
    for (unsigned offset = 1; offset < LanesPerWord; offset <<= 1)
    {
      m |= __shfl_xor_sync(FullWarp, m, offset);
    }
    if (lane % LanesPerWord == 0)
    {
      bits[static_cast<std::uint64_t>(row) * g.wordsPerRow + static_cast<std::uint64_t>(c) * PixelsPerLane +
           lane / LanesPerWord] = m;
    }
  }
}

/** bits[word] &= (mask != 0): ITK's MaskImageFilter makes masked-out pixels background. */
template <typename TMask>
__global__ void
ApplyMaskKernel(const TMask * __restrict__ mask, std::uint32_t * __restrict__ bits, DeviceGeometry g)
{
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t word = GlobalWarpId(); word < g.numWords; word += WarpCount())
  {
    const std::uint32_t row = static_cast<std::uint32_t>(word / g.wordsPerRow);
    const std::uint32_t x =
      static_cast<std::uint32_t>(word - static_cast<std::uint64_t>(row) * g.wordsPerRow) * 32u + lane;
    bool inside = false;
    if (x < g.width)
    {
      inside = mask[static_cast<std::uint64_t>(row) * g.width + x] != TMask(0);
    }
    const std::uint32_t ballot = __ballot_sync(FullWarp, inside);
    if (lane == 0)
    {
      bits[word] &= ballot;
    }
  }
}

// Each pass below (and those of itkCCAFlslMerge.cuh, itkCCARelabel.cuh, itkCCAFlslFeaturesCD.cuh) is a
// grid-stride loop as a device function, so that a kernel of its own (in the .cu file that launches it) and
// the small-image kernel (itkCCASmallImageAnalysis.cu, one cooperative launch for all passes) run the same
// code. The passes take plain pointers: the small-image kernel reads what an earlier pass of the same launch
// wrote, which __restrict__ would let the compiler read through the non-coherent cache; the separate kernels'
// own __restrict__ parameters keep that cache for them.

/** startCounts[word] = number of runs starting in the word (scanned afterwards into run ids). `breaks`: the
 * multi-label break bits (BuildValueBreaksKernel), or nullptr. */
__device__ __forceinline__ void
CountRunStartsPass(const std::uint32_t * bits, std::uint32_t * startCounts, const DeviceGeometry & g,
                   const std::uint32_t * breaks = nullptr)
{
  for (std::uint64_t word = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; word < g.numWords;
       word += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    const std::uint32_t wordInRow = static_cast<std::uint32_t>(word % g.wordsPerRow);
    const RowWord       w = LoadRowWord(bits, static_cast<std::uint32_t>(word), wordInRow, g.wordsPerRow, breaks);
    startCounts[word] = __popc(w.Starts());
  }
}


/** The position of the r-th (0-based) set bit of `mask`, which has more than r set bits. */
__device__ __forceinline__ unsigned
NthSetBit(std::uint32_t mask, unsigned r)
{
  unsigned position = 0;
  for (unsigned width = 16; width > 0; width >>= 1)
  {
    const unsigned low = __popc(mask & ((1u << width) - 1u));
    if (r >= low)
    {
      r -= low;
      mask >>= width;
      position += width;
    }
  }
  return position;
}

/** The set bits of the warp's 32 masks (lane l's mask: its word's bits) in lane order, then bit order, numbered
 * 0, 1, ... and handed out so that lane t gets numbers t, t + 32, ...: emit(number, x, row) with the pixel's x
 * (the owning lane's `x0` plus the bit) and the owning lane's `row`. Consecutive numbers go to consecutive lanes,
 * so stores indexed by them are coalesced. Called by the whole warp. */
template <typename TEmit>
__device__ __forceinline__ void
ForEachBitOfWarp(std::uint32_t mask, std::uint32_t x0, std::uint32_t row, const TEmit & emit)
{
  const unsigned lane = threadIdx.x & 31u;
  unsigned       inclusive = __popc(mask); // the bits of lanes 0 .. lane
  for (unsigned offset = 1; offset < 32; offset <<= 1)
  {
    const unsigned below = __shfl_up_sync(FullWarp, inclusive, offset);
    inclusive += lane >= offset ? below : 0u;
  }
  const unsigned total = __shfl_sync(FullWarp, inclusive, 31);
  for (unsigned first = 0; first < total; first += 32)
  {
    const unsigned number = first + lane;
    unsigned       owner = 0; // the first lane whose inclusive count exceeds `number`
    for (unsigned step = 16; step > 0; step >>= 1)
    {
      if (__shfl_sync(FullWarp, inclusive, owner + step - 1) <= number)
      {
        owner += step;
      }
    }
    const unsigned      before = __shfl_sync(FullWarp, inclusive - __popc(mask), owner);
    const std::uint32_t ownerMask = __shfl_sync(FullWarp, mask, owner);
    const std::uint32_t ownerX0 = __shfl_sync(FullWarp, x0, owner);
    const std::uint32_t ownerRow = __shfl_sync(FullWarp, row, owner);
    if (number < total)
    {
      emit(number, ownerX0 + NthSetBit(ownerMask, number - before), ownerRow);
    }
  }
}

/** Compress-stores every run: [runBegin, runEnd) in x, its row, and a union-find parent set to itself.
 * A word's first start gets id firstRun[word]; a word's first end belongs to the run still open at
 * the word's start if there is one (pixels just before and at the word's start both foreground). A warp takes 32
 * consecutive words, whose runs have consecutive ids, and stores them in id order across its lanes (coalesced),
 * where a thread per word storing its own runs one after another wrote scattered words. */
__device__ __forceinline__ void
EmitRunsPass(const std::uint32_t * bits, const std::uint32_t * firstRun, std::uint32_t * runBegin,
             std::uint32_t * runEnd, std::uint32_t * runRow, std::uint32_t * parent, const DeviceGeometry & g,
             const std::uint32_t * breaks = nullptr)
{
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t base = GlobalWarpId() * 32u; base < g.numWords; base += WarpCount() * 32u)
  {
    const std::uint64_t word = base + lane;
    std::uint32_t       starts = 0, ends = 0, row = 0, x0 = 0, open = 0;
    if (word < g.numWords)
    {
      row = static_cast<std::uint32_t>(word / g.wordsPerRow);
      const std::uint32_t wordInRow = static_cast<std::uint32_t>(word - static_cast<std::uint64_t>(row) * g.wordsPerRow);
      const RowWord       w = LoadRowWord(bits, static_cast<std::uint32_t>(word), wordInRow, g.wordsPerRow, breaks);
      starts = w.Starts();
      ends = w.Ends();
      x0 = wordInRow * 32u;
      // (unless a run of another value starts right at the word's start)
      open = w.prevBit & w.bits & ~w.breaks & 1u;
    }
    if (__ballot_sync(FullWarp, (starts | ends) != 0) == 0)
    {
      continue; // no run in the warp's words (warp-uniform)
    }
    const std::uint32_t firstStart = firstRun[base];
    const std::uint32_t firstEnd = firstStart - __shfl_sync(FullWarp, open, 0);
    ForEachBitOfWarp(starts, x0, row, [&](std::uint32_t number, std::uint32_t x, std::uint32_t r) {
      const std::uint32_t run = firstStart + number;
      runBegin[run] = x;
      runRow[run] = r;
      parent[run] = run;
    });
    ForEachBitOfWarp(ends, x0, row, [&](std::uint32_t number, std::uint32_t x, std::uint32_t) {
      runEnd[firstEnd + number] = x + 1u; // one past the last pixel
    });
  }
}


} // namespace cuda
} // namespace cca
} // namespace itk

#endif
