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
#ifndef itkCCARunGrouping_cuh
#define itkCCARunGrouping_cuh

// The runs grouped by component on the device, for the LabelMap's lines: a stable radix sort of the run
// ids by label (CUB), so that each component's runs stay in raster order, then the runs' columns gathered
// in that order and each component's first run marked. The host receives them ready to copy, instead of
// sorting millions of runs itself. With the post-processing's table, the sort key is a run's new index, and
// the removed components' runs sort after every kept one, where nobody copies them.

#include "itkCCADeviceBuffer.cuh"

#include <cstdint>

namespace itk
{
namespace cca
{
namespace cuda
{

/** Device buffers of the grouping, kept between calls. */
struct RunGroupingBuffers
{
  DeviceBuffer keys, ids, sortedLabels, sortedIds, sortTemp, begin, length, row, firstRun;
};

/** Groups `numRuns` runs (columns `begin`, `end`, `row`; `label` the 0-based component of each) into
 * `numGroups` groups: the components (numGroups = their count) or, with `newIndex` (device, one entry per
 * component: its 0-based new index, or ~0 for a removed component), the kept components in their new
 * order (numGroups = how many are kept). Afterwards buffers.firstRun (uint32, numGroups + 1) holds where
 * each group's runs start, firstRun[numGroups] the number of kept runs, and buffers.begin/length/row
 * (uint32) the kept runs by group, each group's in raster order. Asynchronous in `stream`. */
void
GroupRunsByComponent(const std::uint32_t * label, const std::uint32_t * begin, const std::uint32_t * end,
                     const std::uint32_t * row, std::uint32_t numRuns, const unsigned long long * newIndex,
                     std::uint32_t numGroups, RunGroupingBuffers & buffers, cudaStream_t stream, int multiprocessors);

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
