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
// The tool's .nii.gz paths: a compressed NIfTI input decompressed in place (on every core) or into a copy that ITK
// reads, checked whole; a compressed NIfTI label image deflated from memory. Arguments: tool case outputFolder
// rapidgzip=0|1 libdeflate=0|1 (what the tool was built with: its target's properties).
//   nii_gz_members         a .nii.gz of two gzip members and trailing zeros (as gzip and zlib read it): labeled as
//                          the .nii
//   nii_gz_short           a whole gzip stream of a .nii cut short: refused (exit 2), both sizes named
//   nii_gz_in_place        a .nii.gz of more than 4 MiB (a noise volume, rotated and shifted): its pixels
//                          decompressed in place on 2 threads' setting (libdeflate) and on 8 (rapidgzip, where the
//                          build has it), labeled as its .nii (the label image, which carries the geometry, byte for
//                          byte; the table); the summary says which (arguments 4 and 5 say what the build has)
//   nii_gz_in_place_crc    the same with a wrong CRC: refused (exit 2) on both, in the tool's words alone
//   nii_gz_scaled          a float .nii.gz whose scl_inter is 100 (ITK scales it; unscaled, the range selects
//                          nothing): decompressed into a copy that ITK reads, labeled as its .nii
//   nii_gz_nan             a float .nii.gz with NaN and infinities, which niftilib reads as 0: in place, labeled as
//                          its .nii with the non-zero rule and with a range
//   nii_gz_output          label images written as .nii.gz (3D, a rotated volume of one slice, 2D; three label
//                          types) inflate to the bytes ITK writes as .nii
#include "itkCCAToolTestUtilities.h"

#include "itkImageRegionRange.h"
#include "itk_zlib.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

namespace
{
using namespace itk;
using ccatest::Expect;
using ccatest::Outcome;
using ccatest::Path;
using ccatest::Run;
using ccatest::Save;
using ccatest::ShortVolume;
using ccatest::Slurp;

using Short3 = Image<short, 3>;

/** `parts` of bytes, each a gzip member of its own, then `trailer` as it is. */
bool
SaveGzipMembers(const std::string & file, const std::vector<std::string> & parts, const std::string & trailer)
{
  for (std::size_t i = 0; i < parts.size(); ++i)
  {
    gzFile gz = gzopen(file.c_str(), i == 0 ? "wb" : "ab"); // "ab": a new member after the last
    if (!gz ||
        gzwrite(gz, parts[i].data(), static_cast<unsigned>(parts[i].size())) != static_cast<int>(parts[i].size()))
    {
      std::cerr << "cannot write " << file << std::endl;
      return false;
    }
    gzclose(gz);
  }
  std::ofstream out(file, std::ios::binary | std::ios::app);
  out << trailer;
  return static_cast<bool>(out);
}

bool g_Rapidgzip = false;  ///< the tool was built with rapidgzip (the fourth argument, rapidgzip=1)
bool g_Libdeflate = false; ///< the tool was built with libdeflate (the fifth argument, libdeflate=1)

/** What the summary says of a .nii.gz read on `threads` threads, in place or into a copy (nothing without
 * libdeflate, where zlib reads it). */
std::string
Decompressed(bool inPlace, unsigned int threads)
{
  if (!g_Libdeflate)
  {
    return "";
  }
  return std::string(inPlace ? "(decompressed in place on " : "(decompressed into a copy on ") +
         std::to_string(threads) + (threads == 1 ? " thread)" : " threads)");
}

/** A float volume of blocks of 1000 on 0 (ShortVolume's pattern), written as NAME.nii with its header's scl_inter
 * set to `intercept`, and as NAME.nii.gz; `edit` changes the pixels first. */
bool
WriteFloatNifti(const std::string & name, float intercept, const std::function<void(Image<float, 3> *)> & edit)
{
  using Float3 = Image<float, 3>;
  auto volume =
    ccatest::MakeRandomImage<Float3>({ { 40, 36, 24 } }, 0.4, 2, 11, [](std::mt19937 &) { return 1000.0f; });
  edit(volume.GetPointer());
  auto writer = ImageFileWriter<Float3>::New();
  writer->SetInput(volume);
  writer->SetFileName(Path(name + ".nii"));
  writer->Update();
  std::string bytes = Slurp(Path(name + ".nii"));
  std::memcpy(&bytes[116], &intercept, sizeof(intercept)); // scl_inter
  Save(Path(name + ".nii"), bytes);
  gzFile     gz = gzopen(Path(name + ".nii.gz").c_str(), "wb6");
  const bool written =
    gz && gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size());
  return gz && gzclose(gz) == Z_OK && written;
}

/** A rotated, shifted 3D noise volume of short values in [0, 1000): a stream that compresses to about 70 %. */
Short3::Pointer
NoiseVolume(const Short3::SizeType & size)
{
  auto image = Short3::New();
  image->SetRegions(size);
  image->Allocate();
  std::mt19937 random(5);
  for (auto & value : ImageRegionRange<Short3>(*image))
  {
    value = static_cast<short>(random() % 1000);
  }
  const double spacing[3] = { 0.7, 0.8, 1.9 };
  const double origin[3] = { -12.5, 5.25, 30.0 };
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  Short3::DirectionType direction;
  const double          c = std::cos(0.3);
  const double          n = std::sin(0.3);
  direction(0, 0) = c, direction(0, 1) = -n, direction(0, 2) = 0;
  direction(1, 0) = n, direction(1, 1) = c, direction(1, 2) = 0;
  direction(2, 0) = 0, direction(2, 1) = 0, direction(2, 2) = 1;
  image->SetDirection(direction);
  return image;
}

/** `volume` as NAME.nii and as NAME.nii.gz, one gzip member at zlib's level 6 (gzip's); false where it fails. */
bool
WriteNiftiPair(const Short3 * volume, const std::string & name)
{
  auto writer = ImageFileWriter<Short3>::New();
  writer->SetInput(volume);
  writer->SetFileName(Path(name + ".nii"));
  writer->Update();
  const std::string bytes = Slurp(Path(name + ".nii"));
  gzFile            gz = gzopen(Path(name + ".nii.gz").c_str(), "wb6");
  const bool        written =
    gz && gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size());
  return gz && gzclose(gz) == Z_OK && written;
}

/** The tool run on NAME.nii and on NAME.nii.gz (`environment` before the latter) gives the same label image, byte
 * for byte, and the same table; the .nii.gz run's summary says `inStdout`. */
bool
SameAsPlain(const std::string & name, const std::vector<std::string> & options, const std::string & environment,
            const std::string & inStdout)
{
  const auto run = [&](const std::string & input, const std::string & tag, const std::string & env) {
    std::vector<std::string> a{ Path(input), "--output", Path(tag + ".nii"), "--csv", Path(tag + ".csv") };
    a.insert(a.end(), options.begin(), options.end());
    return Run(a, tag, env);
  };
  if (!Expect(run(name + ".nii", "plain", ""), 0, ""))
  {
    return false;
  }
  const Outcome o = run(name + ".nii.gz", "gz", environment);
  if (!Expect(o, 0, ""))
  {
    return false;
  }
  if (o.out.find(inStdout) == std::string::npos)
  {
    std::cerr << "the summary lacks \"" << inStdout << "\"" << std::endl;
    return false;
  }
  const std::string labels = Slurp(Path("plain.nii"));
  if (labels.size() < 352 || labels != Slurp(Path("gz.nii")) || Slurp(Path("plain.csv")) != Slurp(Path("gz.csv")))
  {
    std::cerr << "the .nii.gz is labeled otherwise than its .nii" << std::endl;
    return false;
  }
  return true;
}

/** The label image `tag`.nii.gz the tool wrote inflates to the bytes of `tag`.nii, which ITK wrote. */
bool
InflatesToPlain(const std::string & tag)
{
  gzFile      gz = gzopen(Path(tag + ".nii.gz").c_str(), "rb");
  std::string inflated;
  char        buffer[1 << 16];
  int         got = 0;
  while (gz && (got = gzread(gz, buffer, sizeof(buffer))) > 0)
  {
    inflated.append(buffer, static_cast<std::size_t>(got));
  }
  if (gz)
  {
    gzclose(gz);
  }
  const std::string plain = Slurp(Path(tag + ".nii"));
  if (plain.size() < 348 || inflated != plain)
  {
    std::cerr << tag << ".nii.gz does not inflate to " << tag << ".nii (" << inflated.size() << " and " << plain.size()
              << " bytes)" << std::endl;
    return false;
  }
  return true;
}

bool
RunCase(const std::string & name)
{
  if (name == "nii_gz_members")
  {
    ccatest::WriteShortVolume("v.nii", false);
    const std::string bytes = Slurp(Path("v.nii"));
    const std::size_t half = bytes.size() / 2;
    if (!SaveGzipMembers(Path("v.nii.gz"), { bytes.substr(0, half), bytes.substr(half) }, std::string(7, '\0')) ||
        !Expect(Run(ccatest::OnCpu({ Path("v.nii"), "--csv", Path("plain.csv") }), "p"), 0, "") ||
        !Expect(Run(ccatest::OnCpu({ Path("v.nii.gz"), "--csv", Path("members.csv") }), "g"), 0, ""))
    {
      return false;
    }
    const std::string plain = Slurp(Path("plain.csv"));
    if (plain.empty() || plain != Slurp(Path("members.csv")))
    {
      std::cerr << "the tables of the .nii and of its two-member .nii.gz differ" << std::endl;
      return false;
    }
    return true;
  }
  if (name == "nii_gz_short")
  {
    ccatest::WriteShortVolume("v.nii", false);
    const std::string bytes = Slurp(Path("v.nii"));
    if (!SaveGzipMembers(Path("v.nii.gz"), { bytes.substr(0, 352 + 2000) }, ""))
    {
      return false;
    }
    const Outcome o = Run(ccatest::OnCpu({ Path("v.nii.gz") }), "s");
    return Expect(o, 2, "promises 69472 bytes") && o.err.find("yields 2352 bytes") != std::string::npos;
  }
  if (name == "nii_gz_in_place" || name == "nii_gz_in_place_crc")
  {
    if (!WriteNiftiPair(NoiseVolume({ { 203, 181, 97 } }), "v"))
    {
      return false;
    }
    const std::string compressed = Slurp(Path("v.nii.gz"));
    if (compressed.size() < (std::size_t{ 4 } << 20))
    {
      std::cerr << "v.nii.gz has " << compressed.size() << " bytes: too few for the parallel path" << std::endl;
      return false;
    }
    const std::string two = "ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=2 ";
    const std::string eight = "ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=8 ";
    if (name == "nii_gz_in_place")
    {
      const std::vector<std::string> options{ "--lower", "500", "--backend", "cpu" };
      return SameAsPlain("v", options, two, Decompressed(true, 1)) &&
             SameAsPlain("v", options, eight, Decompressed(true, g_Rapidgzip ? 8 : 1));
    }
    std::string damaged = compressed;
    damaged[damaged.size() - 6] ^= 0x5a; // the CRC-32's third byte
    Save(Path("v.nii.gz"), damaged);
    for (const auto & environment : { two, eight })
    {
      const Outcome o = Run(ccatest::OnCpu({ Path("v.nii.gz"), "--lower", "500" }), "crc", environment);
      if (!Expect(o, 2, "v.nii.gz is truncated or damaged") || o.err.find("incorrect data check") == std::string::npos)
      {
        return false;
      }
      std::istringstream lines(o.err);
      for (std::string line; std::getline(lines, line);)
      {
        if (!line.empty() && line.rfind("cca: ", 0) != 0)
        {
          std::cerr << "a line on stderr not the tool's: " << line << std::endl;
          return false;
        }
      }
    }
    return true;
  }
  if (name == "nii_gz_scaled")
  {
    // blocks 1100 on 100 as ITK scales them; --lower 150 keeps the blocks there, nothing in the unscaled pixels
    return WriteFloatNifti("v", 100, [](Image<float, 3> *) {}) &&
           SameAsPlain("v", { "--lower", "150", "--backend", "cpu" }, "", Decompressed(false, 1));
  }
  if (name == "nii_gz_nan")
  {
    const auto edit = [](Image<float, 3> * volume) {
      const float special[3] = { std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity() };
      float *     pixels = volume->GetBufferPointer();
      for (std::size_t i = 0; i < volume->GetLargestPossibleRegion().GetNumberOfPixels(); i += 7)
      {
        pixels[i] = special[(i / 7) % 3]; // in the blocks and between them
      }
    };
    const std::string two = "ITK_GLOBAL_DEFAULT_NUMBER_OF_THREADS=2 ";
    return WriteFloatNifti("v", 0, edit) && SameAsPlain("v", { "--backend", "cpu" }, two, Decompressed(true, 1)) &&
           SameAsPlain("v", { "--lower", "500", "--backend", "cpu" }, two, Decompressed(true, 1));
  }
  if (name == "nii_gz_output")
  {
    ccatest::WriteShortVolume("v.nii", false);
    auto plane = Image<short, 2>::New();
    plane->SetRegions(Size<2>{ { 301, 257 } });
    plane->Allocate(true);
    for (unsigned int y = 0; y < 257; y += 2)
    {
      for (unsigned int x = y % 4; x < 301; x += 3)
      {
        plane->SetPixel({ { x, y } }, 1);
      }
    }
    auto writer = ImageFileWriter<Image<short, 2>>::New();
    writer->SetInput(plane);
    writer->SetFileName(Path("plane.nii"));
    writer->Update();
    auto flat = NoiseVolume({ { 61, 47, 1 } });
    auto flatWriter = ImageFileWriter<Short3>::New();
    flatWriter->SetInput(flat);
    flatWriter->SetFileName(Path("flat.nii"));
    flatWriter->Update();
    const std::vector<std::vector<std::string>> runs{
      { Path("v.nii"), "--lower", "500" }, // the smallest type that holds the count
      { Path("v.nii"), "--lower", "500", "--label-type", "uint32" },
      { Path("flat.nii"), "--lower", "300", "--label-type", "uint8" }, // a volume of one slice, rotated
      { Path("plane.nii"), "--lower", "1" },                           // 2D, 12,900 objects
    };
    for (std::size_t i = 0; i < runs.size(); ++i)
    {
      const std::string tag = "r" + std::to_string(i);
      for (const std::string extension : { ".nii", ".nii.gz" })
      {
        std::vector<std::string> a = runs[i];
        a.insert(a.end(), { "--output", Path(tag + extension) });
        if (!Expect(Run(ccatest::OnCpu(a), tag + extension, ""), 0, ""))
        {
          return false;
        }
      }
      if (!InflatesToPlain(tag))
      {
        return false;
      }
    }
    return true;
  }
  std::cerr << "unknown case " << name << std::endl;
  return false;
}

} // namespace

int
itkCudaConnectedComponentAnalysisToolGzipTest(int argc, char * argv[])
{
  return ccatest::RunToolTest(argc, argv, "CCAToolGzip_", [argc, argv](const std::string & name) {
    g_Rapidgzip = argc > 4 && std::string(argv[4]) == "rapidgzip=1";
    g_Libdeflate = argc > 5 && std::string(argv[5]) == "libdeflate=1";
    return RunCase(name);
  });
}
