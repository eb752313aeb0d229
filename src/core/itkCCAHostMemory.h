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
#ifndef itkCCAHostMemory_h
#define itkCCAHostMemory_h

// Host memory for the large buffers of an update (label image, lines, runs, sums), ITK-free.

#include "itkCCATypes.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#  include <sys/mman.h>
#endif

namespace itk
{
namespace cca
{

/** A host buffer that is filled completely right after resize(): not zero-filled first (Lines' columns). */
template <typename T>
using UninitializedVector = std::vector<T, Lines::Allocator<T>>;

/** Asks Linux for transparent huge pages on a large host buffer about to be written for the first time
 * (a new label image, the lines): its first touch then faults in 2 MB pages instead of 4 KB ones, which is most of
 * the cost of copying a label image back from the GPU into fresh memory. Advice only: nothing changes
 * where the kernel does not use huge pages. */
inline void
AdviseHugePages(void * data, std::size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::size_t page = 4096;
  constexpr std::size_t worthIt = std::size_t{ 8 } << 20;
  if (bytes < worthIt)
  {
    return;
  }
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / page * page;
  if (end > begin)
  {
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE); // a refusal changes nothing
  }
#else
  (void)data;
  (void)bytes;
#endif
}

} // namespace cca
} // namespace itk

#endif
