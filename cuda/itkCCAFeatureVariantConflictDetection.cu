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
// FLSL+CD, the default feature variant: each run's closed-form contribution, voted among the lanes of a
// warp that share a component with __match_any_sync and a shuffle reduction, one atomic per component per
// warp. The only variant that also accumulates the LabelMap's shape sums and perimeter intercepts.

#include "itkCCAFeatureVariant.cuh"

#include "itkCCADeviceBuffer.cuh"
#include "itkCCAFlslFeaturesCD.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{

// The passes of itkCCAFlslFeaturesCD.cuh as kernels of their own.
/** LabelRunsAndVoteFeaturesPass() as a kernel of its own (the passes: itkCCAFlslSegments.cuh). */
template <bool WithShape>
__global__ void
LabelRunsAndVoteFeaturesKernel(std::uint32_t * __restrict__ parentToLabel, const std::uint32_t * __restrict__ rootLabel,
                               const std::uint32_t * __restrict__ runBegin, const std::uint32_t * __restrict__ runEnd,
                               const std::uint32_t * __restrict__ runRow, std::uint32_t numRuns, DeviceGeometry g,
                               DeviceFeatures features)
{
  LabelRunsAndVoteFeaturesPass<WithShape>(parentToLabel, rootLabel, runBegin, runEnd, runRow, numRuns, g, features);
}

__global__ void
CountPerimeterInterceptsKernel(const std::uint32_t * __restrict__ runLabel, const std::uint32_t * __restrict__ firstRun,
                               const std::uint32_t * __restrict__ runBegin, const std::uint32_t * __restrict__ runEnd,
                               const std::uint32_t * __restrict__ runRow, std::uint32_t numRuns, DeviceGeometry g,
                               DeviceFeatures features)
{
  CountPerimeterInterceptsPass(runLabel, firstRun, runBegin, runEnd, runRow, numRuns, g, features);
}


class ConflictDetectionVariant final : public FeatureVariant
{
public:
  const char *
  Name() const override
  {
    return "FLSL+CD";
  }
  bool
  MeasuresIntensityAndClasses() const override
  {
    return true;
  }
  bool
  ComputesShapeSums() const override
  {
    return true;
  }

  bool
  AnalyzesSmallImagesInOneLaunch() const override
  {
    return true; // the small-image kernel votes as this variant does (LabelRunsAndVoteFeaturesPass)
  }

  void
  LabelRunsAndMeasure(const DeviceRuns & runs, const DeviceFeatures & features, bool shapeSums, bool perimeter) override
  {
    const unsigned  grid = GridFor(runs.count, runs.multiprocessors);
    std::uint32_t * label = runs.parent;
    if (shapeSums)
    {
      LabelRunsAndVoteFeaturesKernel<true><<<grid, BlockSize, 0, runs.stream>>>(
        label, runs.rootLabel, runs.begin, runs.end, runs.row, runs.count, runs.geometry, features);
    }
    else
    {
      LabelRunsAndVoteFeaturesKernel<false><<<grid, BlockSize, 0, runs.stream>>>(
        label, runs.rootLabel, runs.begin, runs.end, runs.row, runs.count, runs.geometry, features);
    }
    CCA_CUDA_CHECK_LAUNCH("LabelRunsAndVoteFeaturesKernel");
    if (shapeSums && perimeter)
    {
      CountPerimeterInterceptsKernel<<<grid, BlockSize, 0, runs.stream>>>(
        label, runs.firstRun, runs.begin, runs.end, runs.row, runs.count, runs.geometry, features);
      CCA_CUDA_CHECK_LAUNCH("CountPerimeterInterceptsKernel");
    }
  }
};

} // namespace

std::unique_ptr<FeatureVariant>
CreateConflictDetectionVariant()
{
  return std::make_unique<ConflictDetectionVariant>();
}

} // namespace cuda
} // namespace cca
} // namespace itk
