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

#include <algorithm>
#include <sstream>

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
    const std::pair<const char *, const char *> scalars[] = {
      { "intensity_min", "Minimum" },       { "intensity_max", "Maximum" },           { "intensity_sum", "Sum" },
      { "intensity_mean", "Mean" },         { "intensity_stddev", "StandardDeviation" }, { "intensity_variance", "Variance" },
      { "intensity_skewness", "Skewness" }, { "intensity_kurtosis", "Kurtosis" }
    };
    for (const auto & s : scalars)
    {
      m_Attributes.push_back({ s.first, { column(s.second) }, false, false });
    }
    const std::pair<const char *, const char *> vectors[] = { { "centroid_weighted", "CenterOfGravity" },
                                                              { "intensity_min_index", "MinimumIndex" },
                                                              { "intensity_max_index", "MaximumIndex" } };
    for (const auto & v : vectors)
    {
      Columns c{ v.first, {}, std::string(v.second) != "CenterOfGravity", true };
      for (unsigned int d = 0; d < dimension; ++d)
      {
        c.columns.push_back(column(std::string(v.second) + "-" + std::to_string(d)));
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
