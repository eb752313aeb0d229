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
// The CPU engine's LabelMap lines: every kept run's line, grouped by component (or by its new index
// under post-processing) and in raster order within each group -- a stable counting sort of the runs by
// group, in parallel and without atomics.
//
// Counting: each thread takes one range of groups and counts the runs of its groups, reading every run.
// Placing: a group with many runs (at least 1/(4 threads) of all) is placed block by block, each block
// at its own offset inside the group (its count of the group's runs in earlier blocks); the other groups
// are placed by ranges of groups, each thread reading every run again and writing those of its range.
// Either way, one thread writes each (block, large group) or small group, in raster order. Before, the
// placement was one serial pass, and one component holding most runs (past the percolation threshold)
// kept it serial whatever was done.

#include "itkCCACPUEngine.h"
#include "itkCCAParallelFor.h"

#include <algorithm>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace itk
{
namespace cca
{
namespace cpu
{

void
CPUEngine::ExportLines(const LineLayout & layout, const RunSelection & selection, unsigned numberOfThreads,
                       CudaConnectedComponentAnalysisEngine::Lines & lines)
{
  if (!m_Analyzed)
  {
    throw EngineError("CPU engine: ExportLines() called without a successful Analyze()");
  }
  (void)numberOfThreads; // the engine's own threads count
  const std::uint64_t numberOfRuns = m_RowStart[m_NumberOfRows];
  try
  {
    if (selection.newIndex == nullptr)
    {
      PlaceLines(m_Parent.Data(), m_Features.size(), layout, lines); // m_Parent: each run's component
      return;
    }
    // Each run's new index, looked up once: the passes below read every run's group several times, and
    // the table is read at random.
    Buffer<std::uint64_t> group;
    group.Resize(numberOfRuns);
    const std::uint64_t * component = m_Parent.Data();
    const std::uint64_t * newIndex = selection.newIndex;
    std::uint64_t *       groupOfRun = group.Data();
    ParallelForRange(m_NumberOfThreads, numberOfRuns, 1u << 16, [=](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t id = begin; id < end; ++id)
      {
        groupOfRun[id] = newIndex[component[id]];
      }
    });
    PlaceLines(groupOfRun, static_cast<std::size_t>(selection.numKept), layout, lines);
  }
  catch (const std::bad_alloc &)
  {
    throw EngineOutOfMemory("CPU engine: out of memory while exporting " + std::to_string(numberOfRuns) + " runs");
  }
  catch (const std::length_error &)
  {
    throw EngineOutOfMemory("CPU engine: out of memory while exporting " + std::to_string(numberOfRuns) + " runs");
  }
}

void
CPUEngine::PlaceLines(const std::uint64_t * group, std::size_t numGroups, const LineLayout & layout,
                      CudaConnectedComponentAnalysisEngine::Lines & lines) const
{
  const std::uint64_t numberOfRuns = m_RowStart[m_NumberOfRows];
  const std::size_t   numBlocks = m_Blocks.size();
  // One range of groups per thread, but no more threads than the runs are worth reading again.
  const unsigned ranges =
    static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(m_NumberOfThreads, numberOfRuns >> 16)));
  auto rangeBegin = [numGroups, ranges](std::uint64_t r) {
    return static_cast<std::uint64_t>(numGroups) * r / ranges;
  };

  // Counting, each range's groups by one thread (a removed run's group, UINT64_MAX, is in no range).
  lines.firstLine.assign(numGroups + 1, 0);
  std::uint64_t * counts = lines.firstLine.data() + 1;
  ParallelFor(ranges, ranges, [&](std::uint64_t r) {
    const std::uint64_t lo = rangeBegin(r);
    const std::uint64_t hi = rangeBegin(r + 1);
    for (std::uint64_t id = 0; id < numberOfRuns; ++id)
    {
      const std::uint64_t k = group[id];
      if (k >= lo && k < hi)
      {
        ++counts[k];
      }
    }
  });
  for (std::size_t k = 0; k < numGroups; ++k)
  {
    lines.firstLine[k + 1] += lines.firstLine[k];
  }
  const std::uint64_t numLines = lines.firstLine[numGroups];
  ResizeLines(lines, numGroups, static_cast<std::size_t>(numLines));
  const std::uint64_t * firstLine = lines.firstLine.data();

  // The large groups (at most 4 * ranges of them), and each block's offset inside each.
  const std::uint64_t largeCount = std::max<std::uint64_t>(1, numLines / (4 * std::uint64_t{ ranges }));
  auto                isLarge = [firstLine, largeCount](std::uint64_t k) {
    return firstLine[k + 1] - firstLine[k] >= largeCount;
  };
  std::vector<std::uint64_t> large;
  if (numBlocks > 1)
  {
    for (std::size_t k = 0; k < numGroups; ++k)
    {
      if (isLarge(k))
      {
        large.push_back(k);
      }
    }
  }
  const std::size_t numLarge = large.size();
  auto              slotOf = [&large](std::uint64_t k) {
    return static_cast<std::size_t>(std::lower_bound(large.begin(), large.end(), k) - large.begin());
  };
  auto placedByBlocks = [&](std::uint64_t k) { return numLarge > 0 && isLarge(k); };
  // blockCursor[b * numLarge + j]: where block b's next run of large group j goes.
  std::vector<std::uint64_t> blockCursor(numBlocks * numLarge, 0);
  if (numLarge > 0)
  {
    ParallelFor(m_NumberOfThreads, numBlocks, [&](std::uint64_t b) {
      const RowBlock & block = m_Blocks[static_cast<std::size_t>(b)];
      std::uint64_t *  count = blockCursor.data() + b * numLarge;
      for (std::uint64_t id = m_RowStart[block.firstRow]; id < m_RowStart[block.endRow]; ++id)
      {
        const std::uint64_t k = group[id];
        if (k < numGroups && isLarge(k))
        {
          ++count[slotOf(k)];
        }
      }
    });
    for (std::size_t j = 0; j < numLarge; ++j)
    {
      std::uint64_t offset = firstLine[large[j]];
      for (std::size_t b = 0; b < numBlocks; ++b)
      {
        const std::uint64_t count = blockCursor[b * numLarge + j];
        blockCursor[b * numLarge + j] = offset;
        offset += count;
      }
    }
  }

  // Placing: work items 0 .. numBlocks - 1 (if any group is large) are blocks placing their runs of the
  // large groups; the others are ranges of groups placing the runs of their small groups.
  std::vector<std::uint64_t> next(firstLine, firstLine + numGroups); // the small groups' cursors
  const std::size_t          blockItems = numLarge > 0 ? numBlocks : 0;
  auto                       forEachRunOfBlock = [this](const RowBlock & block, auto && place) {
    for (std::uint64_t row = block.firstRow; row < block.endRow; ++row)
    {
      const RowRuns rowRuns = RunsOfRow(block, row);
      for (std::uint64_t i = 0; i < rowRuns.count; ++i)
      {
        place(row, rowRuns.firstId + i, rowRuns.runs[i]);
      }
    }
  };
  ParallelFor(m_NumberOfThreads, blockItems + ranges, [&](std::uint64_t item) {
    if (item < blockItems)
    {
      std::uint64_t * cursor = blockCursor.data() + item * numLarge;
      forEachRunOfBlock(m_Blocks[static_cast<std::size_t>(item)], [&](std::uint64_t row, std::uint64_t id, const Run & run) {
        const std::uint64_t k = group[id];
        if (k < numGroups && isLarge(k))
        {
          SetLine(layout, row, run.begin, run.end - run.begin, lines, cursor[slotOf(k)]++);
        }
      });
      return;
    }
    const std::uint64_t lo = rangeBegin(item - blockItems);
    const std::uint64_t hi = rangeBegin(item - blockItems + 1);
    for (const RowBlock & block : m_Blocks)
    {
      forEachRunOfBlock(block, [&](std::uint64_t row, std::uint64_t id, const Run & run) {
        const std::uint64_t k = group[id];
        if (k >= lo && k < hi && !placedByBlocks(k))
        {
          SetLine(layout, row, run.begin, run.end - run.begin, lines, next[k]++);
        }
      });
    }
  });
}

} // namespace cpu
} // namespace cca
} // namespace itk
