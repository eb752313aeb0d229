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
// Image geometry as the kernels see it, and the bit-level helpers that every FLSL kernel shares.
//
// The foreground is kept as a bitmask: one 32-bit word per 32 pixels of a row, rows padded to a
// whole number of words with zero bits, so that a run never continues across a row's end. Runs are
// numbered globally in raster order: a run's id is the number of run starts before it, which is
// the exclusive prefix sum of the per-word start counts plus the start's rank inside its word.
#ifndef itkCCADeviceGeometry_cuh
#define itkCCADeviceGeometry_cuh

#include <cstdint>

namespace itk
{
namespace cca
{
namespace cuda
{

constexpr unsigned FullWarp = 0xffffffffu;

/** Sizes in the 32-bit index type of the CUDA engine (the engine refuses images of 2^32 pixels or more). */
struct DeviceGeometry
{
  std::uint32_t width;       ///< pixels per row (x)
  std::uint32_t height;      ///< rows per slice (y)
  std::uint32_t depth;       ///< slices (z); 1 in 2D
  std::uint32_t numRows;     ///< height * depth
  std::uint32_t wordsPerRow; ///< ceil(width / 32)
  std::uint32_t numWords;    ///< numRows * wordsPerRow
  std::uint32_t dimension;   ///< the image's dimension (1 to 3): which sides are image borders
  std::uint32_t batchExtent; ///< Request::batchExtent: images along the slowest axis (0: one image)
};

/** Bits at positions <= b. */
__device__ __forceinline__ std::uint32_t
                           MaskUpTo(unsigned b)
{
  return b >= 31 ? FullWarp : ((2u << b) - 1u);
}

/** Bits at positions < b. */
__device__ __forceinline__ std::uint32_t
                           MaskBelow(unsigned b)
{
  return (1u << b) - 1u;
}

/** One word of a row's foreground bits with the neighboring pixels just outside it (0 beyond the row). With
 * multi-label input (Request::multiLabel) a run also starts where the value changes between two foreground
 * pixels: the break bits (0 otherwise) mark those pixels, each a foreground pixel whose left neighbor is
 * foreground too. */
struct RowWord
{
  std::uint32_t bits;
  std::uint32_t prevBit;       ///< pixel just before the word (bit 31 of the previous word)
  std::uint32_t nextBit;       ///< pixel just after the word (bit 0 of the next word)
  std::uint32_t breaks = 0;    ///< pixels where the value changes inside a stretch of foreground pixels
  std::uint32_t nextBreak = 0; ///< the same for the pixel just after the word

  /** Pixels where a run starts. */
  __device__ __forceinline__ std::uint32_t
                             Starts() const
  {
    return (bits & ~((bits << 1) | prevBit)) | breaks;
  }
  /** Last pixels of runs: the next pixel is background or starts a run of another value. */
  __device__ __forceinline__ std::uint32_t
                             Ends() const
  {
    return (bits & ~((bits >> 1) | (nextBit << 31))) | (breaks >> 1) | (nextBreak << 31);
  }
  /** Bit x set when pixel x-1 is foreground. */
  __device__ __forceinline__ std::uint32_t
                             ShiftedRight() const
  {
    return (bits << 1) | prevBit;
  }
  /** Bit x set when pixel x+1 is foreground. */
  __device__ __forceinline__ std::uint32_t
                             ShiftedLeft() const
  {
    return (bits >> 1) | (nextBit << 31);
  }
  /** Bit x set when a run starts at pixel x+1 and pixel x is not in it. */
  __device__ __forceinline__ std::uint32_t
                             StartsAtNext() const
  {
    return (~bits & ShiftedLeft()) | (breaks >> 1) | (nextBreak << 31);
  }
  /** Bit x set when a run ends at pixel x-1 and pixel x is not in it. */
  __device__ __forceinline__ std::uint32_t
                             EndsAtPrevious() const
  {
    return (~bits | breaks) & ShiftedRight();
  }
};

/** `breaks`: the multi-label break bits, one word per bitmask word, or nullptr (binary input). */
__device__ __forceinline__ RowWord
LoadRowWord(const std::uint32_t * bits, std::uint32_t wordIndex, std::uint32_t wordInRow, std::uint32_t wordsPerRow,
            const std::uint32_t * breaks = nullptr)
{
  RowWord w;
  w.bits = bits[wordIndex];
  w.prevBit = wordInRow > 0 ? (bits[wordIndex - 1] >> 31) : 0u;
  w.nextBit = wordInRow + 1 < wordsPerRow ? (bits[wordIndex + 1] & 1u) : 0u;
  if (breaks)
  {
    w.breaks = breaks[wordIndex];
    w.nextBreak = wordInRow + 1 < wordsPerRow ? (breaks[wordIndex + 1] & 1u) : 0u;
  }
  return w;
}

/** Id of the run that holds foreground pixel `b` of a word whose first run start has id `firstRunOfWord`. */
__device__ __forceinline__ std::uint32_t
                           RunOfPixel(std::uint32_t firstRunOfWord, std::uint32_t starts, unsigned b)
{
  return firstRunOfWord + __popc(starts & MaskUpTo(b)) - 1u;
}

/** Warp-uniform grid-stride loop bounds: every lane of a warp sees the same iterations, so warp
 * intrinsics with the full mask are safe inside. */
__device__ __forceinline__ std::uint64_t
                           GlobalWarpId()
{
  return (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
}
__device__ __forceinline__ std::uint64_t
                           WarpCount()
{
  return (static_cast<std::uint64_t>(gridDim.x) * blockDim.x) >> 5;
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
