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
// The engine interface, internal: what the CPU engine (src/) and the CUDA engine (cuda/) implement and
// the engine facade (itkCudaConnectedComponentAnalysisEngine.cxx) drives. Free of ITK and CUDA includes: the
// plain types come from itkCCATypes.h.
#ifndef itkCCAEngine_h
#define itkCCAEngine_h

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "CudaConnectedComponentAnalysisExport.h"
#include "itkCCABasicAttributes.h"
#include "itkCCAHostMemory.h"
#include "itkCCATypes.h"

namespace itk
{
namespace cca
{

CudaConnectedComponentAnalysis_EXPORT std::size_t
                                      ScalarKindSize(ScalarKind kind);
CudaConnectedComponentAnalysis_EXPORT const char *
ScalarKindName(ScalarKind kind);


/** Checks what every engine needs of a request: a dimension of 1 to 3, no empty side, size 1 along unused
 * dimensions, an input buffer; throws Error with one set of messages for both engines. Images of
 * `maxPixels` pixels or more throw Unavailable, naming `indexType` (the engine's index type): the
 * automatic backend then falls back to the CPU engine. Periodic boundaries are refused unless the caller
 * `joinsPeriodic` (the slab engine: the engines label within the image). */
CudaConnectedComponentAnalysis_EXPORT void
ValidateRequest(const Request & request, std::uint64_t maxPixels, const char * indexType, bool joinsPeriodic = false);

/** Checks a ContactRequest as ValidateRequest() does a Request: a dimension of 1 to 3, no empty side, size 1 along
 * unused dimensions, a label buffer of an integer type. */
CudaConnectedComponentAnalysis_EXPORT void
ValidateContactRequest(const ContactRequest & request);

/** How labels are written: value(k) of the k-th component (0-based, raster order of first pixel)
 * is k, plus one from `skipValue` on, which is how ITK steps over the background value. */
struct LabelOutput
{
  void *        data = nullptr;
  ScalarKind    kind = ScalarKind::UInt32;
  std::uint64_t backgroundBits = 0; ///< the background value's bytes, in the output pixel type
  std::uint64_t skipValue = UINT64_MAX;
  /** Optional (post-processing): for each component its new index (0-based), or UINT64_MAX where it was
   * removed and becomes background; the value written is then that of the new index. */
  const std::uint64_t * newIndex = nullptr;
  /** Optional (multi-label input, PostProcessing::writeClassValues): per (new) index, the value written instead
   * of the label: the component's class. Host memory. */
  const std::int64_t * classValue = nullptr;
  std::uint64_t        numberOfClassValues = 0; ///< entries of `classValue` (the kept components)
  /** CUDA engine only: `data` is a device pointer on the engine's device, written in order on the analyzed
   * request's stream (Request::stream): work queued there next sees the labels; without a stream, they are written
   * when WriteLabels() returns. */
  bool onDevice = false;
  /** Only the rows [firstRow, firstRow + numberOfRows) (a row: y + z * sizeY), written from `data` on; 0 rows:
   * the whole image. Host outputs only: the slab engine's face planes. */
  std::uint64_t firstRow = 0;
  std::uint64_t numberOfRows = 0;

  /** Value written for the k-th component (0-based). */
  std::uint64_t
  LabelValue(std::uint64_t k) const
  {
    return cca::LabelValue(k, skipValue);
  }
};

/** Where the LabelMap's lines go: the region's start added to every index, the engines' row (y + z * sizeY)
 * split into y and z. */
struct LineLayout
{
  std::array<std::int64_t, MaxDimension> start{ { 0, 0, 0 } };
  std::uint64_t                          sizeY = 1;
  unsigned int                           dimension = 2;
};

/** Sizes `lines` for `numGroups` groups and `numLines` lines, the new memory left unwritten (huge pages
 * advised on Linux): the engines' ExportLines() fill all of it. */
inline void
ResizeLines(Lines & lines, std::size_t numGroups, std::size_t numLines)
{
  lines.firstLine.resize(numGroups + 1);
  lines.index.clear();
  lines.length.clear();
  lines.index.reserve(numLines);
  lines.length.reserve(numLines);
  AdviseHugePages(lines.index.data(), numLines * sizeof(lines.index[0]));
  AdviseHugePages(lines.length.data(), numLines * sizeof(lines.length[0]));
  lines.index.resize(numLines);
  lines.length.resize(numLines);
}

/** The line of a run of row `row` (y + z * sizeY) starting at x = `begin`, `length` pixels long. */
inline void
SetLine(const LineLayout & layout, std::uint64_t row, std::uint64_t begin, std::uint64_t length, Lines & lines,
        std::uint64_t line)
{
  auto & index = lines.index[line];
  index[0] = layout.start[0] + static_cast<std::int64_t>(begin);
  index[1] = layout.start[1] + static_cast<std::int64_t>(layout.dimension > 1 ? row % layout.sizeY : 0);
  index[2] = layout.start[2] + static_cast<std::int64_t>(layout.dimension > 2 ? row / layout.sizeY : 0);
  lines.length[line] = length;
}

/** The post-processing as the line export applies it (ExportLines()). */
struct RunSelection
{
  /** Per component of the last Analyze(): its new 0-based index, or UINT64_MAX if removed; nullptr: all
   * components, in label order. */
  const std::uint64_t * newIndex = nullptr;
  /** How many components are kept (the new indices are 0 .. numKept - 1). */
  std::uint64_t numKept = 0;
};

/** One labeling engine. Analyze() labels and measures; the label image is written by a separate
 * WriteLabels() so that the caller can check the component count against the output pixel type
 * before any output pixel is written (as ITK does). An engine may keep buffers between calls. */
class CudaConnectedComponentAnalysis_EXPORT Engine
{
public:
  virtual ~Engine();

  /** Short name for reports: "CPU", "CUDA". */
  virtual std::string
  GetName() const = 0;

  /** Longer description (device name, thread count). */
  virtual std::string
  GetDescription() const = 0;

  /** Labels the request's image and computes the features; returns the number of components.
   * The request's buffers must stay valid until WriteLabels() returns. */
  virtual std::uint64_t
  Analyze(const Request & request) = 0;

  /** Features of the last Analyze(), in label order. */
  virtual const std::vector<ComponentSums> &
  GetFeatures() const = 0;

  /** The intensity sums of the last Analyze() (Request::feature), in label order; empty without a feature image. */
  virtual const IntensitySums &
  GetIntensitySums() const = 0;

  /** Writes the label image of the last Analyze() (raster order, same size as the input). */
  virtual void
  WriteLabels(const LabelOutput & output) = 0;

  /** The LabelMap's lines: the runs of the last Analyze(), grouped by component, each component's in raster
   * order, written straight in the lines' layout (one pass over fresh memory, no intermediate table). With
   * `selection.newIndex`, only the kept components' runs, grouped in their new order: firstLine then has
   * selection.numKept + 1 entries. The lines are written on `numberOfThreads` host threads (0: the
   * engine's own count). */
  virtual void
  ExportLines(const LineLayout & layout, const RunSelection & selection, unsigned numberOfThreads, Lines & lines) = 0;

  /** The basic columns (itkCCABasicAttributes.h) of the last Analyze()'s components, straight from the
   * engine's per-sum arrays, no ComponentSums rows: component k goes to row k, or with `newIndex` (the
   * post-processing's table, host memory) to row newIndex[k], removed ones nowhere. The CUDA engine writes
   * device columns on the device; the CPU engine only host columns. */
  virtual void
  WriteBasicColumns(const BasicGeometry & geometry, const BasicColumns & columns, const std::uint64_t * newIndex) = 0;

  /** Which labels of `request`'s label image touch, and how much; independent of Analyze(), whose results it may
   * not keep. Throws Unavailable where this engine cannot take the labels (the automatic backend then asks the CPU
   * engine). */
  virtual void
  ComputeContacts(const ContactRequest & request, ContactTable & table) = 0;

  // What the slab engine (itkCCASlabEngine.h) needs to cut an image for this engine.

  /** The most pixels one Analyze() takes (the engine's index type). */
  virtual std::uint64_t
  GetMaximumPixels() const = 0;

  /** The working memory an Analyze() of `request` and its outputs take at most, per pixel (every other pixel a
   * run and a component), in the memory Request::memoryBudget counts. */
  virtual double
  GetWorstCaseBytesPerPixel(const Request & request) const = 0;
};

/** The basic columns of the components with sums `sums` (component k to row k, or to row newIndex[k], removed
 * ones nowhere) on `numberOfThreads` host threads: the CPU engine's and the slab engine's WriteBasicColumns(). */
CudaConnectedComponentAnalysis_EXPORT void
WriteBasicColumnsOfSums(const std::vector<ComponentSums> & sums, const BasicGeometry & geometry,
                        const BasicColumns & columns, const std::uint64_t * newIndex, unsigned numberOfThreads);

/** The CPU engine: available everywhere. It starts at most `numberOfThreads` threads (0: all hardware
 * threads) and cuts the image into `numberOfWorkUnits` blocks of rows (0: one per thread), handed out to its
 * threads as they come free, as ITK's multithreaders do with work units. */
CudaConnectedComponentAnalysis_EXPORT std::unique_ptr<Engine>
                                      CreateCPUEngine(unsigned numberOfThreads = 0, unsigned numberOfWorkUnits = 0);

/** Whether this build has the CUDA engine compiled in. */
CudaConnectedComponentAnalysis_EXPORT bool
IsCudaEngineCompiled();

/** Number of usable CUDA devices (0 without a CUDA build or without a driver/device); `reason`
 * receives why none is usable. */
CudaConnectedComponentAnalysis_EXPORT int
GetCudaDeviceCount(std::string * reason = nullptr);

/** The CUDA engine on `deviceId`; throws Unavailable when there is no CUDA build or no such device. */
CudaConnectedComponentAnalysis_EXPORT std::unique_ptr<Engine>
                                      CreateCudaEngine(int deviceId);

/** The LabelMap's attribute calculator for the components with sums `sums` (itkCCAShapeAttributes.cxx);
 * `sums` and `lines` must outlive it. */
std::unique_ptr<ShapeAttributeCalculator>
MakeShapeAttributeCalculator(const std::vector<ComponentSums> & sums, const Geometry & geometry,
                             const ShapeOptions & options, const Lines & lines);

} // namespace cca
} // namespace itk

#endif
