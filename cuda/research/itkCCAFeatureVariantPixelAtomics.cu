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
// Naive: the runs are labeled first, then every foreground pixel adds itself to its component with atomics.

#include "itkCCABenchmark.h"
#include "itkCCAFeatureVariant.cuh"

#include "itkCCADeviceBuffer.cuh"
#include "itkCCANaiveFeatures.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{

class PixelAtomicsVariant final : public FeatureVariant
{
public:
  const char *
  Name() const override
  {
    return FeatureAlgorithmName(FeatureAlgorithm::PixelAtomics);
  }
  void
  LabelRunsAndMeasure(const DeviceRuns & runs, const DeviceFeatures & features, bool, bool) override
  {
    LaunchLabelRuns(runs);
    PixelAtomicFeaturesKernel<<<GridFor(std::uint64_t{ runs.geometry.numWords } * 32u, runs.multiprocessors),
                                BlockSize,
                                0,
                                runs.stream>>>(runs.bits, runs.firstRun, runs.parent, runs.geometry, features);
    CCA_CUDA_CHECK_LAUNCH("PixelAtomicFeaturesKernel");
  }
};

} // namespace

std::unique_ptr<FeatureVariant>
CreatePixelAtomicsVariant()
{
  return std::make_unique<PixelAtomicsVariant>();
}

} // namespace cuda
} // namespace cca
} // namespace itk
