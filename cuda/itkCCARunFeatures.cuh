/*=========================================================================
 *  What every feature variant shares: the per-component accumulators, one run's closed-form
 *  contribution (count, index sums, bounding box and, for the LabelMap, second moments and border
 *  counts), and the warp reduction over lanes of the same component (conflict detection).
 *=========================================================================*/
#ifndef itkCCARunFeatures_cuh
#define itkCCARunFeatures_cuh

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

/** The contribution of run [x0, x1) of row `row`: the first NumSums sums (SumProducts0 for the basic
 * features, SumIntercepts0 with the shape sums) and its bounding box. */
template <bool WithShape, int NumSums = (WithShape ? SumIntercepts0 : SumProducts0)>
__device__ __forceinline__ RunContribution<NumSums>
MakeRunContribution(unsigned long long x0, unsigned long long x1, std::uint32_t row, const DeviceGeometry & g)
{
  RunContribution<NumSums> c;
  const unsigned long long length = x1 - x0;
  const unsigned long long y = row % g.height;
  const unsigned long long z = row / g.height;
  // Σx over [x0, x1): (x0 + x1 - 1) * length / 2, halving the even factor first to stay in 64 bits.
  const unsigned long long sumX = (length % 2u == 0) ? (length / 2u) * (x0 + x1 - 1u) : length * ((x0 + x1 - 1u) / 2u);
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
      c.sum[SumBorderPixels] =
        (startsOnBorder ? 1u : 0u) + ((endsOnBorder && (!startsOnBorder || length > 1)) ? 1u : 0u);
    }
    c.sum[SumBorderFaces0 + 0] = (startsOnBorder ? 1u : 0u) + (endsOnBorder ? 1u : 0u);
    c.sum[SumBorderFaces0 + 1] = g.dimension > 1 ? length * ((y == 0 ? 1u : 0u) + (y + 1 == g.height ? 1u : 0u)) : 0u;
    c.sum[SumBorderFaces0 + 2] = g.dimension > 2 ? length * ((z == 0 ? 1u : 0u) + (z + 1 == g.depth ? 1u : 0u)) : 0u;
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

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
