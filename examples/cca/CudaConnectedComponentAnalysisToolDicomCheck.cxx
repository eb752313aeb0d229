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
// Is the DICOM series whole? Three faults that ITK reads without an error, each a volume that is not the
// scanned one:
//  - a slice cut so short that GDCM cannot parse its header: GDCMSeriesFileNames leaves the file out and
//    the series reader stacks the others, bridging the gap (the spacing averaged over it);
//  - a slice cut inside its pixel data: read, the missing pixels 0;
//  - slices missing from a regular spacing (a file deleted, a transfer cut short): bridged the same way.
// So cca refuses (exit 2, naming the file) a DICOM file of the directory that belongs to no series, a
// series file whose pixel data element is longer than what follows it in the file, and a series whose
// slice positions (Image Position along the slice normal) are not evenly spaced, unless
// --allow-irregular-slices is given.
#include "CudaConnectedComponentAnalysisTool.h"

#include "itkGDCMImageIO.h"
#include "itkMetaDataObject.h"
#include "itksys/Directory.hxx"
#include "itksys/SystemTools.hxx"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

namespace cca_tool
{
namespace
{

std::string
Tag(const itk::MetaDataDictionary & dictionary, const std::string & key)
{
  std::string value;
  itk::ExposeMetaData<std::string>(dictionary, key, value);
  const auto last = value.find_last_not_of(std::string(" \0", 2));
  return last == std::string::npos ? std::string() : value.substr(0, last + 1);
}

std::uint64_t
TagNumber(const itk::MetaDataDictionary & dictionary, const std::string & key, std::uint64_t otherwise)
{
  const std::string value = Tag(dictionary, key);
  return value.empty() ? otherwise : std::strtoull(value.c_str(), nullptr, 10);
}

bool
HasDicomPreamble(const std::string & file)
{
  char          magic[4] = {};
  std::ifstream in(file, std::ios::binary);
  in.seekg(128);
  in.read(magic, 4);
  return in.gcount() == 4 && std::string(magic, 4) == "DICM";
}

std::uint64_t
Read(const unsigned char * p, int bytes, bool little)
{
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
  {
    v |= static_cast<std::uint64_t>(p[i]) << (8 * (little ? i : bytes - 1 - i));
  }
  return v;
}

/** Where the Pixel Data element (7FE0,0010) of `bytes` ends, or 0 when it is not found with the length
 * `expected` (or expected + 1, padded to even) or an undefined length (encapsulated frames, walked item by
 * item to the sequence delimiter). Returns UINT64_MAX for encapsulated data whose items run past the end. */
std::uint64_t
PixelDataEnd(const std::vector<unsigned char> & bytes, std::uint64_t expected, bool little)
{
  const unsigned char tag[4] = { static_cast<unsigned char>(little ? 0xE0 : 0x7F),
                                 static_cast<unsigned char>(little ? 0x7F : 0xE0),
                                 static_cast<unsigned char>(little ? 0x10 : 0x00),
                                 static_cast<unsigned char>(little ? 0x00 : 0x10) };
  const std::uint64_t size = bytes.size();
  for (std::uint64_t at = 132; at + 8 <= size; ++at)
  {
    if (std::memcmp(bytes.data() + at, tag, 4) != 0)
    {
      continue;
    }
    // explicit VR (OB, OW, OF, OD, OL, OV, UN: 2 reserved bytes, then 4 of length) or implicit (4 of length)
    const bool explicitVR = at + 12 <= size && bytes[at + 4] >= 'A' && bytes[at + 4] <= 'Z' && bytes[at + 5] >= 'A' &&
                            bytes[at + 5] <= 'Z' && bytes[at + 6] == 0 && bytes[at + 7] == 0;
    const std::uint64_t header = explicitVR ? 12 : 8;
    const std::uint64_t length = Read(bytes.data() + at + header - 4, 4, little);
    if (length == 0xFFFFFFFFu)
    {
      // items (FFFE,E000) until the sequence delimiter (FFFE,E0DD)
      std::uint64_t item = at + header;
      while (item + 8 <= size)
      {
        const std::uint64_t group = Read(bytes.data() + item, 2, little);
        const std::uint64_t element = Read(bytes.data() + item + 2, 2, little);
        const std::uint64_t itemLength = Read(bytes.data() + item + 4, 4, little);
        if (group == 0xFFFE && element == 0xE0DD)
        {
          return item + 8;
        }
        if (group != 0xFFFE || element != 0xE000)
        {
          break;
        }
        item += 8 + itemLength;
      }
      return UINT64_MAX;
    }
    if (length == expected || length == expected + 1)
    {
      return at + header + length;
    }
  }
  return 0;
}

/** A damaged slice: exit 2, naming the file. */
ToolError
DamagedSlice(const std::string & series, const std::string & file, const std::string & why)
{
  return ToolError(ExitCannotRead,
                   "the DICOM series " + series + " has a damaged slice: " + file + " " + why +
                     " (the series is not labeled; remove the file to label the others)");
}

/** The slice's pixel data, when uncompressed or encapsulated, lies inside the file. */
void
CheckSlicePixelData(const std::string & series, const std::string & file, const itk::GDCMImageIO & io)
{
  const auto &        dictionary = io.GetMetaDataDictionary();
  const std::string   syntax = Tag(dictionary, "0002|0010");
  const std::uint64_t bitsAllocated = TagNumber(dictionary, "0028|0100", 0);
  if (syntax == "1.2.840.10008.1.2.1.99" || bitsAllocated == 0 || bitsAllocated % 8 != 0)
  {
    return; // a deflated data set or bit-packed pixels: GDCM's reader decides
  }
  std::uint64_t expected =
    TagNumber(dictionary, "0028|0002", 1) * TagNumber(dictionary, "0028|0008", 1) * (bitsAllocated / 8);
  for (unsigned int d = 0; d < std::min(2u, io.GetNumberOfDimensions()); ++d)
  {
    expected *= io.GetDimensions(d);
  }
  std::ifstream              in(file, std::ios::binary);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::uint64_t        end = PixelDataEnd(bytes, expected, syntax != "1.2.840.10008.1.2.2");
  if (end == UINT64_MAX)
  {
    throw DamagedSlice(series, file, "is cut inside its compressed frames (no end of the pixel data sequence)");
  }
  if (end > bytes.size() || (end == 0 && bytes.size() < expected))
  {
    std::ostringstream why;
    why << "is cut: its header promises " << expected << " bytes of pixel data, the file ends "
        << (end > bytes.size() ? end - bytes.size() : expected - bytes.size()) << " bytes short of them";
    throw DamagedSlice(series, file, why.str());
  }
}

} // namespace

void
CheckDicomSeries(const InputDescription & input, bool allowIrregularSlices)
{
  // 1. Each slice's pixel data whole; the series' UIDs (for 2.), each slice's position along the normal (for 3.).
  std::vector<double> position;
  std::string         seriesUID;
  std::string         sopClassUID;
  for (const auto & file : input.fileNames)
  {
    auto io = itk::GDCMImageIO::New();
    io->SetFileName(file);
    try
    {
      io->ReadImageInformation();
    }
    catch (const itk::ExceptionObject & e)
    {
      throw DamagedSlice(input.path, file, std::string("cannot be read: ") + e.GetDescription());
    }
    CheckSlicePixelData(input.path, file, *io);
    if (position.empty())
    {
      seriesUID = Tag(io->GetMetaDataDictionary(), "0020|000e");
      sopClassUID = Tag(io->GetMetaDataDictionary(), "0008|0016");
    }
    const auto   direction = io->GetDirection(2); // the slice normal
    const double origin[3] = { io->GetOrigin(0),
                               io->GetOrigin(1),
                               io->GetNumberOfDimensions() > 2 ? io->GetOrigin(2) : 0.0 };
    double       along = 0;
    for (unsigned int d = 0; d < std::min<std::size_t>(3, direction.size()); ++d)
    {
      along += direction[d] * origin[d];
    }
    position.push_back(along);
  }
  // 2. DICOM files of the directory that GDCM put in no series and that name this series' SOP class and UID
  //    (a slice whose header GDCM cannot read). Other DICOM files of no series (an RT structure set, a
  //    report, a presentation state: no image) are not slices, and are left alone.
  std::set<std::string> inSomeSeries;
  for (const auto & f : input.files)
  {
    inSomeSeries.insert(itksys::SystemTools::CollapseFullPath(f));
  }
  itksys::Directory directory;
  directory.Load(input.path);
  std::vector<std::string> files;
  for (unsigned long i = 0; i < directory.GetNumberOfFiles(); ++i)
  {
    files.push_back(directory.GetFile(i));
  }
  std::sort(files.begin(), files.end());
  for (const auto & name : files)
  {
    const std::string path = itksys::SystemTools::CollapseFullPath(input.path + "/" + name);
    if (seriesUID.empty() || sopClassUID.empty() || itksys::SystemTools::FileIsDirectory(path) ||
        inSomeSeries.count(path) || !HasDicomPreamble(path))
    {
      continue;
    }
    std::ifstream     in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find(seriesUID) != std::string::npos && bytes.find(sopClassUID) != std::string::npos)
    {
      throw DamagedSlice(input.path,
                         input.path + "/" + name,
                         "is a slice of the series (its SOP class and series UID) whose header cannot be read (cut "
                         "short or damaged), so GDCM left it out");
    }
  }

  // 3. The slices' positions along the normal, evenly spaced.
  if (position.size() < 3)
  {
    return; // one step: nothing to compare it with
  }
  std::vector<double> steps;
  std::vector<int>    signs; // +1 along the slice order's direction, -1 against it
  int                 balance = 0;
  for (std::size_t i = 1; i < position.size(); ++i)
  {
    steps.push_back(std::abs(position[i] - position[i - 1]));
    signs.push_back(position[i] >= position[i - 1] ? 1 : -1);
    balance += signs.back();
  }
  const int direction = balance >= 0 ? 1 : -1;
  // The smallest step between two slices is the series' spacing: a missing slice makes a step longer.
  double spacing = 0;
  for (const double step : steps)
  {
    spacing = step > 0 && (spacing == 0 || step < spacing) ? step : spacing;
  }
  for (std::size_t i = 0; i < steps.size(); ++i)
  {
    // 50 %: half of a missing slice (100 %) or of two slices at one position (-100 %), far above the rounding
    // of positions written as decimal text with few digits (0.625 mm written as 0.6 and 0.7: 17 %)
    if (steps[i] > 0 && std::abs(steps[i] - spacing) <= 0.5 * spacing && signs[i] == direction)
    {
      continue;
    }
    std::ostringstream message;
    message << "the DICOM series " << input.path << " is not evenly spaced: " << input.fileNames[i] << " and "
            << input.fileNames[i + 1] << " lie " << steps[i] << " mm apart, where the series' spacing is " << spacing
            << " mm";
    if (steps[i] > 0 && signs[i] != direction)
    {
      message << " (out of order: a duplicate or misplaced slice)";
    }
    else if (spacing > 0 && steps[i] > spacing)
    {
      const long missing = std::lround(steps[i] / spacing) - 1;
      if (missing >= 1)
      {
        message << " (" << missing << (missing == 1 ? " slice" : " slices") << " missing)";
      }
    }
    else if (steps[i] == 0)
    {
      message << " (two slices at one position)";
    }
    if (!allowIrregularSlices)
    {
      message << "; --allow-irregular-slices labels it anyway, with ITK's average spacing";
      throw ToolError(ExitCannotRead, message.str());
    }
    std::cerr << "cca: warning: " << message.str() << "; labeled with ITK's average spacing (--allow-irregular-slices)"
              << std::endl;
    return;
  }
}

} // namespace cca_tool
