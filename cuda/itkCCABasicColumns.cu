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
// The basic columns (pixels, physical size, bounding box, centroid) from the feature accumulators, one
// thread per component, written at the component's (new) row: the table stage of the CUDA engine, for the
// Python package's columns, with no ComponentSums rows on the host. The arithmetic is itkCCABasicAttributes.h's,
// shared with the host.
#include "itkCCACudaStages.cuh"
#include "itkCCARunFeatures.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{

__global__ void
WriteBasicColumnsKernel(BasicGeometry geometry, BasicColumns columns, const unsigned long long * __restrict__ sums,
                        const std::uint32_t * __restrict__ boxes, std::uint64_t k,
                        const unsigned long long * __restrict__ newIndex)
{
  for (std::uint64_t i = blockIdx.x * std::uint64_t{ blockDim.x } + threadIdx.x; i < k;
       i += std::uint64_t{ gridDim.x } * blockDim.x)
  {
    WriteBasicRowOfComponent(geometry, columns, sums, boxes, k, i, newIndex);
  }
}

} // namespace

void
WriteBasicColumnsOnDevice(const BasicGeometry & geometry, const BasicColumns & columns, const unsigned long long * sums,
                          const std::uint32_t * boxes, std::uint64_t k, const unsigned long long * newIndex,
                          cudaStream_t stream, int multiprocessors)
{
  if (k == 0)
  {
    return;
  }
  WriteBasicColumnsKernel<<<GridFor(k, multiprocessors), BlockSize, 0, stream>>>(
    geometry, columns, sums, boxes, k, newIndex);
  CCA_CUDA_CHECK_LAUNCH("WriteBasicColumnsKernel");
}

} // namespace cuda
} // namespace cca
} // namespace itk
