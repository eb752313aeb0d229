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

// The feature stage of the CPU engine's Analyze(): once every run has its component number, each
// block of rows adds its runs to the ComponentSums of their components (pixel count, bounding
// box, index sums, and on request the shape sums and perimeter intercepts), in parallel; the sums
// of components that a block shares with an earlier block are merged afterwards in block order, so
// the result is the same for any number of threads. The per-run sums are in itkCCACPUFeatures.h.

#include "itkCCACPUEngine.h"
#include "itkCCACPUFeatures.h"
#include "itkCCAParallelFor.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace itk
{
namespace cca
{
namespace cpu
{

RowRuns
CPUEngine::RunsOfAnyRow(const RowBlock & block, std::uint64_t row) const
{
  if (row >= block.firstRow && row < block.endRow)
  {
    return RunsOfRow(block, row);
  }
  return RunsOfRow(m_Blocks[BlockOfRow(row)], row);
}

unsigned
CPUEngine::InterceptNeighbors(const RowBlock & block, std::uint64_t y, std::uint64_t z,
                              InterceptNeighbor neighbors[8]) const
{
  if (m_Dimension < 2)
  {
    return 0;
  }
  const int     zReach = m_Dimension >= 3 ? 1 : 0;
  unsigned      count = 0;
  const RowRuns none{ nullptr, 0, 0 };
  for (int dz = -zReach; dz <= zReach; ++dz)
  {
    for (int dy = -1; dy <= 1; ++dy)
    {
      if (dy == 0 && dz == 0)
      {
        continue;
      }
      // classes: (0,1,0) 1, (0,0,1) 2, (0,1,1) 5 and (1,1,0) 3, (1,0,1) 4, (1,1,1) 6
      const unsigned straightClass = dz == 0 ? 1 : (dy == 0 ? 2 : 5);
      const unsigned diagonalClass = dz == 0 ? 3 : (dy == 0 ? 4 : 6);
      const bool     inside =
        (dy >= 0 || y > 0) && (dy <= 0 || y + 1 < m_Size[1]) && (dz >= 0 || z > 0) && (dz <= 0 || z + 1 < m_Size[2]);
      RowRuns runs = none;
      if (inside)
      {
        const std::uint64_t ny = dy < 0 ? y - 1 : (dy > 0 ? y + 1 : y);
        const std::uint64_t nz = dz < 0 ? z - 1 : (dz > 0 ? z + 1 : z);
        runs = RunsOfAnyRow(block, ny + nz * m_Size[1]);
      }
      neighbors[count++] = InterceptNeighbor{ runs, 0, straightClass, diagonalClass };
    }
  }
  return count;
}

template <bool VShapeSums, bool VPerimeter>
void
CPUEngine::ComputeFeaturesOfBlock(RowBlock & block)
{
  const std::uint64_t         ySize = m_Size[1];
  const std::uint64_t * const componentOfRun = m_Parent.Data();
  const std::uint64_t *       component = componentOfRun + block.firstRun;
  const Run *                 runs = block.runs.Data();
  ComponentSums *             features = m_Features.data();

  std::unordered_map<std::uint64_t, std::size_t> foreignIndex;
  // The runs of a foreign component tend to follow each other: remember the last one looked up.
  std::uint64_t lastForeign = std::numeric_limits<std::uint64_t>::max();
  std::size_t   lastForeignIndex = 0;

  InterceptNeighbor neighbors[8];
  unsigned          numberOfNeighbors = 0;

  std::uint64_t y = block.firstRow % ySize;
  std::uint64_t z = block.firstRow / ySize;
  for (std::uint64_t row = block.firstRow; row < block.endRow; ++row)
  {
    const std::uint64_t begin = m_RowStart[row] - block.firstRun;
    const std::uint64_t end = m_RowStart[row + 1] - block.firstRun;
    RowShape            rowShape{};
    if constexpr (VShapeSums)
    {
      if (begin != end)
      {
        rowShape = MakeRowShape(m_Size, m_Dimension, y, z);
      }
    }
    if constexpr (VPerimeter)
    {
      if (begin != end)
      {
        numberOfNeighbors = InterceptNeighbors(block, y, z, neighbors);
      }
    }
    for (std::uint64_t i = begin; i < end; ++i)
    {
      const std::uint64_t k = component[i];
      ComponentSums *     target;
      if (k >= block.firstComponent)
      {
        target = features + k;
      }
      else
      {
        if (k != lastForeign)
        {
          const auto inserted = foreignIndex.emplace(k, block.foreignFeatures.size());
          if (inserted.second)
          {
            block.foreignFeatures.emplace_back(k, ComponentSums{});
          }
          lastForeign = k;
          lastForeignIndex = inserted.first->second;
        }
        target = &block.foreignFeatures[lastForeignIndex].second;
      }
      AddRun(*target, runs[i], y, z);
      if constexpr (VShapeSums)
      {
        AddShapeSums(*target, runs[i], rowShape);
      }
      if constexpr (VPerimeter)
      {
        AddIntercepts(*target, runs[i], k, neighbors, numberOfNeighbors, componentOfRun);
      }
    }
    if (++y == ySize)
    {
      y = 0;
      ++z;
    }
  }
}

void
CPUEngine::ComputeFeatures()
{
  // Each block clears the rows of its own components (numbered from its firstComponent up to the next block's) before
  // it sums into them: in parallel, and the table's memory kept from one analysis to the next, where a serial refill
  // of every row (224 bytes each) cost a pass of its own at millions of components.
  m_Features.resize(static_cast<std::size_t>(m_NumberOfComponents));

  ParallelFor(m_NumberOfThreads, m_Blocks.size(), [this](std::uint64_t b) {
    RowBlock &          block = m_Blocks[static_cast<std::size_t>(b)];
    const std::uint64_t endComponent =
      b + 1 < m_Blocks.size() ? m_Blocks[static_cast<std::size_t>(b + 1)].firstComponent : m_NumberOfComponents;
    std::fill(m_Features.begin() + static_cast<std::ptrdiff_t>(block.firstComponent),
              m_Features.begin() + static_cast<std::ptrdiff_t>(endComponent),
              ComponentSums{});
    if (m_ComputePerimeter)
    {
      this->ComputeFeaturesOfBlock<true, true>(block);
    }
    else if (m_ComputeShapeSums)
    {
      this->ComputeFeaturesOfBlock<true, false>(block);
    }
    else
    {
      this->ComputeFeaturesOfBlock<false, false>(block);
    }
  });

  for (RowBlock & block : m_Blocks)
  {
    for (const auto & part : block.foreignFeatures)
    {
      MergeFeatures(m_Features[static_cast<std::size_t>(part.first)], part.second);
    }
    std::vector<std::pair<std::uint64_t, ComponentSums>>().swap(block.foreignFeatures);
  }
}

} // namespace cpu
} // namespace cca
} // namespace itk
