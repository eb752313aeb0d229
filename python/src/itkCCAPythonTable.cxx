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
#include "itkCCAPythonTable.h"

#include "itkCCAParallelFor.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

namespace itk
{
namespace cca
{
namespace python
{
namespace
{

enum class Field
{
  NumPixels,
  Area,
  BoundingBox,
  Centroid,
  NumPixelsOnBorder,
  PerimeterOnBorder,
  PerimeterOnBorderRatio,
  Perimeter,
  Roundness,
  Elongation,
  Flatness,
  EquivalentSphericalRadius,
  EquivalentSphericalPerimeter,
  FeretDiameter,
  PrincipalMoments,
  PrincipalAxes,
  EquivalentEllipsoidDiameter,
  OrientedBoundingBoxSize,
  OrientedBoundingBoxOrigin,
  // intensity statistics (a feature image, issue 23)
  IntensityMinimum,
  IntensityMaximum,
  IntensitySum,
  IntensityMean,
  IntensityStandardDeviation,
  IntensityVariance,
  IntensitySkewness,
  IntensityKurtosis,
  CentroidWeighted,
  WeightedPrincipalMoments,
  WeightedPrincipalAxes,
  WeightedElongation,
  WeightedFlatness
};

struct FieldInfo
{
  const char * name;
  Field        field;
  int          components; ///< 0: 1; -1: D; -2: 2D (bbox); -3: D x D
  bool         isFloat;
  bool         shape;
  bool         intensity = false; ///< from the feature image's sums (IntensityStatistics)
};

constexpr FieldInfo Fields[] = {
  { "num_pixels", Field::NumPixels, 0, false, false },
  { "area", Field::Area, 0, true, false },
  { "bbox", Field::BoundingBox, -2, false, false },
  { "centroid", Field::Centroid, -1, true, false },
  { "num_pixels_on_border", Field::NumPixelsOnBorder, 0, false, true },
  { "perimeter_on_border", Field::PerimeterOnBorder, 0, true, true },
  { "perimeter_on_border_ratio", Field::PerimeterOnBorderRatio, 0, true, true },
  { "perimeter", Field::Perimeter, 0, true, true },
  { "roundness", Field::Roundness, 0, true, true },
  { "elongation", Field::Elongation, 0, true, true },
  { "flatness", Field::Flatness, 0, true, true },
  { "equivalent_spherical_radius", Field::EquivalentSphericalRadius, 0, true, true },
  { "equivalent_spherical_perimeter", Field::EquivalentSphericalPerimeter, 0, true, true },
  { "feret_diameter", Field::FeretDiameter, 0, true, true },
  { "principal_moments", Field::PrincipalMoments, -1, true, true },
  { "principal_axes", Field::PrincipalAxes, -3, true, true },
  { "equivalent_ellipsoid_diameter", Field::EquivalentEllipsoidDiameter, -1, true, true },
  { "oriented_bounding_box_size", Field::OrientedBoundingBoxSize, -1, true, true },
  { "oriented_bounding_box_origin", Field::OrientedBoundingBoxOrigin, -1, true, true },
  { "intensity_min", Field::IntensityMinimum, 0, true, false, true },
  { "intensity_max", Field::IntensityMaximum, 0, true, false, true },
  { "intensity_sum", Field::IntensitySum, 0, true, false, true },
  { "intensity_mean", Field::IntensityMean, 0, true, false, true },
  { "intensity_stddev", Field::IntensityStandardDeviation, 0, true, false, true },
  { "intensity_variance", Field::IntensityVariance, 0, true, false, true },
  { "intensity_skewness", Field::IntensitySkewness, 0, true, false, true },
  { "intensity_kurtosis", Field::IntensityKurtosis, 0, true, false, true },
  { "centroid_weighted", Field::CentroidWeighted, -1, true, false, true },
  { "weighted_principal_moments", Field::WeightedPrincipalMoments, -1, true, false, true },
  { "weighted_principal_axes", Field::WeightedPrincipalAxes, -3, true, false, true },
  { "weighted_elongation", Field::WeightedElongation, 0, true, false, true },
  { "weighted_flatness", Field::WeightedFlatness, 0, true, false, true },
};

const FieldInfo *
Find(const std::string & name)
{
  for (const FieldInfo & f : Fields)
  {
    if (name == f.name)
    {
      return &f;
    }
  }
  return nullptr;
}

std::size_t
ComponentsOf(const FieldInfo & f, unsigned d)
{
  switch (f.components)
  {
    case 0:
      return 1;
    case -1:
      return d;
    case -2:
      return 2 * d;
    default:
      return std::size_t{ d } * d;
  }
}

struct Target
{
  const FieldInfo * info;
  void *            data;
};

/** Writes component k's values of one field; c-th value at data[c * count + k]. */
void
Store(const Target & t, const ShapeAttributes & a, const IntensityStatistics & s, unsigned d, std::uint64_t count,
      std::uint64_t k)
{
  double *        f = static_cast<double *>(t.data);
  std::int64_t *  i = static_cast<std::int64_t *>(t.data);
  std::uint64_t * u = static_cast<std::uint64_t *>(t.data);
  auto            axis = [d](unsigned c) { return d - 1 - c; }; // array axis c is ITK axis d-1-c
  switch (t.info->field)
  {
    case Field::NumPixels:
      u[k] = a.numberOfPixels;
      break;
    case Field::Area:
      f[k] = a.physicalSize;
      break;
    case Field::BoundingBox:
      for (unsigned c = 0; c < d; ++c)
      {
        i[c * count + k] = a.boundingBoxIndex[axis(c)];
        i[(d + c) * count + k] = a.boundingBoxIndex[axis(c)] + static_cast<std::int64_t>(a.boundingBoxSize[axis(c)]);
      }
      break;
    case Field::Centroid:
      for (unsigned c = 0; c < d; ++c)
      {
        f[c * count + k] = a.centroid[axis(c)];
      }
      break;
    case Field::NumPixelsOnBorder:
      u[k] = a.numberOfPixelsOnBorder;
      break;
    case Field::PerimeterOnBorder:
      f[k] = a.perimeterOnBorder;
      break;
    case Field::PerimeterOnBorderRatio:
      f[k] = a.perimeterOnBorderRatio;
      break;
    case Field::Perimeter:
      f[k] = a.perimeter;
      break;
    case Field::Roundness:
      f[k] = a.roundness;
      break;
    case Field::Elongation:
      f[k] = a.elongation;
      break;
    case Field::Flatness:
      f[k] = a.flatness;
      break;
    case Field::EquivalentSphericalRadius:
      f[k] = a.equivalentSphericalRadius;
      break;
    case Field::EquivalentSphericalPerimeter:
      f[k] = a.equivalentSphericalPerimeter;
      break;
    case Field::FeretDiameter:
      f[k] = a.feretDiameter;
      break;
    case Field::PrincipalMoments: // ascending, as ITK: not an axis order
      for (unsigned c = 0; c < d; ++c)
      {
        f[c * count + k] = a.principalMoments[c];
      }
      break;
    case Field::PrincipalAxes: // axis m (of moment m), its components in array axis order
      for (unsigned m = 0; m < d; ++m)
      {
        for (unsigned c = 0; c < d; ++c)
        {
          f[(m * d + c) * count + k] = a.principalAxes[m][axis(c)];
        }
      }
      break;
    case Field::EquivalentEllipsoidDiameter:
      for (unsigned c = 0; c < d; ++c)
      {
        f[c * count + k] = a.equivalentEllipsoidDiameter[c];
      }
      break;
    case Field::OrientedBoundingBoxSize: // along the principal axes
      for (unsigned c = 0; c < d; ++c)
      {
        f[c * count + k] = a.orientedBoundingBoxSize[c];
      }
      break;
    case Field::OrientedBoundingBoxOrigin:
      for (unsigned c = 0; c < d; ++c)
      {
        f[c * count + k] = a.orientedBoundingBoxOrigin[axis(c)];
      }
      break;
    case Field::IntensityMinimum:
      f[k] = s.minimum;
      break;
    case Field::IntensityMaximum:
      f[k] = s.maximum;
      break;
    case Field::IntensitySum:
      f[k] = s.sum;
      break;
    case Field::IntensityMean:
      f[k] = s.mean;
      break;
    case Field::IntensityStandardDeviation:
      f[k] = s.standardDeviation;
      break;
    case Field::IntensityVariance:
      f[k] = s.variance;
      break;
    case Field::IntensitySkewness:
      f[k] = s.skewness;
      break;
    case Field::IntensityKurtosis:
      f[k] = s.kurtosis;
      break;
    case Field::CentroidWeighted: // ITK's center of gravity: a physical point
      for (unsigned c = 0; c < d; ++c)
      {
        f[c * count + k] = s.centerOfGravity[axis(c)];
      }
      break;
    case Field::WeightedPrincipalMoments: // ascending, as ITK
      for (unsigned c = 0; c < d; ++c)
      {
        f[c * count + k] = s.weightedPrincipalMoments[c];
      }
      break;
    case Field::WeightedPrincipalAxes:
      for (unsigned m = 0; m < d; ++m)
      {
        for (unsigned c = 0; c < d; ++c)
        {
          f[(m * d + c) * count + k] = s.weightedPrincipalAxes[m][axis(c)];
        }
      }
      break;
    case Field::WeightedElongation:
      f[k] = s.weightedElongation;
      break;
    case Field::WeightedFlatness:
      f[k] = s.weightedFlatness;
      break;
  }
}

} // namespace

bool
DescribeColumn(const std::string & name, unsigned dimension, std::size_t & components, bool & isFloat,
               bool & needsShapeSums)
{
  const FieldInfo * f = Find(name);
  if (f == nullptr)
  {
    return false;
  }
  components = ComponentsOf(*f, dimension);
  isFloat = f->isFloat;
  needsShapeSums = f->shape;
  return true;
}

void
FillColumns(CudaConnectedComponentAnalysisEngine & engine, const TableRequest & request)
{
  const unsigned      d = request.dimension;
  const std::uint64_t count = request.count;
  std::vector<Target> targets;
  bool                shape = false;
  bool                intensity = false;
  bool                weightedMoments = false; ///< an eigen-decomposition per component: only where asked
  for (const Column & c : request.columns)
  {
    const FieldInfo * f = Find(c.name);
    if (f == nullptr)
    {
      throw Error("table: no column named '" + c.name + "'");
    }
    if (c.size != ComponentsOf(*f, d) * count || c.isFloat != f->isFloat)
    {
      throw Error("table: column '" + c.name + "' has the wrong size or type");
    }
    shape = shape || f->shape;
    intensity = intensity || f->intensity;
    weightedMoments = weightedMoments || f->field == Field::WeightedPrincipalMoments ||
                      f->field == Field::WeightedPrincipalAxes || f->field == Field::WeightedElongation ||
                      f->field == Field::WeightedFlatness;
    targets.push_back({ f, c.data });
  }
  if (intensity && !engine.HasIntensityStatistics())
  {
    throw Error("table: the intensity columns need an intensity image (label(..., intensity=...))");
  }
  if (targets.empty() || count == 0)
  {
    return;
  }
  Lines lines;
  if (request.options.computeFeretDiameter || request.options.computeOrientedBoundingBox)
  {
    engine.ComputeLines(request.geometry, lines);
  }
  // Only for columns other than the intensity ones: the calculator reads the ComponentSums rows, which the CUDA
  // engine converts from its device arrays for every component.
  const bool other = std::any_of(targets.begin(), targets.end(), [](const Target & t) { return !t.info->intensity; });
  const auto calculator =
    other ? engine.MakeShapeAttributeCalculator(request.geometry, request.options, lines) : nullptr;
  const unsigned threads = request.threads != 0 ? request.threads : std::max(1u, std::thread::hardware_concurrency());
  ParallelForRange(threads, count, 1u << 14, [&](std::uint64_t begin, std::uint64_t end) {
    ShapeAttributes     a;
    IntensityStatistics s;
    for (std::uint64_t k = begin; k < end; ++k)
    {
      if (intensity)
      {
        engine.ComputeIntensityStatistics(k, request.geometry, s, weightedMoments);
      }
      if (shape)
      {
        calculator->Compute(k, a);
      }
      else if (other)
      {
        calculator->ComputeBasic(k, a);
      }
      for (const Target & t : targets)
      {
        Store(t, a, s, d, count, k);
      }
    }
  });
}

} // namespace python
} // namespace cca
} // namespace itk
