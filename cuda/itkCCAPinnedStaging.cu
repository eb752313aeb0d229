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
    if (lane.written)
    {
      cudaEventDestroy(lane.written);
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
  for (cudaEvent_t partDone : m_PartDone)
  {
    if (partDone)
    {
      cudaEventDestroy(partDone);
    }
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
  for (cudaEvent_t & partDone : m_PartDone)
  {
    cudaEvent_t event = nullptr;
    CCA_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    partDone = event;
  }
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
    cudaEvent_t written = nullptr;
    CCA_CUDA_CHECK(cudaEventCreateWithFlags(&written, cudaEventDisableTiming));
    lane.written = written;
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

bool
PinnedStaging::IsPageLocked(const void * host, std::size_t bytes)
{
  for (const void * p : { host, static_cast<const void *>(static_cast<const char *>(host) + bytes - 1) })
  {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess)
    {
      cudaGetLastError(); // not an error of the copy: pageable memory, as older runtimes report it
      return false;
    }
    if (attributes.type != cudaMemoryTypeHost)
    {
      return false;
    }
  }
  return true;
}

std::uint64_t
PinnedStaging::RowsPerPart(const RowWriter & writer) const
{
  const std::size_t bytes = writer.rowBytes * writer.numberOfRows;
  const std::size_t parts = std::min<std::size_t>(m_Lanes.size(), (bytes + ChunkBytes - 1) / ChunkBytes);
  return (writer.numberOfRows + parts - 1) / parts;
}

template <typename TCopy>
void
PinnedStaging::ForEachLane(std::size_t bytes, cudaStream_t stream, const TCopy & copy, const RowWriter * writer)
{
  if (bytes == 0)
  {
    return;
  }
  std::size_t lanes = std::min<std::size_t>(m_Lanes.size(), (bytes + ChunkBytes - 1) / ChunkBytes);
  std::size_t slice = (bytes + lanes - 1) / lanes;
  if (writer)
  {
    // Whole rows per lane, each lane's written in turn (on `stream`, in lane order) and marked.
    const std::uint64_t rows = RowsPerPart(*writer);
    slice = rows * writer->rowBytes;
    lanes = (bytes + slice - 1) / slice;
    for (std::size_t l = 0; l < lanes; ++l)
    {
      const std::uint64_t first = l * rows;
      writer->write(first, std::min<std::uint64_t>(rows, writer->numberOfRows - first));
      CCA_CUDA_CHECK(cudaEventRecord(m_Lanes[l].written, stream));
    }
  }
  else
  {
    CCA_CUDA_CHECK(cudaEventRecord(m_Ready, stream));
  }
  ParallelFor(static_cast<unsigned>(lanes), lanes, [&](std::uint64_t l) {
    Lane &            lane = m_Lanes[l];
    const std::size_t begin = l * slice;
    const std::size_t end = std::min(bytes, begin + slice);
    CCA_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, writer ? lane.written : m_Ready, 0));
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
  if (bytes != 0 && IsSmall(bytes))
  {
    // The two buffers in turn, so that an image's mask need not wait for the image's DMA.
    Lane &    lane = m_Lanes[0];
    const int slot = m_NextSmallSlot;
    m_NextSmallSlot ^= 1;
    CCA_CUDA_CHECK(cudaEventSynchronize(lane.chunkDone[slot])); // the buffer's previous DMA has finished
    // In parts, so that the memcpy of one part overlaps the DMA of the one before.
    const std::size_t part = PartBytes(bytes);
    for (std::size_t offset = 0; offset < bytes; offset += part)
    {
      const std::size_t n = std::min(part, bytes - offset);
      char *            staged = static_cast<char *>(lane.host[slot]) + offset;
      std::memcpy(staged, static_cast<const char *>(host) + offset, n);
      CCA_CUDA_CHECK(cudaMemcpyAsync(static_cast<char *>(device) + offset, staged, n, cudaMemcpyHostToDevice, stream));
    }
    CCA_CUDA_CHECK(cudaEventRecord(lane.chunkDone[slot], stream));
    return;
  }
  if (bytes != 0 && IsPageLocked(host, bytes))
  {
    // One DMA, waited for: `host` may be reused once this returns.
    CCA_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
    CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
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
  ToHostPieces({ { host, bytes } }, device, stream);
}

namespace
{

/** Copies `n` bytes from `from` to bytes [offset, offset + n) of the pieces laid end to end; ends[i] is where piece
 * i ends. */
void
CopyIntoPieces(const std::vector<PinnedStaging::HostPiece> & pieces, const std::vector<std::size_t> & ends,
               std::size_t offset, const char * from, std::size_t n)
{
  for (auto i = static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), offset) - ends.begin()); n > 0; ++i)
  {
    const std::size_t m = std::min(n, ends[i] - offset);
    std::memcpy(static_cast<char *>(pieces[i].host) + (offset - (ends[i] - pieces[i].bytes)), from, m);
    from += m;
    offset += m;
    n -= m;
  }
}

} // namespace

void
PinnedStaging::ToHostPieces(const std::vector<HostPiece> & pieces, const void * device, cudaStream_t stream)
{
  std::vector<std::size_t> ends;
  ends.reserve(pieces.size());
  std::size_t total = 0;
  for (const HostPiece & piece : pieces)
  {
    total += piece.bytes;
    ends.push_back(total);
  }
  if (total == 0)
  {
    return;
  }
  // Page-locked pieces: a DMA each, one wait.
  if (!IsSmall(total) && std::all_of(pieces.begin(), pieces.end(), [](const HostPiece & piece) {
        return piece.bytes == 0 || IsPageLocked(piece.host, piece.bytes);
      }))
  {
    for (std::size_t i = 0; i < pieces.size(); ++i)
    {
      if (pieces[i].bytes != 0)
      {
        CCA_CUDA_CHECK(cudaMemcpyAsync(pieces[i].host, static_cast<const char *>(device) + (ends[i] - pieces[i].bytes),
                                       pieces[i].bytes, cudaMemcpyDeviceToHost, stream));
      }
    }
    CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  if (!IsSmall(total))
  {
    // One pass of the lanes over all the pieces: a table's columns come down as one transfer, each lane's chunks
    // pipelined across the columns' borders, with one wait for the lanes in all.
    ForEachLane(total, stream, [&](Lane & lane, std::size_t begin, std::size_t end) {
      DownloadThroughLane(lane, pieces, ends, device, begin, end);
    });
    return;
  }
  // In `stream`'s order after any upload from this buffer (ToDevice() makes `stream` wait for its lanes). In
  // parts, each with its event, so that the memcpy of one part overlaps the DMA of the next.
  Lane &            lane = m_Lanes[0];
  char *            staged = static_cast<char *>(lane.host[0]);
  const std::size_t part = PartBytes(total);
  const std::size_t parts = (total + part - 1) / part;
  for (std::size_t i = 0; i < parts; ++i)
  {
    const std::size_t offset = i * part;
    CCA_CUDA_CHECK(cudaMemcpyAsync(staged + offset,
                                   static_cast<const char *>(device) + offset,
                                   std::min(part, total - offset),
                                   cudaMemcpyDeviceToHost,
                                   stream));
    CCA_CUDA_CHECK(cudaEventRecord(i + 1 == parts ? lane.chunkDone[0] : m_PartDone[i], stream));
  }
  for (std::size_t i = 0; i < parts; ++i)
  {
    CCA_CUDA_CHECK(cudaEventSynchronize(i + 1 == parts ? lane.chunkDone[0] : m_PartDone[i]));
    const std::size_t offset = i * part;
    CopyIntoPieces(pieces, ends, offset, staged + offset, std::min(part, total - offset));
  }
}

void
PinnedStaging::DownloadThroughLane(Lane & lane, const std::vector<HostPiece> & pieces,
                                   const std::vector<std::size_t> & ends, const void * device, std::size_t begin,
                                   std::size_t end)
{
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
    CopyIntoPieces(
      pieces, ends, offset, static_cast<const char *>(lane.host[slot]), std::min(ChunkBytes, end - offset));
  }
}

void
PinnedStaging::ToHostAsWritten(void * host, const void * device, const RowWriter & writer, cudaStream_t stream)
{
  const std::size_t bytes = writer.rowBytes * writer.numberOfRows;
  if (bytes == 0)
  {
    return;
  }
  if (IsSmall(bytes) || writer.numberOfRows == 1)
  {
    writer.write(0, writer.numberOfRows);
    ToHost(host, device, bytes, stream);
    return;
  }
  const std::vector<HostPiece>   pieces{ { host, bytes } };
  const std::vector<std::size_t> ends{ bytes };
  if (!IsPageLocked(host, bytes))
  {
    ForEachLane(
      bytes,
      stream,
      [&](Lane & lane, std::size_t begin, std::size_t end) {
        DownloadThroughLane(lane, pieces, ends, device, begin, end);
      },
      &writer);
    return;
  }
  // Page-locked: one DMA per part, each on its lane's stream once the part's rows are written.
  const std::uint64_t rows = RowsPerPart(writer);
  for (std::size_t p = 0; p * rows < writer.numberOfRows; ++p)
  {
    Lane &              lane = m_Lanes[p];
    const std::uint64_t first = p * rows;
    const std::uint64_t n = std::min<std::uint64_t>(rows, writer.numberOfRows - first);
    writer.write(first, n);
    CCA_CUDA_CHECK(cudaEventRecord(lane.written, stream));
    CCA_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, lane.written, 0));
    CCA_CUDA_CHECK(cudaMemcpyAsync(static_cast<char *>(host) + first * writer.rowBytes,
                                   static_cast<const char *>(device) + first * writer.rowBytes,
                                   n * writer.rowBytes,
                                   cudaMemcpyDeviceToHost,
                                   lane.stream));
    CCA_CUDA_CHECK(cudaEventRecord(lane.finished, lane.stream));
  }
  for (std::size_t p = 0; p * rows < writer.numberOfRows; ++p)
  {
    CCA_CUDA_CHECK(cudaStreamWaitEvent(stream, m_Lanes[p].finished, 0));
  }
  CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
}

} // namespace cuda
} // namespace cca
} // namespace itk
