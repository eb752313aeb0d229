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
// zlib's default level, which made it most of the tool's time on a CT volume. Here the stream is deflated in pieces
// on every thread, as pigz does: each piece primed with the 32 KiB before it and ended by a sync flush, so that the
// pieces join into one deflate stream, and their CRCs combined. The result is one gzip member, which every gzip
// reader reads. The stream comes from memory (a header and the image's buffer: GzipBytes) or from an uncompressed
// file that ITK wrote (GzipFile), read a batch of pieces at a time so that memory stays small however large the
// image. A NIfTI header for the image's buffer is the one ITK writes for a single pixel of the same geometry, its
// dimensions set to the image's (NiftiHeaderForSize).
#include "CudaConnectedComponentAnalysisTool.h"

#include "itkMultiThreaderBase.h"
#include "itk_zlib.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace cca_tool
{
namespace
{
constexpr std::size_t PieceSize = std::size_t{ 1 } << 20;
constexpr std::size_t Window = std::size_t{ 1 } << 15; // deflate's dictionary

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

/** One gzip member written batch by batch: each batch's pieces deflated on every thread and written in order. */
class GzipMember
{
public:
  GzipMember(const std::string & target, int level)
    : m_Out(target, std::ios::binary | std::ios::trunc)
    , m_Target(target)
    , m_Level(level)
    , m_Threader(itk::MultiThreaderBase::New())
    , m_BatchPieces(4 * std::max(1u, m_Threader->GetNumberOfWorkUnits()))
    , m_Deflated(m_BatchPieces)
    , m_Crcs(m_BatchPieces)
    , m_Failed(m_BatchPieces)
  {
    // RFC 1952: the header (deflate, no name, no time, Unix), the stream, the CRC-32 and the length modulo 2^32.
    const unsigned char header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
    m_Out.write(reinterpret_cast<const char *>(header), sizeof(header));
    if (!m_Out)
    {
      throw ToolError(ExitFailure, "cannot write " + target);
    }
  }

  /** The most bytes a batch may hold. */
  std::size_t
  BatchBytes() const
  {
    return m_BatchPieces * PieceSize;
  }

  /** Deflates `length` bytes (at most BatchBytes()) at `batch`, the stream's next. The `primed` bytes before
   * `batch` must be the stream's bytes before it (at most 32 KiB, all there are), `last` the stream's end. */
  void
  Write(const unsigned char * batch, std::size_t length, std::size_t primed, bool last)
  {
    if (length > BatchBytes())
    {
      throw ToolError(ExitFailure, "cannot compress " + m_Target + " (a batch past its pieces)");
    }
    const std::size_t numPieces = std::max<std::size_t>(1, (length + PieceSize - 1) / PieceSize);
    std::fill(m_Failed.begin(), m_Failed.end(), 0);
    m_Threader->ParallelizeArray(
      0,
      numPieces,
      [&](itk::SizeValueType piece) {
        const std::size_t begin = piece * PieceSize;
        const std::size_t size = std::min(PieceSize, length - begin);
        const std::size_t dictionary = std::min(Window, begin + primed);
        m_Failed[piece] =
          !DeflatePiece(batch + begin, size, dictionary, last && piece + 1 == numPieces, m_Level, m_Deflated[piece]);
        m_Crcs[piece] = crc32(crc32(0L, Z_NULL, 0), batch + begin, static_cast<uInt>(size));
      },
      nullptr);
    if (std::find(m_Failed.begin(), m_Failed.begin() + numPieces, 1) != m_Failed.begin() + numPieces)
    {
      throw ToolError(ExitFailure, "cannot compress " + m_Target + " (zlib failed)");
    }
    for (std::size_t piece = 0; piece < numPieces; ++piece)
    {
      m_Out.write(reinterpret_cast<const char *>(m_Deflated[piece].data()),
                  static_cast<std::streamsize>(m_Deflated[piece].size()));
      m_Crc =
        crc32_combine(m_Crc, m_Crcs[piece], static_cast<z_off_t>(std::min(PieceSize, length - piece * PieceSize)));
    }
    m_Total += length;
  }

  /** The CRC and the length after the last batch. */
  void
  Close()
  {
    unsigned char trailer[8];
    const auto    size = static_cast<std::uint32_t>(m_Total);
    for (int i = 0; i < 4; ++i)
    {
      trailer[i] = static_cast<unsigned char>((m_Crc >> (8 * i)) & 0xff);
      trailer[4 + i] = static_cast<unsigned char>((size >> (8 * i)) & 0xff);
    }
    m_Out.write(reinterpret_cast<const char *>(trailer), sizeof(trailer));
    m_Out.close();
    if (!m_Out)
    {
      throw ToolError(ExitFailure, "cannot write " + m_Target);
    }
  }

private:
  std::ofstream                           m_Out;
  std::string                             m_Target;
  int                                     m_Level;
  itk::MultiThreaderBase::Pointer         m_Threader;
  std::size_t                             m_BatchPieces;
  std::vector<std::vector<unsigned char>> m_Deflated;
  std::vector<uLong>                      m_Crcs;
  std::vector<char>                       m_Failed;
  uLong                                   m_Crc{ crc32(0L, Z_NULL, 0) };
  std::uint64_t                           m_Total{ 0 };
};

template <typename T>
T
NativeField(const unsigned char * header, std::size_t offset)
{
  T value;
  std::memcpy(&value, header + offset, sizeof(T));
  return value;
}
} // namespace

void
GzipFile(const std::string & source, const std::string & target, int level)
{
  std::ifstream in(source, std::ios::binary | std::ios::ate);
  if (!in)
  {
    throw ToolError(ExitFailure, "cannot compress " + source + " into " + target);
  }
  const auto total = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  GzipMember                 member(target, level);
  std::vector<unsigned char> buffer(Window + member.BatchBytes()); // the window before, the batch
  std::size_t                primed = 0;                           // bytes of the previous batch kept before this one
  std::uint64_t              done = 0;
  do
  {
    const auto            length = static_cast<std::size_t>(std::min<std::uint64_t>(total - done, member.BatchBytes()));
    unsigned char * const batch = buffer.data() + Window;
    if (!in.read(reinterpret_cast<char *>(batch), static_cast<std::streamsize>(length)))
    {
      throw ToolError(ExitFailure, "cannot read back " + source + " to compress it");
    }
    member.Write(batch, length, primed, done + length == total);
    // The batch's last 32 KiB (with the window before it where the batch is shorter) prime the next batch.
    primed = std::min(Window, primed + length);
    std::copy(batch + length - primed, batch + length, buffer.data() + Window - primed);
    done += length;
  } while (done < total);
  member.Close();
}

void
GzipBytes(const std::vector<unsigned char> & header, const unsigned char * data, std::uint64_t size,
          const std::string & target, int level)
{
  GzipMember member(target, level);
  // The first piece holds the header and the data's first bytes, gathered; the rest is deflated where it lies,
  // primed by the 32 KiB before each batch (data, as the first piece is longer than that).
  const auto head = std::min<std::uint64_t>(size, PieceSize > header.size() ? PieceSize - header.size() : 0);
  std::vector<unsigned char> first(header);
  first.insert(first.end(), data, data + head);
  member.Write(first.data(), first.size(), 0, head == size);
  for (std::uint64_t done = head; done < size;)
  {
    const auto length = static_cast<std::size_t>(std::min<std::uint64_t>(size - done, member.BatchBytes()));
    member.Write(
      data + done, length, static_cast<std::size_t>(std::min<std::uint64_t>(Window, done)), done + length == size);
    done += length;
  }
  member.Close();
}

bool
NiftiHeaderForSize(const std::string & file, const std::vector<std::uint64_t> & size, unsigned int pixelBytes,
                   std::vector<unsigned char> & header)
{
  std::ifstream              in(file, std::ios::binary);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // NIfTI-1 in this machine's byte order, single file, of one pixel of `size`'s dimension.
  if (bytes.size() < 352 || NativeField<std::int32_t>(bytes.data(), 0) != 348 ||
      std::memcmp(bytes.data() + 344, "n+1", 4) != 0 || size.empty() || size.size() > 7 ||
      NativeField<std::int16_t>(bytes.data(), 40) != static_cast<std::int16_t>(size.size()) ||
      NativeField<std::int16_t>(bytes.data(), 72) != static_cast<std::int16_t>(8 * pixelBytes))
  {
    return false;
  }
  const float voxOffset = NativeField<float>(bytes.data(), 108);
  if (!(voxOffset >= 352) || static_cast<float>(static_cast<std::size_t>(voxOffset)) != voxOffset ||
      bytes.size() != static_cast<std::size_t>(voxOffset) + pixelBytes)
  {
    return false;
  }
  for (std::size_t d = 0; d < size.size(); ++d)
  {
    if (NativeField<std::int16_t>(bytes.data(), 42 + 2 * d) != 1 || size[d] < 1 || size[d] > 32767)
    {
      return false; // a side past NIfTI-1's: ITK writes NIfTI-2, which this does not make
    }
    const auto side = static_cast<std::int16_t>(size[d]);
    std::memcpy(bytes.data() + 42 + 2 * d, &side, sizeof(side));
  }
  header.assign(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(voxOffset));
  return true;
}

} // namespace cca_tool
