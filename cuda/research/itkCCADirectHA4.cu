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
// HA (HA4, 64-bit): the strips, then each sub-run start adds its features at its root with atomics (Alg. 6).

#include "itkCCADirectHA4.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{
struct AtomicsPerSubRun
{
  static void
  Analyze(const DirectImage & image, std::uint32_t * labels, const DeviceFeatures & features)
  {
    ha4::LaunchStrips(image, labels, ha4::LinkOnly{ features });
    ha4::LaunchFeatures<false>(image, labels, features);
  }
};
} // namespace

std::unique_ptr<DirectAlgorithm>
CreateHA4()
{
  return std::make_unique<ha4::Algorithm<AtomicsPerSubRun>>();
}

} // namespace cuda
} // namespace cca
} // namespace itk
