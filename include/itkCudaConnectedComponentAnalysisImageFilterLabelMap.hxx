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
#ifndef itkCudaConnectedComponentAnalysisImageFilterLabelMap_hxx
#define itkCudaConnectedComponentAnalysisImageFilterLabelMap_hxx
// The filter's LabelMap output ("LabelMap"), along its data path: the previous map emptied on a thread of its
// own, the engine's lines and attribute calculator, the objects built (itkCCAShapeLabelMapBuilder.h).
// Included by itkCudaConnectedComponentAnalysisImageFilter.hxx.
#include "itkCCAShapeLabelMapBuilder.h"
#include "itkProgressTransformer.h"

#include <chrono>
#include <system_error>
#include <thread>

namespace itk
{
template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::PrepareLabelMap()
{
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
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::ExportLabelMapLines(
  const EngineType::Geometry & geometry,
  EngineType::Lines &          lines)
{
  const auto start = Clock::now();
  m_Engine.ComputeLines(geometry, lines);
  m_TimeSplit.ExportRuns = SecondsSince(start);
  this->UpdateProgress(0.4f);
  this->ThrowIfAborted();
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage, typename TOutputLabelMap>
void
CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage, TOutputLabelMap>::BuildLabelMap(
  const EngineType::Geometry & geometry,
  const EngineType::Lines &    lines)
{
  const auto start = Clock::now();
  EngineType::ShapeOptions options;
  options.computePerimeter = m_ComputePerimeter;
  options.computeFeretDiameter = m_ComputeFeretDiameter;
  options.computeOrientedBoundingBox = m_ComputeOrientedBoundingBox;
  const auto          calculator = m_Engine.MakeShapeAttributeCalculator(geometry, options, lines);
  ProgressTransformer objectsProgress(0.4f, 1.0f, this);
  using Builder = CCAShapeLabelMapBuilder<LabelMapType>;
  const typename Builder::IntensitySource intensity{ &m_Engine, geometry };
  Builder::Build(
    this->GetLabelMap(),
    lines,
    *calculator,
    options,
    [this](std::uint64_t k) { return this->LabelOf(k); },
    this->GetMultiThreader(),
    objectsProgress.GetProcessObject(),
    [this]() { this->WaitForLabelMapCleared(); },
    m_Engine.HasIntensityStatistics() ? &intensity : nullptr);
  m_TimeSplit.BuildLabelMap = SecondsSince(start);
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

} // namespace itk

#endif
