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
// A TIFF file whole: ITK's TIFF reader (libtiff) reads a file cut inside its strips with warnings at most,
// the missing pixels 0. This walks the directory chain itself (no libtiff: Debian's ITK and ITK's own
// build ship it under different names) and compares the furthest byte any strip, tile or tag value needs
// with the file's length. Other tags' values are metadata, which ITK's reader skips when it cannot read them.
#include "CudaConnectedComponentAnalysisToolInputCheck.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

namespace cca_tool
{

/* Walks the TIFF's directories (classic or BigTIFF) and checks that every strip or tile, every directory
 * and every array of values lies inside the file. */
void
CheckTiff(const std::string & file)
{
  std::ifstream       in(file, std::ios::binary);
  const std::uint64_t size = FileSize(file);
  unsigned char       head[16] = {};
  in.read(reinterpret_cast<char *>(head), 16);
  const bool little = head[0] == 'I' && head[1] == 'I';
  if (in.gcount() < 8 || !(little || (head[0] == 'M' && head[1] == 'M')))
  {
    return; // not a TIFF header: ITK's reader decides
  }
  // values in the file's byte order, whatever the host's
  auto read = [little](const unsigned char * p, int bytes) -> std::uint64_t {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
    {
      v |= static_cast<std::uint64_t>(p[i]) << (8 * (little ? i : bytes - 1 - i));
    }
    return v;
  };
  const std::uint64_t magic = read(head + 2, 2);
  const bool          big = magic == 43;
  if (magic != 42 && !big)
  {
    return;
  }
  const int     countBytes = big ? 8 : 2;   // directory entry count
  const int     entryBytes = big ? 20 : 12; // tag 2, type 2, count 4|8, value 4|8
  const int     offsetBytes = big ? 8 : 4;
  std::uint64_t next = big ? read(head + 8, 8) : read(head + 4, 4);
  std::uint64_t promised = 0; // the furthest byte the file needs
  std::uint64_t directories = 0;
  const auto    need = [&promised](std::uint64_t end) { promised = std::max(promised, end); };
  const auto    typeSize = [](std::uint64_t type) -> std::uint64_t {
    switch (type)
    {
      case 1: // BYTE, ASCII, SBYTE, UNDEFINED
      case 2:
      case 6:
      case 7:
        return 1;
      case 3: // SHORT, SSHORT
      case 8:
        return 2;
      case 4: // LONG, SLONG, FLOAT, IFD
      case 9:
      case 11:
      case 13:
        return 4;
      case 5: // RATIONAL, SRATIONAL, DOUBLE, LONG8, SLONG8, IFD8
      case 10:
      case 12:
      case 16:
      case 17:
      case 18:
        return 8;
      default:
        return 0;
    }
  };
  std::set<std::uint64_t> seen;
  while (next != 0)
  {
    if (!seen.insert(next).second)
    {
      break; // a loop in the chain: libtiff stops there too
    }
    ++directories;
    if (next + countBytes > size)
    {
      throw Truncated(file, next + countBytes, size, "(directory " + std::to_string(directories) + ")");
    }
    std::vector<unsigned char> buffer(static_cast<std::size_t>(countBytes));
    in.clear();
    in.seekg(static_cast<std::streamoff>(next));
    in.read(reinterpret_cast<char *>(buffer.data()), countBytes);
    const std::uint64_t entries = read(buffer.data(), countBytes);
    if (entries > size / entryBytes) // more entries than the file holds bytes (and no overflow below)
    {
      throw Truncated(file, UINT64_MAX, size, "(directory " + std::to_string(directories) + "'s entry count)");
    }
    const std::uint64_t directoryEnd = next + countBytes + entries * entryBytes + offsetBytes;
    if (directoryEnd > size)
    {
      throw Truncated(file, directoryEnd, size, "(directory " + std::to_string(directories) + ")");
    }
    buffer.resize(static_cast<std::size_t>(entries * entryBytes + offsetBytes));
    in.read(reinterpret_cast<char *>(buffer.data()), static_cast<std::streamsize>(buffer.size()));
    // offsets and byte counts of the strips (273, 279) or tiles (324, 325); for a byte count that libtiff
    // repairs (one uncompressed strip, its count past the end), the image's size (256, 257, 258, 259, 277)
    std::map<std::uint64_t, std::vector<std::uint64_t>> arrays;
    std::map<std::uint64_t, std::uint64_t>              scalars;
    for (std::uint64_t e = 0; e < entries; ++e)
    {
      const unsigned char * entry = buffer.data() + e * entryBytes;
      const std::uint64_t   tag = read(entry, 2);
      const std::uint64_t   type = read(entry + 2, 2);
      const std::uint64_t   count = read(entry + 4, big ? 8 : 4);
      const unsigned char * field = entry + (big ? 12 : 8);
      const bool            offsetArray = tag == 273 || tag == 279 || tag == 324 || tag == 325;
      if (!offsetArray)
      {
        // Other tags' values are metadata: ITK's reader ignores one it cannot read, so this check does too.
        if (count == 1 && (typeSize(type) == 2 || typeSize(type) == 4) && tag >= 256 && tag <= 277)
        {
          scalars[tag] = read(field, static_cast<int>(typeSize(type)));
        }
        continue;
      }
      if (count > size || typeSize(type) == 0)
      {
        return; // more offsets than the file holds bytes, or a type this check does not read: ITK decides
      }
      const std::uint64_t bytes = typeSize(type) * count;
      if (typeSize(type) != 2 && typeSize(type) != 4 && typeSize(type) != 8)
      {
        return; // offsets of a type this check does not read: ITK's reader decides
      }
      std::vector<unsigned char> values(static_cast<std::size_t>(bytes));
      if (bytes <= static_cast<std::uint64_t>(offsetBytes))
      {
        std::memcpy(values.data(), field, static_cast<std::size_t>(bytes));
      }
      else
      {
        const std::uint64_t at = read(field, offsetBytes);
        if (at + bytes > size)
        {
          throw Truncated(file, at + bytes, size, "(the strip table of directory " + std::to_string(directories) + ")");
        }
        in.seekg(static_cast<std::streamoff>(at));
        in.read(reinterpret_cast<char *>(values.data()), static_cast<std::streamsize>(bytes));
      }
      auto & list = arrays[tag];
      for (std::uint64_t i = 0; i < count; ++i)
      {
        list.push_back(read(values.data() + i * typeSize(type), static_cast<int>(typeSize(type))));
      }
    }
    for (const auto & [offsetsTag, countsTag] : { std::pair<int, int>{ 273, 279 }, std::pair<int, int>{ 324, 325 } })
    {
      const auto & offsets = arrays[offsetsTag];
      auto         counts = arrays[countsTag];
      if (offsetsTag == 273 && offsets.size() == 1 && counts.size() == 1 && scalars[259] <= 1 &&
          offsets[0] + counts[0] > size)
      {
        // One uncompressed strip whose count runs past the end: libtiff computes the strip's size from the
        // image's instead (a "bogus StripByteCounts" it warns about), and so does this check.
        const std::uint64_t bits = scalars.count(258) ? scalars[258] : 1;
        const std::uint64_t samples = scalars.count(277) ? scalars[277] : 1;
        counts[0] = (scalars[256] * bits * samples + 7) / 8 * scalars[257];
      }
      for (std::size_t i = 0; i < std::min(offsets.size(), counts.size()); ++i)
      {
        need(counts[i] > UINT64_MAX - offsets[i] ? UINT64_MAX : offsets[i] + counts[i]);
      }
    }
    next = read(buffer.data() + entries * entryBytes, offsetBytes);
  }
  if (promised > size)
  {
    throw Truncated(file, promised, size, "(to the end of its strips or tiles)");
  }
}

} // namespace cca_tool
