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

// The CPU engine of itk::CudaConnectedComponentAnalysisImageFilter: what the filter calls through
// the Engine interface -- checking the request, running the stages of Analyze() in order, and
// writing the labels that the stages leave behind into the caller's buffer. The stages are compiled
// apart (itkCCACPUEngineLabeling.cxx, itkCCACPUEngineFeatures.cxx, and the LabelMap's lines in
// itkCCACPUEngineLines.cxx) and share the state declared in itkCCACPUEngine.h.
//
// Run-length labeling with the semantics of itk::ConnectedComponentImageFilter (ITK 5.2): the
// foreground of each image row is encoded as runs, runs of adjacent rows that overlap are united,
// and components are numbered in the raster order of their first pixel. Runs are numbered in
// raster order and the union-find always keeps the smallest run of a set as its root, so a
// component's root is its first run and the numbering needs no sorting.
//
// Threads work on blocks of consecutive rows. Each block finds its runs and unites the runs of
// adjacent rows of the block while those rows are still in the cache; the few rows at a block's
// start whose neighbors lie in an earlier block are united afterwards by one thread. The result
// depends on the sets only, never on the order of the unions, so the labels are the same for any
// number of threads.
//
// On request, the feature pass also accumulates the sums behind ITK's shape attributes: second
// moments and border counts in closed form per run, and the perimeter intercepts of
// itk::ShapeLabelMapFilter::ComputePerimeter by comparing each run with the runs of its component
// in the neighboring rows.

#include "itkCCACPUEngine.h"
#include "itkCCAParallelFor.h"
#include "itkCCAContacts.h"
#include "itkCCAValueTolerance.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace itk
{
namespace cca
{
namespace cpu
{

CPUEngine::CPUEngine(unsigned numberOfThreads, unsigned numberOfWorkUnits)
  : m_NumberOfThreads(numberOfThreads != 0 ? numberOfThreads : std::max(1u, std::thread::hardware_concurrency()))
  , m_NumberOfWorkUnits(numberOfWorkUnits != 0 ? numberOfWorkUnits : m_NumberOfThreads)
{}

std::string
CPUEngine::GetName() const
{
  return "CPU";
}

std::string
CPUEngine::GetDescription() const
{
  return "CPU engine, " + std::to_string(m_NumberOfThreads) + (m_NumberOfThreads == 1 ? " thread" : " threads") +
         (m_NumberOfWorkUnits != m_NumberOfThreads ? ", " + std::to_string(m_NumberOfWorkUnits) + " work units" : "");
}

std::uint64_t
CPUEngine::Analyze(const Request & given)
{
  m_Analyzed = false;
  if (given.inputOnDevice)
  {
    throw Error("the CPU engine cannot read an image in GPU memory; use the CUDA engine");
  }
  Validate(given);
  // Value tolerance: the components by a pixel union-find first, as classes that the multi-label stages label.
  Request request = given;
  if (given.connectivity.HasValueTolerance())
  {
    try
    {
      request = ToleranceClasses(given);
    }
    catch (const std::bad_alloc &)
    {
      throw OutOfMemory("CPU engine: out of memory while joining the pixels of an image of " +
                        std::to_string(given.NumberOfPixels()) + " pixels by value");
    }
  }

  m_Size = request.size;
  m_Dimension = request.dimension;
  m_NumberOfRows = request.size[1] * request.size[2];
  m_NumberOfNeighborOffsets = PrecedingNeighborRowOffsets(request.connectivity, request.dimension, m_NeighborOffsets);
  m_MultiLabel = request.multiLabel;
  m_BatchExtent = request.batchExtent;
  m_ComputeShapeSums = request.computeShapeSums;
  m_ComputePerimeter = request.computeShapeSums && request.computePerimeter;
  try
  {
    SetUpBlocks();
    FindAndUniteRunsWithinBlocks(request);
    NumberRunsGlobally();
    UniteAcrossBlocks(request);
    NumberComponents();
    ComputeFeatures();
    if (m_MultiLabel)
    {
      RecordClassValues(request);
    }
    m_Intensity.Clear();
    if (request.feature)
    {
      AccumulateIntensities(request);
    }
  }
  catch (const std::bad_alloc &)
  {
    ReleaseMemory();
    throw OutOfMemory("CPU engine: out of memory while labeling an image of " +
                      std::to_string(request.NumberOfPixels()) + " pixels");
  }
  m_Analyzed = true;
  return m_Features.size();
}

void
CPUEngine::ComputeContacts(const ContactRequest & request, ContactTable & table)
{
  if (request.labelsOnDevice)
  {
    throw Error("the CPU engine cannot read labels in GPU memory; use the CUDA engine");
  }
  ValidateContactRequest(request);
  ComputeContactsOnHost(request, m_NumberOfThreads, table);
}

Request
CPUEngine::ToleranceClasses(const Request & request)
{
  Request classes = request;
  classes.multiLabel = true;
  classes.mask = nullptr; // applied: masked pixels are class 0
  classes.connectivity.valueTolerance = -1;
  const std::uint64_t n = request.NumberOfPixels();
  if (n < UINT32_MAX)
  {
    m_ToleranceClasses32.resize(static_cast<std::size_t>(n));
    LabelWithinTolerance(request, m_NumberOfThreads, m_ToleranceClasses32.data());
    classes.input = m_ToleranceClasses32.data();
    classes.inputKind = ScalarKind::UInt32;
  }
  else
  {
    m_ToleranceClasses64.resize(static_cast<std::size_t>(n));
    LabelWithinTolerance(request, m_NumberOfThreads, m_ToleranceClasses64.data());
    classes.input = m_ToleranceClasses64.data();
    classes.inputKind = ScalarKind::UInt64;
  }
  return classes;
}

const std::vector<ComponentSums> &
CPUEngine::GetFeatures() const
{
  return m_Features;
}

const IntensitySums &
CPUEngine::GetIntensitySums() const
{
  return m_Intensity;
}

void
CPUEngine::Validate(const Request & request)
{
  // 64-bit indices throughout: any image whose pixel count fits in 64 bits.
  ValidateRequest(request, std::numeric_limits<std::uint64_t>::max(), "64-bit");
}

void
CPUEngine::SetUpBlocks()
{
  const std::vector<std::uint64_t> firstRow = PartitionRows(m_NumberOfRows, m_Size[0], m_NumberOfWorkUnits);
  m_Blocks.resize(firstRow.size() - 1);
  for (std::size_t b = 0; b < m_Blocks.size(); ++b)
  {
    m_Blocks[b].firstRow = firstRow[b];
    m_Blocks[b].endRow = firstRow[b + 1];
  }
  m_RowStart.Resize(m_NumberOfRows + 1);
}

void
CPUEngine::ReleaseMemory()
{
  std::vector<RowBlock>().swap(m_Blocks);
  m_RowStart.Release();
  m_Parent.Release();
  std::vector<ComponentSums>().swap(m_Features);
}

template <typename TOutput>
void
CPUEngine::WriteLabelsOfType(const LabelOutput & output) const
{
  TOutput background;
  std::memcpy(&background, &output.backgroundBits, sizeof(TOutput));
  std::uint64_t backgroundBytes = 0; // the bits a TOutput takes of backgroundBits: all zero lets memset write it
  std::memcpy(&backgroundBytes, &background, sizeof(TOutput));
  TOutput * const     data = static_cast<TOutput *>(output.data);
  const std::uint64_t rowLength = m_Size[0];
  const std::uint64_t firstRow = output.firstRow;
  const std::uint64_t endRow = output.numberOfRows != 0 ? firstRow + output.numberOfRows : m_NumberOfRows;

  ParallelFor(m_NumberOfThreads, m_Blocks.size(), [&](std::uint64_t b) {
    const RowBlock &      block = m_Blocks[static_cast<std::size_t>(b)];
    const std::uint64_t * component = m_Parent.Data();
    for (std::uint64_t row = std::max(block.firstRow, firstRow); row < std::min(block.endRow, endRow); ++row)
    {
      const RowRuns   rowRuns = RunsOfRow(block, row);
      TOutput * const line = data + static_cast<std::size_t>((row - firstRow) * rowLength);
      // The row's background first, then the runs alone (the row is still in the cache): the runs are short on
      // noisy images, a few pixels, and a fill per gap between them cost as much again as the runs' own.
      if (backgroundBytes == 0)
      {
        std::memset(line, 0, static_cast<std::size_t>(rowLength) * sizeof(TOutput));
      }
      else
      {
        std::fill(line, line + rowLength, background);
      }
      for (std::uint64_t i = 0; i < rowRuns.count; ++i)
      {
        const Run &         run = rowRuns.runs[i];
        const std::uint64_t k =
          output.newIndex ? output.newIndex[component[rowRuns.firstId + i]] : component[rowRuns.firstId + i];
        if (k == UINT64_MAX)
        {
          continue; // removed: background, written above
        }
        const TOutput label = output.classValue ? static_cast<TOutput>(output.classValue[k])
                                                : static_cast<TOutput>(output.LabelValue(k));
        for (std::uint64_t x = run.begin; x < run.end; ++x)
        {
          line[x] = label;
        }
      }
    }
  });
}

void
CPUEngine::WriteLabels(const LabelOutput & output)
{
  if (!m_Analyzed)
  {
    throw Error("CPU engine: WriteLabels() called without a successful Analyze()");
  }
  if (output.data == nullptr)
  {
    throw Error("CPU engine: WriteLabels() called with a null output buffer");
  }
  if (output.onDevice)
  {
    throw Error("the CPU engine cannot write a label image into GPU memory");
  }
  if (output.firstRow + output.numberOfRows > m_NumberOfRows || (output.firstRow != 0 && output.numberOfRows == 0))
  {
    throw Error("CPU engine: WriteLabels() asked for rows past the image");
  }
  DispatchScalarKind(output.kind, [this, &output](auto tag) {
    using OutputPixelType = decltype(tag);
    this->WriteLabelsOfType<OutputPixelType>(output);
  });
}

} // namespace cpu

std::unique_ptr<Engine>
CreateCPUEngine(unsigned numberOfThreads, unsigned numberOfWorkUnits)
{
  return std::make_unique<cpu::CPUEngine>(numberOfThreads, numberOfWorkUnits);
}

void
cpu::CPUEngine::WriteBasicColumns(const BasicGeometry & geometry, const BasicColumns & columns,
                                  const std::uint64_t * newIndex)
{
  if (!m_Analyzed)
  {
    throw Error("CPU engine: WriteBasicColumns() called without a successful Analyze()");
  }
  WriteBasicColumnsOfSums(m_Features, geometry, columns, newIndex, m_NumberOfThreads);
}

std::uint64_t
cpu::CPUEngine::GetMaximumPixels() const
{
  return UINT64_MAX; // 64-bit indices throughout
}

double
cpu::CPUEngine::GetWorstCaseBytesPerPixel(const Request & request) const
{
  // Every other pixel a run (begin and end, its union-find parent) and a component (its ComponentSums row),
  // the mask not counted (the caller's), plus each row's first run.
  // Multi-label input: every pixel a run and a component. Value tolerance: the same, and each pixel's class.
  const bool   byValue = request.connectivity.HasValueTolerance();
  const double perRun = 2 * sizeof(std::uint64_t) + sizeof(std::uint64_t) + sizeof(ComponentSums);
  return perRun / (request.multiLabel || byValue ? 1 : 2) + (byValue ? 9.0 : 0.0) +
         static_cast<double>(sizeof(std::uint64_t)) / static_cast<double>(request.size[0]);
}

} // namespace cca
} // namespace itk
