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
// deflated in pieces on every thread, as pigz does: each piece primed with the 32 KiB before it and ended by a sync
// flush, so that the pieces join into one deflate stream, and their CRCs combined. The result is one gzip member,
// which every gzip reader reads. The file is read a batch of pieces at a time: memory stays small however large
// the image.
#include "CudaConnectedComponentAnalysisTool.h"

#include "itkMultiThreaderBase.h"
#include "itk_zlib.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <vector>

namespace cca_tool
{
namespace
{
constexpr std::size_t PieceSize = std::size_t{ 1 } << 20;
constexpr std::size_t Window = std::size_t{ 1 } << 15; // deflate's dictionary

/** Deflates `length` bytes at `data` (the `primed` bytes before them are its dictionary) as raw deflate blocks, the
 * last one final where `last`, else ended by a sync flush (byte-aligned, so that the next piece follows). */
bool
DeflatePiece(const unsigned char * data, std::size_t length, std::size_t primed, bool last, int level,
             std::vector<unsigned char> & out)
{
  z_stream stream{};
  if (deflateInit2(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
  {
    return false;
  }
  if (primed > 0)
  {
    deflateSetDictionary(&stream, data - primed, static_cast<uInt>(primed));
  }
  out.resize(deflateBound(&stream, static_cast<uLong>(length)) + 64); // + the sync flush's empty block
  stream.next_in = const_cast<unsigned char *>(data);
  stream.avail_in = static_cast<uInt>(length);
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  const int  result = deflate(&stream, last ? Z_FINISH : Z_SYNC_FLUSH);
  const bool done = (last ? result == Z_STREAM_END : result == Z_OK) && stream.avail_in == 0;
  out.resize(out.size() - stream.avail_out);
  deflateEnd(&stream);
  return done;
}
} // namespace

void
GzipFile(const std::string & source, const std::string & target, int level)
{
  std::ifstream in(source, std::ios::binary | std::ios::ate);
  std::ofstream out(target, std::ios::binary | std::ios::trunc);
  if (!in || !out)
  {
    throw ToolError(ExitFailure, "cannot compress " + source + " into " + target);
  }
  const auto total = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  // RFC 1952: the header (deflate, no name, no time, Unix), the stream, the CRC-32 and the length modulo 2^32.
  const unsigned char header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
  out.write(reinterpret_cast<const char *>(header), sizeof(header));

  auto                                    threader = itk::MultiThreaderBase::New();
  const std::size_t                       batchPieces = 4 * std::max(1u, threader->GetNumberOfWorkUnits());
  std::vector<unsigned char>              buffer(Window + batchPieces * PieceSize); // the window before, the batch
  std::vector<std::vector<unsigned char>> deflated(batchPieces);
  std::vector<uLong>                      crcs(batchPieces);
  std::vector<char>                       failed(batchPieces);
  uLong                                   crc = crc32(0L, Z_NULL, 0);
  std::size_t                             primed = 0; // bytes of the previous batch kept before this one
  std::uint64_t                           done = 0;
  do
  {
    const auto length = static_cast<std::size_t>(std::min<std::uint64_t>(total - done, batchPieces * PieceSize));
    unsigned char * const batch = buffer.data() + Window;
    if (!in.read(reinterpret_cast<char *>(batch), static_cast<std::streamsize>(length)))
    {
      throw ToolError(ExitFailure, "cannot read back " + source + " to compress it");
    }
    const bool        lastBatch = done + length == total;
    const std::size_t numPieces = std::max<std::size_t>(1, (length + PieceSize - 1) / PieceSize);
    std::fill(failed.begin(), failed.end(), 0);
    threader->ParallelizeArray(
      0,
      numPieces,
      [&](itk::SizeValueType piece) {
        const std::size_t begin = piece * PieceSize;
        const std::size_t size = std::min(PieceSize, length - begin);
        const std::size_t dictionary = std::min(Window, begin + primed);
        failed[piece] =
          !DeflatePiece(batch + begin, size, dictionary, lastBatch && piece + 1 == numPieces, level, deflated[piece]);
        crcs[piece] = crc32(crc32(0L, Z_NULL, 0), batch + begin, static_cast<uInt>(size));
      },
      nullptr);
    if (std::find(failed.begin(), failed.begin() + numPieces, 1) != failed.begin() + numPieces)
    {
      throw ToolError(ExitFailure, "cannot compress " + target + " (zlib failed)");
    }
    for (std::size_t piece = 0; piece < numPieces; ++piece)
    {
      out.write(reinterpret_cast<const char *>(deflated[piece].data()),
                static_cast<std::streamsize>(deflated[piece].size()));
      crc = crc32_combine(crc, crcs[piece], static_cast<z_off_t>(std::min(PieceSize, length - piece * PieceSize)));
    }
    // The batch's last 32 KiB (with the window before it where the batch is shorter) prime the next batch.
    primed = std::min(Window, primed + length);
    std::copy(batch + length - primed, batch + length, buffer.data() + Window - primed);
    done += length;
  } while (done < total);

  unsigned char trailer[8];
  const auto    size = static_cast<std::uint32_t>(total);
  for (int i = 0; i < 4; ++i)
  {
    trailer[i] = static_cast<unsigned char>((crc >> (8 * i)) & 0xff);
    trailer[4 + i] = static_cast<unsigned char>((size >> (8 * i)) & 0xff);
  }
  out.write(reinterpret_cast<const char *>(trailer), sizeof(trailer));
  out.close();
  if (!out)
  {
    throw ToolError(ExitFailure, "cannot write " + target);
  }
}

} // namespace cca_tool
