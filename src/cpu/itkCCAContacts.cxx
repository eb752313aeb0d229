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
// Contacts on the host (itkCCAContacts.h). Blocks of rows on their own threads collect their pixels' touching neighbor
// pairs as records, sorted and added up a chunk at a time, and hand them to buckets by ranges of their smaller label.
// Each bucket is then sorted and added up on a thread of its own, and the buckets, in order, are the table. Sorting
// rather than hashing keeps the memory per pair small and the work parallel however many pairs there are.
#include "itkCCAContacts.h"

#include "itkCCAParallelFor.h"
#include "itkCCAPixelNeighbors.h"
#include "itkCCAScalarDispatch.h"

#include <algorithm>
#include <atomic>
#include <type_traits>
#include <vector>

namespace itk
{
namespace cca
{
namespace
{
/** One pair of labels (low < high) and what was counted for it: neighbor pairs, and face pairs per axis. */
struct PairRecord
{
  std::uint64_t low = 0;
  std::uint64_t high = 0;
  std::uint64_t neighborPairs = 0;
  std::uint64_t faces[MaxDimension] = { 0, 0, 0 };
};

/** Sorts `records` by pair and adds up each pair's records into one. */
void
SortAndAddUp(std::vector<PairRecord> & records)
{
  std::sort(records.begin(), records.end(), [](const PairRecord & l, const PairRecord & r) {
    return l.low < r.low || (l.low == r.low && l.high < r.high);
  });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < records.size(); ++i)
  {
    if (kept != 0 && records[kept - 1].low == records[i].low && records[kept - 1].high == records[i].high)
    {
      PairRecord & into = records[kept - 1];
      into.neighborPairs += records[i].neighborPairs;
      for (unsigned d = 0; d < MaxDimension; ++d)
      {
        into.faces[d] += records[i].faces[d];
      }
    }
    else
    {
      records[kept++] = records[i];
    }
  }
  records.resize(kept);
}

/** The largest label, after checking that none is negative. */
template <typename T>
std::uint64_t
LargestLabel(const T * labels, std::uint64_t numPixels, unsigned numberOfThreads)
{
  std::atomic<bool>          negative{ false };
  std::vector<std::uint64_t> largest(std::max(1u, numberOfThreads), 0);
  std::atomic<unsigned>      nextPiece{ 0 };
  ParallelForRange(numberOfThreads, numPixels, 1u << 16, [&](std::uint64_t begin, std::uint64_t end) {
    T most = T(0);
    for (std::uint64_t p = begin; p < end; ++p)
    {
      most = std::max(most, labels[p]);
      if (IsNegative(labels[p]))
      {
        negative = true;
        return;
      }
    }
    largest[nextPiece++] = static_cast<std::uint64_t>(most); // at most one piece per thread
  });
  if (negative)
  {
    throw Error("contacts need non-negative labels (0: background)");
  }
  return *std::max_element(largest.begin(), largest.end());
}
} // namespace

void
ComputeContactsOnHost(const ContactRequest & request, unsigned numberOfThreads, ContactTable & table)
{
  const PixelGrid     grid{ static_cast<std::int64_t>(request.size[0]),
                        static_cast<std::int64_t>(request.size[1]),
                        static_cast<std::int64_t>(request.size[2]),
                        request.dimension };
  const std::uint64_t numRows = request.size[1] * request.size[2];
  const unsigned      threads = std::max(1u, numberOfThreads);
  const std::uint64_t numBlocks = std::min<std::uint64_t>(numRows, threads * 4u);
  const std::uint64_t numBuckets = threads * 4u;
  // buckets[block][bucket]: the block's pairs whose smaller label lies in the bucket's range.
  std::vector<std::vector<std::vector<PairRecord>>> buckets(
    static_cast<std::size_t>(numBlocks), std::vector<std::vector<PairRecord>>(static_cast<std::size_t>(numBuckets)));
  DispatchScalarKind(request.labelKind, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral<T>::value)
    {
      const T *           labels = static_cast<const T *>(request.labels);
      const std::uint64_t bucketWidth = LargestLabel(labels, request.NumberOfPixels(), threads) / numBuckets + 1;
      ParallelFor(threads, numBlocks, [&](std::uint64_t b) {
        auto &                  own = buckets[static_cast<std::size_t>(b)];
        constexpr std::size_t   chunk = 1u << 15;
        std::vector<PairRecord> pending;
        pending.reserve(chunk + 32);
        auto handOver = [&]() {
          SortAndAddUp(pending);
          for (const PairRecord & record : pending)
          {
            own[static_cast<std::size_t>(record.low / bucketWidth)].push_back(record);
          }
          pending.clear();
        };
        for (std::uint64_t row = numRows * b / numBlocks; row < numRows * (b + 1) / numBlocks; ++row)
        {
          const auto y = static_cast<std::int64_t>(row % request.size[1]);
          const auto z = static_cast<std::int64_t>(row / request.size[1]);
          for (std::int64_t x = 0; x < grid.width; ++x)
          {
            const T a = labels[row * request.size[0] + static_cast<std::uint64_t>(x)];
            if (a == T(0))
            {
              continue;
            }
            ForEachPrecedingNeighbor(grid, x, y, z, request.connectivity.maxNonZero, [&](std::uint64_t q, int axis) {
              const T c = labels[q];
              if (c == a || c == T(0))
              {
                return;
              }
              PairRecord record;
              record.low = static_cast<std::uint64_t>(std::min(a, c));
              record.high = static_cast<std::uint64_t>(std::max(a, c));
              record.neighborPairs = 1;
              if (axis >= 0)
              {
                record.faces[axis] = 1;
              }
              pending.push_back(record);
            });
            if (pending.size() >= chunk)
            {
              handOver();
            }
          }
        }
        handOver();
      });
    }
    else
    {
      throw Error(std::string("contacts need integer labels, not ") + ScalarKindName(request.labelKind));
    }
  });
  // Each bucket's pairs from every block, sorted and added up; the buckets follow one another in label order.
  std::vector<std::vector<PairRecord>> merged(static_cast<std::size_t>(numBuckets));
  ParallelFor(threads, numBuckets, [&](std::uint64_t k) {
    std::vector<PairRecord> & into = merged[static_cast<std::size_t>(k)];
    std::size_t               total = 0;
    for (const auto & block : buckets)
    {
      total += block[static_cast<std::size_t>(k)].size();
    }
    into.reserve(total);
    for (auto & block : buckets)
    {
      auto & part = block[static_cast<std::size_t>(k)];
      into.insert(into.end(), part.begin(), part.end());
      std::vector<PairRecord>().swap(part);
    }
    SortAndAddUp(into);
  });
  std::vector<std::size_t> firstRow(merged.size() + 1, 0);
  for (std::size_t k = 0; k < merged.size(); ++k)
  {
    firstRow[k + 1] = firstRow[k] + merged[k].size();
  }
  table.Resize(firstRow.back());
  ParallelFor(threads, numBuckets, [&](std::uint64_t k) {
    std::size_t row = firstRow[static_cast<std::size_t>(k)];
    for (const PairRecord & record : merged[static_cast<std::size_t>(k)])
    {
      table.first[row] = record.low;
      table.second[row] = record.high;
      table.neighborPairs[row] = record.neighborPairs;
      for (unsigned d = 0; d < MaxDimension; ++d)
      {
        table.faces[d][row] = record.faces[d];
      }
      ++row;
    }
  });
}

} // namespace cca
} // namespace itk
