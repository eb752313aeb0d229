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
#include "itkOutputWindow.h"

#include <chrono>
#include <limits>
#include <mutex>

namespace itk
{
namespace cca_detail
{
/** The automatic backend's fallback to the CPU engine is said once per process, not per Update(). */
inline void
ReportCPUFallbackOnce(const std::string & reason)
{
  static std::once_flag once;
  std::call_once(once, [&reason]() {
    const std::string text = "CudaConnectedComponentAnalysisImageFilter: " + reason + " -- using the CPU engine.\n";
    OutputWindowDisplayWarningText(text.c_str());
  });
}

/** First label value that ConnectedComponentImageFilter steps over: the background value when it is
 * non-negative (its consecutive counter starts at 0 and can only meet such a value). */
template <typename TPixel>
std::uint64_t
SkippedLabelValue(TPixel background)
{
  return background >= TPixel{ 0 } ? static_cast<std::uint64_t>(background) : std::numeric_limits<std::uint64_t>::max();
}
} // namespace cca_detail

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::
  CudaConnectedComponentAnalysisImageFilter()
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
  labelMap->ClearLabels();
  labelMap->SetBackgroundValue(m_BackgroundValue);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::VerifyInputInformation()
  CCA_ITKv5_CONST
{
  Superclass::VerifyInputInformation();
  const InputImageType * input = this->GetInput();
  const MaskImageType *  mask = this->GetMaskImage();
  if (input && mask &&
      mask->GetLargestPossibleRegion().GetSize() != input->GetLargestPossibleRegion().GetSize())
  {
    itkExceptionMacro(<< "The mask image's size " << mask->GetLargestPossibleRegion().GetSize()
                      << " differs from the input image's size " << input->GetLargestPossibleRegion().GetSize());
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::GenerateInputRequestedRegion()
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
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::EnlargeOutputRequestedRegion(
  DataObject *)
{
  this->GetOutput()->SetRequestedRegion(this->GetOutput()->GetLargestPossibleRegion());
  this->GetLabelMap()->SetRequestedRegion(this->GetLabelMap()->GetLargestPossibleRegion());
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
cca::Engine &
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::AcquireEngine(BackendEnum backend)
{
  if (backend == BackendEnum::Automatic)
  {
    if (m_Engine && m_EngineBackend == BackendEnum::CUDA && m_EngineDeviceId == m_DeviceId)
    {
      return *m_Engine;
    }
    std::string reason;
    if (cca::GetCudaDeviceCount(&reason) > 0)
    {
      try
      {
        return AcquireEngine(BackendEnum::CUDA);
      }
      catch (const cca::EngineUnavailable & e)
      {
        reason = e.what();
      }
    }
    cca_detail::ReportCPUFallbackOnce(reason);
    return AcquireEngine(BackendEnum::CPU);
  }

  if (!m_Engine || m_EngineBackend != backend || (backend == BackendEnum::CUDA && m_EngineDeviceId != m_DeviceId))
  {
    m_Engine.reset();
    if (backend == BackendEnum::CUDA)
    {
      m_Engine = cca::CreateCudaEngine(m_DeviceId);
      m_EngineDeviceId = m_DeviceId;
    }
    else
    {
      m_Engine = cca::CreateCPUEngine(MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
      m_EngineDeviceId = -1;
    }
    m_EngineBackend = backend;
  }
  return *m_Engine;
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
cca::LabelingRequest
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::MakeRequest(
  const RegionType & region) const
{
  const InputImageType * input = this->GetInput();
  if (input->GetBufferedRegion() != region)
  {
    itkExceptionMacro(<< "The input's buffered region " << input->GetBufferedRegion()
                      << " is not the region to label " << region);
  }

  cca::LabelingRequest request;
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
  OutputImageType * output = this->GetOutput();
  cca::LabelingRequest request = this->MakeRequest(region);
  request.computeShapeSums = m_GenerateLabelMap;
  request.computePerimeter = m_GenerateLabelMap && m_ComputePerimeter;
  if (m_GenerateLabelMap)
  {
    // The second-moment sums are exact 64-bit integers: refuse images where they could overflow.
    long double bound = static_cast<long double>(region.GetNumberOfPixels());
    SizeValueType side = 0;
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      side = std::max<SizeValueType>(side, region.GetSize(d));
    }
    bound *= static_cast<long double>(side) * static_cast<long double>(side);
    if (bound >= 18446744073709551616.0L)
    {
      itkExceptionMacro(<< "The image " << region.GetSize()
                        << " is too large for the LabelMap's 64-bit moment sums; use GenerateLabelMapOff()");
    }
  }

  try
  {
    cca::Engine * engine = &this->AcquireEngine(m_Backend);
    std::uint64_t count = 0;
    auto          t0 = Clock::now();
    try
    {
      count = engine->Analyze(request);
    }
    catch (const cca::EngineUnavailable & e)
    {
      // Only the automatic backend may change engines, and only for a reason the CPU engine does not share.
      if (m_Backend != BackendEnum::Automatic || m_EngineBackend == BackendEnum::CPU)
      {
        throw;
      }
      cca_detail::ReportCPUFallbackOnce(e.what());
      engine = &this->AcquireEngine(BackendEnum::CPU);
      count = engine->Analyze(request);
    }
    m_TimeSplit.Analyze = seconds(t0);

    if (count > static_cast<std::uint64_t>(NumericTraits<OutputPixelType>::max()))
    {
      itkExceptionMacro(<< "Number of objects (" << count << ") greater than maximum of output pixel type ("
                        << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(
                             NumericTraits<OutputPixelType>::max())
                        << ").");
    }

    cca::LabelOutput labels;
    labels.data = output->GetBufferPointer();
    labels.kind = cca::ScalarKindOf<OutputPixelType>();
    labels.SetBackground(m_BackgroundValue);
    labels.skipValue = cca_detail::SkippedLabelValue(m_BackgroundValue);
    if (m_GenerateLabelImage)
    {
      t0 = Clock::now();
      engine->WriteLabels(labels);
      m_TimeSplit.WriteLabels = seconds(t0);
    }
    if (m_GenerateLabelMap)
    {
      t0 = Clock::now();
      cca::RunTable runs;
      engine->ExportRuns(runs);
      m_TimeSplit.ExportRuns = seconds(t0);
      t0 = Clock::now();
      typename CCAShapeLabelMapBuilder<LabelMapType>::Options options;
      options.computePerimeter = m_ComputePerimeter;
      options.computeFeretDiameter = m_ComputeFeretDiameter;
      options.computeOrientedBoundingBox = m_ComputeOrientedBoundingBox;
      CCAShapeLabelMapBuilder<LabelMapType>::Build(this->GetLabelMap(), runs, engine->GetFeatures(), labels, options);
      m_TimeSplit.BuildLabelMap = seconds(t0);
    }

    m_ObjectCount = static_cast<LabelType>(count);
    m_BackendUsed = m_EngineBackend;
    m_BackendDescription = engine->GetDescription();
    this->StoreFeatures(*engine, region, labels);
  }
  catch (const cca::EngineError & e)
  {
    itkExceptionMacro(<< "Connected component analysis failed (" << m_Backend << "): " << e.what());
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::StoreFeatures(
  const cca::Engine &      engine,
  const RegionType &       region,
  const cca::LabelOutput & labels)
{
  const auto & raw = engine.GetFeatures();
  m_ComponentFeatures.resize(raw.size());
  const IndexType start = region.GetIndex();
  // Millions of components on the GPU path: convert them on the filter's threads.
  this->GetMultiThreader()->ParallelizeArray(0, raw.size(), [&](SizeValueType i) {
    const cca::ComponentFeatures & r = raw[i];
    ComponentFeatures &            c = m_ComponentFeatures[i];
    c.Label = static_cast<OutputPixelType>(labels.LabelValue(i));
    c.NumberOfPixels = static_cast<SizeValueType>(r.numberOfPixels);
    IndexType boxIndex;
    SizeType  boxSize;
    for (unsigned int d = 0; d < ImageDimension; ++d)
    {
      boxIndex[d] = start[d] + static_cast<IndexValueType>(r.boundingBoxMin[d]);
      boxSize[d] = static_cast<SizeValueType>(r.boundingBoxMax[d] - r.boundingBoxMin[d] + 1);
      c.Centroid[d] = static_cast<double>(start[d]) +
                      static_cast<double>(r.indexSum[d]) / static_cast<double>(r.numberOfPixels);
    }
    c.BoundingBox.SetIndex(boxIndex);
    c.BoundingBox.SetSize(boxSize);
  }, nullptr);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
std::string
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::
  GetComponentFeatureTableColumnNames()
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
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::
  GetComponentFeatureTable() const
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
    const ComponentFeatures & c = m_ComponentFeatures[k];
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
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::PrintSelf(std::ostream & os,
                                                                                           Indent         indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "GenerateLabelImage: " << m_GenerateLabelImage << std::endl;
  os << indent << "GenerateLabelMap: " << m_GenerateLabelMap << std::endl;
  os << indent << "ComputePerimeter: " << m_ComputePerimeter << std::endl;
  os << indent << "ComputeFeretDiameter: " << m_ComputeFeretDiameter << std::endl;
  os << indent << "ComputeOrientedBoundingBox: " << m_ComputeOrientedBoundingBox << std::endl;
  os << indent << "BackgroundValue: "
     << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(m_BackgroundValue) << std::endl;
  os << indent << "Backend: " << m_Backend << std::endl;
  os << indent << "DeviceId: " << m_DeviceId << std::endl;
  os << indent << "BackendUsed: " << m_BackendUsed << std::endl;
  os << indent << "BackendDescription: " << m_BackendDescription << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
  os << indent << "ComponentFeatures: " << m_ComponentFeatures.size() << " components" << std::endl;
}

} // namespace itk

#endif
