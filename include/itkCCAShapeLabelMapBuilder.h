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
#ifndef itkCCAShapeLabelMapBuilder_h
#define itkCCAShapeLabelMapBuilder_h

#include "CudaConnectedComponentAnalysisExport.h"
#include "itkCudaConnectedComponentAnalysisEngine.h"
#include "itkLabelMap.h"
#include "itkMultiThreaderBase.h"
#include "itkShapeLabelObject.h"
#include "itkStatisticsLabelObject.h"

#include <algorithm>
#include <functional>
#include <thread>
#include <type_traits>
#include <typeinfo>
#include <vector>

namespace itk
{
namespace cca
{
/** What BuildLabelObjectsInBlocks() calls back: the parts that know the LabelMap's type. */
struct LabelObjectBuildSteps
{
  /** A slice of components [first, last) begins: make room for its objects. */
  std::function<void(std::size_t first, std::size_t last)> startSlice;
  /** Builds the objects of components [first, last) (lines and attributes); on any work unit. */
  std::function<void(std::size_t first, std::size_t last)> buildObjects;
  /** Inserts the built objects of [first, last) into the map; one work unit, in label order. */
  std::function<void(std::size_t first, std::size_t last)> insertObjects;
  /** Runs unit(0 .. units - 1) on the filter's work units (ITK's MultiThreader). */
  std::function<void(unsigned units, const std::function<void(unsigned)> & unit)> parallelize;
  /** The build's progress, 0 to 1, from the calling thread. */
  std::function<void(float)> progress;
  /** Called once, before the first object enters the map (while objects are already being built). */
  std::function<void()> beforeFirstInsertion;
};

/** The LabelMap's objects for `numComponents` components, built in parallel in blocks taken in label order
 * while one work unit inserts the finished blocks into the map in that order: the map's insertion is the
 * one serial step, and it runs at the same time as the rest. The first exception of a step is rethrown once the
 * work units have stopped. Compiled (src/attributes/itkCCAShapeLabelMapBuild.cxx).
 *
 * ITK 5.4 cannot unwind a label object's constructor that runs out of memory (~LightObject writes a warning,
 * which allocates, and std::terminate ends the process). So the build holds a memory reserve: an allocation
 * that fails takes memory back from it and succeeds, and the step calls ThrowIfOutOfMemory() after each
 * object, which throws std::bad_alloc from the builder's own code (the filter turns it into an
 * itk::MemoryAllocationError). */
CudaConnectedComponentAnalysis_EXPORT void
BuildLabelObjectsInBlocks(std::size_t numComponents, unsigned numberOfWorkUnits, const LabelObjectBuildSteps & steps);

/** Throws std::bad_alloc where memory ran out during BuildLabelObjectsInBlocks() (and its reserve was used). */
CudaConnectedComponentAnalysis_EXPORT void
ThrowIfOutOfMemory();
} // namespace cca

/** \class CCAShapeLabelMapBuilder
 * \brief Fills the LabelMap of CudaConnectedComponentAnalysisImageFilter: one label object per component,
 * its lines (the component's runs, in raster order, as LabelImageToLabelMapFilter makes them) and the
 * attributes CudaConnectedComponentAnalysisEngine computed (compiled, from the engines' exact sums).
 *
 * A template only because the LabelMap type is the filter's template parameter: it builds lines and
 * copies attributes, nothing else.
 * \ingroup CudaConnectedComponentAnalysis
 */
template <typename TLabelMap>
class CCAShapeLabelMapBuilder
{
public:
  using LabelMapType = TLabelMap;
  using LabelObjectType = typename LabelMapType::LabelObjectType;
  using LabelType = typename LabelObjectType::LabelType;
  static constexpr unsigned int ImageDimension = LabelMapType::ImageDimension;
  using EngineType = CudaConnectedComponentAnalysisEngine;

  /** Whether the objects take intensity statistics (StatisticsLabelObjects, or classes derived from them). */
  static constexpr bool IsStatisticsLabelObject =
    std::is_base_of<StatisticsLabelObject<LabelType, ImageDimension>, LabelObjectType>::value;

  /** Where the objects' intensity statistics come from: the engine that analyzed a feature image. */
  struct IntensitySource
  {
    const EngineType *   engine;
    EngineType::Geometry geometry;
  };

  /** Fills `labelMap` (whose geometry is already the image's, and which is empty) with one object per
   * component on `threader`'s work units, reporting to `progress`; `labelOf(k)` is the label of the k-th
   * component. The schedule (parallel blocks, insertion in label order beside them) is the compiled
   * cca::BuildLabelObjectsInBlocks(); this part makes and inserts the objects of the LabelMap's type. Without
   * a table of every component's attributes: each object's are computed as it is built.
   * `beforeFirstInsertion` (if any) is called once, before the first object enters the map: the filter waits
   * there for the previous update's map to be emptied. */
  template <typename TLabelOf>
  static void
  Build(LabelMapType * labelMap, const EngineType::Lines & lines,
        const EngineType::ShapeAttributeCalculator & calculator, const EngineType::ShapeOptions & options,
        const TLabelOf & labelOf, MultiThreaderBase * threader, ProcessObject * progress,
        const std::function<void()> & beforeFirstInsertion = {}, const IntensitySource * intensity = nullptr)
  {
    const std::size_t numComponents = lines.firstLine.empty() ? 0 : lines.firstLine.size() - 1;
    const bool        factoryless = numComponents > 0 && !HasFactoryOverride();
    std::vector<typename LabelObjectType::Pointer> objects; // the slice's, by component - sliceFirst
    std::size_t                                    sliceFirst = 0;
    cca::LabelObjectBuildSteps                     steps;
    steps.startSlice = [&](std::size_t first, std::size_t last) {
      sliceFirst = first;
      objects.resize(last - first);
    };
    steps.buildObjects = [&](std::size_t first, std::size_t last) {
      EngineType::ShapeAttributes attributes;
      for (std::size_t k = first; k < last; ++k)
      {
        objects[k - sliceFirst] =
          MakeObject(k, lines, calculator, options, labelOf, factoryless, attributes, intensity);
      }
    };
    steps.insertObjects = [&](std::size_t first, std::size_t last) {
      for (std::size_t k = first; k < last; ++k)
      {
        labelMap->AddLabelObject(objects[k - sliceFirst]);
        objects[k - sliceFirst] = nullptr;
      }
    };
    steps.parallelize = [threader](unsigned units, const std::function<void(unsigned)> & unit) {
      threader->ParallelizeArray(
        0, units, [&unit](SizeValueType u) { unit(static_cast<unsigned>(u)); }, nullptr);
    };
    if (progress)
    {
      steps.progress = [progress](float fraction) { progress->UpdateProgress(fraction); };
    }
    steps.beforeFirstInsertion = beforeFirstInsertion;
    cca::BuildLabelObjectsInBlocks(numComponents, threader->GetNumberOfWorkUnits(), steps);
  }

  /** Empties `labelMap`, the objects' destruction (their lines) spread over `numberOfThreads` threads of its
   * own: for millions of objects, freeing them one by one in ClearLabels() is a second of the next update.
   * It runs beside the filter's work (on a thread of the filter's), so it does not use the filter's
   * MultiThreader, which the update is using at the same time. */
  static void
  Clear(LabelMapType * labelMap, unsigned numberOfThreads) noexcept
  {
    std::vector<typename LabelObjectType::Pointer> old;
    std::vector<std::thread>                       workers;
    std::size_t                                    pieces = 1;
    auto                                           release = [&old, &pieces](std::size_t p) {
      for (std::size_t i = old.size() * p / pieces; i < old.size() * (p + 1) / pieces; ++i)
      {
        old[i] = nullptr;
      }
    };
    try
    {
      old.reserve(labelMap->GetNumberOfLabelObjects());
      for (typename LabelMapType::Iterator it(labelMap); !it.IsAtEnd(); ++it)
      {
        old.emplace_back(it.GetLabelObject());
      }
      labelMap->ClearLabels();
      pieces = std::max<std::size_t>(1, std::min<std::size_t>(numberOfThreads, old.size() / 4096));
      workers.reserve(pieces);
      for (std::size_t p = 1; p < pieces; ++p)
      {
        workers.emplace_back(release, p); // piece p on worker p - 1
      }
    }
    catch (...)
    {
      // Short of memory or threads (after a failed update, say): what no worker took is freed here.
    }
    release(0);
    for (std::size_t p = workers.size() + 1; p < pieces; ++p)
    {
      release(p);
    }
    for (auto & worker : workers)
    {
      worker.join();
    }
    labelMap->ClearLabels(); // allocates nothing; empties the map where the list could not be made
  }

private:
  /** The LabelMap's label object type, constructible without the object factory. New() asks every
   * registered factory for an override, by class name, for each object: one std::string and one map lookup
   * per factory (an ITK program with the IO factories registered has ten or more), several times the cost
   * of the object itself for millions of objects. The objects are label objects of the LabelMap's type in
   * every other respect (the class adds nothing; GetNameOfClass() is the base's). */
  class FactorylessLabelObject final : public LabelObjectType
  {
  public:
    FactorylessLabelObject() = default;
  };

  /** Whether a registered factory makes something else than LabelObjectType for New(): then every object
   * is made through New(), as ITK's own filters make them. */
  static bool
  HasFactoryOverride()
  {
    const typename LabelObjectType::Pointer probe = LabelObjectType::New();
    return typeid(*probe) != typeid(LabelObjectType);
  }

  static typename LabelObjectType::Pointer
  NewLabelObject(bool factoryless)
  {
    if (!factoryless)
    {
      return LabelObjectType::New();
    }
    typename LabelObjectType::Pointer object = new FactorylessLabelObject;
    object->UnRegister(); // as itkSimpleNewMacro: the smart pointer holds the only reference
    return object;
  }

  template <typename TLabelOf>
  static typename LabelObjectType::Pointer
  MakeObject(std::size_t k, const EngineType::Lines & lines, const EngineType::ShapeAttributeCalculator & calculator,
             const EngineType::ShapeOptions & options, const TLabelOf & labelOf, bool factoryless,
             EngineType::ShapeAttributes & attributes, const IntensitySource * intensity)
  {
    auto object = NewLabelObject(factoryless);
    object->SetLabel(static_cast<LabelType>(labelOf(k)));
    for (std::uint64_t l = lines.firstLine[k]; l < lines.firstLine[k + 1]; ++l)
    {
      typename LabelObjectType::IndexType idx;
      for (unsigned int i = 0; i < ImageDimension; ++i)
      {
        idx[i] = static_cast<IndexValueType>(lines.index[l][i]);
      }
      object->AddLine(idx, static_cast<typename LabelObjectType::LengthType>(lines.length[l]));
    }
    calculator.Compute(k, attributes);
    CopyAttributes(attributes, options, object);
    if constexpr (IsStatisticsLabelObject)
    {
      if (intensity)
      {
        cca::IntensityStatistics statistics;
        intensity->engine->ComputeIntensityStatistics(k, intensity->geometry, statistics);
        CopyStatistics(statistics, object);
      }
    }
    cca::ThrowIfOutOfMemory(); // here, not inside the next label object's constructor
    return object;
  }

  /** StatisticsLabelMapFilter's attributes but the median and the histogram (not computed: ITK's are an
   * approximation from bins over the whole feature image's range). */
  static void
  CopyStatistics(const cca::IntensityStatistics & s, LabelObjectType * object)
  {
    typename LabelObjectType::IndexType  minimumIndex;
    typename LabelObjectType::IndexType  maximumIndex;
    typename LabelObjectType::PointType  centerOfGravity;
    typename LabelObjectType::VectorType principalMoments;
    typename LabelObjectType::MatrixType principalAxes;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      minimumIndex[i] = static_cast<IndexValueType>(s.minimumIndex[i]);
      maximumIndex[i] = static_cast<IndexValueType>(s.maximumIndex[i]);
      centerOfGravity[i] = s.centerOfGravity[i];
      principalMoments[i] = s.weightedPrincipalMoments[i];
      for (unsigned int j = 0; j < ImageDimension; ++j)
      {
        principalAxes[i][j] = s.weightedPrincipalAxes[i][j];
      }
    }
    object->SetMinimum(s.minimum);
    object->SetMaximum(s.maximum);
    object->SetSum(s.sum);
    object->SetMean(s.mean);
    object->SetVariance(s.variance);
    object->SetStandardDeviation(s.standardDeviation);
    object->SetSkewness(s.skewness);
    object->SetKurtosis(s.kurtosis);
    object->SetMinimumIndex(minimumIndex);
    object->SetMaximumIndex(maximumIndex);
    object->SetCenterOfGravity(centerOfGravity);
    object->SetWeightedPrincipalMoments(principalMoments);
    object->SetWeightedPrincipalAxes(principalAxes);
    object->SetWeightedElongation(s.weightedElongation);
    object->SetWeightedFlatness(s.weightedFlatness);
  }

  static void
  CopyAttributes(const EngineType::ShapeAttributes & a, const EngineType::ShapeOptions & options,
                 LabelObjectType * object)
  {
    typename LabelObjectType::RegionType::IndexType boxIndex;
    typename LabelObjectType::RegionType::SizeType  boxSize;
    typename LabelObjectType::CentroidType          centroid;
    typename LabelObjectType::VectorType            principalMoments;
    typename LabelObjectType::VectorType            ellipsoidDiameter;
    typename LabelObjectType::MatrixType            principalAxes;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      boxIndex[i] = static_cast<IndexValueType>(a.boundingBoxIndex[i]);
      boxSize[i] = static_cast<SizeValueType>(a.boundingBoxSize[i]);
      centroid[i] = a.centroid[i];
      principalMoments[i] = a.principalMoments[i];
      ellipsoidDiameter[i] = a.equivalentEllipsoidDiameter[i];
      for (unsigned int j = 0; j < ImageDimension; ++j)
      {
        principalAxes[i][j] = a.principalAxes[i][j];
      }
    }
    object->SetNumberOfPixels(static_cast<SizeValueType>(a.numberOfPixels));
    object->SetPhysicalSize(a.physicalSize);
    object->SetBoundingBox(typename LabelObjectType::RegionType(boxIndex, boxSize));
    object->SetCentroid(centroid);
    object->SetNumberOfPixelsOnBorder(static_cast<SizeValueType>(a.numberOfPixelsOnBorder));
    object->SetPerimeterOnBorder(a.perimeterOnBorder);
    object->SetPrincipalMoments(principalMoments);
    object->SetPrincipalAxes(principalAxes);
    object->SetElongation(a.elongation);
    object->SetEquivalentSphericalRadius(a.equivalentSphericalRadius);
    object->SetEquivalentSphericalPerimeter(a.equivalentSphericalPerimeter);
    object->SetEquivalentEllipsoidDiameter(ellipsoidDiameter);
    object->SetFlatness(a.flatness);
    if (options.computePerimeter)
    {
      object->SetPerimeter(a.perimeter);
      object->SetRoundness(a.roundness);
      object->SetPerimeterOnBorderRatio(a.perimeterOnBorderRatio);
    }
    if (options.computeFeretDiameter)
    {
      object->SetFeretDiameter(a.feretDiameter);
    }
    if (options.computeOrientedBoundingBox)
    {
      typename LabelObjectType::OrientedBoundingBoxSizeType  obbSize;
      typename LabelObjectType::OrientedBoundingBoxPointType obbOrigin;
      for (unsigned int i = 0; i < ImageDimension; ++i)
      {
        obbSize[i] = a.orientedBoundingBoxSize[i];
        obbOrigin[i] = a.orientedBoundingBoxOrigin[i];
      }
      object->SetOrientedBoundingBoxSize(obbSize);
      object->SetOrientedBoundingBoxOrigin(obbOrigin);
    }
  }
};
} // namespace itk

#endif
