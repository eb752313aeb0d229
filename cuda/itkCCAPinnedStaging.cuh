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
#ifndef itkCCAPinnedStaging_cuh
#define itkCCAPinnedStaging_cuh

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace itk
{
namespace cca
{
namespace cuda
{

/** Host<->device copies between ordinary (pageable) host memory and the device at close to the pinned
 * PCIe rate, without page-locking user buffers: the transfer is cut into one slice per lane, and each
 * lane -- a host thread with its own stream and two small pinned buffers -- pipelines its slice: the
 * memcpy of one chunk into (or out of) pinned memory overlaps the DMA of the other. Several lanes are
 * needed because one thread's memcpy of pageable memory runs well under the PCIe rate; lanes are
 * independent, so there is no hand-off between threads inside a transfer. A host buffer the caller has
 * page-locked already (cudaHostAlloc, cudaHostRegister: CuPy's pinned arrays, PyTorch's pin_memory()) needs no
 * staging: a copy of more than one chunk to or from such a buffer is one DMA. */
class PinnedStaging
{
public:
  // Up to 16 lanes of 2 MB chunks (64 MB pinned in all). Into a fresh ITK buffer -- a new label image --
  // each host memcpy also faults its pages in, and that work, not the DMA, sets the rate: on an H100 host
  // (16 cores, 2 MB pages advised), copying 268 MB back took 13-17 ms with 8 lanes of 4 MB chunks, 10.5-11.3
  // with 16 lanes of 4 MB and 8.2-9.7 with 16 lanes of 2 MB; uploads from touched memory were as fast or
  // faster with 2 MB chunks (a throwaway test program on that host, 2026-11-23).
  static constexpr std::size_t ChunkBytes = std::size_t{ 2 } << 20;
  static constexpr unsigned    MaxLanes = 16;

  PinnedStaging() = default;
  PinnedStaging(const PinnedStaging &) = delete;
  PinnedStaging &
  operator=(const PinnedStaging &) = delete;
  ~PinnedStaging();

  /** Creates the lanes' streams, events and pinned buffers (once). */
  void
  Initialize();

  /** Enqueues the copy after the work already in `stream`, and makes the later work in `stream` wait
   * for it; returns once `host` may be reused. */
  void
  ToDevice(void * device, const void * host, std::size_t bytes, cudaStream_t stream);

  /** Copies after the work already in `stream`; returns when `host` holds the data. */
  void
  ToHost(void * host, const void * device, std::size_t bytes, cudaStream_t stream);

  /** ToHost() of consecutive pieces of device memory (from `device` on, each `bytes` long) to separate host
   * buffers, as one transfer: where they fit one chunk (a small table's columns), one pass of up to MaxParts DMAs on
   * `stream`, else one pass of the lanes over the whole range, a chunk going to as many pieces as it spans. */
  struct HostPiece
  {
    void *      host;
    std::size_t bytes;
  };
  void
  ToHostPieces(const std::vector<HostPiece> & pieces, const void * device, cudaStream_t stream);

  /** Rows that the device writes just before they come down: write(firstRow, numberOfRows) enqueues on the stream
   * the writing of those rows, `rowBytes` each, from device + firstRow * rowBytes on. */
  struct RowWriter
  {
    std::size_t                                       rowBytes = 0;
    std::uint64_t                                     numberOfRows = 0;
    std::function<void(std::uint64_t, std::uint64_t)> write;
  };
  /** ToHost() of the rows `writer` writes, in parts of whole rows, one per lane: each part is written in turn and
   * comes down as soon as it is there, so that the writing of the rows overlaps their transfer. */
  void
  ToHostAsWritten(void * host, const void * device, const RowWriter & writer, cudaStream_t stream);

private:
  struct Lane
  {
    cudaStream_t stream = nullptr;
    void *       host[2] = { nullptr, nullptr };
    cudaEvent_t  chunkDone[2] = { nullptr, nullptr };
    cudaEvent_t  finished = nullptr;
    cudaEvent_t  written = nullptr; ///< ToHostAsWritten(): the lane's rows are written
  };

  /** Whether [host, host + bytes) is page-locked host memory, as CUDA says of its first and last bytes (PyTorch's
   * is_pinned() asks of the first alone). A range that is not wholly page-locked would still be copied right by
   * cudaMemcpyAsync, only staged by the driver. */
  static bool
  IsPageLocked(const void * host, std::size_t bytes);

  /** A copy that fits one chunk goes through the first lane's first pinned buffer on `stream` itself: no
   * thread, lane stream or event hand-off, whose fixed cost (tens of microseconds) is most of a small
   * image's transfers. Uploads take that lane's two buffers in turn; `chunkDone[i]` marks when buffer i is
   * free again. */
  bool
  IsSmall(std::size_t bytes) const
  {
    return bytes <= ChunkBytes && !m_Lanes.empty();
  }

  /** The rows of each part when `writer`'s rows are cut into parts of whole rows, one per lane: as many parts as
   * lanes, or as staging chunks the bytes fill where fewer, the rows spread evenly (the last part may be short). */
  std::uint64_t
  RowsPerPart(const RowWriter & writer) const;

  /** Slices [0, bytes) over the lanes (at least a chunk each), runs copy(lane, begin, end) for each on
   * its own thread after the work already in `stream`, then makes `stream` wait for every lane. With `writer`,
   * the slices are of whole rows, and each lane's rows are written first, the lane waiting for its own. */
  template <typename TCopy>
  void
  ForEachLane(std::size_t bytes, cudaStream_t stream, const TCopy & copy, const RowWriter * writer = nullptr);

  /** One lane's share of a download through its two pinned buffers, [begin, end) of `device`, into the pieces
   * laid end to end (ends[i]: where piece i ends): the DMA of one chunk overlaps the memcpy of the other. */
  static void
  DownloadThroughLane(Lane & lane, const std::vector<HostPiece> & pieces, const std::vector<std::size_t> & ends,
                      const void * device, std::size_t begin, std::size_t end);

  /** The parts of a small copy: at least 128 kB (below, a part's fixed cost exceeds what overlapping saves),
   * at most MaxParts of them. */
  static constexpr unsigned MaxParts = 4;
  static std::size_t
  PartBytes(std::size_t bytes)
  {
    const std::size_t minimum = std::size_t{ 128 } << 10;
    return std::max(minimum, (bytes + MaxParts - 1) / MaxParts);
  }

  std::vector<Lane> m_Lanes;
  cudaEvent_t       m_PartDone[MaxParts - 1] = {}; ///< the parts of a small download before the last
  cudaEvent_t       m_Ready = nullptr;
  int               m_NextSmallSlot = 0; ///< the first lane's buffer for the next small upload
};

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
