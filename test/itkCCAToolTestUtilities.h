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
// What the tests of the command-line tool `cca` share: running it as a child process, its stdout and stderr
// redirected to files of the case's output folder, and checking its exit code and message.
#ifndef itkCCAToolTestUtilities_h
#define itkCCAToolTestUtilities_h

#include "itkCCATestUtilities.h"
#include "itkImageAlgorithm.h"
#include "itkImageFileWriter.h"
#include "itkImageIOFactory.h"
#include "itkMetaDataObject.h"
#include "itksys/SystemTools.hxx"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#ifndef _WIN32
#  include <sys/wait.h>
#endif

namespace itk
{
namespace ccatest
{

inline std::string g_Tool;   ///< the tool's executable
inline std::string g_Folder; ///< the case's output folder

struct Outcome
{
  int         code{ -1 };
  std::string out;
  std::string err;
};

inline std::string
Quote(const std::string & s)
{
#ifdef _WIN32
  return "\"" + s + "\"";
#else
  std::string q = "'";
  for (char c : s)
  {
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return q + "'";
#endif
}

inline std::string
Slurp(const std::string & fileName)
{
  std::ifstream     in(fileName, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/** Runs the tool; stdout and stderr go to files, read back and echoed for the test log. `environment`
 * ("NAME=value ") is put before the command (POSIX shells). */
inline Outcome
Run(const std::vector<std::string> & args, const std::string & tag, const std::string & environment = "")
{
  std::string command = environment + Quote(g_Tool);
  for (const auto & a : args)
  {
    command += " " + Quote(a);
  }
  const std::string out = g_Folder + "/" + tag + ".stdout";
  const std::string err = g_Folder + "/" + tag + ".stderr";
  std::cout << "$ " << command << std::endl;
  const int status = std::system((command + " > " + Quote(out) + " 2> " + Quote(err)).c_str());
  Outcome   o;
#ifdef _WIN32
  o.code = status;
#else
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
#endif
  o.out = Slurp(out);
  o.err = Slurp(err);
  std::cout << o.out << o.err << "exit code " << o.code << std::endl;
  return o;
}

inline bool
Expect(const Outcome & o, int code, const std::string & inStderr)
{
  if (o.code != code)
  {
    std::cerr << "expected exit code " << code << ", got " << o.code << std::endl;
    return false;
  }
  if (o.err.find(inStderr) == std::string::npos)
  {
    std::cerr << "stderr lacks \"" << inStderr << "\"" << std::endl;
    return false;
  }
  return true;
}

/** A file of `g_Folder`. */
inline std::string
Path(const std::string & name)
{
  return g_Folder + "/" + name;
}

/** `bytes` written as the whole of `file`. */
inline void
Save(const std::string & file, const std::string & bytes)
{
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

/** A deterministic random volume of short values: blocks of 2 pixels, 40 % of them 1000, on 0, with an
 * anisotropic spacing. */
inline Image<short, 3>::Pointer
ShortVolume(const Size<3> & size = { { 40, 36, 24 } })
{
  auto         image = MakeRandomImage<Image<short, 3>>(size, 0.4, 2, 11, [](std::mt19937 &) { return 1000; });
  const double spacing[3] = { 0.5, 0.75, 2.0 };
  image->SetSpacing(spacing);
  return image;
}

/** The start of a tool test's entry (arguments: tool case outputFolder ...): g_Tool set, g_Folder made
 * anew as outputFolder/<prefix><case>. False (after the usage) with too few arguments. */
inline bool
StartToolTest(int argc, char * argv[], const std::string & prefix, const char * usage = "tool case outputFolder")
{
  if (argc < 4)
  {
    std::cerr << "Usage: " << argv[0] << " " << usage << std::endl;
    return false;
  }
  g_Tool = argv[1];
  g_Folder = std::string(argv[3]) + "/" + prefix + argv[2];
  itksys::SystemTools::RemoveADirectory(g_Folder);
  itksys::SystemTools::MakeDirectory(g_Folder);
  return true;
}

/** The tool's arguments `a` with --backend cpu after them. */
inline std::vector<std::string>
OnCpu(std::vector<std::string> a)
{
  a.insert(a.end(), { "--backend", "cpu" });
  return a;
}

/** ShortVolume() written as `name` in g_Folder (compressed where the format can, with `compress`). */
inline void
WriteShortVolume(const std::string & name, bool compress)
{
  auto writer = ImageFileWriter<Image<short, 3>>::New();
  writer->SetInput(ShortVolume());
  writer->SetFileName(Path(name));
  writer->SetUseCompression(compress);
  writer->Update();
}

/** A tool test's entry point: StartToolTest(), then `runCase` on the case, an exception said with the case's
 * name. */
inline int
RunToolTest(int argc, char * argv[], const std::string & prefix,
            const std::function<bool(const std::string &)> & runCase)
{
  if (!StartToolTest(argc, argv, prefix))
  {
    return EXIT_FAILURE;
  }
  try
  {
    return runCase(argv[2]) ? EXIT_SUCCESS : EXIT_FAILURE;
  }
  catch (const std::exception & e)
  {
    std::cerr << argv[2] << ": " << e.what() << std::endl;
    return EXIT_FAILURE;
  }
}

/** `volume` as a DICOM series in `folder` (made anew): one single-slice 3D file per z, slice<z>.dcm, all
 * through one ImageIO, which gives them the same Study and Series UIDs (and each its position from the
 * slice's origin); slice `skip` is left out. Returns the files written. */
inline std::vector<std::string>
WriteDicomSeries(const Image<short, 3> * volume, const std::string & folder, int skip = -1)
{
  using ShortImage = Image<short, 3>;
  itksys::SystemTools::RemoveADirectory(folder);
  itksys::SystemTools::MakeDirectory(folder);
  auto                     io = ImageIOFactory::CreateImageIO((folder + "/x.dcm").c_str(), IOFileModeEnum::WriteMode);
  std::vector<std::string> files;
  for (unsigned int z = 0; z < volume->GetLargestPossibleRegion().GetSize(2); ++z)
  {
    if (static_cast<int>(z) == skip)
    {
      continue;
    }
    ShortImage::RegionType region = volume->GetLargestPossibleRegion();
    region.SetIndex(2, z);
    region.SetSize(2, 1);
    auto slice = ShortImage::New();
    slice->SetRegions(ShortImage::RegionType(region.GetSize()));
    slice->Allocate();
    ShortImage::PointType origin;
    volume->TransformIndexToPhysicalPoint(region.GetIndex(), origin);
    slice->SetOrigin(origin);
    slice->SetSpacing(volume->GetSpacing());
    ImageAlgorithm::Copy(volume, slice.GetPointer(), region, slice->GetBufferedRegion());
    EncapsulateMetaData<std::string>(slice->GetMetaDataDictionary(), "0008|0060", "CT");
    EncapsulateMetaData<std::string>(slice->GetMetaDataDictionary(), "0028|0004", "MONOCHROME2");
    EncapsulateMetaData<std::string>(slice->GetMetaDataDictionary(), "0020|0013", std::to_string(z + 1));
    auto writer = ImageFileWriter<ShortImage>::New();
    writer->SetImageIO(io);
    writer->SetInput(slice);
    files.push_back(folder + "/slice" + std::to_string(z) + ".dcm");
    writer->SetFileName(files.back());
    writer->Update();
  }
  return files;
}

} // namespace ccatest
} // namespace itk

#endif
