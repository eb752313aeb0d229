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
#ifndef itkCudaConnectedComponentAnalysisAttributes_h
#define itkCudaConnectedComponentAnalysisAttributes_h

#include "CudaConnectedComponentAnalysisExport.h"
#include "itkCCATypes.h"

#include <cstddef>
#include <string>

namespace itk
{
namespace cca
{

/** The most values one attribute has (a D x D matrix, a bounding box's 2D). */
constexpr std::size_t MaxAttributeValues = 2 * MaxDimension * MaxDimension;

/** How an attribute's values are laid out in `dimension` D. Coordinates (PerAxis, BoundingBox, the columns of
 * AxisMatrix) are in ITK's axis order (x first); the Python table turns them into the array's order (z first). */
enum class AttributeLayout : std::uint8_t
{
  Scalar,           ///< one value
  PerAxis,          ///< D values, one per image axis (a point, an index, a size)
  PerPrincipalAxis, ///< D values, one per principal axis (ascending moments): not reordered
  BoundingBox,      ///< 2D values: the first index per axis, then the end (last index + 1) per axis
  AxisMatrix        ///< D x D values, row m the m-th principal axis, its components per image axis
};

/** What an attribute is computed from: the smallest analysis that makes it. */
enum class AttributeSource : std::uint8_t
{
  Basic,               ///< the sums every analysis makes (pixels, bounding box, index sums)
  Shape,               ///< also the second moments and border counts (Request::computeShapeSums)
  Perimeter,           ///< also the perimeter intercepts (Request::computePerimeter)
  FeretDiameter,       ///< also a pass over each object's pixels (ShapeOptions::computeFeretDiameter)
  OrientedBoundingBox, ///< also a pass over each object's pixels (ShapeOptions::computeOrientedBoundingBox)
  Intensity,           ///< a feature image's sums (Request::feature)
  WeightedMoments      ///< a feature image's sums and an eigen-decomposition per object
};

/** Which tables list an attribute without being asked for it by name. */
enum class AttributeGroup : std::uint8_t
{
  Basic,            ///< every table (Python: properties="basic", the default)
  Shape,            ///< the full shape table (Python: "all"; the CLI's CSV and JSON)
  OnRequest,        ///< only when asked (ITK, too, computes these only on request)
  IntensityDefault, ///< with a feature image, by default
  Intensity         ///< with a feature image, in the full table
};

/** One per-object attribute: its names, layout, source and formula. The list of them (Attributes()) is the one
 * place an attribute is defined; the filter's tables, the Python table and the cca tool's CSV and JSON are made
 * from it. */
struct AttributeDefinition
{
  const char *    itkName;    ///< ITK's LabelObject name (the filter's tables, the CLI); nullptr: none
  const char *    pythonName; ///< scikit-image's regionprops name where it has one (the Python table); nullptr: none
  AttributeLayout layout;
  bool            integer; ///< integer values (pixel counts, indices), exact in a double up to 2^53
  AttributeSource source;
  AttributeGroup  group;
  /** Writes the attribute's values (NumberOfValues()) in `dimension` D, from one object's shape attributes
   * (filled as far as `source` needs) and intensity statistics (with an intensity source). */
  void (*compute)(const ShapeAttributes & shape, const IntensityStatistics & intensity, unsigned dimension,
                  double * values);
  const char * description; ///< what it is, and its unit
};

/** Every attribute, in the order of the tables' columns. */
CudaConnectedComponentAnalysis_EXPORT const AttributeDefinition *
Attributes(std::size_t & count);

/** The attribute named `name` (ITK's name or the Python name); nullptr where there is none. */
CudaConnectedComponentAnalysis_EXPORT const AttributeDefinition *
FindAttribute(const std::string & name);

/** How many values the attribute has in `dimension` D. */
CudaConnectedComponentAnalysis_EXPORT std::size_t
NumberOfValues(const AttributeDefinition & attribute, unsigned dimension);

/** Whether the attribute needs the shape sums, the perimeter intercepts, a feature image. */
constexpr bool
NeedsShapeSums(const AttributeDefinition & attribute)
{
  return attribute.source == AttributeSource::Shape || attribute.source == AttributeSource::Perimeter ||
         attribute.source == AttributeSource::FeretDiameter ||
         attribute.source == AttributeSource::OrientedBoundingBox;
}
constexpr bool
NeedsPerimeter(const AttributeDefinition & attribute)
{
  return attribute.source == AttributeSource::Perimeter;
}
constexpr bool
NeedsIntensity(const AttributeDefinition & attribute)
{
  return attribute.source == AttributeSource::Intensity || attribute.source == AttributeSource::WeightedMoments;
}

} // namespace cca
} // namespace itk

#endif
