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
// Contacts on the host (itkCCAContacts.h): blocks of rows on their own threads, each counting its pixels' touching
// neighbor pairs per pair of labels in a hash table of its own; the tables merged and sorted.
#include "itkCCAContacts.h"

#include "itkCCAParallelFor.h"
#include "itkCCAPixelNeighbors.h"
#include "itkCCAScalarDispatch.h"

#include <algorithm>
#include <atomic>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace itk
{
namespace cca
{
namespace
{
struct PairHash
{
  std::size_t
  operator()(const std::pair<std::uint64_t, std::uint64_t> & key) const
  {
    return std::hash<std::uint64_t>()(key.first * 0x9e3779b97f4a7c15ull ^ key.second);
  }
};

struct PairCounts
{
  std::uint64_t neighborPairs = 0;
  std::uint64_t faces[MaxDimension] = { 0, 0, 0 };
};

using PairTable = std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, PairCounts, PairHash>;
} // namespace

void
ComputeContactsOnHost(const ContactRequest & request, unsigned numberOfThreads, ContactTable & table)
{
  const PixelGrid grid{ static_cast<std::int64_t>(request.size[0]),
                        static_cast<std::int64_t>(request.size[1]),
                        static_cast<std::int64_t>(request.size[2]),
                        request.dimension };
  const std::uint64_t    numRows = request.size[1] * request.size[2];
  const std::uint64_t    numBlocks = std::min<std::uint64_t>(numRows, std::max(1u, numberOfThreads) * 4u);
  std::vector<PairTable> tables(static_cast<std::size_t>(numBlocks));
  std::atomic<bool>      negative{ false };
  DispatchScalarKind(request.labelKind, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral<T>::value)
    {
      const T * labels = static_cast<const T *>(request.labels);
      ParallelFor(numberOfThreads, numBlocks, [&](std::uint64_t b) {
        PairTable & own = tables[static_cast<std::size_t>(b)];
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
            if (IsNegative(a))
            {
              negative = true;
              return;
            }
            ForEachPrecedingNeighbor(grid, x, y, z, request.connectivity.maxNonZero, [&](std::uint64_t q, int axis) {
              const T c = labels[q];
              if (c == a || c == T(0) || IsNegative(c))
              {
                return; // another pixel flags c
              }
              const auto   low = static_cast<std::uint64_t>(std::min(a, c));
              const auto   high = static_cast<std::uint64_t>(std::max(a, c));
              PairCounts & counts = own[{ low, high }];
              ++counts.neighborPairs;
              if (axis >= 0)
              {
                ++counts.faces[axis];
              }
            });
          }
        }
      });
    }
    else
    {
      throw Error(std::string("contacts need integer labels, not ") + ScalarKindName(request.labelKind));
    }
  });
  if (negative)
  {
    throw Error("contacts need non-negative labels (0: background)");
  }
  for (std::size_t b = 1; b < tables.size(); ++b)
  {
    for (const auto & entry : tables[b])
    {
      PairCounts & counts = tables[0][entry.first];
      counts.neighborPairs += entry.second.neighborPairs;
      for (unsigned d = 0; d < MaxDimension; ++d)
      {
        counts.faces[d] += entry.second.faces[d];
      }
    }
    PairTable().swap(tables[b]);
  }
  std::vector<std::pair<std::pair<std::uint64_t, std::uint64_t>, PairCounts>> sorted;
  if (!tables.empty())
  {
    sorted.assign(tables[0].begin(), tables[0].end());
  }
  std::sort(sorted.begin(), sorted.end(), [](const auto & l, const auto & r) { return l.first < r.first; });
  table.Resize(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i)
  {
    table.first[i] = sorted[i].first.first;
    table.second[i] = sorted[i].first.second;
    table.neighborPairs[i] = sorted[i].second.neighborPairs;
    for (unsigned d = 0; d < MaxDimension; ++d)
    {
      table.faces[d][i] = sorted[i].second.faces[d];
    }
  }
}

} // namespace cca
} // namespace itk
