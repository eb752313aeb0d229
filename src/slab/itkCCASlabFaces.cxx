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
// The merge of a slabbed analysis (itkCCASlabEngine.h): the components touching across each face between two
// slabs united, the merged ones numbered in raster order of their first pixel, the slabs' sums moved to the
// image's indices and added, and what the cut falsified undone, all from the two planes of labels at each face.
#include "itkCCASlabEngine.h"
#include "itkCCAPairsAcross.h"
#include "itkCCAParallelFor.h"

#include <array>
#include <atomic>
#include <memory>
#include <utility>

namespace itk
{
namespace cca
{
namespace
{
/** The slot of Σ(a b) among Σxx, Σyy, Σzz, Σxy, Σxz, Σyz. */
constexpr unsigned
ProductSlot(unsigned a, unsigned b)
{
  return a == b ? a : (a + b == 1 ? 3 : (a + b == 2 ? 4 : 5));
}

/** Union-find over global component ids, shared by threads, the smallest id of a set its root: the set's first
 * pixel in raster order, since ids follow the slabs and, in each, the raster order of first pixels. Every parent
 * is below its child: links (a root under a lower root) and path halving are compare-and-swaps that keep it so
 * whatever the threads' interleaving, and the sets, hence the numbering, do not depend on that interleaving. */
class SmallestRootForest
{
public:
  SmallestRootForest(std::uint64_t n, unsigned numberOfThreads)
    : m_Parent(new std::atomic<std::uint64_t>[static_cast<std::size_t>(n)])
  {
    ParallelForRange(numberOfThreads, n, std::uint64_t{ 1 } << 16, [this](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t id = begin; id < end; ++id)
      {
        m_Parent[id].store(id, std::memory_order_relaxed);
      }
    });
  }
  std::uint64_t
  Find(std::uint64_t id)
  {
    for (;;)
    {
      std::uint64_t parent = m_Parent[id].load(std::memory_order_relaxed);
      if (parent == id)
      {
        return id;
      }
      const std::uint64_t grandparent = m_Parent[parent].load(std::memory_order_relaxed);
      if (grandparent == parent)
      {
        return parent;
      }
      // Path halving; where another thread moved the parent meanwhile, its (lower) one stands.
      m_Parent[id].compare_exchange_weak(parent, grandparent, std::memory_order_relaxed);
      id = grandparent;
    }
  }
  void
  Unite(std::uint64_t a, std::uint64_t b)
  {
    for (;;)
    {
      a = Find(a);
      b = Find(b);
      if (a == b)
      {
        return;
      }
      if (b < a)
      {
        std::swap(a, b);
      }
      // The higher root under the lower one, if it is still a root; else again from the new roots.
      std::uint64_t expected = b;
      if (m_Parent[b].compare_exchange_strong(expected, a, std::memory_order_acq_rel))
      {
        return;
      }
    }
  }

private:
  std::unique_ptr<std::atomic<std::uint64_t>[]> m_Parent;
};

/** The last pairs a thread has united, by a hash of the pair: a face repeats most of its pairs (a component's
 * pixels across from one other component's), which need no second union. */
class RecentPairs
{
public:
  /** Whether (a, b) was among the recent pairs; it is now. */
  bool
  Seen(std::uint64_t a, std::uint64_t b)
  {
    const std::size_t slot =
      static_cast<std::size_t>(((a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full)) >> 55);
    if (m_Pairs[slot][0] == a && m_Pairs[slot][1] == b)
    {
      return true;
    }
    m_Pairs[slot] = { { a, b } };
    return false;
  }

private:
  static constexpr std::size_t                    Slots = 512; // the hash's top 9 bits
  std::array<std::array<std::uint64_t, 2>, Slots> m_Pairs = FilledWithNoPair();
  static std::array<std::array<std::uint64_t, 2>, Slots>
  FilledWithNoPair()
  {
    std::array<std::array<std::uint64_t, 2>, Slots> pairs;
    pairs.fill({ { UINT64_MAX, UINT64_MAX } });
    return pairs;
  }
};

PlaneShape
ShapeOfPlane(const SlabFaces & faces)
{
  return { faces.size[0], faces.plan.axis == 2 ? faces.size[1] : 1 };
}
} // namespace

void
ShiftSums(ComponentSums & sums, unsigned axis, std::uint64_t offset, bool shapeSums)
{
  // Modulo 2^64 like the engines' own sums, so that a wrapped sum stays the unsliced analysis's.
  const std::uint64_t n = sums.numberOfPixels;
  if (shapeSums)
  {
    for (unsigned b = 0; b < MaxDimension; ++b)
    {
      if (b != axis)
      {
        sums.indexProductSum[ProductSlot(axis, b)] += offset * sums.indexSum[b];
      }
    }
    sums.indexProductSum[ProductSlot(axis, axis)] += 2 * offset * sums.indexSum[axis] + n * offset * offset;
  }
  sums.indexSum[axis] += n * offset;
  sums.boundingBoxMin[axis] += offset;
  sums.boundingBoxMax[axis] += offset;
}

std::uint64_t
SlabFaces::Merge(std::vector<std::uint64_t> & mergedOf, unsigned numberOfThreads) const
{
  const std::uint64_t numIds = firstComponent.back();
  SmallestRootForest  forest(numIds, numberOfThreads);
  const PlaneShape    shape = ShapeOfPlane(*this);
  // Multi-label input: only pieces of one class (value) join.
  const bool classes = !classOf.empty();
  // The faces in bands of rows, on all threads: a band's pairs are many (one to nine per pixel), their distinct
  // pairs few.
  const std::uint64_t numFaces = plan.NumberOfSlabs() > 1 ? plan.NumberOfSlabs() - 1 : 0;
  const std::uint64_t rowsPerBand = std::max<std::uint64_t>(1, (std::uint64_t{ 1 } << 16) / shape.width);
  const std::uint64_t bandsPerFace = (shape.height + rowsPerBand - 1) / rowsPerBand;
  ParallelFor(numberOfThreads, numFaces * bandsPerFace, [&](std::uint64_t item) {
    const std::size_t     s = static_cast<std::size_t>(item / bandsPerFace);
    const std::uint64_t   firstRow = item % bandsPerFace * rowsPerBand;
    const std::uint32_t * below = lastPlaneLabels[s].data();
    const std::uint32_t * above = firstPlaneLabels[s + 1].data();
    const std::uint64_t   belowBase = firstComponent[s] - 1;
    const std::uint64_t   aboveBase = firstComponent[s + 1] - 1;
    RecentPairs           recent;
    std::uint32_t         lastLower = 0; // the last pair of labels visited (none yet: no pair has a 0)
    std::uint32_t         lastUpper = 0;
    ForEachJoinedPairAcross(
      shape,
      connectivity,
      [&](std::uint64_t i, std::uint64_t j) {
        // One branch, mostly taken one way, for the pixel pairs that repeat the last one or touch the background.
        const std::uint32_t lower = below[i];
        const std::uint32_t upper = above[j];
        if (((lower == lastLower) & (upper == lastUpper)) | (lower == 0) | (upper == 0))
        {
          return;
        }
        lastLower = lower;
        lastUpper = upper;
        const std::uint64_t a = belowBase + lower;
        const std::uint64_t b = aboveBase + upper;
        if ((!classes || classOf[a] == classOf[b]) && !recent.Seen(a, b))
        {
          forest.Unite(a, b);
        }
      },
      firstRow,
      firstRow + rowsPerBand);
  });
  // Periodic boundaries: the last plane along a wrapped axis faces the first one.
  for (const WrappedFace & face : wrapped)
  {
    RecentPairs recent;
    ForEachJoinedPairAcross(face.shape, connectivity, [&](std::uint64_t i, std::uint64_t j) {
      const std::uint64_t a = face.last[i];
      const std::uint64_t b = face.first[j];
      if (a != 0 && b != 0 && (classOf.empty() || classOf[a - 1] == classOf[b - 1]) && !recent.Seen(a, b))
      {
        forest.Unite(a - 1, b - 1);
      }
    });
  }
  mergedOf.resize(static_cast<std::size_t>(numIds));
  std::uint64_t count = 0;
  for (std::uint64_t id = 0; id < numIds; ++id)
  {
    const std::uint64_t root = forest.Find(id);
    mergedOf[id] = root == id ? count++ : mergedOf[root]; // the root comes first: numbered already
  }
  return count;
}

void
SlabFaces::PrepareWrappedFaces(const Request & request)
{
  wrapped.clear();
  for (unsigned a = 0; a < request.dimension; ++a)
  {
    if (!request.connectivity.IsPeriodic(a))
    {
      continue;
    }
    const unsigned u = a == 0 ? 1 : 0; // the plane's x and y: the other two axes, lower first
    const unsigned v = a == 2 ? 1 : 2;
    WrappedFace    face;
    face.axis = a;
    face.shape.width = size[u];
    face.shape.height = size[v];
    face.shape.wrapX = request.connectivity.IsPeriodic(u);
    face.shape.wrapY = request.connectivity.IsPeriodic(v);
    face.first.assign(static_cast<std::size_t>(size[u] * size[v]), 0);
    face.last.assign(face.first.size(), 0);
    wrapped.push_back(std::move(face));
  }
}

void
SlabFaces::TakeWrappedFaces(std::size_t s, const std::vector<std::uint32_t> & slabLabels)
{
  const std::uint64_t firstPlane = plan.firstPlane[s];
  const std::uint64_t endPlane = plan.firstPlane[s + 1];
  const std::uint64_t global = firstComponent[s]; // + label - 1, + 1
  for (WrappedFace & face : wrapped)
  {
    const unsigned a = face.axis;
    const unsigned u = a == 0 ? 1 : 0;
    const unsigned v = a == 2 ? 1 : 2;
    for (int side = 0; side < 2; ++side)
    {
      std::array<std::uint64_t, MaxDimension> index{ { 0, 0, 0 } };
      index[a] = side == 0 ? 0 : size[a] - 1;
      std::vector<std::uint64_t> & plane = side == 0 ? face.first : face.last;
      for (index[v] = 0; index[v] < size[v]; ++index[v])
      {
        for (index[u] = 0; index[u] < size[u]; ++index[u])
        {
          const std::uint64_t slow = index[plan.axis];
          if (slow < firstPlane || slow >= endPlane)
          {
            continue;
          }
          const std::uint64_t local = index[0] + size[0] * (index[1] + size[1] * index[2]) - firstPlane * plan.planePixels;
          const std::uint32_t label = slabLabels[static_cast<std::size_t>(local)];
          if (label != 0)
          {
            plane[static_cast<std::size_t>(index[u] + size[u] * index[v])] = global + label;
          }
        }
      }
    }
  }
}

void
SlabFaces::CorrectCutSums(const std::vector<std::uint64_t> & mergedOf, bool perimeter,
                          std::vector<ComponentSums> & sums) const
{
  const PlaneShape    shape = ShapeOfPlane(*this);
  const std::uint64_t planes = size[plan.axis];
  const std::size_t   numSlabs = plan.NumberOfSlabs();
  // Border: the slab analysis took each cut plane as the image's first or last, so its pixels as on the border
  // and each with a border face on the cut side.
  for (std::size_t s = 0; s < numSlabs; ++s)
  {
    const std::uint64_t base = firstComponent[s] - 1;
    const std::uint64_t first = plan.firstPlane[s];
    const std::uint64_t last = plan.firstPlane[s + 1] - 1;
    auto                correct = [&](const std::vector<std::uint32_t> & labels, std::uint64_t plane, bool pixels) {
      const bool planeOnBorder = plane == 0 || plane + 1 == planes;
      for (std::uint64_t y = 0; y < shape.height; ++y)
      {
        const bool rowOnBorder = planeOnBorder || (plan.axis == 2 && (y == 0 || y + 1 == shape.height));
        for (std::uint64_t x = 0; x < shape.width; ++x)
        {
          const std::uint32_t label = labels[y * shape.width + x];
          if (label == 0)
          {
            continue;
          }
          ComponentSums & piece = sums[base + label];
          --piece.borderFaces[plan.axis];
          if (pixels && !rowOnBorder && x != 0 && x + 1 != shape.width)
          {
            --piece.numberOfPixelsOnBorder;
          }
        }
      }
    };
    if (s > 0)
    {
      correct(firstPlaneLabels[s], first, true);
    }
    if (s + 1 < numSlabs)
    {
      // A plane that is both (a slab one plane thick) counted its pixels on the border once.
      correct(lastPlaneLabels[s], last, !(s > 0 && first == last));
    }
  }
  if (!perimeter)
  {
    return;
  }
  // Intercepts: a pixel's neighbor across the cut was outside its slab, so not in its component; where both end
  // up in one component, that (pixel, offset) pair was no intercept, for the pixel on either side.
  for (std::size_t s = 0; s + 1 < numSlabs; ++s)
  {
    const std::uint32_t * below = lastPlaneLabels[s].data();
    const std::uint32_t * above = firstPlaneLabels[s + 1].data();
    const std::uint64_t   belowBase = firstComponent[s] - 1;
    const std::uint64_t   aboveBase = firstComponent[s + 1] - 1;
    ForEachPairAcross(shape, 1, [&](std::uint64_t i, std::uint64_t j, int dx, int dy) {
      if (below[i] == 0 || above[j] == 0)
      {
        return;
      }
      const std::uint64_t a = belowBase + below[i];
      const std::uint64_t b = aboveBase + above[j];
      if (mergedOf[a] != mergedOf[b])
      {
        return;
      }
      // The direction class of (dx, dy, 1) in 3-D, of (dx, 1) in 2-D (itkCCATypes.h: ComponentSums::intercepts).
      const bool     alongX = dx != 0;
      const bool     alongY = dy != 0;
      const unsigned k = plan.axis == 2 ? (alongX ? (alongY ? 6 : 4) : (alongY ? 5 : 2)) : (alongX ? 3 : 1);
      --sums[a].intercepts[k];
      --sums[b].intercepts[k];
    });
  }
}

void
SlabFaces::CorrectSplitContacts(std::size_t slab, const std::vector<std::uint32_t> & labels, std::uint64_t firstRow,
                                const std::vector<std::uint8_t> & split, const std::vector<std::uint64_t> & mergedOf,
                                std::vector<ComponentSums> & sums) const
{
  const std::uint64_t width = size[0];
  const std::uint64_t height = size[1]; // a row is y + z * height (2-D: z = 0)
  const std::uint64_t numRows = labels.size() / width;
  const std::uint64_t base = firstComponent[slab] - 1; // 1-based labels (modulo 2^64 for the first slab)
  const int           reachZ = plan.axis == 2 ? 1 : 0;
  for (std::uint64_t r = 0; r < numRows; ++r)
  {
    const std::uint64_t row = firstRow + r;
    const std::int64_t  y = static_cast<std::int64_t>(row % height);
    const std::int64_t  z = static_cast<std::int64_t>(row / height);
    for (std::uint64_t x = 0; x < width; ++x)
    {
      const std::uint32_t a = labels[r * width + x];
      if (a == 0 || !split[a - 1])
      {
        continue;
      }
      // The neighbors the connectivity does not join (face: the edge and corner neighbors; face and edge: the
      // corner neighbors): where they belong to another piece of the pixel's merged component, the slab counted them
      // as intercepts.
      for (int dz = -reachZ; dz <= reachZ; ++dz)
      {
        for (int dy = -1; dy <= 1; ++dy)
        {
          for (int dx = -1; dx <= 1; ++dx)
          {
            if (connectivity.Joins(static_cast<unsigned>((dx != 0) + (dy != 0) + (dz != 0))))
            {
              continue;
            }
            const std::int64_t nx = static_cast<std::int64_t>(x) + dx;
            const std::int64_t ny = y + dy;
            const std::int64_t nz = z + dz;
            if (nx < 0 || nx >= static_cast<std::int64_t>(width) || ny < 0 || ny >= static_cast<std::int64_t>(height) ||
                nz < 0)
            {
              continue;
            }
            const std::uint64_t neighborRow = static_cast<std::uint64_t>(nz) * height + static_cast<std::uint64_t>(ny);
            if (neighborRow < firstRow || neighborRow >= firstRow + numRows)
            {
              continue; // outside the rows: no split piece there
            }
            const std::uint32_t b = labels[(neighborRow - firstRow) * width + static_cast<std::uint64_t>(nx)];
            if (b == 0 || b == a || mergedOf[base + b] != mergedOf[base + a])
            {
              continue;
            }
            const bool     alongX = dx != 0;
            const bool     alongY = dy != 0;
            const bool     alongZ = dz != 0;
            const unsigned k = alongZ ? (alongX ? (alongY ? 6 : 4) : 5) : 3;
            --sums[base + a].intercepts[k];
          }
        }
      }
    }
  }
}

} // namespace cca
} // namespace itk
