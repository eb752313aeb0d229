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
// Consecutive raster-order labels from the union-find forest. After the merge every run's root is its
// component's first run in raster order (smallest-index roots). Flattening marks the roots; an
// exclusive scan of the marks numbers the components 0..K-1 in raster order of their first pixel,
// which is ITK's numbering.
#ifndef itkCCARelabel_cuh
#define itkCCARelabel_cuh

#include <cstdint>

namespace itk
{
namespace cca
{
namespace cuda
{

/** Path compression to the root and a 1 for each root (the scan input). A pass (itkCCAFlslSegments.cuh). */
__device__ __forceinline__ void
FlattenAndMarkRootsPass(std::uint32_t * parent, std::uint32_t * isRoot, std::uint32_t numRuns)
{
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    // Other threads only ever replace a parent by an ancestor of it, so plain loads see a valid path.
    std::uint32_t root = parent[run];
    while (parent[root] != root)
    {
      root = parent[root];
    }
    parent[run] = root;
    isRoot[run] = root == run ? 1u : 0u;
  }
}


} // namespace cuda
} // namespace cca
} // namespace itk

#endif
