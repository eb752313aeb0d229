/*=========================================================================
 *  Consecutive relabeling and per-component features voted with conflict detection
 *  (Lemaitre et al. 2021, Alg. 3).
 *
 *  After the merge, every run's root is the component's first run in raster order. Flattening marks
 *  the roots; an exclusive scan of the marks numbers the components 0..K-1 in raster order of their
 *  first pixel, which is ITK's numbering. Each run then votes its closed-form contribution to its
 *  component: lanes of a warp voting for the same component are grouped with __match_any_sync and
 *  reduced with shuffles, so one atomic per component per warp reaches memory instead of one per run.
 *=========================================================================*/
#ifndef itkCCAFlslFeaturesCD_cuh
#define itkCCAFlslFeaturesCD_cuh

#include "itkCCADeviceGeometry.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

/** Per-component accumulators, structure of arrays indexed by label (0-based). */
struct DeviceFeatures
{
  unsigned long long * numberOfPixels;
  unsigned long long * indexSum[3];
  std::uint32_t *      boundingBoxMin[3];
  std::uint32_t *      boundingBoxMax[3];
};

/** Path compression to the root and a 1 for each root (the scan input). */
__global__ void
FlattenAndMarkRootsKernel(std::uint32_t * parent, std::uint32_t * isRoot, std::uint32_t numRuns)
{
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    // Other threads only ever replace a parent by an ancestor of it, so plain loads see a valid path.
    std::uint32_t root = parent[run];
    while (parent[root] != root)
    {
      root = parent[root];
    }
    parent[run] = root;
    isRoot[run] = root == run ? 1u : 0u;
  }
}

/** One run's contribution, reduced among the lanes of its component. */
struct RunContribution
{
  unsigned long long numberOfPixels;
  unsigned long long indexSum[3];
  std::uint32_t      boundingBoxMin[3];
  std::uint32_t      boundingBoxMax[3];

  __device__ __forceinline__ void
  Add(const RunContribution & o)
  {
    numberOfPixels += o.numberOfPixels;
    for (int d = 0; d < 3; ++d)
    {
      indexSum[d] += o.indexSum[d];
      boundingBoxMin[d] = min(boundingBoxMin[d], o.boundingBoxMin[d]);
      boundingBoxMax[d] = max(boundingBoxMax[d], o.boundingBoxMax[d]);
    }
  }

  __device__ __forceinline__ RunContribution
  ShuffleFrom(int srcLane) const
  {
    RunContribution r;
    r.numberOfPixels = __shfl_sync(FullWarp, numberOfPixels, srcLane);
    for (int d = 0; d < 3; ++d)
    {
      r.indexSum[d] = __shfl_sync(FullWarp, indexSum[d], srcLane);
      r.boundingBoxMin[d] = __shfl_sync(FullWarp, boundingBoxMin[d], srcLane);
      r.boundingBoxMax[d] = __shfl_sync(FullWarp, boundingBoxMax[d], srcLane);
    }
    return r;
  }
};

/** Tree reduction over each group of lanes with equal keys (`peers` from __match_any_sync), after
 * E. Westphal's "voting and shuffling" scheme: each round every lane adds its next remaining higher
 * peer, then the odd-ranked lanes of each group drop out. The group's lowest lane ends with the total.
 * Must be called by the full warp. Returns whether this lane is its group's leader. */
__device__ __forceinline__ bool
ReducePeers(std::uint32_t peers, RunContribution & value)
{
  const unsigned lane = threadIdx.x & 31u;
  const bool     leader = (peers & MaskBelow(lane)) == 0;
  unsigned       rank = __popc(peers & MaskBelow(lane));
  std::uint32_t  higher = peers & (0xfffffffeu << lane);
  while (__any_sync(FullWarp, higher != 0))
  {
    const int             next = __ffs(higher);
    const RunContribution other = value.ShuffleFrom(next ? next - 1 : static_cast<int>(lane));
    if (next)
    {
      value.Add(other);
    }
    higher &= ~__ballot_sync(FullWarp, rank & 1u);
    rank >>= 1;
  }
  return leader;
}

/** Replaces each run's parent (its root after flattening) by its component's label, and votes the
 * run's features into that component. */
__global__ void
LabelRunsAndVoteFeaturesKernel(std::uint32_t * __restrict__ parentToLabel,
                               const std::uint32_t * __restrict__ rootLabel,
                               const std::uint32_t * __restrict__ runBegin,
                               const std::uint32_t * __restrict__ runEnd,
                               const std::uint32_t * __restrict__ runRow,
                               std::uint32_t  numRuns,
                               DeviceGeometry g,
                               DeviceFeatures features)
{
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t warpBase = GlobalWarpId() * 32u; warpBase < numRuns; warpBase += WarpCount() * 32u)
  {
    const std::uint64_t run = warpBase + lane;
    const bool          valid = run < numRuns;
    std::uint32_t       label = 0xffffffffu;
    RunContribution     c{};
    if (valid)
    {
      label = rootLabel[parentToLabel[run]];
      parentToLabel[run] = label;
      const unsigned long long x0 = runBegin[run];
      const unsigned long long x1 = runEnd[run];
      const unsigned long long length = x1 - x0;
      const std::uint32_t      row = runRow[run];
      const std::uint32_t      y = row % g.height;
      const std::uint32_t      z = row / g.height;
      c.numberOfPixels = length;
      // Σx over [x0, x1): (x0 + x1 - 1) * length / 2, halving the even factor first to stay in 64 bits.
      c.indexSum[0] = (length % 2u == 0) ? (length / 2u) * (x0 + x1 - 1u) : length * ((x0 + x1 - 1u) / 2u);
      c.indexSum[1] = static_cast<unsigned long long>(y) * length;
      c.indexSum[2] = static_cast<unsigned long long>(z) * length;
      c.boundingBoxMin[0] = static_cast<std::uint32_t>(x0);
      c.boundingBoxMax[0] = static_cast<std::uint32_t>(x1 - 1u);
      c.boundingBoxMin[1] = c.boundingBoxMax[1] = y;
      c.boundingBoxMin[2] = c.boundingBoxMax[2] = z;
    }
    const std::uint32_t peers = __match_any_sync(FullWarp, label);
    if (ReducePeers(peers, c) && valid)
    {
      atomicAdd(features.numberOfPixels + label, c.numberOfPixels);
      for (int d = 0; d < 3; ++d)
      {
        atomicAdd(features.indexSum[d] + label, c.indexSum[d]);
        atomicMin(features.boundingBoxMin[d] + label, c.boundingBoxMin[d]);
        atomicMax(features.boundingBoxMax[d] + label, c.boundingBoxMax[d]);
      }
    }
  }
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
