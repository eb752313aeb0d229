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
// variant (as YACCLAB registers its algorithms). The module's library holds FLSL+CD, the default; the
// paper's other variants live in the research library (CudaConnectedComponentAnalysisResearch), which the
// benchmark and the GPU tests link and register (RegisterResearchFeatureVariants()).

#include "itkCCAFeatureVariant.cuh"

#include <array>
#include <mutex>

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{
constexpr std::size_t NumberOfAlgorithms = NumberOfFeatureAlgorithms;

std::mutex &
RegistryMutex()
{
  static std::mutex mutex;
  return mutex;
}

std::array<FeatureVariantFactory, NumberOfAlgorithms> &
Registry()
{
  static std::array<FeatureVariantFactory, NumberOfAlgorithms> registry{};
  return registry;
}
} // namespace

void
RegisterFeatureVariant(FeatureAlgorithm algorithm, FeatureVariantFactory factory)
{
  const auto index = static_cast<std::size_t>(algorithm);
  if (index >= NumberOfAlgorithms)
  {
    throw Error("unknown feature algorithm");
  }
  const std::lock_guard<std::mutex> lock(RegistryMutex());
  Registry()[index] = factory;
}

std::unique_ptr<FeatureVariant>
CreateFeatureVariant(FeatureAlgorithm algorithm)
{
  if (algorithm == FeatureAlgorithm::ConflictDetection)
  {
    return CreateConflictDetectionVariant();
  }
  const auto            index = static_cast<std::size_t>(algorithm);
  FeatureVariantFactory factory = nullptr;
  if (index < NumberOfAlgorithms)
  {
    const std::lock_guard<std::mutex> lock(RegistryMutex());
    factory = Registry()[index];
  }
  if (!factory)
  {
    throw Error(std::string("the feature algorithm ") + FeatureAlgorithmName(algorithm) +
                " is a research variant: link CudaConnectedComponentAnalysisResearch and call "
                "cca::RegisterResearchFeatureVariants()");
  }
  return factory();
}

} // namespace cuda
} // namespace cca
} // namespace itk
