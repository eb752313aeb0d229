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
#ifndef itkCudaConnectedComponentAnalysisEngine_h
#define itkCudaConnectedComponentAnalysisEngine_h

#include "CudaConnectedComponentAnalysisExport.h"
#include "itkCCATypes.h"
#include "itkCudaConnectedComponentAnalysisEnums.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace itk
{

/** \class CudaConnectedComponentAnalysisEngine
 * \brief The engines of CudaConnectedComponentAnalysisImageFilter behind one narrow, non-template,
 * compiled interface: engine choice (CUDA, CPU, or Automatic with the CPU fallback), the engine kept between
 * updates, labeling and measuring, the label image, and what the LabelMap needs (its lines, and its shape
 * attributes computed from the engines' exact sums).
 *
 * The filter owns one; the engines themselves (src/, cuda/) are internal to the module's library.
 * \ingroup CudaConnectedComponentAnalysis
 */
class CudaConnectedComponentAnalysis_EXPORT CudaConnectedComponentAnalysisEngine
{
public:
  using Backend = CudaConnectedComponentAnalysisEnums::Backend;

  /** The plain types (src/itkCCATypes.h), as the filter names them. */
  using Error = cca::Error;             ///< every failure; the filter turns it into an itk::ExceptionObject
  using MemoryError = cca::OutOfMemory; ///< host or device memory ran out; what() says what was being allocated
  using PostProcessing = cca::PostProcessing;
  using Request = cca::Request;
  using Geometry = cca::Geometry;
  using ShapeOptions = cca::ShapeOptions;
  using ShapeAttributes = cca::ShapeAttributes;
  using Lines = cca::Lines;
  using ShapeAttributeCalculator = cca::ShapeAttributeCalculator;

  CudaConnectedComponentAnalysisEngine();
  ~CudaConnectedComponentAnalysisEngine();
  CudaConnectedComponentAnalysisEngine(const CudaConnectedComponentAnalysisEngine &) = delete;
  CudaConnectedComponentAnalysisEngine &
  operator=(const CudaConnectedComponentAnalysisEngine &) = delete;

  /** Labels and measures the request's image on `backend` and returns the number of components (those kept by
   * the request's post-processing; everything below then sees only those, in their new order). The engine
   * is kept for the next call with the same backend, device, thread and work unit counts. Automatic uses the
   * CPU engine for images of fewer than 24,576 pixels (faster there, measured), else the CUDA engine where a
   * device is usable and the image fits it, else the CPU engine and says so once per process; an image in GPU
   * memory (Request::inputOnDevice) always goes to the CUDA engine. The CPU engine starts at most `numberOfThreads`
   * threads (0: all hardware threads) and cuts the image into `numberOfWorkUnits` blocks (0: one per thread). */
  std::uint64_t
  Analyze(const Request & request, Backend backend, int deviceId, unsigned numberOfThreads,
          unsigned numberOfWorkUnits = 0);

  /** Which labels of a label image touch, and how much (cca::ContactRequest, cca::ContactTable: cc3d's contacts and
   * region_graph), on `backend`: Automatic as Analyze() chooses (the CPU engine for small images, else the GPU where
   * there is one; labels in GPU memory: the CUDA engine). The last Analyze()'s results are not kept. */
  cca::ContactTable
  ComputeContacts(const cca::ContactRequest & request, Backend backend, int deviceId, unsigned numberOfThreads);

  /** The engine that ran the last ComputeContacts(): Backend::CUDA or Backend::CPU (Automatic before any). */
  Backend
  GetContactsBackendUsed() const;

  /** Into how many slabs the last Analyze() cut the image (1: whole): where it needed more memory than
   * Request::memoryBudget (or, by default, than the engine had), or more pixels than the engine's indices reach,
   * the image was labeled in slabs along its slowest axis and merged, with the same result. */
  std::uint64_t
  GetNumberOfSlabs() const;

  /** The number of components the last Analyze() labeled, before its post-processing. */
  std::uint64_t
  GetOriginalComponentCount() const;

  /** The engine that ran the last Analyze(): Backend::CUDA or Backend::CPU (Automatic before any). */
  Backend
  GetBackendUsed() const;

  /** That engine's description (device name, thread count). */
  std::string
  GetDescription() const;

  /** The raw sums of the last Analyze()'s (kept) components, in label order. */
  const std::vector<cca::ComponentSums> &
  GetComponentSums() const;

  /** Writes the label image of the last Analyze() into `data` (raster order, the input's size): the k-th
   * (kept) component (0-based) gets the value k, plus one from `skipValue` on; background pixels (and
   * removed components) the value whose bytes are `backgroundBits`. With `dataOnDevice`, `data` is GPU memory
   * of the device that analyzed (an image analyzed with Request::inputOnDevice), written there in order on the
   * request's stream: work queued on Request::stream after this call sees the labels (without a stream, they are
   * written when the call returns), as CUDA libraries order their calls. A batch
   * (Request::batchExtent: a stack of images, each labeled on its own) is numbered over the whole stack in
   * raster order (image by image), or with `restartPerImage` from the first value again in each image; its
   * table comes from WriteBasicColumns() with BasicColumns::batchStride = batchExtent (the `image` column, and
   * boxes and centroids within each image). A batch's post-processing (sorting, keeping N) is per image. */
  void
  WriteLabels(void * data, cca::ScalarKind kind, std::uint64_t backgroundBits, std::uint64_t skipValue,
              bool dataOnDevice = false, bool restartPerImage = false);

  /** The basic columns of the last Analyze()'s (kept) components, in label order, straight from the engine's
   * per-sum arrays: pixels, physical size, bounding box, centroid (itkCCATypes.h). Host pointers, or with
   * columns.onDevice GPU memory of the device that analyzed (the CUDA engine), written in order on the request's
   * stream as WriteLabels() writes. */
  void
  WriteBasicColumns(const Geometry & geometry, const cca::BasicColumns & columns);

  /** Whether WriteBasicColumns() can write GPU columns for the last Analyze(): not where its components were
   * merged on the host (slabs, periodic boundaries); host columns then. */
  bool
  CanWriteDeviceColumns() const;

  /** The lines of the last Analyze()'s components. */
  void
  ComputeLines(const Geometry & geometry, Lines & lines);

  /** The calculator for the last Analyze()'s components; `lines` (from ComputeLines(), kept alive by the
   * caller) serve the Feret diameter and the oriented bounding box. */
  std::unique_ptr<ShapeAttributeCalculator>
  MakeShapeAttributeCalculator(const Geometry & geometry, const ShapeOptions & options, const Lines & lines) const;

  /** Whether the last Analyze() had a feature image (Request::feature) and found components: then
   * ComputeIntensityStatistics() gives each (kept) component's StatisticsLabelObject attributes. */
  bool
  HasIntensityStatistics() const;

  /** The intensity statistics of the k-th (kept) component of the last Analyze() (itkCCATypes.h: all of
   * StatisticsLabelMapFilter's but the median and the histogram), from the engine's intensity sums alone. Without
   * `weightedMoments` the weighted principal moments, axes, elongation and flatness (an eigen-decomposition each)
   * are left 0. Thread-safe; throws cca::Error for a k out of range. */
  void
  ComputeIntensityStatistics(std::uint64_t k, const Geometry & geometry, cca::IntensityStatistics & statistics,
                             bool weightedMoments = true) const;

  /** Engines outlive their facade: a destroyed filter's engine (its device and page-locked buffers, its host
   * tables) serves the next filter of the same backend, device and thread count. This frees the kept ones. */
  static void
  ReleaseCachedEngines();

  /** Whether the LabelMap's moments of an image of this size (unused dimensions 1) can be computed exactly:
   * every image with a side below about 3.6·10^9 pixels (compilers with 128-bit integers). */
  static bool
  CanMeasureMoments(const std::array<std::uint64_t, cca::MaxDimension> & size);

  /** Starts, now, the engine that Analyze() with `backend` would take for a host image of `numberOfPixels` pixels,
   * and keeps it for the next facade: the CUDA engine's start-up (driver, context, module, stream, page-locked
   * buffers: a few hundred milliseconds once per process) paid beside other work, such as reading the image. Does
   * nothing where that engine is the CPU engine (which starts in no time) or already kept; says nothing where the
   * GPU is unusable, which the analysis then reports. Returns whether a CUDA engine is ready. Thread-safe: a
   * facade that needs the engine before it is ready makes its own. */
  static bool
  StartEngine(Backend backend, int deviceId, std::uint64_t numberOfPixels);

  /** Whether this build has the CUDA engine, and how many CUDA devices it can use now (`reason`: why none). */
  static bool
  IsCudaEngineCompiled();
  static int
  GetCudaDeviceCount(std::string * reason = nullptr);

  /** Runs `beside` on a thread of its own while `main` runs on this one (or, with no thread to be had, first),
   * and returns when both have. The first exception of `main` is rethrown, else `beside`'s: the filter writes
   * its label image beside the LabelMap's build on the host, which needs nothing from it. One engine serves
   * one call at a time: `main` must not call the engine while `beside` does. */
  static void
  RunBeside(const std::function<void()> & beside, const std::function<void()> & main);

  /** Where the facade's warnings go (the automatic backend's fallback to the CPU engine, said once per
   * process): `handler(text)`, text ending in a newline. The filter routes them to ITK's output window, the
   * Python package to Python's warnings; nullptr restores the default, standard error. */
  using WarningHandler = void (*)(const char * text);
  static void
  SetWarningHandler(WarningHandler handler);

private:
  struct Internals;
  std::unique_ptr<Internals> m_Internals;
};

} // namespace itk

#endif
