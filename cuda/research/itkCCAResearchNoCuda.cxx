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
// The research library (CudaConnectedComponentAnalysisResearch) in a build without CUDA: the benchmark's
// device timings say why they cannot run, and there is no direct algorithm to register.
#include "itkCCABenchmark.h"

namespace itk
{
namespace cca
{
std::unique_ptr<Engine>
CreateResearchCudaEngine(int, FeatureAlgorithm)
{
  throw Unavailable("this build has no CUDA engine (configured without a CUDA compiler)");
}

DeviceResidentTimings
BenchmarkCudaDeviceResident(const Request &, int, int, int, FeatureAlgorithm)
{
  throw Unavailable("this build has no CUDA engine (configured without a CUDA compiler)");
}

TransferRates
BenchmarkCudaTransfers(int, std::uint64_t, int)
{
  throw Unavailable("this build has no CUDA engine (configured without a CUDA compiler)");
}
std::vector<std::string>
DirectAlgorithmNames()
{
  return {};
}

bool
DirectAlgorithmFullyConnected(const std::string &)
{
  throw Unavailable("this build has no CUDA engine (configured without a CUDA compiler)");
}

DirectLabelingTimings
BenchmarkDirectAlgorithm(const std::string &, const std::uint8_t *, std::uint32_t, std::uint32_t, int, int, int, bool)
{
  throw Unavailable("this build has no CUDA engine (configured without a CUDA compiler)");
}

void
RegisterDirectAlgorithms()
{}
} // namespace cca
} // namespace itk
