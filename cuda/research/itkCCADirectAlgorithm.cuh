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
#ifndef itkCCADirectAlgorithm_cuh
#define itkCCADirectAlgorithm_cuh

// The seed papers' other labeling algorithms, benchmark-only: each owns its whole pipeline (its
// kernels on the pixels, not the engine's runs) in a file of its own (itkCCADirect<Name>.cu) and registers
// itself by name; itkCCADirectAlgorithms.cu holds the registry, the raster-order relabel they share, and the
// timed runner behind BenchmarkDirectAlgorithm() (itkCCABenchmark.h).

#include "itkCCARunFeatures.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace itk
{
namespace cca
{
namespace cuda
{

/** A 2-D image of 8-bit pixels on the device (non-zero: foreground), row-major, no padding. */
struct DirectImage
{
  const std::uint8_t * pixels;
  std::uint32_t        width;
  std::uint32_t        height;
  cudaStream_t         stream;
  int                  multiprocessors;
};

class DirectAlgorithm
{
public:
  virtual ~DirectAlgorithm() = default;

  /** 8-connectivity (true) or 4-connectivity. */
  virtual bool
  FullyConnected() const = 0;

  /** Labels `image` into `labels` (width x height, on the device), on image.stream: every foreground pixel gets
   * the raster index of a pixel that stands for its component (the same for all of its pixels: the paper's own
   * numbering); background pixels may hold anything (HA writes only the foreground). */
  virtual void
  Label(const DirectImage & image, std::uint32_t * labels) = 0;

  /** Whether Analyze() computes features (the CCA algorithms); labels-only algorithms (BUF) do not. */
  virtual bool
  ComputesFeatures() const
  {
    return false;
  }

  /** CCA as the paper times it: every component's pixel count, Σx, Σy (sums 0, 1, 2) and bounding box (boxes 0
   * and 1: x, y) at the index of its root, the component's first pixel in raster order, in `features`
   * (numberOfComponents = width * height; only the roots' entries are meaningful). `labels` receives the
   * equivalence forest, not yet a label image: LabelAnalyzed() makes it one. */
  virtual void
  Analyze(const DirectImage &, std::uint32_t *, const DeviceFeatures &)
  {}

  /** After Analyze(): the label image in Label()'s numbering, from the forest Analyze() left in `labels`. */
  virtual void
  LabelAnalyzed(const DirectImage &, std::uint32_t *)
  {}
};

using DirectAlgorithmFactory = std::unique_ptr<DirectAlgorithm> (*)();

void
RegisterDirectAlgorithm(const std::string & name, DirectAlgorithmFactory factory);

/** The algorithm registered as `name`; Error when there is none. */
std::unique_ptr<DirectAlgorithm>
CreateDirectAlgorithm(const std::string & name);

std::vector<std::string>
RegisteredDirectAlgorithms();

// One factory per algorithm file.
std::unique_ptr<DirectAlgorithm>
CreateBlockUnionFind(); // itkCCADirectBlockUnionFind.cu
std::unique_ptr<DirectAlgorithm>
CreateBlockUnionFindPathHalving(); // itkCCADirectBlockUnionFind.cu
std::unique_ptr<DirectAlgorithm>
CreateHA4(); // itkCCADirectHA4.cu
std::unique_ptr<DirectAlgorithm>
CreateHA4OnTheFly(); // itkCCADirectHA4OnTheFly.cu
std::unique_ptr<DirectAlgorithm>
CreateHA4ConflictDetection(); // itkCCADirectHA4ConflictDetection.cu

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
