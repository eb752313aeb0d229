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
// cca: connected component analysis of an image file or a DICOM series from the command line, with
// itk::CudaConnectedComponentAnalysisImageFilter (the GPU when there is one, else the CPU engine).
//
// This file holds main and the command line (parsed and checked before any pixel is read, so that a typo
// costs nothing on a large image); the input is probed in CudaConnectedComponentAnalysisToolProbe.cxx.
// Every failure ends with a message on stderr and one of the exit codes of the usage text.
#include "CudaConnectedComponentAnalysisTool.h"
#include "itkCudaConnectedComponentAnalysisEngine.h"

#include "itkImageFileReader.h" // registers the IO factories (ITK_IO_FACTORY_REGISTER_MANAGER)
#include "itkImageIOFactory.h"
#include "itksys/SystemTools.hxx"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#ifdef _WIN32
#  include <io.h>
#  define CCA_ISATTY(fd) _isatty(fd)
#  define CCA_FILENO(f) _fileno(f)
#else
#  include <unistd.h>
#  define CCA_ISATTY(fd) isatty(fd)
#  define CCA_FILENO(f) fileno(f)
#endif

namespace cca_tool
{
namespace
{

void
PrintUsage(std::ostream & os)
{
  os << R"(Usage: cca INPUT [options]

Labels the connected components (objects) of a 2D or 3D scalar image and measures their shape with
itk::CudaConnectedComponentAnalysisImageFilter (a CUDA GPU when one is usable, else the CPU engine).

INPUT   an image file ITK reads (NIfTI .nii/.nii.gz, NRRD .nrrd/.nhdr, MetaImage .mha/.mhd, PNG, TIFF, ...)
        or a directory holding a DICOM series (the first series found is read); with --batch, a folder of
        image files, each a case, or one 4D (3D) image file whose 3D volumes (2D slices) along its last
        axis are the cases

Foreground (default: the non-zero pixels):
  --lower L               pixels with value >= L are foreground
  --upper U               pixels with value <= U are foreground (with --lower: L <= value <= U)
  --mask FILE             only pixels where this image is non-zero can be foreground; it must have
                          the input's size and geometry
Classes (multi-label input, such as a segmentation of several organs):
  --multilabel            the input's values are classes: an object is a connected set of pixels of one
                          non-zero value, and objects of different classes touch without merging (an integer
                          pixel type; not with --lower / --upper); the tables get a `class`
                          column after Label
  --per-class             with --multilabel: --keep N keeps the N largest objects of each class
  --class-values          with --multilabel: the label image holds each kept object's class instead of its
                          label, the input cleaned by --min-size / --keep (in the input's pixel type unless
                          --label-type says)
Intensities (a second image measured inside the objects, such as the CT under a segmentation):
  --intensity FILE        measure FILE's values in each object, into the tables (--csv or --json needed):
                          intensity_min, intensity_max, intensity_sum, intensity_mean, intensity_stddev,
                          intensity_variance, intensity_skewness, intensity_kurtosis, the intensity-weighted
                          centroid centroid_weighted (physical, as Centroid: centroid_weighted_0, _1, _2 in
                          the CSV) and the pixel indices of the minimum and maximum, intensity_min_index and
                          intensity_max_index (as itk::LabelImageToStatisticsLabelMapFilter, without median
                          and histogram). FILE: a scalar image of the input's size and geometry, read as
                          double (exact for float and for integers up to 2^53). Not with --batch or
                          --memory-budget: the image is analyzed whole
Labeling:
  --connectivity C        face (4 in 2D, 6 in 3D; default) or full (8 in 2D, 26 in 3D); 4, 6, 8 and 26
                          are accepted too, and 18 (faces and edges, 3D only)
  --contacts FILE         CSV of the objects that touch (at the connectivity): label_1, label_2, num_contacts
                          (touching neighbor pairs), contact_area (shared faces, mm^2; mm in 2D); with
                          --class-values, of the classes (organ adjacency)
  --periodic AXES         the image wraps around along AXES (all, or some of x, y, z: xz): objects crossing
                          opposite faces are one (periodic boundaries; not with --intensity or --batch)
  --min-size N            objects of fewer than N pixels become background
  --min-physical-size X   objects smaller than X mm^3 (mm^2 in 2D) become background
  --keep N                keep the N largest objects only
  --sort                  number the objects by decreasing size (default: raster order of their first
                          pixel, as itk::ConnectedComponentImageFilter)
  --backend B             auto (default), cpu or cuda
  --device N              CUDA device (default 0)
  --memory-budget BYTES   most working memory per analysis (GPU memory for the CUDA engine); a larger image
                          is labeled in slabs with the same result (default 0: whole, halved on running out)
Outputs:
  --output FILE           label image (format from the extension, compressed where the format can)
  --label-type T          uint8, uint16, uint32 or uint64 (default: the smallest that holds the count)
  --csv FILE              one row per object: every ShapeLabelObject attribute, physical units
  --json FILE             the same attributes, with the input's geometry, options, counts and backend
  --feret                 also compute the Feret diameter
  --obb                   also compute the oriented bounding box
  --overwrite-input       let --output, --csv or --json replace the input or the mask (refused otherwise)
Many cases:
  --batch                 INPUT is a folder: each of its image files (by name) is labeled as above, with
                          the same options, in one process; every case is checked first, and a bad one stops
                          the batch before any work, named. --csv / --json: one table of every case's
                          objects, the case's file name in an `image` column (a `cases` list in the JSON).
                          INPUT may also be one 4D (3D) image file: its volumes (slices) along the last axis
                          are the cases, numbered from 0 in the `image` column
  --output-dir DIR        with --batch: the label images, under the cases' file names (a file of cases:
                          NAME_0.EXT, NAME_1.EXT, ... after the file's name)
  --fail-if-empty         an image without foreground pixel is an error (exit 4, nothing written);
                          by default it is a result: 0 objects, an all-background label image
  --allow-irregular-slices  label a DICOM series whose slices are not evenly spaced (a warning, ITK's
                          average spacing); refused otherwise (exit 2)
  --progress              progress bars on stderr (default: when stderr is a terminal)
  --no-progress           no progress bars
  --quiet                 no summary on stdout (and no progress bar unless --progress)
  --help                  this text

Options take their value as the next argument or after '=' (--lower=250).

Every output is written beside its destination under a temporary name and moved into place when all are
complete: a failure leaves no partial file and the files it would have replaced unchanged.

Exit codes:
  0  success (an image without foreground pixel too: 0 objects)
  1  bad command line (unknown option, bad value, --lower above --upper, unknown output format, an output
     that would replace the input, the mask or the intensity image, --multilabel with --lower / --upper,
     --per-class or --class-values without --multilabel, --intensity with --batch or --memory-budget or
     without --csv / --json)
  2  cannot read the input, the mask or the intensity image (missing, unreadable, truncated or damaged, no
     ITK reader for it, no DICOM series, a damaged slice or slices missing from the series), or a mask
     of another size or geometry than the input's (what differs is named)
  3  unsupported image: pixels that are not scalars (RGB, vector, complex), or not 2D / 3D; with
     --multilabel, a floating-point pixel type (classes are integers); an --intensity image that is not
     scalar or not of the input's dimension
  4  with --fail-if-empty: no foreground pixel
  5  the label type cannot hold the number of objects, or with --class-values a class value (nothing is
     written)
  6  any other failure (the filter or a writer failed; ITK's message is printed): an --intensity image of
     another size or geometry than the input's, --connectivity 18 or --periodic z on a 2D image, --periodic
     with --intensity, --backend cuda where no CUDA device is usable (the reason is said) among them

Example: cca ct.nii.gz --lower 250 --connectivity full --min-size 10 --sort --output bones.nii.gz --csv bones.csv
         cca seg.nii.gz --multilabel --per-class --keep 1 --class-values --output cleaned.nii.gz --csv organs.csv
         cca seg.nii.gz --multilabel --intensity ct.nii.gz --csv organs.csv
)";
}

ToolError
UsageError(const std::string & message)
{
  return ToolError(ExitUsage, message);
}

double
ParseNumber(const std::string & option, const std::string & text)
{
  errno = 0;
  char *       end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(value))
  {
    throw UsageError(option + ": '" + text + "' is not a (finite) number");
  }
  return value;
}

std::uint64_t
ParseCount(const std::string & option, const std::string & text)
{
  // digits only: strtoull would take "-1" as 2^64 - 1
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
  {
    throw UsageError(option + ": '" + text + "' is not a non-negative integer");
  }
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
  {
    throw UsageError(option + ": " + text + " is too large");
  }
  return static_cast<std::uint64_t>(value);
}

/** Parses argv into `options`; returns false for --help. */
bool
ParseCommandLine(int argc, char * argv[], Options & options)
{
  int progress = -1; // -1: decided by isatty
  for (int i = 1; i < argc; ++i)
  {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-' || arg == "--")
    {
      if (arg == "--" && i + 1 < argc)
      {
        arg = argv[++i]; // an input whose name starts with '-'
      }
      if (!options.input.empty())
      {
        throw UsageError("unexpected argument '" + arg + "' (the input is '" + options.input + "')");
      }
      options.input = arg;
      continue;
    }
    std::string value;
    bool        hasValue = false;
    const auto  equals = arg.find('=');
    if (arg.compare(0, 2, "--") == 0 && equals != std::string::npos)
    {
      value = arg.substr(equals + 1);
      arg = arg.substr(0, equals);
      hasValue = true;
    }
    // the option's value: after '=' or the next argument
    auto next = [&]() -> std::string {
      if (hasValue)
      {
        return value;
      }
      if (i + 1 >= argc)
      {
        throw UsageError(arg + " needs a value");
      }
      return argv[++i];
    };
    auto flag = [&]() {
      if (hasValue)
      {
        throw UsageError(arg + " takes no value");
      }
    };
    if (arg == "--help" || arg == "-h")
    {
      return false;
    }
    else if (arg == "--lower")
    {
      options.lower = ParseNumber(arg, next());
      options.hasLower = true;
    }
    else if (arg == "--upper")
    {
      options.upper = ParseNumber(arg, next());
      options.hasUpper = true;
    }
    else if (arg == "--mask")
    {
      options.mask = next();
    }
    else if (arg == "--multilabel")
    {
      flag();
      options.multiLabel = true;
    }
    else if (arg == "--per-class")
    {
      flag();
      options.perClass = true;
    }
    else if (arg == "--class-values")
    {
      flag();
      options.classValues = true;
    }
    else if (arg == "--intensity")
    {
      options.intensity = next();
    }
    else if (arg == "--connectivity")
    {
      const std::string c = next();
      options.connectivityNeighbors = 0;
      if (c == "face" || c == "4" || c == "6")
      {
        options.fullyConnected = false;
      }
      else if (c == "full" || c == "8" || c == "26")
      {
        options.fullyConnected = true;
      }
      else if (c == "18")
      {
        options.fullyConnected = false;
        options.connectivityNeighbors = 18;
      }
      else
      {
        throw UsageError("--connectivity: '" + c + "' is not one of face, full, 4, 6, 8, 18, 26");
      }
    }
    else if (arg == "--periodic")
    {
      const std::string axes = next();
      options.periodicAxes = 0;
      for (const char c : axes == "all" ? std::string("xyz") : axes)
      {
        const auto axis = std::string("xyz").find(c);
        if (axis == std::string::npos || axes.empty())
        {
          throw UsageError("--periodic: '" + axes + "' is neither all nor axes among x, y, z (such as xz)");
        }
        options.periodicAxes |= 1u << axis;
      }
      options.periodicAll = axes == "all";
    }
    else if (arg == "--min-size")
    {
      options.minimumObjectSize = ParseCount(arg, next());
    }
    else if (arg == "--min-physical-size")
    {
      options.minimumPhysicalSize = ParseNumber(arg, next());
      if (options.minimumPhysicalSize < 0)
      {
        throw UsageError("--min-physical-size must not be negative");
      }
    }
    else if (arg == "--keep")
    {
      options.numberOfObjectsToKeep = ParseCount(arg, next());
    }
    else if (arg == "--sort")
    {
      flag();
      options.sortByObjectSize = true;
    }
    else if (arg == "--backend")
    {
      using Backend = itk::CudaConnectedComponentAnalysisEnums::Backend;
      options.backendName = next();
      if (options.backendName == "auto")
      {
        options.backend = Backend::Automatic;
      }
      else if (options.backendName == "cpu")
      {
        options.backend = Backend::CPU;
      }
      else if (options.backendName == "cuda")
      {
        options.backend = Backend::CUDA;
      }
      else
      {
        throw UsageError("--backend: '" + options.backendName + "' is not one of auto, cpu, cuda");
      }
    }
    else if (arg == "--device")
    {
      const std::uint64_t device = ParseCount(arg, next());
      if (device > 1024)
      {
        throw UsageError("--device: no CUDA device " + std::to_string(device));
      }
      options.deviceId = static_cast<int>(device);
    }
    else if (arg == "--memory-budget")
    {
      options.memoryBudget = ParseCount(arg, next());
    }
    else if (arg == "--feret")
    {
      flag();
      options.feretDiameter = true;
    }
    else if (arg == "--obb")
    {
      flag();
      options.orientedBoundingBox = true;
    }
    else if (arg == "--label-type")
    {
      options.labelType = next();
      if (options.labelType != "uint8" && options.labelType != "uint16" && options.labelType != "uint32" &&
          options.labelType != "uint64")
      {
        throw UsageError("--label-type: '" + options.labelType + "' is not one of uint8, uint16, uint32, uint64");
      }
    }
    else if (arg == "--output")
    {
      options.output = next();
    }
    else if (arg == "--csv")
    {
      options.csv = next();
    }
    else if (arg == "--contacts")
    {
      options.contacts = next();
    }
    else if (arg == "--batch")
    {
      flag();
      options.batch = true;
    }
    else if (arg == "--output-dir")
    {
      options.outputDirectory = next();
    }
    else if (arg == "--json")
    {
      options.json = next();
    }
    else if (arg == "--overwrite-input")
    {
      flag();
      options.overwriteInput = true;
    }
    else if (arg == "--fail-if-empty")
    {
      flag();
      options.failIfEmpty = true;
    }
    else if (arg == "--allow-irregular-slices")
    {
      flag();
      options.allowIrregularSlices = true;
    }
    else if (arg == "--progress")
    {
      flag();
      progress = 1;
    }
    else if (arg == "--no-progress")
    {
      flag();
      progress = 0;
    }
    else if (arg == "--quiet" || arg == "-q")
    {
      flag();
      options.quiet = true;
    }
    else
    {
      throw UsageError("unknown option '" + arg + "'");
    }
  }
  if (options.input.empty())
  {
    throw UsageError("no INPUT given");
  }
  if (options.batch && (!options.output.empty() || !options.mask.empty()))
  {
    throw UsageError("--batch takes --output-dir for its label images, and no --output or --mask");
  }
  if (!options.outputDirectory.empty() &&
      (!options.batch || !itksys::SystemTools::FileIsDirectory(options.outputDirectory)))
  {
    throw UsageError("--output-dir " + options.outputDirectory +
                     (options.batch ? ": no such folder" : ": only with --batch (use --output for one image)"));
  }
  // A class map's values are its classes: a threshold would merge them into one foreground (and the filter takes
  // the values as they are, so there is nothing to threshold); the class options mean nothing without classes.
  if (options.multiLabel && (options.hasLower || options.hasUpper))
  {
    throw UsageError("--multilabel labels the input's values as classes and takes no threshold: drop --lower / "
                     "--upper, or drop --multilabel to label the thresholded foreground");
  }
  if ((options.perClass || options.classValues) && !options.multiLabel)
  {
    throw UsageError(std::string(options.perClass ? "--per-class" : "--class-values") +
                     " needs --multilabel (the classes are the values of a multi-label input)");
  }
  // The intensity statistics are summed over the image analyzed whole, into the tables: refused before any read
  // where there is no whole image (--batch: several; --memory-budget: slabs) or no table to write them into.
  if (!options.intensity.empty())
  {
    if (options.batch)
    {
      throw UsageError("--intensity takes one image (of the input's size): not with --batch");
    }
    if (options.memoryBudget != 0)
    {
      throw UsageError("--intensity needs the image analyzed whole, and --memory-budget would label it in slabs: "
                       "drop one of them");
    }
    if (options.csv.empty() && options.json.empty())
    {
      throw UsageError("--intensity " + options.intensity +
                       ": the intensity statistics are written into the tables: give --csv or --json");
    }
  }
  if (options.hasLower && options.hasUpper && options.lower > options.upper)
  {
    std::ostringstream message;
    message << "--lower " << options.lower << " is above --upper " << options.upper << ": the selection would be empty";
    throw UsageError(message.str());
  }
  // A bar redrawn with carriage returns only makes sense on a terminal: in a log file it is noise.
  options.progress = progress >= 0 ? progress == 1 : (!options.quiet && CCA_ISATTY(CCA_FILENO(stderr)) != 0);

  // Output names checked now, not after the analysis: an unknown extension would otherwise cost the run.
  if (!options.output.empty() &&
      !itk::ImageIOFactory::CreateImageIO(options.output.c_str(), itk::IOFileModeEnum::WriteMode))
  {
    throw UsageError("--output " + options.output +
                     ": ITK has no image format for this file name (use .nii.gz, .nrrd, .mha, .tif, .png, ...)");
  }
  for (const std::string * name : { &options.output, &options.csv, &options.json, &options.contacts })
  {
    const std::string folder = itksys::SystemTools::GetFilenamePath(*name);
    if (!name->empty() && !folder.empty() && !itksys::SystemTools::FileIsDirectory(folder))
    {
      throw UsageError("cannot write " + *name + ": no folder " + folder);
    }
  }
  return true;
}

} // namespace
} // namespace cca_tool

namespace
{
/** --backend cuda where no CUDA device is usable: said in plain words, with the runtime's reason, before any
 * file is read (the filter would say it only after reading, inside ITK's exception text). */
void
CheckCudaBackendUsable(const cca_tool::Options & options)
{
  using Engine = itk::CudaConnectedComponentAnalysisEngine;
  if (options.backend != itk::CudaConnectedComponentAnalysisEnums::Backend::CUDA)
  {
    return;
  }
  std::string reason;
  const int   count = Engine::GetCudaDeviceCount(&reason);
  if (count < 1)
  {
    throw cca_tool::ToolError(cca_tool::ExitFailure, "--backend cuda: no CUDA device is usable here: " + reason +
                                                       " (--backend auto or cpu labels on the CPU engine)");
  }
  if (options.deviceId < 0 || options.deviceId >= count)
  {
    throw cca_tool::ToolError(cca_tool::ExitFailure, "--device " + std::to_string(options.deviceId) +
                                                       ": no such CUDA device (" + std::to_string(count) +
                                                       " found, numbered from 0)");
  }
}
} // namespace

int
main(int argc, char * argv[])
{
  using namespace cca_tool;
  InstallOutputWindow();
  try
  {
    Options options;
    if (!ParseCommandLine(argc, argv, options))
    {
      PrintUsage(std::cout);
      return ExitOk;
    }
    CheckCudaBackendUsable(options);
    if (options.batch)
    {
      return RunBatch(options);
    }
    std::vector<std::string> maskFiles;
    if (!options.mask.empty())
    {
      maskFiles = ProbeMask(options.mask);
    }
    const InputDescription input = ProbeInput(options.input, options);
    CheckOutputFormatHoldsDimension(options.output, input.dimension);
    std::vector<std::string> sources = input.files;
    sources.insert(sources.end(), maskFiles.begin(), maskFiles.end());
    if (!options.intensity.empty())
    {
      const std::vector<std::string> intensityFiles = ProbeIntensity(options.intensity, input.dimension);
      sources.insert(sources.end(), intensityFiles.begin(), intensityFiles.end());
    }
    CheckOutputsAreNotInputs(options, sources);
    return RunTool(options, input);
  }
  catch (const ToolError & e)
  {
    std::cerr << "cca: error: " << e.what() << std::endl;
    if (e.GetCode() == ExitUsage)
    {
      std::cerr << "Try 'cca --help'." << std::endl;
    }
    return e.GetCode();
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << "cca: error: " << e.GetDescription() << std::endl;
    return ExitFailure;
  }
  catch (const std::exception & e)
  {
    std::cerr << "cca: error: " << e.what() << std::endl;
    return ExitFailure;
  }
}
