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
// The research library (CudaConnectedComponentAnalysisResearch: the benchmark and the GPU tests link it,
// the module's library does not): the paper's feature variants and the device-resident timings.
//
// Device-resident timing of the CUDA engine, for examples/CudaConnectedComponentAnalysisBenchmark:
// the image is uploaded once, then each run is timed with CUDA events around the on-device work
// only (the paper's method). ITK-free; throws Unavailable in a build without CUDA.
#ifndef itkCCABenchmark_h
#define itkCCABenchmark_h

#include "itkCCAEngine.h"

namespace itk
{
namespace cca
{

struct DeviceResidentTimings
{
  std::string         device;
  std::uint64_t       components = 0;
  std::vector<double> featuresMs;          ///< labeling + features, features left on the device
  std::vector<double> featuresAndLabelsMs; ///< the same plus the label image written on the device
};

DeviceResidentTimings
BenchmarkCudaDeviceResident(const Request & hostRequest, int deviceId, int warmupRuns, int timedRuns);

/** Host<->device copy rates in GB/s (10^9 bytes/s), best of the timed runs, each measured on its own:
 * cudaMemcpy from and to page-locked host memory (the PCIe ceiling), from and to ordinary (pageable)
 * host memory, and the engine's own path between an ordinary host buffer (such as an ITK image) and the
 * device, through its pinned staging buffers. */
struct TransferRates
{
  std::string   device;
  std::uint64_t bytes = 0;
  double        pinnedToDevice = 0;
  double        pinnedToHost = 0;
  double        pageableToDevice = 0;
  double        pageableToHost = 0;
  double        stagedToDevice = 0;
  double        stagedToHost = 0;
};

TransferRates
BenchmarkCudaTransfers(int deviceId, std::uint64_t bytes, int timedRuns);

/** Makes the CUDA engine's research feature variants (FLSL+OTF, FLSL, naive: Lemaitre et al. 2021, Table 1)
 * available to Request::featureAlgorithm; the library itself has only FLSL+CD. Idempotent; a no-op without
 * CUDA. */
void
RegisterResearchFeatureVariants();

} // namespace cca
} // namespace itk

#endif
