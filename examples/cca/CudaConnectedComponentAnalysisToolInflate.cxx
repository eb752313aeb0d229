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
#include "CudaConnectedComponentAnalysisToolInflate.h"

#if defined(CCA_TOOL_LIBDEFLATE) && defined(__linux__)
#  include <libdeflate.h>

#  include <fcntl.h>
#  include <sys/mman.h>
#  include <sys/stat.h>
#  include <unistd.h>

#  include <algorithm>
#  include <cstdlib>
#  include <filesystem>
#  include <fstream>
#  include <vector>
#  define CCA_TOOL_INFLATED_COPY 1
#endif

namespace cca_tool
{

#ifdef CCA_TOOL_INFLATED_COPY
namespace
{

/** A read-only or shared mapping, unmapped on destruction. */
struct Mapping
{
  void *      data{ MAP_FAILED };
  std::size_t size{ 0 };
  Mapping() = default;
  Mapping(std::size_t n, int protection, int flags, int descriptor)
    : data(n > 0 ? mmap(nullptr, n, protection, flags, descriptor, 0) : MAP_FAILED)
    , size(n)
  {}
  ~Mapping()
  {
    if (data != MAP_FAILED)
    {
      munmap(data, size);
    }
  }
  Mapping(const Mapping &) = delete;
  Mapping &
  operator=(const Mapping &) = delete;
};

/** MemAvailable of /proc/meminfo in bytes (the free pages where it cannot be read). */
std::uint64_t
AvailableMemory()
{
  std::ifstream meminfo("/proc/meminfo");
  std::string   key;
  std::uint64_t kilobytes = 0;
  std::string   unit;
  while (meminfo >> key >> kilobytes >> unit)
  {
    if (key == "MemAvailable:")
    {
      return kilobytes * 1024;
    }
  }
  return static_cast<std::uint64_t>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

/** The size the last gzip member says it decompresses to (ISIZE: modulo 2^32). */
std::uint64_t
LastMemberSize(const unsigned char * data, std::size_t size)
{
  if (size < 4)
  {
    return 0;
  }
  const unsigned char * p = data + size - 4;
  return std::uint64_t{ p[0] } | std::uint64_t{ p[1] } << 8 | std::uint64_t{ p[2] } << 16 | std::uint64_t{ p[3] } << 24;
}

} // namespace

bool
InflatedCopy::Available()
{
  return true;
}

std::shared_ptr<InflatedCopy>
InflatedCopy::Make(const std::string & file, const std::string & name, std::uint64_t promised)
{
  const int input = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (input < 0)
  {
    return nullptr;
  }
  struct stat status
  {};
  const bool statted = fstat(input, &status) == 0;
  const auto compressedSize = statted ? static_cast<std::size_t>(status.st_size) : 0;
  Mapping    compressed(compressedSize, PROT_READ, MAP_PRIVATE, input);
  close(input); // the mapping keeps the file
  if (!statted || (compressedSize > 0 && compressed.data == MAP_FAILED))
  {
    return nullptr; // checked the usual way
  }
  const auto * in = static_cast<const unsigned char *>(compressed.data);
  if (compressedSize > 0)
  {
    madvise(compressed.data, compressedSize, MADV_SEQUENTIAL);
  }

  // The copy: a memory file, named by a link in a folder of its own, which ITK opens by name.
  std::uint64_t capacity = std::max<std::uint64_t>({ promised, LastMemberSize(in, compressedSize), 1 });
  if (capacity > AvailableMemory() / 2)
  {
    return nullptr; // the image and its copy might not both fit: zlib's streaming check, and ITK's read
  }
  std::shared_ptr<InflatedCopy> copy(new InflatedCopy);
  copy->m_Descriptor = memfd_create("cca-inflated-input", MFD_CLOEXEC);
  std::error_code   error;
  const std::string folderTemplate = (std::filesystem::temp_directory_path(error) / "cca-XXXXXX").string();
  std::vector<char> folder(folderTemplate.begin(), folderTemplate.end());
  folder.push_back('\0');
  if (copy->m_Descriptor < 0 || error || mkdtemp(folder.data()) == nullptr)
  {
    return nullptr;
  }
  copy->m_Directory = folder.data();
  copy->m_Path = copy->m_Directory + "/" + name;
  if (symlink(("/proc/self/fd/" + std::to_string(copy->m_Descriptor)).c_str(), copy->m_Path.c_str()) != 0)
  {
    copy->m_Path.clear();
    return nullptr;
  }
  // The name must open the memory file (no /proc, say, in a sandbox): else ITK could not read it.
  const int probe = open(copy->m_Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (probe < 0)
  {
    return nullptr;
  }
  close(probe);

  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor *)> decompressor(
    libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!decompressor)
  {
    return nullptr;
  }
  for (;;)
  {
    if (ftruncate(copy->m_Descriptor, static_cast<off_t>(capacity)) != 0)
    {
      return nullptr;
    }
    Mapping out(capacity, PROT_READ | PROT_WRITE, MAP_SHARED, copy->m_Descriptor);
    if (out.data == MAP_FAILED)
    {
      return nullptr;
    }
    // Member after member, as zlib's gzread reads them; bytes after the last member that begin no other are
    // ignored, as gzread ignores them.
    std::size_t inPosition = 0;
    std::size_t outPosition = 0;
    bool        roomy = true;
    do
    {
      std::size_t             used = 0;
      std::size_t             yielded = 0;
      const libdeflate_result result =
        libdeflate_gzip_decompress_ex(decompressor.get(),
                                      in + inPosition,
                                      compressedSize - inPosition,
                                      static_cast<unsigned char *>(out.data) + outPosition,
                                      capacity - outPosition,
                                      &used,
                                      &yielded);
      if (result == LIBDEFLATE_INSUFFICIENT_SPACE)
      {
        roomy = false;
        break;
      }
      if (result != LIBDEFLATE_SUCCESS)
      {
        return nullptr; // damaged or cut: zlib's check says where
      }
      inPosition += used;
      outPosition += yielded;
    } while (compressedSize - inPosition >= 2 && in[inPosition] == 0x1f && in[inPosition + 1] == 0x8b);
    if (!roomy)
    {
      capacity += capacity / 2 + (std::uint64_t{ 1 } << 20); // more than the members said: rare, start again
      if (capacity > AvailableMemory() / 2)
      {
        return nullptr;
      }
      continue;
    }
    if (outPosition < promised || ftruncate(copy->m_Descriptor, static_cast<off_t>(outPosition)) != 0)
    {
      return nullptr;
    }
    return copy;
  }
}

InflatedCopy::~InflatedCopy()
{
  if (!m_Path.empty())
  {
    unlink(m_Path.c_str());
  }
  if (!m_Directory.empty())
  {
    rmdir(m_Directory.c_str());
  }
  if (m_Descriptor >= 0)
  {
    close(m_Descriptor);
  }
}

#else

bool
InflatedCopy::Available()
{
  return false;
}

std::shared_ptr<InflatedCopy>
InflatedCopy::Make(const std::string &, const std::string &, std::uint64_t)
{
  return nullptr;
}

InflatedCopy::~InflatedCopy() = default;

#endif

} // namespace cca_tool
