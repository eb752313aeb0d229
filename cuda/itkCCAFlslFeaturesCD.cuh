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

/** Per-component accumulators, structure of arrays indexed by label (0-based). The 64-bit sums are
 * one block of NumberOfSums arrays of K counters, in the order of the Sum* indices. */
enum SumIndex : int
{
  SumPixels = 0,
  SumIndex0 = 1,      // Σx, Σy, Σz
  SumProducts0 = 4,   // Σxx, Σyy, Σzz, Σxy, Σxz, Σyz
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
    const int             next = __ffs(higher);
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

/** Σ of x^2 over [x0, x0 + length): length·x0² + x0·length(length−1) + (length−1)length(2length−1)/6. */
__device__ __forceinline__ unsigned long long
SumOfSquares(unsigned long long x0, unsigned long long length)
{
  const unsigned long long l1 = length - 1u;
  // length(length−1)(2length−1) is divisible by 6; divide the factors that carry 2 and 3 first.
  unsigned long long a = length, b = l1, c = 2u * length - 1u;
  if (a % 2u == 0) a /= 2u; else b /= 2u;
  if (a % 3u == 0) a /= 3u; else if (b % 3u == 0) b /= 3u; else c /= 3u;
  return length * x0 * x0 + x0 * length * l1 + a * b * c;
}

/** Replaces each run's parent (its root after flattening) by its component's label, and votes the
 * run's features into that component. With `WithShape`, also the second-moment and border sums that
 * ITK's shape attributes derive from (ShapeLabelMapFilter::ThreadedProcessLabelObject's per-line terms). */
template <bool WithShape>
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
  constexpr int NumSums = WithShape ? SumIntercepts0 : SumProducts0;
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t warpBase = GlobalWarpId() * 32u; warpBase < numRuns; warpBase += WarpCount() * 32u)
  {
    const std::uint64_t      run = warpBase + lane;
    const bool               valid = run < numRuns;
    std::uint32_t            label = 0xffffffffu;
    RunContribution<NumSums> c{};
    if (valid)
    {
      label = rootLabel[parentToLabel[run]];
      parentToLabel[run] = label;
      const unsigned long long x0 = runBegin[run];
      const unsigned long long x1 = runEnd[run];
      const unsigned long long length = x1 - x0;
      const std::uint32_t      row = runRow[run];
      const unsigned long long y = row % g.height;
      const unsigned long long z = row / g.height;
      // Σx over [x0, x1): (x0 + x1 - 1) * length / 2, halving the even factor first to stay in 64 bits.
      const unsigned long long sumX =
        (length % 2u == 0) ? (length / 2u) * (x0 + x1 - 1u) : length * ((x0 + x1 - 1u) / 2u);
      c.sum[SumPixels] = length;
      c.sum[SumIndex0 + 0] = sumX;
      c.sum[SumIndex0 + 1] = y * length;
      c.sum[SumIndex0 + 2] = z * length;
      c.boundingBoxMin[0] = static_cast<std::uint32_t>(x0);
      c.boundingBoxMax[0] = static_cast<std::uint32_t>(x1 - 1u);
      c.boundingBoxMin[1] = c.boundingBoxMax[1] = static_cast<std::uint32_t>(y);
      c.boundingBoxMin[2] = c.boundingBoxMax[2] = static_cast<std::uint32_t>(z);
      if constexpr (WithShape)
      {
        c.sum[SumProducts0 + 0] = SumOfSquares(x0, length);
        c.sum[SumProducts0 + 1] = length * y * y;
        c.sum[SumProducts0 + 2] = length * z * z;
        c.sum[SumProducts0 + 3] = y * sumX;
        c.sum[SumProducts0 + 4] = z * sumX;
        c.sum[SumProducts0 + 5] = length * y * z;
        // Border: a line on a y/z border lies there entirely, else only its end pixels can.
        const bool yBorder = g.dimension > 1 && (y == 0 || y + 1 == g.height);
        const bool zBorder = g.dimension > 2 && (z == 0 || z + 1 == g.depth);
        const bool startsOnBorder = x0 == 0;
        const bool endsOnBorder = x1 == g.width;
        if (yBorder || zBorder)
        {
          c.sum[SumBorderPixels] = length;
        }
        else
        {
          c.sum[SumBorderPixels] = (startsOnBorder ? 1u : 0u) + ((endsOnBorder && (!startsOnBorder || length > 1)) ? 1u : 0u);
        }
        c.sum[SumBorderFaces0 + 0] = (startsOnBorder ? 1u : 0u) + (endsOnBorder ? 1u : 0u);
        c.sum[SumBorderFaces0 + 1] =
          g.dimension > 1 ? length * ((y == 0 ? 1u : 0u) + (y + 1 == g.height ? 1u : 0u)) : 0u;
        c.sum[SumBorderFaces0 + 2] =
          g.dimension > 2 ? length * ((z == 0 ? 1u : 0u) + (z + 1 == g.depth ? 1u : 0u)) : 0u;
      }
    }
    const std::uint32_t peers = __match_any_sync(FullWarp, label);
    if (ReducePeers(peers, c) && valid)
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
  }
}

/** Overlap length of [a0, a1) and [b0, b1) (signed coordinates: the shifted intervals may start at -1). */
__device__ __forceinline__ long long
Overlap(long long a0, long long a1, long long b0, long long b1)
{
  const long long lo = a0 > b0 ? a0 : b0;
  const long long hi = a1 < b1 ? a1 : b1;
  return hi > lo ? hi - lo : 0;
}

/** Perimeter intercepts (ITK's ShapeLabelMapFilter::ComputePerimeter): per run, its two x-neighbours
 * and, for every neighbour row, the pixels whose vertical and diagonal neighbours are not in the same
 * component, found by walking that row's runs of the same label. Runs of a row are contiguous ids
 * sorted by x, so the first candidate is found by binary search. Needs the labels (run it after
 * LabelRunsAndVoteFeaturesKernel). */
__global__ void
CountPerimeterInterceptsKernel(const std::uint32_t * __restrict__ runLabel,
                               const std::uint32_t * __restrict__ firstRun,
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
    SumContribution<7>  c{};
    if (valid)
    {
      label = runLabel[run];
      const long long x0 = runBegin[run];
      const long long x1 = runEnd[run];
      const long long length = x1 - x0;
      const std::uint32_t row = runRow[run];
      const int           y = static_cast<int>(row % g.height);
      const int           z = static_cast<int>(row / g.height);
      c.sum[0] = 2; // the run's two x-neighbours are outside it
      const int dzMax = g.dimension > 2 ? 1 : 0;
      const int dyMax = g.dimension > 1 ? 1 : 0;
      for (int dz = -dzMax; dz <= dzMax; ++dz)
      {
        for (int dy = -dyMax; dy <= dyMax; ++dy)
        {
          if (dy == 0 && dz == 0)
          {
            continue;
          }
          // direction classes of the vertical (0,|dy|,|dz|) and diagonal (1,|dy|,|dz|) neighbours
          const int vertical = (dy != 0 && dz != 0) ? 5 : (dy != 0 ? 1 : 2);
          const int diagonal = (dy != 0 && dz != 0) ? 6 : (dy != 0 ? 3 : 4);
          long long same = 0, sameLeft = 0, sameRight = 0;
          const int ny = y + dy, nz = z + dz;
          if (ny >= 0 && ny < static_cast<int>(g.height) && nz >= 0 && nz < static_cast<int>(g.depth))
          {
            const std::uint32_t nRow = static_cast<std::uint32_t>(nz) * g.height + static_cast<std::uint32_t>(ny);
            std::uint32_t lo = firstRun[static_cast<std::uint64_t>(nRow) * g.wordsPerRow];
            std::uint32_t hi = firstRun[static_cast<std::uint64_t>(nRow + 1) * g.wordsPerRow];
            // first run of the row that ends after x0 - 1 (can touch [x0 - 1, x1 + 1))
            while (lo < hi)
            {
              const std::uint32_t mid = lo + (hi - lo) / 2;
              if (static_cast<long long>(runEnd[mid]) <= x0 - 1)
                lo = mid + 1;
              else
                hi = mid;
            }
            const std::uint32_t rowEnd = firstRun[static_cast<std::uint64_t>(nRow + 1) * g.wordsPerRow];
            for (std::uint32_t m = lo; m < rowEnd && static_cast<long long>(runBegin[m]) <= x1; ++m)
            {
              if (runLabel[m] != label)
              {
                continue;
              }
              const long long b0 = runBegin[m], b1 = runEnd[m];
              same += Overlap(x0, x1, b0, b1);
              sameLeft += Overlap(x0 - 1, x1 - 1, b0, b1);  // neighbours at x - 1
              sameRight += Overlap(x0 + 1, x1 + 1, b0, b1); // neighbours at x + 1
            }
          }
          c.sum[vertical] += static_cast<unsigned long long>(length - same);
          c.sum[diagonal] += static_cast<unsigned long long>(2 * length - sameLeft - sameRight);
        }
      }
    }
    const std::uint32_t peers = __match_any_sync(FullWarp, label);
    if (ReducePeers(peers, c) && valid)
    {
#pragma unroll
      for (int i = 0; i < 7; ++i)
      {
        if (c.sum[i] != 0)
        {
          atomicAdd(features.Sum(SumIntercepts0 + i, label), c.sum[i]);
        }
      }
    }
  }
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
