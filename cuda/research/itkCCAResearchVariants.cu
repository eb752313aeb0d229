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
// The research library's table of the paper's feature variants (FLSL+OTF, FLSL, naive) and of the labels-only
// variant, each in its own file (itkCCAFeatureVariant<Name>.cu), handed to a CUDA engine of their own; and of
// the direct algorithms (itkCCADirect<Name>.cu).
#include "itkCCABenchmark.h"
#include "itkCCACudaEngine.cuh"
#include "itkCCADirectAlgorithm.cuh"
#include "itkCCAFeatureVariant.cuh"

namespace itk
{
namespace cca
{

std::unique_ptr<Engine>
CreateResearchCudaEngine(int deviceId, FeatureAlgorithm algorithm)
{
  std::unique_ptr<cuda::FeatureVariant> variant; // nullptr: the engine's own, FLSL+CD
  switch (algorithm)
  {
    case FeatureAlgorithm::ConflictDetection:
      break;
    case FeatureAlgorithm::OnTheFlyMerge:
      variant = cuda::CreateOnTheFlyMergeVariant();
      break;
    case FeatureAlgorithm::RunAtomics:
      variant = cuda::CreateRunAtomicsVariant();
      break;
    case FeatureAlgorithm::PixelAtomics:
      variant = cuda::CreatePixelAtomicsVariant();
      break;
    case FeatureAlgorithm::LabelsOnly:
      variant = cuda::CreateLabelsOnlyVariant();
      break;
    default:
      throw Error("unknown feature algorithm");
  }
  cuda::RequireCudaDevice(deviceId);
  return std::make_unique<cuda::CudaEngine>(deviceId, std::move(variant));
}

void
RegisterDirectAlgorithms()
{
  // The seed papers' other labeling algorithms, each its own pipeline: BenchmarkDirectAlgorithm().
  cuda::RegisterDirectAlgorithm("buf", &cuda::CreateBlockUnionFind);
  cuda::RegisterDirectAlgorithm("buf-halving", &cuda::CreateBlockUnionFindPathHalving);
  cuda::RegisterDirectAlgorithm("ha4", &cuda::CreateHA4);
  cuda::RegisterDirectAlgorithm("ha4-otf", &cuda::CreateHA4OnTheFly);
  cuda::RegisterDirectAlgorithm("ha4-cd", &cuda::CreateHA4ConflictDetection);
}

} // namespace cca
} // namespace itk
