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
// Kernels and launches of the run grouping (itkCCARunGrouping.cuh).

#include "itkCCACudaCheck.cuh"
#include "itkCCARunGrouping.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{
__global__ void
FillRunIds(std::uint32_t * ids, std::uint32_t numRuns)
{
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < numRuns; i += blockDim.x * gridDim.x)
  {
    ids[i] = i;
  }
}

/** Run i of the sorted order: its columns from run sortedIds[i]; the first run of each component (the
 * label differs from the previous one; every component has at least one run) marks where it starts. */
__global__ void
GatherRuns(const std::uint32_t * sortedLabels,
           const std::uint32_t * sortedIds,
           const std::uint32_t * begin,
           const std::uint32_t * end,
           const std::uint32_t * row,
           std::uint32_t         numRuns,
           std::uint32_t         numComponents,
           std::uint32_t *       outBegin,
           std::uint32_t *       outLength,
           std::uint32_t *       outRow,
           std::uint32_t *       firstRun)
{
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < numRuns; i += blockDim.x * gridDim.x)
  {
    const std::uint32_t id = sortedIds[i];
    outBegin[i] = begin[id];
    outLength[i] = end[id] - begin[id];
    outRow[i] = row[id];
    const std::uint32_t label = sortedLabels[i];
    if (i == 0 || sortedLabels[i - 1] != label)
    {
      firstRun[label] = i;
    }
    if (i == 0)
    {
      firstRun[numComponents] = numRuns;
    }
  }
}
} // namespace

void
GroupRunsByComponent(const std::uint32_t * label,
                     const std::uint32_t * begin,
                     const std::uint32_t * end,
                     const std::uint32_t * row,
                     std::uint32_t         numRuns,
                     std::uint32_t         numComponents,
                     RunGroupingBuffers &  buffers,
                     cudaStream_t          stream,
                     int                   multiprocessors)
{
  const std::size_t bytes = std::size_t{ numRuns } * sizeof(std::uint32_t);
  buffers.ids.Reserve(bytes, "the run ids");
  buffers.sortedLabels.Reserve(bytes, "the sorted run labels");
  buffers.sortedIds.Reserve(bytes, "the sorted run ids");
  buffers.begin.Reserve(bytes, "the grouped runs' starts");
  buffers.length.Reserve(bytes, "the grouped runs' lengths");
  buffers.row.Reserve(bytes, "the grouped runs' rows");
  buffers.firstRun.Reserve((std::size_t{ numComponents } + 1) * sizeof(std::uint32_t), "the components' first runs");
  const unsigned grid = GridFor(numRuns, multiprocessors);
  FillRunIds<<<grid, BlockSize, 0, stream>>>(buffers.ids.As<std::uint32_t>(), numRuns);
  CCA_CUDA_CHECK(cudaGetLastError());
  // Only the bits that labels use: fewer radix passes for fewer components.
  int endBit = 1;
  while (endBit < 32 && (std::uint64_t{ 1 } << endBit) < numComponents)
  {
    ++endBit;
  }
  std::size_t tempBytes = 0;
  CCA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, tempBytes, label, buffers.sortedLabels.As<std::uint32_t>(),
                                                 buffers.ids.As<std::uint32_t>(), buffers.sortedIds.As<std::uint32_t>(),
                                                 numRuns, 0, endBit, stream));
  buffers.sortTemp.Reserve(std::max<std::size_t>(tempBytes, 1), "the run sort's workspace");
  CCA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(buffers.sortTemp.As<void>(), tempBytes, label,
                                                 buffers.sortedLabels.As<std::uint32_t>(), buffers.ids.As<std::uint32_t>(),
                                                 buffers.sortedIds.As<std::uint32_t>(), numRuns, 0, endBit, stream));
  GatherRuns<<<grid, BlockSize, 0, stream>>>(buffers.sortedLabels.As<std::uint32_t>(), buffers.sortedIds.As<std::uint32_t>(),
                                             begin, end, row, numRuns, numComponents, buffers.begin.As<std::uint32_t>(),
                                             buffers.length.As<std::uint32_t>(), buffers.row.As<std::uint32_t>(),
                                             buffers.firstRun.As<std::uint32_t>());
  CCA_CUDA_CHECK(cudaGetLastError());
}

} // namespace cuda
} // namespace cca
} // namespace itk
