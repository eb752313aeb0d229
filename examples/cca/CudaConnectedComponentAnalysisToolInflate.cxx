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
#  include <cstring>
#  include <filesystem>
#  include <functional>
#  include <fstream>
#  include <iostream>
#  include <vector>
#  define CCA_TOOL_INFLATED_COPY 1
#endif
#if defined(CCA_TOOL_INFLATED_COPY) && defined(CCA_TOOL_RAPIDGZIP)
#  include "itkMultiThreaderBase.h"

#  include <filereader/Standard.hpp>
#  include <rapidgzip/rapidgzip.hpp>
#else
#  undef CCA_TOOL_RAPIDGZIP
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

/** The gzip file mapped read-only; `size` 0 with no mapping where it is empty. `opened` is false where it could
 * not be opened or mapped. */
struct CompressedFile
{
  std::size_t size{ 0 };
  bool        opened{ false };
  Mapping     mapping;

  explicit CompressedFile(const std::string & file)
  {
    const int input = open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (input < 0)
    {
      return;
    }
    struct stat status
    {};
    const bool statted = fstat(input, &status) == 0;
    size = statted ? static_cast<std::size_t>(status.st_size) : 0;
    if (size > 0)
    {
      mapping.data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, input, 0);
      mapping.size = size;
    }
    close(input); // the mapping keeps the file
    opened = statted && (size == 0 || mapping.data != MAP_FAILED);
    if (opened && size > 0)
    {
      madvise(mapping.data, size, MADV_SEQUENTIAL);
    }
  }

  const unsigned char *
  Data() const
  {
    return static_cast<const unsigned char *>(mapping.data);
  }
};

enum class Inflation
{
  Whole,   ///< every member decompressed, CRCs and lengths checked
  NoRoom,  ///< more bytes than `capacity`
  Damaged, ///< damaged, cut or not gzip
};

/** Every gzip member of `in` decompressed by libdeflate into `out`, one after the other, as zlib's gzread reads
 * them; bytes after the last member that begin no other are ignored, as gzread ignores them. */
Inflation
InflateMembers(const CompressedFile & in, unsigned char * out, std::uint64_t capacity, std::uint64_t & produced)
{
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor *)> decompressor(
    libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!decompressor)
  {
    return Inflation::Damaged;
  }
  const unsigned char * data = in.Data();
  std::size_t           inPosition = 0;
  produced = 0;
  do
  {
    std::size_t             used = 0;
    std::size_t             yielded = 0;
    const libdeflate_result result = libdeflate_gzip_decompress_ex(decompressor.get(),
                                                                   data + inPosition,
                                                                   in.size - inPosition,
                                                                   out + produced,
                                                                   capacity - produced,
                                                                   &used,
                                                                   &yielded);
    if (result == LIBDEFLATE_INSUFFICIENT_SPACE)
    {
      return Inflation::NoRoom;
    }
    if (result != LIBDEFLATE_SUCCESS)
    {
      return Inflation::Damaged;
    }
    inPosition += used;
    produced += yielded;
  } while (in.size - inPosition >= 2 && data[inPosition] == 0x1f && data[inPosition + 1] == 0x8b);
  return Inflation::Whole;
}

/** Every member decompressed by libdeflate (InflateMembers) into the memory `map(capacity)` gives: at least
 * `capacity` bytes and the last member's size, more while the members need more (rare), within half the available
 * memory. The memory that holds them, `produced` their bytes; nullptr where the stream is damaged or cut, or the
 * memory is wanting. */
std::unique_ptr<Mapping>
InflateWhole(const CompressedFile & in, std::uint64_t capacity,
             const std::function<std::unique_ptr<Mapping>(std::uint64_t)> & map, std::uint64_t & produced)
{
  capacity = std::max<std::uint64_t>({ capacity, LastMemberSize(in.Data(), in.size), 1 });
  while (capacity <= AvailableMemory() / 2)
  {
    std::unique_ptr<Mapping> out = map(capacity);
    if (!out || out->data == MAP_FAILED)
    {
      return nullptr;
    }
    const Inflation result = InflateMembers(in, static_cast<unsigned char *>(out->data), capacity, produced);
    if (result != Inflation::NoRoom)
    {
      return result == Inflation::Whole ? std::move(out) : nullptr;
    }
    capacity += capacity / 2 + (std::uint64_t{ 1 } << 20);
  }
  return nullptr;
}

#  ifdef CCA_TOOL_RAPIDGZIP
/** Reads up to `size` bytes of `reader` into `out`; fewer only where the stream ends. */
std::uint64_t
ReadUpTo(rapidgzip::ParallelGzipReader<> & reader, unsigned char * out, std::uint64_t size)
{
  std::uint64_t done = 0;
  while (done < size)
  {
    const std::size_t got = reader.read(reinterpret_cast<char *>(out + done), static_cast<std::size_t>(size - done));
    if (got == 0)
    {
      break;
    }
    done += got;
  }
  return done;
}

/** rapidgzip on `threads` threads: bytes [skip, skip + size) of the stream into `out`, the rest read to the end
 * (the last member's CRC). */
bool
InflateParallel(const std::string & file, std::uint64_t compressedSize, std::size_t threads, std::uint64_t skip,
                unsigned char * out, std::uint64_t size)
{
  // rapidgzip says on stderr what it could not decode; the tool's check says it to the user, the way it says it for
  // every reader, so rapidgzip's lines are dropped (its threads are joined before the stream is given back).
  struct QuietStandardError
  {
    std::streambuf * saved{ std::cerr.rdbuf(nullptr) };
    ~QuietStandardError() { std::cerr.rdbuf(saved); }
  } quiet;
  try
  {
    // Chunks of 1-4 MiB of the compressed stream: rapidgzip's default 4 MiB is its fastest on large files; smaller
    // ones give every thread a chunk of a smaller file.
    const auto chunk =
      std::clamp<std::uint64_t>(compressedSize / threads, std::uint64_t{ 1 } << 20, std::uint64_t{ 4 } << 20);
    rapidgzip::ParallelGzipReader<> reader(std::make_unique<rapidgzip::StandardFileReader>(file), threads, chunk);
    reader.setCRC32Enabled(true);
    std::vector<unsigned char> scratch(std::size_t{ 1 } << 20);
    for (std::uint64_t skipped = 0; skipped < skip;)
    {
      const std::uint64_t got =
        ReadUpTo(reader, scratch.data(), std::min<std::uint64_t>(skip - skipped, scratch.size()));
      if (got == 0)
      {
        return false;
      }
      skipped += got;
    }
    if (ReadUpTo(reader, out, size) != size)
    {
      return false;
    }
    while (ReadUpTo(reader, scratch.data(), scratch.size()) > 0)
    {
      // to the end, where the last member's CRC and length are checked
    }
    return true;
  }
  catch (const std::exception &)
  {
    return false; // damaged, cut or not gzip (the caller's check says which), or no memory or threads
  }
}
#  endif

} // namespace

bool
InflatedCopy::Available()
{
  return true;
}

unsigned int
InflatedCopy::InflateInto(const std::string & file, std::uint64_t skip, void * out, std::uint64_t size)
{
  const CompressedFile in(file);
  if (!in.opened || in.size == 0)
  {
    return 0;
  }
#  ifdef CCA_TOOL_RAPIDGZIP
  // rapidgzip where it is the faster: from 8 threads on. Measured on a 157 MB CT volume (50-89 MB gzipped) against
  // libdeflate's one thread: 16-core H200 host 0.22 s on 16 threads, 0.31 on 8, 0.50 on 4 (libdeflate 0.50); 2-core
  // machine 0.62 s on 2 threads (libdeflate 0.27). Below 4 MiB of stream it has too few chunks to share.
  const unsigned int threads = itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads();
  if (threads >= 8 && in.size >= (std::size_t{ 4 } << 20) &&
      InflateParallel(file, in.size, threads, skip, static_cast<unsigned char *>(out), size))
  {
    return threads;
  }
#  endif
  // libdeflate decompresses whole buffers: the stream into one of its own, the data copied from there.
  std::uint64_t produced = 0;
  const auto    whole = InflateWhole(
    in,
    skip + size,
    [](std::uint64_t capacity) {
      return std::make_unique<Mapping>(capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    },
    produced);
  if (!whole || produced < skip + size)
  {
    return 0;
  }
  std::memcpy(out, static_cast<const unsigned char *>(whole->data) + skip, static_cast<std::size_t>(size));
  return 1;
}

std::shared_ptr<InflatedCopy>
InflatedCopy::Make(const std::string & file, const std::string & name, std::uint64_t promised)
{
  const CompressedFile in(file);
  if (!in.opened)
  {
    return nullptr; // checked the usual way
  }

  // The copy: a memory file, named by a link in a folder of its own, which ITK opens by name.
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

  // Where the image and its copy might not both fit (more than half the available memory), none is made: zlib's
  // streaming check then runs, and ITK's read.
  std::uint64_t produced = 0;
  const int     descriptor = copy->m_Descriptor;
  const auto    mapping = InflateWhole(
    in,
    promised,
    [descriptor](std::uint64_t capacity) {
      return ftruncate(descriptor, static_cast<off_t>(capacity)) == 0
               ? std::make_unique<Mapping>(capacity, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor)
               : nullptr;
    },
    produced);
  if (!mapping || produced < promised || ftruncate(descriptor, static_cast<off_t>(produced)) != 0)
  {
    return nullptr; // damaged or cut (zlib's check says where), or no room
  }
  return copy;
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

unsigned int
InflatedCopy::InflateInto(const std::string &, std::uint64_t, void *, std::uint64_t)
{
  return 0;
}

InflatedCopy::~InflatedCopy() = default;

#endif

} // namespace cca_tool
