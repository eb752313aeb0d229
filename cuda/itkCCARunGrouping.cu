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

/** The sort key of each run: its component's new index, or numGroups (after every kept one) for a removed
 * component's run. */
__global__ void
MapRunKeys(const std::uint32_t * label, const unsigned long long * newIndex, std::uint32_t numRuns,
           std::uint32_t numGroups, std::uint32_t * keys)
{
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < numRuns; i += blockDim.x * gridDim.x)
  {
    const unsigned long long k = newIndex[label[i]];
    keys[i] = k == ~0ull ? numGroups : static_cast<std::uint32_t>(k);
  }
}

/** Run i of the sorted order: its columns from run sortedIds[i]; the first run of each group (the key
 * differs from the previous one; every kept group has at least one run) marks where it starts. The
 * removed runs (key numGroups) come last: where they start is the number of kept runs, else it is
 * numRuns, written by the last run; either way by exactly one thread. */
__global__ void
GatherRuns(const std::uint32_t * sortedKeys, const std::uint32_t * sortedIds, const std::uint32_t * begin,
           const std::uint32_t * end, const std::uint32_t * row, std::uint32_t numRuns, std::uint32_t numGroups,
           std::uint32_t * outBegin, std::uint32_t * outLength, std::uint32_t * outRow, std::uint32_t * firstRun)
{
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < numRuns; i += blockDim.x * gridDim.x)
  {
    const std::uint32_t key = sortedKeys[i];
    if (i == 0 || sortedKeys[i - 1] != key)
    {
      firstRun[key] = i;
    }
    if (key == numGroups)
    {
      continue;
    }
    if (i == numRuns - 1)
    {
      firstRun[numGroups] = numRuns;
    }
    const std::uint32_t id = sortedIds[i];
    outBegin[i] = begin[id];
    outLength[i] = end[id] - begin[id];
    outRow[i] = row[id];
  }
}
} // namespace

void
GroupRunsByComponent(const std::uint32_t * label, const std::uint32_t * begin, const std::uint32_t * end,
                     const std::uint32_t * row, std::uint32_t numRuns, const unsigned long long * newIndex,
                     std::uint32_t numGroups, RunGroupingBuffers & buffers, cudaStream_t stream, int multiprocessors)
{
  const std::size_t bytes = std::size_t{ numRuns } * sizeof(std::uint32_t);
  buffers.ids.Reserve(bytes, "the run ids");
  buffers.sortedLabels.Reserve(bytes, "the sorted run labels");
  buffers.sortedIds.Reserve(bytes, "the sorted run ids");
  buffers.begin.Reserve(bytes, "the grouped runs' starts");
  buffers.length.Reserve(bytes, "the grouped runs' lengths");
  buffers.row.Reserve(bytes, "the grouped runs' rows");
  buffers.firstRun.Reserve((std::size_t{ numGroups } + 1) * sizeof(std::uint32_t), "the components' first runs");
  const unsigned        grid = GridFor(numRuns, multiprocessors);
  const std::uint32_t * keys = label;
  if (newIndex != nullptr)
  {
    buffers.keys.Reserve(bytes, "the runs' new indices");
    MapRunKeys<<<grid, BlockSize, 0, stream>>>(label, newIndex, numRuns, numGroups, buffers.keys.As<std::uint32_t>());
    CCA_CUDA_CHECK(cudaGetLastError());
    keys = buffers.keys.As<std::uint32_t>();
  }
  FillRunIds<<<grid, BlockSize, 0, stream>>>(buffers.ids.As<std::uint32_t>(), numRuns);
  CCA_CUDA_CHECK(cudaGetLastError());
  // Only the bits that keys use (up to numGroups, the removed runs' key): fewer radix passes for fewer
  // components.
  int endBit = 1;
  while (endBit < 32 && (std::uint64_t{ 1 } << endBit) <= numGroups)
  {
    ++endBit;
  }
  std::size_t tempBytes = 0;
  CCA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr,
                                                 tempBytes,
                                                 keys,
                                                 buffers.sortedLabels.As<std::uint32_t>(),
                                                 buffers.ids.As<std::uint32_t>(),
                                                 buffers.sortedIds.As<std::uint32_t>(),
                                                 numRuns,
                                                 0,
                                                 endBit,
                                                 stream));
  buffers.sortTemp.Reserve(std::max<std::size_t>(tempBytes, 1), "the run sort's workspace");
  CCA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(buffers.sortTemp.As<void>(),
                                                 tempBytes,
                                                 keys,
                                                 buffers.sortedLabels.As<std::uint32_t>(),
                                                 buffers.ids.As<std::uint32_t>(),
                                                 buffers.sortedIds.As<std::uint32_t>(),
                                                 numRuns,
                                                 0,
                                                 endBit,
                                                 stream));
  GatherRuns<<<grid, BlockSize, 0, stream>>>(buffers.sortedLabels.As<std::uint32_t>(),
                                             buffers.sortedIds.As<std::uint32_t>(),
                                             begin,
                                             end,
                                             row,
                                             numRuns,
                                             numGroups,
                                             buffers.begin.As<std::uint32_t>(),
                                             buffers.length.As<std::uint32_t>(),
                                             buffers.row.As<std::uint32_t>(),
                                             buffers.firstRun.As<std::uint32_t>());
  CCA_CUDA_CHECK(cudaGetLastError());
}

} // namespace cuda
} // namespace cca
} // namespace itk
