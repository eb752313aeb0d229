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
// The stage that value-tolerance connectivity (Connectivity::valueTolerance) adds to the CUDA engine's path: a
// union-find over pixels, neighbors at the connectivity joining where both are foreground and their values differ
// by at most the tolerance (ITK's ScalarConnectedComponentImageFilter with a distance threshold, cc3d's delta).
// Each pixel's root (its component's first pixel in raster order: roots link under the smaller one) is then a
// class value, and the multi-label stages label and measure those classes' connected sets -- which are exactly
// the components, each connected at the same connectivity.

#include "itkCCACudaStages.cuh"

#include "itkCCACudaCheck.cuh"
#include "itkCCADeviceGeometry.cuh"
#include "itkCCAPixelNeighbors.h"
#include "itkCCAScalarDispatch.h"
#include "itkCCAUnionFind.cuh"
#include "itkCCAValueTolerance.h"

namespace itk
{
namespace cca
{
namespace cuda
{

namespace
{
__device__ __forceinline__ bool
IsForeground(const std::uint32_t * __restrict__ bits, std::uint32_t x, std::uint32_t row, const DeviceGeometry & g)
{
  return ((bits[static_cast<std::uint64_t>(row) * g.wordsPerRow + x / 32u] >> (x & 31u)) & 1u) != 0;
}

__global__ void
SingletonsKernel(std::uint32_t * __restrict__ parent, std::uint64_t numPixels)
{
  for (std::uint64_t p = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; p < numPixels;
       p += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    parent[p] = static_cast<std::uint32_t>(p);
  }
}

/** Each foreground pixel unites with its preceding neighbors (raster order) that the connectivity joins, are
 * foreground, and are close to it in value. */
template <typename TInput>
__global__ void
UniteWithinToleranceKernel(const TInput * __restrict__ input, const std::uint32_t * __restrict__ bits,
                           std::uint32_t * parent, ValueCloseness<TInput> close, unsigned maxNonZero, DeviceGeometry g)
{
  const std::uint64_t numPixels = static_cast<std::uint64_t>(g.width) * g.numRows;
  const PixelGrid     grid{ g.width, g.height, g.depth, g.dimension };
  for (std::uint64_t p = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; p < numPixels;
       p += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    const std::uint32_t row = static_cast<std::uint32_t>(p / g.width);
    const std::uint32_t x = static_cast<std::uint32_t>(p - static_cast<std::uint64_t>(row) * g.width);
    if (!IsForeground(bits, x, row, g))
    {
      continue;
    }
    const TInput value = input[p];
    ForEachPrecedingNeighbor(grid, x, row % g.height, row / g.height, maxNonZero, [&](std::uint64_t q, int) {
      const auto qRow = static_cast<std::uint32_t>(q / g.width);
      if (IsForeground(bits, static_cast<std::uint32_t>(q - static_cast<std::uint64_t>(qRow) * g.width), qRow, g) &&
          close(value, input[q]))
      {
        Unite(parent, static_cast<std::uint32_t>(p), static_cast<std::uint32_t>(q));
      }
    });
  }
}

/** Every parent made its root (reads of ancestors only: safe beside the other threads' writes of roots). */
__global__ void
FlattenPixelsKernel(std::uint32_t * parent, std::uint64_t numPixels)
{
  for (std::uint64_t p = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; p < numPixels;
       p += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    parent[p] = FindRoot(parent, static_cast<std::uint32_t>(p));
  }
}
} // namespace

void
LabelWithinTolerance(const void * input, ScalarKind inputKind, const std::uint32_t * bits, Connectivity connectivity,
                     std::uint32_t * classes, const DeviceGeometry & g, cudaStream_t stream, int multiprocessors)
{
  const std::uint64_t numPixels = static_cast<std::uint64_t>(g.width) * g.numRows;
  const unsigned      grid = GridFor(numPixels, multiprocessors);
  SingletonsKernel<<<grid, BlockSize, 0, stream>>>(classes, numPixels);
  CCA_CUDA_CHECK_LAUNCH("SingletonsKernel");
  DispatchScalarKind(inputKind, [&](auto tag) {
    using T = decltype(tag);
    UniteWithinToleranceKernel<T><<<grid, BlockSize, 0, stream>>>(
      static_cast<const T *>(input), bits, classes, ValueCloseness<T>(connectivity.valueTolerance),
      connectivity.maxNonZero, g);
    CCA_CUDA_CHECK_LAUNCH("UniteWithinToleranceKernel");
  });
  FlattenPixelsKernel<<<grid, BlockSize, 0, stream>>>(classes, numPixels);
  CCA_CUDA_CHECK_LAUNCH("FlattenPixelsKernel");
}

} // namespace cuda
} // namespace cca
} // namespace itk
