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
// What every feature variant shares: the per-component accumulators, one run's closed-form
// contribution (count, index sums, bounding box and, for the LabelMap, second moments and border
// counts), and the warp reduction over lanes of the same component (conflict detection).
#ifndef itkCCARunFeatures_cuh
#define itkCCARunFeatures_cuh

#include "itkCCABasicAttributes.h"
#include "itkCCADeviceGeometry.cuh"
#include "itkCCARunMath.h"

namespace itk
{
namespace cca
{
namespace cuda
{

/** Per-component accumulators, structure of arrays indexed by label (0-based). The 64-bit sums are
 * one block of NumberOfSums arrays of K counters, in the order of the Sum* indices. */
enum SumIndex : int
{
  SumPixels = 0,
  SumIndex0 = 1,    // Σx, Σy, Σz
  SumProducts0 = 4, // Σxx, Σyy, Σzz, Σxy, Σxz, Σyz
  SumBorderPixels = 10,
  SumBorderFaces0 = 11, // per dimension
  SumIntercepts0 = 14,  // 7 direction classes
  NumberOfSums = 21
};

struct DeviceFeatures
{
  unsigned long long * sums; ///< NumberOfSums blocks of K counters
  std::uint64_t        numberOfComponents;
  std::uint32_t *      boundingBoxMin[3];
  std::uint32_t *      boundingBoxMax[3];

  __device__ __forceinline__ unsigned long long *
  Sum(int index, std::uint32_t label) const
  {
    return sums + index * numberOfComponents + label;
  }
};

/** One run's contribution, reduced among the lanes of its component: `NumSums` 64-bit sums (the
 * first NumSums of the Sum* order) and the bounding box. */
template <int NumSums>
struct RunContribution
{
  unsigned long long sum[NumSums];
  std::uint32_t      boundingBoxMin[3];
  std::uint32_t      boundingBoxMax[3];

  __device__ __forceinline__ void
  Add(const RunContribution & o)
  {
#pragma unroll
    for (int i = 0; i < NumSums; ++i)
    {
      sum[i] += o.sum[i];
    }
#pragma unroll
    for (int d = 0; d < 3; ++d)
    {
      boundingBoxMin[d] = min(boundingBoxMin[d], o.boundingBoxMin[d]);
      boundingBoxMax[d] = max(boundingBoxMax[d], o.boundingBoxMax[d]);
    }
  }

  __device__ __forceinline__ RunContribution
  ShuffleFrom(int srcLane) const
  {
    RunContribution r;
#pragma unroll
    for (int i = 0; i < NumSums; ++i)
    {
      r.sum[i] = __shfl_sync(FullWarp, sum[i], srcLane);
    }
#pragma unroll
    for (int d = 0; d < 3; ++d)
    {
      r.boundingBoxMin[d] = __shfl_sync(FullWarp, boundingBoxMin[d], srcLane);
      r.boundingBoxMax[d] = __shfl_sync(FullWarp, boundingBoxMax[d], srcLane);
    }
    return r;
  }
};

/** Only 64-bit sums (the perimeter intercepts). */
template <int NumSums>
struct SumContribution
{
  unsigned long long sum[NumSums];

  __device__ __forceinline__ void
  Add(const SumContribution & o)
  {
#pragma unroll
    for (int i = 0; i < NumSums; ++i)
    {
      sum[i] += o.sum[i];
    }
  }

  __device__ __forceinline__ SumContribution
  ShuffleFrom(int srcLane) const
  {
    SumContribution r;
#pragma unroll
    for (int i = 0; i < NumSums; ++i)
    {
      r.sum[i] = __shfl_sync(FullWarp, sum[i], srcLane);
    }
    return r;
  }
};

/** Tree reduction over each group of lanes with equal keys (`peers` from __match_any_sync), after
 * E. Westphal's "voting and shuffling" scheme: each round every lane adds its next remaining higher
 * peer, then the odd-ranked lanes of each group drop out. The group's lowest lane ends with the total.
 * Must be called by the full warp. Returns whether this lane is its group's leader. */
template <typename TValue>
__device__ __forceinline__ bool
ReducePeers(std::uint32_t peers, TValue & value)
{
  const unsigned lane = threadIdx.x & 31u;
  const bool     leader = (peers & MaskBelow(lane)) == 0;
  unsigned       rank = __popc(peers & MaskBelow(lane));
  std::uint32_t  higher = peers & (0xfffffffeu << lane);
  while (__any_sync(FullWarp, higher != 0))
  {
    const int    next = __ffs(higher);
    const TValue other = value.ShuffleFrom(next ? next - 1 : static_cast<int>(lane));
    if (next)
    {
      value.Add(other);
    }
    higher &= ~__ballot_sync(FullWarp, rank & 1u);
    rank >>= 1;
  }
  return leader;
}

/** The contribution of run [x0, x1) of row `row`: the first NumSums sums (SumProducts0 for the basic
 * features, SumIntercepts0 with the shape sums) and its bounding box. The per-run formulas are the CPU
 * engine's, from itkCCARunMath.h. */
template <bool WithShape, int NumSums = (WithShape ? SumIntercepts0 : SumProducts0)>
__device__ __forceinline__ RunContribution<NumSums>
MakeRunContribution(unsigned long long x0, unsigned long long x1, std::uint32_t row, const DeviceGeometry & g)
{
  RunContribution<NumSums> c;
  const std::uint64_t      length = x1 - x0;
  const std::uint64_t      y = row % g.height;
  const std::uint64_t      z = row / g.height;
  const std::uint64_t      sumX = runmath::SumOfRange(x0, x1);
  std::uint64_t            indexSums[3];
  runmath::RunIndexSums(sumX, length, y, z, indexSums);
  c.sum[SumPixels] = length;
#pragma unroll
  for (int d = 0; d < 3; ++d)
  {
    c.sum[SumIndex0 + d] = indexSums[d];
  }
  c.boundingBoxMin[0] = static_cast<std::uint32_t>(x0);
  c.boundingBoxMax[0] = static_cast<std::uint32_t>(x1 - 1u);
  c.boundingBoxMin[1] = c.boundingBoxMax[1] = static_cast<std::uint32_t>(y);
  c.boundingBoxMin[2] = c.boundingBoxMax[2] = static_cast<std::uint32_t>(z);
  if constexpr (WithShape)
  {
    std::uint64_t products[6];
    runmath::RunIndexProductSums(x0, x1, sumX, y, z, products);
#pragma unroll
    for (int i = 0; i < 6; ++i)
    {
      c.sum[SumProducts0 + i] = products[i];
    }
    const bool yBorder = g.dimension > 1 && (y == 0 || y + 1 == g.height);
    const bool zBorder = g.dimension > 2 && (z == 0 || z + 1 == g.depth);
    c.sum[SumBorderPixels] = runmath::RunPixelsOnBorder(x0, x1, g.width, yBorder || zBorder);
    c.sum[SumBorderFaces0 + 0] = runmath::RunXBorderFaces(x0, x1, g.width);
    c.sum[SumBorderFaces0 + 1] = g.dimension > 1 ? runmath::RunRowBorderFaces(length, y, g.height) : 0u;
    c.sum[SumBorderFaces0 + 2] = g.dimension > 2 ? runmath::RunRowBorderFaces(length, z, g.depth) : 0u;
  }
  return c;
}

/** Adds a (reduced) contribution to component `label`. */
template <int NumSums>
__device__ __forceinline__ void
AccumulateAtomically(const DeviceFeatures & features, std::uint32_t label, const RunContribution<NumSums> & c)
{
#pragma unroll
  for (int i = 0; i < NumSums; ++i)
  {
    atomicAdd(features.Sum(i, label), c.sum[i]);
  }
#pragma unroll
  for (int d = 0; d < 3; ++d)
  {
    atomicMin(features.boundingBoxMin[d] + label, c.boundingBoxMin[d]);
    atomicMax(features.boundingBoxMax[d] + label, c.boundingBoxMax[d]);
  }
}

/** One component's contributions gathered by a thread block in shared memory: the first component a group leader of
 * the block meets is taken, its later contributions from the block's warps stay on the multiprocessor, and Flush()
 * adds them to global memory once. Without it, a component that covers most of the image (a percolating
 * foreground) gets one atomic per sum from every warp's every group of runs, all serialized at a single L2 address:
 * most of the feature pass's time on such images. Sums, minima and maxima of integers are independent of their
 * order, so the result is the same bits. `FirstSum`: where the sums start among the Sum* blocks; `WithBox`: the
 * bounding box too. Every thread of the block calls Reset() (then __syncthreads()) and, after a __syncthreads(),
 * Flush(). */
template <int NumSums, int FirstSum = 0, bool WithBox = true>
struct BlockHotComponent
{
  static constexpr std::uint32_t NoLabel = 0xffffffffu;

  std::uint32_t      label;
  unsigned long long sum[NumSums];
  std::uint32_t      boundingBoxMin[3];
  std::uint32_t      boundingBoxMax[3];

  __device__ __forceinline__ void
  Reset()
  {
    for (unsigned i = threadIdx.x; i < NumSums; i += blockDim.x)
    {
      sum[i] = 0;
    }
    if (threadIdx.x < 3)
    {
      boundingBoxMin[threadIdx.x] = 0xffffffffu;
      boundingBoxMax[threadIdx.x] = 0u;
    }
    if (threadIdx.x == 0)
    {
      label = NoLabel;
    }
  }

  /** Adds `c` here where `l` is the block's component (taking `l` as it where the block has none yet): false
   * where it is another one, whose contribution then goes to global memory as before. */
  template <typename TContribution>
  __device__ __forceinline__ bool
  Take(std::uint32_t l, const TContribution & c)
  {
    std::uint32_t current = *static_cast<volatile std::uint32_t *>(&label);
    if (current == NoLabel)
    {
      current = atomicCAS(&label, NoLabel, l);
      current = current == NoLabel ? l : current;
    }
    if (current != l)
    {
      return false;
    }
#pragma unroll
    for (int i = 0; i < NumSums; ++i)
    {
      if (c.sum[i] != 0)
      {
        atomicAdd(&sum[i], c.sum[i]);
      }
    }
    if constexpr (WithBox)
    {
#pragma unroll
      for (int d = 0; d < 3; ++d)
      {
        atomicMin(&boundingBoxMin[d], c.boundingBoxMin[d]);
        atomicMax(&boundingBoxMax[d], c.boundingBoxMax[d]);
      }
    }
    return true;
  }

  __device__ __forceinline__ void
  Flush(const DeviceFeatures & features) const
  {
    if (label == NoLabel)
    {
      return;
    }
    for (unsigned i = threadIdx.x; i < NumSums; i += blockDim.x)
    {
      if (sum[i] != 0)
      {
        atomicAdd(features.Sum(FirstSum + static_cast<int>(i), label), sum[i]);
      }
    }
    if (WithBox && threadIdx.x < 3)
    {
      atomicMin(features.boundingBoxMin[threadIdx.x] + label, boundingBoxMin[threadIdx.x]);
      atomicMax(features.boundingBoxMax[threadIdx.x] + label, boundingBoxMax[threadIdx.x]);
    }
  }
};

/** Component i's row of the basic columns (row newIndex[i], none where that is ~0; row i without a table) from
 * accumulators laid out in blocks of `stride` counters (sums in the Sum* order, boxes min then max): the GPU's
 * column kernel and the small-image path's host copy of the sums read them the same way. */
CCA_HOST_DEVICE void
WriteBasicRowOfComponent(const BasicGeometry & geometry, const BasicColumns & columns, const unsigned long long * sums,
                         const std::uint32_t * boxes, std::uint64_t stride, std::uint64_t i,
                         const unsigned long long * newIndex)
{
  const unsigned long long row = newIndex ? newIndex[i] : i;
  if (row == ~0ull)
  {
    return;
  }
  std::uint64_t indexSum[MaxDimension];
  std::uint32_t boxMin[MaxDimension];
  std::uint32_t boxMax[MaxDimension];
  for (unsigned d = 0; d < MaxDimension; ++d)
  {
    indexSum[d] = sums[(SumIndex0 + d) * stride + i];
    boxMin[d] = boxes[d * stride + i];
    boxMax[d] = boxes[(3 + d) * stride + i];
  }
  WriteBasicRow(
    geometry, columns, row, static_cast<std::uint64_t>(sums[SumPixels * stride + i]), indexSum, boxMin, boxMax);
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
