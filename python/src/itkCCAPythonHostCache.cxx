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
#include "itkCCAPythonHostCache.h"

#include <algorithm>

#include <sys/mman.h>
#include <unistd.h>

namespace itk
{
namespace cca
{
namespace python
{
namespace
{

long
PageSize()
{
  static const long size = std::max(sysconf(_SC_PAGESIZE), 4096L);
  return size;
}

void *
MapBlock(std::size_t bytes)
{
  void * p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
  {
    return nullptr;
  }
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE); // fewer faults where the system's huge pages are "madvise" (numpy does the same)
#endif
  return p;
}

} // namespace

HostBlockCache::HostBlockCache()
{
  // A sixteenth of the memory, at most 4 GiB: two results of a 512^3 analysis with an 11 M-row table fit.
  const long        pages = sysconf(_SC_PHYS_PAGES);
  const std::size_t physical = pages > 0 ? std::size_t(pages) * std::size_t(PageSize()) : 0;
  m_Limit = std::min<std::size_t>(physical / 16, std::size_t{ 4 } << 30);
}

HostBlockCache &
HostBlockCache::Instance()
{
  // Never destroyed: arrays may release their blocks while the interpreter shuts down.
  static HostBlockCache * cache = new HostBlockCache;
  return *cache;
}

void *
HostBlockCache::Acquire(std::size_t bytes)
{
  // Whole huge pages where rounding wastes little (at most 1/16), else whole pages.
  const std::size_t unit = bytes >= 16 * HugePageBytes ? HugePageBytes : std::size_t(PageSize());
  const std::size_t size = (std::max<std::size_t>(bytes, 1) + unit - 1) / unit * unit;
  {
    std::lock_guard<std::mutex> lock(m_Mutex);
    // The smallest cached block that holds it, unless a quarter or more of it would go unused.
    const auto found = m_Cached.lower_bound(size);
    if (found != m_Cached.end() && found->first - size <= size / 4)
    {
      void * block = found->second.block;
      m_CachedBytes -= found->first;
      m_UsedBytes += found->first;
      m_InUse.emplace(block, found->first);
      m_Cached.erase(found);
      return block;
    }
  }
  void * block = MapBlock(size);
  if (block == nullptr)
  {
    FreeAll(); // the cache's unused memory may be what the system lacks
    block = MapBlock(size);
    if (block == nullptr)
    {
      return nullptr;
    }
  }
  std::lock_guard<std::mutex> lock(m_Mutex);
  m_InUse.emplace(block, size);
  m_UsedBytes += size;
  return block;
}

void
HostBlockCache::Release(void * block) noexcept
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  const auto                  found = m_InUse.find(block);
  if (found == m_InUse.end())
  {
    return;
  }
  const std::size_t size = found->second;
  m_InUse.erase(found);
  m_UsedBytes -= size;
  if (size > m_Limit)
  {
    munmap(block, size);
    return;
  }
  m_Cached.emplace(size, Cached{ ++m_Clock, block });
  m_CachedBytes += size;
  TrimTo(m_Limit);
}

void
HostBlockCache::TrimTo(std::size_t bytes) noexcept
{
  while (m_CachedBytes > bytes)
  {
    const auto oldest = std::min_element(m_Cached.begin(), m_Cached.end(), [](const auto & a, const auto & b) {
      return a.second.released < b.second.released;
    });
    munmap(oldest->second.block, oldest->first);
    m_CachedBytes -= oldest->first;
    m_Cached.erase(oldest);
  }
}

std::size_t
HostBlockCache::SetLimit(std::size_t bytes) noexcept
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  const std::size_t           before = m_Limit;
  m_Limit = bytes;
  TrimTo(m_Limit);
  return before;
}

void
HostBlockCache::FreeAll() noexcept
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  TrimTo(0);
}

HostBlockCache::Info
HostBlockCache::GetInfo() const
{
  std::lock_guard<std::mutex> lock(m_Mutex);
  return Info{ m_CachedBytes, m_UsedBytes, m_Limit };
}

} // namespace python
} // namespace cca
} // namespace itk
