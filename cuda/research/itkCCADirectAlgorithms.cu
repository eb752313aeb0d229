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
// The direct algorithms' registry, the raster-order relabel they share, and BenchmarkDirectAlgorithm().
//
// Raster order (ITK's numbering, 1..K by each component's first pixel) from any numbering in which all pixels
// of a component carry the same identifier: each component's first pixel is the smallest raster index among
// its row-run starts (an atomic minimum per identifier, one per warp and identifier: a warp's lanes are
// consecutive pixels, so the lowest lane of those that share an identifier holds the smallest index); the first
// pixels are flagged, an exclusive scan over the flags ranks them, and every pixel takes its first pixel's rank.

#include "itkCCABenchmark.h"
#include "itkCCACudaEngine.cuh"
#include "itkCCADeviceBuffer.cuh"
#include "itkCCADirectAlgorithm.cuh"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <map>
#include <mutex>

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{
constexpr std::uint32_t NoPixel = 0xffffffffu;
constexpr std::uint32_t AllLanes = 0xffffffffu;

std::mutex &
DirectRegistryMutex()
{
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, DirectAlgorithmFactory> &
DirectRegistry()
{
  static std::map<std::string, DirectAlgorithmFactory> registry;
  return registry;
}

/** firstPixel[id] = the smallest raster index of the foreground pixels labelled id (firstPixel starts at
 * NoPixel). */
__global__ void
FindFirstPixelsKernel(const std::uint8_t * __restrict__ pixels, const std::uint32_t * __restrict__ labels,
                      std::uint64_t numPixels, std::uint32_t width, std::uint32_t * __restrict__ firstPixel)
{
  const unsigned      lane = threadIdx.x & 31u;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * (blockDim.x / 32u);
  const std::uint64_t warp = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32u;
  for (std::uint64_t base = warp * 32u; base < numPixels; base += warps * 32u)
  {
    const std::uint64_t pixel = base + lane;
    std::uint32_t       id = NoPixel;
    // only where a run starts: a pixel whose left neighbor has the same identifier is not its first pixel
    if (pixel < numPixels && pixels[pixel] != 0 &&
        (pixel % width == 0 || pixels[pixel - 1] == 0 || labels[pixel - 1] != labels[pixel]))
    {
      id = labels[pixel];
    }
    const std::uint32_t peers = __match_any_sync(AllLanes, id);
    if (id != NoPixel && lane == static_cast<unsigned>(__ffs(peers) - 1))
    {
      atomicMin(firstPixel + id, static_cast<std::uint32_t>(pixel));
    }
  }
}

__global__ void
FlagFirstPixelsKernel(const std::uint32_t * __restrict__ firstPixel, std::uint64_t numPixels,
                      std::uint32_t * __restrict__ flags)
{
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numPixels;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    if (firstPixel[i] != NoPixel)
    {
      flags[firstPixel[i]] = 1;
    }
  }
}

__global__ void
WriteRasterLabelsKernel(const std::uint8_t * __restrict__ pixels, std::uint32_t * __restrict__ labels,
                        std::uint64_t numPixels, const std::uint32_t * __restrict__ firstPixel,
                        const std::uint32_t * __restrict__ rank)
{
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numPixels;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    labels[i] = pixels[i] != 0 ? rank[firstPixel[labels[i]]] + 1 : 0;
  }
}

/** The features of identifier id (its root) into row rank(id) of `ordered` (the components in raster order):
 * numberOfComponents of `ordered` is the component count. */
__global__ void
GatherFeaturesKernel(const std::uint32_t * __restrict__ firstPixel, const std::uint32_t * __restrict__ rank,
                     std::uint64_t numPixels, DeviceFeatures atRoots, DeviceFeatures ordered)
{
  for (std::uint64_t id = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; id < numPixels;
       id += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    if (firstPixel[id] == NoPixel)
    {
      continue;
    }
    const auto row = rank[firstPixel[id]];
    for (int i = 0; i < 3; ++i)
    {
      *ordered.Sum(i, row) = *atRoots.Sum(i, static_cast<std::uint32_t>(id));
    }
    for (int d = 0; d < 2; ++d)
    {
      ordered.boundingBoxMin[d][row] = atRoots.boundingBoxMin[d][id];
      ordered.boundingBoxMax[d][row] = atRoots.boundingBoxMax[d][id];
    }
  }
}

/** The buffers of the raster-order relabel, kept across runs. */
class RasterOrder
{
public:
  DeviceBuffer firstPixel, rank, scanTemp;

  /** Relabels `labels` in place into raster order (enqueued on `stream`; Count() after it). */
  void
  Apply(const std::uint8_t * pixels, std::uint32_t * labels, std::uint64_t numPixels, std::uint32_t width,
        cudaStream_t stream, int sms)
  {
    firstPixel.Reserve(numPixels * sizeof(std::uint32_t), "the first pixel of each component");
    rank.Reserve((numPixels + 1) * sizeof(std::uint32_t), "the rank of each first pixel");
    std::uint32_t * first = firstPixel.As<std::uint32_t>();
    std::uint32_t * ranks = rank.As<std::uint32_t>();
    CCA_CUDA_CHECK(cudaMemsetAsync(first, 0xff, numPixels * sizeof(std::uint32_t), stream));
    CCA_CUDA_CHECK(cudaMemsetAsync(ranks, 0, (numPixels + 1) * sizeof(std::uint32_t), stream));
    const unsigned grid = GridFor(numPixels, sms);
    FindFirstPixelsKernel<<<grid, BlockSize, 0, stream>>>(pixels, labels, numPixels, width, first);
    CCA_CUDA_CHECK_LAUNCH("FindFirstPixelsKernel");
    FlagFirstPixelsKernel<<<grid, BlockSize, 0, stream>>>(first, numPixels, ranks);
    CCA_CUDA_CHECK_LAUNCH("FlagFirstPixelsKernel");
    // numPixels + 1 entries: the last one (a 0 flag) becomes the total
    std::size_t tempBytes = 0;
    CCA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, tempBytes, ranks, ranks, numPixels + 1, stream));
    scanTemp.Reserve(tempBytes, "the scan of the first pixels");
    CCA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scanTemp.As<void>(), tempBytes, ranks, ranks, numPixels + 1, stream));
    WriteRasterLabelsKernel<<<grid, BlockSize, 0, stream>>>(pixels, labels, numPixels, first, ranks);
    CCA_CUDA_CHECK_LAUNCH("WriteRasterLabelsKernel");
    m_NumPixels = numPixels;
  }

  /** After Apply(): the features that `atRoots` holds at each component's identifier, into `ordered` in raster
   * order. */
  void
  GatherFeatures(const DeviceFeatures & atRoots, const DeviceFeatures & ordered, cudaStream_t stream, int sms)
  {
    GatherFeaturesKernel<<<GridFor(m_NumPixels, sms), BlockSize, 0, stream>>>(
      firstPixel.As<std::uint32_t>(), rank.As<std::uint32_t>(), m_NumPixels, atRoots, ordered);
    CCA_CUDA_CHECK_LAUNCH("GatherFeaturesKernel");
  }

  /** The number of components of the last Apply(), once it has run (the scan's total). */
  std::uint32_t
  Count() const
  {
    std::uint32_t count = 0;
    CCA_CUDA_CHECK(cudaMemcpy(&count, rank.As<std::uint32_t>() + m_NumPixels, sizeof count, cudaMemcpyDeviceToHost));
    return count;
  }

private:
  std::uint64_t m_NumPixels = 0;
};
/** The direct algorithms' features for `n` entries: 3 sums (S, Σx, Σy) in `sums`, the boxes in `boxes` as
 * x min, y min, x max, y max, each a block of n (the host reads them back in that order). */
DeviceFeatures
PlanarFeatures(const DeviceBuffer & sums, const DeviceBuffer & boxes, std::uint64_t n)
{
  DeviceFeatures f{};
  f.sums = sums.As<unsigned long long>();
  f.numberOfComponents = n;
  for (int d = 0; d < 2; ++d)
  {
    f.boundingBoxMin[d] = boxes.As<std::uint32_t>() + d * n;
    f.boundingBoxMax[d] = boxes.As<std::uint32_t>() + (2 + d) * n;
  }
  return f;
}
} // namespace

void
RegisterDirectAlgorithm(const std::string & name, DirectAlgorithmFactory factory)
{
  const std::lock_guard<std::mutex> lock(DirectRegistryMutex());
  DirectRegistry()[name] = factory;
}

std::unique_ptr<DirectAlgorithm>
CreateDirectAlgorithm(const std::string & name)
{
  DirectAlgorithmFactory factory = nullptr;
  {
    const std::lock_guard<std::mutex> lock(DirectRegistryMutex());
    const auto                        found = DirectRegistry().find(name);
    factory = found == DirectRegistry().end() ? nullptr : found->second;
  }
  if (!factory)
  {
    std::string known;
    for (const auto & n : RegisteredDirectAlgorithms())
    {
      known += (known.empty() ? "" : ", ") + n;
    }
    throw Error("no direct labeling algorithm named '" + name + "' (registered: " +
                (known.empty() ? std::string("none; call cca::RegisterDirectAlgorithms()") : known) + ")");
  }
  return factory();
}

std::vector<std::string>
RegisteredDirectAlgorithms()
{
  const std::lock_guard<std::mutex> lock(DirectRegistryMutex());
  std::vector<std::string>          names;
  for (const auto & entry : DirectRegistry())
  {
    names.push_back(entry.first);
  }
  return names;
}

} // namespace cuda

std::vector<std::string>
DirectAlgorithmNames()
{
  return cuda::RegisteredDirectAlgorithms();
}

bool
DirectAlgorithmFullyConnected(const std::string & algorithm)
{
  return cuda::CreateDirectAlgorithm(algorithm)->FullyConnected();
}

DirectLabelingTimings
BenchmarkDirectAlgorithm(const std::string & algorithmName, const std::uint8_t * pixels, std::uint32_t width,
                         std::uint32_t height, int deviceId, int warmupRuns, int timedRuns, bool keepLabels)
{
  auto                algorithm = cuda::CreateDirectAlgorithm(algorithmName);
  const std::uint64_t numPixels = static_cast<std::uint64_t>(width) * height;
  if (numPixels == 0 || numPixels >= 0xffffffffull || width > (1u << 31))
  {
    throw Error("the direct algorithms take 1 to 2^32 - 2 pixels (32-bit labels), rows up to 2^31 pixels");
  }
  auto       engineOwner = CreateCudaEngine(deviceId); // selects and checks the device
  auto &     engine = static_cast<cuda::CudaEngine &>(*engineOwner);
  const auto stream = engine.GetStream();
  int        sms = 1;
  CCA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, deviceId));
  cuda::DeviceBuffer image, labels;
  image.Reserve(numPixels, "the benchmark image");
  labels.Reserve(numPixels * sizeof(std::uint32_t), "the labels");
  // On the engine's (non-blocking) stream and waited for: a plain cudaMemcpy from pageable memory may return
  // before its DMA ends, and the legacy stream it uses does not order the kernels of a non-blocking one.
  CCA_CUDA_CHECK(cudaMemcpyAsync(image.As<void>(), pixels, numPixels, cudaMemcpyHostToDevice, stream));
  CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
  const cuda::DirectImage input{ image.As<std::uint8_t>(), width, height, stream, sms };
  cuda::RasterOrder       rasterOrder;

  DirectLabelingTimings result;
  result.device = engine.GetDescription();
  result.algorithm = algorithmName;
  result.fullyConnected = algorithm->FullyConnected();
  struct Event // destroyed on every way out, exceptions included
  {
    cudaEvent_t event = nullptr;
    Event() { CCA_CUDA_CHECK(cudaEventCreate(&event)); }
    ~Event() { cudaEventDestroy(event); }
    Event(const Event &) = delete;
    Event &
    operator=(const Event &) = delete;
  } startEvent, labelledEvent, orderedEvent;
  const cudaEvent_t start = startEvent.event, labelled = labelledEvent.event, ordered = orderedEvent.event;
  for (int run = 0; run < warmupRuns + timedRuns; ++run)
  {
    CCA_CUDA_CHECK(cudaEventRecord(start, stream));
    algorithm->Label(input, labels.As<std::uint32_t>());
    CCA_CUDA_CHECK(cudaEventRecord(labelled, stream));
    rasterOrder.Apply(input.pixels, labels.As<std::uint32_t>(), numPixels, width, stream, sms);
    CCA_CUDA_CHECK(cudaEventRecord(ordered, stream));
    CCA_CUDA_CHECK(cudaEventSynchronize(ordered));
    result.components = rasterOrder.Count();
    float labelsMs = 0, orderedMs = 0;
    CCA_CUDA_CHECK(cudaEventElapsedTime(&labelsMs, start, labelled));
    CCA_CUDA_CHECK(cudaEventElapsedTime(&orderedMs, start, ordered));
    if (run >= warmupRuns)
    {
      result.labelsMs.push_back(labelsMs);
      result.labelsInRasterOrderMs.push_back(orderedMs);
    }
  }
  if (keepLabels)
  {
    result.labels.resize(numPixels);
    CCA_CUDA_CHECK(
      cudaMemcpy(result.labels.data(), labels.As<void>(), numPixels * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  }
  result.computesFeatures = algorithm->ComputesFeatures();
  if (result.computesFeatures)
  {
    // Features at every possible root (a pixel index): 3 sums and 2 x 2 box bounds per pixel.
    cuda::DeviceBuffer sums, boxes;
    sums.Reserve(3 * numPixels * sizeof(unsigned long long), "the features at the roots");
    boxes.Reserve(4 * numPixels * sizeof(std::uint32_t), "the boxes at the roots");
    const auto atRoots = cuda::PlanarFeatures(sums, boxes, numPixels);
    for (int run = 0; run < warmupRuns + timedRuns; ++run)
    {
      CCA_CUDA_CHECK(cudaEventRecord(start, stream));
      algorithm->Analyze(input, labels.As<std::uint32_t>(), atRoots);
      CCA_CUDA_CHECK(cudaEventRecord(labelled, stream));
      CCA_CUDA_CHECK(cudaEventSynchronize(labelled));
      float ms = 0;
      CCA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, labelled));
      if (run >= warmupRuns)
      {
        result.featuresMs.push_back(ms);
      }
    }
    if (keepLabels)
    {
      // The last CCA run's forest made a label image, put into raster order, and its roots' features gathered
      // in that order: what the test compares with ITK.
      algorithm->LabelAnalyzed(input, labels.As<std::uint32_t>());
      rasterOrder.Apply(input.pixels, labels.As<std::uint32_t>(), numPixels, width, stream, sms);
      CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
      const std::uint32_t count = rasterOrder.Count();
      result.analyzedLabels.resize(numPixels);
      CCA_CUDA_CHECK(cudaMemcpy(
        result.analyzedLabels.data(), labels.As<void>(), numPixels * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
      if (count != result.components)
      {
        throw Error(algorithmName + ": its CCA found " + std::to_string(count) + " components, its CCL " +
                    std::to_string(result.components));
      }
      cuda::DeviceBuffer orderedSums, orderedBoxes;
      orderedSums.Reserve(3 * std::max<std::uint64_t>(count, 1) * sizeof(unsigned long long), "ordered features");
      orderedBoxes.Reserve(4 * std::max<std::uint64_t>(count, 1) * sizeof(std::uint32_t), "ordered boxes");
      const auto inRasterOrder = cuda::PlanarFeatures(orderedSums, orderedBoxes, count);
      rasterOrder.GatherFeatures(atRoots, inRasterOrder, stream, sms);
      CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<unsigned long long> s(3 * static_cast<std::size_t>(count));
      std::vector<std::uint32_t>      b(4 * static_cast<std::size_t>(count));
      CCA_CUDA_CHECK(cudaMemcpy(s.data(), inRasterOrder.sums, s.size() * sizeof(s[0]), cudaMemcpyDeviceToHost));
      CCA_CUDA_CHECK(cudaMemcpy(b.data(), orderedBoxes.As<void>(), b.size() * sizeof(b[0]), cudaMemcpyDeviceToHost));
      result.count.assign(s.begin(), s.begin() + count);
      result.sumX.assign(s.begin() + count, s.begin() + 2 * count);
      result.sumY.assign(s.begin() + 2 * count, s.end());
      result.minX.assign(b.begin(), b.begin() + count);
      result.minY.assign(b.begin() + count, b.begin() + 2 * count);
      result.maxX.assign(b.begin() + 2 * count, b.begin() + 3 * count);
      result.maxY.assign(b.begin() + 3 * count, b.end());
    }
  }
  return result;
}

} // namespace cca
} // namespace itk
