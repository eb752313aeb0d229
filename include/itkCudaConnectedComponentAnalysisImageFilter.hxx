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
#include "itkCCAShapeLabelMapBuilder.h"
#include "itkMultiThreaderBase.h"
#include "itkNumericTraits.h"
#include "itkProgressTransformer.h"

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
  LabelMapType * labelMap = this->GetLabelMap();
  labelMap->SetBufferedRegion(labelMap->GetRequestedRegion());
  labelMap->SetBackgroundValue(m_BackgroundValue);
  // The previous update's objects (millions, each with its lines) are freed on their own thread while the
  // analysis runs; GenerateData() waits for it before the first new object enters the map
  // (WaitForLabelMapCleared()). Nothing else touches the LabelMap until then.
  this->WaitForLabelMapCleared();
  if (labelMap->GetNumberOfLabelObjects() > 0)
  {
    // A few threads (at most a quarter of the work units): the rest serve the analysis meanwhile.
    const unsigned threads = std::min(4u, std::max(1u, this->GetNumberOfWorkUnits() / 4));
    auto           clear = [this, labelMap, threads]() {
      const auto start = std::chrono::steady_clock::now();
      CCAShapeLabelMapBuilder<LabelMapType>::Clear(labelMap, threads); // noexcept
      m_TimeSplit.ClearLabelMap = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    try
    {
      m_LabelMapClearer = std::thread(clear);
    }
    catch (const std::system_error &)
    {
      clear(); // no thread to be had: here, first
    }
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::VerifyInputInformation() CCA_ITKv5_CONST
{
  Superclass::VerifyInputInformation();
  const InputImageType * input = this->GetInput();
  const MaskImageType *  mask = this->GetMaskImage();
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
  request.fullyConnected = m_FullyConnected;
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
  return request;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::GenerateData()
{
  m_ObjectCount = 0;
  m_OriginalObjectCount = 0;
  m_ComponentFeatures.clear();
  m_BackendUsed = BackendEnum::Automatic;
  m_BackendDescription.clear();

  m_TimeSplit = TimeSplit();
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };

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
  OutputImageType *   output = this->GetOutput();
  EngineType::Request request = this->MakeRequest(region);
  request.computeShapeSums = m_GenerateLabelMap;
  request.computePerimeter = m_GenerateLabelMap && m_ComputePerimeter;
  request.postProcessing.minimumObjectSize = m_MinimumObjectSize;
  request.postProcessing.minimumPhysicalSize = m_MinimumPhysicalSize;
  request.postProcessing.numberOfObjectsToKeep = m_NumberOfObjectsToKeep;
  request.postProcessing.sortByObjectSize = m_SortByObjectSize;
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
  // Work units as ITK's filters take them: the CPU engine's blocks of rows and the LabelMap's parallel loops.
  // Threads as ITK's multithreader starts them: at most its maximum (ITK's pool cuts the work into several
  // work units per thread; as many threads as work units would oversubscribe the cores).
  MultiThreaderBase * threader = this->GetMultiThreader();
  threader->SetNumberOfWorkUnits(this->GetNumberOfWorkUnits());
  const unsigned numberOfThreads =
    std::max(1u, std::min<unsigned>(this->GetNumberOfWorkUnits(), threader->GetMaximumNumberOfThreads()));
  // Progress over the whole update: the engine, then the label image or the LabelMap's lines and objects.
  this->UpdateProgress(0.0f);
  try
  {
    auto                t0 = Clock::now();
    const std::uint64_t count =
      m_Engine.Analyze(request, m_Backend, m_DeviceId, numberOfThreads, this->GetNumberOfWorkUnits());
    m_TimeSplit.Analyze = seconds(t0);
    this->UpdateProgress(m_GenerateLabelMap ? 0.3f : 0.4f);
    this->ThrowIfAborted();

    if (count > static_cast<std::uint64_t>(NumericTraits<OutputPixelType>::max()))
    {
      itkExceptionMacro(<< "Number of objects (" << count << ") greater than maximum of output pixel type ("
                        << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(
                             NumericTraits<OutputPixelType>::max())
                        << ").");
    }

    std::uint64_t backgroundBits = 0;
    std::memcpy(&backgroundBits, &m_BackgroundValue, sizeof(OutputPixelType));
    auto writeLabels = [this, output, backgroundBits]() {
      const auto start = Clock::now();
      m_Engine.WriteLabels(
        output->GetBufferPointer(), cca::ScalarKindOf<OutputPixelType>(), backgroundBits, m_SkippedLabel);
      m_TimeSplit.WriteLabels = std::chrono::duration<double>(Clock::now() - start).count();
    };
    if (!m_GenerateLabelMap)
    {
      if (m_GenerateLabelImage)
      {
        writeLabels();
      }
      this->UpdateProgress(1.0f);
    }
    else
    {
      t0 = Clock::now();
      const EngineType::Geometry geometry = this->MakeGeometry(region);
      EngineType::Lines          lines;
      m_Engine.ComputeLines(geometry, lines);
      m_TimeSplit.ExportRuns = seconds(t0);
      this->UpdateProgress(0.4f);
      this->ThrowIfAborted();

      // The label image (on the GPU: written there, then copied back) is written on its own thread while
      // the LabelMap is built: the two need nothing from each other.
      std::exception_ptr writeError;
      std::thread        writer;
      if (m_GenerateLabelImage)
      {
        auto write = [&writeLabels, &writeError]() {
          try
          {
            writeLabels();
          }
          catch (...)
          {
            writeError = std::current_exception();
          }
        };
        try
        {
          writer = std::thread(write);
        }
        catch (const std::system_error &)
        {
          write(); // no thread to be had: before the LabelMap instead of beside it
        }
      }
      const auto joinWriter = [&writer]() {
        if (writer.joinable())
        {
          writer.join();
        }
      };
      try
      {
        t0 = Clock::now();
        EngineType::ShapeOptions options;
        options.computePerimeter = m_ComputePerimeter;
        options.computeFeretDiameter = m_ComputeFeretDiameter;
        options.computeOrientedBoundingBox = m_ComputeOrientedBoundingBox;
        const auto          calculator = m_Engine.MakeShapeAttributeCalculator(geometry, options, lines);
        ProgressTransformer objectsProgress(0.4f, 1.0f, this);
        CCAShapeLabelMapBuilder<LabelMapType>::Build(
          this->GetLabelMap(),
          lines,
          *calculator,
          options,
          [this](std::uint64_t k) { return this->LabelOf(k); },
          threader,
          objectsProgress.GetProcessObject(),
          [this]() { this->WaitForLabelMapCleared(); });
        m_TimeSplit.BuildLabelMap = seconds(t0);
      }
      catch (const std::bad_alloc &)
      {
        joinWriter();
        this->WaitForLabelMapCleared();
        this->GetLabelMap()->ClearLabels();
        throw EngineType::MemoryError("out of host memory while building the LabelMap's " + std::to_string(count) +
                                      " objects");
      }
      catch (...)
      {
        joinWriter();
        throw;
      }
      joinWriter();
      if (writeError)
      {
        // The update failed: its LabelMap must not stay behind as if it had not.
        this->WaitForLabelMapCleared();
        this->GetLabelMap()->ClearLabels();
        std::rethrow_exception(writeError);
      }
      this->UpdateProgress(1.0f);
    }

    m_ObjectCount = static_cast<LabelType>(count);
    m_OriginalObjectCount = static_cast<SizeValueType>(m_Engine.GetOriginalComponentCount());
    m_BackendUsed = m_Engine.GetBackendUsed();
    m_BackendDescription = m_Engine.GetDescription();
    this->StoreFeatures(region);
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
    message << "Connected component analysis failed (" << m_Backend << "): " << e.what();
    throw MemoryAllocationError(__FILE__, __LINE__, message.str(), ITK_LOCATION);
  }
  catch (const EngineType::Error & e)
  {
    itkExceptionMacro(<< "Connected component analysis failed (" << m_Backend << "): " << e.what());
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::~CudaConnectedComponentAnalysisImageFilter()
{
  this->WaitForLabelMapCleared();
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::WaitForLabelMapCleared()
{
  if (m_LabelMapClearer.joinable())
  {
    m_LabelMapClearer.join();
  }
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
auto
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::MakeGeometry(
  const RegionType & region) const -> EngineType::Geometry
{
  const OutputImageType * output = this->GetOutput();
  EngineType::Geometry    geometry;
  geometry.dimension = ImageDimension;
  for (unsigned int i = 0; i < ImageDimension; ++i)
  {
    geometry.start[i] = region.GetIndex(i);
    geometry.size[i] = region.GetSize(i);
    geometry.origin[i] = output->GetOrigin()[i];
    geometry.spacing[i] = output->GetSpacing()[i];
    for (unsigned int j = 0; j < ImageDimension; ++j)
    {
      geometry.direction[i][j] = output->GetDirection()[i][j];
    }
  }
  return geometry;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::StoreFeatures(
  const RegionType & region)
{
  const auto & raw = m_Engine.GetComponentSums();
  m_ComponentFeatures.resize(raw.size());
  const IndexType start = region.GetIndex();
  // Millions of components on the GPU path: convert them on the filter's threads.
  this->GetMultiThreader()->ParallelizeArray(
    0,
    raw.size(),
    [&](SizeValueType i) {
      const cca::ComponentSums & r = raw[i];
      ComponentFeatures &        c = m_ComponentFeatures[i];
      c.Label = static_cast<OutputPixelType>(this->LabelOf(i));
      c.NumberOfPixels = static_cast<SizeValueType>(r.numberOfPixels);
      IndexType boxIndex;
      SizeType  boxSize;
      for (unsigned int d = 0; d < ImageDimension; ++d)
      {
        boxIndex[d] = start[d] + static_cast<IndexValueType>(r.boundingBoxMin[d]);
        boxSize[d] = static_cast<SizeValueType>(r.boundingBoxMax[d] - r.boundingBoxMin[d] + 1);
        c.Centroid[d] =
          static_cast<double>(start[d]) + static_cast<double>(r.indexSum[d]) / static_cast<double>(r.numberOfPixels);
      }
      c.BoundingBox.SetIndex(boxIndex);
      c.BoundingBox.SetSize(boxSize);
    },
    nullptr);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
std::string
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage,
                                          TOutputLabelMap>::GetComponentFeatureTableColumnNames()
{
  std::string names = "Label NumberOfPixels PhysicalSize";
  for (const char * attribute : { "Centroid", "BoundingBoxIndex", "BoundingBoxSize" })
  {
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      names += std::string(" ") + attribute + "-" + std::to_string(d);
    }
  }
  return names;
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
  vnl_matrix<double> table(m_ComponentFeatures.size(), 3 + 3 * ImageDimension);
  for (std::size_t k = 0; k < m_ComponentFeatures.size(); ++k)
  {
    const ComponentFeatures &           c = m_ComponentFeatures[k];
    typename OutputImageType::PointType centroid;
    output->TransformContinuousIndexToPhysicalPoint(c.Centroid, centroid);
    table(k, 0) = static_cast<double>(c.Label);
    table(k, 1) = static_cast<double>(c.NumberOfPixels);
    table(k, 2) = static_cast<double>(c.NumberOfPixels) * pixelVolume;
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      table(k, 3 + d) = centroid[d];
      table(k, 3 + ImageDimension + d) = static_cast<double>(c.BoundingBox.GetIndex(d));
      table(k, 3 + 2 * ImageDimension + d) = static_cast<double>(c.BoundingBox.GetSize(d));
    }
  }
  return table;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::PrintSelf(
  std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "GenerateLabelImage: " << m_GenerateLabelImage << std::endl;
  os << indent << "GenerateLabelMap: " << m_GenerateLabelMap << std::endl;
  os << indent << "ComputePerimeter: " << m_ComputePerimeter << std::endl;
  os << indent << "ComputeFeretDiameter: " << m_ComputeFeretDiameter << std::endl;
  os << indent << "ComputeOrientedBoundingBox: " << m_ComputeOrientedBoundingBox << std::endl;
  os << indent << "MinimumObjectSize: " << m_MinimumObjectSize << std::endl;
  os << indent << "MinimumPhysicalSize: " << m_MinimumPhysicalSize << std::endl;
  os << indent << "NumberOfObjectsToKeep: " << m_NumberOfObjectsToKeep << std::endl;
  os << indent << "SortByObjectSize: " << m_SortByObjectSize << std::endl;
  os << indent << "OriginalObjectCount: " << m_OriginalObjectCount << std::endl;
  os << indent
     << "BackgroundValue: " << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(m_BackgroundValue)
     << std::endl;
  os << indent << "Backend: " << m_Backend << std::endl;
  os << indent << "DeviceId: " << m_DeviceId << std::endl;
  os << indent << "BackendUsed: " << m_BackendUsed << std::endl;
  os << indent << "BackendDescription: " << m_BackendDescription << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
  os << indent << "ComponentFeatures: " << m_ComponentFeatures.size() << " components" << std::endl;
}

} // namespace itk

#endif
