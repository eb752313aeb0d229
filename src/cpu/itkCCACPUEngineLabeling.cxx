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

// The labeling stages of the CPU engine's Analyze(), in the order it runs them: each block of rows
// is scanned for runs whose rows are united within the block (in parallel), the runs are numbered
// in raster order across blocks, the rows at block boundaries are united (serially), and each run's
// union-find parent is replaced by its component number. What is left -- the runs of each row and
// the component of each run -- is what the feature stage (itkCCACPUEngineFeatures.cxx) and the
// label writing (itkCCACPUEngine.cxx) read. The per-row work is in itkCCACPURowScan.h.

#include "itkCCACPUEngine.h"
#include "itkCCACPURowScan.h"
#include "itkCCAParallelFor.h"
#include "itkCCAScalarDispatch.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace itk
{
namespace cca
{
namespace cpu
{

template <typename TScanRow, typename TUniteRows>
void
CPUEngine::ScanBlock(RowBlock & block, const TScanRow & scanRow, const TUniteRows & uniteRows)
{
  const std::uint64_t rowLength = m_Size[0];
  const std::uint64_t ySize = m_Size[1];
  const std::uint64_t slotsPerRow = RunSlotsPerRow(rowLength, m_MultiLabel);
  block.runs.SetSize(0);
  block.localParent.SetSize(0);
  block.foreignFeatures.clear();

  std::uint64_t neighbors[4];
  std::uint64_t widenings[4];
  std::uint64_t y = block.firstRow % ySize;
  for (std::uint64_t row = block.firstRow; row < block.endRow; ++row, y = (y + 1 == ySize) ? 0 : y + 1)
  {
    const std::uint64_t first = block.runs.Size();
    m_RowStart[row] = first;
    block.runs.Reserve(first + slotsPerRow);
    const std::uint64_t count = scanRow(row * rowLength, rowLength, block.runs.Data() + first);
    if (count == 0)
    {
      continue;
    }
    block.runs.SetSize(first + count);
    block.localParent.Reserve(first + count);
    block.localParent.SetSize(first + count);
    std::uint64_t * parent = block.localParent.Data();
    for (std::uint64_t i = first; i < first + count; ++i)
    {
      parent[i] = i;
    }

    const RowRuns  current{ block.runs.Data() + first, first, count };
    const unsigned numberOfNeighbors = PrecedingNeighborRows(
      row, y, ySize, m_NeighborOffsets, m_NumberOfNeighborOffsets, neighbors, widenings, m_BatchExtent, m_Dimension);
    for (unsigned i = 0; i < numberOfNeighbors; ++i)
    {
      const std::uint64_t neighborRow = neighbors[i];
      if (neighborRow >= block.firstRow)
      {
        // neighborRow < row, so its end is the start of the next row, already recorded
        const std::uint64_t neighborFirst = m_RowStart[neighborRow];
        const RowRuns       neighbor{ block.runs.Data() + neighborFirst,
                                neighborFirst,
                                m_RowStart[neighborRow + 1] - neighborFirst };
        uniteRows(current, row, neighbor, neighborRow, widenings[i], parent);
      }
    }
  }
}

template <typename TFunction>
void
CPUEngine::DispatchRowPass(const Request & request, const TFunction & function) const
{
  DispatchScalarKind(request.inputKind, [&](auto inputTag) {
    using InputPixelType = decltype(inputTag);
    const auto *        input = static_cast<const InputPixelType *>(request.input);
    const std::uint64_t rowLength = m_Size[0];
    const bool          multiLabel = m_MultiLabel;
    // Rows unite by overlap (widened by `widening` where the connectivity joins x-neighbors), or, with multi-label
    // input, where their values are equal as well.
    auto uniteRows = [input, rowLength, multiLabel](const RowRuns & current, std::uint64_t row,
                                                    const RowRuns & neighbor, std::uint64_t neighborRow,
                                                    std::uint64_t widening, std::uint64_t * parent) {
      if (multiLabel)
      {
        UniteRowsOfEqualValue(
          current, input + row * rowLength, neighbor, input + neighborRow * rowLength, widening, parent);
      }
      else
      {
        UniteRows(current, neighbor, widening, parent);
      }
    };
    if (request.mask == nullptr)
    {
      function(input, static_cast<const NoMask *>(nullptr), uniteRows);
    }
    else
    {
      DispatchScalarKind(request.maskKind, [&](auto maskTag) {
        using MaskPixelType = decltype(maskTag);
        function(input, static_cast<const MaskPixelType *>(request.mask), uniteRows);
      });
    }
  });
}

void
CPUEngine::FindAndUniteRunsWithinBlocks(const Request & request)
{
  const std::uint64_t pixels = m_NumberOfRows * m_Size[0]; // what the input and mask hold
  DispatchRowPass(request, [&](const auto * input, const auto * mask, const auto & uniteRows) {
    ParallelFor(m_NumberOfThreads, m_Blocks.size(), [&](std::uint64_t b) {
      RowBlock & block = m_Blocks[static_cast<std::size_t>(b)];
      if (m_MultiLabel)
      {
        this->ScanBlock(
          block,
          [input, mask](std::uint64_t offset, std::uint64_t length, Run * runs) {
            return ScanRowMultiLabel(input + offset, mask ? mask + offset : mask, length, runs);
          },
          uniteRows);
      }
      else
      {
        this->ScanBlock(
          block,
          [input, mask, pixels](std::uint64_t offset, std::uint64_t length, Run * runs) {
            return ScanRow(input + offset, mask ? mask + offset : mask, length, pixels - offset, runs);
          },
          uniteRows);
      }
    });
  });
}

void
CPUEngine::NumberRunsGlobally()
{
  std::uint64_t numberOfRuns = 0;
  for (RowBlock & block : m_Blocks)
  {
    block.firstRun = numberOfRuns;
    numberOfRuns += block.runs.Size();
  }
  m_RowStart[m_NumberOfRows] = numberOfRuns;
  m_Parent.Resize(numberOfRuns);

  ParallelFor(m_NumberOfThreads, m_Blocks.size(), [this](std::uint64_t b) {
    RowBlock &          block = m_Blocks[static_cast<std::size_t>(b)];
    const std::uint64_t offset = block.firstRun;
    for (std::uint64_t row = block.firstRow; row < block.endRow; ++row)
    {
      m_RowStart[row] += offset;
    }
    const std::uint64_t * local = block.localParent.Data();
    std::uint64_t *       global = m_Parent.Data() + offset;
    for (std::uint64_t i = 0; i < block.runs.Size(); ++i)
    {
      global[i] = local[i] + offset;
    }
    block.localParent.Release(); // the global parents replace them; keep the peak memory down
  });
}

void
CPUEngine::UniteAcrossBlocks(const Request & request)
{
  const std::uint64_t ySize = m_Size[1];
  DispatchRowPass(request, [&](const auto *, const auto *, const auto & uniteRows) {
    std::uint64_t neighbors[4];
    std::uint64_t widenings[4];
    for (std::size_t b = 1; b < m_Blocks.size(); ++b)
    {
      const RowBlock &    block = m_Blocks[b];
      const std::uint64_t endRow = std::min(block.endRow, block.firstRow + ySize + 1);
      for (std::uint64_t row = block.firstRow; row < endRow; ++row)
      {
        const RowRuns current = RunsOfRow(block, row);
        if (current.count == 0)
        {
          continue;
        }
        const unsigned numberOfNeighbors = PrecedingNeighborRows(row, row % ySize, ySize, m_NeighborOffsets,
                                                                 m_NumberOfNeighborOffsets, neighbors, widenings,
                                                                 m_BatchExtent, m_Dimension);
        for (unsigned i = 0; i < numberOfNeighbors; ++i)
        {
          const std::uint64_t neighborRow = neighbors[i];
          if (neighborRow < block.firstRow)
          {
            uniteRows(current, row, RunsOfRow(m_Blocks[BlockOfRow(neighborRow)], neighborRow), neighborRow,
                      widenings[i], m_Parent.Data());
          }
        }
      }
    }
  });
}

void
CPUEngine::RecordClassValues(const Request & request)
{
  DispatchScalarKind(request.inputKind, [&](auto inputTag) {
    using InputPixelType = decltype(inputTag);
    const auto *          input = static_cast<const InputPixelType *>(request.input);
    const std::uint64_t * component = m_Parent.Data();
    // A block owns the components whose first run it holds: it alone writes their class.
    ParallelFor(m_NumberOfThreads, m_Blocks.size(), [&](std::uint64_t b) {
      const RowBlock & block = m_Blocks[static_cast<std::size_t>(b)];
      for (std::uint64_t row = block.firstRow; row < block.endRow; ++row)
      {
        const RowRuns runs = RunsOfRow(block, row);
        for (std::uint64_t i = 0; i < runs.count; ++i)
        {
          const std::uint64_t k = component[runs.firstId + i];
          if (k >= block.firstComponent)
          {
            m_Features[static_cast<std::size_t>(k)].classValue =
              static_cast<std::int64_t>(input[row * m_Size[0] + runs.runs[i].begin]);
          }
        }
      }
    });
  });
}

void
CPUEngine::NumberComponents()
{
  // In parallel by blocks, in three passes that each write only their own block's parents. A run's parent precedes
  // it, in its block or an earlier one; numbers are marked by their top bit, so that a parent that still points into
  // an earlier block (pending) can be told from a number.
  std::uint64_t * parent = m_Parent.Data();
  if (m_Blocks.size() == 1)
  {
    // One block (a small image): one pass, in which a run's parent is numbered by the time the run is reached.
    std::uint64_t numberOfComponents = 0;
    for (std::uint64_t i = 0; i < m_Blocks[0].runs.Size(); ++i)
    {
      parent[i] = (parent[i] == i) ? numberOfComponents++ : parent[parent[i]];
    }
    m_Blocks[0].firstComponent = 0;
    m_NumberOfComponents = numberOfComponents;
    return;
  }
  constexpr std::uint64_t    numbered = std::uint64_t{ 1 } << 63;
  std::vector<std::uint64_t> roots(m_Blocks.size());
  ParallelFor(m_NumberOfThreads, m_Blocks.size(), [&](std::uint64_t b) {
    const RowBlock &    block = m_Blocks[static_cast<std::size_t>(b)];
    const std::uint64_t endRun = block.firstRun + block.runs.Size();
    std::uint64_t       count = 0;
    for (std::uint64_t i = block.firstRun; i < endRun; ++i)
    {
      count += parent[i] == i ? 1 : 0;
    }
    roots[static_cast<std::size_t>(b)] = count;
  });
  std::uint64_t numberOfComponents = 0;
  for (std::size_t b = 0; b < m_Blocks.size(); ++b)
  {
    m_Blocks[b].firstComponent = numberOfComponents;
    numberOfComponents += roots[b];
  }
  m_NumberOfComponents = numberOfComponents;

  // 1. Roots get their numbers in run order; a run whose parent lies in its block takes what the parent holds by
  //    then (a number, or the parent's own pointer into an earlier block); the others keep their pointer.
  ParallelFor(m_NumberOfThreads, m_Blocks.size(), [&](std::uint64_t b) {
    const RowBlock &    block = m_Blocks[static_cast<std::size_t>(b)];
    const std::uint64_t endRun = block.firstRun + block.runs.Size();
    std::uint64_t       next = block.firstComponent;
    for (std::uint64_t i = block.firstRun; i < endRun; ++i)
    {
      const std::uint64_t p = parent[i];
      parent[i] = p == i ? (next++ | numbered) : p >= block.firstRun ? parent[p] : p;
    }
  });

  // 2. Each block's pending pointers, resolved by reads only: a pointer leads to an earlier block's run, numbered or
  //    pending in its turn, so the walk ends. A block's pending runs share few pointers (one per tree that reaches
  //    back), each looked up once.
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> resolved(m_Blocks.size());
  ParallelFor(m_NumberOfThreads, m_Blocks.size(), [&](std::uint64_t b) {
    const RowBlock &    block = m_Blocks[static_cast<std::size_t>(b)];
    const std::uint64_t endRun = block.firstRun + block.runs.Size();
    auto &              pairs = resolved[static_cast<std::size_t>(b)];
    std::uint64_t       last = numbered;
    for (std::uint64_t i = block.firstRun; i < endRun; ++i)
    {
      const std::uint64_t p = parent[i];
      if ((p & numbered) != 0 || p == last)
      {
        continue;
      }
      last = p;
      std::uint64_t x = p;
      while ((parent[x] & numbered) == 0)
      {
        x = parent[x];
      }
      pairs.emplace_back(p, parent[x]);
    }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  });

  // 3. The numbers written, unmarked.
  ParallelFor(m_NumberOfThreads, m_Blocks.size(), [&](std::uint64_t b) {
    const RowBlock &    block = m_Blocks[static_cast<std::size_t>(b)];
    const std::uint64_t endRun = block.firstRun + block.runs.Size();
    const auto &        pairs = resolved[static_cast<std::size_t>(b)];
    for (std::uint64_t i = block.firstRun; i < endRun; ++i)
    {
      std::uint64_t p = parent[i];
      if ((p & numbered) == 0)
      {
        const auto it = std::lower_bound(
          pairs.begin(), pairs.end(), p, [](const auto & pair, std::uint64_t key) { return pair.first < key; });
        p = it->second;
      }
      parent[i] = p & ~numbered;
    }
  });
}

} // namespace cpu
} // namespace cca
} // namespace itk
