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
#ifndef itkCCADeviceBuffer_cuh
#define itkCCADeviceBuffer_cuh

// The CUDA engine's device memory and launch shapes: a device allocation that only grows (buffers are
// reused across updates of the same size), the grid for a grid-stride kernel, and the number of host
// threads used for transfers and conversions.

#include "itkCCACudaCheck.cuh"
#include "itkCCAEngine.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <thread>

namespace itk
{
namespace cca
{
namespace cuda
{

constexpr unsigned BlockSize = 256;

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
      throw OutOfMemory(msg.str());
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
inline unsigned
HostThreads()
{
  return std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
}

/** Blocks of BlockSize threads for a grid-stride loop over `threads` items, at most 32 per multiprocessor. */
inline unsigned
GridFor(std::uint64_t threads, int multiprocessors)
{
  const std::uint64_t blocks = (threads + BlockSize - 1) / BlockSize;
  const std::uint64_t cap = static_cast<std::uint64_t>(std::max(multiprocessors, 1)) * 32u;
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(blocks, cap)));
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
