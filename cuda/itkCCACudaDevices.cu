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
// Which CUDA devices there are (and, when none, why: no driver, no device, an old driver), and the CUDA
// engine's factory.

#include "itkCCACudaEngine.cuh"

#include <sstream>

#if defined(_WIN32)
#  include <windows.h>
#else
#  include <dlfcn.h>
#endif

namespace itk
{
namespace cca
{

bool
IsCudaEngineCompiled()
{
  return true;
}

namespace
{
/** Whether the CUDA driver library can be loaded at all: the static CUDA runtime reports a missing driver
 * and an old one alike (cudaErrorInsufficientDriver). Looked for once per process: the automatic backend asks on
 * every call of a machine without a GPU, and the library search cost more than a small image's analysis. */
bool
CudaDriverInstalled()
{
  static const bool installed = []() {
#if defined(_WIN32)
    HMODULE driver = LoadLibraryA("nvcuda.dll");
    if (driver)
    {
      FreeLibrary(driver);
    }
    return driver != nullptr;
#else
    void * driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver)
    {
      dlclose(driver);
    }
    return driver != nullptr;
#endif
  }();
  return installed;
}
} // namespace

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
      if (status == cudaErrorNoDevice)
      {
        *reason = "no CUDA device found";
      }
      else if (status == cudaErrorInsufficientDriver && !CudaDriverInstalled())
      {
        *reason = "no CUDA driver found (the NVIDIA driver's libcuda is not installed)";
      }
      else
      {
        *reason = std::string("no usable CUDA device: ") + cudaGetErrorString(status);
      }
    }
    return 0;
  }
  if (count == 0 && reason)
  {
    *reason = "no CUDA device found";
  }
  return count;
}

void
cuda::RequireCudaDevice(int deviceId)
{
  std::string reason;
  const int   count = GetCudaDeviceCount(&reason);
  if (count == 0)
  {
    throw Unavailable("the CUDA engine cannot run: " + reason);
  }
  if (deviceId < 0 || deviceId >= count)
  {
    std::ostringstream msg;
    msg << "CUDA device " << deviceId << " does not exist (" << count << " device(s) found)";
    throw Unavailable(msg.str());
  }
}

std::unique_ptr<Engine>
CreateCudaEngine(int deviceId)
{
  cuda::RequireCudaDevice(deviceId);
  return std::make_unique<cuda::CudaEngine>(deviceId);
}

} // namespace cca
} // namespace itk
