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
// Is the input whole? ITK's NIfTI, MetaImage and TIFF readers take a file cut short as if it were whole
// (the missing pixels read as 0, at most a line on stderr), so cca compares the bytes each header promises
// with the bytes its data stream yields before labeling anything:
//  - NIfTI-1/-2 and Analyze (.nii, .nii.gz, .hdr/.img[.gz]): vox_offset + dim[1..] x the datatype's size, the stream
//    decompressed where it is gzip (which also checks its CRC);
//  - MetaImage (.mha, .mhd + data file): DimSize x channels x element size from HeaderSize (or from the end),
//    the zlib stream inflated where CompressedData is set;
//  - TIFF (classic and BigTIFF): every strip and tile of every directory inside the file, the directory chain
//    readable to its end (CudaConnectedComponentAnalysisToolTiffCheck.cxx).
// NRRD (raw and gzip, attached or detached) and PNG fail ITK's read themselves (tests CCAToolSafety_*).
// The DICOM series checks (a damaged slice, slices missing from a regular spacing) are in
// CudaConnectedComponentAnalysisToolDicomCheck.cxx.
#include "CudaConnectedComponentAnalysisToolInputCheck.h"
#include "CudaConnectedComponentAnalysisToolInflate.h"

#include "itk_zlib.h"
#include "itksys/SystemTools.hxx"

#include <array>
#include <functional>
#include <initializer_list>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace cca_tool
{

std::string
Bytes(std::uint64_t n)
{
  return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

ToolError
Truncated(const std::string & file, std::uint64_t promised, std::uint64_t yielded, const std::string & what)
{
  return ToolError(ExitCannotRead,
                   file + " is truncated or damaged: its header promises " + Bytes(promised) + " " + what +
                     ", the file yields " + Bytes(yielded) +
                     " (the image is not labeled: the missing part would read as background)");
}

std::uint64_t
FileSize(const std::string & file)
{
  return static_cast<std::uint64_t>(itksys::SystemTools::FileLength(file));
}

namespace
{

bool
IsGzip(const std::string & file)
{
  unsigned char magic[2] = { 0, 0 };
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char *>(magic), 2);
  return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

/** The number of bytes a gzip file decompresses to (all members); throws when the stream is cut or damaged
 * (zlib's message: "unexpected end of file", "incorrect data check", ...), with the bytes read so far. */
std::uint64_t
GzipLength(const std::string & file, std::uint64_t promised, const std::string & what)
{
  gzFile gz = gzopen(file.c_str(), "rb");
  if (!gz)
  {
    throw ToolError(ExitCannotRead, "cannot open " + file);
  }
  gzbuffer(gz, 1u << 18);
  std::vector<char> buffer(1u << 20);
  std::uint64_t     total = 0;
  int               n = 0;
  while ((n = gzread(gz, buffer.data(), static_cast<unsigned>(buffer.size()))) > 0)
  {
    total += static_cast<std::uint64_t>(n);
  }
  // A stream cut short is Z_BUF_ERROR ("unexpected end of file"), which gzread does not report as -1.
  int               code = Z_OK;
  const std::string message = gzerror(gz, &code);
  gzclose(gz);
  if (n < 0 || code != Z_OK)
  {
    throw ToolError(ExitCannotRead,
                    file + " is truncated or damaged: its gzip stream breaks off (zlib: " + message +
                      ") after yielding " + Bytes(total) + " of the " + Bytes(promised) + " its header promises " +
                      what + " (the image is not labeled)");
  }
  return total;
}

// ---------------------------------------------------------------------------------------------- NIfTI

template <typename T>
T
FieldAt(const unsigned char * header, std::size_t offset, bool swap)
{
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, header + offset, sizeof(T));
  if (swap)
  {
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i)
    {
      std::swap(bytes[i], bytes[sizeof(T) - 1 - i]);
    }
  }
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

/** The other file of an Analyze / NIfTI pair: `file` ends with one of `from` (NAME.hdr[.gz] or NAME.img[.gz]),
 * and the existing NAME + one of `to` is returned (else "", or NAME + to[0] where `orFirst`). */
std::string
NiftiPairFile(const std::string & file, std::initializer_list<const char *> from,
              std::initializer_list<const char *> to, bool orFirst)
{
  for (const char * ext : from)
  {
    const std::size_t n = std::strlen(ext);
    if (file.size() > n && file.compare(file.size() - n, n, ext) == 0)
    {
      const std::string base = file.substr(0, file.size() - n);
      for (const char * other : to)
      {
        if (itksys::SystemTools::FileExists(base + other, true))
        {
          return base + other;
        }
      }
      return orFirst ? base + *to.begin() : std::string();
    }
  }
  return "";
}

/** The data file of an Analyze / NIfTI pair: NAME.hdr[.gz] -> NAME.img[.gz] (either compressed or not). */
std::string
NiftiPairDataFile(const std::string & header)
{
  return NiftiPairFile(
    header, { ".hdr.gz", ".HDR.gz", ".hdr", ".HDR" }, { ".img", ".img.gz", ".IMG", ".IMG.gz" }, true);
}

/** Runs `pass` now, or hands it to the caller through `deferred` (to run beside the image's read). */
void
RunOrDefer(std::function<void()> pass, std::function<void()> * deferred)
{
  if (deferred)
  {
    *deferred = std::move(pass);
  }
  else
  {
    pass();
  }
}

/** The bytes of one voxel of a NIfTI datatype, as niftilib sizes the data (it ignores bitpix); 0: unknown. */
std::uint64_t
NiftiDatatypeBytes(int datatype)
{
  switch (datatype)
  {
    case 2:   // uint8
    case 256: // int8
      return 1;
    case 4:   // int16
    case 512: // uint16
      return 2;
    case 8:    // int32
    case 16:   // float32
    case 768:  // uint32
    case 2304: // RGBA32
      return 4;
    case 128: // RGB24
      return 3;
    case 32:   // complex64
    case 64:   // float64
    case 1024: // int64
    case 1280: // uint64
      return 8;
    case 1536: // float128
    case 1792: // complex128
      return 16;
    case 2048: // complex256
      return 32;
    default:
      return 0;
  }
}

/** a * b, or false where it does not fit in 64 bits. */
bool
MultiplyChecked(std::uint64_t a, std::uint64_t b, std::uint64_t & product)
{
  if (a != 0 && b > UINT64_MAX / a)
  {
    return false;
  }
  product = a * b;
  return true;
}

/** NAME.img[.gz] given as the input: ITK reads the pair through NAME.hdr, and so is it checked ("" if none). */
std::string
NiftiPairHeaderOf(const std::string & file)
{
  return NiftiPairFile(file, { ".img.gz", ".IMG.gz", ".img", ".IMG" }, { ".hdr", ".hdr.gz", ".HDR", ".HDR.gz" }, false);
}

std::vector<std::string>
CheckNifti(const std::string & file, std::function<void()> * deferred, InflatingCheck * inflate)
{
  if (const std::string header = NiftiPairHeaderOf(file); !header.empty())
  {
    return CheckNifti(header, deferred, inflate);
  }
  // The header, decompressed where it is gzip (gzread reads plain files as they are).
  std::array<unsigned char, 540> header{};
  gzFile                         gz = gzopen(file.c_str(), "rb");
  const int                      got = gz ? gzread(gz, header.data(), static_cast<unsigned>(header.size())) : -1;
  if (gz)
  {
    gzclose(gz);
  }
  if (got < 348)
  {
    throw ToolError(ExitCannotRead,
                    file + " is truncated or damaged: its NIfTI header is incomplete (" + Bytes(got < 0 ? 0 : got) +
                      " of at least 348)");
  }
  const std::int32_t sizeofHdr = FieldAt<std::int32_t>(header.data(), 0, false);
  bool               swap = false;
  bool               nifti2 = false;
  if (sizeofHdr == 348 || sizeofHdr == 540)
  {
    nifti2 = sizeofHdr == 540;
  }
  else if (FieldAt<std::int32_t>(header.data(), 0, true) == 348 || FieldAt<std::int32_t>(header.data(), 0, true) == 540)
  {
    swap = true;
    nifti2 = FieldAt<std::int32_t>(header.data(), 0, true) == 540;
  }
  else
  {
    return { file }; // not a header this check knows: ITK's reader decides
  }
  if (nifti2 && got < 540)
  {
    throw ToolError(ExitCannotRead,
                    file + " is truncated or damaged: its NIfTI-2 header is incomplete (" + Bytes(got) + " of 540)");
  }
  // The voxel size from the datatype, as niftilib reads the data (bitpix can disagree with it).
  std::uint64_t voxels = 1;
  double        voxOffsetValue = 0;
  double        slope = 0; // scl_slope and scl_inter: ITK scales the values unless slope is 0 or 1 and inter 0
  double        intercept = 0;
  int           datatype = 0;
  bool          singleFile = false;
  bool          fits = true;
  if (nifti2)
  {
    const auto rank = FieldAt<std::int64_t>(header.data(), 16, swap);
    for (std::int64_t d = 1; d <= std::min<std::int64_t>(rank, 7); ++d)
    {
      const auto side = FieldAt<std::int64_t>(header.data(), 16 + 8 * d, swap);
      fits = fits && MultiplyChecked(voxels, static_cast<std::uint64_t>(std::max<std::int64_t>(1, side)), voxels);
    }
    datatype = FieldAt<std::int16_t>(header.data(), 12, swap);
    voxOffsetValue = static_cast<double>(FieldAt<std::int64_t>(header.data(), 168, swap));
    slope = FieldAt<double>(header.data(), 176, swap);
    intercept = FieldAt<double>(header.data(), 184, swap);
    singleFile = std::memcmp(header.data() + 4, "n+2", 4) == 0;
  }
  else
  {
    const auto rank = FieldAt<std::int16_t>(header.data(), 40, swap);
    for (int d = 1; d <= std::min<int>(rank, 7); ++d)
    {
      const auto side = FieldAt<std::int16_t>(header.data(), 40 + 2 * d, swap);
      fits = fits && MultiplyChecked(voxels, static_cast<std::uint64_t>(std::max<int>(1, side)), voxels);
    }
    datatype = FieldAt<std::int16_t>(header.data(), 70, swap);
    voxOffsetValue = FieldAt<float>(header.data(), 108, swap);
    slope = FieldAt<float>(header.data(), 112, swap);
    intercept = FieldAt<float>(header.data(), 116, swap);
    singleFile = std::memcmp(header.data() + 344, "n+1", 4) == 0;
  }
  const std::uint64_t voxelBytes = NiftiDatatypeBytes(datatype);
  if (voxelBytes == 0)
  {
    return { file }; // a datatype this check does not know (or bit-packed): ITK's reader decides
  }
  std::uint64_t dataBytes = 0;
  if (!fits || !MultiplyChecked(voxels, voxelBytes, dataBytes) || !(voxOffsetValue < 1e18) ||
      dataBytes > UINT64_MAX / 2)
  {
    throw ToolError(ExitCannotRead, file + " is damaged: its NIfTI header promises more bytes than any file holds");
  }
  const std::uint64_t voxOffset = voxOffsetValue > 0 ? static_cast<std::uint64_t>(voxOffsetValue) : 0;
  const std::string   dataFile = singleFile ? file : NiftiPairDataFile(file);
  if (!singleFile && !itksys::SystemTools::FileExists(dataFile, true))
  {
    throw ToolError(ExitCannotRead, "the data file " + dataFile + " of " + file + " does not exist");
  }
  const std::uint64_t promised = voxOffset + dataBytes;
  const std::string   what = "(vox_offset " + std::to_string(voxOffset) + " + " + Bytes(dataBytes) + " of voxels)";
  const auto          pass = [dataFile, promised, what]() {
    const std::uint64_t yielded = IsGzip(dataFile) ? GzipLength(dataFile, promised, what) : FileSize(dataFile);
    if (yielded < promised)
    {
      throw Truncated(dataFile, promised, yielded, what);
    }
  };
  if (IsGzip(dataFile) && singleFile && inflate && InflatedCopy::Available())
  {
    // One decompression that checks the stream and gives the read its copy, before the read.
    inflate->copy = [pass, dataFile, promised]() {
      auto copy = InflatedCopy::Make(dataFile, "input.nii", promised);
      if (!copy)
      {
        pass(); // no copy, or a bad stream: checked as below (which throws for a bad one), the file read as it is
      }
      return copy;
    };
    // Pixels as they lie in memory: the image's buffer filled with no ITK read between. ITK reads scaled values
    // (scl_slope other than 0 or 1, scl_inter other than 0) and swapped bytes as values of another kind.
    if (!swap && (slope == 0 || slope == 1) && intercept == 0 && voxOffsetValue >= (nifti2 ? 544 : 352))
    {
      inflate->into = [dataFile, voxOffset, dataBytes](void * buffer, std::uint64_t bytes) {
        return bytes == dataBytes ? InflatedCopy::InflateInto(dataFile, voxOffset, buffer, bytes) : 0u;
      };
    }
  }
  else if (IsGzip(dataFile))
  {
    RunOrDefer(pass, deferred); // a decompression of the whole stream
  }
  else
  {
    pass(); // the file's length
  }
  return singleFile ? std::vector<std::string>{ file } : std::vector<std::string>{ file, dataFile };
}

// ------------------------------------------------------------------------------------------ MetaImage

std::string
Trim(const std::string & s)
{
  const auto first = s.find_first_not_of(" \t\r\n");
  const auto last = s.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

/** Inflates the zlib (or gzip) streams of `in` from its position on, stream after stream, and returns the
 * bytes they yield; throws when a stream is cut or damaged. */
std::uint64_t
InflatedLength(std::istream & in, const std::string & file, std::uint64_t promised, const std::string & what)
{
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 32) != Z_OK) // 15 + 32: zlib or gzip header, detected
  {
    throw ToolError(ExitFailure, "zlib: inflateInit2 failed");
  }
  std::vector<unsigned char> input(1u << 18);
  std::vector<unsigned char> output(1u << 20);
  std::uint64_t              total = 0;
  int                        code = Z_OK;
  bool                       inStream = false;
  while (true)
  {
    if (stream.avail_in == 0)
    {
      in.read(reinterpret_cast<char *>(input.data()), static_cast<std::streamsize>(input.size()));
      stream.next_in = input.data();
      stream.avail_in = static_cast<uInt>(in.gcount());
      if (stream.avail_in == 0)
      {
        break; // end of file: inside a stream (cut) or between streams
      }
    }
    inStream = true;
    stream.next_out = output.data();
    stream.avail_out = static_cast<uInt>(output.size());
    code = inflate(&stream, Z_NO_FLUSH);
    total += output.size() - stream.avail_out;
    if (code == Z_STREAM_END)
    {
      inStream = false;
      if (total >= promised)
      {
        break;
      }
      inflateReset(&stream); // another stream follows
    }
    else if (code != Z_OK && code != Z_BUF_ERROR)
    {
      const std::string message = stream.msg ? stream.msg : "error " + std::to_string(code);
      inflateEnd(&stream);
      throw ToolError(ExitCannotRead,
                      file + " is truncated or damaged: its compressed data fails after " + Bytes(total) + " of the " +
                        Bytes(promised) + " " + what + " (zlib: " + message + "; the image is not labeled)");
    }
  }
  inflateEnd(&stream);
  if (inStream && total < promised)
  {
    throw Truncated(file, promised, total, what + " (the compressed stream is cut)");
  }
  if (inStream) // every pixel came out, but the file ends before the stream does (its checksum at least)
  {
    throw ToolError(ExitCannotRead,
                    file + " is truncated or damaged: its compressed data end before their " +
                      "stream does (its checksum is missing), after " + Bytes(total) + " " + what +
                      " (the image is not labeled)");
  }
  return total;
}

std::vector<std::string>
CheckMetaImage(const std::string & file, std::uint64_t promised, std::function<void()> * deferred)
{
  std::ifstream                      in(file, std::ios::binary);
  std::map<std::string, std::string> keys;
  std::string                        line;
  std::uint64_t                      dataStart = 0;
  while (std::getline(in, line))
  {
    const auto equals = line.find('=');
    if (equals == std::string::npos)
    {
      continue;
    }
    const std::string key = Trim(line.substr(0, equals));
    keys[key] = Trim(line.substr(equals + 1));
    if (key == "ElementDataFile")
    {
      dataStart = static_cast<std::uint64_t>(in.tellg());
      break;
    }
  }
  const std::string element = keys["ElementDataFile"];
  const std::string folder = itksys::SystemTools::GetFilenamePath(file);
  if (element.rfind("LIST", 0) == 0)
  {
    // the slices' files, one per line after the header: not checked here, but protected from the outputs
    std::vector<std::string> files{ file };
    while (std::getline(in, line))
    {
      const std::string name = Trim(line);
      if (!name.empty())
      {
        files.push_back(itksys::SystemTools::FileIsFullPath(name) || folder.empty() ? name : folder + "/" + name);
      }
    }
    return files;
  }
  if (element.empty() || element.find('%') != std::string::npos)
  {
    return { file }; // a file pattern: not checked here
  }
  const bool        local = element == "LOCAL" || element == "Local" || element == "local";
  const std::string dataFile = local ? file
                                     : (itksys::SystemTools::FileIsFullPath(element) ? element
                                        : itksys::SystemTools::GetFilenamePath(file).empty()
                                          ? element
                                          : itksys::SystemTools::GetFilenamePath(file) + "/" + element);
  if (!itksys::SystemTools::FileExists(dataFile, true))
  {
    throw ToolError(ExitCannotRead, "the data file " + dataFile + " of " + file + " does not exist");
  }
  // As MetaIO reads it: a value starting with T, t or 1 is true.
  const std::string compressedValue = keys["CompressedData"];
  const bool        compressed =
    !compressedValue.empty() && (compressedValue[0] == 'T' || compressedValue[0] == 't' || compressedValue[0] == '1');
  long long headerSize = 0;
  if (keys.count("HeaderSize"))
  {
    headerSize = std::atoll(keys["HeaderSize"].c_str());
  }
  const std::string what = "of pixel data";
  std::uint64_t     start = local ? dataStart : 0;
  if (headerSize > 0)
  {
    start += static_cast<std::uint64_t>(headerSize);
  }
  if (compressed)
  {
    RunOrDefer(
      [dataFile, start, promised, what]() { // a decompression of the whole stream
        std::ifstream data(dataFile, std::ios::binary);
        data.seekg(static_cast<std::streamoff>(start));
        const std::uint64_t yielded = InflatedLength(data, dataFile, promised, what);
        if (yielded < promised)
        {
          throw Truncated(dataFile, promised, yielded, what);
        }
      },
      deferred);
  }
  else
  {
    const std::uint64_t size = FileSize(dataFile);
    // HeaderSize = -1: the data are the file's last bytes, so only the file's length can be compared.
    const std::uint64_t yielded = headerSize == -1 ? size : (size > start ? size - start : 0);
    if (yielded < promised)
    {
      throw Truncated(dataFile, promised, yielded, what);
    }
  }
  return local ? std::vector<std::string>{ file } : std::vector<std::string>{ file, dataFile };
}

/** A NRRD header and its detached data files ("data file: NAME", or LIST and the names after the header's
 * blank line); patterns are left out. */
std::vector<std::string>
NrrdFiles(const std::string & file)
{
  std::vector<std::string> files{ file };
  std::ifstream            in(file, std::ios::binary);
  const std::string        folder = itksys::SystemTools::GetFilenamePath(file);
  const auto               resolve = [&folder](const std::string & name) {
    return itksys::SystemTools::FileIsFullPath(name) || folder.empty() ? name : folder + "/" + name;
  };
  bool        list = false;
  std::string line;
  while (!list && std::getline(in, line))
  {
    const std::string trimmed = Trim(line);
    if (trimmed.empty())
    {
      break; // end of the header (attached data follow)
    }
    for (const char * key : { "data file:", "datafile:" })
    {
      if (trimmed.rfind(key, 0) == 0)
      {
        const std::string value = Trim(trimmed.substr(std::strlen(key)));
        if (value.rfind("LIST", 0) == 0)
        {
          list = true; // the names follow, one per line, to the end of the header
        }
        else if (value.find('%') == std::string::npos && value.find(' ') == std::string::npos)
        {
          files.push_back(resolve(value));
        }
      }
    }
  }
  while (list && std::getline(in, line) && !Trim(line).empty())
  {
    files.push_back(resolve(Trim(line)));
  }
  return files;
}

} // namespace

std::vector<std::string>
CheckImageFileComplete(const std::string & file, const itk::ImageIOBase & io, std::function<void()> * deferred,
                       InflatingCheck * inflate)
{
  const std::string name = io.GetNameOfClass();
  if (name == "NiftiImageIO")
  {
    return CheckNifti(file, deferred, inflate);
  }
  if (name == "MetaImageIO")
  {
    return CheckMetaImage(file, static_cast<std::uint64_t>(io.GetImageSizeInBytes()), deferred);
  }
  if (name == "TIFFImageIO")
  {
    CheckTiff(file);
  }
  if (name == "NrrdImageIO")
  {
    // ITK's NRRD reader fails a short read itself; its detached data files are protected from the outputs.
    return NrrdFiles(file);
  }
  return { file };
}

} // namespace cca_tool
