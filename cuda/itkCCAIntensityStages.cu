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
// Kernels and launches of the intensity stage (itkCCAIntensityStages.cuh). The per-pixel update and the join are
// itkCCAIntensityAccumulator.h's, the CPU engine's own.

#include "itkCCAIntensityStages.cuh"

#include "itkCCACudaCheck.cuh"
#include "itkCCAIntensityAccumulator.h"
#include "itkCCAIntensityStatistics.h"
#include "itkCCAScalarDispatch.h"

#include <cub/device/device_scan.cuh>

#include <algorithm>

namespace itk
{
namespace cca
{
namespace cuda
{

namespace
{
constexpr std::uint32_t RunsPerChunk = 32;

/** chunkStart[k] = the number of chunks of component k (exclusive-scanned afterwards); chunkStart[K] = 0. */
__global__ void
CountChunksKernel(const std::uint32_t * __restrict__ firstRun, std::uint32_t * __restrict__ chunkStart,
                  std::uint64_t numComponents)
{
  for (std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k <= numComponents;
       k += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    chunkStart[k] = k < numComponents ? (firstRun[k + 1] - firstRun[k] + RunsPerChunk - 1) / RunsPerChunk : 0u;
  }
}

/** Joins the accumulators of a warp's lanes down a fixed tree; lane 0 holds the result. */
__device__ __forceinline__ void
JoinWarp(IntensityAccumulator & a)
{
  for (int offset = 16; offset > 0; offset >>= 1)
  {
    IntensityAccumulator other;
    other.count = __shfl_down_sync(FullWarp, a.count, offset);
    other.sum = __shfl_down_sync(FullWarp, a.sum, offset);
    other.sum2 = __shfl_down_sync(FullWarp, a.sum2, offset);
    other.sum3 = __shfl_down_sync(FullWarp, a.sum3, offset);
    other.sum4 = __shfl_down_sync(FullWarp, a.sum4, offset);
    other.minimum = __shfl_down_sync(FullWarp, a.minimum, offset);
    other.maximum = __shfl_down_sync(FullWarp, a.maximum, offset);
    other.minimumIndex = __shfl_down_sync(FullWarp, a.minimumIndex, offset);
    other.maximumIndex = __shfl_down_sync(FullWarp, a.maximumIndex, offset);
    for (int i = 0; i < 3; ++i)
    {
      other.weighted[i] = __shfl_down_sync(FullWarp, a.weighted[i], offset);
    }
    for (int i = 0; i < 6; ++i)
    {
      other.weightedProduct[i] = __shfl_down_sync(FullWarp, a.weightedProduct[i], offset);
    }
    a.Join(other);
  }
}

/** One warp per chunk: lane i takes the chunk's i-th run whole where it is shorter than a warp; longer runs are
 * then read by the whole warp, one after the other, a pixel per lane. */
template <typename TFeature>
__global__ void
AccumulateChunksKernel(const TFeature * __restrict__ feature, const std::uint32_t * __restrict__ firstRun,
                       const std::uint32_t * __restrict__ chunkStart, const std::uint32_t * __restrict__ begin,
                       const std::uint32_t * __restrict__ length, const std::uint32_t * __restrict__ row,
                       const std::uint32_t * __restrict__ boxMin0, const std::uint32_t * __restrict__ boxMin1,
                       const std::uint32_t * __restrict__ boxMin2, std::uint64_t numComponents,
                       std::uint32_t numChunks, DeviceGeometry g, double lowest, double highest,
                       IntensityAccumulator * __restrict__ chunks)
{
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t c = GlobalWarpId(); c < numChunks; c += WarpCount())
  {
    // The chunk's component: the last k with chunkStart[k] <= c.
    std::uint64_t low = 0;
    std::uint64_t high = numComponents; // chunkStart[numComponents] = numChunks > c
    while (high - low > 1)
    {
      const std::uint64_t mid = (low + high) / 2;
      if (chunkStart[mid] <= c)
      {
        low = mid;
      }
      else
      {
        high = mid;
      }
    }
    const std::uint64_t k = low;
    const std::uint32_t first = firstRun[k] + static_cast<std::uint32_t>(c - chunkStart[k]) * RunsPerChunk;
    const std::uint32_t end = min(first + RunsPerChunk, firstRun[k + 1]);
    const double        x0 = boxMin0[k];
    const double        y0 = boxMin1[k];
    const double        z0 = boxMin2[k];

    IntensityAccumulator a;
    a.Reset(lowest, highest);
    const std::uint32_t r = first + lane;
    const bool          mine = r < end;
    std::uint32_t       runBegin = 0;
    std::uint32_t       runLength = 0;
    std::uint32_t       runRow = 0;
    if (mine)
    {
      runBegin = begin[r];
      runLength = length[r];
      runRow = row[r];
    }
    const bool shortRun = mine && runLength < 32u;
    if (shortRun)
    {
      const double        qy = static_cast<double>(runRow % g.height) - y0;
      const double        qz = static_cast<double>(runRow / g.height) - z0;
      const std::uint64_t rowStart = static_cast<std::uint64_t>(runRow) * g.width;
      for (std::uint32_t x = runBegin; x < runBegin + runLength; ++x)
      {
        a.Add(static_cast<double>(feature[rowStart + x]), rowStart + x, static_cast<double>(x) - x0, qy, qz);
      }
    }
    std::uint32_t longRuns = __ballot_sync(FullWarp, mine && !shortRun);
    while (longRuns != 0)
    {
      const int j = __ffs(longRuns) - 1;
      longRuns &= longRuns - 1;
      const std::uint32_t b = __shfl_sync(FullWarp, runBegin, j);
      const std::uint32_t n = __shfl_sync(FullWarp, runLength, j);
      const std::uint32_t y = __shfl_sync(FullWarp, runRow, j);
      const double        qy = static_cast<double>(y % g.height) - y0;
      const double        qz = static_cast<double>(y / g.height) - z0;
      const std::uint64_t rowStart = static_cast<std::uint64_t>(y) * g.width;
      // 64-bit: x + 32 must not wrap past the end of a 1-D image of nearly 2^32 pixels
      for (std::uint64_t x = std::uint64_t{ b } + lane; x < std::uint64_t{ b } + n; x += 32u)
      {
        a.Add(static_cast<double>(feature[rowStart + x]), rowStart + x, static_cast<double>(x) - x0, qy, qz);
      }
    }
    JoinWarp(a);
    if (lane == 0)
    {
      chunks[c] = a;
    }
  }
}

/** One warp per component: lane l joins chunks l, l + 32, ... in order, then the lanes down the tree. */
__global__ void
JoinChunksKernel(const IntensityAccumulator * __restrict__ chunks, const std::uint32_t * __restrict__ chunkStart,
                 const std::uint32_t * __restrict__ boxMin0, const std::uint32_t * __restrict__ boxMin1,
                 const std::uint32_t * __restrict__ boxMin2, std::uint64_t numComponents, double lowest,
                 double highest, double * __restrict__ values, std::uint64_t * __restrict__ integers)
{
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t k = GlobalWarpId(); k < numComponents; k += WarpCount())
  {
    IntensityAccumulator a;
    a.Reset(lowest, highest);
    for (std::uint32_t c = chunkStart[k] + lane; c < chunkStart[k + 1]; c += 32u)
    {
      a.Join(chunks[c]);
    }
    JoinWarp(a);
    if (lane == 0)
    {
      const std::uint64_t reference[3] = { boxMin0[k], boxMin1[k], boxMin2[k] };
      StoreIntensityColumns(a, k, numComponents, reference, values, integers);
    }
  }
}
} // namespace

void
AccumulateIntensitySums(const void * feature, ScalarKind kind, const std::uint32_t * firstRun,
                        const std::uint32_t * begin, const std::uint32_t * length, const std::uint32_t * row,
                        const std::uint32_t * const boxMin[3], std::uint64_t numComponents, const DeviceGeometry & g,
                        IntensityBuffers & buffers, cudaStream_t stream, int multiprocessors)
{
  const std::uint64_t k = numComponents;
  buffers.values.Reserve(std::max<std::uint64_t>(k, 1) * IntensitySums::NumberOfColumns * sizeof(double),
                         "the intensity sums");
  buffers.integers.Reserve(std::max<std::uint64_t>(k, 1) * IntensitySums::NumberOfIntegerColumns * sizeof(std::uint64_t),
                          "the intensity sums");
  if (k == 0)
  {
    return;
  }
  // Chunks per component, scanned into each component's first chunk; the total is the chunk count.
  buffers.chunkStart.Reserve((k + 1) * sizeof(std::uint32_t), "the intensity chunks");
  std::uint32_t * chunkStart = buffers.chunkStart.As<std::uint32_t>();
  CountChunksKernel<<<GridFor(k + 1, multiprocessors), BlockSize, 0, stream>>>(firstRun, chunkStart, k);
  CCA_CUDA_CHECK_LAUNCH("CountChunksKernel");
  std::size_t tempBytes = 0;
  CCA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, tempBytes, chunkStart, chunkStart, k + 1, stream));
  buffers.scanTemp.Reserve(std::max<std::size_t>(tempBytes, 1), "scan workspace");
  CCA_CUDA_CHECK(
    cub::DeviceScan::ExclusiveSum(buffers.scanTemp.As<void>(), tempBytes, chunkStart, chunkStart, k + 1, stream));
  std::uint32_t numChunks = 0;
  CCA_CUDA_CHECK(cudaMemcpyAsync(&numChunks, chunkStart + k, sizeof(numChunks), cudaMemcpyDeviceToHost, stream));
  CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
  buffers.chunks.Reserve(std::uint64_t{ numChunks } * sizeof(IntensityAccumulator), "the intensity chunks");
  IntensityAccumulator * chunks = buffers.chunks.As<IntensityAccumulator>();
  double                 lowest = 0;
  double                 highest = 0;
  FeatureValueLimits(kind, lowest, highest);
  DispatchScalarKind(kind, [&](auto tag) {
    using T = decltype(tag);
    AccumulateChunksKernel<T><<<GridFor(std::uint64_t{ numChunks } * 32u, multiprocessors), BlockSize, 0, stream>>>(
      static_cast<const T *>(feature),
      firstRun,
      chunkStart,
      begin,
      length,
      row,
      boxMin[0],
      boxMin[1],
      boxMin[2],
      k,
      numChunks,
      g,
      lowest,
      highest,
      chunks);
    CCA_CUDA_CHECK_LAUNCH("AccumulateChunksKernel");
  });
  JoinChunksKernel<<<GridFor(k * 32u, multiprocessors), BlockSize, 0, stream>>>(chunks,
                                                                                chunkStart,
                                                                                boxMin[0],
                                                                                boxMin[1],
                                                                                boxMin[2],
                                                                                k,
                                                                                lowest,
                                                                                highest,
                                                                                buffers.values.As<double>(),
                                                                                buffers.integers.As<std::uint64_t>());
  CCA_CUDA_CHECK_LAUNCH("JoinChunksKernel");
}

} // namespace cuda
} // namespace cca
} // namespace itk
