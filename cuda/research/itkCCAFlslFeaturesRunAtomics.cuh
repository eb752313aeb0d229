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
// FLSL (Lemaitre et al. 2021, §3.1): full runs, each run adds its closed-form contribution to its
// component with its own atomics. Kept for the paper's comparison; FLSL+CD is the default.
#ifndef itkCCAFlslFeaturesRunAtomics_cuh
#define itkCCAFlslFeaturesRunAtomics_cuh

#include "itkCCARunFeatures.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

/** Replaces each run's parent (its root after flattening) by its label and adds the run's features. */
__global__ void
LabelRunsAndAddFeaturesKernel(std::uint32_t * __restrict__ parentToLabel, const std::uint32_t * __restrict__ rootLabel,
                              const std::uint32_t * __restrict__ runBegin, const std::uint32_t * __restrict__ runEnd,
                              const std::uint32_t * __restrict__ runRow, std::uint32_t numRuns, DeviceGeometry g,
                              DeviceFeatures features)
{
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    const std::uint32_t label = rootLabel[parentToLabel[run]];
    parentToLabel[run] = label;
    AccumulateAtomically(features, label, MakeRunContribution<false>(runBegin[run], runEnd[run], runRow[run], g));
  }
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
