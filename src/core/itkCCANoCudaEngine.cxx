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
// CUDA entry points of a CPU-only build (no CUDA compiler at configure time).
#include "itkCCAEngine.h"

namespace itk
{
namespace cca
{

bool
IsCudaEngineCompiled()
{
  return false;
}

int
GetCudaDeviceCount(std::string * reason)
{
  if (reason)
  {
    *reason = "this build has no CUDA engine (configured without a CUDA compiler)";
  }
  return 0;
}

std::unique_ptr<Engine>
CreateCudaEngine(int)
{
  throw Unavailable("the CUDA engine was requested, but this build has no CUDA engine "
                    "(configured without a CUDA compiler)");
}

} // namespace cca
} // namespace itk
