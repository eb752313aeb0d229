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
// the module's library does not): the paper's feature variants, the seed papers' direct algorithms and the
// device-resident timings.
//
// Device-resident timing of the CUDA engine, for examples/CudaConnectedComponentAnalysisBenchmark:
// the image is uploaded once, then each run is timed with CUDA events around the on-device work
// only (the paper's method). ITK-free; throws Unavailable in a build without CUDA.
#ifndef itkCCABenchmark_h
#define itkCCABenchmark_h

#include "itkCCAEngine.h"

#include <memory>
#include <string>
#include <vector>

namespace itk
{
namespace cca
{

/** How the CUDA engine accumulates the per-component features (Lemaitre et al. 2021, Table 1). All give the
 * same result; the research library has them to reproduce the paper's comparison (LabelsOnly: the same labels,
 * no features, to compare with labels-only algorithms). The module's library has the default alone. */
enum class FeatureAlgorithm : std::uint8_t
{
  ConflictDetection, ///< FLSL+CD: per-run contributions voted with __match_any_sync (the engine's own)
  OnTheFlyMerge,     ///< FLSL+OTF: features move with the union-find links as runs merge
  RunAtomics,        ///< FLSL: one set of atomics per run
  PixelAtomics,      ///< naive: one set of atomics per pixel, after labeling
  LabelsOnly         ///< no features: the labeling path alone, for the benchmark (its features are refused)
};

/** The paper's name of `algorithm` ("FLSL+CD", ...). */
inline const char *
FeatureAlgorithmName(FeatureAlgorithm algorithm)
{
  switch (algorithm)
  {
    case FeatureAlgorithm::ConflictDetection:
      return "FLSL+CD";
    case FeatureAlgorithm::OnTheFlyMerge:
      return "FLSL+OTF";
    case FeatureAlgorithm::RunAtomics:
      return "FLSL";
    case FeatureAlgorithm::PixelAtomics:
      return "naive";
    case FeatureAlgorithm::LabelsOnly:
      return "labels only";
  }
  return "unknown";
}

/** The CUDA engine on `deviceId` with `algorithm`'s feature stage: the engine the module's library makes
 * (CreateCudaEngine()) for ConflictDetection. Throws Unavailable without CUDA or without such a device. */
std::unique_ptr<Engine>
CreateResearchCudaEngine(int deviceId, FeatureAlgorithm algorithm);

struct DeviceResidentTimings
{
  std::string         device;
  std::uint64_t       components = 0;
  std::vector<double> featuresMs;          ///< labeling + features, features left on the device
  std::vector<double> featuresAndLabelsMs; ///< the same plus the label image written on the device
};

/** Times `algorithm`'s engine on the request's image, uploaded once (no mask). */
DeviceResidentTimings
BenchmarkCudaDeviceResident(const Request & hostRequest, int deviceId, int warmupRuns, int timedRuns,
                            FeatureAlgorithm algorithm = FeatureAlgorithm::ConflictDetection);

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

/** The seed papers' other labeling algorithms, for the benchmark only, each with its own kernels on a
 * device-resident 2-D image of 8-bit pixels (non-zero: foreground), by name: "buf" (Allegretti et al. 2019, the
 * block-based union-find, 8-connectivity, labels only). Each run is timed with CUDA events twice: the algorithm as
 * its paper has it (its own label numbering), and with the labels then put into raster order (ITK's numbering:
 * 1..K by each component's first pixel), so that they can be compared pixel for pixel. */
struct DirectLabelingTimings
{
  std::string         device;
  std::string         algorithm;
  bool                fullyConnected = false;
  bool                computesFeatures = false; ///< a CCA algorithm (HA4 and its variants), not BUF
  std::uint64_t       components = 0;
  std::vector<double> labelsMs;              ///< CCL: the label image in the algorithm's own numbering
  std::vector<double> labelsInRasterOrderMs; ///< the same plus the raster-order relabel
  std::vector<double> featuresMs;            ///< CCA: features at each root, no label image (the paper's
                                             ///< metric, as mode a times ours)
  std::vector<std::uint32_t> labels;         ///< raster-order labels of the last run, if asked for
  /** With keepLabels and a CCA algorithm: the last CCA run's forest made a label image (LabelAnalyzed), in
   * raster order, and each component's features from that run in the same order (label 1 first): pixel count,
   * Σx, Σy and the bounding box. */
  std::vector<std::uint32_t> analyzedLabels;
  std::vector<std::uint64_t> count, sumX, sumY;
  std::vector<std::uint32_t> minX, minY, maxX, maxY;
};

/** The names RegisterDirectAlgorithms() made available to BenchmarkDirectAlgorithm(). */
std::vector<std::string>
DirectAlgorithmNames();

/** Whether `algorithm` labels with 8-connectivity (else 4). Throws Error for an unknown name. */
bool
DirectAlgorithmFullyConnected(const std::string & algorithm);

/** Uploads `pixels` (width x height, row-major) once, then runs `algorithm` `warmupRuns` + `timedRuns` times
 * (its CCL, and for a CCA algorithm its CCA); with `keepLabels` the last CCL run's raster-order labels, and the
 * last CCA run's features in raster order, come back. Throws Error for an unknown name, Unavailable
 * without CUDA. */
DirectLabelingTimings
BenchmarkDirectAlgorithm(const std::string & algorithm, const std::uint8_t * pixels, std::uint32_t width,
                         std::uint32_t height, int deviceId, int warmupRuns, int timedRuns, bool keepLabels);

/** Makes the seed papers' direct algorithms (BUF, HA4 and its variants) available to BenchmarkDirectAlgorithm().
 * Idempotent; a no-op without CUDA. */
void
RegisterDirectAlgorithms();

} // namespace cca
} // namespace itk

#endif
