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
// The CUDA engine's analysis of a small image (one slice, one patch, thousands of times). The
// general path reads the run count and the component count back to size its buffers: two round trips to the
// device and a dozen launches, where a 64^2 image's whole work takes a few microseconds of GPU time. Here the
// buffers hold the most runs the image can have (every other pixel of a row), the foreground bits are built
// as in the general path, and one cooperative launch does the rest (itkCCASmallImageAnalysis.cuh); the
// analysis synchronizes once, at its end. Once the same analysis (shape, kinds, options, buffers) comes twice
// in a row, its launches are captured into a CUDA graph, and later calls launch that graph alone.

#include "itkCCACudaEngine.cuh"

#include "itkCCACudaStages.cuh"
#include "itkCCARunFeatures.cuh"
#include "itkCCASmallImageAnalysis.cuh"

#include <algorithm>
#include <cstring>

namespace itk
{
namespace cca
{
namespace cuda
{

namespace
{
/** Up to this many pixels an image takes the small-image path: its worst-case buffers stay a few tens of MB (at
 * most 2^18 runs, for an image one pixel wide, 2^17 for a square one: 2.6 MB of runs, 4 MB of basic sums, 22 MB
 * with the LabelMap's sums), and the counts' round trips are a large share of its time. */
constexpr std::uint64_t SmallImageMaxPixels = std::uint64_t{ 1 } << 18;
/** Pixels per block of the small-image launch (64^2: one block, whose barriers are block barriers; 512^2: 64).
 * Measured on the H100 (docs/performance.md): one block's kernel takes 1 us at 64^2 but 150 us at 256^2, and
 * 16 pixels per thread was the fastest of 16, 64 and 256 at 256^2 and 512^2, where each grid-wide barrier
 * costs about 2 us. */
constexpr std::uint64_t SmallImagePixelsPerBlock = std::uint64_t{ 16 } * BlockSize;
/** Up to this many pixels the kernel also writes the label image (uint32, as the Python package and most
 * callers ask for it) into host-mapped memory, and the basic sums of up to SmallImageRowsToHost components:
 * the call's outputs then cost a memcpy each instead of a launch, a copy and a synchronization (about 20 us
 * each on the H100). Beyond, the kernel's writes over the bus would take about as long as that round trip (an
 * estimate from the PCIe rate, not measured). A host image of up to this many pixels is read by the foreground
 * kernel from mapped memory too, without a copy to the device (a memcpy into the mapped buffer, no DMA, no
 * event). */
constexpr std::uint64_t SmallImageOutputsToHostMaxPixels = std::uint64_t{ 1 } << 16;
constexpr std::uint32_t SmallImageRowsToHost = 4096;
constexpr std::size_t   LabelsToHostBytes = SmallImageOutputsToHostMaxPixels * sizeof(std::uint32_t);
constexpr std::size_t SumsToHostBytes = std::size_t{ SmallImageRowsToHost } * SumProducts0 * sizeof(unsigned long long);
constexpr std::size_t BoxesToHostBytes = std::size_t{ SmallImageRowsToHost } * 6 * sizeof(std::uint32_t);
constexpr std::size_t InputFromHostOffset = LabelsToHostBytes + SumsToHostBytes + BoxesToHostBytes;
constexpr std::size_t InputFromHostBytes = SmallImageOutputsToHostMaxPixels * sizeof(double); // the widest pixel
} // namespace

unsigned
CudaEngine::SmallImageBlocks(const Request & request, const FeatureVariant & variant)
{
  if (request.NumberOfPixels() > SmallImageMaxPixels || !variant.AnalyzesSmallImagesInOneLaunch())
  {
    return 0;
  }
  const std::size_t instance = request.computeShapeSums ? (request.computePerimeter ? 2 : 1) : 0;
  int &             maxBlocks = m_SmallImageMaxBlocks[instance];
  if (maxBlocks < 0)
  {
    // 0 where the device has no cooperative launch: the general path then.
    maxBlocks = static_cast<int>(
      SmallImageMaxBlocks(request.computeShapeSums, request.computePerimeter, m_Properties.multiProcessorCount));
  }
  const std::uint64_t wanted = (request.NumberOfPixels() + SmallImagePixelsPerBlock - 1) / SmallImagePixelsPerBlock;
  return static_cast<unsigned>(std::min<std::uint64_t>(std::max<std::uint64_t>(wanted, 1), maxBlocks));
}

bool
CudaEngine::AnalyzeSmallImage(const Request & request, bool onDevice, unsigned blocks)
{
  const DeviceGeometry & g = m_Geometry;
  // The most runs: a run and a gap, alternately, in every row.
  const std::uint32_t capacity = g.numRows * ((g.width + 1u) / 2u);
  const int           numSums = request.computeShapeSums ? NumberOfSums : SumProducts0;
  // Every buffer the launches touch, allocated before them (a graph capture may not allocate).
  m_Bits.Reserve(std::uint64_t{ g.numWords } * sizeof(std::uint32_t), "the foreground bitmask");
  m_FirstRun.Reserve((std::uint64_t{ g.numWords } + 1) * sizeof(std::uint32_t), "run offsets");
  for (DeviceBuffer * runs : { &m_RunBegin, &m_RunEnd, &m_RunRow, &m_Parent })
  {
    runs->Reserve(std::uint64_t{ capacity } * sizeof(std::uint32_t), "runs");
  }
  m_RootLabel.Reserve((std::uint64_t{ capacity } + 1) * sizeof(std::uint32_t), "component labels");
  m_ScanTemp.Reserve(std::uint64_t{ blocks } * sizeof(std::uint32_t), "scan workspace");
  m_FeatureSums.Reserve(std::uint64_t{ capacity } * numSums * sizeof(unsigned long long), "component features");
  m_FeatureBoxes.Reserve(std::uint64_t{ capacity } * 6 * sizeof(std::uint32_t), "component features");
  // Host images only: a device array's caller wants its outputs on the device.
  const bool outputsToHost = !onDevice && request.NumberOfPixels() <= SmallImageOutputsToHostMaxPixels;
  if (outputsToHost && !m_OutputsOnHost)
  {
    void * host = nullptr;
    CCA_CUDA_CHECK(cudaHostAlloc(&host, InputFromHostOffset + InputFromHostBytes, cudaHostAllocMapped));
    void *            mapped = nullptr;
    const cudaError_t status = cudaHostGetDevicePointer(&mapped, host, 0);
    if (status != cudaSuccess)
    {
      cudaFreeHost(host);
      CCA_CUDA_CHECK(status);
    }
    m_OutputsOnHost = host;
    m_MappedOutputs = mapped;
  }

  // A host image is copied before the launches (a host copy cannot be part of the graph): into the mapped
  // buffer, or uploaded. With a mask the two take turns in one pixel buffer, so that case is launched as it
  // comes, without a graph.
  Request    deviceRequest = request;
  bool       inputOnDevice = onDevice;
  const bool graphable = request.mask == nullptr && !m_GraphsUnavailable;
  if (!onDevice && request.mask == nullptr)
  {
    const std::size_t inputBytes = request.NumberOfPixels() * ScalarKindSize(request.inputKind);
    if (outputsToHost)
    {
      // The last analysis has finished (it synchronized), so nothing reads the buffer any more.
      std::memcpy(static_cast<char *>(m_OutputsOnHost) + InputFromHostOffset, request.input, inputBytes);
      deviceRequest.input = static_cast<char *>(m_MappedOutputs) + InputFromHostOffset;
    }
    else
    {
      m_Pixels.Reserve(inputBytes, "the input image");
      m_Staging.ToDevice(m_Pixels.As<void>(), request.input, inputBytes, m_Stream);
      deviceRequest.input = m_Pixels.As<void>();
    }
    inputOnDevice = true;
  }

  std::vector<std::uint64_t> key;
  if (graphable)
  {
    key = SmallImageGraphKey(deviceRequest, blocks, capacity, outputsToHost);
  }
  // A graph that fails to launch, or to be made, launches nothing: the launches then go as they come, now and
  // from then on (graphs are an optimization, never a reason to fail).
  bool launched = false;
  if (graphable && m_Graph && key == m_GraphKey)
  {
    launched = cudaGraphLaunch(m_Graph, m_Stream) == cudaSuccess;
    if (!launched)
    {
      cudaGetLastError();
      ReleaseGraph();
      m_GraphsUnavailable = true;
    }
  }
  else if (graphable && key == m_PreviousSmallImageKey)
  {
    // The same analysis twice in a row: worth a graph (instantiating one costs a few calls' launches).
    ReleaseGraph();
    m_Graph = CaptureSmallImageAnalysis(deviceRequest, inputOnDevice, blocks, capacity, outputsToHost);
    launched = m_Graph != nullptr && cudaGraphLaunch(m_Graph, m_Stream) == cudaSuccess;
    if (launched)
    {
      m_GraphKey = key;
    }
    else
    {
      cudaGetLastError();
      ReleaseGraph();
      m_GraphsUnavailable = true;
    }
  }
  if (!launched && !EnqueueSmallImageAnalysis(deviceRequest, inputOnDevice, blocks, capacity, outputsToHost))
  {
    // The device refused the cooperative launch (its size, or a sharing mode without it): the general path,
    // now and for every later image.
    m_SmallImageMaxBlocks.fill(0);
    m_PreviousSmallImageKey.clear();
    return false;
  }
  m_PreviousSmallImageKey = std::move(key);
  CCA_CUDA_CHECK(cudaStreamSynchronize(m_Stream));
  m_NumberOfRuns = m_HostScalars[0]; // written by the kernel into mapped memory
  m_NumberOfComponents = m_HostScalars[1];
  m_LabelsOnHost = outputsToHost;
  m_SumsOnHost = outputsToHost && m_NumberOfComponents <= SmallImageRowsToHost;
  return true;
}

bool
CudaEngine::EnqueueSmallImageAnalysis(const Request & request, bool inputOnDevice, unsigned blocks,
                                      std::uint32_t capacity, bool outputsToHost)
{
  BuildForegroundBits(request,
                      inputOnDevice,
                      m_Pixels,
                      m_Staging,
                      m_Bits.As<std::uint32_t>(),
                      m_Geometry,
                      m_Stream,
                      m_Properties.multiProcessorCount);
  SmallImageAnalysis a;
  a.bits = m_Bits.As<std::uint32_t>();
  a.firstRun = m_FirstRun.As<std::uint32_t>();
  a.runBegin = m_RunBegin.As<std::uint32_t>();
  a.runEnd = m_RunEnd.As<std::uint32_t>();
  a.runRow = m_RunRow.As<std::uint32_t>();
  a.parent = m_Parent.As<std::uint32_t>();
  a.rootLabel = m_RootLabel.As<std::uint32_t>();
  a.blockTotals = m_ScanTemp.As<std::uint32_t>();
  a.sums = m_FeatureSums.As<unsigned long long>();
  a.boxes = m_FeatureBoxes.As<std::uint32_t>();
  a.counts = m_MappedScalars;
  a.geometry = m_Geometry;
  a.neighbors = MakeDeviceRuns(request, capacity).neighbors;
  char * mapped = static_cast<char *>(m_MappedOutputs);
  a.labelsToHost = outputsToHost ? reinterpret_cast<std::uint32_t *>(mapped) : nullptr;
  a.sumsToHost = outputsToHost ? reinterpret_cast<unsigned long long *>(mapped + LabelsToHostBytes) : nullptr;
  a.boxesToHost =
    outputsToHost ? reinterpret_cast<std::uint32_t *>(mapped + LabelsToHostBytes + SumsToHostBytes) : nullptr;
  a.rowsToHost = SmallImageRowsToHost;
  return LaunchSmallImageAnalysis(a, request.computeShapeSums, request.computePerimeter, blocks, m_Stream);
}

cudaGraphExec_t
CudaEngine::CaptureSmallImageAnalysis(const Request & request, bool inputOnDevice, unsigned blocks,
                                      std::uint32_t capacity, bool outputsToHost)
{
  cudaGraph_t graph = nullptr;
  if (cudaStreamBeginCapture(m_Stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
  {
    cudaGetLastError();
    return nullptr;
  }
  bool captured = true;
  try
  {
    captured = EnqueueSmallImageAnalysis(request, inputOnDevice, blocks, capacity, outputsToHost);
  }
  catch (const std::exception &)
  {
    captured = false; // a call the capture refused; the stream leaves capture mode below either way
  }
  captured = cudaStreamEndCapture(m_Stream, &graph) == cudaSuccess && captured;
  cudaGraphExec_t exec = nullptr;
  if (captured && cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
  {
    exec = nullptr;
  }
  if (graph)
  {
    cudaGraphDestroy(graph);
  }
  cudaGetLastError(); // a refused capture is not an error of a later launch
  return exec;
}

std::vector<std::uint64_t>
CudaEngine::SmallImageGraphKey(const Request & request, unsigned blocks, std::uint32_t capacity,
                               bool outputsToHost) const
{
  auto address = [](const void * p) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p)); };
  const DeviceGeometry & g = m_Geometry;
  return { g.width,
           g.height,
           g.depth,
           g.dimension,
           g.batchExtent,
           capacity,
           static_cast<std::uint64_t>(request.inputKind),
           request.connectivity.maxNonZero,
           request.computeShapeSums,
           request.computePerimeter,
           blocks,
           address(request.input),
           address(m_Bits.As<void>()),
           address(m_FirstRun.As<void>()),
           address(m_RunBegin.As<void>()),
           address(m_RunEnd.As<void>()),
           address(m_RunRow.As<void>()),
           address(m_Parent.As<void>()),
           address(m_RootLabel.As<void>()),
           address(m_ScanTemp.As<void>()),
           address(m_FeatureSums.As<void>()),
           address(m_FeatureBoxes.As<void>()),
           outputsToHost,
           address(m_MappedOutputs) };
}

void
CudaEngine::ReleaseGraph()
{
  if (m_Graph)
  {
    cudaGraphExecDestroy(m_Graph);
    m_Graph = nullptr;
  }
  m_GraphKey.clear();
}

bool
CudaEngine::WriteLabelsFromHost(const LabelOutput & output)
{
  if (!m_LabelsOnHost || output.onDevice || output.kind != ScalarKind::UInt32 || output.backgroundBits != 0 ||
      output.skipValue != 0 || output.newIndex != nullptr || output.classValue != nullptr)
  {
    return false;
  }
  const std::uint64_t rowBytes = std::uint64_t{ m_Geometry.width } * sizeof(std::uint32_t);
  const std::uint64_t rows = output.numberOfRows != 0 ? output.numberOfRows : m_Geometry.numRows;
  std::memcpy(output.data, static_cast<const char *>(m_OutputsOnHost) + output.firstRow * rowBytes, rows * rowBytes);
  return true;
}

bool
CudaEngine::WriteBasicColumnsFromHost(const BasicGeometry & geometry, const BasicColumns & columns,
                                      const std::uint64_t * newIndex)
{
  if (!m_SumsOnHost || columns.onDevice)
  {
    return false;
  }
  // At most SmallImageRowsToHost rows: on this thread, with the arithmetic of the GPU's column kernel.
  const std::uint64_t              k = m_NumberOfComponents;
  const char *                     base = static_cast<const char *>(m_OutputsOnHost) + LabelsToHostBytes;
  const unsigned long long * const sums = reinterpret_cast<const unsigned long long *>(base);
  const std::uint32_t * const      boxes = reinterpret_cast<const std::uint32_t *>(base + SumsToHostBytes);
  static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long), "the table is read as is");
  for (std::uint64_t i = 0; i < k; ++i)
  {
    WriteBasicRowOfComponent(
      geometry, columns, sums, boxes, k, i, reinterpret_cast<const unsigned long long *>(newIndex));
    // Binary input (multi-label input never takes the small-image path): no class, 0 as the CPU engine writes.
    const std::uint64_t row = newIndex ? newIndex[i] : i;
    if (columns.classValue && row != UINT64_MAX)
    {
      columns.classValue[row] = 0;
    }
  }
  return true;
}

} // namespace cuda
} // namespace cca
} // namespace itk
