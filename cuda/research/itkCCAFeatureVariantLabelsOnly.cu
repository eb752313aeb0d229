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
// Labels only (research library): the engine's labeling path without the feature stage -- the same
// runs, merge and raster-order numbering as FLSL+CD, then each run's label, nothing accumulated. It is what the
// benchmark compares with the labels-only algorithms of the field (BUF). The engine allocates no features for it
// and refuses to return any.

#include "itkCCABenchmark.h"
#include "itkCCAFeatureVariant.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{

class LabelsOnlyVariant final : public FeatureVariant
{
public:
  const char *
  Name() const override
  {
    return FeatureAlgorithmName(FeatureAlgorithm::LabelsOnly);
  }
  bool
  MeasuresFeatures() const override
  {
    return false;
  }

  void
  LabelRunsAndMeasure(const DeviceRuns & runs, const DeviceFeatures &, bool, bool) override
  {
    LaunchLabelRuns(runs);
  }
};

} // namespace

std::unique_ptr<FeatureVariant>
CreateLabelsOnlyVariant()
{
  return std::make_unique<LabelsOnlyVariant>();
}

} // namespace cuda
} // namespace cca
} // namespace itk
