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
// Contacts on the GPU (the CUDA engine's ComputeContacts): each pixel's touching neighbor pairs before it in raster
// order counted, then emitted as (label pair, kind) records, sorted (CUB radix sort) and counted per distinct record
// (run-length encoding), which gives each pair its neighbor pairs and its face pairs per axis.

#include "itkCCACudaStages.cuh"

#include "itkCCACudaCheck.cuh"
#include "itkCCAPixelNeighbors.h"
#include "itkCCAScalarDispatch.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>

#include <type_traits>
#include <vector>

namespace itk
{
namespace cca
{
namespace cuda
{

namespace
{
enum ContactFlag : unsigned
{
  NegativeLabel = 1u,
  WideLabel = 2u
};

/** Labels below 2^30: a record is one 64-bit key, the low label, the high label and the kind (the face neighbor's
 * axis, or 3: an edge or corner neighbor), so that sorting and counting equal keys do the reduction. */
constexpr unsigned long long LabelLimit = 1ull << 30;

/** Pass 1 (`keys` null): counts the touching pairs into `counter` and flags labels it cannot take. Pass 2: writes
 * each pair's record at a slot taken from `counter`. */
template <typename T>
__global__ void
ContactsKernel(const T * __restrict__ labels, PixelGrid grid, unsigned maxNonZero,
               unsigned long long * __restrict__ counter, unsigned * __restrict__ flags,
               unsigned long long * __restrict__ keys)
{
  const std::uint64_t numPixels = static_cast<std::uint64_t>(grid.width * grid.height * grid.depth);
  for (std::uint64_t p = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; p < numPixels;
       p += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    const T a = labels[p];
    if (a == T(0))
    {
      continue;
    }
    if (IsNegative(a))
    {
      atomicOr(flags, unsigned{ NegativeLabel });
      continue;
    }
    if (static_cast<unsigned long long>(a) >= LabelLimit)
    {
      atomicOr(flags, unsigned{ WideLabel });
      continue;
    }
    const auto         row = static_cast<std::int64_t>(p / static_cast<std::uint64_t>(grid.width));
    const std::int64_t x = static_cast<std::int64_t>(p) - row * grid.width;
    unsigned long long found = 0;
    ForEachPrecedingNeighbor(grid, x, row % grid.height, row / grid.height, maxNonZero, [&](std::uint64_t q, int axis) {
      const T c = labels[q];
      if (c == a || c == T(0) || IsNegative(c) ||
          static_cast<unsigned long long>(c) >= LabelLimit)
      {
        return; // another pixel flags c
      }
      if (keys == nullptr)
      {
        ++found;
        return;
      }
      const auto               low = static_cast<unsigned long long>(a < c ? a : c);
      const auto               high = static_cast<unsigned long long>(a < c ? c : a);
      const unsigned long long slot = atomicAdd(counter, 1ull);
      keys[slot] = low << 32 | high << 2 | static_cast<unsigned long long>(axis >= 0 ? axis : MaxDimension);
    });
    if (found != 0)
    {
      atomicAdd(counter, found);
    }
  }
}
} // namespace

void
ComputeContactsOnDevice(const void * labels, ScalarKind kind, const PixelGrid & grid, unsigned maxNonZero,
                        ContactBuffers & buffers, cudaStream_t stream, int multiprocessors, ContactTable & table)
{
  const std::uint64_t numPixels = static_cast<std::uint64_t>(grid.width * grid.height * grid.depth);
  const unsigned      blocks = GridFor(numPixels, multiprocessors);
  buffers.scalars.Reserve(2 * sizeof(unsigned long long), "the contacts' counter");
  auto * counter = buffers.scalars.As<unsigned long long>();
  auto * flags = reinterpret_cast<unsigned *>(counter + 1);
  unsigned long long host[2] = { 0, 0 };
  auto               launch = [&](unsigned long long * keys) {
    CCA_CUDA_CHECK(cudaMemsetAsync(counter, 0, 2 * sizeof(unsigned long long), stream));
    DispatchScalarKind(kind, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral<T>::value)
      {
        ContactsKernel<T><<<blocks, BlockSize, 0, stream>>>(
          static_cast<const T *>(labels), grid, maxNonZero, counter, flags, keys);
        CCA_CUDA_CHECK_LAUNCH("ContactsKernel");
      }
      else
      {
        throw Error(std::string("contacts need integer labels, not ") + ScalarKindName(kind));
      }
    });
    CCA_CUDA_CHECK(cudaMemcpyAsync(host, counter, sizeof(host), cudaMemcpyDeviceToHost, stream));
    CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  launch(nullptr);
  const auto flagBits = static_cast<unsigned>(host[1]);
  if (flagBits & NegativeLabel)
  {
    throw Error("contacts need non-negative labels (0: background)");
  }
  if (flagBits & WideLabel)
  {
    throw Unavailable("contacts of labels of 2^30 or more are counted by the CPU engine");
  }
  const unsigned long long count = host[0];
  table.Resize(0);
  if (count == 0)
  {
    return;
  }
  if (count >= (1ull << 31))
  {
    throw Unavailable("more than 2^31 touching neighbor pairs: counted by the CPU engine");
  }
  const int n = static_cast<int>(count);
  // The records, then sorted, then each distinct one with its count: four blocks of `count` keys (and the number of
  // distinct ones).
  buffers.records.Reserve(4 * count * sizeof(unsigned long long) + sizeof(int), "the contacts' records");
  auto * records = buffers.records.As<unsigned long long>();
  auto * sorted = records + count;
  auto * distinct = records + 2 * count;
  auto * counts = reinterpret_cast<int *>(records + 3 * count);
  auto * numDistinct = reinterpret_cast<int *>(records + 4 * count);
  launch(records);
  std::size_t sortBytes = 0;
  std::size_t encodeBytes = 0;
  CCA_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sortBytes, records, sorted, n, 0, 62, stream));
  CCA_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, encodeBytes, sorted, distinct, counts, numDistinct, n,
                                                    stream));
  buffers.temp.Reserve(std::max(sortBytes, encodeBytes), "the contacts' sort");
  CCA_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(buffers.temp.As<void>(), sortBytes, records, sorted, n, 0, 62, stream));
  CCA_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(
    buffers.temp.As<void>(), encodeBytes, sorted, distinct, counts, numDistinct, n, stream));
  int found = 0;
  CCA_CUDA_CHECK(cudaMemcpyAsync(&found, numDistinct, sizeof(int), cudaMemcpyDeviceToHost, stream));
  CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<unsigned long long> hostKeys(static_cast<std::size_t>(found));
  std::vector<int>                hostCounts(static_cast<std::size_t>(found));
  CCA_CUDA_CHECK(cudaMemcpyAsync(
    hostKeys.data(), distinct, hostKeys.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  CCA_CUDA_CHECK(
    cudaMemcpyAsync(hostCounts.data(), counts, hostCounts.size() * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
  // A pair's kinds are consecutive: one row each.
  std::size_t rows = 0;
  for (std::size_t i = 0; i < hostKeys.size(); ++i)
  {
    rows += i == 0 || (hostKeys[i] >> 2) != (hostKeys[i - 1] >> 2);
  }
  table.Resize(rows);
  std::size_t row = SIZE_MAX;
  for (std::size_t i = 0; i < hostKeys.size(); ++i)
  {
    if (i == 0 || (hostKeys[i] >> 2) != (hostKeys[i - 1] >> 2))
    {
      ++row;
      table.first[row] = hostKeys[i] >> 32;
      table.second[row] = (hostKeys[i] >> 2) & (LabelLimit - 1);
    }
    const auto times = static_cast<std::uint64_t>(hostCounts[i]);
    table.neighborPairs[row] += times;
    const unsigned kindOfRecord = static_cast<unsigned>(hostKeys[i] & 3u);
    if (kindOfRecord < MaxDimension)
    {
      table.faces[kindOfRecord][row] += times;
    }
  }
}

} // namespace cuda
} // namespace cca
} // namespace itk
