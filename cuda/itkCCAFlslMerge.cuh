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
// Merging runs of neighboring rows, word by word on the foreground bitmask.
//
// For a row and one of its preceding neighbor rows, every pair of touching runs is found at exactly
// one pixel x of the current row, so each pair is united once:
//  - overlapping runs (both connectivities): x is their first common pixel, i.e. both rows are
//    foreground at x and one of the two runs starts there;
//  - with full connectivity, runs that only touch diagonally: the current run ends at x and the
//    neighbor run starts at x+1, or the neighbor run ends at x-1 and the current run starts at x.
// Neighbor rows (dy, dz) are the half neighborhood: 2D (-1,0); 3D adds (0,-1), and with full
// connectivity (-1,-1) and (+1,-1).
#ifndef itkCCAFlslMerge_cuh
#define itkCCAFlslMerge_cuh

#include "itkCCADeviceGeometry.cuh"
#include "itkCCAUnionFind.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

struct NeighborRows
{
  int  count;
  int  dy[4];
  int  dz[4];
  bool widened[4]; ///< that row's x-neighbors join too (PrecedingNeighborRowOffsets)
  /** CoveringNeighborRows(): the rows that cover others (-1: none), and per row, bit k where coveringRow[k] covers
   * it: its pairs that overlap where that row is foreground need no union. */
  int           coveringRow[2];
  std::uint32_t coveredBy[4];
};

/** The plain union of two runs' sets. Its finds only read (BUF's union): on the H200, path halving's writes, which
 * land on the nodes that every thread walks to the root of a large component, made the merge 1.6-1.7x slower on
 * dense images (3D 512³ d = 0.6, 26-connectivity: 17.1 against 10.5 ms a call) and gained nothing on chains built to
 * make the trees deep (a one-pixel column, a serpentine, a staircase: scripts/device-merge-find.py). The trees are
 * flattened once the merge is done (FlattenAndMarkRootsPass). */
struct PlainUnite
{
  __device__ __forceinline__ void
  operator()(std::uint32_t * parent, std::uint32_t a, std::uint32_t b) const
  {
    Unite<NoLinkAction, false>(parent, a, b);
  }
};

/** `unite` merges two runs' sets: PlainUnite, or a variant that also moves features (on-the-fly merge). The
 * pass as a device function (see itkCCAFlslSegments.cuh), and MergeRunsKernel below. Multi-label input:
 * `breaks` (the value-change bits) and `runClass` (each run's value): touching runs unite only where their
 * values are equal; nullptr both for binary input. `TCovering`: skip the pairs that `neighbors`' covering rows
 * imply (CoveringNeighborRows()); where no row covers another, the pass is compiled without that step, so that
 * images it cannot help pay nothing for it. */
template <typename TUnite, bool TCovering = false>
__device__ __forceinline__ void
MergeRunsPass(const std::uint32_t * bits, const std::uint32_t * firstRun, std::uint32_t * parent,
              const DeviceGeometry & g, const NeighborRows & neighbors, const TUnite & unite,
              const std::uint32_t * breaks = nullptr, const long long * runClass = nullptr)
{
  auto uniteOfEqualValue = [&](std::uint32_t a, std::uint32_t b) {
    if (runClass == nullptr || runClass[a] == runClass[b])
    {
      unite(parent, a, b);
    }
  };
  for (std::uint64_t word = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; word < g.numWords;
       word += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    const std::uint32_t row = static_cast<std::uint32_t>(word / g.wordsPerRow);
    const std::uint32_t wordInRow = static_cast<std::uint32_t>(word - static_cast<std::uint64_t>(row) * g.wordsPerRow);
    const RowWord       cur = LoadRowWord(bits, static_cast<std::uint32_t>(word), wordInRow, g.wordsPerRow, breaks);
    if (cur.bits == 0)
    {
      continue;
    }
    const std::uint32_t curStarts = cur.Starts();
    const std::uint32_t curFirstRun = firstRun[word];
    const int           y = static_cast<int>(row % g.height);
    const int           z = static_cast<int>(row / g.height);
    // A batch's images start at every batchExtent-th row (2-D) or slice (3-D): nothing there joins the image before.
    const bool firstOfImage =
      g.batchExtent != 0 && (g.dimension == 2 ? y % g.batchExtent == 0 : z % g.batchExtent == 0);

    // The covering rows' words (0 outside the image or in the image before): only these two before the loop, which
    // keeps the pass as lean as without them (loading every neighbor row first made it slower).
    std::uint32_t coverBits[2] = { 0u, 0u };
    for (int k = 0; TCovering && k < 2; ++k)
    {
      const int n = neighbors.coveringRow[k];
      if (n < 0)
      {
        continue;
      }
      const int ny = y + neighbors.dy[n];
      const int nz = z + neighbors.dz[n];
      if (ny < 0 || nz < 0 || (firstOfImage && (g.dimension == 2 ? ny != y : nz != z)))
      {
        continue;
      }
      coverBits[k] =
        bits[(static_cast<std::uint32_t>(nz) * g.height + static_cast<std::uint32_t>(ny)) * g.wordsPerRow + wordInRow];
    }
    for (int n = 0; n < neighbors.count; ++n)
    {
      const int ny = y + neighbors.dy[n];
      const int nz = z + neighbors.dz[n];
      if (ny < 0 || ny >= static_cast<int>(g.height) || nz < 0 ||
          (firstOfImage && (g.dimension == 2 ? ny != y : nz != z)))
      {
        continue;
      }
      const std::uint32_t nWord =
        (static_cast<std::uint32_t>(nz) * g.height + static_cast<std::uint32_t>(ny)) * g.wordsPerRow + wordInRow;
      const RowWord nbr = LoadRowWord(bits, nWord, wordInRow, g.wordsPerRow, breaks);
      const bool widened = neighbors.widened[n];
      if ((nbr.bits | (widened ? (nbr.prevBit | (nbr.nextBit << 31)) : 0u)) == 0)
      {
        continue;
      }
      const std::uint32_t nbrStarts = nbr.Starts();
      const std::uint32_t nbrFirstRun = firstRun[nWord];

      const std::uint32_t covered =
        TCovering
          ? ((neighbors.coveredBy[n] & 1u) ? coverBits[0] : 0u) | ((neighbors.coveredBy[n] & 2u) ? coverBits[1] : 0u)
          : 0u;
      for (std::uint32_t overlap = cur.bits & nbr.bits & (curStarts | nbrStarts) & ~covered; overlap != 0;
           overlap &= overlap - 1u)
      {
        const unsigned b = __ffs(overlap) - 1u;
        uniteOfEqualValue(RunOfPixel(curFirstRun, curStarts, b), RunOfPixel(nbrFirstRun, nbrStarts, b));
      }
      if (widened)
      {
        // current run ends at x, neighbor run starts at x+1: that run is the next one after all
        // neighbor starts at or before x. (Binary input: the neighbor's x is background. Multi-label input:
        // it may also hold a run of another value that ends there.)
        for (std::uint32_t diag = cur.Ends() & nbr.StartsAtNext(); diag != 0; diag &= diag - 1u)
        {
          const unsigned b = __ffs(diag) - 1u;
          uniteOfEqualValue(RunOfPixel(curFirstRun, curStarts, b), nbrFirstRun + __popc(nbrStarts & MaskUpTo(b)));
        }
        // neighbor run ends at x-1, current run starts at x: the neighbor run holding x-1 is the
        // last one started before x.
        for (std::uint32_t diag = curStarts & nbr.EndsAtPrevious(); diag != 0; diag &= diag - 1u)
        {
          const unsigned b = __ffs(diag) - 1u;
          uniteOfEqualValue(RunOfPixel(curFirstRun, curStarts, b), nbrFirstRun + __popc(nbrStarts & MaskBelow(b)) - 1u);
        }
      }
    }
  }
}

template <typename TUnite, bool TCovering = false>
__global__ void
MergeRunsKernel(const std::uint32_t * __restrict__ bits, const std::uint32_t * __restrict__ firstRun,
                std::uint32_t * parent, DeviceGeometry g, NeighborRows neighbors, TUnite unite,
                const std::uint32_t * __restrict__ breaks = nullptr, const long long * __restrict__ runClass = nullptr)
{
  MergeRunsPass<TUnite, TCovering>(bits, firstRun, parent, g, neighbors, unite, breaks, runClass);
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
