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
// The tool's gzip writer for compressed NIfTI label images (.nii.gz). ITK's NIfTI writer deflates on one thread at
// zlib's default level, which made it most of the tool's time on a CT volume. Here the uncompressed file ITK wrote is
// deflated in pieces on every thread, as pigz does: each piece after a sync flush and primed with the 32 KiB before
// it, so that the pieces join into one deflate stream, and their CRCs combined. The result is one gzip member,
// which every gzip reader reads.
#include "CudaConnectedComponentAnalysisTool.h"

#include "itkMultiThreaderBase.h"
#include "itk_zlib.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <vector>

namespace cca_tool
{

void
GzipFile(const std::string & source, const std::string & target, int level)
{
  std::ifstream in(source, std::ios::binary | std::ios::ate);
  const auto    bytes = static_cast<std::streamoff>(in.tellg());
  std::vector<unsigned char> data(in && bytes >= 0 ? static_cast<std::size_t>(bytes) : 0);
  in.seekg(0);
  if (!in || !in.read(reinterpret_cast<char *>(data.data()), static_cast<std::streamsize>(data.size())))
  {
    throw ToolError(ExitFailure, "cannot read back " + source + " to compress it");
  }
  constexpr std::size_t pieceSize = std::size_t{ 1 } << 20;
  constexpr std::size_t window = std::size_t{ 1 } << 15; // deflate's dictionary
  const std::size_t     numPieces = std::max<std::size_t>(1, (data.size() + pieceSize - 1) / pieceSize);
  std::vector<std::vector<unsigned char>> deflated(numPieces);
  std::vector<uLong>                      crcs(numPieces);
  std::vector<int>                        failed(numPieces, 0);
  auto                                    threader = itk::MultiThreaderBase::New();
  threader->ParallelizeArray(
    0,
    numPieces,
    [&](itk::SizeValueType piece) {
      const std::size_t begin = piece * pieceSize;
      const std::size_t length = std::min(pieceSize, data.size() - begin);
      const bool        last = piece + 1 == numPieces;
      z_stream          stream{};
      if (deflateInit2(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      {
        failed[piece] = 1;
        return;
      }
      if (begin > 0)
      {
        const std::size_t primed = std::min(window, begin);
        deflateSetDictionary(&stream, data.data() + begin - primed, static_cast<uInt>(primed));
      }
      std::vector<unsigned char> & out = deflated[piece];
      out.resize(deflateBound(&stream, static_cast<uLong>(length)) + 64); // + the sync flush's empty block
      stream.next_in = data.data() + begin;
      stream.avail_in = static_cast<uInt>(length);
      stream.next_out = out.data();
      stream.avail_out = static_cast<uInt>(out.size());
      const int result = deflate(&stream, last ? Z_FINISH : Z_SYNC_FLUSH);
      if ((last ? result != Z_STREAM_END : result != Z_OK) || stream.avail_in != 0)
      {
        failed[piece] = 1;
      }
      out.resize(out.size() - stream.avail_out);
      deflateEnd(&stream);
      crcs[piece] = crc32(crc32(0L, Z_NULL, 0), data.data() + begin, static_cast<uInt>(length));
    },
    nullptr);
  if (std::find(failed.begin(), failed.end(), 1) != failed.end())
  {
    throw ToolError(ExitFailure, "cannot compress " + target + " (zlib failed)");
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::size_t piece = 0; piece < numPieces; ++piece)
  {
    const std::size_t length = std::min(pieceSize, data.size() - piece * pieceSize);
    crc = crc32_combine(crc, crcs[piece], static_cast<z_off_t>(length));
  }
  // RFC 1952: the header (deflate, no name, no time, Unix), the stream, the CRC-32 and the length modulo 2^32.
  const unsigned char header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
  unsigned char       trailer[8];
  const auto          size = static_cast<std::uint32_t>(data.size());
  for (int i = 0; i < 4; ++i)
  {
    trailer[i] = static_cast<unsigned char>((crc >> (8 * i)) & 0xff);
    trailer[4 + i] = static_cast<unsigned char>((size >> (8 * i)) & 0xff);
  }
  std::ofstream out(target, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(header), sizeof(header));
  for (const auto & piece : deflated)
  {
    out.write(reinterpret_cast<const char *>(piece.data()), static_cast<std::streamsize>(piece.size()));
  }
  out.write(reinterpret_cast<const char *>(trailer), sizeof(trailer));
  out.close();
  if (!out)
  {
    throw ToolError(ExitFailure, "cannot write " + target);
  }
}

} // namespace cca_tool
