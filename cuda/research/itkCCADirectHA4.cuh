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
// HA4 (A. Hennequin, L. Lacassagne, L. Cabaret, Q. Meunier, "A new Direct Connected Component Labeling and
// Analysis Algorithms for GPUs", DASIP 2018, doi:10.1109/DASIP.2018.8596835), the 64-bit version: 4-connectivity, a
// warp per row of a strip of StripRows rows, 64 pixels per iteration (two per thread, one 64-bit bitmask from two
// __ballot_sync), a sub-run (a run cut at the 64-pixel boundaries) found by its start with the distance operators.
// Only the sub-run starts touch memory: a start is a node of the union-find (its L entry), initialized to itself,
// or, where a run goes on from the previous 64 pixels, to that run's start (the paper's carried distance); the
// rows of a strip are united inside the strip kernel, the strips' border rows by the merge kernel; the features
// kernel (Alg. 6) has each start add its sub-run's S, Σx, Σy and box at its root. The roots are the smallest node
// indices (itkCCAUnionFind.cuh), hence each component's first pixel: the raster order needs no sort.
// The three variants of the ICASSP 2021 paper's Table 1 differ by a policy: HA (atomics per sub-run start), HA+OTF
// (features from the start at each node, moved to the new root by the union that links), HA+CD (the starts of a
// warp that share a root reduced first, one atomic per root per warp). Each variant's file registers itself.
#ifndef itkCCADirectHA4_cuh
#define itkCCADirectHA4_cuh

#include "itkCCACudaCheck.cuh"
#include "itkCCADeviceBuffer.cuh"
#include "itkCCADirectAlgorithm.cuh"
#include "itkCCAOnTheFlyUnite.cuh"
#include "itkCCAUnionFind.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{
namespace ha4
{
constexpr unsigned      StripRows = 4;
constexpr std::uint32_t NoNode = 0xffffffffu;

/** Set bits just below bit b (the distance from pixel b back to the start of its segment), b in [0, 64). */
__device__ __forceinline__ int
StartDistance(std::uint64_t word, int b)
{
  return b == 0 ? 0 : __clzll(~(word << (64 - b)));
}

/** Set bits from bit b upward, b included (a segment's length from its start), b in [0, 64). */
__device__ __forceinline__ int
EndDistance(std::uint64_t word, int b)
{
  const std::uint64_t rest = ~(word >> b);
  return rest == 0 ? 64 - b : __ffsll(static_cast<long long>(rest)) - 1;
}

__device__ __forceinline__ bool
IsSet(std::uint64_t word, int b)
{
  return (word >> b & 1ull) != 0;
}

/** A sub-run starts at bit b: b is set and b - 1 (in the same 64 pixels) is not. */
__device__ __forceinline__ bool
IsStart(std::uint64_t word, int b)
{
  return IsSet(word, b) && (b == 0 || !IsSet(word, b - 1));
}

/** The 64 pixels of row y from x0 as a bitmask (bit b: pixel x0 + b), made by the whole warp. */
__device__ __forceinline__ std::uint64_t
LoadWord(const std::uint8_t * pixels, std::uint32_t width, std::uint32_t height, long long y, std::uint32_t x0)
{
  const unsigned lane = threadIdx.x & 31u;
  const bool     row = y >= 0 && y < height;
  const auto     base = static_cast<std::uint64_t>(row ? y : 0) * width;
  const bool     p0 = row && x0 + lane < width && pixels[base + x0 + lane] != 0;
  const bool     p1 = row && x0 + 32 + lane < width && pixels[base + x0 + 32 + lane] != 0;
  return static_cast<std::uint64_t>(__ballot_sync(FullWarp, p0)) |
         static_cast<std::uint64_t>(__ballot_sync(FullWarp, p1)) << 32;
}

/** The node (union-find entry) of set pixel b of the 64 pixels at `first` (the raster index of bit 0). */
__device__ __forceinline__ std::uint32_t
                           NodeOf(std::uint64_t word, int b, std::uint64_t first)
{
  return static_cast<std::uint32_t>(first + b - StartDistance(word, b));
}

/** Sub-run [x, x + count) of row y as the paper's features: S, Σx, Σy (sums 0-2), box x and y (boxes 0-1). */
__device__ __forceinline__ RunContribution<3>
                           SubRunFeatures(std::uint32_t x, std::uint32_t count, std::uint32_t y)
{
  RunContribution<3> c;
  c.sum[0] = count;
  c.sum[1] = static_cast<unsigned long long>(count) * x + static_cast<unsigned long long>(count) * (count - 1) / 2;
  c.sum[2] = static_cast<unsigned long long>(y) * count;
  c.boundingBoxMin[0] = x;
  c.boundingBoxMax[0] = x + count - 1;
  c.boundingBoxMin[1] = c.boundingBoxMax[1] = y;
  c.boundingBoxMin[2] = c.boundingBoxMax[2] = 0;
  return c;
}

/** The neutral contribution: what a lane without a sub-run start brings to a reduction. */
__device__ __forceinline__ RunContribution<3>
                           NoFeatures()
{
  RunContribution<3> c;
  for (int i = 0; i < 3; ++i)
    c.sum[i] = 0;
  for (int d = 0; d < 3; ++d)
  {
    c.boundingBoxMin[d] = 0xffffffffu;
    c.boundingBoxMax[d] = 0;
  }
  return c;
}

__device__ __forceinline__ void
StoreFeatures(const DeviceFeatures & f, std::uint32_t node, const RunContribution<3> & c)
{
  for (int i = 0; i < 3; ++i)
    *f.Sum(i, node) = c.sum[i];
  for (int d = 0; d < 2; ++d)
  {
    f.boundingBoxMin[d][node] = c.boundingBoxMin[d];
    f.boundingBoxMax[d][node] = c.boundingBoxMax[d];
  }
}

__device__ __forceinline__ void
AddFeaturesAtomically(const DeviceFeatures & f, std::uint32_t root, const RunContribution<3> & c)
{
  for (int i = 0; i < 3; ++i)
    atomicAdd(f.Sum(i, root), c.sum[i]);
  for (int d = 0; d < 2; ++d)
  {
    atomicMin(f.boundingBoxMin[d] + root, c.boundingBoxMin[d]);
    atomicMax(f.boundingBoxMax[d] + root, c.boundingBoxMax[d]);
  }
}

/** HA and HA+CD: a node starts as its own root (or points to its run's start) with empty features (when
 * features are wanted); unions link only. */
struct LinkOnly
{
  DeviceFeatures features; ///< sums == nullptr: labels only
  __device__ __forceinline__ void
  InitNode(std::uint32_t * L, std::uint32_t node, std::uint32_t runStart, const RunContribution<3> &) const
  {
    L[node] = runStart == NoNode ? node : runStart;
    if (features.sums != nullptr && runStart == NoNode)
    {
      StoreFeatures(features, node, NoFeatures());
    }
  }
  __device__ __forceinline__ void
  Unite(std::uint32_t * L, std::uint32_t a, std::uint32_t b) const
  {
    ::itk::cca::cuda::Unite(L, a, b);
  }
};

/** HA+OTF: every node starts as its own root holding its sub-run's features; the union that links a root moves
 * them to the new root (itkCCAOnTheFlyUnite.cuh); a sub-run that goes on from the previous 64 pixels is united
 * with its run's start the same way. */
struct MoveOnLink
{
  DeviceFeatures features;
  __device__ __forceinline__ void
  InitNode(std::uint32_t * L, std::uint32_t node, std::uint32_t runStart, const RunContribution<3> & c) const
  {
    L[node] = node;
    StoreFeatures(features, node, c);
    if (runStart != NoNode)
    {
      Unite(L, node, runStart);
    }
  }
  __device__ __forceinline__ void
  Unite(std::uint32_t * L, std::uint32_t a, std::uint32_t b) const
  {
    OnTheFlyUnite{ features, 2 }(L, a, b);
  }
};

/** Unites the sub-runs of two vertically adjacent rows' 64 pixels (`word` at raster index `first`, `above` at
 * `firstAbove`) where they overlap: at each overlap one of the two has a start, and that lane makes the union,
 * once per overlap start. */
template <typename TPolicy>
__device__ __forceinline__ void
UniteOverlaps(const TPolicy & policy, std::uint32_t * L, std::uint64_t word, std::uint64_t above, std::uint64_t first,
              std::uint64_t firstAbove)
{
  const unsigned lane = threadIdx.x & 31u;
  for (int half = 0; half < 2; ++half)
  {
    const int b = static_cast<int>(lane) + 32 * half;
    if (IsSet(word & above, b) && (IsStart(word, b) || IsStart(above, b)))
    {
      policy.Unite(L, NodeOf(word, b, first), NodeOf(above, b, firstAbove));
    }
  }
}

/** `visit(row, x0)` for the 64 pixels from x0 of each of `rows` rows, a warp each (a warp-uniform grid-stride
 * loop, so the warp's intrinsics inside always see the whole warp). */
template <typename TVisit>
__device__ __forceinline__ void
ForEachRowChunk(std::uint64_t rows, std::uint32_t width, TVisit visit)
{
  const std::uint64_t chunks = (width + 63ull) / 64ull;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * (blockDim.x / 32u);
  for (std::uint64_t w = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32u; w < rows * chunks;
       w += warps)
  {
    visit(w / chunks, static_cast<std::uint32_t>(w % chunks) * 64u);
  }
}

/** Alg. 3 (64-bit): a block of 32 x StripRows threads per strip, a warp per row, 64 pixels per iteration; the
 * nodes initialized, then each row united with the one above it inside the strip where their sub-runs overlap
 * (at each overlap one of the two starts there: the union is made once per overlap start). */
template <typename TPolicy>
__global__ void
StripLabelingKernel(const std::uint8_t * __restrict__ pixels, std::uint32_t * L, std::uint32_t width,
                    std::uint32_t height, TPolicy policy)
{
  __shared__ std::uint64_t rowWord[StripRows];
  const unsigned           lane = threadIdx.x;
  const unsigned           ty = threadIdx.y;
  const long long          y = static_cast<long long>(blockIdx.x) * StripRows + ty;
  const bool               rowValid = y < height;
  const std::uint64_t      rowBase = static_cast<std::uint64_t>(rowValid ? y : 0) * width;
  std::uint32_t            runStart = NoNode; // the start of the run that reaches the end of the previous 64 pixels
  for (std::uint32_t x0 = 0; x0 < width; x0 += 64)
  {
    const std::uint64_t word = LoadWord(pixels, width, height, rowValid ? y : -1, x0);
    for (int half = 0; half < 2; ++half)
    {
      const int b = static_cast<int>(lane) + 32 * half;
      if (IsStart(word, b))
      {
        const std::uint32_t x = x0 + b;
        policy.InitNode(
          L,
          static_cast<std::uint32_t>(rowBase + x),
          b == 0 ? runStart : NoNode,
          SubRunFeatures(x, static_cast<std::uint32_t>(EndDistance(word, b)), static_cast<std::uint32_t>(y)));
      }
    }
    if (lane == 0)
    {
      rowWord[ty] = word;
    }
    __syncthreads();
    if (ty > 0 && rowValid)
    {
      UniteOverlaps(policy, L, word, rowWord[ty - 1], rowBase + x0, rowBase - width + x0);
    }
    if (IsSet(word, 63))
    {
      const int s = 64 - __clzll(~word); // the first bit of the run that ends at bit 63
      runStart = (s == 0 && runStart != NoNode) ? runStart : static_cast<std::uint32_t>(rowBase + x0 + s);
    }
    else
    {
      runStart = NoNode;
    }
    __syncthreads(); // rowWord is rewritten next iteration
  }
}

/** Alg. 4: the first row of each strip (but the first) united with the last row of the strip above, a warp per
 * 64 pixels of such a row. */
template <typename TPolicy>
__global__ void
StripMergeKernel(const std::uint8_t * __restrict__ pixels, std::uint32_t * L, std::uint32_t width, std::uint32_t height,
                 TPolicy policy)
{
  const std::uint64_t borders = (height + StripRows - 1) / StripRows - 1;
  ForEachRowChunk(borders, width, [&](std::uint64_t border, std::uint32_t x0) {
    const long long     y = static_cast<long long>(border + 1) * StripRows;
    const std::uint64_t first = static_cast<std::uint64_t>(y) * width + x0;
    UniteOverlaps(policy,
                  L,
                  LoadWord(pixels, width, height, y, x0),
                  LoadWord(pixels, width, height, y - 1, x0),
                  first,
                  first - width);
  });
}

/** Alg. 6: each sub-run start adds its sub-run's features at its root; with ConflictDetection the starts of the
 * warp that share a root reduce first (__match_any_sync, itkCCARunFeatures.cuh's ReducePeers) and their leader
 * adds once. A warp per 64 pixels of a row. */
template <bool ConflictDetection>
__global__ void
FeaturesKernel(const std::uint8_t * __restrict__ pixels, const std::uint32_t * __restrict__ L, std::uint32_t width,
               std::uint32_t height, DeviceFeatures features)
{
  const unsigned lane = threadIdx.x & 31u;
  ForEachRowChunk(height, width, [&](std::uint64_t row, std::uint32_t x0) {
    const auto          y = static_cast<std::uint32_t>(row);
    const std::uint64_t word = LoadWord(pixels, width, height, y, x0);
    const std::uint64_t first = static_cast<std::uint64_t>(y) * width + x0;
    for (int half = 0; half < 2; ++half)
    {
      const int           b = static_cast<int>(lane) + 32 * half;
      const bool          start = IsStart(word, b);
      const std::uint32_t root = start ? FindRoot(L, static_cast<std::uint32_t>(first + b)) : NoNode;
      RunContribution<3>  c =
        start ? SubRunFeatures(x0 + b, static_cast<std::uint32_t>(EndDistance(word, b)), y) : NoFeatures();
      if (ConflictDetection)
      {
        // Only the starts vote: the other lanes (most of them: a sub-run has one start) each stay a group of
        // one, or their common NoNode would make a 32-lane reduction of zeros wherever a warp has no start.
        const std::uint32_t matched = __match_any_sync(FullWarp, root);
        const std::uint32_t peers = start ? matched : 1u << lane;
        if (ReducePeers(peers, c) && start)
        {
          AddFeaturesAtomically(features, root, c);
        }
      }
      else if (start)
      {
        AddFeaturesAtomically(features, root, c);
      }
    }
  });
}

/** Alg. 5: each sub-run start finds its root and hands it to the other pixels of its sub-run (a shuffle from the
 * lane, and half, holding the start); every foreground pixel is written its root, a valid ancestor for the finds
 * of other warps still running. A warp per 64 pixels of a row. A template (of nothing) so that the three variant
 * files that include this header share one kernel rather than define it three times. */
template <typename = void>
__global__ void
RelabelKernel(const std::uint8_t * __restrict__ pixels, std::uint32_t * L, std::uint32_t width, std::uint32_t height)
{
  const unsigned lane = threadIdx.x & 31u;
  ForEachRowChunk(height, width, [&](std::uint64_t row, std::uint32_t x0) {
    const auto          y = static_cast<std::uint32_t>(row);
    const std::uint64_t word = LoadWord(pixels, width, height, y, x0);
    const std::uint64_t first = static_cast<std::uint64_t>(y) * width + x0;
    std::uint32_t       root[2];
    for (int half = 0; half < 2; ++half)
    {
      const int b = static_cast<int>(lane) + 32 * half;
      root[half] = IsStart(word, b) ? FindRoot(L, static_cast<std::uint32_t>(first + b)) : 0u;
    }
    for (int half = 0; half < 2; ++half)
    {
      const int           b = static_cast<int>(lane) + 32 * half;
      const int           s = IsSet(word, b) ? b - StartDistance(word, b) : b; // the bit of this sub-run's start
      const std::uint32_t low = __shfl_sync(FullWarp, root[0], s & 31);
      const std::uint32_t high = __shfl_sync(FullWarp, root[1], s & 31);
      if (IsSet(word, b))
      {
        L[first + b] = s < 32 ? low : high;
      }
    }
  });
}

/** The three kernels of HA4's CCL (strip labeling, strip merge, relabeling) or CCA (the last replaced by the
 * features), with `TPolicy` deciding how nodes start and how unions move features. */
template <typename TPolicy>
void
LaunchStrips(const DirectImage & image, std::uint32_t * L, const TPolicy & policy)
{
  const unsigned strips = (image.height + StripRows - 1) / StripRows;
  StripLabelingKernel<TPolicy>
    <<<strips, dim3(32, StripRows), 0, image.stream>>>(image.pixels, L, image.width, image.height, policy);
  CCA_CUDA_CHECK_LAUNCH("ha4::StripLabelingKernel");
  const std::uint64_t borderWarps = (strips - 1) * ((image.width + 63ull) / 64ull);
  if (borderWarps > 0)
  {
    StripMergeKernel<TPolicy><<<GridFor(borderWarps * 32, image.multiprocessors), BlockSize, 0, image.stream>>>(
      image.pixels, L, image.width, image.height, policy);
    CCA_CUDA_CHECK_LAUNCH("ha4::StripMergeKernel");
  }
}

inline unsigned
RowChunkGrid(const DirectImage & image)
{
  return GridFor(static_cast<std::uint64_t>(image.height) * ((image.width + 63ull) / 64ull) * 32ull,
                 image.multiprocessors);
}

inline void
LaunchRelabel(const DirectImage & image, std::uint32_t * L)
{
  RelabelKernel<><<<RowChunkGrid(image), BlockSize, 0, image.stream>>>(image.pixels, L, image.width, image.height);
  CCA_CUDA_CHECK_LAUNCH("ha4::RelabelKernel");
}

template <bool ConflictDetection>
void
LaunchFeatures(const DirectImage & image, const std::uint32_t * L, const DeviceFeatures & features)
{
  FeaturesKernel<ConflictDetection>
    <<<RowChunkGrid(image), BlockSize, 0, image.stream>>>(image.pixels, L, image.width, image.height, features);
  CCA_CUDA_CHECK_LAUNCH("ha4::FeaturesKernel");
}

/** An HA4 variant: the CCL is the same for all three (strips, merge, relabel); `TVariant::Analyze(image, L,
 * features)` is the variant's CCA. */
template <typename TVariant>
class Algorithm final : public DirectAlgorithm
{
public:
  bool
  FullyConnected() const override
  {
    return false; // 4-connectivity, as in the papers
  }

  bool
  ComputesFeatures() const override
  {
    return true;
  }

  void
  Label(const DirectImage & image, std::uint32_t * labels) override
  {
    LaunchStrips(image, labels, LinkOnly{ DeviceFeatures{} });
    LaunchRelabel(image, labels);
  }

  void
  Analyze(const DirectImage & image, std::uint32_t * labels, const DeviceFeatures & features) override
  {
    TVariant::Analyze(image, labels, features);
  }

  void
  LabelAnalyzed(const DirectImage & image, std::uint32_t * labels) override
  {
    LaunchRelabel(image, labels);
  }
};

} // namespace ha4
} // namespace cuda
} // namespace cca
} // namespace itk

#endif
