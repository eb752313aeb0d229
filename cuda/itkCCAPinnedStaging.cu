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
#include "itkCCAPinnedStaging.cuh"

#include "itkCCACudaCheck.cuh"
#include "itkCCADeviceBuffer.cuh"
#include "itkCCAParallelFor.h"

#include <algorithm>
#include <cstring>

namespace itk
{
namespace cca
{
namespace cuda
{

PinnedStaging::~PinnedStaging()
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
PinnedStaging::Initialize()
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

template <typename TCopy>
void
PinnedStaging::ForEachLane(std::size_t bytes, cudaStream_t stream, const TCopy & copy)
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

void
PinnedStaging::ToDevice(void * device, const void * host, std::size_t bytes, cudaStream_t stream)
{
  ForEachLane(bytes, stream, [&](Lane & lane, std::size_t begin, std::size_t end) {
    for (std::size_t offset = begin, i = 0; offset < end; offset += ChunkBytes, ++i)
    {
      const int         slot = static_cast<int>(i % 2);
      const std::size_t n = std::min(ChunkBytes, end - offset);
      CCA_CUDA_CHECK(cudaEventSynchronize(lane.chunkDone[slot])); // the slot's previous DMA has finished
      std::memcpy(lane.host[slot], static_cast<const char *>(host) + offset, n);
      CCA_CUDA_CHECK(
        cudaMemcpyAsync(static_cast<char *>(device) + offset, lane.host[slot], n, cudaMemcpyHostToDevice, lane.stream));
      CCA_CUDA_CHECK(cudaEventRecord(lane.chunkDone[slot], lane.stream));
    }
  });
}

void
PinnedStaging::ToHost(void * host, const void * device, std::size_t bytes, cudaStream_t stream)
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

} // namespace cuda
} // namespace cca
} // namespace itk
