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
// FLSL+OTF (Lemaitre et al. 2021, §3.2, Alg. 2): every run starts with its own features at its own
// index; whenever the union-find links a root under another, the linked root's features are moved to
// the new root (atomicExch out, atomic add/min/max in). As in Alg. 2, the thread that moved features
// then follows its destination to the current root and moves them again while the destination has
// stopped being a root meanwhile, so that when the merge kernel ends every component's features sit at
// its root; one pass then copies them into label order while it labels the runs. Only the fields of
// the image's dimension move (a 2D image has no z sums or z extent to carry). Kept for the paper's
// comparison; FLSL+CD is the default.
#ifndef itkCCAFlslFeaturesOTF_cuh
#define itkCCAFlslFeaturesOTF_cuh

#include "itkCCAOnTheFlyUnite.cuh"
#include "itkCCARunFeatures.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

constexpr int OtfSums = SumProducts0; // count and index sums

/** Per-run features at the run's own index (perRun has numberOfComponents = number of runs). */
__global__ void
InitRunFeaturesKernel(const std::uint32_t * __restrict__ runBegin, const std::uint32_t * __restrict__ runEnd,
                      const std::uint32_t * __restrict__ runRow, std::uint32_t numRuns, DeviceGeometry g,
                      DeviceFeatures perRun)
{
  const int dims = static_cast<int>(g.dimension);
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    const auto c = MakeRunContribution<false>(runBegin[run], runEnd[run], runRow[run], g);
    for (int i = 0; i <= dims; ++i)
    {
      *perRun.Sum(i, static_cast<std::uint32_t>(run)) = c.sum[i];
    }
    for (int d = 0; d < dims; ++d)
    {
      perRun.boundingBoxMin[d][run] = c.boundingBoxMin[d];
      perRun.boundingBoxMax[d][run] = c.boundingBoxMax[d];
    }
  }
}

/** After the merge and flattening (parent = root): each run's parent becomes its label, and each root
 * copies its features (all of the component's, see OnTheFlyUnite) to its label's slot. Every field of
 * the slot is written, so the component features need no initialization. */
__global__ void
GatherRootFeaturesAndLabelRunsKernel(std::uint32_t * __restrict__ parentToLabel,
                                     const std::uint32_t * __restrict__ rootLabel, std::uint32_t numRuns,
                                     DeviceGeometry g, DeviceFeatures perRun, DeviceFeatures features)
{
  const int dims = static_cast<int>(g.dimension);
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    const std::uint32_t r = static_cast<std::uint32_t>(run);
    const std::uint32_t root = parentToLabel[run];
    const std::uint32_t label = rootLabel[root];
    parentToLabel[run] = label;
    if (root != r)
    {
      continue;
    }
    for (int i = 0; i < OtfSums; ++i)
    {
      *features.Sum(i, label) = i <= dims ? *perRun.Sum(i, r) : 0ull;
    }
    for (int d = 0; d < 3; ++d)
    {
      // Extents beyond the image's dimension are 0, as the other variants leave them.
      features.boundingBoxMin[d][label] = d < dims ? perRun.boundingBoxMin[d][r] : 0u;
      features.boundingBoxMax[d][label] = d < dims ? perRun.boundingBoxMax[d][r] : 0u;
    }
  }
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
