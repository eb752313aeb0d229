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
// The rows of the tool's CSV and JSON tables: every ShapeLabelObject attribute of an object, in physical
// units, in the order of the CSV columns (a template over the LabelMap's object type).
#ifndef CudaConnectedComponentAnalysisToolAttributes_h
#define CudaConnectedComponentAnalysisToolAttributes_h

#include "CudaConnectedComponentAnalysisTool.h"

namespace cca_tool
{

/** Every attribute of a ShapeLabelObject, in physical units, in the order of the CSV columns. With --multilabel the
 * object's class (`classValue`, which the LabelObject does not carry: the filter's ComponentFeatures do) follows its
 * label; without it the columns are those of a binary input, unchanged. */
template <typename TLabelObject>
ObjectRow
AttributesOf(const TLabelObject & object, const Options & options, std::int64_t classValue = 0)
{
  constexpr unsigned int D = TLabelObject::ImageDimension;
  ObjectRow              row;
  const auto             scalar = [&row](const char * name, double value, bool integer = false) {
    row.push_back(Attribute{ name, { value }, {}, integer });
  };
  const auto vector = [&row](const char * name, const auto & v, bool integer = false) {
    Attribute a{ name, {}, { D }, integer };
    for (unsigned int i = 0; i < D; ++i)
    {
      a.values.push_back(static_cast<double>(v[i]));
    }
    row.push_back(a);
  };
  const auto matrix = [&row](const char * name, const auto & m) {
    Attribute a{ name, {}, { D, D }, false };
    for (unsigned int i = 0; i < D; ++i)
    {
      for (unsigned int j = 0; j < D; ++j)
      {
        a.values.push_back(m(i, j));
      }
    }
    row.push_back(a);
  };
  scalar("Label", static_cast<double>(object.GetLabel()), true);
  if (options.multiLabel)
  {
    scalar("class", static_cast<double>(classValue), true);
  }
  scalar("NumberOfPixels", static_cast<double>(object.GetNumberOfPixels()), true);
  scalar("PhysicalSize", object.GetPhysicalSize());
  vector("Centroid", object.GetCentroid());
  vector("BoundingBoxIndex", object.GetBoundingBox().GetIndex(), true);
  vector("BoundingBoxSize", object.GetBoundingBox().GetSize(), true);
  scalar("NumberOfPixelsOnBorder", static_cast<double>(object.GetNumberOfPixelsOnBorder()), true);
  scalar("PerimeterOnBorder", object.GetPerimeterOnBorder());
  scalar("PerimeterOnBorderRatio", object.GetPerimeterOnBorderRatio());
  scalar("Perimeter", object.GetPerimeter());
  scalar("Roundness", object.GetRoundness());
  vector("PrincipalMoments", object.GetPrincipalMoments());
  matrix("PrincipalAxes", object.GetPrincipalAxes());
  scalar("Elongation", object.GetElongation());
  scalar("Flatness", object.GetFlatness());
  scalar("EquivalentSphericalRadius", object.GetEquivalentSphericalRadius());
  scalar("EquivalentSphericalPerimeter", object.GetEquivalentSphericalPerimeter());
  vector("EquivalentEllipsoidDiameter", object.GetEquivalentEllipsoidDiameter());
  if (options.feretDiameter)
  {
    scalar("FeretDiameter", object.GetFeretDiameter());
  }
  if (options.orientedBoundingBox)
  {
    vector("OrientedBoundingBoxSize", object.GetOrientedBoundingBoxSize());
    vector("OrientedBoundingBoxOrigin", object.GetOrientedBoundingBoxOrigin());
    matrix("OrientedBoundingBoxDirection", object.GetOrientedBoundingBoxDirection());
  }
  return row;
}

} // namespace cca_tool

#endif
