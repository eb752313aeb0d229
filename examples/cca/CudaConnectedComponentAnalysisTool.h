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
// What the three parts of the command-line tool `cca` share: the parsed options, the description of the
// input found before any pixel is read, the exit codes, and the neutral table of object attributes.
//  CudaConnectedComponentAnalysisTool.cxx        main, usage, option parsing, input probing
//  CudaConnectedComponentAnalysisToolRun.cxx     the pipeline, typed by pixel type and dimension
//  CudaConnectedComponentAnalysisToolRead.h      reading: the input, mask and intensity images, their space
//  CudaConnectedComponentAnalysisToolWrite.h     writing the label image in the type asked for
//  CudaConnectedComponentAnalysisToolOutput.cxx  what the tool prints and writes as text: progress bars,
//                                                the summary, the CSV and JSON tables
//  CudaConnectedComponentAnalysisToolProbe.cxx   the input and the mask probed: type, size, files
//  CudaConnectedComponentAnalysisToolInputCheck.cxx  an image file whole (its data as long as its header says)
//  CudaConnectedComponentAnalysisToolDicomCheck.cxx  a DICOM series whole and evenly spaced
//  CudaConnectedComponentAnalysisToolFiles.cxx   outputs that never destroy: not the input, staged, moved
#ifndef CudaConnectedComponentAnalysisTool_h
#define CudaConnectedComponentAnalysisTool_h

#include "itkCommonEnums.h"
#include "itkImageIOBase.h"
#include "itkCudaConnectedComponentAnalysisEnums.h"
#include "itkCCATypes.h"
#include "itkProcessObject.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace cca_tool
{

/** JSON with the keys in the order written (Label first), not sorted. */
using Json = nlohmann::ordered_json;

/** Exit codes, documented in the usage text: scripts tell the failures apart by them. */
enum ExitCode : int
{
  ExitOk = 0,
  ExitUsage = 1,          ///< bad command line: unknown option, bad value, lower > upper, unknown output format
  ExitCannotRead = 2,     ///< input or mask missing, unreadable, truncated or damaged, no IO for its format, no
                          ///< DICOM series, a damaged or missing slice of one
  ExitUnsupported = 3,    ///< not a scalar pixel, or not a 2D / 3D image; --multilabel on a floating-point image
  ExitEmptySelection = 4, ///< with --fail-if-empty only: no foreground pixel
  ExitLabelOverflow = 5,  ///< more objects than --label-type holds, or with --class-values a class it cannot
                          ///< hold (nothing written)
  ExitFailure = 6         ///< any other error: an exception from the filter or a writer
};

/** An error that ends the tool with its own exit code and message (printed by main). */
class ToolError : public std::runtime_error
{
public:
  ToolError(int code, const std::string & message)
    : std::runtime_error(message)
    , m_Code(code)
  {}
  int
  GetCode() const
  {
    return m_Code;
  }

private:
  int m_Code;
};

/** The command line, parsed and checked (values in range) but not yet matched with the input. */
struct Options
{
  std::string                                       input;
  std::string                                       mask;
  std::string                                       output;
  std::string                                       csv;
  std::string                                       json;
  bool                                              hasLower{ false };
  bool                                              hasUpper{ false };
  double                                            lower{ 0 };
  double                                            upper{ 0 };
  bool                                              fullyConnected{ false };
  /** --connectivity 18: faces and edges in 3-D (the filter's SetConnectivity); 0: fullyConnected decides. */
  unsigned                                          connectivityNeighbors{ 0 };
  /** --contacts FILE: the touching objects' CSV (the label image's values: classes with --class-values). */
  std::string contacts;
  /** --periodic: bit d, the image wraps along axis d (x first); periodicAll: along all of its axes. */
  unsigned                                          periodicAxes{ 0 };
  bool                                              periodicAll{ false };
  std::uint64_t                                     minimumObjectSize{ 0 };
  double                                            minimumPhysicalSize{ 0 };
  std::uint64_t                                     numberOfObjectsToKeep{ 0 };
  bool                                              sortByObjectSize{ false };
  itk::CudaConnectedComponentAnalysisEnums::Backend backend{
    itk::CudaConnectedComponentAnalysisEnums::Backend::Automatic
  };
  std::string   backendName{ "auto" };
  int           deviceId{ 0 };
  std::uint64_t memoryBudget{ 0 }; ///< bytes; 0: the default (the filter's MemoryBudget)
  bool          feretDiameter{ false };
  bool          orientedBoundingBox{ false };
  std::string   labelType; ///< uint8, uint16, uint32, uint64, or empty: the smallest that holds the count
  bool          progress{ false };
  bool          quiet{ false };
  bool          overwriteInput{ false };       ///< an output may replace the input or the mask
  bool          failIfEmpty{ false };          ///< no foreground pixel: exit 4, nothing written
  bool          allowIrregularSlices{ false }; ///< a DICOM series with uneven slice positions is labeled anyway
  bool          batch{ false };                ///< --batch: `input` is a folder of cases, or a file of them
  std::string   outputDirectory;               ///< --output-dir: where a batch's label images go
  bool          multiLabel{ false };  ///< --multilabel: the input's (integer) values are classes, not thresholded
  bool          perClass{ false };    ///< --per-class: --keep N per class (with --multilabel)
  bool          classValues{ false }; ///< --class-values: the label image holds the class values (with --multilabel)
  std::string   intensity; ///< --intensity: the feature image whose values the tables' intensity columns measure
};

class InflatedCopy;

/** The completeness check of a single-file gzip NIfTI input, made by the decompression that the read uses
 * (CudaConnectedComponentAnalysisToolInflate.h). */
struct InflatingCheck
{
  /** Decompresses the data once and returns the copy to read instead of the file, or nullptr (the file checked all
   * the same, and read as it is). Throws the check's ToolError for a damaged or short stream. */
  std::function<std::shared_ptr<InflatedCopy>()> copy;
  /** Set where the header says that the data are the pixels as they lie in memory (this machine's byte order, no
   * scaling): decompresses them straight into `buffer` (on every core where it can), which holds `bytes`, the
   * data's size.
   * Returns the threads that did, or 0 where the stream did not yield them whole: `copy` then checks it and says
   * why. */
  std::function<unsigned int(void * buffer, std::uint64_t bytes)> into;
};

/** The input as probed before reading its pixels (ImageIOBase::ReadImageInformation). */
struct InputDescription
{
  std::string              path;
  bool                     dicomSeries{ false };
  std::vector<std::string> fileNames; ///< the series' files, in slice order (DICOM only)
  unsigned int             dimension{ 0 };
  itk::IOComponentEnum     componentType{ itk::IOComponentEnum::UNKNOWNCOMPONENTTYPE };
  std::string              componentName;       ///< as ITK names it: "short", "unsigned_char", ...
  std::uint64_t            numberOfPixels{ 0 }; ///< of the image labeled (one case of a --batch FILE)
  std::vector<std::string> files;   ///< every file the input is read from (header, data; for a DICOM directory the
                                    ///< files of all its series)
  std::function<void()> verifyData; ///< the completeness check's decompression pass, if any: run it beside the
                                    ///< read, and label nothing if it throws
  InflatingCheck inflateData;       ///< instead of verifyData for a gzip NIfTI file, where this build has
                                    ///< InflatedCopy: run before the read, which takes its result
  /// --batch FILE: the file holds `stackCases` cases of `dimension` along its last axis (it has dimension + 1);
  /// this input is the case at `stackCase` (-1: the whole file is the input).
  std::uint64_t stackCases{ 0 };
  std::int64_t  stackCase{ -1 };
};

/** Reads the header of the input (the first file of a DICOM series), checks that cca can label it and that
 * its data are whole (every slice of a series); lists the files it is read from. With `stackOfCases` (--batch
 * FILE) the file must be 3D or 4D: its slices or volumes along the last axis are the cases, `dimension` is
 * theirs and `stackCases` their number. */
InputDescription
ProbeInput(const std::string & path, const Options & options, bool stackOfCases = false);

/** The mask's files, its data checked whole as the input's. */
std::vector<std::string>
ProbeMask(const std::string & path);

/** The --intensity image's files, its data checked whole as the input's; refuses (ExitUnsupported) one that is not
 * scalar or not of the input's `dimension` (its size and geometry are the filter's to check). */
std::vector<std::string>
ProbeIntensity(const std::string & path, unsigned int dimension);

/** Refuses (ExitUsage) a 3D image into a format that holds 2D images only (PNG, JPEG, BMP). */
void
CheckOutputFormatHoldsDimension(const std::string & output, unsigned int dimension);

/** Checks, before the pixels are read, that the image file's data hold what its header promises (NIfTI and
 * Analyze, MetaImage, TIFF: formats whose ITK reader takes a short file as whole); throws ToolError
 * (ExitCannotRead) naming the file and both sizes. `io` has read the file's information. Returns the files
 * the image is read from (the header and, for detached formats, its data file). With `deferred`, a pass that
 * decompresses the whole data stream is not run but put there, for the caller to run beside the read; with
 * `inflate` too, a single-file gzip NIfTI's pass is put there instead, for the caller to run before the read. */
std::vector<std::string>
CheckImageFileComplete(const std::string & file, const itk::ImageIOBase & io,
                       std::function<void()> * deferred = nullptr, InflatingCheck * inflate = nullptr);

/** Checks the DICOM series of `input` (a directory; input.files: the files of all its series): no slice of it
 * left out of every series (an unreadable header), every slice's pixel data whole, the slices evenly spaced (else an
 * error, or with `allowIrregularSlices` a warning). Throws ToolError (ExitCannotRead) naming the file. */
void
CheckDicomSeries(const InputDescription & input, bool allowIrregularSlices);

/** Refuses (ExitUsage) an --output, --csv or --json that names another of them, or would replace one of
 * `sources` (same path or same inode; the data file of a detached output format included), unless
 * options.overwriteInput. */
void
CheckOutputsAreNotInputs(const Options & options, const std::vector<std::string> & sources);

/** Outputs written into a hidden folder beside each destination and moved into place by Commit(), when all
 * are complete: a failure on the way leaves the destinations as they were. What is not committed is removed. */
class StagedOutputs
{
public:
  StagedOutputs() = default;
  StagedOutputs(const StagedOutputs &) = delete;
  StagedOutputs &
  operator=(const StagedOutputs &) = delete;
  ~StagedOutputs();

  /** The path to write instead of `destination`. */
  std::string
  Stage(const std::string & destination);

  /** Renames every staged file into its destination's folder (headers of detached formats last). */
  void
  Commit();

private:
  std::vector<std::pair<std::string, std::string>> m_Folders; ///< destination folder, staging folder
};

/** One attribute of one object: a scalar (empty shape), a vector ({n}) or a matrix ({rows, columns},
 * row-major). Integers (labels, counts, indices) are written without a fraction. */
struct Attribute
{
  std::string              name;
  std::vector<double>      values;
  std::vector<std::size_t> shape;
  bool                     integer{ false };
};
using ObjectRow = std::vector<Attribute>;

/** Runs the whole job on the probed input; returns the exit code or throws ToolError / ITK's exceptions. */
int
RunTool(const Options & options, const InputDescription & input);

/** --batch: every image file of the folder `options.input` (by name), or every case of the file
 * `options.input` (its slices or volumes along the last axis), labeled as RunTool() would, each checked
 * before the first is labeled; label images into options.outputDirectory under the cases' names, one CSV
 * (an `image` column first) and one JSON (a `cases` list) of every case's objects
 * (CudaConnectedComponentAnalysisToolBatch.cxx). */
int
RunBatch(const Options & options);

/** One progress line per stage on stderr, redrawn with a carriage return from the ProgressEvents of the
 * process objects it watches (each mapped onto a part of the line), ended with a newline. Disabled, it
 * prints nothing and observes nothing. */
class ProgressBar
{
public:
  explicit ProgressBar(bool enabled)
    : m_Enabled(enabled)
  {}
  ProgressBar(const ProgressBar &) = delete;
  ProgressBar &
  operator=(const ProgressBar &) = delete;
  ~ProgressBar();

  void
  Start(const std::string & stage);

  /** The process's progress 0..1 fills the line from `from` to `to`. */
  void
  Watch(itk::ProcessObject * process, double from, double to)
  {
    if (m_Enabled)
    {
      process->AddObserver(itk::ProgressEvent(), [this, process, from, to](const itk::EventObject &) {
        Draw(from + (to - from) * process->GetProgress());
      });
    }
  }

  void
  Finish();

  /** Ends the line of the bar being drawn, if any, so that a message can be printed on a line of its own
   * (the bar is drawn again on the next line at its next progress event). */
  static void
  Interrupt();

private:
  void
  Draw(double fraction);

  static ProgressBar * s_Drawing; ///< the bar whose line is open on stderr, if any

  bool        m_Enabled;
  bool        m_Open{ false };
  int         m_Percent{ -1 };
  std::string m_Stage;
};

/** Routes ITK's text output (the automatic backend's "no usable CUDA device ... using the CPU engine", ITK's
 * warnings) to stderr on lines of their own, also while a progress bar is being drawn. */
void
InstallOutputWindow();

/** What the summary on stdout says, gathered along the run. */
struct Report
{
  std::string                input;
  std::string                image;
  std::string                foreground;
  std::string                intensity; ///< --intensity: the feature image
  std::string                connectivity;
  std::string                postProcessing;
  std::uint64_t              labeled{ 0 };
  std::uint64_t              kept{ 0 };
  std::string                sizeUnit;
  std::vector<std::uint64_t> largestLabel;
  std::vector<std::int64_t>  largestClass; ///< --multilabel: the class of each of the largest objects
  std::vector<std::uint64_t> largestPixels;
  std::vector<double>        largestSize;
  std::string                backend;
  std::string                backendNote; ///< why --backend auto took the CPU engine, where the tool decided it
  double                     readSeconds{ 0 };
  unsigned int               inflatingThreads{ 0 };  ///< the threads that decompressed a gzip input (0: none or zlib)
  bool                       inflatedInPlace{ false }; ///< into the image's buffer (else into a copy ITK read)
  double                     analyzeSeconds{ 0 };    ///< engineWaitSeconds included
  double                     engineWaitSeconds{ 0 }; ///< the engine's start-up after the read (not hidden by it)
  double                     writeSeconds{ 0 };
  std::vector<std::string>   written;
};

/** The image's size, spacing, origin and direction (row-major), untyped. */
struct Geometry
{
  std::vector<std::size_t> size;
  std::vector<double>      spacing;
  std::vector<double>      origin;
  std::vector<double>      direction;
};

/** The foreground rule in words: "250 <= value <= 3000", "value != 0", with the mask if any. */
std::string
ForegroundRule(const Options & options);

/** Fills the summary's description of the input and the options, and the JSON header with the same. */
void
DescribeInput(const Options & options, const InputDescription & input, const Geometry & geometry, Report & report,
              Json & header);

/** The one-screen summary on stdout. */
void
PrintSummary(const Report & report);

/** The smallest label type that holds `count` labels (1 .. count; 0 is the background), and the largest
 * label each type holds. */
std::string
SmallestLabelType(std::uint64_t count);
std::uint64_t
LabelTypeMax(const std::string & labelType);

/** One line per object, one column per scalar (vectors as Name_0, Name_1, ...; matrices as Name_i_j).
 * `layout` is a row of the same shape, which names the columns even when there is no object. */
void
WriteCSV(const std::string & fileName, const ObjectRow & layout, const std::vector<ObjectRow> & rows);

/** --contacts: one row per pair of touching labels (label_1, label_2, num_contacts, contact_area: the shared faces'
 * area from `spacing`, one value per axis, x first). */
void
WriteContactsCSV(const std::string & fileName, const itk::cca::ContactTable & table, const std::vector<double> & spacing);

/** `header` with an "objects" array: one object per row, vectors and matrices as (nested) arrays. */
void
WriteJSON(const std::string & fileName, Json header, const std::vector<ObjectRow> & rows);

/** The zlib level of compressed NIfTI label images: the fastest, as label images compress well at any level. */
constexpr int LabelCompressionLevel = 1;

/** Compresses the file `source` into the gzip file `target`, deflated on every thread (one gzip member, as gzip
 * writes: every gzip reader reads it). Throws ToolError (ExitFailure) when it cannot. */
void
GzipFile(const std::string & source, const std::string & target, int level);

/** Writes `header` and the `size` bytes at `data` into the gzip file `target` as GzipFile() would write them from a
 * file: the same deflate on every thread, straight from memory. Throws ToolError (ExitFailure) when it cannot. */
void
GzipBytes(const std::vector<unsigned char> & header, const unsigned char * data, std::uint64_t size,
          const std::string & target, int level);

/** The header of a NIfTI file of an image of `size` (pixels of `pixelBytes` bytes), made from `file`: the one ITK
 * wrote for one pixel of the same pixel type and geometry. False where it is not one this can make (not NIfTI-1
 * in this machine's byte order, a side past 32767); the caller then lets ITK write the image. */
bool
NiftiHeaderForSize(const std::string & file, const std::vector<std::uint64_t> & size, unsigned int pixelBytes,
                   std::vector<unsigned char> & header);

} // namespace cca_tool

#endif
