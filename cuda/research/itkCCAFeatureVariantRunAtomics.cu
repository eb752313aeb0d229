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
// FLSL: each run's closed-form contribution added with one set of atomics per run (no warp vote).

#include "itkCCABenchmark.h"
#include "itkCCAFeatureVariant.cuh"

#include "itkCCADeviceBuffer.cuh"
#include "itkCCAFlslFeaturesRunAtomics.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{

class RunAtomicsVariant final : public FeatureVariant
{
public:
  const char *
  Name() const override
  {
    return FeatureAlgorithmName(FeatureAlgorithm::RunAtomics);
  }
  void
  LabelRunsAndMeasure(const DeviceRuns & runs, const DeviceFeatures & features, bool, bool) override
  {
    LabelRunsAndAddFeaturesKernel<<<GridFor(runs.count, runs.multiprocessors), BlockSize, 0, runs.stream>>>(
      runs.parent, runs.rootLabel, runs.begin, runs.end, runs.row, runs.count, runs.geometry, features);
    CCA_CUDA_CHECK_LAUNCH("LabelRunsAndAddFeaturesKernel");
  }
};

} // namespace

std::unique_ptr<FeatureVariant>
CreateRunAtomicsVariant()
{
  return std::make_unique<RunAtomicsVariant>();
}

} // namespace cuda
} // namespace cca
} // namespace itk
