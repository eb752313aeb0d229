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
// The command-line tool `cca` trusts no input and destroys no file. Arguments: tool case outputFolder.
// Every case writes its own small files, runs the tool (--backend cpu) and asserts the exit code, the message
// and what is (or is not) written:
//   truncated_FORMAT   the whole file is labeled (exit 0); cut short, it is refused (exit 2, the file and both
//                      sizes named) and nothing is written. FORMAT: nii, nii_gz, nii_gz_trailer, analyze, nrrd,
//                      nrrd_gz, mha, mha_z, mha_z_checksum, mhd, tif, tif_lzw, png, mask
//   dicom_cut_third, dicom_cut_pixels, dicom_gap, dicom_gap_allowed   a 6-slice DICOM series with one slice
//                      cut to a third, cut inside its pixel data, or missing (exit 2, the file named);
//                      --allow-irregular-slices labels the gap anyway (exit 0, a warning)
//   overwrite_output, overwrite_link, overwrite_mask_csv, overwrite_mhd_data, overwrite_allowed, same_outputs
//                      an output that is the input or the mask (path, hard link, detached data file) is
//                      refused (exit 1, the input unchanged) unless --overwrite-input; two outputs on one file
//   staged_failure     a write that fails leaves the file it would have replaced unchanged, and no partial
//                      file or staging folder; staged_success: the outputs in place, no staging folder left
//   empty, empty_threshold, empty_range, fail_if_empty   no foreground: 0 objects, exit 0, an all-background
//                      label image, a CSV of its header only, a JSON with no object; --fail-if-empty: exit 4
//   threads            the CPU engine starts no more threads than ITK's multithreader allows (1 under
//                      ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=1), and says how many
//   auto_one_image     --backend auto on one image takes the CPU engine below 6 Mi pixels per thread, and says
//                      why; from there on the library's rule decides (the GPU where one is usable)
#include "itkCCAToolTestUtilities.h"
#include "itkImageAlgorithm.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkMetaDataObject.h"
#include "itkMultiThreaderBase.h"
#include "itksys/Directory.hxx"
#include "itksys/SystemTools.hxx"

#include <nlohmann/json.hpp>

#include <functional>
#include <regex>

namespace
{
using namespace itk;
using ccatest::Expect;
using ccatest::g_Folder;
using ccatest::g_Tool;
using ccatest::Outcome;
using ccatest::Run;
using ccatest::Slurp;

using Short3 = Image<short, 3>;

using ccatest::Path;
using ccatest::Save;
using ccatest::ShortVolume;

/** Keeps the first `keep` bytes of `file` (negative: all but the last -keep). */
void
Cut(const std::string & file, long long keep)
{
  std::string bytes = Slurp(file);
  const auto  n =
    keep >= 0 ? static_cast<std::size_t>(keep) : bytes.size() - std::min(bytes.size(), static_cast<std::size_t>(-keep));
  bytes.resize(std::min(n, bytes.size()));
  Save(file, bytes);
}

bool
Exists(const std::string & name)
{
  return itksys::SystemTools::FileExists(Path(name));
}

/** No ".cca-partial-*" staging folder left in the case's folder. */
bool
NoStagingLeft()
{
  itksys::Directory d;
  d.Load(g_Folder);
  for (unsigned long i = 0; i < d.GetNumberOfFiles(); ++i)
  {
    if (std::string(d.GetFile(i)).rfind(".cca-partial-", 0) == 0)
    {
      std::cerr << "staging folder left behind: " << d.GetFile(i) << std::endl;
      return false;
    }
  }
  return true;
}

/** A truncation case: the file written, labeled whole, then `cutFile` cut and labeled again. */
struct TruncationCase
{
  std::string file;     ///< what the tool reads
  bool        compress; ///< the writer's compression
  std::string cutFile;  ///< the file cut (the data file of a detached header)
  long long   keep;     ///< bytes kept (negative: removed from the end)
  std::string message;  ///< in the error
};

bool
TruncatedCase(const std::string & format)
{
  const std::map<std::string, TruncationCase> cases{
    // the case: a plain .nii cut after 1,000 voxels (352 bytes of header, 2 bytes a voxel)
    { "nii", { "v.nii", false, "v.nii", 352 + 2000, "promises 69472 bytes" } },
    { "nii_gz", { "v.nii.gz", true, "v.nii.gz", -1, "is truncated or damaged" } }, // cut to half below
    { "nii_gz_trailer", { "v.nii.gz", true, "v.nii.gz", -1, "unexpected end of file" } },
    { "analyze", { "v.hdr", false, "v.img", -1, "v.img is truncated or damaged" } },
    { "nrrd", { "v.nrrd", false, "v.nrrd", -100, "cannot read" } },
    { "nrrd_gz", { "v.nrrd", true, "v.nrrd", -1, "cannot read" } }, // cut to half below
    { "mha", { "v.mha", false, "v.mha", -100, "promises 69120 bytes of pixel data" } },
    { "mha_z", { "v.mha", true, "v.mha", -1, "compressed stream is cut" } }, // cut to half below
    { "mha_z_checksum", { "v.mha", true, "v.mha", -1, "its checksum is missing" } },
    { "mhd", { "v.mhd", false, "v.raw", -1, "v.raw is truncated or damaged" } },
    { "tif", { "v.tif", false, "v.tif", -3000, "is truncated or damaged" } },
    { "tif_lzw", { "v.tif", true, "v.tif", -1, "is truncated or damaged" } }, // cut to half below
  };
  const bool half = format == "nii_gz" || format == "nrrd_gz" || format == "mha_z" || format == "tif_lzw";
  if (format == "png" || format == "mask")
  {
    // 2D: a PNG (libpng notices, ITK's reader fails); a mask cut short (the input whole)
    using Short2 = Image<unsigned char, 2>;
    const auto image = ccatest::MakeRandomImage<Short2>({ { 64, 48 } }, 0.4, 2, 3, [](std::mt19937 &) { return 255; });
    WriteImage(image, Path("in.png"));
    WriteImage(image, Path("mask.mha"));
    const std::string              out = Path("out.nrrd");
    const std::vector<std::string> args =
      format == "png"
        ? std::vector<std::string>{ Path("in.png"), "--backend", "cpu", "--output", out }
        : std::vector<std::string>{ Path("in.png"), "--mask", Path("mask.mha"), "--backend", "cpu", "--output", out };
    if (!Expect(Run(args, "whole"), 0, "") || !itksys::SystemTools::RemoveFile(out))
    {
      return false;
    }
    const std::string cut = Path(format == "png" ? "in.png" : "mask.mha");
    Cut(cut, static_cast<long long>(itksys::SystemTools::FileLength(cut) / 2));
    return Expect(Run(args, "cut"), 2, format == "png" ? "cannot read" : "mask.mha is truncated or damaged") &&
           !itksys::SystemTools::FileExists(out);
  }
  if (!cases.count(format))
  {
    return false;
  }
  const TruncationCase & c = cases.at(format);
  auto                   writer = ImageFileWriter<Short3>::New();
  writer->SetInput(ShortVolume());
  writer->SetFileName(Path(c.file));
  writer->SetUseCompression(c.compress);
  writer->Update();
  const std::string              out = Path("out.nrrd");
  const std::vector<std::string> args{ Path(c.file), "--backend", "cpu", "--output", out, "--csv", Path("out.csv") };
  // the whole file first: the check must not refuse it
  if (!Expect(Run(args, "whole"), 0, "") || !itksys::SystemTools::RemoveFile(out) ||
      !itksys::SystemTools::RemoveFile(Path("out.csv")))
  {
    return false;
  }
  const long long size = static_cast<long long>(itksys::SystemTools::FileLength(Path(c.cutFile)));
  Cut(Path(c.cutFile), half ? size / 2 : c.keep);
  const Outcome o = Run(args, "cut");
  return Expect(o, 2, c.message) && o.err.find(c.cutFile) != std::string::npos && !Exists("out.nrrd") &&
         !Exists("out.csv") && NoStagingLeft();
}

bool
DicomCase(const std::string & name)
{
  const std::string folder = Path("series");
  const bool        gap = name == "dicom_gap" || name == "dicom_gap_allowed";
  // 6 slices of short, 2 mm apart; slice 3 left out for the gap
  const auto               files = ccatest::WriteDicomSeries(ShortVolume({ { 32, 28, 6 } }), folder, gap ? 3 : -1);
  const std::string        out = Path("out.nrrd");
  std::vector<std::string> args{ folder, "--backend", "cpu", "--output", out };
  if (!gap)
  {
    if (!Expect(Run(args, "whole"), 0, "") || !itksys::SystemTools::RemoveFile(out))
    {
      return false;
    }
  }
  if (name == "dicom_cut_third") // the case: so short that GDCM leaves it out of the series
  {
    Cut(files[2], static_cast<long long>(itksys::SystemTools::FileLength(files[2]) / 3));
    return Expect(Run(args, "cut"),
                  2,
                  "slice2.dcm is a slice of the series (its SOP class and series UID) whose header cannot be read") &&
           !Exists("out.nrrd");
  }
  if (name == "dicom_cut_pixels") // cut inside the pixel data: GDCM reads it, the rest as 0
  {
    Cut(files[4], -100);
    return Expect(Run(args, "cut"), 2, "slice4.dcm is cut: its header promises 1792 bytes of pixel data") &&
           !Exists("out.nrrd");
  }
  if (name == "dicom_gap")
  {
    return Expect(Run(args, "gap"), 2, "lie 4 mm apart, where the series' spacing is 2 mm (1 slice missing)") &&
           !Exists("out.nrrd");
  }
  if (name == "dicom_gap_allowed")
  {
    args.push_back("--allow-irregular-slices");
    const Outcome o = Run(args, "gap");
    return Expect(o, 0, "warning: the DICOM series") && o.err.find("1 slice missing") != std::string::npos &&
           Exists("out.nrrd");
  }
  return false;
}

bool
OverwriteCase(const std::string & name)
{
  auto writer = ImageFileWriter<Short3>::New();
  writer->SetInput(ShortVolume());
  writer->SetFileName(Path(name == "overwrite_mhd_data" ? "in.mhd" : "in.nii.gz"));
  writer->SetUseCompression(true);
  writer->Update();
  const std::string input = writer->GetFileName();
  const std::string before = Slurp(input);
  const auto        unchanged = [&]() {
    const bool same = Slurp(input) == before;
    if (!same)
    {
      std::cerr << input << " was changed" << std::endl;
    }
    return same && NoStagingLeft();
  };
  if (name == "overwrite_output")
  {
    return Expect(Run({ input, "--backend", "cpu", "--output", input }, "o"), 1, "would overwrite") && unchanged();
  }
  if (name == "overwrite_link") // another path to the same inode
  {
    const std::string link = Path("link.nii.gz");
    itksys::SystemTools::RemoveFile(link);
    if (std::system(("ln " + ccatest::Quote(input) + " " + ccatest::Quote(link)).c_str()) != 0)
    {
      std::cerr << "cannot make a hard link" << std::endl;
      return false;
    }
    return Expect(Run({ input, "--backend", "cpu", "--output", link }, "o"), 1, "the input file " + input) &&
           unchanged();
  }
  if (name == "overwrite_mask_csv")
  {
    WriteImage(ShortVolume(), Path("mask.mha"));
    const std::string mask = Slurp(Path("mask.mha"));
    return Expect(Run({ input, "--backend", "cpu", "--mask", Path("mask.mha"), "--csv", Path("mask.mha") }, "o"),
                  1,
                  "--csv " + Path("mask.mha") + " would overwrite") &&
           Slurp(Path("mask.mha")) == mask && unchanged();
  }
  if (name == "overwrite_mhd_data")
  {
    // in.mhd + in.zraw, and other.mhd, a second header naming in.zraw: --output in.mhd (written compressed,
    // into in.zraw) would replace the data that the input other.mhd is read from
    itksys::SystemTools::CopyAFile(input, Path("other.mhd"));
    return Expect(Run({ Path("other.mhd"), "--backend", "cpu", "--output", input }, "o"),
                  1,
                  "(with its data file " + Path("in.zraw") + ") the input file " + Path("in.zraw")) &&
           unchanged();
  }
  if (name == "overwrite_allowed")
  {
    const Outcome o = Run({ input, "--backend", "cpu", "--overwrite-input", "--output", input }, "o");
    auto          io = ImageIOFactory::CreateImageIO(input.c_str(), IOFileModeEnum::ReadMode);
    io->SetFileName(input);
    io->ReadImageInformation();
    return Expect(o, 0, "") && Slurp(input) != before && io->GetComponentType() == IOComponentEnum::UCHAR &&
           NoStagingLeft(); // the labels (uint8: 135 objects) replaced the short input
  }
  if (name == "same_outputs")
  {
    return Expect(Run({ input, "--backend", "cpu", "--csv", Path("t.txt"), "--json", Path("t.txt") }, "o"),
                  1,
                  "--csv and --json would both write") &&
           !Exists("t.txt");
  }
  return false;
}

bool
StagedCase(const std::string & name)
{
  WriteImage(ShortVolume(), Path("in.nrrd"));
  if (name == "staged_failure")
  {
    // PNG holds no uint32 labels: ITK's writer fails after creating its file. The earlier out.png stays.
    auto slice =
      ccatest::MakeRandomImage<Image<unsigned char, 2>>({ { 16, 16 } }, 0.5, 1, 5, [](std::mt19937 &) { return 7; });
    WriteImage(slice, Path("in2.png"));
    WriteImage(slice, Path("out.png"));
    const std::string before = Slurp(Path("out.png"));
    return Expect(Run({ Path("in2.png"),
                        "--backend",
                        "cpu",
                        "--label-type",
                        "uint32",
                        "--output",
                        Path("out.png"),
                        "--csv",
                        Path("out.csv") },
                      "f"),
                  6,
                  "cannot write " + Path("out.png")) &&
           Slurp(Path("out.png")) == before && !Exists("out.csv") && NoStagingLeft();
  }
  if (name == "staged_success") // a detached format: header and data file both moved into place
  {
    return Expect(
             Run({ Path("in.nrrd"), "--backend", "cpu", "--output", Path("out.mhd"), "--json", Path("out.json") }, "s"),
             0,
             "") &&
           Exists("out.mhd") && (Exists("out.zraw") || Exists("out.raw")) && Exists("out.json") && NoStagingLeft() &&
           ReadImage<Image<unsigned short, 3>>(Path("out.mhd"))->GetLargestPossibleRegion().GetSize(0) == 40;
  }
  return false;
}

bool
EmptyCase(const std::string & name)
{
  auto image = Short3::New();
  image->SetRegions(Size<3>{ { 20, 18, 7 } });
  image->Allocate(true);
  // one pixel of 100 where --lower is above it
  image->SetPixel({ { 3, 4, 5 } }, name == "empty_threshold" || name == "empty_range" ? 100 : 0);
  WriteImage(image, Path("in.nrrd"));
  std::vector<std::string> args{ Path("in.nrrd"), "--backend",     "cpu",    "--output",      Path("out.nii.gz"),
                                 "--csv",         Path("out.csv"), "--json", Path("out.json") };
  if (name == "empty_threshold")
  {
    args.insert(args.end(), { "--lower", "101" });
  }
  else if (name == "empty_range") // no short value at all: known before reading
  {
    args.insert(args.end(), { "--lower", "40000" });
  }
  else if (name == "fail_if_empty")
  {
    args.insert(args.end(), { "--fail-if-empty" });
    return Expect(Run(args, "e"), 4, "no foreground pixel") && !Exists("out.nii.gz") && !Exists("out.csv") &&
           !Exists("out.json");
  }
  const Outcome o = Run(args, "e");
  if (!Expect(o, 0, "") || o.out.find("0 objects") == std::string::npos)
  {
    std::cerr << "expected exit 0 and \"0 objects\" on stdout" << std::endl;
    return false;
  }
  const auto labels = ReadImage<Image<unsigned char, 3>>(Path("out.nii.gz"));
  bool       ok = labels->GetLargestPossibleRegion().GetSize() == image->GetLargestPossibleRegion().GetSize();
  for (ImageRegionConstIterator<Image<unsigned char, 3>> it(labels, labels->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    ok = ok && it.Get() == 0;
  }
  const std::string csv = Slurp(Path("out.csv"));
  const auto        json = nlohmann::json::parse(Slurp(Path("out.json")));
  ok = ok && csv.rfind("Label,NumberOfPixels,", 0) == 0 && std::count(csv.begin(), csv.end(), '\n') == 1 &&
       json.at("objects").empty() && json.at("objectsKept") == 0 && json.at("objectsLabeled") == 0 &&
       json.at("size").at(2) == 7;
  if (!ok)
  {
    std::cerr << "the label image, CSV or JSON are not those of 0 objects" << std::endl;
  }
  return ok;
}

/** "CPU engine, N threads" in the summary: N no more than ITK's multithreader starts. */
bool
ThreadsCase()
{
  WriteImage(ShortVolume(), Path("in.nrrd"));
  const auto threads = [](const Outcome & o) {
    std::smatch match;
    return std::regex_search(o.out, match, std::regex("CPU engine, ([0-9]+) thread")) ? std::stoul(match[1]) : 0ul;
  };
  const Outcome all = Run({ Path("in.nrrd"), "--backend", "cpu" }, "all");
  const Outcome one = Run({ Path("in.nrrd"), "--backend", "cpu" }, "one", "ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=1 ");
  const unsigned long limit = MultiThreaderBase::GetGlobalDefaultNumberOfThreads();
  std::cout << "threads: " << threads(all) << " (ITK's limit here " << limit << "), with one: " << threads(one)
            << std::endl;
  return Expect(all, 0, "") && Expect(one, 0, "") && threads(all) >= 1 && threads(all) <= limit && threads(one) == 1;
}

/** --backend auto for one image: the CPU engine, and why, below 6 Mi pixels per CPU thread; not above. */
bool
AutoOneImageCase()
{
  WriteImage(ShortVolume(), Path("small.nrrd"));
  auto large = Image<unsigned char, 2>::New(); // 6,500,000 pixels: above 6 Mi on one thread, below on two
  large->SetRegions(Size<2>{ { 2600, 2500 } });
  large->Allocate(true);
  for (unsigned int y = 0; y < 2500; y += 50)
  {
    for (unsigned int x = 0; x < 2600; x += 50)
    {
      large->SetPixel({ { x, y } }, 1);
    }
  }
  WriteImage(large.GetPointer(), Path("large.nrrd"));
  const std::string note = "where the GPU's start-up costs more than it saves)";
  const Outcome     small = Run({ Path("small.nrrd") }, "small", "ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=2 ");
  const Outcome     twoThreads = Run({ Path("large.nrrd") }, "two", "ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=2 ");
  const Outcome     oneThread = Run({ Path("large.nrrd") }, "one", "ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=1 ");
  return Expect(small, 0, "") && Expect(twoThreads, 0, "") && Expect(oneThread, 0, "") &&
         small.out.find("CPU: CPU engine, 2 threads") != std::string::npos &&
         small.out.find("(auto: one image under 6 Mi pixels per CPU thread (2 here), " + note) != std::string::npos &&
         twoThreads.out.find(note) != std::string::npos && oneThread.out.find(note) == std::string::npos;
}

} // namespace

int
itkCudaConnectedComponentAnalysisToolSafetyTest(int argc, char * argv[])
{
  return ccatest::RunToolTest(argc, argv, "CCAToolSafety_", [](const std::string & testCase) {
    const auto starts = [&testCase](const char * prefix) { return testCase.rfind(prefix, 0) == 0; };
    if (starts("truncated_"))
    {
      return TruncatedCase(testCase.substr(10));
    }
    if (starts("dicom_"))
    {
      return DicomCase(testCase);
    }
    if (starts("overwrite_") || testCase == "same_outputs")
    {
      return OverwriteCase(testCase);
    }
    if (starts("staged_"))
    {
      return StagedCase(testCase);
    }
    if (starts("empty") || testCase == "fail_if_empty")
    {
      return EmptyCase(testCase);
    }
    if (testCase == "threads")
    {
      return ThreadsCase();
    }
    if (testCase == "auto_one_image")
    {
      return AutoOneImageCase();
    }
    std::cerr << "unknown case " << testCase << std::endl;
    return false;
  });
}
