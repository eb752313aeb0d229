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
#ifndef itkCudaConnectedComponentAnalysisImageFilter_hxx
#define itkCudaConnectedComponentAnalysisImageFilter_hxx

#include "itkCudaConnectedComponentAnalysisImageFilter.h"
#include "itkMultiThreaderBase.h"
#include "itkNumericTraits.h"
#include "itkOutputWindow.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

namespace itk
{
template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::CudaConnectedComponentAnalysisImageFilter()
{
  // #0 "Primary" required, #1 "MaskImage" optional, as ConnectedComponentImageFilter
  Self::AddOptionalInputName("MaskImage", 1);
  m_BackgroundValue = OutputPixelType{};
  // The engines' warnings (the automatic backend's CPU fallback) go to ITK's output window, as ITK's own.
  CudaConnectedComponentAnalysisEngine::SetWarningHandler([](const char * text) {
    OutputWindowDisplayWarningText((std::string("CudaConnectedComponentAnalysisImageFilter: ") + text).c_str());
  });
  // The LabelMap is a named output: output 0, the label image, stays the only indexed one.
  this->ProcessObject::SetOutput("LabelMap", this->MakeOutput("LabelMap"));
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
DataObject::Pointer
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::MakeOutput(
  const ProcessObject::DataObjectIdentifierType & name)
{
  if (name == "LabelMap")
  {
    return LabelMapType::New().GetPointer();
  }
  return Superclass::MakeOutput(name);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::AllocateOutputs()
{
  OutputImageType * output = this->GetOutput();
  output->SetBufferedRegion(output->GetRequestedRegion());
  if (m_GenerateLabelImage)
  {
    output->Allocate();
  }
  else
  {
    // No pixel buffer: a skipped label image costs no memory.
    output->SetBufferedRegion(RegionType());
    output->Initialize();
  }
  this->PrepareLabelMap();
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::VerifyInputInformation() CCA_ITKv5_CONST
{
  Superclass::VerifyInputInformation();
  const InputImageType * input = this->GetInput();
  const MaskImageType *  mask = this->GetMaskImage();
  const ImageBase<ImageDimension> * feature = this->GetFeatureImage();
  if (input && feature &&
      feature->GetLargestPossibleRegion().GetSize() != input->GetLargestPossibleRegion().GetSize())
  {
    itkExceptionMacro(<< "The feature image's size " << feature->GetLargestPossibleRegion().GetSize()
                      << " differs from the input image's size " << input->GetLargestPossibleRegion().GetSize());
  }
  if (input && mask && mask->GetLargestPossibleRegion().GetSize() != input->GetLargestPossibleRegion().GetSize())
  {
    itkExceptionMacro(<< "The mask image's size " << mask->GetLargestPossibleRegion().GetSize()
                      << " differs from the input image's size " << input->GetLargestPossibleRegion().GetSize());
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();

  auto * input = const_cast<InputImageType *>(this->GetInput());
  if (!input)
  {
    return;
  }
  input->SetRequestedRegion(input->GetLargestPossibleRegion());

  auto * mask = const_cast<MaskImageType *>(this->GetMaskImage());
  if (mask)
  {
    mask->SetRequestedRegion(input->GetLargestPossibleRegion());
  }
  auto * feature = const_cast<ImageBase<ImageDimension> *>(this->GetFeatureImage());
  if (feature)
  {
    feature->SetRequestedRegion(input->GetLargestPossibleRegion());
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::EnlargeOutputRequestedRegion(DataObject * output)
{
  if (!m_GenerateLabelImage && output == this->GetOutput())
  {
    // Without this, a downstream filter would fail deep in the pipeline ("Region ... outside of the
    // buffered region", or an assertion in a Debug build) and every update would run the analysis again.
    itkExceptionMacro(<< "The label image (output 0) is not generated: GenerateLabelImageOff() is set. Call "
                         "GenerateLabelImageOn() to use it, or take the LabelMap (GetLabelMap()) instead.");
  }
  this->GetOutput()->SetRequestedRegion(this->GetOutput()->GetLargestPossibleRegion());
  this->GetLabelMap()->SetRequestedRegion(this->GetLabelMap()->GetLargestPossibleRegion());
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::Update()
{
  if (m_GenerateLabelImage)
  {
    Superclass::Update();
    return;
  }
  this->GetLabelMap()->Update();
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::UpdateLargestPossibleRegion()
{
  if (m_GenerateLabelImage)
  {
    Superclass::UpdateLargestPossibleRegion();
    return;
  }
  this->UpdateOutputInformation();
  LabelMapType * labelMap = this->GetLabelMap();
  labelMap->SetRequestedRegionToLargestPossibleRegion();
  labelMap->Update();
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
auto
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::MakeRequest(
  const RegionType & region) const -> EngineType::Request
{
  const InputImageType * input = this->GetInput();
  if (input->GetBufferedRegion() != region)
  {
    itkExceptionMacro(<< "The input's buffered region " << input->GetBufferedRegion() << " is not the region to label "
                      << region);
  }

  EngineType::Request request;
  request.dimension = ImageDimension;
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    request.size[d] = region.GetSize(d);
  }
  request.connectivity = cca::Connectivity::FromFullyConnected(m_FullyConnected);
  if (m_Connectivity != 0)
  {
    unsigned maxNonZero = 1;
    while (maxNonZero <= ImageDimension && NumberOfNeighbors(maxNonZero) != m_Connectivity)
    {
      ++maxNonZero;
    }
    if (maxNonZero > ImageDimension)
    {
      std::ostringstream counts;
      for (unsigned m = 1; m <= ImageDimension; ++m)
      {
        counts << (m > 1 ? (m == ImageDimension ? " or " : ", ") : "") << NumberOfNeighbors(m);
      }
      itkExceptionMacro(<< "Connectivity " << m_Connectivity << " is not a connectivity of a " << ImageDimension
                        << "-D image: " << counts.str() << " neighbors");
    }
    request.connectivity = cca::Connectivity{ maxNonZero };
  }
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    request.connectivity.periodicAxes |= m_Periodic[d] ? 1u << d : 0u;
  }
  request.connectivity.valueTolerance = m_DistanceThreshold;
  request.input = input->GetBufferPointer();
  request.inputKind = cca::ScalarKindOf<InputPixelType>();

  if (const MaskImageType * mask = this->GetMaskImage())
  {
    // Its size was checked against the input's in VerifyInputInformation().
    if (mask->GetBufferedRegion() != region)
    {
      itkExceptionMacro(<< "The mask image's buffered region " << mask->GetBufferedRegion()
                        << " is not the input's region " << region);
    }
    request.mask = mask->GetBufferPointer();
    request.maskKind = cca::ScalarKindOf<MaskPixelType>();
  }
  if (const ImageBase<ImageDimension> * feature = this->GetFeatureImage())
  {
    if (feature->GetBufferedRegion() != region)
    {
      itkExceptionMacro(<< "The feature image's buffered region " << feature->GetBufferedRegion()
                        << " is not the input's region " << region);
    }
    if (!FeatureBuffer<unsigned char, signed char, char, unsigned short, short, unsigned int, int, unsigned long,
                       long, unsigned long long, long long, float, double>(feature, request))
    {
      itkExceptionMacro(<< "The feature image (" << feature->GetNameOfClass()
                        << ") is not an itk::Image of a scalar pixel type");
    }
  }
  return request;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
template <typename... TPixels>
bool
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::FeatureBuffer(
  const ImageBase<ImageDimension> * feature,
  EngineType::Request &             request)
{
  // The first pixel type the image is an itk::Image of.
  return ([&]() {
    const auto * image = dynamic_cast<const Image<TPixels, ImageDimension> *>(feature);
    if (image)
    {
      request.feature = image->GetBufferPointer();
      request.featureKind = cca::ScalarKindOf<TPixels>();
    }
    return image != nullptr;
  }() || ...);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::GenerateData()
{
  m_ObjectCount = 0;
  m_OriginalObjectCount = 0;
  m_ComponentFeatures.clear();
  m_BackendUsed = BackendEnum::Automatic;
  m_NumberOfSlabs = 0;
  m_BackendDescription.clear();
  m_TimeSplit = TimeSplit();

  const RegionType region = this->GetOutput()->GetRequestedRegion();
  if (region.GetNumberOfPixels() == 0)
  {
    itkExceptionMacro(<< "The input region " << region << " is empty");
  }
  this->AllocateOutputs();
  // However GenerateData() ends, the LabelMap is emptied before it returns.
  struct ClearedOnExit
  {
    Self * filter;
    ~ClearedOnExit() { filter->WaitForLabelMapCleared(); }
  } clearedOnExit{ this };
  // Progress over the whole update: the engine, then the label image or the LabelMap's lines and objects.
  this->UpdateProgress(0.0f);
  try
  {
    // The stages: what to analyze, the analysis (labels and sums, on the engine), every output asked for,
    // then the results the filter keeps (counts, backend, the feature table).
    const EngineType::Request request = this->PrepareRequest(region);
    const std::uint64_t       count = this->AnalyzeRequest(request);
    this->ProduceOutputs(region, count);
    this->StoreResults(region, count);
  }
  catch (const std::bad_alloc &)
  {
    // Host allocations of the filter's own (the feature table, the LabelMap's lines' containers).
    this->WaitForLabelMapCleared();
    this->GetLabelMap()->ClearLabels();
    m_ComponentFeatures = ComponentFeaturesContainer();
    throw MemoryAllocationError(__FILE__,
                                __LINE__,
                                "Connected component analysis failed: out of host memory while storing the results",
                                ITK_LOCATION);
  }
  catch (const EngineType::MemoryError & e)
  {
    // ITK's own exception for this, so that callers that handle it (and Python) see what it is.
    std::ostringstream message;
    message << "Connected component analysis failed (" << CudaConnectedComponentAnalysisEnums::BackendName(m_Backend)
            << " backend): " << e.what();
    throw MemoryAllocationError(__FILE__, __LINE__, message.str(), ITK_LOCATION);
  }
  catch (const EngineType::Error & e)
  {
    itkExceptionMacro(<< "Connected component analysis failed ("
                      << CudaConnectedComponentAnalysisEnums::BackendName(m_Backend) << " backend): " << e.what());
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
auto
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::PrepareRequest(
  const RegionType & region) -> EngineType::Request
{
  EngineType::Request request = this->MakeRequest(region);
  request.computeShapeSums = m_GenerateLabelMap;
  // The LabelMap is built from the sums' rows; without it the feature table takes the engine's columns.
  request.keepSumsOnDevice = !m_GenerateLabelMap;
  request.computePerimeter = m_GenerateLabelMap && m_ComputePerimeter;
  request.postProcessing.minimumObjectSize = m_MinimumObjectSize;
  request.postProcessing.minimumPhysicalSize = m_MinimumPhysicalSize;
  request.postProcessing.numberOfObjectsToKeep = m_NumberOfObjectsToKeep;
  request.postProcessing.sortByObjectSize = m_SortByObjectSize;
  request.multiLabel = m_MultiLabel;
  request.postProcessing.perClass = m_PerClass;
  request.postProcessing.writeClassValues = m_OutputClassValues;
  if ((m_PerClass || m_OutputClassValues) && !m_MultiLabel)
  {
    itkExceptionMacro(<< "PerClass and OutputClassValues need multi-label input: set MultiLabelOn()");
  }
  request.memoryBudget = m_MemoryBudget;
  request.pixelVolume = 1.0; // as ShapeLabelMapFilter's sizePerPixel: the spacing's product in dimension order
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    request.pixelVolume *= this->GetInput()->GetSpacing()[d];
  }
  if (m_GenerateLabelMap && !EngineType::CanMeasureMoments(request.size))
  {
    itkExceptionMacro(<< "The image " << region.GetSize()
                      << " is too long for the LabelMap's 128-bit moment sums; use GenerateLabelMapOff()");
  }
  m_SkippedLabel = m_BackgroundValue >= OutputPixelType{} ? static_cast<std::uint64_t>(m_BackgroundValue)
                                                          : std::numeric_limits<std::uint64_t>::max();
  return request;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
std::uint64_t
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::AnalyzeRequest(
  const EngineType::Request & request)
{
  // Work units as ITK's filters take them: the CPU engine's blocks of rows and the LabelMap's parallel loops.
  // Threads as ITK's multithreader starts them: at most its maximum (ITK's pool cuts the work into several
  // work units per thread; as many threads as work units would oversubscribe the cores).
  MultiThreaderBase * threader = this->GetMultiThreader();
  threader->SetNumberOfWorkUnits(this->GetNumberOfWorkUnits());
  const unsigned numberOfThreads =
    std::max(1u, std::min<unsigned>(this->GetNumberOfWorkUnits(), threader->GetMaximumNumberOfThreads()));
  const auto          start = Clock::now();
  const std::uint64_t count =
    m_Engine.Analyze(request, m_Backend, m_DeviceId, numberOfThreads, this->GetNumberOfWorkUnits());
  m_TimeSplit.Analyze = SecondsSince(start);
  this->UpdateProgress(m_GenerateLabelMap ? 0.3f : 0.4f);
  this->ThrowIfAborted();
  if (count > static_cast<std::uint64_t>(NumericTraits<OutputPixelType>::max()))
  {
    itkExceptionMacro(<< "Number of objects (" << count << ") greater than maximum of output pixel type ("
                      << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(
                           NumericTraits<OutputPixelType>::max())
                      << ").");
  }
  return count;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::ProduceOutputs(
  const RegionType & region, std::uint64_t count)
{
  // The one place where the outputs are produced from the analysis. A new output kind (a table, statistics,
  // class values) gets a Generate<Kind> flag, a Produce<Kind>() stage and a line here (docs/ARCHITECTURE.md).
  if (!m_GenerateLabelMap)
  {
    if (m_GenerateLabelImage)
    {
      this->ProduceLabelImage();
    }
    this->UpdateProgress(1.0f);
    return;
  }
  // The LabelMap's lines come from the engine first (an engine serves one call at a time: on the GPU its
  // stream and staging buffers). Then the label image (on the GPU: written there, then copied back) is
  // written on its own thread while the LabelMap's objects are built on the host: the two need nothing from
  // each other. A failed update leaves no LabelMap behind.
  try
  {
    const EngineType::Geometry geometry = this->MakeGeometry(region);
    EngineType::Lines          lines;
    this->ExportLabelMapLines(geometry, lines);
    EngineType::RunBeside(
      [this]() {
        if (m_GenerateLabelImage)
        {
          this->ProduceLabelImage();
        }
      },
      [this, &geometry, &lines]() { this->BuildLabelMap(geometry, lines); });
  }
  catch (const std::bad_alloc &)
  {
    this->WaitForLabelMapCleared();
    this->GetLabelMap()->ClearLabels();
    throw EngineType::MemoryError("out of host memory while building the LabelMap's " + std::to_string(count) +
                                  " objects");
  }
  catch (...)
  {
    this->WaitForLabelMapCleared();
    this->GetLabelMap()->ClearLabels();
    throw;
  }
  this->UpdateProgress(1.0f);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::ProduceLabelImage()
{
  const auto    start = Clock::now();
  std::uint64_t backgroundBits = 0;
  std::memcpy(&backgroundBits, &m_BackgroundValue, sizeof(OutputPixelType));
  m_Engine.WriteLabels(
    this->GetOutput()->GetBufferPointer(), cca::ScalarKindOf<OutputPixelType>(), backgroundBits, m_SkippedLabel);
  m_TimeSplit.WriteLabels = SecondsSince(start);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::StoreResults(
  const RegionType & region, std::uint64_t count)
{
  m_ObjectCount = static_cast<LabelType>(count);
  m_OriginalObjectCount = static_cast<SizeValueType>(m_Engine.GetOriginalComponentCount());
  m_BackendUsed = m_Engine.GetBackendUsed();
  m_NumberOfSlabs = static_cast<SizeValueType>(m_Engine.GetNumberOfSlabs());
  m_BackendDescription = m_Engine.GetDescription();
  this->StoreFeatures(region);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::~CudaConnectedComponentAnalysisImageFilter()
{
  this->WaitForLabelMapCleared();
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::ThrowIfAborted()
{
  if (this->GetAbortGenerateData())
  {
    ProcessAborted aborted(__FILE__, __LINE__);
    aborted.SetDescription("CudaConnectedComponentAnalysisImageFilter: the update was aborted (AbortGenerateData)");
    aborted.SetLocation(ITK_LOCATION);
    throw aborted;
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::StoreFeatures(
  const RegionType & region)
{
  // The engine's basic columns in index space (unit spacing, identity direction, origin 0: the centroid is
  // then the region's start plus the mean index, exactly), not its ComponentSums rows: on the GPU the rows
  // would cost a download of every sum and a conversion (the filter's table within 1.5x the facade's).
  EngineType::Geometry geometry;
  geometry.dimension = ImageDimension;
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    geometry.start[d] = region.GetIndex(d);
    geometry.size[d] = region.GetSize(d);
  }
  const std::size_t          count = static_cast<std::size_t>(m_ObjectCount);
  std::vector<std::uint64_t> pixels(count);
  std::vector<std::int64_t>  boxBegin[ImageDimension], boxEnd[ImageDimension];
  std::vector<double>        centroid[ImageDimension];
  std::vector<std::int64_t>  classValue(m_MultiLabel ? count : 0);
  cca::BasicColumns          columns;
  columns.numberOfPixels = pixels.data();
  columns.classValue = m_MultiLabel ? classValue.data() : nullptr;
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    boxBegin[d].resize(count);
    boxEnd[d].resize(count);
    centroid[d].resize(count);
    columns.boundingBoxBegin[d] = boxBegin[d].data();
    columns.boundingBoxEnd[d] = boxEnd[d].data();
    columns.centroid[d] = centroid[d].data();
  }
  m_Engine.WriteBasicColumns(geometry, columns);
  m_ComponentFeatures.resize(count);
  auto store = [&](SizeValueType i) {
    ComponentFeatures & c = m_ComponentFeatures[i];
    c.Label = static_cast<OutputPixelType>(this->LabelOf(i));
    c.NumberOfPixels = static_cast<SizeValueType>(pixels[i]);
    c.ClassValue = m_MultiLabel ? classValue[i] : 0;
    IndexType boxIndex;
    SizeType  boxSize;
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      boxIndex[d] = static_cast<IndexValueType>(boxBegin[d][i]);
      boxSize[d] = static_cast<SizeValueType>(boxEnd[d][i] - boxBegin[d][i]);
      c.Centroid[d] = centroid[d][i];
    }
    c.BoundingBox.SetIndex(boxIndex);
    c.BoundingBox.SetSize(boxSize);
  };
  this->ForEachComponent(count, store);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
template <typename TFunction>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::ForEachComponent(
  SizeValueType count, const TFunction & function) const
{
  // Tens of thousands of components and more: on the filter's threads; fewer: here (waking the pool's threads
  // costs more than the loop: 28 rows took 0.07 ms through the pool).
  if (count < (SizeValueType{ 1 } << 14))
  {
    for (SizeValueType i = 0; i < count; ++i)
    {
      function(i);
    }
    return;
  }
  const_cast<Self *>(this)->GetMultiThreader()->ParallelizeArray(0, count, function, nullptr);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
std::vector<const cca::AttributeDefinition *>
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::TableAttributes(
  bool intensity)
{
  std::size_t                                   count = 0;
  const cca::AttributeDefinition * const        attributes = cca::Attributes(count);
  std::vector<const cca::AttributeDefinition *> selected;
  for (std::size_t i = 0; i < count; ++i)
  {
    const cca::AttributeDefinition & a = attributes[i];
    const bool                       wanted = intensity ? a.source == cca::AttributeSource::Intensity
                                                        : a.source == cca::AttributeSource::Basic &&
                                                            a.group != cca::AttributeGroup::OnRequest;
    if (wanted && a.itkName != nullptr)
    {
      selected.push_back(&a);
    }
  }
  return selected;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
unsigned int
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::NumberOfTableValues(
  const std::vector<const cca::AttributeDefinition *> & attributes)
{
  std::size_t values = 0;
  for (const cca::AttributeDefinition * a : attributes)
  {
    values += cca::NumberOfValues(*a, ImageDimension);
  }
  return static_cast<unsigned int>(values);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::WriteTableValues(
  const std::vector<const cca::AttributeDefinition *> & attributes, const cca::ShapeAttributes & shape,
  const cca::IntensityStatistics & intensity, vnl_matrix<double> & table, SizeValueType row, unsigned int & column)
{
  double values[cca::MaxAttributeValues];
  for (const cca::AttributeDefinition * a : attributes)
  {
    a->compute(shape, intensity, ImageDimension, values);
    for (std::size_t v = 0; v < cca::NumberOfValues(*a, ImageDimension); ++v)
    {
      table(row, column++) = values[v];
    }
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
std::string
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::TableColumnNames(
  bool intensity, bool integerOnly)
{
  std::string names = "Label";
  for (const cca::AttributeDefinition * a : TableAttributes(intensity))
  {
    if (integerOnly && !a->integer)
    {
      continue;
    }
    if (a->layout == cca::AttributeLayout::Scalar)
    {
      names += std::string(" ") + a->itkName;
      continue;
    }
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      names += std::string(" ") + a->itkName + "-" + std::to_string(d);
    }
  }
  return intensity ? names : names + " ClassValue";
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
std::string
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::GetComponentFeatureTableColumnNames()
{
  return TableColumnNames(false);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
std::string
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::GetComponentFeatureTableIntegerColumnNames()
{
  return TableColumnNames(false, true);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
vnl_matrix<double>
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::GetComponentFeatureTable() const
{
  const OutputImageType * output = this->GetOutput();
  double                  pixelVolume = 1.0;
  for (unsigned int d = 0; d < ImageDimension; ++d)
  {
    pixelVolume *= output->GetSpacing()[d];
  }
  const auto         attributes = TableAttributes(false);
  vnl_matrix<double> table(m_ComponentFeatures.size(), 2 + NumberOfTableValues(attributes)); // Label, ClassValue
  auto               row = [&](SizeValueType k) {
    const ComponentFeatures &           c = m_ComponentFeatures[k];
    typename OutputImageType::PointType centroid;
    output->TransformContinuousIndexToPhysicalPoint(c.Centroid, centroid);
    cca::ShapeAttributes shape;
    shape.numberOfPixels = c.NumberOfPixels;
    shape.physicalSize = static_cast<double>(c.NumberOfPixels) * pixelVolume;
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      shape.centroid[d] = centroid[d];
      shape.boundingBoxIndex[d] = static_cast<std::int64_t>(c.BoundingBox.GetIndex(d));
      shape.boundingBoxSize[d] = static_cast<std::uint64_t>(c.BoundingBox.GetSize(d));
    }
    unsigned int column = 0;
    table(k, column++) = static_cast<double>(c.Label);
    WriteTableValues(attributes, shape, cca::IntensityStatistics{}, table, k, column);
    table(k, column) = static_cast<double>(c.ClassValue);
  };
  this->ForEachComponent(m_ComponentFeatures.size(), row);
  return table;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
std::string
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::GetIntensityFeatureTableColumnNames()
{
  return TableColumnNames(true);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
vnl_matrix<double>
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::GetIntensityFeatureTable() const
{
  if (!m_Engine.HasIntensityStatistics())
  {
    itkExceptionMacro(<< "The last Update() had no feature image: SetFeatureImage() first");
  }
  // The region analyzed: the whole output (EnlargeOutputRequestedRegion()).
  const EngineType::Geometry geometry = this->MakeGeometry(this->GetOutput()->GetLargestPossibleRegion());
  const auto                 attributes = TableAttributes(true);
  vnl_matrix<double>         table(m_ComponentFeatures.size(), 1 + NumberOfTableValues(attributes)); // Label
  auto               row = [&](SizeValueType k) {
    cca::IntensityStatistics s;
    m_Engine.ComputeIntensityStatistics(k, geometry, s, false); // the weighted moments: the LabelMap's
    unsigned int column = 0;
    table(k, column++) = static_cast<double>(m_ComponentFeatures[k].Label);
    WriteTableValues(attributes, cca::ShapeAttributes{}, s, table, k, column);
  };
  this->ForEachComponent(m_ComponentFeatures.size(), row);
  return table;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::PrintSelf(
  std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "Connectivity: " << m_Connectivity << (m_Connectivity == 0 ? " (FullyConnected decides)" : "")
     << std::endl;
  os << indent << "Periodic: " << m_Periodic << std::endl;
  os << indent << "DistanceThreshold: " << m_DistanceThreshold << (m_DistanceThreshold < 0 ? " (none)" : "")
     << std::endl;
  os << indent << "GenerateLabelImage: " << m_GenerateLabelImage << std::endl;
  os << indent << "GenerateLabelMap: " << m_GenerateLabelMap << std::endl;
  os << indent << "ComputePerimeter: " << m_ComputePerimeter << std::endl;
  os << indent << "ComputeFeretDiameter: " << m_ComputeFeretDiameter << std::endl;
  os << indent << "ComputeOrientedBoundingBox: " << m_ComputeOrientedBoundingBox << std::endl;
  os << indent << "MinimumObjectSize: " << m_MinimumObjectSize << std::endl;
  os << indent << "MinimumPhysicalSize: " << m_MinimumPhysicalSize << std::endl;
  os << indent << "NumberOfObjectsToKeep: " << m_NumberOfObjectsToKeep << std::endl;
  os << indent << "SortByObjectSize: " << m_SortByObjectSize << std::endl;
  os << indent << "MultiLabel: " << m_MultiLabel << std::endl;
  os << indent << "PerClass: " << m_PerClass << std::endl;
  os << indent << "OutputClassValues: " << m_OutputClassValues << std::endl;
  os << indent << "OriginalObjectCount: " << m_OriginalObjectCount << std::endl;
  os << indent
     << "BackgroundValue: " << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(m_BackgroundValue)
     << std::endl;
  os << indent << "Backend: " << m_Backend << std::endl;
  os << indent << "DeviceId: " << m_DeviceId << std::endl;
  os << indent << "BackendUsed: " << m_BackendUsed << std::endl;
  os << indent << "MemoryBudget: " << m_MemoryBudget << std::endl;
  os << indent << "NumberOfSlabs: " << m_NumberOfSlabs << std::endl;
  os << indent << "BackendDescription: " << m_BackendDescription << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
  os << indent << "ComponentFeatures: " << m_ComponentFeatures.size() << " components" << std::endl;
  os << indent << "FeatureImage: " << this->GetFeatureImage() << std::endl;
}

} // namespace itk

#include "itkCudaConnectedComponentAnalysisImageFilterLabelMap.hxx"

#endif
