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
// The command-line tool `cca` (examples/CudaConnectedComponentAnalysisTool*.cxx), run as a child process
// with --backend cpu, its stdout and stderr redirected to files of the output folder.
// Arguments: tool case outputFolder [case arguments]
//   nifti | nrrd | mha | dicom   a deterministic random 3D image written as float .nii.gz, unsigned short
//        .nrrd, short .mha (with a mask, in one-plane slabs) or a short DICOM series; the tool's label image is
//        compared with ConnectedComponentImageFilter (+ RelabelComponentImageFilter for --sort / --min-size /
//        --min-physical-size / --keep) on the same selection, its CSV and JSON with
//        LabelImageToShapeLabelMapFilter on ITK's labels (NumberOfPixels and bounding box exactly,
//        PhysicalSize and Centroid within 1e-9 relative, magnitudes below 1 absolutely)
//   batch | batchfile            --batch on a folder of cases, or on a 4D NIfTI and a 3D MetaImage of cases:
//                                equal to one call per case (labels byte for byte, CSV rows), refusals
//   multilabel                   --multilabel on a short class map (classes 1, 2, 300, -7 touching face to face,
//                                islands): the labels equal a loop of ConnectedComponentImageFilter over the classes
//                                numbered together in raster order, the tables' `class` column (after Label) the
//                                objects' input value; --per-class --keep 1 --class-values equals, per class,
//                                RelabelComponentImageFilter's largest component written as the class (short, as the
//                                input); without --multilabel no `class` column; the refusals (exit code, message,
//                                nothing written)
//   intensity                    --intensity: the CT slice thresholded (--lower 250, post-processed) with the CT slice
//                                itself as the feature image, and a 3D short volume with a float feature image; the
//                                tables' intensity columns against LabelImageToStatisticsLabelMapFilter on the tool's
//                                label image (min / max exactly, mean, sum, std, var and the weighted centroid within
//                                1e-9 of their scales, the min / max indices a pixel of the object with that value);
//                                without --intensity no such column; the refusals (another size, another origin,
//                                RGB, 3D for 2D, missing, --batch, --memory-budget, no table, an output onto it)
//   run CODE ARGS...             runs the tool with ARGS and expects the exit code CODE (for --compare)
//   help, progress               the usage text; progress bars on stderr
//   missing, notimage, rgb, 4d, empty, emptyrange, overflow, unknownoption, badvalue, badnumber,
//   badconnectivity, connectivity18in2d, periodicz2d, badperiodic, lowerupper, badoutput, masksize, maskspacing, writefail, nocuda
//                                one error each: exit code and message on stderr; no output file left behind
//                                (empty and emptyrange with --fail-if-empty; without it no foreground is a result:
//                                CCAToolSafety_empty*)
// CTSlice.mha is passed after the output folder for the cases that need a real image.
#include "itkCCAToolTestUtilities.h"
#include "itkCudaConnectedComponentAnalysisEngine.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkCastImageFilter.h"
#include "itkExtractImageFilter.h"
#include "itkImageFileReader.h"
#include "itkImageAlgorithm.h"
#include "itkImageFileWriter.h"
#include "itkLabelImageToShapeLabelMapFilter.h"
#include "itkLabelImageToStatisticsLabelMapFilter.h"
#include "itkMetaDataObject.h"
#include "itkRGBPixel.h"
#include "itkRelabelComponentImageFilter.h"
#include "itk_zlib.h"
#include "itksys/SystemTools.hxx"

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#ifndef _WIN32
#  include <sys/wait.h>
#endif

namespace
{
using namespace itk;
using ccatest::Expect;
using ccatest::g_Folder;
using ccatest::g_Tool;
using ccatest::Outcome;
using ccatest::Run;
using ccatest::Slurp;

using LabelImage3 = Image<std::uint32_t, 3>;
using Binary3 = Image<unsigned char, 3>;
using Real3 = Image<double, 3>;

std::string g_Backend = "cpu"; ///< the format cases' --backend: cuda for a case named CASE_cuda (gpu label)

bool
Close(double ours, double itk, const std::string & what)
{
  if (std::abs(ours - itk) <= 1e-9 * std::max({ std::abs(ours), std::abs(itk), 1.0 }))
  {
    return true;
  }
  std::cerr << std::setprecision(17) << what << ": " << ours << " vs ITK " << itk << std::endl;
  return false;
}

/** The value of a tool option in `args`: "" when absent, "on" for a flag. */
std::string
Option(const std::vector<std::string> & args, const std::string & name)
{
  const auto it = std::find(args.begin(), args.end(), name);
  return it == args.end() ? "" : it + 1 == args.end() || (it + 1)->compare(0, 2, "--") == 0 ? "on" : *(it + 1);
}

/** What the tool is asked for in `args`, done with ITK's filters: BinaryThresholdImageFilter,
 * ConnectedComponentImageFilter, RelabelComponentImageFilter (--sort, --min-size, --min-physical-size), and
 * for --keep N (given with --sort) the labels above N cleared. */
LabelImage3::Pointer
ReferenceLabels(const Real3 * input, const Binary3 * mask, const std::vector<std::string> & args)
{
  const std::string lower = Option(args, "--lower");
  const std::string upper = Option(args, "--upper");
  const bool        nonZero = lower.empty() && upper.empty();
  const double      inf = std::numeric_limits<double>::infinity();
  auto              threshold = BinaryThresholdImageFilter<Real3, Binary3>::New();
  threshold->SetInput(input);
  threshold->SetLowerThreshold(nonZero ? 0.0 : lower.empty() ? -inf : std::stod(lower));
  threshold->SetUpperThreshold(nonZero ? 0.0 : upper.empty() ? inf : std::stod(upper));
  threshold->SetInsideValue(nonZero ? 0 : 1);
  threshold->SetOutsideValue(nonZero ? 1 : 0);
  const std::string    connectivity = Option(args, "--connectivity");
  const std::string    periodic = Option(args, "--periodic");
  LabelImage3::Pointer labels;
  if (connectivity == "18" || !periodic.empty())
  {
    // Past ITK's filters: the module filter's own faces-and-edges labeling and periodic boundaries, which
    // CCAConnectivity checks against a flood fill; here what matters is that the tool asks for them.
    using OursType = CudaConnectedComponentAnalysisImageFilter<Binary3, LabelImage3, Binary3>;
    auto ours = OursType::New();
    ours->SetInput(threshold->GetOutput());
    ours->SetMaskImage(mask);
    ours->SetConnectivity(connectivity == "18" ? 18 : connectivity == "full" || connectivity == "26" ? 26 : 6);
    OursType::PeriodicType wraps;
    for (unsigned d = 0; d < 3; ++d)
    {
      wraps[d] = periodic == "all" || periodic.find("xyz"[d]) != std::string::npos;
    }
    ours->SetPeriodic(wraps);
    ours->SetBackend(CudaConnectedComponentAnalysisEnums::Backend::CPU);
    ours->Update();
    labels = ours->GetOutput();
  }
  else
  {
    auto cc = ConnectedComponentImageFilter<Binary3, LabelImage3, Binary3>::New();
    cc->SetInput(threshold->GetOutput());
    cc->SetMaskImage(mask);
    cc->SetFullyConnected(connectivity == "full" || connectivity == "26" || connectivity == "8");
    cc->Update();
    labels = cc->GetOutput();
  }
  const std::string    minSize = Option(args, "--min-size"), minPhysical = Option(args, "--min-physical-size");
  const std::string    keep = Option(args, "--keep");
  if (!Option(args, "--sort").empty() || !minSize.empty() || !minPhysical.empty())
  {
    // the smallest pixel count whose physical size (pixels × the spacing's product) reaches the limit
    const double  volume = input->GetSpacing()[0] * input->GetSpacing()[1] * input->GetSpacing()[2];
    std::uint64_t n = minSize.empty() ? 0 : std::stoull(minSize);
    while (!minPhysical.empty() && static_cast<double>(n) * volume < std::stod(minPhysical))
    {
      ++n;
    }
    auto relabel = RelabelComponentImageFilter<LabelImage3, LabelImage3>::New();
    relabel->SetInput(labels);
    relabel->SetMinimumObjectSize(n);
    relabel->SetSortByObjectSize(!Option(args, "--sort").empty());
    relabel->Update();
    labels = relabel->GetOutput();
  }
  for (ImageRegionIterator<LabelImage3> it(labels, labels->GetBufferedRegion()); !keep.empty() && !it.IsAtEnd(); ++it)
  {
    it.Set(it.Get() > std::stoul(keep) ? 0 : it.Get());
  }
  return labels;
}

/** CSV back as one map column -> value per row. */
std::vector<std::map<std::string, double>>
ReadCSV(const std::string & fileName, std::vector<std::string> & columns)
{
  std::ifstream                              in(fileName);
  std::string                                line, cell;
  std::vector<std::map<std::string, double>> rows;
  std::getline(in, line);
  for (std::stringstream header(line); std::getline(header, cell, ',');)
  {
    columns.push_back(cell);
  }
  while (std::getline(in, line))
  {
    std::map<std::string, double> row;
    std::stringstream             s(line);
    for (std::size_t c = 0; std::getline(s, cell, ','); ++c)
    {
      row[c < columns.size() ? columns[c] : "?"] = std::strtod(cell.c_str(), nullptr);
    }
    rows.push_back(row);
  }
  return rows;
}

/** Whether `file` is one gzip member that inflates, CRC and length checked, to a stream ending where the file ends:
 * what readers that take only the first member (some do) read whole. The tool deflates .nii.gz files in pieces. */
bool
OneGzipMember(const std::string & file)
{
  std::ifstream              in(file, std::ios::binary);
  std::vector<unsigned char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  z_stream                   stream{};
  if (data.empty() || inflateInit2(&stream, 15 + 16) != Z_OK) // 16: a gzip wrapper only
  {
    std::cerr << file << ": not a gzip file" << std::endl;
    return false;
  }
  std::vector<unsigned char> out(1u << 20);
  stream.next_in = data.data();
  stream.avail_in = static_cast<uInt>(data.size());
  int result = Z_OK;
  while (result == Z_OK)
  {
    stream.next_out = out.data();
    stream.avail_out = static_cast<uInt>(out.size());
    result = inflate(&stream, Z_NO_FLUSH);
  }
  const bool whole = result == Z_STREAM_END && stream.avail_in == 0;
  if (!whole)
  {
    std::cerr << file << ": " << (result == Z_STREAM_END ? "more than one gzip member" : "does not inflate")
              << " (zlib " << result << ", " << stream.avail_in << " bytes left, " << stream.total_out << " out)"
              << std::endl;
  }
  else
  {
    std::cout << file << ": one gzip member, " << stream.total_out << " bytes" << std::endl;
  }
  inflateEnd(&stream);
  return whole;
}

/** The tool's label image, CSV and JSON against ITK on the same input file (read back as double). */
bool
CheckRun(const std::string & input, const Real3 * image, const Binary3 * mask, const std::vector<std::string> & options,
         const std::string & tag, const std::string & outputExtension, IOComponentEnum expectedType)
{
  const std::string        labelsFile = g_Folder + "/" + tag + "." + outputExtension;
  const std::string        csv = g_Folder + "/" + tag + ".csv";
  const std::string        json = g_Folder + "/" + tag + ".json";
  std::vector<std::string> args{ input, "--backend", g_Backend, "--output", labelsFile, "--csv", csv, "--json", json };
  args.insert(args.end(), options.begin(), options.end());
  if (!Expect(Run(args, tag), 0, ""))
  {
    return false;
  }
  const auto expected = ReferenceLabels(image, mask, options);
  auto       shape = LabelImageToShapeLabelMapFilter<LabelImage3>::New();
  shape->SetInput(expected);
  shape->Update();
  const auto * map = shape->GetOutput();
  const auto   count = map->GetNumberOfLabelObjects();
  std::cout << tag << ": " << count << " objects" << std::endl;

  if (expectedType == IOComponentEnum::UNKNOWNCOMPONENTTYPE) // the smallest unsigned type for the count
  {
    expectedType = count <= 255     ? IOComponentEnum::UCHAR
                   : count <= 65535 ? IOComponentEnum::USHORT
                                    : IOComponentEnum::UINT;
  }
  auto io = ImageIOFactory::CreateImageIO(labelsFile.c_str(), IOFileModeEnum::ReadMode);
  io->SetFileName(labelsFile);
  io->ReadImageInformation();
  if (io->GetComponentType() != expectedType)
  {
    std::cerr << tag << ": label image of " << ImageIOBase::GetComponentTypeAsString(io->GetComponentType())
              << ", expected " << ImageIOBase::GetComponentTypeAsString(expectedType) << std::endl;
    return false;
  }
  if (!ccatest::SameImage<LabelImage3>(ReadImage<LabelImage3>(labelsFile), expected, tag + " labels") ||
      (outputExtension == "nii.gz" && !OneGzipMember(labelsFile)))
  {
    return false;
  }

  // one object of ITK's against the tool's values, by attribute name (vectors as name_i)
  const auto matches = [&](const std::function<double(const std::string &)> & get, std::size_t row) {
    const auto label = static_cast<LabelImage3::PixelType>(get("Label"));
    if (!map->HasLabel(label))
    {
      std::cerr << tag << " row " << row << ": label " << label << " is not ITK's" << std::endl;
      return false;
    }
    const auto *      o = map->GetLabelObject(label);
    const std::string what = tag + " label " + std::to_string(label) + " ";
    bool              ok = get("NumberOfPixels") == static_cast<double>(o->GetNumberOfPixels());
    ok = ok && Close(get("PhysicalSize"), o->GetPhysicalSize(), what + "PhysicalSize");
    for (unsigned int d = 0; d < 3; ++d)
    {
      const std::string i = "_" + std::to_string(d);
      ok = ok && Close(get("Centroid" + i), o->GetCentroid()[d], what + "Centroid" + i);
      ok = ok && get("BoundingBoxIndex" + i) == static_cast<double>(o->GetBoundingBox().GetIndex()[d]);
      ok = ok && get("BoundingBoxSize" + i) == static_cast<double>(o->GetBoundingBox().GetSize()[d]);
    }
    // regionprops' extent, not an ITK attribute: the pixels over the bounding box's, read back exactly
    const auto boxSize = o->GetBoundingBox().GetSize();
    ok = ok && get("Extent") == static_cast<double>(o->GetNumberOfPixels()) /
                                  (static_cast<double>(boxSize[0]) * static_cast<double>(boxSize[1]) *
                                   static_cast<double>(boxSize[2]));
    if (!ok)
    {
      std::cerr << what << "differs from ITK (pixels " << o->GetNumberOfPixels() << ")" << std::endl;
    }
    return ok;
  };

  std::vector<std::string> columns;
  const auto               rows = ReadCSV(csv, columns);
  nlohmann::json           j = nlohmann::json::parse(Slurp(json));
  const auto &             objects = j.at("objects");
  if (rows.size() != map->GetNumberOfLabelObjects() || objects.size() != rows.size() ||
      j.at("objectsKept").get<std::size_t>() != rows.size() || j.at("dimension").get<int>() != 3 ||
      j.at("size").at(0).get<std::size_t>() != image->GetLargestPossibleRegion().GetSize(0))
  {
    std::cerr << tag << ": " << rows.size() << " CSV rows, " << objects.size() << " JSON objects, ITK "
              << map->GetNumberOfLabelObjects() << "; JSON header " << j.at("objectsKept") << j.at("size") << std::endl;
    return false;
  }
  for (std::size_t r = 0; r < rows.size(); ++r)
  {
    const auto & row = rows[r];
    const auto & object = objects[r];
    const auto   fromCSV = [&row](const std::string & name) { return row.at(name); };
    const auto   fromJSON = [&object](const std::string & name) {
      const auto underscore = name.rfind('_');
      if (object.contains(name) || underscore == std::string::npos)
      {
        return object.at(name).get<double>();
      }
      return object.at(name.substr(0, underscore)).at(std::stoul(name.substr(underscore + 1))).get<double>();
    };
    if (!matches(fromCSV, r) || !matches(fromJSON, r))
    {
      return false;
    }
  }
  // the optional attributes come as columns only when asked for
  const auto has = [](const std::vector<std::string> & list, const std::string & item) {
    return std::find(list.begin(), list.end(), item) != list.end();
  };
  const bool feret = has(options, "--feret");
  const bool obb = has(options, "--obb");
  if (has(columns, "FeretDiameter") != feret || has(columns, "OrientedBoundingBoxSize_2") != obb ||
      objects.at(0).contains("FeretDiameter") != feret || objects.at(0).contains("OrientedBoundingBoxOrigin") != obb)
  {
    std::cerr << tag << ": FeretDiameter / OrientedBoundingBox columns not as asked" << std::endl;
    return false;
  }
  return true;
}

/** A deterministic random volume (40 x 36 x 24, anisotropic spacing, shifted origin): blocks of
 * `granularity` pixels, on with probability `density`, with values uniform in [lo, hi). */
template <typename TPixel>
typename Image<TPixel, 3>::Pointer
RandomVolume(std::uint32_t seed, double lo, double hi, double density, unsigned int granularity,
             const Size<3> & size = { { 40, 36, 24 } })
{
  std::uniform_real_distribution<double> value(lo, hi);
  auto                                   image = ccatest::MakeRandomImage<Image<TPixel, 3>>(
    size, density, granularity, seed, [&value](std::mt19937 & rng) { return static_cast<TPixel>(value(rng)); });
  const double spacing[3] = { 0.5, 0.75, 2.0 };
  const double origin[3] = { -12.5, 30.0, 7.75 };
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  return image;
}

constexpr auto Default = IOComponentEnum::UNKNOWNCOMPONENTTYPE; // the smallest type for the count

/** A volume written in one format, then labeled twice by the tool with different options. */
template <typename TPixel>
bool
FormatCase(const std::string & name, typename Image<TPixel, 3>::Pointer volume, const std::vector<std::string> & a,
           const std::string & extA, IOComponentEnum typeA, const std::vector<std::string> & b,
           const std::string & extB, IOComponentEnum typeB, const Binary3 * maskB = nullptr)
{
  const std::string input = g_Folder + "/" + name;
  WriteImage(volume, input, true);
  const auto        back = ReadImage<Real3>(input); // as the tool sees it (NIfTI stores the spacing in float)
  const std::string tag = name.substr(0, name.find('.'));
  return CheckRun(input, back, nullptr, a, tag + "_a", extA, typeA) &&
         CheckRun(input, back, maskB, b, tag + "_b", extB, typeB);
}

/** A short volume as a DICOM series: one single-slice 3D file per z, all through one ImageIO, which
 * gives them the same Study and Series UIDs (and each its position from the slice's origin). */
bool
DicomCase()
{
  using ShortImage = Image<short, 3>;
  const auto        volume = RandomVolume<short>(4, -500, 1500, 0.5, 2, { { 32, 28, 6 } });
  const std::string folder = g_Folder + "/dicom_series";
  ccatest::WriteDicomSeries(volume, folder);
  // the reference is the volume itself: DICOM keeps short values and these geometry numbers exactly
  auto reference = CastImageFilter<ShortImage, Real3>::New();
  reference->SetInput(volume);
  reference->Update();
  return CheckRun(folder, reference->GetOutput(), nullptr, { "--lower", "100" }, "dicom", "nrrd", Default);
}

/** An error case: the tool's arguments, its expected exit code and words of its message on stderr. */
struct ErrorCase
{
  int                      code;
  std::string              message;
  std::vector<std::string> args;
};

/** The error case `name`, with the input it needs written (and nothing else: the folder is checked after). */
bool
MakeErrorCase(const std::string & name, const std::string & ct, ErrorCase & c)
{
  const std::string f = g_Folder + "/";
  if (name == "notimage")
  {
    std::ofstream(f + "text.nii") << "not an image\n";
    c = { 2, "Could not create IO object", { f + "text.nii" } };
  }
  else if (name == "rgb")
  {
    auto image = Image<RGBPixel<unsigned char>, 2>::New();
    image->SetRegions(Size<2>{ { 8, 8 } });
    image->Allocate(true);
    WriteImage(image, f + "rgb.png");
    c = { 3, "scalar (grey-level) images only", { f + "rgb.png" } };
  }
  else if (name == "4d")
  {
    auto image = Image<short, 4>::New();
    image->SetRegions(Size<4>{ { 3, 3, 3, 3 } });
    image->Allocate(true);
    WriteImage(image, f + "4d.mha");
    c = { 3, "is a 4D image", { f + "4d.mha" } };
  }
  else if (name == "overflow") // more than 255 objects; the message names ITK's count
  {
    using Image2 = Image<unsigned char, 2>;
    const auto image = ccatest::MakeRandomImage<Image2>({ { 100, 100 } }, 0.4, 1, 7, [](std::mt19937 &) { return 1; });
    WriteImage(image, f + "many.png");
    auto cc = ConnectedComponentImageFilter<Image2, Image<std::uint32_t, 2>>::New();
    cc->SetInput(image);
    cc->Update();
    c = { 5,
          std::to_string(cc->GetObjectCount()) + " objects do not fit in the label type uint8",
          { f + "many.png", "--label-type", "uint8", "--output", f + "out.nrrd", "--csv", f + "out.csv" } };
  }
  else if (name == "masksize" || name == "maskspacing") // a mask off the input's grid: a bad input, said plainly
  {
    const auto slice = ReadImage<Image<short, 2>>(ct);
    auto       mask = Image<unsigned char, 2>::New();
    mask->CopyInformation(slice);
    mask->SetRegions(name == "masksize" ? Size<2>{ { 64, 64 } } : slice->GetLargestPossibleRegion().GetSize());
    if (name == "maskspacing")
    {
      Image<unsigned char, 2>::SpacingType spacing;
      spacing[0] = 0.5;
      spacing[1] = 2.0;
      mask->SetSpacing(spacing);
    }
    mask->Allocate(true);
    WriteImage(mask, f + "maskbad.mha");
    c = { 2,
          name == "masksize" ? "is not on the input's grid: its size [64, 64] against ["
                             : "is not on the input's grid: its spacing [0.5, 2] against [",
          { ct, "--lower", "250", "--mask", f + "maskbad.mha" } };
  }
  else
  {
    const std::map<std::string, ErrorCase> simple{
      { "missing", { 2, "does not exist", { f + "nothing.nii.gz" } } },
      // (without --fail-if-empty these are results: 0 objects, test CCAToolSafety_empty*)
      { "empty",
        { 4, "no foreground pixel", { ct, "--lower", "30000", "--fail-if-empty", "--output", f + "out.nrrd" } } },
      // no short value that high at all: known before reading
      { "emptyrange", { 4, "empty selection", { ct, "--lower", "40000", "--fail-if-empty" } } },
      { "unknownoption", { 1, "unknown option '--frobnicate'", { ct, "--frobnicate" } } },
      { "badvalue", { 1, "'abc' is not a non-negative integer", { ct, "--min-size", "abc" } } },
      { "badnumber", { 1, "is not a (finite) number", { ct, "--lower", "1e400" } } },
      { "badconnectivity", { 1, "is not one of face, full", { ct, "--connectivity", "5" } } },
      { "connectivity18in2d", { 6, "not a connectivity of a 2-D image", { ct, "--connectivity", "18" } } },
      { "periodicz2d", { 6, "a 2-D image has no axis z", { ct, "--periodic", "yz" } } },
      { "badperiodic", { 1, "is neither all nor axes among x, y, z", { ct, "--periodic", "w" } } },
      { "lowerupper", { 1, "is above --upper", { ct, "--lower", "5", "--upper", "2" } } },
      { "badoutput", { 1, "no image format", { ct, "--output", f + "labels.xyz" } } },
      // PNG has no 32-bit pixels: ITK's writer refuses, after creating the file
      { "writefail", { 6, "PNG supports unsigned char", { ct, "--label-type", "uint32", "--output", f + "out.png" } } },
    };
    if (!simple.count(name))
    {
      return false;
    }
    c = simple.at(name);
  }
  return true;
}

/** cca --batch: a folder of cases (four formats, one of two files, and a file that is not an image) labeled in one call
 * equals one call per case (label images byte for byte, CSV rows with the case's name first); a folder with a truncated
 * case, or a 2-D case among 3-D ones, is refused before any output, naming the case. */
bool
BatchCase()
{
  const std::string cases = g_Folder + "/cases";
  const std::string out = g_Folder + "/out";
  for (const std::string & f : { cases, out, g_Folder + "/bad", g_Folder + "/badout", g_Folder + "/mixed" })
  {
    itksys::SystemTools::RemoveADirectory(f);
    itksys::SystemTools::MakeDirectory(f);
  }
  // d.hdr is read with its d.img: one case, not two.
  const std::vector<std::string> names = { "a.nrrd", "b.mha", "c.nii.gz", "d.hdr" };
  for (std::size_t i = 0; i < names.size(); ++i)
  {
    WriteImage(RandomVolume<short>(static_cast<std::uint32_t>(40 + i), -500, 1500, 0.5, 1 + i), cases + "/" + names[i]);
  }
  ccatest::Save(cases + "/readme.txt", "not an image\n");
  const std::vector<std::string> options = { "--lower",    "100", "--connectivity", "26",     "--sort",
                                             "--min-size", "2",   "--backend",      g_Backend };
  std::vector<std::string>       args = {
          "--batch", cases, "--output-dir", out, "--csv", g_Folder + "/all.csv", "--json", g_Folder + "/all.json"
  };
  args.insert(args.end(), options.begin(), options.end());
  if (!Expect(Run(args, "batch"), 0, ""))
  {
    return false;
  }
  const std::vector<std::string> all = [&]() {
    std::vector<std::string> lines;
    std::ifstream            in(g_Folder + "/all.csv");
    for (std::string line; std::getline(in, line);)
    {
      lines.push_back(line);
    }
    return lines;
  }();
  std::size_t next = 1; // all.csv's row after the header
  for (std::size_t i = 0; i < names.size(); ++i)
  {
    const std::string        single = g_Folder + "/single" + std::to_string(i);
    std::vector<std::string> one = {
      cases + "/" + names[i], "--output", single + "-" + names[i], "--csv", single + ".csv"
    };
    one.insert(one.end(), options.begin(), options.end());
    if (!Expect(Run(one, "single" + std::to_string(i)), 0, ""))
    {
      return false;
    }
    auto batchLabels = ReadImage<Image<unsigned int, 3>>(out + "/" + names[i]);
    auto singleLabels = ReadImage<Image<unsigned int, 3>>(single + "-" + names[i]);
    if (!ccatest::SameImage(batchLabels.GetPointer(), singleLabels.GetPointer(), "--batch labels of " + names[i]))
    {
      return false;
    }
    std::ifstream in(single + ".csv");
    std::string   line;
    std::getline(in, line);
    if (all.empty() || all[0] != "image," + line)
    {
      std::cerr << "all.csv's header is not image, then the single call's" << std::endl;
      return false;
    }
    while (std::getline(in, line))
    {
      if (next >= all.size() || all[next] != names[i] + "," + line)
      {
        std::cerr << "all.csv row " << next << " is not " << names[i] << "'s row: " << line << std::endl;
        return false;
      }
      ++next;
    }
  }
  const std::string json = Slurp(g_Folder + "/all.json");
  if (next != all.size() || json.find("\"image\": \"d.hdr\"") == std::string::npos ||
      json.find("\"image\": \"d.img\"") != std::string::npos)
  {
    std::cerr << "all.csv has rows of no case, or all.json lacks the last case" << std::endl;
    return false;
  }
  // A truncated case: refused before any output (the good case before it is not labeled either).
  WriteImage(RandomVolume<short>(50, -500, 1500, 0.5, 1), g_Folder + "/bad/a.mha");
  const std::string whole = Slurp(g_Folder + "/cases/b.mha");
  ccatest::Save(g_Folder + "/bad/b.mha", whole.substr(0, whole.size() / 2));
  const Outcome bad = Run({ "--batch", g_Folder + "/bad", "--output-dir", g_Folder + "/badout" }, "bad");
  if (!Expect(bad, 2, "b.mha") || itksys::SystemTools::FileExists(g_Folder + "/badout/a.mha"))
  {
    std::cerr << "a batch with a truncated case was not refused before any work" << std::endl;
    return false;
  }
  // A 2-D case among 3-D ones: one table has one set of columns.
  WriteImage(RandomVolume<short>(51, -500, 1500, 0.5, 1), g_Folder + "/mixed/a.mha");
  WriteImage(
    ccatest::MakeRandomImage<Image<unsigned char, 2>>({ { 20, 20 } }, 0.5, 1, 3, [](std::mt19937 &) { return 1; }),
    g_Folder + "/mixed/b.png");
  if (!Expect(Run({ "--batch", g_Folder + "/mixed", "--csv", g_Folder + "/mixed.csv" }, "mixed"), 3, "b.png"))
  {
    return false;
  }
  // Options that do not go with a batch.
  return Expect(Run({ "--batch", cases, "--output", g_Folder + "/x.nrrd" }, "batchoutput"), 1, "--output-dir") &&
         Expect(Run({ cases + "/a.nrrd", "--output-dir", out }, "outputdir"), 1, "only with --batch") &&
         Expect(Run({ "--batch", cases, "--output-dir", cases }, "sameoutput"), 1, "is the input folder");
}

/** cca --batch FILE: the D-dimensional cases along the last axis of a (D+1)-dimensional file (3 volumes of a 4D
 * NIfTI, or 4 slices of a 3D MetaImage) labeled in one call equal one call per case on that case written as a file of
 * its own (label images byte for byte, CSV rows with the case's index first, JSON cases numbered); a file of the
 * cases' own dimension is refused as a file of cases. */
template <unsigned int D>
bool
BatchFileCase(const std::string & extension)
{
  using CaseImage = Image<short, D>;
  using FileImage = Image<short, D + 1>;
  const unsigned int              cases = D == 3 ? 3 : 4;
  const std::string               name = "stack" + std::to_string(D + 1) + "d";
  const std::string               path = g_Folder + "/" + name + extension;
  const std::string               out = g_Folder + "/" + name + "-out";
  typename CaseImage::SizeType    caseSize;
  typename FileImage::SizeType    fileSize;
  typename FileImage::SpacingType spacing;
  typename FileImage::PointType   origin;
  for (unsigned int d = 0; d <= D; ++d)
  {
    fileSize[d] =
      d < D ? (D == 3 ? std::vector<SizeValueType>{ 20, 18, 9 } : std::vector<SizeValueType>{ 37, 29 })[d] : cases;
    spacing[d] = 0.5 + 0.25 * d;
    origin[d] = -10.0 + 3.5 * d;
    if (d < D)
    {
      caseSize[d] = fileSize[d];
    }
  }
  auto file = FileImage::New();
  file->SetRegions(fileSize);
  file->SetSpacing(spacing);
  file->SetOrigin(origin);
  file->Allocate();
  const SizeValueType perCase = file->GetBufferedRegion().GetNumberOfPixels() / cases;
  for (unsigned int i = 0; i < cases; ++i)
  {
    std::uniform_real_distribution<double> value(-500, 1500);
    auto                                   one = ccatest::MakeRandomImage<CaseImage>(
      caseSize, 0.5, 1 + i, 70 + i, [&value](std::mt19937 & rng) { return static_cast<short>(value(rng)); });
    std::copy(one->GetBufferPointer(), one->GetBufferPointer() + perCase, file->GetBufferPointer() + i * perCase);
  }
  WriteImage(file, path, true);
  itksys::SystemTools::RemoveADirectory(out);
  itksys::SystemTools::MakeDirectory(out);
  const std::vector<std::string> options = { "--lower",    "100", "--connectivity", "full",   "--sort",
                                             "--min-size", "2",   "--backend",      g_Backend };
  std::vector<std::string>       args = { "--batch",      path,
                                          "--output-dir", out,
                                          "--csv",        g_Folder + "/" + name + ".csv",
                                          "--json",       g_Folder + "/" + name + ".json" };
  args.insert(args.end(), options.begin(), options.end());
  if (!Expect(Run(args, name), 0, ""))
  {
    return false;
  }
  std::vector<std::string> all;
  {
    std::ifstream in(g_Folder + "/" + name + ".csv");
    for (std::string line; std::getline(in, line);)
    {
      all.push_back(line);
    }
  }
  const auto  back = ReadImage<FileImage>(path); // as the tool sees it
  std::size_t next = 1;
  for (unsigned int i = 0; i < cases; ++i)
  {
    auto region = back->GetLargestPossibleRegion();
    region.SetIndex(D, i);
    region.SetSize(D, 0);
    auto extract = ExtractImageFilter<FileImage, CaseImage>::New();
    extract->SetInput(back);
    extract->SetExtractionRegion(region);
    extract->SetDirectionCollapseToSubmatrix();
    extract->Update();
    const std::string caseName = name + "_" + std::to_string(i) + extension;
    const std::string single = g_Folder + "/single-" + caseName;
    WriteImage(extract->GetOutput(), single, true);
    std::vector<std::string> one = { single, "--output", g_Folder + "/labels-" + caseName, "--csv", single + ".csv" };
    one.insert(one.end(), options.begin(), options.end());
    if (!Expect(Run(one, name + "-single" + std::to_string(i)), 0, ""))
    {
      return false;
    }
    using Labels = Image<unsigned int, D>;
    if (!ccatest::SameImage<Labels>(ReadImage<Labels>(out + "/" + caseName),
                                    ReadImage<Labels>(g_Folder + "/labels-" + caseName),
                                    "--batch " + name + extension + " labels of case " + std::to_string(i)))
    {
      return false;
    }
    std::ifstream in(single + ".csv");
    std::string   line;
    std::getline(in, line);
    if (all.empty() || all[0] != "image," + line)
    {
      std::cerr << name << ".csv's header is not image, then the single call's" << std::endl;
      return false;
    }
    while (std::getline(in, line))
    {
      if (next >= all.size() || all[next] != std::to_string(i) + "," + line)
      {
        std::cerr << name << ".csv row " << next << " is not case " << i << "'s row: " << line << std::endl;
        return false;
      }
      ++next;
    }
  }
  const auto json = nlohmann::json::parse(Slurp(g_Folder + "/" + name + ".json"));
  if (next != all.size() || json.at("cases").size() != cases || json["cases"].back().at("image") != cases - 1)
  {
    std::cerr << name << ".csv has rows of no case, or its JSON does not number the cases" << std::endl;
    return false;
  }
  if constexpr (D == 2)
  {
    // A 2D file is not a file of cases (its rows would be 1D cases).
    const std::string flat = g_Folder + "/single-" + name + "_0" + extension;
    return Expect(Run({ "--batch", flat }, name + "-flat"), 3, "a file of cases is 3D");
  }
  return true;
}

/** ITK's labeling of a class map: ConnectedComponentImageFilter on each class's pixels (image == c), then, with
 * `keepLargest`, RelabelComponentImageFilter sorted by size keeping its label 1 (the largest; ties: the first in raster
 * order). Per pixel its class and its label within the class, or (0, 0) for background. */
template <typename TClassImage>
std::vector<std::pair<std::int64_t, std::uint32_t>>
ComponentsOfClasses(const TClassImage * image, bool fullyConnected, bool keepLargest)
{
  const SizeValueType                       n = image->GetBufferedRegion().GetNumberOfPixels();
  std::set<typename TClassImage::PixelType> classes(image->GetBufferPointer(), image->GetBufferPointer() + n);
  classes.erase(0);
  std::vector<std::pair<std::int64_t, std::uint32_t>> out(n, { 0, 0 });
  for (const auto c : classes)
  {
    auto threshold = BinaryThresholdImageFilter<TClassImage, Binary3>::New();
    threshold->SetInput(image);
    threshold->SetLowerThreshold(c);
    threshold->SetUpperThreshold(c);
    auto cc = ConnectedComponentImageFilter<Binary3, LabelImage3>::New();
    cc->SetInput(threshold->GetOutput());
    cc->SetFullyConnected(fullyConnected);
    auto relabel = RelabelComponentImageFilter<LabelImage3, LabelImage3>::New();
    relabel->SetInput(cc->GetOutput());
    relabel->SetSortByObjectSize(true);
    const LabelImage3 * labels = keepLargest ? relabel->GetOutput() : cc->GetOutput();
    if (keepLargest)
    {
      relabel->Update();
    }
    else
    {
      cc->Update();
    }
    for (SizeValueType i = 0; i < n; ++i)
    {
      const std::uint32_t l = labels->GetBufferPointer()[i];
      if (l != 0 && (!keepLargest || l == 1))
      {
        out[i] = { static_cast<std::int64_t>(c), l };
      }
    }
  }
  return out;
}

/** cca --multilabel on a class map written as a short NRRD, against ITK (ComponentsOfClasses): the labels, the
 * `class` column and field right after Label, --per-class --keep 1 --class-values, and the refusals. */
bool
MultiLabelCase()
{
  using ClassImage = Image<short, 3>;
  // Blocks of 2 pixels, on with probability 0.55, each of one class: blocks of a class join into components across
  // blocks, blocks of different classes touch face to face (and must not merge), lone blocks are islands. 300 and
  // -7 do not survive a uint8 or unsigned read.
  const std::array<short, 4> classes{ { 1, 2, 300, -7 } };
  auto volume = ccatest::MakeRandomImage<ClassImage>({ { 30, 26, 14 } }, 0.55, 2, 91, [](std::mt19937 &) { return 1; });
  std::mt19937                                   rng(92);
  std::map<std::array<IndexValueType, 3>, short> classOfBlock;
  for (ImageRegionIteratorWithIndex<ClassImage> it(volume, volume->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
  {
    if (it.Get() != 0)
    {
      const auto                          index = it.GetIndex();
      const std::array<IndexValueType, 3> block{ { index[0] / 2, index[1] / 2, index[2] / 2 } };
      auto                                found = classOfBlock.find(block);
      if (found == classOfBlock.end())
      {
        found = classOfBlock.emplace(block, classes[rng() % classes.size()]).first;
      }
      it.Set(found->second);
    }
  }
  const double spacing[3] = { 0.5, 0.75, 2.0 };
  volume->SetSpacing(spacing);
  const std::string input = g_Folder + "/classes.nrrd";
  WriteImage(volume, input, true);
  const auto back = ReadImage<ClassImage>(input);
  const auto f = [](const std::string & name) { return g_Folder + "/" + name; };

  // 1. Every component, numbered together in raster order of its first pixel.
  if (!Expect(Run({ input,
                    "--multilabel",
                    "--connectivity",
                    "full",
                    "--backend",
                    g_Backend,
                    "--output",
                    f("labels.nrrd"),
                    "--csv",
                    f("labels.csv"),
                    "--json",
                    f("labels.json"),
                    "--contacts",
                    f("contacts.csv") },
                  "multilabel"),
              0,
              ""))
  {
    return false;
  }
  const auto components = ComponentsOfClasses(back.GetPointer(), true, false);
  auto       expected = LabelImage3::New();
  expected->CopyInformation(back);
  expected->SetRegions(back->GetLargestPossibleRegion());
  expected->Allocate(true);
  std::map<std::pair<std::int64_t, std::uint32_t>, std::uint32_t> together;
  std::vector<std::int64_t>                                       classOfLabel{ 0 }; // index: label
  std::vector<std::uint64_t>                                      pixelsOfLabel{ 0 };
  std::set<std::int64_t>                                          classesFound;
  for (std::size_t i = 0; i < components.size(); ++i)
  {
    if (components[i].second == 0)
    {
      continue;
    }
    const auto label = together.emplace(components[i], static_cast<std::uint32_t>(together.size() + 1)).first->second;
    if (label == classOfLabel.size())
    {
      classOfLabel.push_back(components[i].first);
      pixelsOfLabel.push_back(0);
    }
    ++pixelsOfLabel[label];
    expected->GetBufferPointer()[i] = label;
    classesFound.insert(components[i].first);
  }
  std::cout << "multilabel: " << together.size() << " components of " << classesFound.size() << " classes" << std::endl;
  if (classesFound.size() != classes.size() || together.size() < 2 * classes.size() ||
      !ccatest::SameImage<LabelImage3>(ReadImage<LabelImage3>(f("labels.nrrd")), expected, "multilabel labels"))
  {
    std::cerr << "multilabel: not every class with several components, or labels not ITK's" << std::endl;
    return false;
  }
  // --contacts: the components that touch (all 26 neighbors), counted here over every neighbor pair of the labels.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<double, double>> touching;
  const double faceArea[3] = { spacing[1] * spacing[2], spacing[0] * spacing[2], spacing[0] * spacing[1] };
  for (ImageRegionConstIteratorWithIndex<LabelImage3> it(expected, expected->GetLargestPossibleRegion()); !it.IsAtEnd();
       ++it)
  {
    for (int o = 14; o < 27 && it.Get() != 0; ++o) // the 13 neighbors after the pixel in raster order
    {
      const int                 d[3] = { o % 3 - 1, o / 3 % 3 - 1, o / 9 - 1 };
      LabelImage3::IndexType    q = it.GetIndex();
      for (unsigned a = 0; a < 3; ++a)
      {
        q[a] += d[a];
      }
      const std::uint32_t b = expected->GetLargestPossibleRegion().IsInside(q) ? expected->GetPixel(q) : 0;
      if (b == 0 || b == it.Get())
      {
        continue;
      }
      auto & t = touching[{ std::min(it.Get(), b), std::max(it.Get(), b) }];
      t.first += 1;
      const int nonZero = (d[0] != 0) + (d[1] != 0) + (d[2] != 0);
      t.second += nonZero == 1 ? faceArea[d[0] != 0 ? 0 : d[1] != 0 ? 1 : 2] : 0.0;
    }
  }
  std::vector<std::string> contactColumns;
  const auto               contactRows = ReadCSV(f("contacts.csv"), contactColumns);
  bool                     contactsOk = contactColumns == std::vector<std::string>{ "label_1", "label_2", "num_contacts",
                                                                                  "contact_area" } &&
                    contactRows.size() == touching.size() && !touching.empty();
  std::size_t r = 0;
  for (auto it = touching.begin(); contactsOk && it != touching.end(); ++it, ++r)
  {
    const auto & row = contactRows[r];
    contactsOk = row.at("label_1") == it->first.first && row.at("label_2") == it->first.second &&
                 row.at("num_contacts") == it->second.first && Close(row.at("contact_area"), it->second.second, "area");
  }
  if (!contactsOk)
  {
    std::cerr << "multilabel --contacts: " << contactRows.size() << " rows, " << touching.size()
              << " touching pairs counted (first difference at row " << r << ")" << std::endl;
    return false;
  }
  std::vector<std::string> columns;
  const auto               rows = ReadCSV(f("labels.csv"), columns);
  const auto               j = nlohmann::ordered_json::parse(Slurp(f("labels.json")));
  const auto &             objects = j.at("objects");
  if (columns.size() < 3 || columns[0] != "Label" || columns[1] != "class" || columns[2] != "NumberOfPixels" ||
      rows.size() != together.size() || objects.size() != rows.size() ||
      j.at("objectsKept").get<std::size_t>() != rows.size() || j.at("foreground").at("multiLabel") != true)
  {
    std::cerr << "multilabel: CSV columns " << (columns.size() > 1 ? columns[0] + "," + columns[1] : "") << ", "
              << rows.size() << " rows, " << objects.size() << " JSON objects, " << together.size() << " components"
              << std::endl;
    return false;
  }
  for (std::size_t r = 0; r < rows.size(); ++r)
  {
    const auto & o = objects[r];
    const auto   label = static_cast<std::size_t>(rows[r].at("Label"));
    auto         key = o.begin(); // the JSON's fields in the CSV's order: Label, class, NumberOfPixels, ...
    const bool   order = key.key() == "Label" && (++key).key() == "class" && (++key).key() == "NumberOfPixels";
    if (label != r + 1 || !order || rows[r].at("class") != static_cast<double>(classOfLabel[label]) ||
        rows[r].at("NumberOfPixels") != static_cast<double>(pixelsOfLabel[label]) || o.at("Label") != label ||
        o.at("class") != classOfLabel[label] || o.at("NumberOfPixels") != pixelsOfLabel[label])
    {
      std::cerr << "multilabel row " << r << ": label " << label << " class " << rows[r].at("class") << " / "
                << o.at("class") << " pixels " << rows[r].at("NumberOfPixels") << ", ITK: class "
                << classOfLabel[std::min(label, classOfLabel.size() - 1)] << std::endl;
      return false;
    }
  }

  // 2. The cleaned segmentation: each class's largest component, as the class, in the input's pixel type.
  if (!Expect(Run({ input,
                    "--multilabel",
                    "--per-class",
                    "--keep",
                    "1",
                    "--class-values",
                    "--backend",
                    g_Backend,
                    "--output",
                    f("cleaned.nrrd"),
                    "--csv",
                    f("cleaned.csv") },
                  "cleaned"),
              0,
              ""))
  {
    return false;
  }
  const auto largest = ComponentsOfClasses(back.GetPointer(), false, true);
  auto       cleaned = ClassImage::New();
  cleaned->CopyInformation(back);
  cleaned->SetRegions(back->GetLargestPossibleRegion());
  cleaned->Allocate(true);
  std::map<std::int64_t, std::uint64_t> sizeOfLargest;
  for (std::size_t i = 0; i < largest.size(); ++i)
  {
    cleaned->GetBufferPointer()[i] = static_cast<short>(largest[i].first);
    sizeOfLargest[largest[i].first] += largest[i].second != 0 ? 1 : 0;
  }
  sizeOfLargest.erase(0);
  auto io = ImageIOFactory::CreateImageIO(f("cleaned.nrrd").c_str(), IOFileModeEnum::ReadMode);
  io->SetFileName(f("cleaned.nrrd"));
  io->ReadImageInformation();
  columns.clear();
  const auto kept = ReadCSV(f("cleaned.csv"), columns);
  if (io->GetComponentType() != IOComponentEnum::SHORT ||
      !ccatest::SameImage<ClassImage>(ReadImage<ClassImage>(f("cleaned.nrrd")), cleaned, "--class-values") ||
      kept.size() != sizeOfLargest.size())
  {
    std::cerr << "--per-class --keep 1 --class-values: not the classes' largest components as short class values ("
              << kept.size() << " rows for " << sizeOfLargest.size() << " classes)" << std::endl;
    return false;
  }
  for (const auto & row : kept)
  {
    const auto c = static_cast<std::int64_t>(row.at("class"));
    if (!sizeOfLargest.count(c) || row.at("NumberOfPixels") != static_cast<double>(sizeOfLargest[c]))
    {
      std::cerr << "--per-class: class " << c << " kept " << row.at("NumberOfPixels") << " pixels" << std::endl;
      return false;
    }
    sizeOfLargest.erase(c); // each class once
  }

  // 3. Without --multilabel the tables have no class column, and the non-zero pixels are one foreground: classes
  // that touch make fewer, larger objects (so the class map above did test touching classes).
  if (!Expect(
        Run({ input, "--connectivity", "full", "--backend", g_Backend, "--csv", f("binary.csv") }, "binary"), 0, ""))
  {
    return false;
  }
  columns.clear();
  const auto binary = ReadCSV(f("binary.csv"), columns);
  if (columns.empty() || columns[0] != "Label" || std::find(columns.begin(), columns.end(), "class") != columns.end() ||
      binary.empty() || binary.size() >= together.size())
  {
    std::cerr << "a binary run's table has a class column, or as many objects (" << binary.size()
              << ") as the classes' components" << std::endl;
    return false;
  }

  // 4. The refusals, before anything is written.
  auto floating = CastImageFilter<ClassImage, Image<float, 3>>::New();
  floating->SetInput(back);
  floating->Update();
  WriteImage(floating->GetOutput(), f("classes-float.nii.gz"), true);
  const std::vector<ErrorCase> refusals{
    { 1, "--per-class needs --multilabel", { input, "--per-class", "--keep", "1" } },
    { 1, "--class-values needs --multilabel", { input, "--class-values" } },
    { 1, "takes no threshold", { input, "--multilabel", "--lower", "1" } },
    { 1, "takes no threshold", { input, "--multilabel", "--upper", "300" } },
    { 3, "need an integer pixel type", { f("classes-float.nii.gz"), "--multilabel" } },
    // -7 and 300 are no uint8
    { 5, "does not fit in the label type uint8", { input, "--multilabel", "--class-values", "--label-type", "uint8" } },
  };
  for (std::size_t i = 0; i < refusals.size(); ++i)
  {
    std::vector<std::string> args = refusals[i].args;
    args.insert(args.end(), { "--backend", g_Backend, "--output", f("refused.nrrd"), "--csv", f("refused.csv") });
    if (!Expect(Run(args, "refusal" + std::to_string(i)), refusals[i].code, refusals[i].message) ||
        itksys::SystemTools::FileExists(f("refused.nrrd")) || itksys::SystemTools::FileExists(f("refused.csv")))
    {
      std::cerr << "refusal " << i << " not refused as expected, or it wrote an output" << std::endl;
      return false;
    }
  }
  return true;
}

/** cca --intensity FEATURE on `input` with `options`: every object's intensity columns, in the CSV and the JSON,
 * against ITK's LabelImageToStatisticsLabelMapFilter on the tool's label image and the feature image read as double:
 * the minimum and maximum exactly; the mean within 1e-9 of max|v| (the object's largest magnitude), the sum of
 * N max|v|, the standard deviation of max|v|^2 / sigma, the variance of max|v|^2; the weighted centroid within 1e-9
 * of the image's coordinate scale (its corners' largest coordinate); the min / max indices a pixel of the object
 * holding that value (ITK and the tool may break ties differently). Rows in label order, as the shape rows. */
template <unsigned int D>
bool
CheckIntensityRun(const std::string & input, const std::string & feature, const std::vector<std::string> & options,
                  const std::string & tag)
{
  using Labels = Image<std::uint32_t, D>;
  using Real = Image<double, D>;
  const std::string        labelsFile = g_Folder + "/" + tag + ".nrrd";
  const std::string        csv = g_Folder + "/" + tag + ".csv";
  const std::string        json = g_Folder + "/" + tag + ".json";
  std::vector<std::string> args{ input,    "--intensity", feature,    "--backend", g_Backend, "--label-type",
                                 "uint32", "--output",    labelsFile, "--csv",     csv,       "--json",
                                 json };
  args.insert(args.end(), options.begin(), options.end());
  const Outcome o = Run(args, tag);
  if (!Expect(o, 0, "") || o.out.find("intensity") == std::string::npos)
  {
    std::cerr << tag << ": failed, or no intensity line in the summary" << std::endl;
    return false;
  }
  const auto labels = ReadImage<Labels>(labelsFile);
  const auto values = ReadImage<Real>(feature);
  auto       statistics = LabelImageToStatisticsLabelMapFilter<Labels, Real>::New();
  statistics->SetInput1(labels);
  statistics->SetFeatureImage(values);
  statistics->SetComputeHistogram(false);
  statistics->Update();
  const auto * map = statistics->GetOutput();

  // the coordinate scale: the largest |coordinate| of the image's corners
  double     scale = 1.0;
  const auto size = labels->GetLargestPossibleRegion().GetSize();
  for (unsigned int corner = 0; corner < (1u << D); ++corner)
  {
    typename Labels::IndexType index;
    for (unsigned int d = 0; d < D; ++d)
    {
      index[d] = (corner >> d) & 1u ? static_cast<IndexValueType>(size[d]) - 1 : 0;
    }
    typename Labels::PointType point;
    labels->TransformIndexToPhysicalPoint(index, point);
    for (unsigned int d = 0; d < D; ++d)
    {
      scale = std::max(scale, std::abs(point[d]));
    }
  }

  std::vector<std::string> columns;
  const auto               rows = ReadCSV(csv, columns);
  const auto               j = nlohmann::json::parse(Slurp(json));
  const auto &             objects = j.at("objects");
  std::vector<std::string> expectedColumns{
    "intensity_min", "intensity_max", "intensity_sum",      "intensity_mean",
    "intensity_stddev", "intensity_variance", "intensity_skewness", "intensity_kurtosis"
  };
  for (const char * vector : { "centroid_weighted_", "intensity_min_index_", "intensity_max_index_" })
  {
    for (unsigned int d = 0; d < D; ++d)
    {
      expectedColumns.push_back(vector + std::to_string(d));
    }
  }
  for (const auto & name : expectedColumns)
  {
    if (std::find(columns.begin(), columns.end(), name) == columns.end())
    {
      std::cerr << tag << ": no CSV column " << name << std::endl;
      return false;
    }
  }
  if (rows.empty() || rows.size() != map->GetNumberOfLabelObjects() || objects.size() != rows.size() ||
      j.at("intensity") != feature)
  {
    std::cerr << tag << ": " << rows.size() << " CSV rows, " << objects.size() << " JSON objects, ITK "
              << map->GetNumberOfLabelObjects() << " objects; JSON intensity " << j.value("intensity", "none")
              << std::endl;
    return false;
  }
  std::cout << tag << ": " << rows.size() << " objects, coordinate scale " << scale << std::endl;

  const auto matches = [&](const std::function<double(const std::string &)> & get, std::size_t row) {
    const auto label = static_cast<typename Labels::PixelType>(get("Label"));
    if (!map->HasLabel(label) || map->GetNthLabelObject(row)->GetLabel() != label)
    {
      std::cerr << tag << " row " << row << ": label " << label << " is not ITK's, or not in label order (ITK's "
                << map->GetNthLabelObject(row)->GetLabel() << ")" << std::endl;
      return false;
    }
    const auto *      object = map->GetLabelObject(label);
    const std::string what = tag + " label " + std::to_string(label) + " ";
    const double      n = static_cast<double>(object->GetNumberOfPixels());
    const double      maxAbs = std::max(std::abs(object->GetMinimum()), std::abs(object->GetMaximum()));
    const double      sigma = object->GetStandardDeviation();
    const auto        near = [&](const std::string & name, double itk, double tolerance) {
      const double ours = get(name);
      if (std::abs(ours - itk) <= tolerance || (std::isnan(ours) && std::isnan(itk)))
      {
        return true;
      }
      std::cerr << std::setprecision(17) << what << name << ": " << ours << " vs ITK " << itk << " (tolerance "
                << tolerance << ")" << std::endl;
      return false;
    };
    bool ok = get("NumberOfPixels") == n;
    ok = near("intensity_min", object->GetMinimum(), 0.0) && ok;
    ok = near("intensity_max", object->GetMaximum(), 0.0) && ok;
    ok = near("intensity_mean", object->GetMean(), 1e-9 * maxAbs) && ok;
    ok = near("intensity_sum", object->GetSum(), 1e-9 * n * maxAbs) && ok;
    ok = near("intensity_stddev", sigma, sigma > 0 ? 1e-9 * maxAbs * maxAbs / sigma : 1e-9 * maxAbs) && ok;
    ok = near("intensity_variance", object->GetVariance(), 1e-9 * maxAbs * maxAbs) && ok;
    get("intensity_skewness"); // present (ITK's own raw-moment formula is no reference to 1e-9)
    get("intensity_kurtosis");
    typename Labels::IndexType minimum, maximum;
    for (unsigned int d = 0; d < D; ++d)
    {
      const std::string i = "_" + std::to_string(d);
      ok = near("centroid_weighted" + i, object->GetCenterOfGravity()[d], 1e-9 * scale) && ok;
      minimum[d] = static_cast<IndexValueType>(get("intensity_min_index" + i));
      maximum[d] = static_cast<IndexValueType>(get("intensity_max_index" + i));
    }
    const auto & region = labels->GetLargestPossibleRegion();
    if (!region.IsInside(minimum) || !region.IsInside(maximum) || labels->GetPixel(minimum) != label ||
        labels->GetPixel(maximum) != label || values->GetPixel(minimum) != object->GetMinimum() ||
        values->GetPixel(maximum) != object->GetMaximum())
    {
      std::cerr << what << "intensity_min_index " << minimum << " / intensity_max_index " << maximum
                << ": not a pixel of the object with its minimum / maximum" << std::endl;
      ok = false;
    }
    return ok;
  };
  for (std::size_t r = 0; r < rows.size(); ++r)
  {
    const auto & row = rows[r];
    const auto & object = objects[r];
    const auto   fromCSV = [&row](const std::string & name) { return row.at(name); };
    const auto   fromJSON = [&object](const std::string & name) {
      const auto   underscore = name.rfind('_');
      const auto & value = object.contains(name) || underscore == std::string::npos
                               ? object.at(name)
                               : object.at(name.substr(0, underscore)).at(std::stoul(name.substr(underscore + 1)));
      return value.is_null() ? std::numeric_limits<double>::quiet_NaN() : value.get<double>(); // NaN: null
    };
    if (!matches(fromCSV, r) || !matches(fromJSON, r))
    {
      return false;
    }
  }
  return true;
}

/** cca --intensity: the CT slice thresholded with itself as the feature image (2D, short, post-processed), a 3D short
 * volume with a float feature image of its geometry; no intensity column without --intensity; the refusals. */
bool
IntensityCase(const std::string & ct)
{
  using Short2 = Image<short, 2>;
  const auto f = [](const std::string & name) { return g_Folder + "/" + name; };
  if (!CheckIntensityRun<2>(ct, ct, { "--lower", "250", "--connectivity", "full", "--min-size", "3", "--sort" }, "ct"))
  {
    return false;
  }
  const auto volume = RandomVolume<short>(5, -500, 1500, 0.25, 2);
  auto       weights = ccatest::MakeRandomImage<Image<float, 3>>(
    volume->GetLargestPossibleRegion().GetSize(), 1.0, 1, 6, [](std::mt19937 & rng) {
      return 1.0f + static_cast<float>(rng() % 100000) / 64.0f; // positive (a weighted centroid), fractional
    });
  weights->CopyInformation(volume);
  WriteImage(volume, f("short3d.nrrd"), true);
  WriteImage(weights, f("weights.mha"), true);
  if (!CheckIntensityRun<3>(f("short3d.nrrd"), f("weights.mha"), { "--lower", "100" }, "volume"))
  {
    return false;
  }

  // Without --intensity the tables are as they were.
  if (!Expect(Run({ ct, "--lower", "250", "--backend", g_Backend, "--csv", f("plain.csv") }, "plain"), 0, ""))
  {
    return false;
  }
  std::vector<std::string> columns;
  ReadCSV(f("plain.csv"), columns);
  for (const auto & c : columns)
  {
    if (c.compare(0, 10, "intensity_") == 0 || c.compare(0, 17, "centroid_weighted") == 0)
    {
      std::cerr << "a table without --intensity has the column " << c << std::endl;
      return false;
    }
  }

  // The refusals: the filter's (another size, another origin: exit 6, said with the option), the probe's (not
  // scalar, not 2D, missing), the command line's (before any read).
  const auto ctImage = ReadImage<Short2>(ct);
  auto       small = Short2::New();
  small->CopyInformation(ctImage);
  small->SetRegions(Size<2>{ { 64, 64 } });
  small->Allocate(true);
  WriteImage(small, f("feature64.mha"));
  auto shifted = Short2::New();
  shifted->Graft(ctImage);
  auto origin = ctImage->GetOrigin();
  origin[0] += 10.0;
  shifted->SetOrigin(origin);
  WriteImage(shifted, f("shifted.mha"));
  auto rgb = Image<RGBPixel<unsigned char>, 2>::New();
  rgb->SetRegions(ctImage->GetLargestPossibleRegion());
  rgb->Allocate(true);
  WriteImage(rgb, f("rgb.png"));
  auto cube = Image<short, 3>::New();
  cube->SetRegions(Size<3>{ { 4, 4, 4 } });
  cube->Allocate(true);
  WriteImage(cube, f("cube.mha"));
  const std::string            out = f("out.csv");
  const std::vector<ErrorCase> refusals{
    { 6, "feature image's size", { ct, "--intensity", f("feature64.mha"), "--csv", out } },
    { 6, "--intensity " + f("shifted.mha") + ": ITK ERROR", { ct, "--intensity", f("shifted.mha"), "--csv", out } },
    { 3, "needs a scalar pixel type", { ct, "--intensity", f("rgb.png"), "--csv", out } },
    { 3, "is a 3D image and the input 2D", { ct, "--intensity", f("cube.mha"), "--csv", out } },
    { 2, "does not exist", { ct, "--intensity", f("nothing.mha"), "--csv", out } },
    { 1, "not with --batch", { g_Folder, "--batch", "--intensity", ct, "--csv", out } },
    { 1, "--memory-budget", { ct, "--intensity", ct, "--memory-budget", "100000", "--csv", out } },
    { 1, "give --csv or --json", { ct, "--intensity", ct, "--output", f("out.nrrd") } },
    { 1, "would overwrite", { ct, "--intensity", f("shifted.mha"), "--csv", f("shifted.mha") } },
  };
  for (std::size_t i = 0; i < refusals.size(); ++i)
  {
    std::vector<std::string> args = refusals[i].args;
    args.insert(args.end(), { "--lower", "250", "--backend", g_Backend });
    if (!Expect(Run(args, "refusal" + std::to_string(i)), refusals[i].code, refusals[i].message) ||
        itksys::SystemTools::FileExists(out) || itksys::SystemTools::FileExists(f("out.nrrd")))
    {
      std::cerr << "--intensity refusal " << i << " not refused as expected, or it wrote an output" << std::endl;
      return false;
    }
  }
  return true;
}

} // namespace

int
itkCudaConnectedComponentAnalysisToolTest(int argc, char * argv[])
{
  if (argc < 4)
  {
    std::cerr << "Usage: " << argv[0] << " tool case outputFolder [CTSlice.mha | CODE ARGS...]" << std::endl;
    return EXIT_FAILURE;
  }
  g_Tool = argv[1];
  std::string testCase = argv[2];
  // CASE_cuda: the same case on the CUDA engine, skipped where it cannot run
  const std::string cudaSuffix = "_cuda";
  if (testCase.size() > cudaSuffix.size() &&
      testCase.compare(testCase.size() - cudaSuffix.size(), cudaSuffix.size(), cudaSuffix) == 0)
  {
    if (ccatest::CudaUnavailable(ccatest::Backend::CUDA))
    {
      return ccatest::SkipReturnCode;
    }
    g_Backend = "cuda";
  }
  g_Folder = std::string(argv[3]) + "/CCATool_" + testCase;
  const std::string ct = argc > 4 ? argv[4] : "";
  itksys::SystemTools::MakeDirectory(g_Folder);
  bool ok = false;
  try
  {
    const std::string baseCase =
      g_Backend == "cuda" ? testCase.substr(0, testCase.size() - cudaSuffix.size()) : testCase;
    if (baseCase == "nifti") // float: a threshold range with fractional bounds, rounded into float
    {
      ok = FormatCase<float>("float.nii.gz",
                             RandomVolume<float>(1, -1000, 1000, 0.6, 2),
                             { "--lower", "0.5", "--upper", "600.25" },
                             "nrrd",
                             Default,
                             { "--lower",
                               "0.5",
                               "--upper",
                               "600.25",
                               "--connectivity",
                               "26",
                               "--sort",
                               "--min-size",
                               "3",
                               "--label-type",
                               "uint32" },
                             "mha",
                             IOComponentEnum::UINT);
    }
    else if (baseCase == "nrrd") // unsigned short, non-zero rule, many small objects; labels of several MiB
    {
      ok = FormatCase<unsigned short>("ushort.nrrd",
                                      RandomVolume<unsigned short>(2, 1, 4000, 0.35, 1, { { 160, 144, 96 } }),
                                      {},
                                      "nii.gz",
                                      Default,
                                      { "--sort", "--keep", "10", "--connectivity", "18", "--periodic", "xz" },
                                      "nrrd",
                                      IOComponentEnum::UCHAR);
    }
    else if (baseCase == "mha") // short: --min-physical-size, and a mask whose non-zero values include 256
    {
      using MaskImage = Image<unsigned short, 3>;
      const auto volume = RandomVolume<short>(3, -500, 1500, 0.5, 2);
      auto       mask = ccatest::MakeRandomImage<MaskImage>(
        volume->GetLargestPossibleRegion().GetSize(), 0.6, 8, 5, [](std::mt19937 &) {
          return 256;
        }); // 0 as unsigned char
      mask->CopyInformation(volume);
      auto binary = BinaryThresholdImageFilter<MaskImage, Binary3>::New(); // ITK's mask: 0 / 1
      binary->SetInput(mask);
      binary->SetLowerThreshold(256);
      binary->Update();
      WriteImage(mask, g_Folder + "/mask.nrrd");
      ok = FormatCase<short>("short.mha",
                             volume,
                             { "--lower", "100", "--min-physical-size", "10" },
                             "mha",
                             Default,
                             { "--lower",
                               "100",
                               "--mask",
                               g_Folder + "/mask.nrrd",
                               "--feret",
                               "--obb",
                               "--connectivity",
                               "6",
                               "--label-type",
                               "uint16",
                               "--memory-budget", // one plane per slab: the LabelMap's lines merged too
                               "1" },
                             "nii.gz",
                             IOComponentEnum::USHORT,
                             binary->GetOutput());
    }
    else if (testCase == "dicom")
    {
      ok = DicomCase();
    }
    else if (baseCase == "batch")
    {
      ok = BatchCase();
    }
    else if (baseCase == "batchfile")
    {
      ok = BatchFileCase<3>(".nii.gz") && BatchFileCase<2>(".mha");
    }
    else if (baseCase == "multilabel")
    {
      ok = MultiLabelCase();
    }
    else if (baseCase == "intensity")
    {
      ok = IntensityCase(ct);
    }
    else if (baseCase == "run") // argv[4]: the expected exit code, then the tool's arguments
    {
      const std::vector<std::string> args(argv + 5, argv + argc);
      // the logs named after the arguments: the regression tests that share this folder run in parallel
      std::string joined;
      for (const auto & a : args)
      {
        joined += a + '\n';
      }
      ok = Expect(Run(args, "run" + std::to_string(std::hash<std::string>{}(joined))), std::stoi(argv[4]), "");
    }
    else if (testCase == "help")
    {
      const Outcome o = Run({ "--help" }, "help");
      ok = Expect(o, 0, "") && o.out.find("Usage: cca INPUT") != std::string::npos &&
           o.out.find("Exit codes:") != std::string::npos;
    }
    else if (testCase == "progress") // bars on stderr although it is a file; no summary with --quiet
    {
      const Outcome o =
        Run({ ct, "--backend", "cpu", "--lower", "250", "--progress", "--quiet", "--output", g_Folder + "/p.nrrd" },
            "progress");
      ok = Expect(o, 0, "\rreading") && o.err.find("\rlabeling") != std::string::npos &&
           o.err.find("\rwriting") != std::string::npos && o.err.find("100%\n") != std::string::npos && o.out.empty();
    }
    else if (testCase == "nocuda") // --backend cuda where no device is usable: plain words, exit 6, nothing read
    {
      if (itk::CudaConnectedComponentAnalysisEngine::GetCudaDeviceCount() > 0)
      {
        std::cout << "a CUDA device is usable here: nothing to test" << std::endl;
        return 77;
      }
      ok = Expect(Run({ ct, "--backend", "cuda", "--output", g_Folder + "/out.nrrd" }, "nocuda"),
                  6,
                  "--backend cuda: no CUDA device is usable here: ") &&
           !itksys::SystemTools::FileExists(g_Folder + "/out.nrrd");
    }
    else if (ErrorCase c; MakeErrorCase(testCase, ct, c))
    {
      c.args.insert(c.args.end(), { "--backend", "cpu" });
      ok = Expect(Run(c.args, testCase), c.code, c.message);
      // an error writes nothing, not even what could have been written before it was found
      for (const char * name : { "/out.nrrd", "/out.csv", "/out.png" })
      {
        ok = ok && !itksys::SystemTools::FileExists(g_Folder + name);
      }
    }
    else
    {
      std::cerr << "unknown case " << testCase << std::endl;
    }
  }
  catch (const std::exception & e)
  {
    std::cerr << testCase << ": " << e.what() << std::endl;
  }
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
