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
// group, by blocks of rows in parallel, without atomics.
//
// A block owns the components whose first run it holds (as in the feature pass): it counts and places
// its own runs of them from the group's first line on, through counters and cursors no other block
// touches (each group is one component's). Its runs of components that began in an earlier block
// ("foreign" runs: components crossing block boundaries, above all one that spans the image past the
// percolation threshold) are counted per group in a small per-block table; one serial pass over those
// tables, in block order, gives each (block, foreign group) its offset after the runs of the earlier blocks.
// Before, the placement was one serial pass over all runs.
#include "itkCCACPUEngine.h"
#include "itkCCAParallelFor.h"

#include <algorithm>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace itk
{
namespace cca
{
namespace cpu
{

template <typename TGroupOf>
void
CPUEngine::PlaceLines(const TGroupOf & groupOf, std::size_t numGroups, const LineLayout & layout, Lines & lines) const
{
  const std::uint64_t * component = m_Parent.Data();
  const std::size_t     numBlocks = m_Blocks.size();
  // Per block, its foreign groups: their count of runs in the block, then where the block's next one goes.
  std::vector<std::unordered_map<std::uint64_t, std::uint64_t>> foreign(numBlocks);

  // Counting: the owned groups' runs straight into firstLine[k + 1], the foreign ones into the table.
  lines.firstLine.assign(numGroups + 1, 0);
  std::uint64_t * counts = lines.firstLine.data() + 1;
  ParallelFor(m_NumberOfThreads, numBlocks, [&](std::uint64_t b) {
    const RowBlock & block = m_Blocks[static_cast<std::size_t>(b)];
    auto &           table = foreign[static_cast<std::size_t>(b)];
    std::uint64_t    lastGroup = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t *  lastCount = nullptr;
    for (std::uint64_t id = block.firstRun; id < block.firstRun + block.runs.Size(); ++id)
    {
      const std::uint64_t k = groupOf(id);
      if (k >= numGroups)
      {
        continue; // removed by the post-processing
      }
      if (component[id] >= block.firstComponent)
      {
        ++counts[k];
      }
      else
      {
        if (k != lastGroup)
        {
          lastCount = &table[k];
          lastGroup = k;
        }
        ++*lastCount;
      }
    }
  });
  // The foreign counts, in block order: each (block, group) gets its offset inside the group, after the
  // owner's runs and those of the blocks in between.
  for (auto & table : foreign)
  {
    for (auto & entry : table)
    {
      const std::uint64_t count = entry.second;
      entry.second = counts[entry.first];
      counts[entry.first] += count;
    }
  }
  for (std::size_t k = 0; k < numGroups; ++k)
  {
    lines.firstLine[k + 1] += lines.firstLine[k];
  }
  ResizeLines(lines, numGroups, static_cast<std::size_t>(lines.firstLine[numGroups]));
  const std::uint64_t * firstLine = lines.firstLine.data();
  Buffer<std::uint64_t> next; // the owned groups' cursors
  next.Resize(numGroups);
  std::uint64_t * cursorOf = next.Data();
  ParallelForRange(m_NumberOfThreads, numGroups, 1u << 16, [=](std::uint64_t begin, std::uint64_t end) {
    std::copy(firstLine + begin, firstLine + end, cursorOf + begin);
  });

  // Placing, block by block, each run at its group's cursor in this block.
  ParallelFor(m_NumberOfThreads, numBlocks, [&](std::uint64_t b) {
    const RowBlock & block = m_Blocks[static_cast<std::size_t>(b)];
    auto &           table = foreign[static_cast<std::size_t>(b)];
    for (auto & entry : table)
    {
      entry.second += firstLine[entry.first];
    }
    std::uint64_t   lastGroup = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t * lastCursor = nullptr;
    for (std::uint64_t row = block.firstRow; row < block.endRow; ++row)
    {
      const RowRuns rowRuns = RunsOfRow(block, row);
      for (std::uint64_t i = 0; i < rowRuns.count; ++i)
      {
        const std::uint64_t id = rowRuns.firstId + i;
        const std::uint64_t k = groupOf(id);
        if (k >= numGroups)
        {
          continue;
        }
        std::uint64_t * cursor = cursorOf + k;
        if (component[id] < block.firstComponent)
        {
          if (k != lastGroup)
          {
            lastCursor = &table.find(k)->second;
            lastGroup = k;
          }
          cursor = lastCursor;
        }
        const Run & run = rowRuns.runs[i];
        SetLine(layout, row, run.begin, run.end - run.begin, lines, (*cursor)++);
      }
    }
  });
}

void
CPUEngine::PlaceLinesByComponent(const LineLayout & layout, Lines & lines) const
{
  const std::uint64_t * component = m_Parent.Data(); // each run's component
  PlaceLines([component](std::uint64_t id) { return component[id]; }, m_Features.size(), layout, lines);
}

void
CPUEngine::ExportLines(const LineLayout & layout, const RunSelection & selection, unsigned numberOfThreads,
                       Lines & lines)
{
  if (!m_Analyzed)
  {
    throw Error("CPU engine: ExportLines() called without a successful Analyze()");
  }
  (void)numberOfThreads; // the engine's own threads count
  const std::uint64_t numberOfRuns = m_RowStart[m_NumberOfRows];
  try
  {
    const std::uint64_t * component = m_Parent.Data(); // each run's component
    if (selection.newIndex == nullptr)
    {
      PlaceLinesByComponent(layout, lines);
    }
    else
    {
      // Looked up in each of the two passes rather than stored: 8 bytes per run less at the peak.
      const std::uint64_t * newIndex = selection.newIndex;
      PlaceLines([component, newIndex](std::uint64_t id) { return newIndex[component[id]]; },
                 static_cast<std::size_t>(selection.numKept),
                 layout,
                 lines);
    }
  }
  catch (const std::bad_alloc &)
  {
    throw OutOfMemory("CPU engine: out of memory while exporting " + std::to_string(numberOfRuns) + " runs");
  }
  catch (const std::length_error &)
  {
    throw OutOfMemory("CPU engine: out of memory while exporting " + std::to_string(numberOfRuns) + " runs");
  }
}

} // namespace cpu
} // namespace cca
} // namespace itk
