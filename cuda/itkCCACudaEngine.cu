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
// The CUDA engine's update along the data path -- pixels to foreground bits, runs, merge, numbering,
// features, download -- with the stages in itkCCACudaStages.cu and the merge and feature accumulation
// in the request's feature variant (FLSL+CD by default); the label image and the runs on request.

#include "itkCCACudaEngine.cuh"

#include "itkCCACudaStages.cuh"
#include "itkCCAIntensityStages.cuh"
#include "itkCCARunGrouping.cuh"
#include "itkCCAHostMemory.h"
#include "itkCCAParallelFor.h"
#include "itkCCANeighborRows.h"

#include <cstring>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <sstream>
#include <type_traits>

namespace itk
{
namespace cca
{
namespace cuda
{

namespace
{
__global__ void
ProbeKernel()
{}

/** Calls f(pointer) on every column pointer of `columns` (by reference), so that what is asked is listed once. */
template <typename TFunction>
void
ForEachBasicColumn(BasicColumns & columns, const TFunction & f)
{
  f(columns.label);
  f(columns.numberOfPixels);
  f(columns.physicalSize);
  f(columns.image);
  f(columns.classValue);
  for (unsigned d = 0; d < MaxDimension; ++d)
  {
    f(columns.boundingBoxBegin[d]);
    f(columns.boundingBoxEnd[d]);
    f(columns.centroid[d]);
  }
}
} // namespace

CudaEngine::CudaEngine(int deviceId, std::unique_ptr<FeatureVariant> variant)
  : m_DeviceId(deviceId)
  , m_Variant(variant ? std::move(variant) : CreateConflictDetectionVariant())
{
  const DeviceScope scope(m_DeviceId);
  CCA_CUDA_CHECK(cudaGetDeviceProperties(&m_Properties, m_DeviceId));
  // A device this build has no machine code for (e.g. compute capability 7.0 with the default 7.5/8.x/9.0
  // architectures) could not run a kernel: Unavailable, so that the automatic backend uses the CPU engine.
  cudaFuncAttributes probe{};
  const cudaError_t  probeStatus = cudaFuncGetAttributes(&probe, ProbeKernel);
  if (probeStatus == cudaErrorInvalidDeviceFunction || probeStatus == cudaErrorNoKernelImageForDevice)
  {
    cudaGetLastError();
    std::ostringstream msg;
    msg << "CUDA device " << deviceId << " (" << m_Properties.name << ", compute capability " << m_Properties.major
        << '.' << m_Properties.minor << ") has no code in this build (CMAKE_CUDA_ARCHITECTURES)";
    throw Unavailable(msg.str());
  }
  CCA_CUDA_CHECK(probeStatus); // out of memory loading the module, say: reported as such
  if (m_Properties.major < 7)
  {
    std::ostringstream msg;
    msg << "CUDA device " << deviceId << " (" << m_Properties.name << ", compute capability " << m_Properties.major
        << '.' << m_Properties.minor
        << ") is too old: the CUDA engine needs compute capability 7.0 or newer (__match_any_sync)";
    throw Unavailable(msg.str());
  }
  cudaStream_t stream = nullptr;
  CCA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  m_Stream = stream;
  try
  {
    m_Staging.Initialize();
    void * scalars = nullptr;
    CCA_CUDA_CHECK(cudaHostAlloc(&scalars, 2 * sizeof(std::uint32_t), cudaHostAllocMapped));
    m_HostScalars = static_cast<std::uint32_t *>(scalars);
    void * mapped = nullptr;
    CCA_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, scalars, 0));
    m_MappedScalars = static_cast<std::uint32_t *>(mapped);
    CCA_CUDA_CHECK(cudaEventCreateWithFlags(&m_CallerReady, cudaEventDisableTiming));
    CCA_CUDA_CHECK(cudaEventCreateWithFlags(&m_OutputsReady, cudaEventDisableTiming));
  }
  catch (...)
  {
    // No destructor runs for a half-built object: release the stream here (the staging buffers
    // release themselves as a member).
    ReleaseHandles();
    throw;
  }
}

CudaEngine::~CudaEngine()
{
  ReleaseHandles();
}

std::string
CudaEngine::GetName() const
{
  return "CUDA";
}

std::string
CudaEngine::GetDescription() const
{
  std::ostringstream s;
  s << "CUDA engine on device " << m_DeviceId << ": " << m_Properties.name << " (sm_" << m_Properties.major
    << m_Properties.minor << ')';
  return s.str();
}

std::uint64_t
CudaEngine::Analyze(const Request & request)
{
  // With keepSumsOnDevice, the features stay on the device until GetFeatures() asks for rows (once, on the
  // caller's thread) or WriteBasicColumns() for columns.
  return Update(request, request.inputOnDevice, !request.keepSumsOnDevice);
}

std::uint64_t
CudaEngine::Update(const Request & request, bool onDevice, bool featuresToHost)
{
  m_Analyzed = false;
  m_LabelsOnHost = false;
  m_SumsOnHost = false;
  m_FeaturesOnHost = false; // m_Features keeps its rows: resized, not filled anew, by the next download
  m_UploadedNewIndex = nullptr;
  ValidateRequest(request, GetMaximumPixels() + 1, "32-bit");
  FeatureVariant & variant = *m_Variant;
  if (request.feature && !variant.MeasuresIntensityAndClasses())
  {
    throw Error(std::string("intensity statistics are computed with FLSL+CD only, not the ") + variant.Name() +
                " variant");
  }
  if ((request.multiLabel || request.connectivity.HasValueTolerance()) && !variant.MeasuresIntensityAndClasses())
  {
    throw Error(std::string("multi-label input and value tolerance are labeled with FLSL+CD only, not the ") +
                variant.Name() + " variant");
  }
  m_FeaturesMeasured = variant.MeasuresFeatures();
  if ((featuresToHost || request.computeShapeSums) && !m_FeaturesMeasured)
  {
    throw Error("the labels-only variant computes no features to return");
  }
  if (request.computeShapeSums && !variant.ComputesShapeSums())
  {
    throw Error(std::string("the ") + variant.Name() + " variant computes the basic features only; the LabelMap's sums need FLSL+CD");
  }
  const DeviceScope scope(m_DeviceId);
  m_CallerStream = onDevice ? request.stream : nullptr;
  // The caller's pixels may still be in the making on its stream (CuPy, PyTorch): wait for them there.
  WaitForCallerStream();
  SetGeometry(request);
  // Value tolerance: the multi-label stages over the classes that the pixel union-find makes (stage 1a).
  const bool byValue = request.connectivity.HasValueTolerance();
  m_MultiLabel = request.multiLabel || byValue;
  // Multi-label input takes the general path: its extra stages (value breaks, run and component classes) are
  // not in the small-image kernel.
  // So does a feature image (the intensity stage).
  m_Intensity.Clear();
  const unsigned blocks = m_MultiLabel || request.feature ? 0u : SmallImageBlocks(request, variant);
  // The same stages in two launches and one synchronization, where the image is small and the device takes it.
  if (blocks == 0 || !AnalyzeSmallImage(request, onDevice, blocks))
  {
    const int sms = m_Properties.multiProcessorCount;
    // 1. Pixels to the device; foreground bits.
    m_Bits.Reserve(std::uint64_t{ m_Geometry.numWords } * sizeof(std::uint32_t), "the foreground bitmask");
    const void * input = BuildForegroundBits(
      request, onDevice, m_Pixels, m_Staging, m_Bits.As<std::uint32_t>(), m_Geometry, m_Stream, sms);
    ScalarKind classKind = request.inputKind;
    if (byValue)
    {
      // 1a. Value tolerance: each pixel's component as its class.
      m_ToleranceClasses.Reserve(request.NumberOfPixels() * sizeof(std::uint32_t), "the value tolerance's classes");
      LabelWithinTolerance(input,
                           request.inputKind,
                           m_Bits.As<std::uint32_t>(),
                           request.connectivity,
                           m_ToleranceClasses.As<std::uint32_t>(),
                           m_Geometry,
                           m_Stream,
                           sms);
      input = m_ToleranceClasses.As<void>();
      classKind = ScalarKind::UInt32;
    }
    if (m_MultiLabel)
    {
      // 1b. Where runs of another value start inside stretches of foreground pixels.
      m_Breaks.Reserve(std::uint64_t{ m_Geometry.numWords } * sizeof(std::uint32_t), "the value breaks");
      BuildValueBreaks(
        input, classKind, m_Bits.As<std::uint32_t>(), m_Breaks.As<std::uint32_t>(), m_Geometry, m_Stream, sms);
    }
    // 2. Runs (multi-label input: and their values).
    const std::uint32_t numRuns = FindRuns();
    m_NumberOfComponents = 0;
    if (numRuns > 0)
    {
      if (m_MultiLabel)
      {
        m_RunClass.Reserve(std::uint64_t{ numRuns } * sizeof(long long), "the runs' values");
        ClassifyRuns(input,
                     classKind,
                     m_RunBegin.As<std::uint32_t>(),
                     m_RunRow.As<std::uint32_t>(),
                     m_RunClass.As<long long>(),
                     numRuns,
                     m_Geometry,
                     m_Stream,
                     sms);
      }
      const DeviceRuns runs = MakeDeviceRuns(request, numRuns);
      // 3. Union-find over runs of neighboring rows (multi-label input: of equal values).
      variant.MergeRuns(runs);
      // 4. Roots numbered in raster order.
      m_NumberOfComponents = NumberComponents(numRuns);
      // 5. Labels per run and features per component (multi-label input: and their values).
      MeasureComponents(request, variant, runs);
      if (m_MultiLabel)
      {
        m_ComponentClass.Reserve(m_NumberOfComponents * sizeof(long long), "the components' values");
        ClassifyComponents(m_RunClass.As<long long>(),
                           m_Parent.As<std::uint32_t>(),
                           m_ComponentClass.As<long long>(),
                           numRuns,
                           m_Stream,
                           sms);
      }
      // 5c. With a feature image: each component's intensity sums.
      if (request.feature)
      {
        MeasureIntensities(request, onDevice, numRuns);
      }
    }
    CCA_CUDA_CHECK(cudaStreamSynchronize(m_Stream));
    m_NumberOfRuns = numRuns;
  }
  m_ShapeSums = request.computeShapeSums;
  m_Analyzed = true;
  // 6. Features to the host, where asked now.
  if (featuresToHost)
  {
    DownloadFeatures();
  }
  return m_NumberOfComponents;
}

void
CudaEngine::SetGeometry(const Request & request)
{
  DeviceGeometry & g = m_Geometry;
  g.width = static_cast<std::uint32_t>(request.size[0]);
  g.height = static_cast<std::uint32_t>(request.size[1]);
  g.depth = static_cast<std::uint32_t>(request.size[2]);
  g.numRows = g.height * g.depth;
  g.wordsPerRow = (g.width + 31u) / 32u;
  g.dimension = request.dimension;
  g.batchExtent = static_cast<std::uint32_t>(request.batchExtent); // below 2^32: it divides a 32-bit side
  const std::uint64_t numWords = static_cast<std::uint64_t>(g.numRows) * g.wordsPerRow;
  if (numWords >= 0xffffffffu)
  {
    throw Unavailable("the image's rows need 2^32 or more bitmask words, beyond the CUDA engine's 32-bit index type");
  }
  g.numWords = static_cast<std::uint32_t>(numWords);
}

std::uint32_t
CudaEngine::FindRuns()
{
  const DeviceGeometry & g = m_Geometry;
  const int              sms = m_Properties.multiProcessorCount;
  // Run starts per word, scanned into each word's first run id; the total is the run count.
  m_FirstRun.Reserve((std::uint64_t{ g.numWords } + 1) * sizeof(std::uint32_t), "run offsets");
  std::uint32_t * firstRun = m_FirstRun.As<std::uint32_t>();
  CCA_CUDA_CHECK(cudaMemsetAsync(firstRun + g.numWords, 0, sizeof(std::uint32_t), m_Stream));
  const std::uint32_t * breaks = m_MultiLabel ? m_Breaks.As<std::uint32_t>() : nullptr;
  CountRunStarts(m_Bits.As<std::uint32_t>(), firstRun, g, m_Stream, sms, breaks);
  ExclusiveScan(firstRun, std::uint64_t{ g.numWords } + 1);
  const std::uint32_t numRuns = ReadDeviceScalar(firstRun + g.numWords);
  if (numRuns > 0)
  {
    const std::size_t bytes = numRuns * sizeof(std::uint32_t);
    m_RunBegin.Reserve(bytes, "runs");
    m_RunEnd.Reserve(bytes, "runs");
    m_RunRow.Reserve(bytes, "runs");
    m_Parent.Reserve(bytes, "the union-find forest");
    m_RootLabel.Reserve(bytes + sizeof(std::uint32_t), "component labels");
    EmitRuns(m_Bits.As<std::uint32_t>(),
             firstRun,
             m_RunBegin.As<std::uint32_t>(),
             m_RunEnd.As<std::uint32_t>(),
             m_RunRow.As<std::uint32_t>(),
             m_Parent.As<std::uint32_t>(),
             g,
             m_Stream,
             sms,
             breaks);
  }
  return numRuns;
}

DeviceRuns
CudaEngine::MakeDeviceRuns(const Request & request, std::uint32_t numRuns) const
{
  DeviceRuns runs{};
  runs.bits = m_Bits.As<std::uint32_t>();
  runs.firstRun = m_FirstRun.As<std::uint32_t>();
  runs.parent = m_Parent.As<std::uint32_t>();
  runs.rootLabel = m_RootLabel.As<std::uint32_t>();
  runs.begin = m_RunBegin.As<std::uint32_t>();
  runs.end = m_RunEnd.As<std::uint32_t>();
  runs.row = m_RunRow.As<std::uint32_t>();
  runs.count = numRuns;
  runs.geometry = m_Geometry;
  // The preceding rows a run can touch and whether their x-overlap is widened by one (MergeRunsKernel): the
  // connectivity's rows, as the CPU engine takes them. A 3-D image of one plane has none along z.
  NeighborRowOffset offsets[4];
  const unsigned    count =
    PrecedingNeighborRowOffsets(request.connectivity, request.size[2] > 1 ? 3u : std::min(request.dimension, 2u), offsets);
  NeighborRows & n = runs.neighbors;
  n.count = 0;
  for (unsigned o = 0; o < count; ++o)
  {
    n.dy[n.count] = offsets[o].dy;
    n.dz[n.count] = offsets[o].dz;
    n.widened[n.count] = offsets[o].widening != 0;
    ++n.count;
  }
  CoveringNeighborRows(offsets, count, request.connectivity, m_MultiLabel, n.coveringRow, n.coveredBy);
  runs.stream = m_Stream;
  runs.multiprocessors = m_Properties.multiProcessorCount;
  if (m_MultiLabel)
  {
    runs.breaks = m_Breaks.As<std::uint32_t>();
    runs.runClass = m_RunClass.As<long long>();
  }
  return runs;
}

std::uint64_t
CudaEngine::NumberComponents(std::uint32_t numRuns)
{
  std::uint32_t * rootLabel = m_RootLabel.As<std::uint32_t>();
  CCA_CUDA_CHECK(cudaMemsetAsync(rootLabel + numRuns, 0, sizeof(std::uint32_t), m_Stream));
  FlattenAndMarkRoots(m_Parent.As<std::uint32_t>(), rootLabel, numRuns, m_Stream, m_Properties.multiProcessorCount);
  ExclusiveScan(rootLabel, std::uint64_t{ numRuns } + 1);
  return ReadDeviceScalar(rootLabel + numRuns);
}

void
CudaEngine::MeasureComponents(const Request & request, FeatureVariant & variant, const DeviceRuns & runs)
{
  if (!variant.MeasuresFeatures())
  {
    // Labels only: nothing to allocate or clear, and K components' sums need not fit beside the labels.
    variant.LabelRunsAndMeasure(runs, DeviceFeatures{}, false, false);
    return;
  }
  // The accumulators of K components in two allocations: 64-bit sums, 32-bit boxes.
  const std::uint64_t k = m_NumberOfComponents;
  m_FeatureSums.Reserve(NumberOfSums * k * sizeof(unsigned long long), "component features");
  m_FeatureBoxes.Reserve(6 * k * sizeof(std::uint32_t), "component features");
  DeviceFeatures f;
  f.sums = m_FeatureSums.As<unsigned long long>();
  f.numberOfComponents = k;
  for (int d = 0; d < 3; ++d)
  {
    f.boundingBoxMin[d] = m_FeatureBoxes.As<std::uint32_t>() + d * k;
    f.boundingBoxMax[d] = m_FeatureBoxes.As<std::uint32_t>() + (3 + d) * k;
  }
  const int numSums = request.computeShapeSums ? NumberOfSums : SumProducts0;
  const int firstAccumulatedSum = variant.FirstAccumulatedSum();
  if (numSums > firstAccumulatedSum)
  {
    CCA_CUDA_CHECK(cudaMemsetAsync(
      f.sums + firstAccumulatedSum * k, 0, (numSums - firstAccumulatedSum) * k * sizeof(unsigned long long), m_Stream));
  }
  if (!variant.WritesBoundingBoxes())
  {
    CCA_CUDA_CHECK(cudaMemsetAsync(f.boundingBoxMin[0], 0xff, 3 * k * sizeof(std::uint32_t), m_Stream));
    CCA_CUDA_CHECK(cudaMemsetAsync(f.boundingBoxMax[0], 0, 3 * k * sizeof(std::uint32_t), m_Stream));
  }
  variant.LabelRunsAndMeasure(runs, f, request.computeShapeSums, request.computePerimeter);
}

void
CudaEngine::MeasureIntensities(const Request & request, bool onDevice, std::uint32_t numRuns)
{
  const std::uint64_t k = m_NumberOfComponents;
  const int           sms = m_Properties.multiProcessorCount;
  const void *        feature = request.feature;
  if (!onDevice)
  {
    const std::size_t bytes = request.NumberOfPixels() * ScalarKindSize(request.featureKind);
    m_IntensityBuffers.feature.Reserve(bytes, "the feature image");
    m_Staging.ToDevice(m_IntensityBuffers.feature.As<void>(), request.feature, bytes, m_Stream);
    feature = m_IntensityBuffers.feature.As<void>();
  }
  // Each component's runs together, in raster order (the LabelMap's grouping, all components).
  GroupRunsByComponent(m_Parent.As<std::uint32_t>(),
                       m_RunBegin.As<std::uint32_t>(),
                       m_RunEnd.As<std::uint32_t>(),
                       m_RunRow.As<std::uint32_t>(),
                       numRuns,
                       nullptr,
                       static_cast<std::uint32_t>(k),
                       m_RunGrouping,
                       m_Stream,
                       sms);
  const std::uint32_t * const boxMin[3] = { m_FeatureBoxes.As<std::uint32_t>(),
                                            m_FeatureBoxes.As<std::uint32_t>() + k,
                                            m_FeatureBoxes.As<std::uint32_t>() + 2 * k };
  AccumulateIntensitySums(feature,
                          request.featureKind,
                          m_RunGrouping.firstRun.As<std::uint32_t>(),
                          m_RunGrouping.begin.As<std::uint32_t>(),
                          m_RunGrouping.length.As<std::uint32_t>(),
                          m_RunGrouping.row.As<std::uint32_t>(),
                          boxMin,
                          k,
                          m_Geometry,
                          m_IntensityBuffers,
                          m_Stream,
                          sms);
  // The sums to the host now: a few columns per component, wanted whenever a feature image is given.
  m_Intensity.Resize(k);
  m_Staging.ToHost(m_Intensity.values.data(),
                   m_IntensityBuffers.values.As<void>(),
                   m_Intensity.values.size() * sizeof(double),
                   m_Stream);
  m_Staging.ToHost(m_Intensity.integers.data(),
                   m_IntensityBuffers.integers.As<void>(),
                   m_Intensity.integers.size() * sizeof(std::uint64_t),
                   m_Stream);
}

const IntensitySums &
CudaEngine::GetIntensitySums() const
{
  return m_Intensity;
}

void
CudaEngine::DownloadFeatures()
{
  if (!m_FeaturesMeasured)
  {
    throw Error("the labels-only variant computes no features to return");
  }
  const std::uint64_t k = m_NumberOfComponents;
  if (k == 0)
  {
    m_Features.clear();
    m_FeaturesOnHost = true;
    return;
  }
  const DeviceScope scope(m_DeviceId);
  // Only the sums the request asked for travel back, through the pinned staging buffers into host
  // buffers kept between calls; the conversion to ComponentSums writes every field once, on
  // several threads (with millions of components it otherwise costs more than the labeling).
  const int numSums = m_ShapeSums ? NumberOfSums : SumProducts0;
  m_HostSums.resize(numSums * k);
  m_HostBoxes.resize(6 * k);
  m_Staging.ToHost(
    m_HostSums.data(), m_FeatureSums.As<void>(), m_HostSums.size() * sizeof(unsigned long long), m_Stream);
  m_Staging.ToHost(m_HostBoxes.data(), m_FeatureBoxes.As<void>(), m_HostBoxes.size() * sizeof(std::uint32_t), m_Stream);
  m_HostClasses.resize(m_MultiLabel ? k : 0);
  if (m_MultiLabel)
  {
    m_Staging.ToHost(m_HostClasses.data(), m_ComponentClass.As<void>(), k * sizeof(long long), m_Stream);
  }
  const long long * classes = m_MultiLabel ? m_HostClasses.data() : nullptr;
  // Resized from the last analysis's rows: only rows past those are constructed (value-initialized on this one
  // thread, where the loop below writes every field of each on all of them).
  m_Features.resize(k);
  const unsigned long long * sums = m_HostSums.data();
  const std::uint32_t *      boxes = m_HostBoxes.data();
  const bool                 shape = m_ShapeSums;
  CCA_CUDA_CHECK(cudaStreamSynchronize(m_Stream));
  ParallelForRange(HostThreads(), k, 1u << 16, [&](std::uint64_t begin, std::uint64_t end) {
    auto sum = [&](int index, std::uint64_t i) { return static_cast<std::uint64_t>(sums[index * k + i]); };
    for (std::uint64_t i = begin; i < end; ++i)
    {
      ComponentSums & c = m_Features[i];
      c.numberOfPixels = sum(SumPixels, i);
      for (unsigned d = 0; d < MaxDimension; ++d)
      {
        c.indexSum[d] = sum(SumIndex0 + d, i);
        c.boundingBoxMin[d] = boxes[d * k + i];
        c.boundingBoxMax[d] = boxes[(3 + d) * k + i];
      }
      for (int j = 0; j < 6; ++j)
      {
        c.indexProductSum[j] = shape ? sum(SumProducts0 + j, i) : 0u;
      }
      c.numberOfPixelsOnBorder = shape ? sum(SumBorderPixels, i) : 0u;
      for (unsigned d = 0; d < MaxDimension; ++d)
      {
        c.borderFaces[d] = shape ? sum(SumBorderFaces0 + d, i) : 0u;
      }
      for (int j = 0; j < 7; ++j)
      {
        c.intercepts[j] = shape ? sum(SumIntercepts0 + j, i) : 0u;
      }
      c.classValue = classes ? static_cast<std::int64_t>(classes[i]) : 0;
    }
  });
  m_FeaturesOnHost = true;
}

const std::vector<ComponentSums> &
CudaEngine::GetFeatures() const
{
  // Filling a cache (the rows of the analysis already made), once, whichever thread asks first.
  std::lock_guard<std::mutex> lock(m_FeaturesMutex);
  if (!m_Analyzed)
  {
    static const std::vector<ComponentSums> none; // m_Features may hold an earlier analysis's rows
    return none;
  }
  if (!m_FeaturesOnHost)
  {
    const_cast<CudaEngine *>(this)->DownloadFeatures();
  }
  return m_Features;
}

void
CudaEngine::WriteBasicColumns(const BasicGeometry & geometry, const BasicColumns & columns,
                              const std::uint64_t * newIndex)
{
  if (!m_Analyzed)
  {
    throw Error("WriteBasicColumns() called before a successful Analyze()");
  }
  if (!m_FeaturesMeasured)
  {
    throw Error("the labels-only variant computes no features to return");
  }
  if (WriteBasicColumnsFromHost(geometry, columns, newIndex))
  {
    return;
  }
  const DeviceScope          scope(m_DeviceId);
  const std::uint64_t        k = m_NumberOfComponents;
  const unsigned long long * table = DeviceNewIndexTable(newIndex);
  // The kernel writes `device`: the caller's columns where they are on the device, else one scratch buffer
  // whose columns alone then travel to the caller's.
  BasicColumns                          device = columns;
  std::vector<PinnedStaging::HostPiece> toHost; // the caller's columns, in the scratch buffer's order
  // The kept components' rows (the columns' length).
  const std::uint64_t rows = newIndex ? static_cast<std::uint64_t>(std::count_if(
                                          newIndex, newIndex + k, [](std::uint64_t row) { return row != UINT64_MAX; }))
                                      : k;
  if (columns.onDevice)
  {
    WaitForCallerStream();
  }
  else
  {
    std::uint64_t numColumns = 0;
    ForEachBasicColumn(device, [&](auto *& column) { numColumns += column != nullptr; });
    if (rows == 0 || numColumns == 0)
    {
      return;
    }
    m_Columns.Reserve(numColumns * rows * 8, "the table's columns");
    char * next = m_Columns.As<char>();
    ForEachBasicColumn(device, [&](auto *& column) {
      if (column)
      {
        toHost.push_back({ column, rows * 8 });
        column = reinterpret_cast<std::remove_reference_t<decltype(column)>>(next);
        next += rows * 8;
      }
    });
    device.onDevice = true;
  }
  WriteBasicColumnsOnDevice(geometry,
                            device,
                            m_FeatureSums.As<unsigned long long>(),
                            m_FeatureBoxes.As<std::uint32_t>(),
                            k,
                            table,
                            m_Stream,
                            m_Properties.multiProcessorCount);
  if (device.classValue)
  {
    // The components' values (multi-label input), or 0 as the CPU engine writes for binary input.
    if (m_MultiLabel)
    {
      ScatterComponentClasses(m_ComponentClass.As<long long>(),
                              table,
                              reinterpret_cast<long long *>(device.classValue),
                              k,
                              m_Stream,
                              m_Properties.multiProcessorCount);
    }
    else
    {
      CCA_CUDA_CHECK(cudaMemsetAsync(device.classValue, 0, rows * sizeof(std::int64_t), m_Stream));
    }
  }
  // Small tables' columns travel together (one pass, not one copy and synchronization per column).
  m_Staging.ToHostPieces(toHost, m_Columns.As<void>(), m_Stream);
  if (columns.onDevice)
  {
    OrderCallerStreamAfterOutputs(); // ToHost() has synchronized, for host columns
  }
}

void
CudaEngine::WriteLabels(const LabelOutput & output)
{
  if (!output.data)
  {
    throw Error("WriteLabels() needs an output buffer");
  }
  if (output.firstRow + output.numberOfRows > m_Geometry.numRows || (output.firstRow != 0 && output.numberOfRows == 0))
  {
    throw Error("WriteLabels() asked for rows past the image");
  }
  if (!m_Analyzed)
  {
    throw Error("WriteLabels() called before a successful Analyze()");
  }
  if (WriteLabelsFromHost(output))
  {
    return;
  }
  const DeviceScope scope(m_DeviceId);
  if (output.onDevice)
  {
    if (output.numberOfRows != 0)
    {
      throw Error("WriteLabels(): rows of a label image only into host memory");
    }
    WaitForCallerStream(); // the output array's memory may come from the caller's stream-ordered pool
  }
  if (output.onDevice || output.numberOfRows != 0)
  {
    // Into device memory, or the rows asked for (the slab engine's face planes: written alone, then brought down).
    const std::size_t bytes = WriteLabelsOnDevice(output);
    if (output.onDevice)
    {
      OrderCallerStreamAfterOutputs();
    }
    else
    {
      m_Staging.ToHost(output.data, m_Labels.As<char>(), bytes, m_Stream);
    }
    return;
  }
  // The whole image into host memory: written part by part into the engine's buffer, each part coming down as soon
  // as it is there; returns when all are.
  const LabelTables        tables = UploadLabelTables(output);
  PinnedStaging::RowWriter writer;
  writer.rowBytes = std::size_t{ m_Geometry.width } * ScalarKindSize(output.kind);
  writer.numberOfRows = m_Geometry.numRows;
  m_Labels.Reserve(writer.rowBytes * writer.numberOfRows, "the label image");
  writer.write = [&](std::uint64_t firstRow, std::uint64_t numberOfRows) {
    LabelOutput rows = output;
    rows.firstRow = firstRow;
    rows.numberOfRows = numberOfRows;
    LaunchLabelWrite(rows, tables, m_Labels.As<char>() + firstRow * writer.rowBytes);
  };
  m_Staging.ToHostAsWritten(output.data, m_Labels.As<void>(), writer, m_Stream);
}

std::uint64_t
CudaEngine::GetMaximumPixels() const
{
  return std::uint64_t{ 0xffffffffu } - 1; // 32-bit pixel and run indices, one value left for the end
}

double
CudaEngine::GetWorstCaseBytesPerPixel(const Request & request) const
{
  // Device memory: the pixels (and mask) as uploaded, foreground bits and run offsets, then every other pixel
  // a run (begin, end, row, parent, label) and a component (its sums and box, its post-processing index, the
  // table's columns where they are made on the device), the lines' grouping, the widest label image.
  const double pixels = static_cast<double>(ScalarKindSize(request.inputKind)) +
                        (request.mask ? static_cast<double>(ScalarKindSize(request.maskKind)) : 0.0) + 0.25;
  const double sums = (request.computeShapeSums ? NumberOfSums : SumProducts0) * 8.0 + 6 * 4.0;
  // Multi-label input: every pixel a run and a component (neighbors of other values), each with its class, and the
  // value breaks' bitmask. Value tolerance: the same, and each pixel's class.
  const bool   multiLabel = request.multiLabel || request.connectivity.HasValueTolerance();
  const double classes = multiLabel ? 8.0 : 0.0;
  const double perComponent = sums + 8.0 + (request.keepSumsOnDevice ? 11 * 8.0 : 0.0) + classes;
  const double perRun = 5 * 4.0 + 8 * 4.0 + classes;
  const double runsPerPixel = multiLabel ? 1.0 : 0.5;
  return pixels + (multiLabel ? 0.125 : 0.0) + (request.connectivity.HasValueTolerance() ? 4.0 : 0.0) +
         (perRun + perComponent) * runsPerPixel + 8.0;
}

const unsigned long long *
CudaEngine::DeviceNewIndexTable(const std::uint64_t * host)
{
  if (host == nullptr || m_NumberOfComponents == 0)
  {
    return nullptr;
  }
  // The line export and the label writer of one analysis get the same table: copied once. The same address may
  // hold another table (the slab engine's per-slab tables): the contents are compared too.
  const std::size_t bytes = static_cast<std::size_t>(m_NumberOfComponents) * sizeof(std::uint64_t);
  if (host != m_UploadedNewIndex || std::memcmp(host, m_UploadedNewIndexCopy.data(), bytes) != 0)
  {
    UploadNewIndexTable(host, m_NumberOfComponents, m_NewIndex, m_Stream);
    m_UploadedNewIndexCopy.assign(host, host + m_NumberOfComponents);
    m_UploadedNewIndex = host;
  }
  return m_NewIndex.As<unsigned long long>();
}

CudaEngine::LabelTables
CudaEngine::UploadLabelTables(const LabelOutput & output)
{
  LabelTables tables;
  // The cleaned segmentation (multi-label input): each (new) index's class value, written instead of its label.
  if (output.classValue)
  {
    const std::uint64_t n = std::max<std::uint64_t>(output.numberOfClassValues, 1);
    m_ClassOfIndex.Reserve(n * sizeof(long long), "the class values of the label image");
    // Pageable: complete when the call returns, before the host table may go.
    CCA_CUDA_CHECK(cudaMemcpyAsync(m_ClassOfIndex.As<long long>(),
                                   output.classValue,
                                   output.numberOfClassValues * sizeof(long long),
                                   cudaMemcpyHostToDevice,
                                   m_Stream));
    tables.classOfIndex = m_ClassOfIndex.As<long long>();
  }
  tables.newIndex = DeviceNewIndexTable(output.newIndex);
  return tables;
}

std::size_t
CudaEngine::LaunchLabelWrite(const LabelOutput & output, const LabelTables & tables, void * target)
{
  return WriteLabelImage(output,
                         m_Bits.As<std::uint32_t>(),
                         m_FirstRun.As<std::uint32_t>(),
                         m_Parent.As<std::uint32_t>(),
                         tables.newIndex,
                         target,
                         m_Labels,
                         m_Geometry,
                         m_Stream,
                         m_Properties.multiProcessorCount,
                         m_MultiLabel ? m_Breaks.As<std::uint32_t>() : nullptr,
                         tables.classOfIndex);
}

std::size_t
CudaEngine::WriteLabelsOnDevice(const LabelOutput & output)
{
  if (!m_Analyzed) // a public entry of its own (the research benchmark's)
  {
    throw Error("WriteLabels() called before a successful Analyze()");
  }
  const DeviceScope scope(m_DeviceId);
  return LaunchLabelWrite(output, UploadLabelTables(output), output.onDevice ? output.data : nullptr);
}

void
CudaEngine::ExportLines(const LineLayout & layout, const RunSelection & selection, unsigned numberOfThreads,
                        Lines & lines)
{
  if (!m_Analyzed)
  {
    throw Error("ExportLines() called before a successful Analyze()");
  }
  const DeviceScope scope(m_DeviceId);
  const std::size_t numComponents = static_cast<std::size_t>(m_NumberOfComponents);
  const std::size_t numGroups = selection.newIndex ? static_cast<std::size_t>(selection.numKept) : numComponents;
  if (m_NumberOfRuns == 0)
  {
    ResizeLines(lines, numGroups, 0);
    std::fill(lines.firstLine.begin(), lines.firstLine.end(), 0);
    return;
  }
  // Grouped on the device (parents are labels by now), the removed components' runs sorted behind the kept
  // ones and never copied; 32-bit columns into host buffers kept between calls, then written as lines on
  // several threads.
  const unsigned long long * table = DeviceNewIndexTable(selection.newIndex);
  GroupRunsByComponent(m_Parent.As<std::uint32_t>(),
                       m_RunBegin.As<std::uint32_t>(),
                       m_RunEnd.As<std::uint32_t>(),
                       m_RunRow.As<std::uint32_t>(),
                       m_NumberOfRuns,
                       table,
                       static_cast<std::uint32_t>(numGroups),
                       m_RunGrouping,
                       m_Stream,
                       m_Properties.multiProcessorCount);
  m_HostFirstRun.resize(numGroups + 1);
  m_Staging.ToHost(
    m_HostFirstRun.data(), m_RunGrouping.firstRun.As<void>(), (numGroups + 1) * sizeof(std::uint32_t), m_Stream);
  const std::size_t n = m_HostFirstRun[numGroups];
  ResizeLines(lines, numGroups, n);
  for (auto * host : { &m_HostRunBegin, &m_HostRunLength, &m_HostRunRow })
  {
    host->resize(n);
  }
  const std::size_t bytes = n * sizeof(std::uint32_t);
  m_Staging.ToHost(m_HostRunBegin.data(), m_RunGrouping.begin.As<void>(), bytes, m_Stream);
  m_Staging.ToHost(m_HostRunLength.data(), m_RunGrouping.length.As<void>(), bytes, m_Stream);
  m_Staging.ToHost(m_HostRunRow.data(), m_RunGrouping.row.As<void>(), bytes, m_Stream);
  const unsigned threads = numberOfThreads != 0 ? numberOfThreads : HostThreads();
  ParallelForRange(threads, n, 1u << 16, [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t i = first; i < last; ++i)
    {
      SetLine(layout, m_HostRunRow[i], m_HostRunBegin[i], m_HostRunLength[i], lines, i);
    }
  });
  ParallelForRange(threads, numGroups + 1, 1u << 16, [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t k = first; k < last; ++k)
    {
      lines.firstLine[k] = m_HostFirstRun[k];
    }
  });
}

void
CudaEngine::ExclusiveScan(std::uint32_t * data, std::uint64_t count)
{
  std::size_t tempBytes = 0;
  CCA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, tempBytes, data, data, count, m_Stream));
  m_ScanTemp.Reserve(std::max<std::size_t>(tempBytes, 1), "scan workspace");
  CCA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(m_ScanTemp.As<void>(), tempBytes, data, data, count, m_Stream));
}

std::uint32_t
CudaEngine::ReadDeviceScalar(const std::uint32_t * device)
{
  CCA_CUDA_CHECK(cudaMemcpyAsync(m_HostScalars, device, sizeof(std::uint32_t), cudaMemcpyDeviceToHost, m_Stream));
  CCA_CUDA_CHECK(cudaStreamSynchronize(m_Stream));
  return m_HostScalars[0];
}

void
CudaEngine::ComputeContacts(const ContactRequest & request, ContactTable & table)
{
  ValidateContactRequest(request);
  const DeviceScope scope(m_DeviceId);
  m_Analyzed = false; // the caller's stream is the contacts' now: a later WriteLabels() needs a new Analyze()
  const void * labels = request.labels;
  if (request.labelsOnDevice)
  {
    m_CallerStream = request.stream;
    WaitForCallerStream();
  }
  else
  {
    const std::size_t bytes = request.NumberOfPixels() * ScalarKindSize(request.labelKind);
    m_ContactLabels.Reserve(bytes, "the label image");
    m_Staging.ToDevice(m_ContactLabels.As<void>(), request.labels, bytes, m_Stream);
    labels = m_ContactLabels.As<void>();
  }
  const PixelGrid grid{ static_cast<std::int64_t>(request.size[0]),
                        static_cast<std::int64_t>(request.size[1]),
                        static_cast<std::int64_t>(request.size[2]),
                        request.dimension };
  ComputeContactsOnDevice(labels,
                          request.labelKind,
                          grid,
                          request.connectivity.maxNonZero,
                          m_Contacts,
                          m_Stream,
                          m_Properties.multiProcessorCount,
                          table);
}

void
CudaEngine::WaitForCallerStream()
{
  if (m_CallerStream != nullptr)
  {
    CCA_CUDA_CHECK(cudaEventRecord(m_CallerReady, static_cast<cudaStream_t>(m_CallerStream)));
    CCA_CUDA_CHECK(cudaStreamWaitEvent(m_Stream, m_CallerReady, 0));
  }
}

void
CudaEngine::OrderCallerStreamAfterOutputs()
{
  // Ordered on the caller's stream, as a CUDA library's calls are: the host goes on without waiting for the launches
  // (a small device array's call otherwise waits for each of its outputs in turn). The host tables these outputs
  // were made from were copied from pageable memory, complete on return: none has to outlive the call.
  if (m_CallerStream == nullptr)
  {
    CCA_CUDA_CHECK(cudaStreamSynchronize(m_Stream));
    return;
  }
  CCA_CUDA_CHECK(cudaEventRecord(m_OutputsReady, m_Stream));
  CCA_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(m_CallerStream), m_OutputsReady, 0));
}

void
CudaEngine::ReleaseHandles()
{
  ReleaseGraph();
  if (m_OutputsOnHost)
  {
    cudaFreeHost(m_OutputsOnHost);
    m_OutputsOnHost = nullptr;
  }
  for (cudaEvent_t * event : { &m_CallerReady, &m_OutputsReady })
  {
    if (*event)
    {
      cudaEventDestroy(*event);
      *event = nullptr;
    }
  }
  if (m_HostScalars)
  {
    cudaFreeHost(m_HostScalars);
    m_HostScalars = nullptr;
  }
  if (m_Stream)
  {
    cudaStreamDestroy(m_Stream);
    m_Stream = nullptr;
  }
  cudaGetLastError(); // a failed release must not be reported by a later, unrelated launch check
}

} // namespace cuda
} // namespace cca
} // namespace itk
