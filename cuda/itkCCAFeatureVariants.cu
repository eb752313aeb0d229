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
// The registry of the CUDA engine's feature variants: the one place that maps FeatureAlgorithm to a
// variant (as YACCLAB registers its algorithms). A new variant gets a file of its own and a line here.

#include "itkCCAFeatureVariant.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

std::unique_ptr<FeatureVariant>
CreateFeatureVariant(FeatureAlgorithm algorithm)
{
  switch (algorithm)
  {
    case FeatureAlgorithm::ConflictDetection:
      return CreateConflictDetectionVariant();
    case FeatureAlgorithm::OnTheFlyMerge:
      return CreateOnTheFlyMergeVariant();
    case FeatureAlgorithm::RunAtomics:
      return CreateRunAtomicsVariant();
    case FeatureAlgorithm::PixelAtomics:
      return CreatePixelAtomicsVariant();
  }
  throw Error("unknown feature algorithm");
}

} // namespace cuda
} // namespace cca
} // namespace itk
