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
// Host memory for the package's large numpy outputs (label images, table columns), kept for reuse once the arrays
// that used it are gone. A fresh block's pages are faulted in and zeroed by the kernel at their first touch, and for
// large outputs that costs more than the copy that fills them: on an H200 host (16 cores), 800 MB were faulted in
// by one thread in 167 ms, and copied from the GPU into touched memory in 56 ms; a table of 8 M rows spent most of
// its time there. Like CuPy's memory pools: blocks are cached by size, the blocks no array uses are kept up to a
// limit (the least recently released go first), and FreeAll() returns them to the system.
#ifndef itkCCAPythonHostCache_h
#define itkCCAPythonHostCache_h

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

namespace itk
{
namespace cca
{
namespace python
{

class HostBlockCache
{
public:
  /** The process's cache (arrays outlive any one call). */
  static HostBlockCache &
  Instance();

  /** A block of at least `bytes` (whole pages; whole huge pages from 32 MB on), reused where a cached one fits with
   * less than a quarter unused, else new; nullptr where the system has none to give. */
  void *
  Acquire(std::size_t bytes);

  /** Gives back a block from Acquire(): kept for reuse while the cache holds no more than Limit() bytes. */
  void
  Release(void * block) noexcept;

  /** The most bytes of unused blocks kept; returns the limit before. */
  std::size_t
  SetLimit(std::size_t bytes) noexcept;

  /** Returns every unused block to the system. */
  void
  FreeAll() noexcept;

  struct Info
  {
    std::size_t cachedBytes = 0; ///< in blocks that no array uses
    std::size_t usedBytes = 0;   ///< in blocks that arrays use
    std::size_t limit = 0;
  };
  Info
  GetInfo() const;

  static constexpr std::size_t HugePageBytes = std::size_t{ 2 } << 20; ///< a transparent huge page (x86-64)

private:
  HostBlockCache();

  /** Frees unused blocks, least recently released first, until at most `bytes` are cached (m_Mutex held). */
  void
  TrimTo(std::size_t bytes) noexcept;

  struct Cached
  {
    std::uint64_t released; ///< when it was given back (a counter)
    void *        block;
  };

  mutable std::mutex                      m_Mutex;
  std::unordered_map<void *, std::size_t> m_InUse;  ///< block -> its size
  std::multimap<std::size_t, Cached>      m_Cached; ///< by size
  std::size_t                             m_CachedBytes = 0;
  std::size_t                             m_UsedBytes = 0;
  std::size_t                             m_Limit = 0;
  std::uint64_t                           m_Clock = 0;
};

} // namespace python
} // namespace cca
} // namespace itk

#endif
