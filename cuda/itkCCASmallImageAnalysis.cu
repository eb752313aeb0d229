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
// The small-image kernel (itkCCASmallImageAnalysis.cuh): the general path's passes, in its order, with a
// grid-wide barrier where the general path ends a launch, and a grid-wide scan where it calls CUB's.

#include "itkCCASmallImageAnalysis.cuh"

#include "itkCCACudaCheck.cuh"
#include "itkCCADeviceBuffer.cuh"
#include "itkCCAFlslFeaturesCD.cuh"
#include "itkCCAFlslSegments.cuh"
#include "itkCCALabelWriter.cuh"
#include "itkCCARelabel.cuh"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{

namespace cg = cooperative_groups;

using BlockReduce = cub::BlockReduce<std::uint32_t, BlockSize>;
using BlockScan = cub::BlockScan<std::uint32_t, BlockSize>;

/** Where the general path ends a launch: with one block (the smallest images) a block barrier, which also
 * makes the block's global writes visible to it; else the grid-wide one, which costs microseconds. */
__device__ __forceinline__ void
Barrier(cg::grid_group & grid)
{
  if (gridDim.x == 1)
  {
    __syncthreads();
  }
  else
  {
    grid.sync();
  }
}

struct ScanStorage
{
  union
  {
    BlockReduce::TempStorage reduce;
    BlockScan::TempStorage   scan;
  } temp;
  std::uint32_t offset; ///< the block's segment starts after this many
  std::uint32_t total;  ///< the whole array's sum
};

/** Exclusive scan of data[0, n) in place, the total into data[n], by every block of the grid: each block
 * sums a contiguous segment, then scans it after the segments before it (one grid-wide barrier). */
__device__ void
GridExclusiveScan(std::uint32_t * data, std::uint32_t n, std::uint32_t * blockTotals, cg::grid_group & grid,
                  ScanStorage & storage)
{
  const std::uint64_t segment = (std::uint64_t{ n } + gridDim.x - 1) / gridDim.x;
  const std::uint64_t begin = min(std::uint64_t{ n }, blockIdx.x * segment);
  const std::uint64_t end = min(std::uint64_t{ n }, begin + segment);
  std::uint32_t       local = 0;
  for (std::uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
  {
    local += data[i];
  }
  const std::uint32_t blockSum = BlockReduce(storage.temp.reduce).Sum(local);
  if (threadIdx.x == 0)
  {
    blockTotals[blockIdx.x] = blockSum;
  }
  Barrier(grid);
  std::uint32_t before = 0;
  std::uint32_t all = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
  {
    const std::uint32_t total = blockTotals[b];
    all += total;
    before += b < blockIdx.x ? total : 0u;
  }
  __syncthreads(); // the reduction's storage is reused
  before = BlockReduce(storage.temp.reduce).Sum(before);
  __syncthreads();
  all = BlockReduce(storage.temp.reduce).Sum(all);
  if (threadIdx.x == 0)
  {
    storage.offset = before;
    storage.total = all;
  }
  __syncthreads();
  std::uint32_t running = storage.offset;
  for (std::uint64_t tile = begin; tile < end; tile += blockDim.x) // block-uniform bounds
  {
    const std::uint64_t i = tile + threadIdx.x;
    std::uint32_t       value = i < end ? data[i] : 0u;
    std::uint32_t       tileTotal = 0;
    BlockScan(storage.temp.scan).ExclusiveSum(value, value, tileTotal);
    if (i < end)
    {
      data[i] = running + value;
    }
    running += tileTotal;
    __syncthreads();
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
  {
    data[n] = storage.total;
  }
}

template <bool WithShape, bool WithPerimeter>
__global__ void
__launch_bounds__(BlockSize) AnalyzeSmallImageKernel(SmallImageAnalysis a)
{
  cg::grid_group         grid = cg::this_grid();
  __shared__ ScanStorage storage;
  const DeviceGeometry & g = a.geometry;
  // Runs: starts per word, scanned into run ids (the count at firstRun[numWords]), emitted.
  CountRunStartsPass(a.bits, a.firstRun, g);
  Barrier(grid);
  GridExclusiveScan(a.firstRun, g.numWords, a.blockTotals, grid, storage);
  Barrier(grid);
  const std::uint32_t numRuns = a.firstRun[g.numWords];
  EmitRunsPass(a.bits, a.firstRun, a.runBegin, a.runEnd, a.runRow, a.parent, g);
  Barrier(grid);
  // Union-find over neighboring rows; roots numbered in raster order (the count at rootLabel[numRuns]).
  MergeRunsPass(a.bits, a.firstRun, a.parent, g, a.neighbors, PlainUnite{});
  Barrier(grid);
  FlattenAndMarkRootsPass(a.parent, a.rootLabel, numRuns);
  Barrier(grid);
  GridExclusiveScan(a.rootLabel, numRuns, a.blockTotals, grid, storage);
  Barrier(grid);
  const std::uint32_t k = a.rootLabel[numRuns];
  // The accumulators of the K components, laid out as the general path's (K counters per block).
  constexpr int  NumSums = WithShape ? NumberOfSums : SumProducts0;
  DeviceFeatures f;
  f.sums = a.sums;
  f.numberOfComponents = k;
  for (int d = 0; d < 3; ++d)
  {
    f.boundingBoxMin[d] = a.boxes + d * std::uint64_t{ k };
    f.boundingBoxMax[d] = a.boxes + (3 + d) * std::uint64_t{ k };
  }
  for (std::uint64_t i = blockIdx.x * std::uint64_t{ blockDim.x } + threadIdx.x; i < k;
       i += std::uint64_t{ gridDim.x } * blockDim.x)
  {
#pragma unroll
    for (int s = 0; s < NumSums; ++s)
    {
      f.sums[s * std::uint64_t{ k } + i] = 0;
    }
#pragma unroll
    for (int d = 0; d < 3; ++d)
    {
      f.boundingBoxMin[d][i] = 0xffffffffu;
      f.boundingBoxMax[d][i] = 0u;
    }
  }
  Barrier(grid);
  // Each run's label and its vote into its component's features.
  LabelRunsAndVoteFeaturesPass<WithShape>(a.parent, a.rootLabel, a.runBegin, a.runEnd, a.runRow, numRuns, g, f);
  if constexpr (WithPerimeter)
  {
    Barrier(grid); // the intercepts compare neighboring runs' labels
    CountPerimeterInterceptsPass(a.parent, a.firstRun, a.runBegin, a.runEnd, a.runRow, numRuns, g, f);
  }
  const bool sumsToHost = a.sumsToHost != nullptr && k <= a.rowsToHost;
  if (a.labelsToHost != nullptr || sumsToHost)
  {
    Barrier(grid); // the runs' labels and the sums are final
  }
  if (a.labelsToHost != nullptr)
  {
    WriteLabelsPass<std::uint32_t>(a.bits, a.firstRun, a.parent, nullptr, a.labelsToHost, 0u, 0ull, g);
  }
  if (sumsToHost)
  {
    for (std::uint64_t i = blockIdx.x * std::uint64_t{ blockDim.x } + threadIdx.x; i < k;
         i += std::uint64_t{ gridDim.x } * blockDim.x)
    {
#pragma unroll
      for (int s = SumPixels; s < SumProducts0; ++s)
      {
        a.sumsToHost[s * std::uint64_t{ k } + i] = f.sums[s * std::uint64_t{ k } + i];
      }
#pragma unroll
      for (int d = 0; d < 3; ++d)
      {
        a.boxesToHost[d * std::uint64_t{ k } + i] = f.boundingBoxMin[d][i];
        a.boxesToHost[(3 + d) * std::uint64_t{ k } + i] = f.boundingBoxMax[d][i];
      }
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
  {
    // Into host memory, last: no barrier waits for these writes to cross the bus.
    a.counts[0] = numRuns;
    a.counts[1] = k;
  }
}

template <bool WithShape, bool WithPerimeter>
void *
KernelFor()
{
  return reinterpret_cast<void *>(&AnalyzeSmallImageKernel<WithShape, WithPerimeter>);
}

void *
KernelFor(bool shapeSums, bool perimeter)
{
  if (!shapeSums)
  {
    return KernelFor<false, false>();
  }
  return perimeter ? KernelFor<true, true>() : KernelFor<true, false>();
}

} // namespace

unsigned
SmallImageMaxBlocks(bool shapeSums, bool perimeter, int multiprocessors)
{
  int device = 0;
  CCA_CUDA_CHECK(cudaGetDevice(&device));
  int cooperative = 0;
  CCA_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative)
  {
    return 0;
  }
  int perMultiprocessor = 0;
  CCA_CUDA_CHECK(
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perMultiprocessor, KernelFor(shapeSums, perimeter), BlockSize, 0));
  return static_cast<unsigned>(std::max(perMultiprocessor, 0) * std::max(multiprocessors, 0));
}

bool
LaunchSmallImageAnalysis(const SmallImageAnalysis & analysis, bool shapeSums, bool perimeter, unsigned blocks,
                         cudaStream_t stream)
{
  SmallImageAnalysis argument = analysis;
  void *             arguments[] = { &argument };
  const cudaError_t  status = cudaLaunchCooperativeKernel(
    KernelFor(shapeSums, perimeter), dim3(blocks), dim3(BlockSize), arguments, 0, stream);
  if (status == cudaErrorCooperativeLaunchTooLarge || status == cudaErrorNotSupported ||
      status == cudaErrorNotPermitted)
  {
    cudaGetLastError(); // not sticky: the general path runs instead
    return false;
  }
  CCA_CUDA_CHECK(status);
  return true;
}

} // namespace cuda
} // namespace cca
} // namespace itk
