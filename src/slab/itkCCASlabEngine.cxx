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
// The slab engine (itkCCASlabEngine.h): the slabs analyzed one after the other by the inner engine, their faces'
// labels kept, the merge (itkCCASlabFaces.cxx); then the outputs slab by slab through per-slab tables.
#include "itkCCASlabEngine.h"

#include "itkCCAParallelFor.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <thread>
#include <tuple>

namespace itk
{
namespace cca
{

bool
CanCutIntoSlabs(const Request & request)
{
  return request.dimension >= 2 && !request.inputOnDevice && request.batchExtent == 0 && !request.feature &&
         !request.connectivity.HasValueTolerance();
}

std::uint64_t
PlanesPerSlab(const Engine & engine, const Request & request)
{
  if (!CanCutIntoSlabs(request))
  {
    return 0;
  }
  const unsigned      axis = request.dimension - 1;
  const std::uint64_t planes = request.size[axis];
  const std::uint64_t planePixels = request.NumberOfPixels() / planes;
  // Below 2^32 pixels in any case: each slab's labels of its face planes are 32-bit.
  const std::uint64_t maxPixels = std::min<std::uint64_t>(engine.GetMaximumPixels(), 0xfffffffeu);
  const std::uint64_t byPixels = maxPixels / planePixels;
  if (byPixels == 0)
  {
    return 0; // not even one plane: the engine says why
  }
  // Under the default budget the engine tries with what it has: the worst case is far above what images need.
  const std::uint64_t budget = request.memoryBudget != 0 ? request.memoryBudget : UINT64_MAX;
  std::uint64_t       byBudget = planes;
  if (budget != UINT64_MAX)
  {
    const double planeBytes = engine.GetWorstCaseBytesPerPixel(request) * static_cast<double>(planePixels);
    byBudget =
      static_cast<std::uint64_t>(std::min(static_cast<double>(planes), static_cast<double>(budget) / planeBytes));
  }
  const std::uint64_t perSlab = std::max<std::uint64_t>(1, std::min(byPixels, byBudget));
  return perSlab >= planes ? 0 : perSlab;
}

SlabEngine::SlabEngine(Engine & inner, unsigned numberOfThreads, SlabTables * tables, Engine * partner)
  : m_Inner(inner)
  , m_Partner(partner)
  , m_NumberOfThreads(numberOfThreads)
  , m_Tables(tables != nullptr ? *tables : m_OwnTables)
{}

template <typename TWork>
void
SlabEngine::ForEachEngine(const TWork & work)
{
  // The first error is rethrown once both are done; the other engine stops at its next slab.
  std::atomic<bool> failed{ false };
  ParallelFor(NumberOfEngines(), NumberOfEngines(), [&](std::uint64_t e) {
    try
    {
      work(static_cast<unsigned>(e), failed);
    }
    catch (...)
    {
      failed = true;
      throw;
    }
  });
}

unsigned
SlabEngine::Threads(unsigned numberOfThreads) const
{
  const unsigned n = numberOfThreads != 0 ? numberOfThreads : m_NumberOfThreads;
  return n != 0 ? n : std::max(1u, std::thread::hardware_concurrency());
}

std::string
SlabEngine::GetName() const
{
  return m_Inner.GetName();
}

std::string
SlabEngine::GetDescription() const
{
  const SlabPlan & plan = m_Faces.plan;
  std::uint64_t    thickest = 0;
  for (std::size_t s = 0; s < plan.NumberOfSlabs(); ++s)
  {
    thickest = std::max(thickest, plan.firstPlane[s + 1] - plan.firstPlane[s]);
  }
  std::string periodic;
  for (unsigned a = 0; a < MaxDimension; ++a)
  {
    if (m_Request.connectivity.IsPeriodic(a))
    {
      periodic += std::string(periodic.empty() ? ", periodic along " : " and ") + "xyz"[a];
    }
  }
  if (plan.NumberOfSlabs() == 1)
  {
    return m_Inner.GetDescription() + periodic;
  }
  return m_Inner.GetDescription() + ", in " + std::to_string(plan.NumberOfSlabs()) + " slabs of up to " +
         std::to_string(thickest) + " planes" + (m_TwoEngines ? ", on two engines" : "") + periodic;
}

std::uint64_t
SlabEngine::Analyze(const Request & request)
{
  const std::uint64_t perSlab = PlanesPerSlab(m_Inner, request);
  return AnalyzeInSlabs(request, perSlab != 0 ? perSlab : request.size[request.dimension - 1]);
}

Request
SlabEngine::SlabRequest(std::size_t s) const
{
  const SlabPlan &    plan = m_Faces.plan;
  Request             slab = m_Request;
  const std::uint64_t first = plan.firstPlane[s];
  slab.size[plan.axis] = plan.firstPlane[s + 1] - first;
  slab.input =
    static_cast<const char *>(m_Request.input) + first * plan.planePixels * ScalarKindSize(m_Request.inputKind);
  if (m_Request.mask)
  {
    slab.mask =
      static_cast<const char *>(m_Request.mask) + first * plan.planePixels * ScalarKindSize(m_Request.maskKind);
  }
  slab.postProcessing = PostProcessing();
  slab.memoryBudget = 0;
  slab.connectivity.periodicAxes = 0; // joined here, across the wrapped faces
  slab.keepSumsOnDevice = false;
  return slab;
}

std::uint64_t
SlabEngine::AnalyzeInSlabs(const Request & request, std::uint64_t planesPerSlab)
{
  m_Analyzed = false;
  ValidateRequest(request, UINT64_MAX, "64-bit", true);
  // Periodic boundaries: an image the inner engine takes whole is one slab, wherever its memory is.
  const bool periodic = request.connectivity.periodicAxes != 0;
  if (!CanCutIntoSlabs(request) && !(periodic && planesPerSlab >= request.size[request.dimension - 1]))
  {
    throw Error(request.feature ? "intensity statistics (a feature image) are not computed in slabs: the image must be "
                                  "analyzed whole (no memory budget; the CPU engine takes images of any size)"
                                : "only host images of 2 or 3 dimensions, not batches, are labeled in slabs");
  }
  m_Request = request;
  SlabPlan & plan = m_Faces.plan;
  plan.axis = request.dimension - 1;
  const std::uint64_t planes = request.size[plan.axis];
  plan.planePixels = request.NumberOfPixels() / planes;
  // The thinner remainder first, so that the slab the inner engine holds at the end -- the one the outputs need
  // no second analysis of -- is a full one.
  const std::uint64_t perSlab = std::min(std::max<std::uint64_t>(planesPerSlab, 1), planes);
  plan.firstPlane.assign(1, 0);
  for (std::uint64_t p = planes % perSlab != 0 ? planes % perSlab : perSlab; p <= planes; p += perSlab)
  {
    plan.firstPlane.push_back(p);
  }
  const std::size_t numSlabs = plan.NumberOfSlabs();
  m_Faces.size = request.size;
  m_Faces.connectivity = request.connectivity;
  m_Faces.firstComponent.assign(1, 0);
  m_Faces.firstPlaneLabels.assign(numSlabs, {});
  m_Faces.lastPlaneLabels.assign(numSlabs, {});
  m_Faces.classOf.clear();
  m_Faces.PrepareWrappedFaces(request);

  // Each slab on its own, one after the other; its sums moved to the image's indices (on all threads, into the
  // tables kept between analyses: SlabTables), its face planes' labels kept. With a partner, the slabs alternate
  // between the two engines so that each holds one of the last two at the end (EngineIndexOf()).
  m_TwoEngines = m_Partner != nullptr && numSlabs > 1;
  m_HeldSlab = { { SIZE_MAX, SIZE_MAX } };
  for (std::size_t s = 0; s < numSlabs; ++s)
  {
    const std::uint64_t count = AnalyzeSlab(s);
    PlacePieces(s, EngineOf(s).GetFeatures().data(), count);
    if (periodic)
    {
      // The wrapped faces cross every slab (but along the slowest axis): the slab's labels whole.
      std::vector<std::uint32_t> labels(
        static_cast<std::size_t>((plan.firstPlane[s + 1] - plan.firstPlane[s]) * plan.planePixels));
      LabelOutput output;
      output.data = labels.data();
      output.kind = ScalarKind::UInt32;
      output.skipValue = 0; // 1-based
      EngineOf(s).WriteLabels(output);
      m_Faces.TakeWrappedFaces(s, labels);
    }
  }
  std::vector<ComponentSums> & pieces = m_Tables.pieces;
  const unsigned               threads = Threads(0);

  // The merge: one component per set of pieces touching across faces, in ITK's order, the cut undone.
  const std::uint64_t count = m_Faces.Merge(m_Tables.mergedOf, threads);
  if (request.computeShapeSums)
  {
    m_Faces.CorrectCutSums(m_Tables.mergedOf, request.computePerimeter, pieces);
  }
  if (request.computeShapeSums && request.computePerimeter && !request.connectivity.IsFull(request.dimension))
  {
    CorrectSplitPieces(pieces);
  }
  // Each merged component: its first piece (the merge numbers them in that order), copied on all threads, then the
  // other pieces added (integer sums, minima and maxima: the same in any order).
  const std::size_t            numberOfPieces = static_cast<std::size_t>(m_Faces.firstComponent.back());
  std::vector<std::uint64_t> & firstPiece = m_Tables.firstPiece;
  firstPiece.assign(static_cast<std::size_t>(count), UINT64_MAX);
  for (std::size_t id = 0; id < numberOfPieces; ++id)
  {
    std::uint64_t & f = firstPiece[static_cast<std::size_t>(m_Tables.mergedOf[id])];
    f = std::min<std::uint64_t>(f, id);
  }
  m_Tables.sums.resize(static_cast<std::size_t>(count));
  ParallelForRange(threads, count, std::uint64_t{ 1 } << 14, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t m = begin; m < end; ++m)
    {
      m_Tables.sums[m] = pieces[firstPiece[m]];
    }
  });
  for (std::size_t id = 0; id < numberOfPieces; ++id)
  {
    const std::uint64_t merged = m_Tables.mergedOf[id];
    if (firstPiece[static_cast<std::size_t>(merged)] != id)
    {
      AddComponentSums(pieces[id], m_Tables.sums[static_cast<std::size_t>(merged)]);
    }
  }
  m_Analyzed = true;
  return count;
}

std::uint64_t
SlabEngine::AnalyzeSlab(std::size_t s)
{
  const SlabPlan &    plan = m_Faces.plan;
  Engine &            engine = EngineOf(s);
  std::size_t &       held = m_HeldSlab[EngineIndexOf(s)];
  const std::uint64_t rowsPerPlane = plan.axis == 2 ? m_Request.size[1] : 1;
  held = SIZE_MAX; // none, until the engine has analyzed slab s
  const std::uint64_t count = engine.Analyze(SlabRequest(s));
  held = s;
  auto facePlane = [&](std::vector<std::uint32_t> & labels, std::uint64_t plane) {
    labels.resize(plan.planePixels);
    LabelOutput output;
    output.data = labels.data();
    output.kind = ScalarKind::UInt32;
    output.skipValue = 0; // 1-based
    output.firstRow = plane * rowsPerPlane;
    output.numberOfRows = rowsPerPlane;
    engine.WriteLabels(output);
  };
  if (s > 0)
  {
    facePlane(m_Faces.firstPlaneLabels[s], 0);
  }
  if (s + 1 < plan.NumberOfSlabs())
  {
    facePlane(m_Faces.lastPlaneLabels[s], plan.firstPlane[s + 1] - plan.firstPlane[s] - 1);
  }
  return count;
}

void
SlabEngine::PlacePieces(std::size_t s, const ComponentSums * sums, std::uint64_t count)
{
  const SlabPlan &             plan = m_Faces.plan;
  std::vector<ComponentSums> & pieces = m_Tables.pieces; // the first firstComponent.back() are this call's
  const std::size_t            first = static_cast<std::size_t>(m_Faces.firstComponent.back());
  if (pieces.size() < first + count)
  {
    // Grown, never cleared: a repeated call writes into memory already there.
    if (pieces.capacity() < first + count)
    {
      pieces.reserve(std::max<std::size_t>(first + count, 2 * pieces.capacity()));
    }
    pieces.resize(first + count);
  }
  ParallelForRange(Threads(0), count, std::uint64_t{ 1 } << 14, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k)
    {
      pieces[first + k] = sums[k];
      ShiftSums(pieces[first + k], plan.axis, plan.firstPlane[s], m_Request.computeShapeSums);
    }
  });
  if (m_Request.multiLabel)
  {
    for (std::uint64_t k = 0; k < count; ++k)
    {
      m_Faces.classOf.push_back(sums[k].classValue);
    }
  }
  m_Faces.firstComponent.push_back(m_Faces.firstComponent.back() + count);
}

void
SlabEngine::CorrectSplitPieces(std::vector<ComponentSums> & pieces)
{
  const SlabPlan &    plan = m_Faces.plan;
  const std::uint64_t rowsPerPlane = plan.axis == 2 ? m_Request.size[1] : 1;
  for (const std::size_t s : SlabOrder())
  {
    // The slab's pieces that share their merged component with another of its pieces, and their planes.
    const std::uint64_t                                  first = m_Faces.firstComponent[s];
    const std::uint64_t                                  count = m_Faces.firstComponent[s + 1] - first;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> byMerged(static_cast<std::size_t>(count));
    for (std::uint64_t l = 0; l < count; ++l)
    {
      byMerged[l] = { m_Tables.mergedOf[first + l], l };
    }
    std::sort(byMerged.begin(), byMerged.end());
    std::vector<std::uint8_t> split(static_cast<std::size_t>(count), 0);
    std::uint64_t             firstPlane = UINT64_MAX;
    std::uint64_t             lastPlane = 0;
    for (std::size_t i = 0; i < byMerged.size(); ++i)
    {
      const bool shared = (i > 0 && byMerged[i - 1].first == byMerged[i].first) ||
                          (i + 1 < byMerged.size() && byMerged[i + 1].first == byMerged[i].first);
      if (shared)
      {
        const ComponentSums & piece = pieces[first + byMerged[i].second];
        split[byMerged[i].second] = 1;
        firstPlane = std::min(firstPlane, piece.boundingBoxMin[plan.axis] - plan.firstPlane[s]);
        lastPlane = std::max(lastPlane, piece.boundingBoxMax[plan.axis] - plan.firstPlane[s]);
      }
    }
    if (firstPlane == UINT64_MAX)
    {
      continue;
    }
    // Their rows' labels, again from the inner engine.
    HoldSlab(s);
    std::vector<std::uint32_t> labels((lastPlane - firstPlane + 1) * plan.planePixels);
    LabelOutput                output;
    output.data = labels.data();
    output.kind = ScalarKind::UInt32;
    output.skipValue = 0;
    output.firstRow = firstPlane * rowsPerPlane;
    output.numberOfRows = (lastPlane - firstPlane + 1) * rowsPerPlane;
    EngineOf(s).WriteLabels(output);
    m_Faces.CorrectSplitContacts(s, labels, output.firstRow, split, m_Tables.mergedOf, pieces);
  }
}

void
SlabEngine::HoldSlab(std::size_t s)
{
  std::size_t & held = m_HeldSlab[EngineIndexOf(s)];
  if (held == s)
  {
    return;
  }
  held = SIZE_MAX; // none, until the engine has analyzed slab s
  const std::uint64_t count = EngineOf(s).Analyze(SlabRequest(s));
  held = s;
  if (count != m_Faces.firstComponent[s + 1] - m_Faces.firstComponent[s])
  {
    throw Error("the image changed between the analyses of its slabs");
  }
}

std::vector<std::size_t>
SlabEngine::SlabOrder(unsigned engine) const
{
  // One engine's order reads what that engine holds, nothing of the other's (which its thread may be changing).
  std::vector<std::size_t> order;
  const std::size_t        numSlabs = m_Faces.plan.NumberOfSlabs();
  auto                     wanted = [&](std::size_t s) { return engine == UINT_MAX || EngineIndexOf(s) == engine; };
  for (unsigned e = 0; e < NumberOfEngines(); ++e)
  {
    if ((engine == UINT_MAX || engine == e) && m_HeldSlab[e] < numSlabs)
    {
      order.push_back(m_HeldSlab[e]);
    }
  }
  for (std::size_t s = 0; s < numSlabs; ++s)
  {
    if (wanted(s) && std::find(order.begin(), order.end(), s) == order.end())
    {
      order.push_back(s);
    }
  }
  return order;
}

void
SlabEngine::SlabTable(std::size_t s, const std::uint64_t * newIndex, std::vector<std::uint64_t> & table) const
{
  const std::uint64_t first = m_Faces.firstComponent[s];
  table.resize(static_cast<std::size_t>(m_Faces.firstComponent[s + 1] - first));
  for (std::size_t l = 0; l < table.size(); ++l)
  {
    const std::uint64_t merged = m_Tables.mergedOf[first + l];
    table[l] = newIndex ? newIndex[merged] : merged;
  }
}

const std::vector<ComponentSums> &
SlabEngine::GetFeatures() const
{
  return m_Tables.sums;
}

void
SlabEngine::WriteLabels(const LabelOutput & output)
{
  if (!m_Analyzed)
  {
    throw Error("WriteLabels() called before a successful Analyze()");
  }
  if (output.numberOfRows != 0)
  {
    throw Error("the slab engine writes whole label images");
  }
  // Each slab's labels in the output type, through its table, into its part of the output; with a partner, each
  // engine writes its own slabs on a thread of its own.
  const std::size_t planeBytes = m_Faces.plan.planePixels * ScalarKindSize(output.kind);
  ForEachEngine([&](unsigned e, const std::atomic<bool> & failed) {
    std::vector<std::uint64_t> table;
    for (const std::size_t s : SlabOrder(e))
    {
      if (failed)
      {
        return;
      }
      HoldSlab(s);
      SlabTable(s, output.newIndex, table);
      LabelOutput slab = output;
      slab.data = static_cast<char *>(output.data) + m_Faces.plan.firstPlane[s] * planeBytes;
      slab.newIndex = table.data();
      EngineOf(s).WriteLabels(slab);
    }
  });
}

void
SlabEngine::ExportLines(const LineLayout & layout, const RunSelection & selection, unsigned numberOfThreads,
                        Lines & lines)
{
  if (!m_Analyzed)
  {
    throw Error("ExportLines() called before a successful Analyze()");
  }
  const SlabPlan &  plan = m_Faces.plan;
  const std::size_t numSlabs = plan.NumberOfSlabs();
  // Each slab's lines, grouped by its own components.
  std::vector<Lines> slabLines(numSlabs);
  for (const std::size_t s : SlabOrder())
  {
    HoldSlab(s);
    LineLayout slabLayout = layout;
    slabLayout.start[plan.axis] += static_cast<std::int64_t>(plan.firstPlane[s]);
    EngineOf(s).ExportLines(slabLayout, RunSelection(), numberOfThreads, slabLines[s]);
  }
  // Regrouped by merged component (or its new index): the slabs in order; where several pieces of one component
  // lie in one slab, their lines sorted back into raster order.
  const std::size_t numGroups = static_cast<std::size_t>(selection.newIndex ? selection.numKept : m_Tables.sums.size());
  auto              groupOf = [&](std::uint64_t id) {
    const std::uint64_t merged = m_Tables.mergedOf[id];
    return selection.newIndex ? selection.newIndex[merged] : merged;
  };
  std::vector<std::uint64_t> firstLine(numGroups + 1, 0);
  for (std::size_t s = 0; s < numSlabs; ++s)
  {
    const auto & own = slabLines[s].firstLine;
    for (std::uint64_t l = 0; l + 1 < own.size(); ++l)
    {
      const std::uint64_t g = groupOf(m_Faces.firstComponent[s] + l);
      if (g != UINT64_MAX)
      {
        firstLine[g + 1] += own[l + 1] - own[l];
      }
    }
  }
  std::partial_sum(firstLine.begin(), firstLine.end(), firstLine.begin());
  ResizeLines(lines, numGroups, static_cast<std::size_t>(firstLine[numGroups]));
  std::copy(firstLine.begin(), firstLine.end(), lines.firstLine.begin());
  std::vector<std::uint64_t> cursor(firstLine.begin(), firstLine.end() - 1);
  std::vector<std::uint64_t> segmentStart(numGroups);
  std::vector<std::size_t>   segmentSlab(numGroups, numSlabs);
  std::vector<std::uint64_t> order;
  for (std::size_t s = 0; s < numSlabs; ++s)
  {
    const Lines &            own = slabLines[s];
    std::vector<std::size_t> split; // groups with several pieces in this slab
    for (std::uint64_t l = 0; l + 1 < own.firstLine.size(); ++l)
    {
      const std::uint64_t g = groupOf(m_Faces.firstComponent[s] + l);
      if (g == UINT64_MAX)
      {
        continue;
      }
      if (segmentSlab[g] != s)
      {
        segmentSlab[g] = s;
        segmentStart[g] = cursor[g];
      }
      else if (split.empty() || split.back() != g)
      {
        split.push_back(static_cast<std::size_t>(g));
      }
      for (std::uint64_t i = own.firstLine[l]; i < own.firstLine[l + 1]; ++i, ++cursor[g])
      {
        lines.index[cursor[g]] = own.index[i];
        lines.length[cursor[g]] = own.length[i];
      }
    }
    std::sort(split.begin(), split.end());
    split.erase(std::unique(split.begin(), split.end()), split.end());
    for (const std::size_t g : split)
    {
      // z, y, x: lines of one component never overlap, so the index alone orders them.
      const std::uint64_t begin = segmentStart[g];
      const std::uint64_t end = cursor[g];
      order.resize(static_cast<std::size_t>(end - begin));
      std::iota(order.begin(), order.end(), begin);
      std::sort(order.begin(), order.end(), [&lines](std::uint64_t a, std::uint64_t b) {
        const auto & ia = lines.index[a];
        const auto & ib = lines.index[b];
        return std::make_tuple(ia[2], ia[1], ia[0]) < std::make_tuple(ib[2], ib[1], ib[0]);
      });
      std::vector<std::array<std::int64_t, MaxDimension>> index(order.size());
      std::vector<std::uint64_t>                          length(order.size());
      for (std::size_t i = 0; i < order.size(); ++i)
      {
        index[i] = lines.index[order[i]];
        length[i] = lines.length[order[i]];
      }
      std::copy(index.begin(), index.end(), lines.index.begin() + static_cast<std::ptrdiff_t>(begin));
      std::copy(length.begin(), length.end(), lines.length.begin() + static_cast<std::ptrdiff_t>(begin));
    }
    slabLines[s] = Lines(); // freed as soon as it is copied
  }
}

void
SlabEngine::WriteBasicColumns(const BasicGeometry & geometry, const BasicColumns & columns,
                              const std::uint64_t * newIndex)
{
  if (!m_Analyzed)
  {
    throw Error("WriteBasicColumns() called before a successful Analyze()");
  }
  if (columns.batchStride != 0)
  {
    throw Error("the slab engine labels no batches");
  }
  if (columns.onDevice)
  {
    throw Error("the slab engine writes host columns (WritesDeviceColumns())");
  }
  WriteBasicColumnsOfSums(m_Tables.sums, geometry, columns, newIndex, Threads(0));
}

std::uint64_t
SlabEngine::GetMaximumPixels() const
{
  return UINT64_MAX;
}

double
SlabEngine::GetWorstCaseBytesPerPixel(const Request & request) const
{
  return m_Inner.GetWorstCaseBytesPerPixel(request);
}

} // namespace cca
} // namespace itk
