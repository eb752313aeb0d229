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
// BUF, the block-based union-find (S. Allegretti, F. Bolelli, M. Cancilla, C. Grana, "A Block-Based Union-Find
// Algorithm to Label Connected Components on GPUs", ICIAP 2019, LNCS 11752, pp. 271-281, Springer): 8-connectivity,
// labels only. A thread per 2x2 block; a block's label lives in its top-left pixel, whose raster index is the
// block's id, until the last kernel copies it into the block's pixels. Four kernels, as the paper has them:
// Initialization, Merge (the blocks above and to the left, read through the 4x4 bitset of the pixels around the
// block that its foreground pixels touch), Compression, FinalLabeling. Roots link under the smaller root with
// atomicMin, so each tree's root is its smallest block id. "buf" unites as the paper's code does, with a Find that
// only reads; "buf-halving" uses the engine's union (itkCCAUnionFind.cuh), whose find halves paths as it walks,
// so that the benchmark can tell what that choice is worth.

#include "itkCCACudaCheck.cuh"
#include "itkCCADirectAlgorithm.cuh"
#include "itkCCAUnionFind.cuh"

#include <algorithm>

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{
const dim3 BlockThreads(32, 8); // threads per CUDA block, one per 2x2 pixel block

__device__ __forceinline__ bool
Foreground(const std::uint8_t * pixels, std::uint32_t width, std::uint32_t height, long long x, long long y)
{
  return x >= 0 && y >= 0 && x < width && y < height && pixels[y * width + x] != 0;
}

/** `visit(x, y)` for each pixel block of this thread (its top-left pixel), a 2-D grid-stride loop: images taller
 * than the grid's 65,535 rows of CUDA blocks still get a thread per pixel block. */
template <typename TVisit>
__device__ __forceinline__ void
ForEachBlock(std::uint32_t width, std::uint32_t height, TVisit visit)
{
  for (long long y = 2ll * (blockIdx.y * blockDim.y + threadIdx.y); y < height; y += 2ll * gridDim.y * blockDim.y)
  {
    for (long long x = 2ll * (blockIdx.x * blockDim.x + threadIdx.x); x < width; x += 2ll * gridDim.x * blockDim.x)
    {
      visit(x, y);
    }
  }
}

__global__ void
BufInitializationKernel(std::uint32_t * labels, std::uint32_t width, std::uint32_t height)
{
  ForEachBlock(width, height, [=](long long x, long long y) {
    const auto id = static_cast<std::uint32_t>(y * width + x);
    labels[id] = id;
  });
}

/** The paper's Union: both roots found by reads only. */
struct ReadOnlyFindUnion
{
  __device__ __forceinline__ void
  operator()(std::uint32_t * labels, std::uint32_t a, std::uint32_t b) const
  {
    Unite<NoLinkAction, false>(labels, a, b);
  }
};

/** The engine's union, whose find halves paths. */
struct PathHalvingUnion
{
  __device__ __forceinline__ void
  operator()(std::uint32_t * labels, std::uint32_t a, std::uint32_t b) const
  {
    Unite(labels, a, b);
  }
};

template <typename TUnion>
__global__ void
BufMergeKernel(const std::uint8_t * __restrict__ pixels, std::uint32_t * labels, std::uint32_t width,
               std::uint32_t height)
{
  ForEachBlock(width, height, [=](long long x, long long y) {
    // Bit r * 4 + c of the 4x4 square around the block stands for the pixel (x - 1 + c, y - 1 + r); 0x777 is
    // the 3x3 neighborhood of the top-left pixel. The bottom-right pixel touches no block of the half mask.
    std::uint32_t around = 0;
    if (Foreground(pixels, width, height, x, y))
      around |= 0x777u;
    if (Foreground(pixels, width, height, x + 1, y))
      around |= 0x777u << 1;
    if (Foreground(pixels, width, height, x, y + 1))
      around |= 0x777u << 4;
    if (around == 0)
    {
      return;
    }
    const auto   id = static_cast<std::uint32_t>(y * width + x);
    const TUnion unite;
    auto         at = [&](int bit, long long px, long long py) {
      return (around >> bit & 1u) && Foreground(pixels, width, height, px, py);
    };
    if (at(0, x - 1, y - 1)) // the block above left
      unite(labels, id, static_cast<std::uint32_t>((y - 2) * width + x - 2));
    if (at(1, x, y - 1) || at(2, x + 1, y - 1)) // above
      unite(labels, id, static_cast<std::uint32_t>((y - 2) * width + x));
    if (at(3, x + 2, y - 1)) // above right
      unite(labels, id, static_cast<std::uint32_t>((y - 2) * width + x + 2));
    if (at(4, x - 1, y) || at(8, x - 1, y + 1)) // left
      unite(labels, id, static_cast<std::uint32_t>(y * width + x - 2));
  });
}

/** Each block linked straight to its root. The find only reads (FindRoot, as the paper's Find): a find that halves
 * paths would write ancestors over entries that other threads of this kernel have just set to their root. */
__global__ void
BufCompressionKernel(std::uint32_t * labels, std::uint32_t width, std::uint32_t height)
{
  ForEachBlock(width, height, [=](long long x, long long y) {
    const auto id = static_cast<std::uint32_t>(y * width + x);
    labels[id] = FindRoot(labels, id);
  });
}

/** Each block's root id into its foreground pixels, 0 into its background (the direct algorithms' output: the
 * raster-order step tells foreground from the image, so root 0 needs no offset). */
__global__ void
BufFinalLabelingKernel(const std::uint8_t * __restrict__ pixels, std::uint32_t * labels, std::uint32_t width,
                       std::uint32_t height)
{
  ForEachBlock(width, height, [=](long long x, long long y) {
    const auto          id = static_cast<std::uint64_t>(y * width + x);
    const std::uint32_t label = labels[id];
    labels[id] = Foreground(pixels, width, height, x, y) ? label : 0;
    if (x + 1 < width)
      labels[id + 1] = Foreground(pixels, width, height, x + 1, y) ? label : 0;
    if (y + 1 < height)
    {
      labels[id + width] = Foreground(pixels, width, height, x, y + 1) ? label : 0;
      if (x + 1 < width)
        labels[id + width + 1] = Foreground(pixels, width, height, x + 1, y + 1) ? label : 0;
    }
  });
}

template <typename TUnion>
class BlockUnionFind final : public DirectAlgorithm
{
public:
  bool
  FullyConnected() const override
  {
    return true;
  }

  void
  Label(const DirectImage & image, std::uint32_t * labels) override
  {
    const dim3 grid((image.width + 2 * BlockThreads.x - 1) / (2 * BlockThreads.x),
                    std::min(65535u, (image.height + 2 * BlockThreads.y - 1) / (2 * BlockThreads.y)));
    BufInitializationKernel<<<grid, BlockThreads, 0, image.stream>>>(labels, image.width, image.height);
    CCA_CUDA_CHECK_LAUNCH("BufInitializationKernel");
    BufMergeKernel<TUnion><<<grid, BlockThreads, 0, image.stream>>>(image.pixels, labels, image.width, image.height);
    CCA_CUDA_CHECK_LAUNCH("BufMergeKernel");
    BufCompressionKernel<<<grid, BlockThreads, 0, image.stream>>>(labels, image.width, image.height);
    CCA_CUDA_CHECK_LAUNCH("BufCompressionKernel");
    BufFinalLabelingKernel<<<grid, BlockThreads, 0, image.stream>>>(image.pixels, labels, image.width, image.height);
    CCA_CUDA_CHECK_LAUNCH("BufFinalLabelingKernel");
  }
};

} // namespace

std::unique_ptr<DirectAlgorithm>
CreateBlockUnionFind()
{
  return std::make_unique<BlockUnionFind<ReadOnlyFindUnion>>();
}

std::unique_ptr<DirectAlgorithm>
CreateBlockUnionFindPathHalving()
{
  return std::make_unique<BlockUnionFind<PathHalvingUnion>>();
}

} // namespace cuda
} // namespace cca
} // namespace itk
