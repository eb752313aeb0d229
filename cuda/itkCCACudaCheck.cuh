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
// Error checking for every CUDA runtime call and kernel launch of the CUDA engine.
#ifndef itkCCACudaCheck_cuh
#define itkCCACudaCheck_cuh

#include "itkCCAEngine.h"

#include <cuda_runtime.h>

#include <sstream>

namespace itk
{
namespace cca
{
namespace cuda
{

/** Throws Error naming the failed call; out-of-memory gets its own wording so that users
 * see at once that the image is too large for the device rather than a generic CUDA failure. */
[[noreturn]] inline void
ThrowCudaError(cudaError_t status, const char * what, const char * file, int line)
{
  // A failed runtime call also leaves its error as the thread's "last error"; clear it so that the next
  // launch check does not report it again (a sticky error stays and is reported by the next call).
  cudaGetLastError();
  std::ostringstream msg;
  if (status == cudaErrorMemoryAllocation)
  {
    msg << "GPU out of memory in " << what;
  }
  else
  {
    msg << "CUDA error in " << what;
  }
  msg << ": " << cudaGetErrorName(status) << " (" << cudaGetErrorString(status) << ") at " << file << ':' << line;
  if (status == cudaErrorMemoryAllocation)
  {
    throw OutOfMemory(msg.str());
  }
  throw Error(msg.str());
}

/** Makes `device` current for the scope and gives the caller's current device back at its end: a Python
 * session's CuPy or PyTorch allocations after a call on another device must not move there. */
class DeviceScope
{
public:
  explicit DeviceScope(int device)
  {
    if (cudaGetDevice(&m_Previous) != cudaSuccess)
    {
      m_Previous = -1;
      cudaGetLastError();
    }
    if (m_Previous != device)
    {
      const cudaError_t status = cudaSetDevice(device);
      if (status != cudaSuccess)
      {
        ThrowCudaError(status, "cudaSetDevice", __FILE__, __LINE__);
      }
    }
  }
  ~DeviceScope()
  {
    if (m_Previous >= 0)
    {
      cudaSetDevice(m_Previous);
      cudaGetLastError();
    }
  }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &
  operator=(const DeviceScope &) = delete;

private:
  int m_Previous = -1;
};

} // namespace cuda
} // namespace cca
} // namespace itk

/** Checks a CUDA runtime call. */
#define CCA_CUDA_CHECK(call)                                                                                           \
  do                                                                                                                   \
  {                                                                                                                    \
    const cudaError_t ccaStatus_ = (call);                                                                             \
    if (ccaStatus_ != cudaSuccess)                                                                                     \
    {                                                                                                                  \
      ::itk::cca::cuda::ThrowCudaError(ccaStatus_, #call, __FILE__, __LINE__);                                         \
    }                                                                                                                  \
  } while (false)

/** Checks the launch that was just made (configuration errors show up here, asynchronous
 * execution errors at the next synchronizing call, which is itself checked). */
#define CCA_CUDA_CHECK_LAUNCH(kernelName)                                                                              \
  do                                                                                                                   \
  {                                                                                                                    \
    const cudaError_t ccaStatus_ = cudaGetLastError();                                                                 \
    if (ccaStatus_ != cudaSuccess)                                                                                     \
    {                                                                                                                  \
      ::itk::cca::cuda::ThrowCudaError(ccaStatus_, "launch of " kernelName, __FILE__, __LINE__);                       \
    }                                                                                                                  \
  } while (false)

#endif
