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
// The per-object attributes, each defined once: names, layout, source, group and formula. A derived attribute is
// one entry here (with its formula over ShapeAttributes / IntensityStatistics) and its test; the tables follow.
#include "itkCudaConnectedComponentAnalysisAttributes.h"

#include <cstring>

namespace itk
{
namespace cca
{
namespace
{

using Layout = AttributeLayout;
using Source = AttributeSource;
using Group = AttributeGroup;

template <typename TArray>
void
PerAxis(const TArray & a, unsigned d, double * values)
{
  for (unsigned i = 0; i < d; ++i)
  {
    values[i] = static_cast<double>(a[i]);
  }
}

template <typename TMatrix>
void
Matrix(const TMatrix & m, unsigned d, double * values)
{
  for (unsigned i = 0; i < d; ++i)
  {
    for (unsigned j = 0; j < d; ++j)
    {
      values[i * d + j] = m[i][j];
    }
  }
}

// Shorthands for the formulas' signature.
using S = ShapeAttributes;
using I = IntensityStatistics;

constexpr AttributeDefinition Definitions[] = {
  // The basic attributes: from the sums of every analysis.
  { "NumberOfPixels", "num_pixels", Layout::Scalar, true, Source::Basic, Group::Basic,
    [](const S & a, const I &, unsigned, double * v) { v[0] = static_cast<double>(a.numberOfPixels); },
    "pixels in the object" },
  { "PhysicalSize", "area", Layout::Scalar, false, Source::Basic, Group::Basic,
    [](const S & a, const I &, unsigned, double * v) { v[0] = a.physicalSize; },
    "pixels times the pixel's area or volume (spacing's product)" },
  { nullptr, "bbox", Layout::BoundingBox, true, Source::Basic, Group::Basic,
    [](const S & a, const I &, unsigned d, double * v) {
      for (unsigned i = 0; i < d; ++i)
      {
        v[i] = static_cast<double>(a.boundingBoxIndex[i]);
        v[d + i] = static_cast<double>(a.boundingBoxIndex[i] + static_cast<std::int64_t>(a.boundingBoxSize[i]));
      }
    },
    "bounding box: first index and end (last index + 1) per axis, index space" },
  { "Centroid", "centroid", Layout::PerAxis, false, Source::Basic, Group::Basic,
    [](const S & a, const I &, unsigned d, double * v) { PerAxis(a.centroid, d, v); },
    "mean of the pixels' physical points" },
  { "BoundingBoxIndex", nullptr, Layout::PerAxis, true, Source::Basic, Group::Basic,
    [](const S & a, const I &, unsigned d, double * v) { PerAxis(a.boundingBoxIndex, d, v); },
    "bounding box's first index" },
  { "BoundingBoxSize", nullptr, Layout::PerAxis, true, Source::Basic, Group::Basic,
    [](const S & a, const I &, unsigned d, double * v) { PerAxis(a.boundingBoxSize, d, v); },
    "bounding box's size in pixels" },
  // ShapeLabelObject's other attributes (ShapeLabelMapFilter's formulas, itkCCAShapeAttributes.cxx).
  { "NumberOfPixelsOnBorder", "num_pixels_on_border", Layout::Scalar, true, Source::Shape, Group::Shape,
    [](const S & a, const I &, unsigned, double * v) { v[0] = static_cast<double>(a.numberOfPixelsOnBorder); },
    "pixels on the image's border" },
  { "PerimeterOnBorder", "perimeter_on_border", Layout::Scalar, false, Source::Shape, Group::Shape,
    [](const S & a, const I &, unsigned, double * v) { v[0] = a.perimeterOnBorder; },
    "physical length or area of the object's faces on the image's border" },
  { "PerimeterOnBorderRatio", "perimeter_on_border_ratio", Layout::Scalar, false, Source::Perimeter, Group::Shape,
    [](const S & a, const I &, unsigned, double * v) { v[0] = a.perimeterOnBorderRatio; },
    "PerimeterOnBorder / Perimeter" },
  { "Perimeter", "perimeter", Layout::Scalar, false, Source::Perimeter, Group::Shape,
    [](const S & a, const I &, unsigned, double * v) { v[0] = a.perimeter; },
    "perimeter (2-D) or surface area (3-D) from the intercepts, physical" },
  { "Roundness", "roundness", Layout::Scalar, false, Source::Perimeter, Group::Shape,
    [](const S & a, const I &, unsigned, double * v) { v[0] = a.roundness; },
    "EquivalentSphericalPerimeter / Perimeter" },
  { "PrincipalMoments", "principal_moments", Layout::PerPrincipalAxis, false, Source::Shape, Group::Shape,
    [](const S & a, const I &, unsigned d, double * v) { PerAxis(a.principalMoments, d, v); },
    "eigenvalues of the physical second moments, ascending" },
  { "PrincipalAxes", "principal_axes", Layout::AxisMatrix, false, Source::Shape, Group::Shape,
    [](const S & a, const I &, unsigned d, double * v) { Matrix(a.principalAxes, d, v); },
    "the principal axes (rows), in physical space" },
  { "Elongation", "elongation", Layout::Scalar, false, Source::Shape, Group::Shape,
    [](const S & a, const I &, unsigned, double * v) { v[0] = a.elongation; },
    "sqrt(largest / second largest principal moment)" },
  { "Flatness", "flatness", Layout::Scalar, false, Source::Shape, Group::Shape,
    [](const S & a, const I &, unsigned, double * v) { v[0] = a.flatness; },
    "sqrt(second smallest / smallest principal moment)" },
  { "EquivalentSphericalRadius", "equivalent_spherical_radius", Layout::Scalar, false, Source::Shape, Group::Shape,
    [](const S & a, const I &, unsigned, double * v) { v[0] = a.equivalentSphericalRadius; },
    "radius of the disk or ball of the object's PhysicalSize" },
  { "EquivalentSphericalPerimeter", "equivalent_spherical_perimeter", Layout::Scalar, false, Source::Shape,
    Group::Shape, [](const S & a, const I &, unsigned, double * v) { v[0] = a.equivalentSphericalPerimeter; },
    "perimeter or surface of that disk or ball" },
  { "EquivalentEllipsoidDiameter", "equivalent_ellipsoid_diameter", Layout::PerPrincipalAxis, false, Source::Shape,
    Group::Shape, [](const S & a, const I &, unsigned d, double * v) { PerAxis(a.equivalentEllipsoidDiameter, d, v); },
    "diameters of the ellipse or ellipsoid of the same moments and size" },
  // Not an ITK attribute: scikit-image's regionprops `extent`, in both tables under its own name.
  { "Extent", "extent", Layout::Scalar, false, Source::Basic, Group::Shape,
    [](const S & a, const I &, unsigned d, double * v) {
      double boxPixels = 1;
      for (unsigned i = 0; i < d; ++i)
      {
        boxPixels *= static_cast<double>(a.boundingBoxSize[i]);
      }
      v[0] = static_cast<double>(a.numberOfPixels) / boxPixels;
    },
    "pixels / bounding box pixels (scikit-image's extent)" },
  // On request: a pass over each object's pixels.
  { "FeretDiameter", "feret_diameter", Layout::Scalar, false, Source::FeretDiameter, Group::OnRequest,
    [](const S & a, const I &, unsigned, double * v) { v[0] = a.feretDiameter; },
    "largest distance between two pixels' centers, physical" },
  { "OrientedBoundingBoxSize", "oriented_bounding_box_size", Layout::PerPrincipalAxis, false,
    Source::OrientedBoundingBox, Group::OnRequest,
    [](const S & a, const I &, unsigned d, double * v) { PerAxis(a.orientedBoundingBoxSize, d, v); },
    "the box along the principal axes: its size" },
  { "OrientedBoundingBoxOrigin", "oriented_bounding_box_origin", Layout::PerAxis, false, Source::OrientedBoundingBox,
    Group::OnRequest, [](const S & a, const I &, unsigned d, double * v) { PerAxis(a.orientedBoundingBoxOrigin, d, v); },
    "the box along the principal axes: its first corner, a physical point" },
  { "OrientedBoundingBoxDirection", nullptr, Layout::AxisMatrix, false, Source::OrientedBoundingBox,
    Group::OnRequest, [](const S & a, const I &, unsigned d, double * v) { Matrix(a.principalAxes, d, v); },
    "the box along the principal axes: its directions (ITK: the principal axes)" },
  // StatisticsLabelObject's attributes, with a feature image (itkCCAIntensityStatistics.cxx).
  { "Minimum", "intensity_min", Layout::Scalar, false, Source::Intensity, Group::IntensityDefault,
    [](const S &, const I & s, unsigned, double * v) { v[0] = s.minimum; }, "smallest value" },
  { "Maximum", "intensity_max", Layout::Scalar, false, Source::Intensity, Group::IntensityDefault,
    [](const S &, const I & s, unsigned, double * v) { v[0] = s.maximum; }, "largest value" },
  { "Sum", "intensity_sum", Layout::Scalar, false, Source::Intensity, Group::IntensityDefault,
    [](const S &, const I & s, unsigned, double * v) { v[0] = s.sum; }, "sum of the values" },
  { "Mean", "intensity_mean", Layout::Scalar, false, Source::Intensity, Group::IntensityDefault,
    [](const S &, const I & s, unsigned, double * v) { v[0] = s.mean; }, "mean value" },
  { "StandardDeviation", "intensity_stddev", Layout::Scalar, false, Source::Intensity, Group::IntensityDefault,
    [](const S &, const I & s, unsigned, double * v) { v[0] = s.standardDeviation; },
    "standard deviation (n - 1 in the denominator, as ITK)" },
  { "Variance", "intensity_variance", Layout::Scalar, false, Source::Intensity, Group::Intensity,
    [](const S &, const I & s, unsigned, double * v) { v[0] = s.variance; }, "variance (n - 1, as ITK)" },
  { "Skewness", "intensity_skewness", Layout::Scalar, false, Source::Intensity, Group::Intensity,
    [](const S &, const I & s, unsigned, double * v) { v[0] = s.skewness; }, "skewness (ITK's formula)" },
  { "Kurtosis", "intensity_kurtosis", Layout::Scalar, false, Source::Intensity, Group::Intensity,
    [](const S &, const I & s, unsigned, double * v) { v[0] = s.kurtosis; }, "kurtosis (ITK's formula)" },
  { "CenterOfGravity", "centroid_weighted", Layout::PerAxis, false, Source::Intensity, Group::IntensityDefault,
    [](const S &, const I & s, unsigned d, double * v) { PerAxis(s.centerOfGravity, d, v); },
    "value-weighted centroid, a physical point" },
  { "MinimumIndex", "intensity_min_index", Layout::PerAxis, true, Source::Intensity, Group::OnRequest,
    [](const S &, const I & s, unsigned d, double * v) { PerAxis(s.minimumIndex, d, v); },
    "index of the smallest value (the last in raster order where it repeats)" },
  { "MaximumIndex", "intensity_max_index", Layout::PerAxis, true, Source::Intensity, Group::OnRequest,
    [](const S &, const I & s, unsigned d, double * v) { PerAxis(s.maximumIndex, d, v); },
    "index of the largest value (the last in raster order where it repeats)" },
  { "WeightedPrincipalMoments", "weighted_principal_moments", Layout::PerPrincipalAxis, false,
    Source::WeightedMoments, Group::Intensity,
    [](const S &, const I & s, unsigned d, double * v) { PerAxis(s.weightedPrincipalMoments, d, v); },
    "eigenvalues of the value-weighted second moments, ascending" },
  { "WeightedPrincipalAxes", "weighted_principal_axes", Layout::AxisMatrix, false, Source::WeightedMoments,
    Group::Intensity, [](const S &, const I & s, unsigned d, double * v) { Matrix(s.weightedPrincipalAxes, d, v); },
    "their axes (rows), physical" },
  { "WeightedElongation", "weighted_elongation", Layout::Scalar, false, Source::WeightedMoments, Group::Intensity,
    [](const S &, const I & s, unsigned, double * v) { v[0] = s.weightedElongation; },
    "Elongation of the weighted moments" },
  { "WeightedFlatness", "weighted_flatness", Layout::Scalar, false, Source::WeightedMoments, Group::Intensity,
    [](const S &, const I & s, unsigned, double * v) { v[0] = s.weightedFlatness; },
    "Flatness of the weighted moments" },
};

bool
Same(const char * a, const std::string & b)
{
  return a != nullptr && b == a;
}

} // namespace

const AttributeDefinition *
Attributes(std::size_t & count)
{
  count = sizeof(Definitions) / sizeof(Definitions[0]);
  return Definitions;
}

const AttributeDefinition *
FindAttribute(const std::string & name)
{
  for (const AttributeDefinition & a : Definitions)
  {
    if (Same(a.itkName, name) || Same(a.pythonName, name))
    {
      return &a;
    }
  }
  return nullptr;
}

std::size_t
NumberOfValues(const AttributeDefinition & attribute, unsigned dimension)
{
  switch (attribute.layout)
  {
    case AttributeLayout::Scalar:
      return 1;
    case AttributeLayout::PerAxis:
    case AttributeLayout::PerPrincipalAxis:
      return dimension;
    case AttributeLayout::BoundingBox:
      return 2 * std::size_t{ dimension };
    case AttributeLayout::AxisMatrix:
      return std::size_t{ dimension } * dimension;
  }
  return 1;
}

} // namespace cca
} // namespace itk
