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
// FLSL+OTF: every run starts with its own features; they move with the union-find links while the runs
// merge (Alg. 2), so that after the merge each root holds its component's features, which the labeling
// pass gathers. It owns the per-run feature buffers.

#include "itkCCABenchmark.h"
#include "itkCCAFeatureVariant.cuh"

#include "itkCCADeviceBuffer.cuh"
#include "itkCCAFlslFeaturesOTF.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{

class OnTheFlyMergeVariant final : public FeatureVariant
{
public:
  const char *
  Name() const override
  {
    return FeatureAlgorithmName(FeatureAlgorithm::OnTheFlyMerge);
  }
  void
  MergeRuns(const DeviceRuns & runs) override
  {
    const std::uint64_t n = runs.count;
    m_RunSums.Reserve(OtfSums * n * sizeof(unsigned long long), "per-run features");
    m_RunBoxes.Reserve(6 * n * sizeof(std::uint32_t), "per-run features");
    m_PerRun.sums = m_RunSums.As<unsigned long long>();
    m_PerRun.numberOfComponents = n;
    for (int d = 0; d < 3; ++d)
    {
      m_PerRun.boundingBoxMin[d] = m_RunBoxes.As<std::uint32_t>() + d * n;
      m_PerRun.boundingBoxMax[d] = m_RunBoxes.As<std::uint32_t>() + (3 + d) * n;
    }
    InitRunFeaturesKernel<<<GridFor(n, runs.multiprocessors), BlockSize, 0, runs.stream>>>(
      runs.begin, runs.end, runs.row, runs.count, runs.geometry, m_PerRun);
    CCA_CUDA_CHECK_LAUNCH("InitRunFeaturesKernel");
    if (runs.neighbors.count > 0 && runs.geometry.numRows > 1)
    {
      MergeRunsKernel<<<GridFor(runs.geometry.numWords, runs.multiprocessors), BlockSize, 0, runs.stream>>>(
        runs.bits,
        runs.firstRun,
        runs.parent,
        runs.geometry,
        runs.neighbors,
        OnTheFlyUnite{ m_PerRun, static_cast<int>(runs.geometry.dimension) });
      CCA_CUDA_CHECK_LAUNCH("MergeRunsKernel");
    }
  }

  int
  FirstAccumulatedSum() const override
  {
    return OtfSums; // every basic field of every component is written by the gather
  }

  bool
  WritesBoundingBoxes() const override
  {
    return true;
  }

  void
  LabelRunsAndMeasure(const DeviceRuns & runs, const DeviceFeatures & features, bool, bool) override
  {
    GatherRootFeaturesAndLabelRunsKernel<<<GridFor(runs.count, runs.multiprocessors), BlockSize, 0, runs.stream>>>(
      runs.parent, runs.rootLabel, runs.count, runs.geometry, m_PerRun, features);
    CCA_CUDA_CHECK_LAUNCH("GatherRootFeaturesAndLabelRunsKernel");
  }

private:
  DeviceBuffer   m_RunSums;
  DeviceBuffer   m_RunBoxes;
  DeviceFeatures m_PerRun{};
};

} // namespace

std::unique_ptr<FeatureVariant>
CreateOnTheFlyMergeVariant()
{
  return std::make_unique<OnTheFlyMergeVariant>();
}

} // namespace cuda
} // namespace cca
} // namespace itk
