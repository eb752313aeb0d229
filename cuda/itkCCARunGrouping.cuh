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
// sorting millions of runs itself.

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
  DeviceBuffer ids, sortedLabels, sortedIds, sortTemp, begin, length, row, firstRun;
};

/** Groups `numRuns` runs (columns `begin`, `end`, `row`; `label` the 0-based component of each) of
 * `numComponents` components: afterwards buffers.begin/length/row (uint32, numRuns each) hold the runs by
 * component, and buffers.firstRun (uint32, numComponents + 1) where each component's runs start. Asynchronous
 * in `stream`. */
void
GroupRunsByComponent(const std::uint32_t * label,
                     const std::uint32_t * begin,
                     const std::uint32_t * end,
                     const std::uint32_t * row,
                     std::uint32_t         numRuns,
                     std::uint32_t         numComponents,
                     RunGroupingBuffers &  buffers,
                     cudaStream_t          stream,
                     int                   multiprocessors);

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
