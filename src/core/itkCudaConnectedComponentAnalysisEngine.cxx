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
// The engine facade of the filter: the analysis on the engine chosen (itkCCAEngineChoice.h), whole or in slabs, the
// post-processing's selection, and the conversions between the engines' runs and sums and what the filter's
// outputs need.

#include "itkCudaConnectedComponentAnalysisEngine.h"

#include "itkCCALineMoments.h"

#include "itkCCAComponentSelection.h"
#include "itkCCAEngine.h"
#include "itkCCAEngineChoice.h"
#include "itkCCAIntensityStatistics.h"
#include "itkCCAHostMemory.h"
#include "itkCCAParallelFor.h"
#include "itkCCASlabEngine.h"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <iostream>
#include <exception>
#include <system_error>
#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>
#include <sstream>

namespace itk
{
namespace
{
/** Throws where a class value (read as the input's kind `classKind` reads it) does not fit the output pixel kind
 * `outputKind`: a cleaned segmentation must not wrap its classes around. */
void
CheckClassValuesFit(const std::vector<std::int64_t> & classes, cca::ScalarKind classKind, cca::ScalarKind outputKind)
{
  const bool   isFloat = outputKind == cca::ScalarKind::Float32 || outputKind == cca::ScalarKind::Float64;
  const bool   isSigned = outputKind == cca::ScalarKind::Int8 || outputKind == cca::ScalarKind::Int16 ||
                        outputKind == cca::ScalarKind::Int32 || outputKind == cca::ScalarKind::Int64;
  const auto   bits = static_cast<unsigned>(8 * cca::ScalarKindSize(outputKind));
  const double lowest = isSigned ? -std::ldexp(1.0, static_cast<int>(bits) - 1) : 0.0;
  const double highest = isSigned ? std::ldexp(1.0, static_cast<int>(bits) - 1) - 1 : std::ldexp(1.0, static_cast<int>(bits)) - 1;
  for (const std::int64_t c : classes)
  {
    // An unsigned 64-bit input keeps its value's bits in the int64.
    const double value = classKind == cca::ScalarKind::UInt64 ? static_cast<double>(static_cast<std::uint64_t>(c))
                                                              : static_cast<double>(c);
    if (!isFloat && (value < lowest || value > highest))
    {
      std::ostringstream message;
      message << "the class value " << (classKind == cca::ScalarKind::UInt64 ? std::to_string(static_cast<std::uint64_t>(c)) : std::to_string(c))
              << " does not fit the output pixel type " << cca::ScalarKindName(outputKind)
              << ": the class values are written as they are";
      throw cca::Error(message.str());
    }
  }
}

} // namespace

struct CudaConnectedComponentAnalysisEngine::Internals : cca::EngineChoice
{
  /** The engine of the last ComputeContacts(). */
  Backend contactsBackend = Backend::Automatic;
  /** The slab engines' host tables, kept from one analysis to the next (their memory's pages already there). */
  cca::SlabTables slabTables;
  /** Over `engine`, where the last Analyze() cut the image into slabs (Request::memoryBudget). */
  std::unique_ptr<cca::SlabEngine> slabEngine;
  Request                          lastRequest; ///< its buffers valid until its outputs are written

  /** `step` (an output of the last analysis); where it runs out of memory after a whole analysis under the
   * default budget, the analysis again in slabs of half the planes (the same sums, so the post-processing's
   * selection stands), then `step` again. Not for the label image: the filter writes it beside the LabelMap's
   * build, which reads the sums this would replace. */
  template <typename TStep>
  void
  InSlabsWhereOutOfMemory(const TStep & step)
  {
    try
    {
      step();
    }
    catch (const cca::OutOfMemory &)
    {
      if (!slabEngine && partner)
      {
        ReleasePartner(); // a partner kept from an earlier analysis in slabs holds device memory
        step();
        return;
      }
      const std::uint64_t planes = lastRequest.size[lastRequest.dimension - 1];
      if (slabEngine || lastRequest.memoryBudget != 0 || !cca::CanCutIntoSlabs(lastRequest) || planes < 2)
      {
        throw;
      }
      const Backend analyzed = used;
      used = Backend::Automatic; // no half-made analysis is ever used: Analyzed() throws until this one is done
      AnalyzeWholeOrInSlabs(*engine, lastRequest, numberOfThreads, planes / 2);
      used = analyzed;
      description = Analyzed().GetDescription();
      step();
    }
  }
  Backend       used{ Backend::Automatic };
  std::string   description;
  std::uint64_t pixels{ 0 }; ///< of the last Analyze()
  /** The last Analyze()'s post-processing, when it had one: the kept components and their sums. */
  std::uint64_t                   originalCount{ 0 };
  unsigned                        numberOfThreads{ 0 }; ///< of the last Analyze(): the filter's work units
  bool                            selected{ false };
  cca::ComponentSelection         selection;
  std::vector<cca::ComponentSums> selectedSums;
  cca::IntensitySums              selectedIntensity; ///< the kept components' intensity sums (a feature image)
  bool                            hasIntensity{ false }; ///< the last Analyze() had a feature image
  /** A batch's (Request::batchExtent): its dimension, extent and number of images; the label table that
   * numbers each image's components from 1, made on the first WriteLabels() that asks for it. */
  unsigned                   batchDimension{ 0 };
  std::uint64_t              batchExtent{ 0 };
  std::uint64_t              batchImages{ 0 };
  bool                       restartReady{ false };
  std::vector<std::uint64_t> restartIndex;
  /** Multi-label input with PostProcessing::writeClassValues: the label image gets each kept component's class
   * value, by its (new) index. */
  bool                      writeClassValues{ false };
  cca::ScalarKind           classKind{ cca::ScalarKind::UInt8 }; ///< the input's: how to read a class value
  std::vector<std::int64_t> classOfIndex;

  /** For each component of the analysis, its index within its image (in the kept components' order), or
   * UINT64_MAX where the post-processing removed it. */
  const std::uint64_t *
  RestartTable()
  {
    if (restartReady)
    {
      return restartIndex.data();
    }
    const std::uint64_t * newIndex = selected ? selection.newIndex.data() : nullptr;
    const std::uint64_t   kept = selected ? selection.order.size() : originalCount;
    // Each kept component's image, from the engine's image column (on the GPU: one column comes back).
    std::vector<std::int64_t> image(static_cast<std::size_t>(kept));
    cca::BasicColumns         columns;
    columns.image = image.data();
    columns.batchStride = batchExtent;
    cca::BasicGeometry geometry;
    geometry.dimension = batchDimension;
    Analyzed().WriteBasicColumns(geometry, columns, newIndex);
    std::vector<std::uint64_t> next(static_cast<std::size_t>(batchImages), 0);
    std::vector<std::uint64_t> rank(static_cast<std::size_t>(kept));
    for (std::size_t j = 0; j < rank.size(); ++j)
    {
      rank[j] = next[static_cast<std::size_t>(image[j])]++;
    }
    restartIndex.resize(static_cast<std::size_t>(originalCount));
    for (std::size_t k = 0; k < restartIndex.size(); ++k)
    {
      const std::uint64_t j = newIndex ? newIndex[k] : k;
      restartIndex[k] = j == UINT64_MAX ? UINT64_MAX : rank[static_cast<std::size_t>(j)];
    }
    restartReady = true;
    return restartIndex.data();
  }

  /** classOfIndex from the (kept) components' sums. */
  void
  StoreClassValues()
  {
    const std::vector<cca::ComponentSums> & sums = Sums();
    classOfIndex.resize(sums.size());
    for (std::size_t j = 0; j < sums.size(); ++j)
    {
      classOfIndex[j] = sums[j].classValue;
    }
  }

  const std::vector<cca::ComponentSums> &
  Sums() const
  {
    return selected ? selectedSums : Analyzed().GetFeatures();
  }

  const cca::IntensitySums &
  Intensity() const
  {
    return selected ? selectedIntensity : Analyzed().GetIntensitySums();
  }

  /** selectedIntensity: the analysis's intensity sums of the kept components, in their new order. */
  void
  SelectIntensity()
  {
    const cca::IntensitySums & all = Analyzed().GetIntensitySums();
    const std::uint64_t        k = all.numberOfComponents;
    const std::uint64_t        kept = selection.order.size();
    selectedIntensity.Clear();
    if (k == 0)
    {
      return;
    }
    selectedIntensity.Resize(kept);
    for (unsigned c = 0; c < cca::IntensitySums::NumberOfColumns; ++c)
    {
      for (std::uint64_t j = 0; j < kept; ++j)
      {
        selectedIntensity.values[c * kept + j] = all.values[c * k + selection.order[j]];
      }
    }
    for (unsigned c = 0; c < cca::IntensitySums::NumberOfIntegerColumns; ++c)
    {
      for (std::uint64_t j = 0; j < kept; ++j)
      {
        selectedIntensity.integers[c * kept + j] = all.integers[c * k + selection.order[j]];
      }
    }
  }

  cca::Engine &
  Analyzed() const
  {
    if (!engine || used == Backend::Automatic)
    {
      throw Error("no successful Analyze() before");
    }
    return slabEngine ? *slabEngine : *engine;
  }

  /** AcquirePartner(), or nullptr where no partner can be made (the slab engine then uses one engine). */
  cca::Engine *
  TryPartner()
  {
    try
    {
      return AcquirePartner();
    }
    catch (const std::exception &)
    {
      ReleasePartner();
      return nullptr;
    }
  }

  /** `request` on `chosen`, whole or, where it needs more than the engine can take (an explicit
   * Request::memoryBudget, the engine's pixel limit), in slabs: on the CUDA engine with a partner engine that
   * holds the slab before the last (SlabEngine), where an explicit budget, halved between the two, still takes
   * slabs as thick. Where the GPU runs out of memory, the partner goes first; then, under the default budget, the
   * engine tries again with half as many planes per slab, down to one.
   * `planesPerSlab`: where to start (0: whole), else what PlanesPerSlab() says. */
  std::uint64_t
  AnalyzeWholeOrInSlabs(cca::Engine & chosen, const Request & request, unsigned numberOfThreads,
                        std::uint64_t planesPerSlab = UINT64_MAX)
  {
    if (planesPerSlab == UINT64_MAX)
    {
      planesPerSlab = cca::PlanesPerSlab(chosen, request);
    }
    if (planesPerSlab == 0 && request.connectivity.periodicAxes != 0)
    {
      planesPerSlab = request.size[request.dimension - 1]; // one slab: the slab engine joins the wrapped faces
    }
    if (request.connectivity.HasValueTolerance() && request.memoryBudget != 0)
    {
      throw cca::Error("a value tolerance is not applied in slabs: no memory budget with a value tolerance");
    }
    if (request.feature && request.memoryBudget != 0)
    {
      throw cca::Error("intensity statistics (a feature image) are not computed in slabs: no memory budget with a "
                       "feature image");
    }
    lastRequest = request;
    bool withPartner = &chosen == engine.get();
    for (;;)
    {
      slabEngine.reset();
      try
      {
        if (planesPerSlab == 0)
        {
          return chosen.Analyze(request);
        }
        if (withPartner && request.memoryBudget != 0)
        {
          // Each engine holds one slab: half the budget each, or one engine where that would thin the slabs
          // (more slabs cost more than a second analysis of one: measured).
          Request half = request;
          half.memoryBudget = std::max<std::uint64_t>(1, request.memoryBudget / 2);
          withPartner = cca::PlanesPerSlab(chosen, half) >= planesPerSlab;
        }
        const bool    severalSlabs = planesPerSlab < request.size[request.dimension - 1];
        cca::Engine * second = withPartner && severalSlabs ? TryPartner() : nullptr;
        auto slabs = std::make_unique<cca::SlabEngine>(chosen, numberOfThreads, &slabTables, second);
        const std::uint64_t count = slabs->AnalyzeInSlabs(request, planesPerSlab);
        slabEngine = std::move(slabs);
        return count;
      }
      catch (const cca::OutOfMemory &)
      {
        slabEngine.reset();
        if (partner)
        {
          ReleasePartner();
          withPartner = false;
          continue;
        }
        const std::uint64_t planes = request.size[request.dimension - 1];
        const std::uint64_t tried = planesPerSlab == 0 ? planes : planesPerSlab;
        if (request.memoryBudget != 0 || !cca::CanCutIntoSlabs(request) || tried <= 1)
        {
          throw;
        }
        planesPerSlab = tried / 2;
      }
    }
  }
};

namespace
{
/** Runs `step`, turning std::bad_alloc (and the std::length_error of an impossible size) in host code here
 * into cca::OutOfMemory naming `what`; the engines' own errors are the facade's already (itkCCATypes.h). */
template <typename TStep>
auto
Translated(const char * what, const TStep & step) -> decltype(step())
{
  try
  {
    return step();
  }
  catch (const std::bad_alloc &)
  {
    throw cca::OutOfMemory(std::string("out of host memory while ") + what);
  }
  catch (const std::length_error &)
  {
    throw cca::OutOfMemory(std::string("out of host memory while ") + what);
  }
}
/** The lines of `engine`'s last Analyze(), the region's start added and the row split into y and z, on
 * `numberOfThreads` threads (0: the engine's); with a post-processing `selection`, only the kept components'
 * lines, in their new order (the engine leaves the others out of its export). */
void
LinesOf(cca::Engine & engine, const CudaConnectedComponentAnalysisEngine::Geometry & geometry,
        const cca::ComponentSelection * selection, unsigned numberOfThreads,
        CudaConnectedComponentAnalysisEngine::Lines & lines)
{
  cca::LineLayout layout;
  layout.dimension = geometry.dimension;
  layout.sizeY = geometry.dimension > 1 ? geometry.size[1] : 1;
  for (unsigned int i = 0; i < cca::MaxDimension; ++i)
  {
    layout.start[i] = geometry.start[i];
  }
  cca::RunSelection runSelection;
  if (selection)
  {
    runSelection.newIndex = selection->newIndex.data();
    runSelection.numKept = selection->order.size();
  }
  engine.ExportLines(layout, runSelection, numberOfThreads, lines);
}
} // namespace

CudaConnectedComponentAnalysisEngine::CudaConnectedComponentAnalysisEngine()
  : m_Internals(std::make_unique<Internals>())
{}

CudaConnectedComponentAnalysisEngine::~CudaConnectedComponentAnalysisEngine() = default;

std::uint64_t
CudaConnectedComponentAnalysisEngine::Analyze(const Request & r, Backend backend, int deviceId,
                                              unsigned numberOfThreads, unsigned numberOfWorkUnits)
{
  Internals & in = *m_Internals;
  in.used = Backend::Automatic;
  in.slabEngine.reset(); // it refers to the engine, which Acquire() may hand to the cache
  in.description.clear();
  const Request & request = r;
  return Translated("labeling the image", [&]() -> std::uint64_t {
    // An image in GPU memory stays there: the CUDA engine or an error, never a copy to the CPU engine.
    if (request.inputOnDevice && backend == Backend::CPU)
    {
      throw cca::Error(
        "the image is in GPU memory: the CPU backend cannot read it (use the CUDA or automatic backend)");
    }
    // A choice by size is not a fallback: nothing to say.
    const Backend chosen =
      request.inputOnDevice ? Backend::CUDA : cca::BackendForHostImage(backend, request.NumberOfPixels());
    cca::Engine * engine = chosen == Backend::Automatic
                             ? &in.AcquireAutomatic(deviceId, numberOfThreads, numberOfWorkUnits)
                             : &in.Acquire(chosen, deviceId, numberOfThreads, numberOfWorkUnits);
    std::uint64_t count = 0;
    try
    {
      count = in.AnalyzeWholeOrInSlabs(*engine, request, numberOfThreads);
    }
    catch (const cca::Error & e)
    {
      // Only the automatic backend may change engines, and only for a reason the CPU engine does not share: the
      // GPU unavailable, or (a feature image, whose intensity sums are not merged across slabs, the GPU's own
      // answer to running out of memory) the GPU's memory exhausted.
      const bool unavailable = dynamic_cast<const cca::Unavailable *>(&e) != nullptr;
      const bool outOfMemory = dynamic_cast<const cca::OutOfMemory *>(&e) != nullptr;
      if (chosen != Backend::Automatic || in.engineBackend == Backend::CPU ||
          !(unavailable || (outOfMemory && request.feature)))
      {
        throw;
      }
      cca::ReportCPUFallbackOnce(e.what());
      engine = &in.Acquire(Backend::CPU, deviceId, numberOfThreads, numberOfWorkUnits);
      count = in.AnalyzeWholeOrInSlabs(*engine, request, numberOfThreads);
    }
    in.used = in.engineBackend;
    in.pixels = request.NumberOfPixels();
    in.description = in.Analyzed().GetDescription();
    in.originalCount = count;
    in.numberOfThreads = numberOfThreads;
    in.batchDimension = request.dimension;
    in.batchExtent = request.batchExtent;
    in.batchImages = request.batchExtent ? request.size[request.dimension - 1] / request.batchExtent : 0;
    in.restartReady = false;
    in.writeClassValues = request.multiLabel && r.postProcessing.writeClassValues;
    in.classKind = request.inputKind;
    in.hasIntensity = request.feature != nullptr;
    in.selected = r.postProcessing.Active();
    if (!in.selected)
    {
      in.selection = cca::ComponentSelection();
      in.selectedSums = std::vector<cca::ComponentSums>();
      in.selectedIntensity = cca::IntensitySums();
      if (in.writeClassValues)
      {
        in.StoreClassValues();
      }
      return count;
    }
    const auto & sums = in.Analyzed().GetFeatures();
    in.selection =
      cca::SelectComponents(sums, r.postProcessing, r.pixelVolume, request.dimension - 1, request.batchExtent);
    in.selectedSums.resize(in.selection.order.size());
    for (std::size_t j = 0; j < in.selection.order.size(); ++j)
    {
      in.selectedSums[j] = sums[in.selection.order[j]];
    }
    in.SelectIntensity();
    if (in.writeClassValues)
    {
      in.StoreClassValues();
    }
    return static_cast<std::uint64_t>(in.selection.order.size());
  });
}

cca::ContactTable
CudaConnectedComponentAnalysisEngine::ComputeContacts(const cca::ContactRequest & request, Backend backend,
                                                      int deviceId, unsigned numberOfThreads)
{
  Internals & in = *m_Internals;
  in.used = Backend::Automatic; // no analysis kept
  in.slabEngine.reset();
  in.description.clear();
  return Translated("finding the touching labels", [&]() {
    if (request.labelsOnDevice && backend == Backend::CPU)
    {
      throw cca::Error(
        "the labels are in GPU memory: the CPU backend cannot read them (use the CUDA or automatic backend)");
    }
    const Backend chosen =
      request.labelsOnDevice ? Backend::CUDA : cca::BackendForHostImage(backend, request.NumberOfPixels());
    cca::Engine *     engine = chosen == Backend::Automatic ? &in.AcquireAutomatic(deviceId, numberOfThreads, 0)
                                                            : &in.Acquire(chosen, deviceId, numberOfThreads, 0);
    cca::ContactTable table;
    try
    {
      engine->ComputeContacts(request, table);
    }
    catch (const cca::Unavailable & e)
    {
      if (chosen != Backend::Automatic || in.engineBackend == Backend::CPU)
      {
        throw;
      }
      cca::ReportCPUFallbackOnce(e.what());
      in.Acquire(Backend::CPU, deviceId, numberOfThreads, 0).ComputeContacts(request, table);
    }
    in.contactsBackend = in.engineBackend;
    return table;
  });
}

CudaConnectedComponentAnalysisEngine::Backend
CudaConnectedComponentAnalysisEngine::GetContactsBackendUsed() const
{
  return m_Internals->contactsBackend;
}

std::uint64_t
CudaConnectedComponentAnalysisEngine::GetNumberOfSlabs() const
{
  return m_Internals->slabEngine ? m_Internals->slabEngine->GetNumberOfSlabs() : 1;
}

std::uint64_t
CudaConnectedComponentAnalysisEngine::GetOriginalComponentCount() const
{
  return m_Internals->originalCount;
}

CudaConnectedComponentAnalysisEngine::Backend
CudaConnectedComponentAnalysisEngine::GetBackendUsed() const
{
  return m_Internals->used;
}

std::string
CudaConnectedComponentAnalysisEngine::GetDescription() const
{
  return m_Internals->description;
}

const std::vector<cca::ComponentSums> &
CudaConnectedComponentAnalysisEngine::GetComponentSums() const
{
  return m_Internals->Sums();
}

void
CudaConnectedComponentAnalysisEngine::WriteLabels(void * data, cca::ScalarKind kind, std::uint64_t backgroundBits,
                                                  std::uint64_t skipValue, bool dataOnDevice, bool restartPerImage)
{
  cca::LabelOutput output;
  output.onDevice = dataOnDevice;
  output.data = data;
  output.kind = kind;
  output.backgroundBits = backgroundBits;
  output.skipValue = skipValue;
  Translated("writing the label image", [&]() {
    m_Internals->Analyzed(); // throws without an analysis
    if (restartPerImage && m_Internals->batchExtent == 0)
    {
      throw Error("labels restarting per image need a batch (Request::batchExtent)");
    }
    // Class values do not depend on the numbering: no restart table for them.
    const bool classValues = m_Internals->writeClassValues;
    output.newIndex = restartPerImage && !classValues ? m_Internals->RestartTable()
                      : m_Internals->selected         ? m_Internals->selection.newIndex.data()
                                                      : nullptr;
    output.classValue = classValues ? m_Internals->classOfIndex.data() : nullptr;
    output.numberOfClassValues = classValues ? m_Internals->classOfIndex.size() : 0;
    if (classValues)
    {
      CheckClassValuesFit(m_Internals->classOfIndex, m_Internals->classKind, kind);
    }
    if (!dataOnDevice)
    {
      cca::AdviseHugePages(data, static_cast<std::size_t>(m_Internals->pixels * cca::ScalarKindSize(kind)));
    }
    m_Internals->Analyzed().WriteLabels(output);
  });
}

void
CudaConnectedComponentAnalysisEngine::WriteBasicColumns(const Geometry & geometry, const cca::BasicColumns & columns)
{
  Translated("writing the table's columns", [&]() {
    m_Internals->InSlabsWhereOutOfMemory([&]() {
      m_Internals->Analyzed().WriteBasicColumns(cca::MakeBasicGeometry(geometry),
                                                columns,
                                                m_Internals->selected ? m_Internals->selection.newIndex.data()
                                                                      : nullptr);
    });
  });
}

bool
CudaConnectedComponentAnalysisEngine::CanWriteDeviceColumns() const
{
  return m_Internals->slabEngine == nullptr;
}

void
CudaConnectedComponentAnalysisEngine::ComputeLines(const Geometry & geometry, Lines & lines)
{
  Translated("building the LabelMap's lines", [&]() {
    m_Internals->InSlabsWhereOutOfMemory([&]() {
      LinesOf(m_Internals->Analyzed(),
              geometry,
              m_Internals->selected ? &m_Internals->selection : nullptr,
              m_Internals->numberOfThreads,
              lines);
    });
  });
}

bool
CudaConnectedComponentAnalysisEngine::HasIntensityStatistics() const
{
  return m_Internals->used != Backend::Automatic && m_Internals->hasIntensity;
}

void
CudaConnectedComponentAnalysisEngine::ComputeIntensityStatistics(std::uint64_t k, const Geometry & geometry,
                                                                 cca::IntensityStatistics & statistics,
                                                                 bool weightedMoments) const
{
  cca::ComputeIntensityStatistics(m_Internals->Intensity(), k, geometry, weightedMoments, statistics);
}

std::unique_ptr<CudaConnectedComponentAnalysisEngine::ShapeAttributeCalculator>
CudaConnectedComponentAnalysisEngine::MakeShapeAttributeCalculator(const Geometry &     geometry,
                                                                   const ShapeOptions & options,
                                                                   const Lines &        lines) const
{
  return Translated("preparing the LabelMap's attributes",
                    [&]() { return cca::MakeShapeAttributeCalculator(m_Internals->Sums(), geometry, options, lines); });
}

void
CudaConnectedComponentAnalysisEngine::ReleaseCachedEngines()
{
  cca::EngineChoice::ReleaseCachedEngines();
}

bool
CudaConnectedComponentAnalysisEngine::CanMeasureMoments(const std::array<std::uint64_t, cca::MaxDimension> & size)
{
  return cca::CanMeasureMoments(size);
}

bool
CudaConnectedComponentAnalysisEngine::StartEngine(Backend backend, int deviceId, std::uint64_t numberOfPixels)
{
  return cca::EngineChoice::StartCudaEngine(cca::BackendForHostImage(backend, numberOfPixels), deviceId);
}

bool
CudaConnectedComponentAnalysisEngine::IsCudaEngineCompiled()
{
  return cca::IsCudaEngineCompiled();
}

int
CudaConnectedComponentAnalysisEngine::GetCudaDeviceCount(std::string * reason)
{
  return cca::GetCudaDeviceCount(reason);
}

void
CudaConnectedComponentAnalysisEngine::RunBeside(const std::function<void()> & beside,
                                                const std::function<void()> & main)
{
  std::exception_ptr besideError;
  auto               runBeside = [&beside, &besideError]() {
    try
    {
      beside();
    }
    catch (...)
    {
      besideError = std::current_exception();
    }
  };
  std::thread thread;
  try
  {
    thread = std::thread(runBeside);
  }
  catch (const std::system_error &)
  {
    runBeside(); // no thread to be had: before `main` instead of beside it
  }
  try
  {
    main();
  }
  catch (...)
  {
    if (thread.joinable())
    {
      thread.join();
    }
    throw;
  }
  if (thread.joinable())
  {
    thread.join();
  }
  if (besideError)
  {
    std::rethrow_exception(besideError);
  }
}

void
CudaConnectedComponentAnalysisEngine::SetWarningHandler(WarningHandler handler)
{
  cca::SetWarningHandler(handler);
}

} // namespace itk
