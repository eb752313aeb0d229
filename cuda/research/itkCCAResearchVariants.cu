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
// The research library's registration of the paper's other feature variants (FLSL+OTF, FLSL, naive) and of the
// labels-only variant, each in its own file (itkCCAFeatureVariant<Name>.cu), and of the direct algorithms
// (itkCCADirect<Name>.cu).
#include "itkCCABenchmark.h"
#include "itkCCADirectAlgorithm.cuh"
#include "itkCCAFeatureVariant.cuh"

namespace itk
{
namespace cca
{

void
RegisterResearchFeatureVariants()
{
  cuda::RegisterFeatureVariant(FeatureAlgorithm::OnTheFlyMerge, &cuda::CreateOnTheFlyMergeVariant);
  cuda::RegisterFeatureVariant(FeatureAlgorithm::RunAtomics, &cuda::CreateRunAtomicsVariant);
  cuda::RegisterFeatureVariant(FeatureAlgorithm::PixelAtomics, &cuda::CreatePixelAtomicsVariant);
  cuda::RegisterFeatureVariant(FeatureAlgorithm::LabelsOnly, &cuda::CreateLabelsOnlyVariant);
  // The seed papers' other labeling algorithms, each its own pipeline: BenchmarkDirectAlgorithm().
  cuda::RegisterDirectAlgorithm("buf", &cuda::CreateBlockUnionFind);
  cuda::RegisterDirectAlgorithm("buf-halving", &cuda::CreateBlockUnionFindPathHalving);
  cuda::RegisterDirectAlgorithm("ha4", &cuda::CreateHA4);
  cuda::RegisterDirectAlgorithm("ha4-otf", &cuda::CreateHA4OnTheFly);
  cuda::RegisterDirectAlgorithm("ha4-cd", &cuda::CreateHA4ConflictDetection);
}

} // namespace cca
} // namespace itk
