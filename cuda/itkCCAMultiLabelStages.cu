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
// The stages that multi-label input (Request::multiLabel, equal-value connectivity) adds to the CUDA engine's
// path: where a run of another value starts inside a stretch of foreground pixels (the break bits, which the
// run passes add to their run starts), each run's value (the merge unites only runs of equal value), and each
// component's value (its class, for the table and the cleaned segmentation).

#include "itkCCACudaStages.cuh"

#include "itkCCACudaCheck.cuh"
#include "itkCCADeviceGeometry.cuh"
#include "itkCCAScalarDispatch.h"

namespace itk
{
namespace cca
{
namespace cuda
{

namespace
{
/** One warp per word: lane x compares its pixel's value with its left neighbor's; a break is a foreground pixel
 * whose left neighbor is foreground (same row) and of another value. */
template <typename TInput>
__global__ void
BuildValueBreaksKernel(const TInput * __restrict__ input, const std::uint32_t * __restrict__ bits,
                       std::uint32_t * __restrict__ breaks, DeviceGeometry g)
{
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t word = GlobalWarpId(); word < g.numWords; word += WarpCount())
  {
    const std::uint32_t row = static_cast<std::uint32_t>(word / g.wordsPerRow);
    const std::uint32_t wordInRow = static_cast<std::uint32_t>(word - static_cast<std::uint64_t>(row) * g.wordsPerRow);
    const std::uint32_t x = wordInRow * 32u + lane;
    bool                changes = false;
    if (x > 0 && x < g.width)
    {
      const std::uint64_t pixel = static_cast<std::uint64_t>(row) * g.width + x;
      changes = input[pixel] != input[pixel - 1];
    }
    const std::uint32_t ballot = __ballot_sync(FullWarp, changes);
    if (lane == 0)
    {
      const RowWord w = LoadRowWord(bits, static_cast<std::uint32_t>(word), wordInRow, g.wordsPerRow);
      breaks[word] = ballot & w.bits & w.ShiftedRight();
    }
  }
}

template <typename TInput>
__global__ void
ClassifyRunsKernel(const TInput * __restrict__ input, const std::uint32_t * __restrict__ runBegin,
                   const std::uint32_t * __restrict__ runRow, long long * __restrict__ runClass, std::uint32_t numRuns,
                   DeviceGeometry g)
{
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    // Integer inputs only (the request is checked): an unsigned 64-bit value keeps its bits.
    runClass[run] = static_cast<long long>(input[static_cast<std::uint64_t>(runRow[run]) * g.width + runBegin[run]]);
  }
}

/** Every run writes its value to its component: all runs of a component hold the same value, so the writes
 * agree and their order does not matter. */
__global__ void
ClassifyComponentsKernel(const long long * __restrict__ runClass, const std::uint32_t * __restrict__ runLabel,
                         long long * __restrict__ componentClass, std::uint32_t numRuns)
{
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    componentClass[runLabel[run]] = runClass[run];
  }
}

__global__ void
ScatterComponentClassesKernel(const long long * __restrict__ componentClass,
                              const unsigned long long * __restrict__ newIndex, long long * __restrict__ out,
                              std::uint64_t k)
{
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < k;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    const unsigned long long row = newIndex ? newIndex[i] : i;
    if (row != ~0ull)
    {
      out[row] = componentClass[i];
    }
  }
}

/** Calls function(T{}) for the integer kinds, which alone carry classes. */
template <typename TFunction>
void
DispatchIntegerKind(ScalarKind kind, const TFunction & function)
{
  if (kind == ScalarKind::Float32 || kind == ScalarKind::Float64)
  {
    throw Error("multi-label input must have an integer pixel type");
  }
  DispatchScalarKind(kind, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral<T>::value)
    {
      function(tag);
    }
  });
}
} // namespace

void
BuildValueBreaks(const void * input, ScalarKind inputKind, const std::uint32_t * bits, std::uint32_t * breaks,
                 const DeviceGeometry & g, cudaStream_t stream, int multiprocessors)
{
  DispatchIntegerKind(inputKind, [&](auto tag) {
    using T = decltype(tag);
    BuildValueBreaksKernel<T><<<GridFor(std::uint64_t{ g.numWords } * 32u, multiprocessors), BlockSize, 0, stream>>>(
      static_cast<const T *>(input), bits, breaks, g);
    CCA_CUDA_CHECK_LAUNCH("BuildValueBreaksKernel");
  });
}

void
ClassifyRuns(const void * input, ScalarKind inputKind, const std::uint32_t * runBegin, const std::uint32_t * runRow,
             long long * runClass, std::uint32_t numRuns, const DeviceGeometry & g, cudaStream_t stream,
             int multiprocessors)
{
  DispatchIntegerKind(inputKind, [&](auto tag) {
    using T = decltype(tag);
    ClassifyRunsKernel<T><<<GridFor(numRuns, multiprocessors), BlockSize, 0, stream>>>(
      static_cast<const T *>(input), runBegin, runRow, runClass, numRuns, g);
    CCA_CUDA_CHECK_LAUNCH("ClassifyRunsKernel");
  });
}

void
ClassifyComponents(const long long * runClass, const std::uint32_t * runLabel, long long * componentClass,
                   std::uint32_t numRuns, cudaStream_t stream, int multiprocessors)
{
  ClassifyComponentsKernel<<<GridFor(numRuns, multiprocessors), BlockSize, 0, stream>>>(
    runClass, runLabel, componentClass, numRuns);
  CCA_CUDA_CHECK_LAUNCH("ClassifyComponentsKernel");
}

void
ScatterComponentClasses(const long long * componentClass, const unsigned long long * newIndex, long long * out,
                        std::uint64_t k, cudaStream_t stream, int multiprocessors)
{
  ScatterComponentClassesKernel<<<GridFor(k, multiprocessors), BlockSize, 0, stream>>>(componentClass, newIndex, out, k);
  CCA_CUDA_CHECK_LAUNCH("ScatterComponentClassesKernel");
}

} // namespace cuda
} // namespace cca
} // namespace itk
