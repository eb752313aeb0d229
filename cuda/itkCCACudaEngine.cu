/*=========================================================================
 *  The CUDA engine: FLSL segment detection, lock-free union-find over runs, features voted with
 *  conflict detection (FLSL+CD), consecutive raster-order labels written in the output pixel type.
 *  ITK-free; reached through itkCCAEngine.h.
 *=========================================================================*/
#include "itkCCAEngine.h"
#include "itkCCAParallelFor.h"

#include "itkCCACudaCheck.cuh"
#include "itkCCADeviceGeometry.cuh"
#include "itkCCAFlslFeaturesCD.cuh"
#include "itkCCAFlslFeaturesOTF.cuh"
#include "itkCCAFlslFeaturesRunAtomics.cuh"
#include "itkCCAFlslMerge.cuh"
#include "itkCCANaiveFeatures.cuh"
#include "itkCCARelabel.cuh"
#include "itkCCAFlslSegments.cuh"
#include "itkCCALabelWriter.cuh"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <cstring>
#include <sstream>
#include <thread>

namespace itk
{
namespace cca
{
namespace cuda
{
namespace
{

constexpr unsigned BlockSize = 256;

/** Calls f(T{}) with the C++ type of `kind`. */
template <typename F>
void
DispatchScalar(ScalarKind kind, F && f)
{
  switch (kind)
  {
    case ScalarKind::UInt8:
      return f(std::uint8_t{});
    case ScalarKind::Int8:
      return f(std::int8_t{});
    case ScalarKind::UInt16:
      return f(std::uint16_t{});
    case ScalarKind::Int16:
      return f(std::int16_t{});
    case ScalarKind::UInt32:
      return f(std::uint32_t{});
    case ScalarKind::Int32:
      return f(std::int32_t{});
    case ScalarKind::UInt64:
      return f(std::uint64_t{});
    case ScalarKind::Int64:
      return f(std::int64_t{});
    case ScalarKind::Float32:
      return f(float{});
    case ScalarKind::Float64:
      return f(double{});
  }
  throw EngineError("unknown pixel type");
}

/** A device allocation that only grows: buffers are reused across Analyze() calls of the same size. */
class DeviceBuffer
{
public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &
  operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { cudaFree(m_Data); } // errors at teardown cannot be reported; nothing to do with them

  void
  Reserve(std::size_t bytes, const char * what)
  {
    if (bytes <= m_Capacity)
    {
      return;
    }
    CCA_CUDA_CHECK(cudaFree(m_Data));
    m_Data = nullptr;
    m_Capacity = 0;
    const cudaError_t status = cudaMalloc(&m_Data, bytes);
    if (status != cudaSuccess)
    {
      cudaGetLastError(); // clear the (non-sticky) allocation error
      std::ostringstream msg;
      msg << "GPU out of memory: could not allocate " << bytes << " bytes for " << what << " ("
          << cudaGetErrorString(status) << ")";
      throw EngineError(msg.str());
    }
    m_Capacity = bytes;
  }

  template <typename T>
  T *
  As() const
  {
    return static_cast<T *>(m_Data);
  }

private:
  void *      m_Data = nullptr;
  std::size_t m_Capacity = 0;
};

/** Threads for the host side of transfers and conversions: one thread copies or converts pageable
 * memory at well under the PCIe rate; beyond 16 the memory bus, not the threads, is the limit. */
unsigned
HostThreads()
{
  return std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
}

/** Host<->device copies between ordinary (pageable) host memory and the device at close to the pinned
 * PCIe rate, without page-locking user buffers: the transfer is cut into one slice per lane, and each
 * lane -- a host thread with its own stream and two small pinned buffers -- pipelines its slice: the
 * memcpy of one chunk into (or out of) pinned memory overlaps the DMA of the other. Several lanes are
 * needed because one thread's memcpy of pageable memory runs well under the PCIe rate; lanes are
 * independent, so there is no hand-off between threads inside a transfer. */
class PinnedStaging
{
public:
  static constexpr std::size_t ChunkBytes = std::size_t{ 4 } << 20;
  static constexpr unsigned    MaxLanes = 8;

  PinnedStaging() = default;
  PinnedStaging(const PinnedStaging &) = delete;
  PinnedStaging &
  operator=(const PinnedStaging &) = delete;
  ~PinnedStaging()
  {
    for (Lane & lane : m_Lanes)
    {
      for (int i = 0; i < 2; ++i)
      {
        cudaFreeHost(lane.host[i]);
        if (lane.chunkDone[i])
        {
          cudaEventDestroy(lane.chunkDone[i]);
        }
      }
      if (lane.finished)
      {
        cudaEventDestroy(lane.finished);
      }
      if (lane.stream)
      {
        cudaStreamDestroy(lane.stream);
      }
    }
    if (m_Ready)
    {
      cudaEventDestroy(m_Ready);
    }
    cudaGetLastError(); // a failed release must not be reported by a later, unrelated launch check
  }

  void
  Initialize()
  {
    if (!m_Lanes.empty())
    {
      return;
    }
    cudaEvent_t ready = nullptr;
    CCA_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    m_Ready = ready;
    m_Lanes.resize(std::min(MaxLanes, HostThreads()));
    // Handles go through locals: a failed create leaves its output undefined, and the destructor
    // releases only what was really created.
    for (Lane & lane : m_Lanes)
    {
      cudaStream_t stream = nullptr;
      CCA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      lane.stream = stream;
      cudaEvent_t finished = nullptr;
      CCA_CUDA_CHECK(cudaEventCreateWithFlags(&finished, cudaEventDisableTiming));
      lane.finished = finished;
      for (int i = 0; i < 2; ++i)
      {
        void * host = nullptr;
        CCA_CUDA_CHECK(cudaMallocHost(&host, ChunkBytes));
        lane.host[i] = host;
        cudaEvent_t done = nullptr;
        CCA_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        lane.chunkDone[i] = done;
      }
    }
  }

  /** Enqueues the copy after the work already in `stream`, and makes the later work in `stream` wait
   * for it; returns once `host` may be reused. */
  void
  ToDevice(void * device, const void * host, std::size_t bytes, cudaStream_t stream)
  {
    ForEachLane(bytes, stream, [&](Lane & lane, std::size_t begin, std::size_t end) {
      for (std::size_t offset = begin, i = 0; offset < end; offset += ChunkBytes, ++i)
      {
        const int         slot = static_cast<int>(i % 2);
        const std::size_t n = std::min(ChunkBytes, end - offset);
        CCA_CUDA_CHECK(cudaEventSynchronize(lane.chunkDone[slot])); // the slot's previous DMA has finished
        std::memcpy(lane.host[slot], static_cast<const char *>(host) + offset, n);
        CCA_CUDA_CHECK(cudaMemcpyAsync(
          static_cast<char *>(device) + offset, lane.host[slot], n, cudaMemcpyHostToDevice, lane.stream));
        CCA_CUDA_CHECK(cudaEventRecord(lane.chunkDone[slot], lane.stream));
      }
    });
  }

  /** Copies after the work already in `stream`; returns when `host` holds the data. */
  void
  ToHost(void * host, const void * device, std::size_t bytes, cudaStream_t stream)
  {
    ForEachLane(bytes, stream, [&](Lane & lane, std::size_t begin, std::size_t end) {
      const std::size_t chunks = (end - begin + ChunkBytes - 1) / ChunkBytes;
      auto              enqueue = [&](std::size_t i) {
        const int         slot = static_cast<int>(i % 2);
        const std::size_t offset = begin + i * ChunkBytes;
        CCA_CUDA_CHECK(cudaMemcpyAsync(lane.host[slot],
                                       static_cast<const char *>(device) + offset,
                                       std::min(ChunkBytes, end - offset),
                                       cudaMemcpyDeviceToHost,
                                       lane.stream));
        CCA_CUDA_CHECK(cudaEventRecord(lane.chunkDone[slot], lane.stream));
      };
      enqueue(0);
      for (std::size_t i = 0; i < chunks; ++i)
      {
        if (i + 1 < chunks)
        {
          enqueue(i + 1);
        }
        const int         slot = static_cast<int>(i % 2);
        const std::size_t offset = begin + i * ChunkBytes;
        CCA_CUDA_CHECK(cudaEventSynchronize(lane.chunkDone[slot]));
        std::memcpy(static_cast<char *>(host) + offset, lane.host[slot], std::min(ChunkBytes, end - offset));
      }
    });
  }

private:
  struct Lane
  {
    cudaStream_t stream = nullptr;
    void *       host[2] = { nullptr, nullptr };
    cudaEvent_t  chunkDone[2] = { nullptr, nullptr };
    cudaEvent_t  finished = nullptr;
  };

  /** Slices [0, bytes) over the lanes (at least a chunk each), runs copy(lane, begin, end) for each on
   * its own thread after the work already in `stream`, then makes `stream` wait for every lane. */
  template <typename TCopy>
  void
  ForEachLane(std::size_t bytes, cudaStream_t stream, const TCopy & copy)
  {
    if (bytes == 0)
    {
      return;
    }
    const std::size_t lanes = std::min<std::size_t>(m_Lanes.size(), (bytes + ChunkBytes - 1) / ChunkBytes);
    const std::size_t slice = (bytes + lanes - 1) / lanes;
    CCA_CUDA_CHECK(cudaEventRecord(m_Ready, stream));
    ParallelFor(static_cast<unsigned>(lanes), lanes, [&](std::uint64_t l) {
      Lane &            lane = m_Lanes[l];
      const std::size_t begin = l * slice;
      const std::size_t end = std::min(bytes, begin + slice);
      CCA_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, m_Ready, 0));
      if (begin < end)
      {
        copy(lane, begin, end);
      }
      CCA_CUDA_CHECK(cudaEventRecord(lane.finished, lane.stream));
    });
    for (std::size_t l = 0; l < lanes; ++l)
    {
      CCA_CUDA_CHECK(cudaStreamWaitEvent(stream, m_Lanes[l].finished, 0));
    }
  }

  std::vector<Lane> m_Lanes;
  cudaEvent_t       m_Ready = nullptr;
};

unsigned
GridFor(std::uint64_t threads, int multiprocessors)
{
  const std::uint64_t blocks = (threads + BlockSize - 1) / BlockSize;
  const std::uint64_t cap = static_cast<std::uint64_t>(std::max(multiprocessors, 1)) * 32u;
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(blocks, cap)));
}

class CudaEngine final : public Engine
{
public:
  explicit CudaEngine(int deviceId)
    : m_DeviceId(deviceId)
  {
    CCA_CUDA_CHECK(cudaSetDevice(m_DeviceId));
    CCA_CUDA_CHECK(cudaGetDeviceProperties(&m_Properties, m_DeviceId));
    if (m_Properties.major < 7)
    {
      std::ostringstream msg;
      msg << "CUDA device " << deviceId << " (" << m_Properties.name << ", compute capability "
          << m_Properties.major << '.' << m_Properties.minor
          << ") is too old: the CUDA engine needs compute capability 7.0 or newer (__match_any_sync)";
      throw EngineUnavailable(msg.str());
    }
    cudaStream_t stream = nullptr;
    CCA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    m_Stream = stream;
    try
    {
      m_Staging.Initialize();
      void * scalars = nullptr;
      CCA_CUDA_CHECK(cudaMallocHost(&scalars, 2 * sizeof(std::uint32_t)));
      m_HostScalars = static_cast<std::uint32_t *>(scalars);
    }
    catch (...)
    {
      // No destructor runs for a half-built object: release the stream here (the staging buffers
      // release themselves as a member).
      ReleaseHandles();
      throw;
    }
  }

  ~CudaEngine() override { ReleaseHandles(); }

  std::string
  GetName() const override
  {
    return "CUDA";
  }

  std::string
  GetDescription() const override
  {
    std::ostringstream s;
    s << "CUDA engine on device " << m_DeviceId << ": " << m_Properties.name << " (sm_"
      << m_Properties.major << m_Properties.minor << ')';
    return s.str();
  }

  std::uint64_t
  Analyze(const LabelingRequest & request) override
  {
    return Run(request, false, true);
  }

  /** Analyze() where the request's input and mask may already be device pointers (`onDevice`), and the
   * features may stay on the device (`featuresToHost` false): the benchmark's device-resident modes. */
  std::uint64_t
  Run(const LabelingRequest & request, bool onDevice, bool featuresToHost)
  {
    m_Analyzed = false;
    ValidateRequest(request);
    const FeatureAlgorithm algorithm = request.featureAlgorithm;
    if (algorithm != FeatureAlgorithm::ConflictDetection && request.computeShapeSums)
    {
      throw EngineError(std::string("the ") + FeatureAlgorithmName(algorithm) +
                        " variant computes the basic features only; the LabelMap's sums need FLSL+CD");
    }
    CCA_CUDA_CHECK(cudaSetDevice(m_DeviceId));

    const std::uint64_t numPixels = request.NumberOfPixels();
    DeviceGeometry &    g = m_Geometry;
    g.width = static_cast<std::uint32_t>(request.size[0]);
    g.height = static_cast<std::uint32_t>(request.size[1]);
    g.depth = static_cast<std::uint32_t>(request.size[2]);
    g.numRows = g.height * g.depth;
    g.wordsPerRow = (g.width + 31u) / 32u;
    g.dimension = request.dimension;
    const std::uint64_t numWords = static_cast<std::uint64_t>(g.numRows) * g.wordsPerRow;
    if (numWords >= 0xffffffffu)
    {
      throw EngineUnavailable("the image's rows need 2^32 or more bitmask words, beyond the CUDA engine's 32-bit index type");
    }
    g.numWords = static_cast<std::uint32_t>(numWords);
    const int sms = m_Properties.multiProcessorCount;

    // 1. Pixels to the device through pinned staging; foreground bits (input != 0, mask != 0).
    m_Bits.Reserve(numWords * sizeof(std::uint32_t), "the foreground bitmask");
    // One pixel buffer takes the input, then the mask: the input is in the bitmask by then. Sized once
    // for both, so that no reallocation can free it under a kernel still reading it.
    const std::size_t inputBytes = numPixels * ScalarKindSize(request.inputKind);
    const std::size_t maskBytes = request.mask ? numPixels * ScalarKindSize(request.maskKind) : 0;
    if (!onDevice)
    {
      m_Pixels.Reserve(std::max(inputBytes, maskBytes), "the input image");
    }
    DispatchScalar(request.inputKind, [&](auto tag) {
      using T = decltype(tag);
      const T * pixels = static_cast<const T *>(request.input);
      if (!onDevice)
      {
        m_Staging.ToDevice(m_Pixels.As<void>(), request.input, inputBytes, m_Stream);
        pixels = m_Pixels.As<T>();
      }
      constexpr unsigned pixelsPerChunk = 32 * 16 / sizeof(T);
      if (g.width % pixelsPerChunk == 0 && reinterpret_cast<std::uintptr_t>(pixels) % 16 == 0)
      {
        BuildForegroundBitsVectorKernel<T><<<GridFor(numPixels / (16 / sizeof(T)), sms), BlockSize, 0, m_Stream>>>(
          pixels, m_Bits.As<std::uint32_t>(), g);
      }
      else
      {
        BuildForegroundBitsKernel<T>
          <<<GridFor(numWords * 32u, sms), BlockSize, 0, m_Stream>>>(pixels, m_Bits.As<std::uint32_t>(), g);
      }
      CCA_CUDA_CHECK_LAUNCH("BuildForegroundBitsKernel");
    });
    if (request.mask)
    {
      DispatchScalar(request.maskKind, [&](auto tag) {
        using M = decltype(tag);
        const M * maskPixels = static_cast<const M *>(request.mask);
        if (!onDevice)
        {
          m_Staging.ToDevice(m_Pixels.As<void>(), request.mask, maskBytes, m_Stream);
          maskPixels = m_Pixels.As<M>();
        }
        ApplyMaskKernel<M>
          <<<GridFor(numWords * 32u, sms), BlockSize, 0, m_Stream>>>(maskPixels, m_Bits.As<std::uint32_t>(), g);
        CCA_CUDA_CHECK_LAUNCH("ApplyMaskKernel");
      });
    }

    // 2. Run starts per word, scanned into each word's first run id; the total is the run count.
    m_FirstRun.Reserve((numWords + 1) * sizeof(std::uint32_t), "run offsets");
    std::uint32_t * firstRun = m_FirstRun.As<std::uint32_t>();
    CCA_CUDA_CHECK(cudaMemsetAsync(firstRun + numWords, 0, sizeof(std::uint32_t), m_Stream));
    CountRunStartsKernel<<<GridFor(numWords, sms), BlockSize, 0, m_Stream>>>(m_Bits.As<std::uint32_t>(), firstRun, g);
    CCA_CUDA_CHECK_LAUNCH("CountRunStartsKernel");
    ExclusiveScan(firstRun, numWords + 1);
    const std::uint32_t numRuns = ReadDeviceScalar(firstRun + numWords);

    m_NumberOfComponents = 0;
    if (numRuns > 0)
    {
      // 3. Runs, union-find over runs of neighbouring rows.
      m_RunBegin.Reserve(numRuns * sizeof(std::uint32_t), "runs");
      m_RunEnd.Reserve(numRuns * sizeof(std::uint32_t), "runs");
      m_RunRow.Reserve(numRuns * sizeof(std::uint32_t), "runs");
      m_Parent.Reserve(numRuns * sizeof(std::uint32_t), "the union-find forest");
      m_RootLabel.Reserve((numRuns + 1) * sizeof(std::uint32_t), "component labels");
      std::uint32_t * parent = m_Parent.As<std::uint32_t>();
      std::uint32_t * rootLabel = m_RootLabel.As<std::uint32_t>();

      EmitRunsKernel<<<GridFor(numWords, sms), BlockSize, 0, m_Stream>>>(m_Bits.As<std::uint32_t>(),
                                                                          firstRun,
                                                                          m_RunBegin.As<std::uint32_t>(),
                                                                          m_RunEnd.As<std::uint32_t>(),
                                                                          m_RunRow.As<std::uint32_t>(),
                                                                          parent,
                                                                          g);
      CCA_CUDA_CHECK_LAUNCH("EmitRunsKernel");
      DeviceFeatures perRun{};
      if (algorithm == FeatureAlgorithm::OnTheFlyMerge)
      {
        m_RunFeatureSums.Reserve(OtfSums * std::uint64_t{ numRuns } * sizeof(unsigned long long), "per-run features");
        m_RunFeatureBoxes.Reserve(6 * std::uint64_t{ numRuns } * sizeof(std::uint32_t), "per-run features");
        perRun = LayoutFeatures(m_RunFeatureSums, m_RunFeatureBoxes, numRuns);
        InitRunFeaturesKernel<<<GridFor(numRuns, sms), BlockSize, 0, m_Stream>>>(
          m_RunBegin.As<std::uint32_t>(), m_RunEnd.As<std::uint32_t>(), m_RunRow.As<std::uint32_t>(), numRuns, g, perRun);
        CCA_CUDA_CHECK_LAUNCH("InitRunFeaturesKernel");
      }
      const NeighbourRows neighbours = MakeNeighbourRows(request);
      if (neighbours.count > 0 && g.numRows > 1)
      {
        if (algorithm == FeatureAlgorithm::OnTheFlyMerge)
        {
          MergeRunsKernel<<<GridFor(numWords, sms), BlockSize, 0, m_Stream>>>(
            m_Bits.As<std::uint32_t>(), firstRun, parent, g, neighbours, OnTheFlyUnite{ perRun, static_cast<int>(g.dimension) });
        }
        else
        {
          MergeRunsKernel<<<GridFor(numWords, sms), BlockSize, 0, m_Stream>>>(
            m_Bits.As<std::uint32_t>(), firstRun, parent, g, neighbours, PlainUnite{});
        }
        CCA_CUDA_CHECK_LAUNCH("MergeRunsKernel");
      }

      // 4. Roots numbered in raster order.
      CCA_CUDA_CHECK(cudaMemsetAsync(rootLabel + numRuns, 0, sizeof(std::uint32_t), m_Stream));
      FlattenAndMarkRootsKernel<<<GridFor(numRuns, sms), BlockSize, 0, m_Stream>>>(parent, rootLabel, numRuns);
      CCA_CUDA_CHECK_LAUNCH("FlattenAndMarkRootsKernel");
      ExclusiveScan(rootLabel, std::uint64_t{ numRuns } + 1);
      m_NumberOfComponents = ReadDeviceScalar(rootLabel + numRuns);

      // 5. Labels per run and features per component.
      const std::uint64_t k = m_NumberOfComponents;
      m_FeatureSums.Reserve(NumberOfSums * k * sizeof(unsigned long long), "component features");
      m_FeatureBoxes.Reserve(6 * k * sizeof(std::uint32_t), "component features");
      const DeviceFeatures f = LayoutFeatures(m_FeatureSums, m_FeatureBoxes, k);
      const int numSums = request.computeShapeSums ? NumberOfSums : SumProducts0;
      // The on-the-fly merge writes every basic field of every component itself; the others accumulate.
      const int firstAccumulatedSum = algorithm == FeatureAlgorithm::OnTheFlyMerge ? OtfSums : 0;
      if (numSums > firstAccumulatedSum)
      {
        CCA_CUDA_CHECK(cudaMemsetAsync(f.sums + firstAccumulatedSum * k,
                                       0,
                                       (numSums - firstAccumulatedSum) * k * sizeof(unsigned long long),
                                       m_Stream));
      }
      if (algorithm != FeatureAlgorithm::OnTheFlyMerge)
      {
        CCA_CUDA_CHECK(cudaMemsetAsync(f.boundingBoxMin[0], 0xff, 3 * k * sizeof(std::uint32_t), m_Stream));
        CCA_CUDA_CHECK(cudaMemsetAsync(f.boundingBoxMax[0], 0, 3 * k * sizeof(std::uint32_t), m_Stream));
      }
      const unsigned  runGrid = GridFor(numRuns, sms);
      std::uint32_t * runBegin = m_RunBegin.As<std::uint32_t>();
      std::uint32_t * runEnd = m_RunEnd.As<std::uint32_t>();
      std::uint32_t * runRow = m_RunRow.As<std::uint32_t>();
      switch (algorithm)
      {
        case FeatureAlgorithm::ConflictDetection:
          if (request.computeShapeSums)
          {
            LabelRunsAndVoteFeaturesKernel<true>
              <<<runGrid, BlockSize, 0, m_Stream>>>(parent, rootLabel, runBegin, runEnd, runRow, numRuns, g, f);
          }
          else
          {
            LabelRunsAndVoteFeaturesKernel<false>
              <<<runGrid, BlockSize, 0, m_Stream>>>(parent, rootLabel, runBegin, runEnd, runRow, numRuns, g, f);
          }
          CCA_CUDA_CHECK_LAUNCH("LabelRunsAndVoteFeaturesKernel");
          break;
        case FeatureAlgorithm::RunAtomics:
          LabelRunsAndAddFeaturesKernel<<<runGrid, BlockSize, 0, m_Stream>>>(
            parent, rootLabel, runBegin, runEnd, runRow, numRuns, g, f);
          CCA_CUDA_CHECK_LAUNCH("LabelRunsAndAddFeaturesKernel");
          break;
        case FeatureAlgorithm::PixelAtomics:
          LabelRunsKernel<<<runGrid, BlockSize, 0, m_Stream>>>(parent, rootLabel, numRuns);
          CCA_CUDA_CHECK_LAUNCH("LabelRunsKernel");
          PixelAtomicFeaturesKernel<<<GridFor(std::uint64_t{ numWords } * 32u, sms), BlockSize, 0, m_Stream>>>(
            m_Bits.As<std::uint32_t>(), firstRun, parent, g, f);
          CCA_CUDA_CHECK_LAUNCH("PixelAtomicFeaturesKernel");
          break;
        case FeatureAlgorithm::OnTheFlyMerge:
          GatherRootFeaturesAndLabelRunsKernel<<<runGrid, BlockSize, 0, m_Stream>>>(
            parent, rootLabel, numRuns, g, perRun, f);
          CCA_CUDA_CHECK_LAUNCH("GatherRootFeaturesAndLabelRunsKernel");
          break;
      }
      if (request.computeShapeSums && request.computePerimeter)
      {
        CountPerimeterInterceptsKernel<<<runGrid, BlockSize, 0, m_Stream>>>(parent,
                                                                           firstRun,
                                                                           m_RunBegin.As<std::uint32_t>(),
                                                                           m_RunEnd.As<std::uint32_t>(),
                                                                           m_RunRow.As<std::uint32_t>(),
                                                                           numRuns,
                                                                           g,
                                                                           f);
        CCA_CUDA_CHECK_LAUNCH("CountPerimeterInterceptsKernel");
      }
    }
    if (numRuns > 0 && featuresToHost)
    {
      const std::uint64_t              k = m_NumberOfComponents;
      // Only the sums the request asked for travel back, through the pinned staging buffers into host
      // buffers kept between calls; the conversion to ComponentFeatures writes every field once, on
      // several threads (with millions of components it otherwise costs more than the labeling).
      const int numSums = request.computeShapeSums ? NumberOfSums : SumProducts0;
      m_HostSums.resize(numSums * k);
      m_HostBoxes.resize(6 * k);
      m_Staging.ToHost(m_HostSums.data(), m_FeatureSums.As<void>(), m_HostSums.size() * sizeof(unsigned long long), m_Stream);
      m_Staging.ToHost(m_HostBoxes.data(), m_FeatureBoxes.As<void>(), m_HostBoxes.size() * sizeof(std::uint32_t), m_Stream);
      m_Features.resize(k);
      const unsigned long long * sums = m_HostSums.data();
      const std::uint32_t *      boxes = m_HostBoxes.data();
      const bool                 shape = request.computeShapeSums;
      ParallelForRange(HostThreads(), k, 1u << 16, [&](std::uint64_t begin, std::uint64_t end) {
        auto sum = [&](int index, std::uint64_t i) { return static_cast<std::uint64_t>(sums[index * k + i]); };
        for (std::uint64_t i = begin; i < end; ++i)
        {
          ComponentFeatures & c = m_Features[i];
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
        }
      });
    }
    else
    {
      m_Features.clear();
    }
    CCA_CUDA_CHECK(cudaStreamSynchronize(m_Stream));
    m_NumberOfRuns = numRuns;
    m_Analyzed = true;
    return m_NumberOfComponents;
  }

  const std::vector<ComponentFeatures> &
  GetFeatures() const override
  {
    return m_Features;
  }

  void
  WriteLabels(const LabelOutput & output) override
  {
    if (!output.data)
    {
      throw EngineError("WriteLabels() needs an output buffer");
    }
    const std::size_t bytes = WriteLabelsOnDevice(output);
    m_Staging.ToHost(output.data, m_Labels.As<void>(), bytes, m_Stream);
    CCA_CUDA_CHECK(cudaStreamSynchronize(m_Stream));
  }

  /** Writes the label image into the engine's device buffer (output.data is not touched); returns its size in bytes. */
  std::size_t
  WriteLabelsOnDevice(const LabelOutput & output)
  {
    if (!m_Analyzed)
    {
      throw EngineError("WriteLabels() called before a successful Analyze()");
    }
    CCA_CUDA_CHECK(cudaSetDevice(m_DeviceId));
    const DeviceGeometry & g = m_Geometry;
    const std::uint64_t    numPixels = static_cast<std::uint64_t>(g.width) * g.numRows;
    DispatchScalar(output.kind, [&](auto tag) {
      using T = decltype(tag);
      T background;
      std::memcpy(&background, &output.backgroundBits, sizeof(T));
      m_Labels.Reserve(numPixels * sizeof(T), "the label image");
      // Without runs the run arrays may be unallocated; the kernel never reads them then.
      WriteLabelsKernel<T><<<GridFor(std::uint64_t{ g.numWords } * 32u, m_Properties.multiProcessorCount),
                             BlockSize,
                             0,
                             m_Stream>>>(m_Bits.As<std::uint32_t>(),
                                         m_FirstRun.As<std::uint32_t>(),
                                         m_Parent.As<std::uint32_t>(),
                                         m_Labels.As<T>(),
                                         background,
                                         output.skipValue,
                                         g);
      CCA_CUDA_CHECK_LAUNCH("WriteLabelsKernel");
    });
    return numPixels * ScalarKindSize(output.kind);
  }

  void
  ExportRuns(RunTable & runs) override
  {
    if (!m_Analyzed)
    {
      throw EngineError("ExportRuns() called before a successful Analyze()");
    }
    CCA_CUDA_CHECK(cudaSetDevice(m_DeviceId));
    const std::size_t n = m_NumberOfRuns;
    // 32-bit device arrays into host buffers kept between calls, then widened on several threads.
    for (auto * host : { &m_HostRunBegin, &m_HostRunEnd, &m_HostRunRow, &m_HostRunLabel })
    {
      host->resize(n);
    }
    runs.row.resize(n);
    runs.begin.resize(n);
    runs.length.resize(n);
    runs.label.resize(n);
    if (n == 0)
    {
      return;
    }
    const std::size_t bytes = n * sizeof(std::uint32_t);
    m_Staging.ToHost(m_HostRunBegin.data(), m_RunBegin.As<void>(), bytes, m_Stream);
    m_Staging.ToHost(m_HostRunEnd.data(), m_RunEnd.As<void>(), bytes, m_Stream);
    m_Staging.ToHost(m_HostRunRow.data(), m_RunRow.As<void>(), bytes, m_Stream);
    m_Staging.ToHost(m_HostRunLabel.data(), m_Parent.As<void>(), bytes, m_Stream); // parents are labels by now
    ParallelForRange(HostThreads(), n, 1u << 16, [&](std::uint64_t first, std::uint64_t last) {
      for (std::uint64_t i = first; i < last; ++i)
      {
        runs.row[i] = m_HostRunRow[i];
        runs.begin[i] = m_HostRunBegin[i];
        runs.length[i] = m_HostRunEnd[i] - m_HostRunBegin[i];
        runs.label[i] = m_HostRunLabel[i];
      }
    });
  }

  cudaStream_t
  GetStream() const
  {
    return m_Stream;
  }

private:
  static void
  ValidateRequest(const LabelingRequest & request)
  {
    if (request.dimension < 1 || request.dimension > MaxDimension)
    {
      throw EngineError("the CUDA engine handles images of 1 to 3 dimensions");
    }
    if (!request.input)
    {
      throw EngineError("no input buffer");
    }
    for (unsigned d = 0; d < MaxDimension; ++d)
    {
      if (request.size[d] == 0)
      {
        throw EngineError("empty image region");
      }
      if (request.size[d] >= 0xffffffffull)
      {
        throw EngineUnavailable("an image side of 2^32 pixels or more exceeds the CUDA engine's 32-bit index type");
      }
    }
    if (request.NumberOfPixels() >= 0xffffffffull)
    {
      std::ostringstream msg;
      msg << "the image has " << request.NumberOfPixels()
          << " pixels, more than the CUDA engine's 32-bit index type holds (2^32 - 1)";
      throw EngineUnavailable(msg.str());
    }
  }

  /** The accumulator arrays of `count` components in two allocations (64-bit sums, 32-bit boxes). */
  static DeviceFeatures
  LayoutFeatures(const DeviceBuffer & sums, const DeviceBuffer & boxes, std::uint64_t count)
  {
    DeviceFeatures f;
    f.sums = sums.As<unsigned long long>();
    f.numberOfComponents = count;
    for (int d = 0; d < 3; ++d)
    {
      f.boundingBoxMin[d] = boxes.As<std::uint32_t>() + d * count;
      f.boundingBoxMax[d] = boxes.As<std::uint32_t>() + (3 + d) * count;
    }
    return f;
  }

  static NeighbourRows
  MakeNeighbourRows(const LabelingRequest & request)
  {
    NeighbourRows n{};
    n.fullyConnected = request.fullyConnected;
    auto add = [&n](int dy, int dz) {
      n.dy[n.count] = dy;
      n.dz[n.count] = dz;
      ++n.count;
    };
    add(-1, 0);
    if (request.size[2] > 1)
    {
      add(0, -1);
      if (request.fullyConnected)
      {
        add(-1, -1);
        add(+1, -1);
      }
    }
    return n;
  }

  void
  ExclusiveScan(std::uint32_t * data, std::uint64_t count)
  {
    std::size_t tempBytes = 0;
    CCA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, tempBytes, data, data, count, m_Stream));
    m_ScanTemp.Reserve(std::max<std::size_t>(tempBytes, 1), "scan workspace");
    CCA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(m_ScanTemp.As<void>(), tempBytes, data, data, count, m_Stream));
  }

  std::uint32_t
  ReadDeviceScalar(const std::uint32_t * device)
  {
    CCA_CUDA_CHECK(cudaMemcpyAsync(m_HostScalars, device, sizeof(std::uint32_t), cudaMemcpyDeviceToHost, m_Stream));
    CCA_CUDA_CHECK(cudaStreamSynchronize(m_Stream));
    return m_HostScalars[0];
  }

  void
  ReleaseHandles()
  {
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

  int            m_DeviceId;
  cudaDeviceProp m_Properties{};
  cudaStream_t   m_Stream = nullptr;
  PinnedStaging  m_Staging;
  std::uint32_t * m_HostScalars = nullptr;

  DeviceBuffer m_Pixels, m_Bits, m_FirstRun, m_RunBegin, m_RunEnd, m_RunRow, m_Parent, m_RootLabel, m_ScanTemp,
    m_FeatureSums, m_FeatureBoxes, m_RunFeatureSums, m_RunFeatureBoxes, m_Labels;

  DeviceGeometry                 m_Geometry{};
  bool                           m_Analyzed = false;
  std::uint32_t                  m_NumberOfRuns = 0;
  std::uint64_t                  m_NumberOfComponents = 0;
  std::vector<ComponentFeatures> m_Features;
  /// Host copies of device arrays, kept between calls (no zero-filling of fresh memory each time).
  std::vector<unsigned long long, UninitializedAllocator<unsigned long long>> m_HostSums;
  std::vector<std::uint32_t, UninitializedAllocator<std::uint32_t>>           m_HostBoxes, m_HostRunBegin, m_HostRunEnd,
    m_HostRunRow, m_HostRunLabel;
};

} // namespace
} // namespace cuda

bool
IsCudaEngineCompiled()
{
  return true;
}

int
GetCudaDeviceCount(std::string * reason)
{
  int               count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
  {
    cudaGetLastError();
    if (reason)
    {
      *reason = std::string("no usable CUDA device: ") + cudaGetErrorString(status);
    }
    return 0;
  }
  if (count == 0 && reason)
  {
    *reason = "no CUDA device found";
  }
  return count;
}

std::unique_ptr<Engine>
CreateCudaEngine(int deviceId)
{
  std::string reason;
  const int   count = GetCudaDeviceCount(&reason);
  if (count == 0)
  {
    throw EngineUnavailable("the CUDA engine cannot run: " + reason);
  }
  if (deviceId < 0 || deviceId >= count)
  {
    std::ostringstream msg;
    msg << "CUDA device " << deviceId << " does not exist (" << count << " device(s) found)";
    throw EngineUnavailable(msg.str());
  }
  return std::make_unique<cuda::CudaEngine>(deviceId);
}

} // namespace cca
} // namespace itk

#include "itkCCABenchmark.h"

namespace itk
{
namespace cca
{

DeviceResidentTimings
BenchmarkCudaDeviceResident(const LabelingRequest & hostRequest, int deviceId, int warmupRuns, int timedRuns)
{
  if (hostRequest.mask)
  {
    throw EngineError("the device-resident benchmark takes no mask");
  }
  auto  engineOwner = CreateCudaEngine(deviceId);
  auto & engine = static_cast<cuda::CudaEngine &>(*engineOwner);
  const std::size_t bytes = hostRequest.NumberOfPixels() * ScalarKindSize(hostRequest.inputKind);
  cuda::DeviceBuffer deviceInput;
  deviceInput.Reserve(bytes, "the benchmark image");
  CCA_CUDA_CHECK(cudaMemcpy(deviceInput.As<void>(), hostRequest.input, bytes, cudaMemcpyHostToDevice));
  LabelingRequest request = hostRequest;
  request.input = deviceInput.As<void>();

  LabelOutput labels;
  labels.kind = ScalarKind::UInt32;
  labels.skipValue = 0; // background 0: labels 1..K

  cudaEvent_t start, stop;
  CCA_CUDA_CHECK(cudaEventCreate(&start));
  CCA_CUDA_CHECK(cudaEventCreate(&stop));
  DeviceResidentTimings result;
  result.device = engine.GetDescription();
  auto timeOnce = [&](bool withLabels) {
    CCA_CUDA_CHECK(cudaEventRecord(start, engine.GetStream()));
    result.components = engine.Run(request, true, false);
    if (withLabels)
    {
      engine.WriteLabelsOnDevice(labels);
    }
    CCA_CUDA_CHECK(cudaEventRecord(stop, engine.GetStream()));
    CCA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CCA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return static_cast<double>(ms);
  };
  for (bool withLabels : { false, true })
  {
    for (int i = 0; i < warmupRuns; ++i)
    {
      timeOnce(withLabels);
    }
    auto & times = withLabels ? result.featuresAndLabelsMs : result.featuresMs;
    for (int i = 0; i < timedRuns; ++i)
    {
      times.push_back(timeOnce(withLabels));
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return result;
}

TransferRates
BenchmarkCudaTransfers(int deviceId, std::uint64_t bytes, int timedRuns)
{
  auto  engineOwner = CreateCudaEngine(deviceId); // selects and checks the device
  auto & engine = static_cast<cuda::CudaEngine &>(*engineOwner);
  const cudaStream_t stream = engine.GetStream();
  TransferRates      rates;
  rates.device = engine.GetDescription();
  rates.bytes = bytes;

  cuda::DeviceBuffer device;
  device.Reserve(bytes, "the transfer benchmark");
  void * pinned = nullptr;
  CCA_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
  std::unique_ptr<void, cudaError_t (*)(void *)> pinnedOwner(pinned, cudaFreeHost);
  std::vector<unsigned char> pageable(bytes, 1); // written once, so that its pages exist, as an image's do
  cuda::PinnedStaging        staging;
  staging.Initialize();

  // Wall clock around a synchronized copy: the engine's staged path is host work plus DMA.
  auto best = [&](const std::function<void()> & copy) {
    copy(); // warm-up
    double bestSeconds = 1e300;
    for (int i = 0; i < std::max(1, timedRuns); ++i)
    {
      const auto t0 = std::chrono::steady_clock::now();
      copy();
      CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
      bestSeconds = std::min(bestSeconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return static_cast<double>(bytes) / bestSeconds / 1e9;
  };
  void * d = device.As<void>();
  unsigned char * h = pageable.data();
  rates.pinnedToDevice = best([&] { CCA_CUDA_CHECK(cudaMemcpyAsync(d, pinned, bytes, cudaMemcpyHostToDevice, stream)); });
  rates.pinnedToHost = best([&] { CCA_CUDA_CHECK(cudaMemcpyAsync(pinned, d, bytes, cudaMemcpyDeviceToHost, stream)); });
  rates.pageableToDevice = best([&] { CCA_CUDA_CHECK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, stream)); });
  rates.pageableToHost = best([&] { CCA_CUDA_CHECK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, stream)); });
  rates.stagedToDevice = best([&] { staging.ToDevice(d, h, bytes, stream); });
  rates.stagedToHost = best([&] { staging.ToHost(h, d, bytes, stream); });
  return rates;
}

} // namespace cca
} // namespace itk
