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
// The rows of the tool's CSV and JSON tables: the attributes of an object (itkCudaConnectedComponentAnalysisAttributes.h), in physical
// units, in the order of the CSV columns (a template over the LabelMap's object type).
#ifndef CudaConnectedComponentAnalysisToolAttributes_h
#define CudaConnectedComponentAnalysisToolAttributes_h

#include "CudaConnectedComponentAnalysisTool.h"
#include "itkCudaConnectedComponentAnalysisAttributes.h"

#include <algorithm>
#include <sstream>

namespace cca_tool
{

/** The shape attributes a LabelMap's object holds, as the engines computed them (the builder's CopyAttributes the
 * other way round): the attribute table's formulas read them. */
template <typename TLabelObject>
itk::cca::ShapeAttributes
ShapeAttributesOf(const TLabelObject & object)
{
  constexpr unsigned int    D = TLabelObject::ImageDimension;
  itk::cca::ShapeAttributes a;
  a.numberOfPixels = object.GetNumberOfPixels();
  a.physicalSize = object.GetPhysicalSize();
  a.numberOfPixelsOnBorder = object.GetNumberOfPixelsOnBorder();
  a.perimeterOnBorder = object.GetPerimeterOnBorder();
  a.perimeterOnBorderRatio = object.GetPerimeterOnBorderRatio();
  a.perimeter = object.GetPerimeter();
  a.roundness = object.GetRoundness();
  a.elongation = object.GetElongation();
  a.flatness = object.GetFlatness();
  a.equivalentSphericalRadius = object.GetEquivalentSphericalRadius();
  a.equivalentSphericalPerimeter = object.GetEquivalentSphericalPerimeter();
  a.feretDiameter = object.GetFeretDiameter();
  for (unsigned int i = 0; i < D; ++i)
  {
    a.boundingBoxIndex[i] = object.GetBoundingBox().GetIndex(i);
    a.boundingBoxSize[i] = object.GetBoundingBox().GetSize(i);
    a.centroid[i] = object.GetCentroid()[i];
    a.principalMoments[i] = object.GetPrincipalMoments()[i];
    a.equivalentEllipsoidDiameter[i] = object.GetEquivalentEllipsoidDiameter()[i];
    a.orientedBoundingBoxSize[i] = object.GetOrientedBoundingBoxSize()[i];
    a.orientedBoundingBoxOrigin[i] = object.GetOrientedBoundingBoxOrigin()[i];
    for (unsigned int j = 0; j < D; ++j)
    {
      a.principalAxes[i][j] = object.GetPrincipalAxes()(i, j);
    }
  }
  return a;
}

/** An attribute's value shape in the CSV and JSON: none for a scalar, {D} for a vector, {D, D} for a matrix. */
inline std::vector<std::size_t>
ShapeOf(const itk::cca::AttributeDefinition & attribute, unsigned int dimension)
{
  switch (attribute.layout)
  {
    case itk::cca::AttributeLayout::Scalar:
      return {};
    case itk::cca::AttributeLayout::AxisMatrix:
      return { dimension, dimension };
    default:
      return { itk::cca::NumberOfValues(attribute, dimension) };
  }
}

/** Every shape attribute of an object that has an ITK name (itkCudaConnectedComponentAnalysisAttributes.h), in
 * physical units, in the order of the CSV columns; Feret's diameter and the oriented bounding box with their
 * options. With --multilabel the object's class (`classValue`, which the LabelObject does not carry: the filter's
 * ComponentFeatures do) follows its label; without it the columns are those of a binary input. */
template <typename TLabelObject>
ObjectRow
AttributesOf(const TLabelObject & object, const Options & options, std::int64_t classValue = 0)
{
  using itk::cca::AttributeSource;
  constexpr unsigned int D = TLabelObject::ImageDimension;
  ObjectRow              row;
  row.push_back(Attribute{ "Label", { static_cast<double>(object.GetLabel()) }, {}, true });
  if (options.multiLabel)
  {
    row.push_back(Attribute{ "class", { static_cast<double>(classValue) }, {}, true });
  }
  const itk::cca::ShapeAttributes shape = ShapeAttributesOf(object);
  std::size_t                     count = 0;
  const auto * const              attributes = itk::cca::Attributes(count);
  for (std::size_t i = 0; i < count; ++i)
  {
    const itk::cca::AttributeDefinition & a = attributes[i];
    const bool wanted = a.itkName != nullptr && !itk::cca::NeedsIntensity(a) &&
                        (a.source != AttributeSource::FeretDiameter || options.feretDiameter) &&
                        (a.source != AttributeSource::OrientedBoundingBox || options.orientedBoundingBox);
    if (!wanted)
    {
      continue;
    }
    double values[itk::cca::MaxAttributeValues];
    a.compute(shape, itk::cca::IntensityStatistics{}, D, values);
    row.push_back(Attribute{ a.itkName, { values, values + itk::cca::NumberOfValues(a, D) }, ShapeOf(a, D), a.integer });
  }
  return row;
}

/** The --intensity columns, after the shape attributes: the filter's intensity statistics of an object (a row of
 * GetIntensityFeatureTable()) under the tool's names, each found by the filter's column name
 * (GetIntensityFeatureTableColumnNames()), not by position. Scalars intensity_min ... intensity_kurtosis, then the
 * vectors centroid_weighted (physical, as Centroid), intensity_min_index and intensity_max_index (pixel indices). */
class IntensityColumns
{
public:
  /** `names`: the filter's column names, separated by spaces; `dimension`: the image's. */
  IntensityColumns(const std::string & names, unsigned int dimension)
    : m_Dimension(dimension)
  {
    std::istringstream       stream(names);
    std::vector<std::string> columns;
    for (std::string name; stream >> name;)
    {
      columns.push_back(name);
    }
    const auto column = [&columns, &names](const std::string & name) {
      const auto found = std::find(columns.begin(), columns.end(), name);
      if (found == columns.end())
      {
        throw ToolError(ExitFailure, "the filter's intensity table has no column " + name + " (" + names + ")");
      }
      return static_cast<std::size_t>(found - columns.begin());
    };
    m_Label = column("Label");
    // The filter's intensity table (ITK's names) under the Python table's names, in the table's order.
    std::size_t        count = 0;
    const auto * const attributes = itk::cca::Attributes(count);
    for (std::size_t i = 0; i < count; ++i)
    {
      const itk::cca::AttributeDefinition & a = attributes[i];
      if (a.source != itk::cca::AttributeSource::Intensity || a.itkName == nullptr || a.pythonName == nullptr)
      {
        continue;
      }
      Columns c{ a.pythonName, {}, a.integer, a.layout != itk::cca::AttributeLayout::Scalar };
      if (!c.vector)
      {
        c.columns.push_back(column(a.itkName));
      }
      for (unsigned int d = 0; c.vector && d < dimension; ++d)
      {
        c.columns.push_back(column(std::string(a.itkName) + "-" + std::to_string(d)));
      }
      m_Attributes.push_back(c);
    }
  }

  /** The table's column of the label. */
  std::size_t
  LabelColumn() const
  {
    return m_Label;
  }

  /** The intensity attributes of the table's row `values` appended to `row`; `values` null: zeros (a layout row). */
  void
  Append(ObjectRow & row, const double * values) const
  {
    for (const Columns & c : m_Attributes)
    {
      Attribute a{ c.name, {}, {}, c.integer };
      if (c.vector)
      {
        a.shape = { static_cast<std::size_t>(m_Dimension) };
      }
      for (std::size_t column : c.columns)
      {
        a.values.push_back(values ? values[column] : 0.0);
      }
      row.push_back(a);
    }
  }

private:
  struct Columns
  {
    std::string              name;
    std::vector<std::size_t> columns;
    bool                     integer; ///< pixel indices
    bool                     vector;  ///< one column per axis: Name_0, Name_1, ... in the CSV
  };
  unsigned int         m_Dimension;
  std::size_t          m_Label{ 0 };
  std::vector<Columns> m_Attributes;
};

} // namespace cca_tool

#endif
