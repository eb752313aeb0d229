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
// The pipeline of the command-line tool `cca`, typed by the input's pixel type and dimension:
//   read (file or DICOM series) -> BinaryThresholdImageFilter to unsigned char (the foreground rule)
//   -> CudaConnectedComponentAnalysisImageFilter (uint32 labels; uint64 for images of 2^32 pixels or more)
//   -> CastImageFilter to the label type asked for -> ImageFileWriter; CSV / JSON from the LabelMap.
// The filter always sees an unsigned char image: one instantiation of it per dimension and label type,
// not one per input pixel type, and the same rule (non-zero = object) for every input.
// --multilabel is the exception: the classes are the input's values, so they reach the filter as they are, read
// (exactly) as 64-bit integers whatever the file's integer type -- again one instantiation per dimension and label
// type (uint32, or int64 for class values and images of 2^32 pixels or more), not one per pixel type.
#include "CudaConnectedComponentAnalysisTool.h"
#include "CudaConnectedComponentAnalysisToolAttributes.h"
#include "CudaConnectedComponentAnalysisToolInflate.h"
#include "CudaConnectedComponentAnalysisToolRead.h"
#include "CudaConnectedComponentAnalysisToolWrite.h"

#include "itkBinaryThresholdImageFilter.h"
#include "itkCudaConnectedComponentAnalysisImageFilter.h"
#include "itkGDCMImageIO.h"
#include "itkImageSeriesReader.h"
#include "itkMultiThreaderBase.h"
#include "itksys/SystemTools.hxx"

#include <algorithm>
#include <chrono>
#include <future>
#include <system_error>
#include <iostream>
#include <memory>
#include <type_traits>

namespace cca_tool
{
namespace
{

using Clock = std::chrono::steady_clock;

double
SecondsSince(Clock::time_point start)
{
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/** --multilabel reads the classes as this type: every integer pixel type's values but unsigned 64-bit ones above
 * 2^63 - 1, which are refused (RunTyped). */
using ClassPixelType = long long;

/** Labels `input` (the foreground as 0 / 1 from the threshold `source`, or with --multilabel the classes as they
 * are, `source` null) and writes what was asked for; with `intensity` (--intensity) the tables get its statistics. */
template <typename TLabel, typename TInputImage>
int
Analyze(const TInputImage * input, itk::ProcessObject * source,
        itk::Image<unsigned char, TInputImage::ImageDimension> * mask,
        const itk::Image<double, TInputImage::ImageDimension> * intensity, const Options & options,
        const InputDescription & description, Json & header, Report & report, ProgressBar & bar)
{
  constexpr unsigned int D = TInputImage::ImageDimension;
  using BinaryImageType = itk::Image<unsigned char, D>;
  using LabelImageType = itk::Image<TLabel, D>;
  using FilterType = itk::CudaConnectedComponentAnalysisImageFilter<TInputImage, LabelImageType, BinaryImageType>;
  const bool tables = !options.csv.empty() || !options.json.empty();

  auto filter = FilterType::New();
  filter->SetInput(input);
  if (mask)
  {
    filter->SetMaskImage(mask);
  }
  if (intensity)
  {
    filter->SetFeatureImage(intensity);
  }
  filter->SetFullyConnected(options.fullyConnected);
  if (options.connectivityNeighbors != 0)
  {
    filter->SetConnectivity(options.connectivityNeighbors);
  }
  if (!options.periodicAll && options.periodicAxes >> D != 0)
  {
    throw itk::ExceptionObject(
      __FILE__, __LINE__, "--periodic: a " + std::to_string(D) + "-D image has no axis " + "xyz"[D], ITK_LOCATION);
  }
  typename FilterType::PeriodicType periodic;
  for (unsigned d = 0; d < D; ++d)
  {
    periodic[d] = ((options.periodicAxes >> d) & 1u) != 0;
  }
  filter->SetPeriodic(periodic);
  filter->SetMinimumObjectSize(options.minimumObjectSize);
  filter->SetMinimumPhysicalSize(options.minimumPhysicalSize);
  filter->SetNumberOfObjectsToKeep(options.numberOfObjectsToKeep);
  filter->SetSortByObjectSize(options.sortByObjectSize);
  filter->SetBackend(options.backend);
  filter->SetDeviceId(options.deviceId);
  filter->SetMemoryBudget(static_cast<itk::SizeValueType>(options.memoryBudget));
  filter->SetComputeFeretDiameter(options.feretDiameter);
  filter->SetComputeOrientedBoundingBox(options.orientedBoundingBox);
  filter->SetMultiLabel(options.multiLabel);
  filter->SetPerClass(options.perClass);
  filter->SetOutputClassValues(options.classValues);
  // Only what is written is produced: the LabelMap for the tables, the label image for --output (the
  // summary's largest objects come from the component features, which every update fills).
  filter->SetGenerateLabelMap(tables);
  filter->SetGenerateLabelImage(!options.output.empty() || !options.contacts.empty() || !tables);

  const auto start = Clock::now();
  bar.Start("labeling");
  if (source)
  {
    bar.Watch(source, 0.0, 0.05);
  }
  bar.Watch(filter, source ? 0.05 : 0.0, 1.0);
  try
  {
    filter->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    // The filter's checks of the feature image said with the option that gave it: its size and no slabs (the
    // filter's messages name the feature image), its geometry (ITK's "Inputs do not occupy the same physical space"
    // names no input reliably: the feature image's when its geometry is not the input's). Any other failure as it is.
    const std::string what = e.GetDescription();
    if (intensity &&
        (what.find("feature image") != std::string::npos ||
         (what.find("same physical space") != std::string::npos &&
          !SameSpace(
            intensity, filter->GetInput(), filter->GetCoordinateTolerance(), filter->GetDirectionTolerance()))))
    {
      throw ToolError(ExitFailure, "--intensity " + options.intensity + ": " + what);
    }
    throw;
  }
  bar.Finish();
  report.analyzeSeconds = report.engineWaitSeconds + SecondsSince(start);

  report.labeled = filter->GetOriginalObjectCount();
  report.kept = filter->GetObjectCount();
  if (report.labeled == 0 && options.failIfEmpty)
  {
    throw ToolError(ExitEmptySelection,
                    "no foreground pixel: no pixel of " + report.input + " has " + report.foreground +
                      " (nothing labeled, nothing written: --fail-if-empty)");
  }
  // The label image's type: with --class-values the classes', by default the input's own (which holds them all);
  // else the labels', by default the smallest that holds the count.
  const auto & features = filter->GetComponentFeatures();
  std::string  labelType = options.labelType;
  if (labelType.empty())
  {
    labelType = options.classValues ? ClassTypeName(description.componentType) : SmallestLabelType(report.kept);
  }
  if (options.classValues)
  {
    for (const auto & f : features)
    {
      // a class is written as it is, never wrapped around into the label type
      if (!FitsType(f.ClassValue, labelType))
      {
        throw ToolError(ExitLabelOverflow,
                        "the class value " + std::to_string(f.ClassValue) + " does not fit in the label type " +
                          labelType + " (--class-values writes the classes as they are; nothing written)");
      }
    }
  }
  else if (report.kept > LabelTypeMax(labelType))
  {
    throw ToolError(ExitLabelOverflow,
                    std::to_string(report.kept) + " objects do not fit in the label type " + labelType + " (at most " +
                      std::to_string(LabelTypeMax(labelType)) + " labels); use --label-type " +
                      SmallestLabelType(report.kept) + " (nothing written)");
  }
  if (report.kept == 0 && report.labeled > 0)
  {
    std::cerr << "cca: warning: none of the " << report.labeled
              << " objects passed --min-size / --min-physical-size / --keep: the labels are all background"
              << std::endl;
  }
  report.backend = std::string(itk::CudaConnectedComponentAnalysisEnums::BackendName(filter->GetBackendUsed())) +
                   ": " + filter->GetBackendDescription() +
                   (report.backendNote.empty() ? std::string() : " (" + report.backendNote + ")");

  // The five largest objects, from the features (label order; ties stay in label order).
  double pixelVolume = 1.0;
  for (unsigned int d = 0; d < D; ++d)
  {
    pixelVolume *= filter->GetInput()->GetSpacing()[d];
  }
  std::vector<std::size_t> order(features.size());
  for (std::size_t i = 0; i < order.size(); ++i)
  {
    order[i] = i;
  }
  const std::size_t shown = std::min<std::size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + shown, order.end(), [&features](std::size_t a, std::size_t b) {
    return features[a].NumberOfPixels > features[b].NumberOfPixels ||
           (features[a].NumberOfPixels == features[b].NumberOfPixels && a < b);
  });
  for (std::size_t i = 0; i < shown; ++i)
  {
    const auto & f = features[order[i]];
    report.largestLabel.push_back(static_cast<std::uint64_t>(f.Label));
    if (options.multiLabel)
    {
      report.largestClass.push_back(f.ClassValue);
    }
    report.largestPixels.push_back(f.NumberOfPixels);
    report.largestSize.push_back(static_cast<double>(f.NumberOfPixels) * pixelVolume);
  }

  // Every output into a staging folder beside it, moved into place only when all are written.
  const auto    writeStart = Clock::now();
  StagedOutputs staged;
  if (!options.output.empty())
  {
    WriteLabelImageAs(filter->GetOutput(), staged.Stage(options.output), options.output, labelType, bar);
    report.written.push_back(options.output + " (" + labelType + (options.classValues ? " class values)" : " labels)"));
  }
  if (!options.contacts.empty())
  {
    // The objects that touch, at the labeling's connectivity, on the engine that labeled.
    const LabelImageType *   labels = filter->GetOutput();
    itk::cca::ContactRequest contactRequest;
    contactRequest.dimension = D;
    std::vector<double> spacing(D);
    for (unsigned d = 0; d < D; ++d)
    {
      contactRequest.size[d] = labels->GetBufferedRegion().GetSize(d);
      spacing[d] = labels->GetSpacing()[d];
    }
    contactRequest.labels = labels->GetBufferPointer();
    contactRequest.labelKind = itk::cca::ScalarKindOf<TLabel>();
    contactRequest.connectivity.maxNonZero =
      options.connectivityNeighbors == 18 ? 2u : options.fullyConnected ? static_cast<unsigned>(D) : 1u;
    itk::CudaConnectedComponentAnalysisEngine contactEngine;
    const itk::cca::ContactTable               contactTable =
      contactEngine.ComputeContacts(contactRequest, filter->GetBackendUsed(), options.deviceId, 0);
    WriteContactsCSV(staged.Stage(options.contacts), contactTable, spacing);
    report.written.push_back(options.contacts + " (" + std::to_string(contactTable.Size()) + " touching pairs)");
  }
  if (tables)
  {
    using LabelObjectType = typename FilterType::LabelMapType::LabelObjectType;
    const auto *           labelMap = filter->GetLabelMap();
    std::vector<ObjectRow> rows;
    rows.reserve(labelMap->GetNumberOfLabelObjects());
    // --intensity: one row of statistics per component, in the features' (label) order.
    std::unique_ptr<IntensityColumns> intensityColumns;
    vnl_matrix<double>                intensityTable;
    if (intensity)
    {
      intensityColumns = std::make_unique<IntensityColumns>(FilterType::GetIntensityFeatureTableColumnNames(), D);
      intensityTable = filter->GetIntensityFeatureTable();
      if (intensityTable.rows() != features.size())
      {
        throw ToolError(ExitFailure, "the intensity statistics are not the filter's components"); // not reached
      }
    }
    // The LabelMap's objects and the features are both in label order, one per kept object; the features carry
    // the class, which a ShapeLabelObject has no attribute for.
    std::size_t k = 0;
    for (typename FilterType::LabelMapType::ConstIterator it(labelMap); !it.IsAtEnd(); ++it, ++k)
    {
      if (k >= features.size() || features[k].Label != it.GetLabel())
      {
        throw ToolError(ExitFailure, "the LabelMap's objects are not the filter's components"); // not reached
      }
      rows.push_back(AttributesOf(*it.GetLabelObject(), options, features[k].ClassValue));
      if (intensityColumns)
      {
        if (intensityTable(k, intensityColumns->LabelColumn()) != static_cast<double>(it.GetLabel()))
        {
          throw ToolError(ExitFailure, "the intensity statistics are not the LabelMap's objects"); // not reached
        }
        intensityColumns->Append(rows.back(), intensityTable[static_cast<unsigned int>(k)]);
      }
    }
    if (!options.csv.empty())
    {
      ObjectRow layout = AttributesOf(*LabelObjectType::New(), options);
      if (intensityColumns)
      {
        intensityColumns->Append(layout, nullptr);
      }
      WriteCSV(staged.Stage(options.csv), layout, rows);
      report.written.push_back(options.csv);
    }
    if (!options.json.empty())
    {
      header["objectsLabeled"] = report.labeled;
      header["objectsKept"] = report.kept;
      header["labelType"] = labelType;
      if (options.multiLabel) // not in a binary input's header, which stays as it was
      {
        header["classValues"] = options.classValues;
      }
      header["backend"] = { { "requested", options.backendName },
                            { "used", itk::CudaConnectedComponentAnalysisEnums::BackendName(filter->GetBackendUsed()) },
                            { "description", filter->GetBackendDescription() },
                            { "slabs", filter->GetNumberOfSlabs() } };
      header["seconds"] = { { "read", report.readSeconds }, { "analyze", report.analyzeSeconds } };
      WriteJSON(staged.Stage(options.json), header, rows);
      report.written.push_back(options.json);
    }
  }
  staged.Commit();
  report.writeSeconds = SecondsSince(writeStart);
  return ExitOk;
}

/** `requested` with --backend auto decided as one process that labels one image should: the CPU engine below
 * ToolCudaFromPixelsPerThread pixels per CPU thread. Such a process pays the CUDA engine's start-up and tear-down
 * (0.2-0.3 s on an H200 host, not all hidden by the read) with every image, where a library user pays them once.
 * Measured there on 16 threads, whole calls of `cca` (read, labels and table): a sparse CT-like volume of 78.6 M
 * pixels 0.39-0.44 s on the CPU engine against 0.54-0.72 on the GPU; dense random volumes (d = 0.6, every pixel its
 * own block) 256^3 0.38-0.40 s against 0.59-0.70, 384^3 1.08-1.25 against 0.91-1.14, 512^3 2.8-3.0 against
 * 1.7-2.2; 512^3 at d = 0.2 in blocks of 4: 0.75-0.78 against 0.82-0.87. A batch (one process, many images) keeps
 * the library's rule. */
constexpr std::uint64_t ToolCudaFromPixelsPerThread = std::uint64_t{ 6 } << 20;

Options
WithToolBackend(const Options & requested, const InputDescription & input, std::string & note)
{
  Options            options = requested;
  const unsigned int threads = itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads();
  if (requested.backend == itk::CudaConnectedComponentAnalysisEnums::Backend::Automatic && !requested.batch &&
      input.numberOfPixels < ToolCudaFromPixelsPerThread * threads)
  {
    options.backend = itk::CudaConnectedComponentAnalysisEnums::Backend::CPU;
    note = "auto: one image under " + std::to_string(ToolCudaFromPixelsPerThread >> 20) +
           " Mi pixels per CPU thread (" + std::to_string(threads) +
           " here), where the GPU's start-up costs more than it saves";
  }
  return options;
}

/** Reads the input as TPixel, selects the foreground and hands over to Analyze. */
template <typename TPixel, unsigned int D>
int
RunTyped(const Options & requested, const InputDescription & input)
{
  using InputImageType = itk::Image<TPixel, D>;
  using BinaryImageType = itk::Image<unsigned char, D>;
  Report        report;
  const Options options = WithToolBackend(requested, input, report.backendNote);
  report.input = input.stackCase >= 0 ? input.path + " [" + std::to_string(input.stackCase) + "]" : input.path;
  report.foreground = ForegroundRule(options);
  report.sizeUnit = D == 2 ? "mm^2" : "mm^3";

  // Checked before reading: a range with no value of the pixel type in it selects nothing.
  TPixel     lower{};
  TPixel     upper{};
  const bool nonZero = !options.hasLower && !options.hasUpper;
  const bool nothingSelected = !nonZero && !SelectionRange(options, lower, upper);
  if (nothingSelected && options.failIfEmpty)
  {
    throw ToolError(ExitEmptySelection,
                    "empty selection: no value of the pixel type (" + input.componentName + ") has " +
                      report.foreground + " (nothing labeled, nothing written: --fail-if-empty)");
  }

  // The CUDA engine starts (driver, context, module, buffers: a few hundred milliseconds) on a thread of its own
  // beside the read, which takes as long or longer for the images that go to the GPU.
  std::future<bool> engineStart;
  if (options.backend != itk::CudaConnectedComponentAnalysisEnums::Backend::CPU)
  {
    try
    {
      engineStart = std::async(std::launch::async, [&options, &input]() {
        return itk::CudaConnectedComponentAnalysisEngine::StartEngine(
          options.backend, options.deviceId, input.numberOfPixels);
      });
    }
    catch (const std::system_error &)
    {
      // no thread to be had: the analysis starts its engine itself
    }
  }

  ProgressBar                      bar(options.progress);
  const auto                       readStart = Clock::now();
  typename InputImageType::Pointer image;
  // A .nii.gz is decompressed once, checked whole: on every core straight into the image's buffer where its header
  // allows (a 157 MB CT volume in 0.22 s on 16 cores), else into a copy in memory that ITK reads (InflatedCopy: 0.67
  // s instead of zlib's 0.96 s, the check's second inflation gone). Otherwise the input's completeness check
  // decompresses its data a second time: on a thread of its own, beside the read (a 61 MB .nii.gz: 0.5 s, as long as
  // the read itself). Either verdict comes before ITK's: a cut file makes ITK's reader fail in ways that say less.
  std::future<void>             verification;
  std::shared_ptr<InflatedCopy> inflated;
  if (input.inflateData.into)
  {
    bar.Start("decompressing");
    try
    {
      image = ReadInflatedImage<InputImageType>(input.path, input.inflateData.into, report.inflatingThreads);
      report.inflatedInPlace = image != nullptr;
    }
    catch (const itk::ExceptionObject &)
    {
      image = nullptr; // read and said the usual way below
    }
    bar.Finish();
  }
  if (!image && input.inflateData.copy)
  {
    bar.Start("decompressing");
    inflated = input.inflateData.copy(); // throws the check's ToolError: nothing read
    report.inflatingThreads = inflated ? 1 : 0;
    report.inflatedInPlace = false;
    bar.Finish();
  }
  else if (input.verifyData)
  {
    try
    {
      verification = std::async(std::launch::async, input.verifyData);
    }
    catch (const std::system_error &)
    {
      input.verifyData(); // no thread to be had: before the read
    }
  }
  const auto verified = [&verification]() {
    if (verification.valid())
    {
      verification.get(); // rethrows the check's ToolError
    }
  };
  try
  {
    bar.Start("reading");
    if constexpr (D == 3)
    {
      if (input.dicomSeries)
      {
        auto reader = itk::ImageSeriesReader<InputImageType>::New();
        reader->SetImageIO(itk::GDCMImageIO::New());
        reader->SetFileNames(input.fileNames);
        bar.Watch(reader, 0.0, 1.0);
        reader->Update();
        image = reader->GetOutput();
      }
    }
    if (!image && input.stackCase >= 0)
    {
      image = ReadCaseOfFile<TPixel, D>(input, bar);
    }
    if (!image)
    {
      image = ReadImageFile<InputImageType>(inflated ? inflated->Path() : input.path, bar);
    }
    inflated.reset(); // its memory back before the analysis
    image->DisconnectPipeline();
    bar.Finish();
  }
  catch (const itk::ExceptionObject & e)
  {
    verified();
    throw ToolError(ExitCannotRead, "cannot read " + input.path + ": " + e.GetDescription());
  }
  verified();
  typename BinaryImageType::Pointer mask;
  if (!options.mask.empty())
  {
    mask = ReadMask<D>(options.mask, bar);
    // On another grid the filter would refuse it with ITK's raw comparison: a bad input, said plainly.
    const std::string difference =
      SpaceDifference<D>(mask,
                         image,
                         itk::ImageToImageFilterCommon::GetGlobalDefaultCoordinateTolerance(),
                         itk::ImageToImageFilterCommon::GetGlobalDefaultDirectionTolerance());
    if (!difference.empty())
    {
      throw ToolError(ExitCannotRead,
                      "the mask " + options.mask + " is not on the input's grid: its " + difference + " (the input's)");
    }
  }
  typename itk::Image<double, D>::Pointer intensity;
  if (!options.intensity.empty())
  {
    intensity = ReadIntensity<D>(options.intensity, bar);
  }
  report.readSeconds = SecondsSince(readStart);
  const auto engineWaitStart = Clock::now();
  if (engineStart.valid())
  {
    engineStart.get();
  }
  report.engineWaitSeconds = SecondsSince(engineWaitStart);

  // The image as the summary and the JSON header describe it.
  const auto & region = image->GetLargestPossibleRegion();
  Geometry     geometry;
  for (unsigned int d = 0; d < D; ++d)
  {
    geometry.size.push_back(region.GetSize(d));
    geometry.spacing.push_back(image->GetSpacing()[d]);
    geometry.origin.push_back(image->GetOrigin()[d]);
    for (unsigned int e = 0; e < D; ++e)
    {
      geometry.direction.push_back(image->GetDirection()(d, e));
    }
  }
  Json header;
  DescribeInput(options, input, geometry, report, header);

  // uint32 labels, as ConnectedComponentImageFilter's usual output; images of 2^32 pixels or more can
  // hold more objects than that.
  const bool large = region.GetNumberOfPixels() >= (std::uint64_t{ 1 } << 32);
  int        code = ExitFailure;
  if (options.multiLabel)
  {
    // The classes as they are (DispatchPixel read every integer file as ClassPixelType); int64 labels where the
    // label image holds the classes, which may be negative.
    if constexpr (std::is_same<TPixel, ClassPixelType>::value)
    {
      if (input.componentType == itk::IOComponentEnum::ULONG || input.componentType == itk::IOComponentEnum::ULONGLONG)
      {
        // An unsigned file has no negative value: one here is a value above 2^63 - 1, wrapped by the read.
        const TPixel * pixels = image->GetBufferPointer();
        if (std::any_of(pixels, pixels + region.GetNumberOfPixels(), [](TPixel v) { return v < 0; }))
        {
          throw ToolError(ExitUnsupported,
                          "--multilabel: " + input.path +
                            " holds class values above 2^63 - 1, which cca does not read as classes");
        }
      }
      code = options.classValues || large ? Analyze<std::int64_t>(image.GetPointer(),
                                                                  nullptr,
                                                                  mask.GetPointer(),
                                                                  intensity.GetPointer(),
                                                                  options,
                                                                  input,
                                                                  header,
                                                                  report,
                                                                  bar)
                                          : Analyze<std::uint32_t>(image.GetPointer(),
                                                                   nullptr,
                                                                   mask.GetPointer(),
                                                                   intensity.GetPointer(),
                                                                   options,
                                                                   input,
                                                                   header,
                                                                   report,
                                                                   bar);
    }
    else
    {
      throw ToolError(ExitFailure, "--multilabel: classes not read as 64-bit integers"); // not reached
    }
  }
  else
  {
    // The foreground as 0 / 1: [lower, upper] inside, or (non-zero rule) everything but [0, 0].
    auto threshold = itk::BinaryThresholdImageFilter<InputImageType, BinaryImageType>::New();
    threshold->SetInput(image);
    threshold->SetLowerThreshold(nonZero ? TPixel{} : lower);
    threshold->SetUpperThreshold(nonZero ? TPixel{} : upper);
    threshold->SetInsideValue(nonZero || nothingSelected ? 0 : 1);
    threshold->SetOutsideValue(nonZero ? 1 : 0);
    code = large ? Analyze<std::uint64_t>(threshold->GetOutput(),
                                          threshold,
                                          mask.GetPointer(),
                                          intensity.GetPointer(),
                                          options,
                                          input,
                                          header,
                                          report,
                                          bar)
                 : Analyze<std::uint32_t>(threshold->GetOutput(),
                                          threshold,
                                          mask.GetPointer(),
                                          intensity.GetPointer(),
                                          options,
                                          input,
                                          header,
                                          report,
                                          bar);
  }
  if (!options.quiet)
  {
    PrintSummary(report);
  }
  return code;
}

template <unsigned int D>
int
DispatchPixel(const Options & options, const InputDescription & input)
{
  if (options.multiLabel)
  {
    // Classes are integers, read as ClassPixelType whatever the file's integer type (ITK's reader converts each
    // value exactly); a float image's values would be truncated into classes, so it is refused before any read.
    switch (input.componentType)
    {
      case itk::IOComponentEnum::UCHAR:
      case itk::IOComponentEnum::CHAR:
      case itk::IOComponentEnum::USHORT:
      case itk::IOComponentEnum::SHORT:
      case itk::IOComponentEnum::UINT:
      case itk::IOComponentEnum::INT:
      case itk::IOComponentEnum::ULONG:
      case itk::IOComponentEnum::LONG:
      case itk::IOComponentEnum::ULONGLONG:
      case itk::IOComponentEnum::LONGLONG:
        return RunTyped<ClassPixelType, D>(options, input);
      case itk::IOComponentEnum::FLOAT:
      case itk::IOComponentEnum::DOUBLE:
        throw ToolError(ExitUnsupported,
                        "--multilabel: " + input.path + " has " + input.componentName +
                          " pixels; the classes of a multi-label image need an integer pixel type (convert it, "
                          "or label it without --multilabel)");
      default:
        break; // refused below as without --multilabel
    }
  }
  switch (input.componentType)
  {
    case itk::IOComponentEnum::UCHAR:
      return RunTyped<unsigned char, D>(options, input);
    case itk::IOComponentEnum::CHAR:
      return RunTyped<char, D>(options, input);
    case itk::IOComponentEnum::USHORT:
      return RunTyped<unsigned short, D>(options, input);
    case itk::IOComponentEnum::SHORT:
      return RunTyped<short, D>(options, input);
    case itk::IOComponentEnum::UINT:
      return RunTyped<unsigned int, D>(options, input);
    case itk::IOComponentEnum::INT:
      return RunTyped<int, D>(options, input);
    // long is 32 or 64 bits by platform: both widths read without loss into the 64-bit types
    case itk::IOComponentEnum::ULONG:
    case itk::IOComponentEnum::ULONGLONG:
      return RunTyped<unsigned long long, D>(options, input);
    case itk::IOComponentEnum::LONG:
    case itk::IOComponentEnum::LONGLONG:
      return RunTyped<long long, D>(options, input);
    case itk::IOComponentEnum::FLOAT:
      return RunTyped<float, D>(options, input);
    case itk::IOComponentEnum::DOUBLE:
      return RunTyped<double, D>(options, input);
    default:
      throw ToolError(ExitUnsupported,
                      input.path + " has pixels of component type " + input.componentName +
                        ", which cca does not read");
  }
}

} // namespace

int
RunTool(const Options & options, const InputDescription & input)
{
  return input.dimension == 2 ? DispatchPixel<2>(options, input) : DispatchPixel<3>(options, input);
}

} // namespace cca_tool
