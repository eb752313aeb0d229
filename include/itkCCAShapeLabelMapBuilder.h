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

#include "itkCudaConnectedComponentAnalysisEngine.h"
#include "itkLabelMap.h"
#include "itkMultiThreaderBase.h"
#include "itkShapeLabelObject.h"

#include <vector>

namespace itk
{
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

  /** Fills `labelMap` (whose geometry is already the image's) with one object per component on `threader`,
   * reporting to `progress`; `labelOf(k)` is the label of the k-th component. */
  template <typename TLabelOf>
  static void
  Build(LabelMapType *                                 labelMap,
        const EngineType::Lines &                      lines,
        const std::vector<EngineType::ShapeAttributes> & attributes,
        const EngineType::ShapeOptions &               options,
        const TLabelOf &                               labelOf,
        MultiThreaderBase *                            threader,
        ProcessObject *                                progress)
  {
    const std::size_t                              numComponents = attributes.size();
    std::vector<typename LabelObjectType::Pointer> objects(numComponents);
    // Objects are independent: build them on the filter's work units; only the insertion into the map is serial.
    threader->ParallelizeArray(
      0,
      numComponents,
      [&](SizeValueType k) {
        auto object = LabelObjectType::New();
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
        CopyAttributes(attributes[k], options, object);
        objects[k] = object;
      },
      progress);
    for (auto & object : objects)
    {
      labelMap->AddLabelObject(object);
    }
  }

private:
  static void
  CopyAttributes(const EngineType::ShapeAttributes & a, const EngineType::ShapeOptions & options, LabelObjectType * object)
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
