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
#ifndef itkCCALineAttributes_h
#define itkCCALineAttributes_h

// The two optional attributes that ShapeLabelMapFilter reads from an object's lines rather than from sums
// (the Feret diameter and the oriented bounding box), computed the same way on a component's lines.
// Included only by itkCCAShapeAttributes.cxx.

#include "itkCCATypes.h"

#include "itkImageBase.h"
#include "itkMatrix.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

namespace itk
{
namespace cca
{

/** Line `line`'s start index. */
template <unsigned int D>
Index<D>
LineIndex(const Lines & lines, std::uint64_t line)
{
  Index<D> idx;
  for (unsigned int i = 0; i < D; ++i)
  {
    idx[i] = lines.index[line][i];
  }
  return idx;
}

/** The row (y, z) of an index. */
template <unsigned int D>
std::pair<IndexValueType, IndexValueType>
RowKey(const Index<D> & idx)
{
  return { D > 1 ? idx[1 % D] : 0, D > 2 ? idx[2 % D] : 0 };
}

/** ShapeLabelMapFilter::ComputeFeretDiameter: the largest distance (index differences times spacing, as
 * ITK) between boundary pixels, those with a neighbor (3^D − 1 offsets) outside the object or the image.
 * Membership is looked up in the component's lines, grouped by row. */
template <unsigned int D>
double
FeretDiameter(const Lines & lines, std::uint64_t component, const ImageRegion<D> & region,
              const Vector<double, D> & spacing)
{
  using IndexType = Index<D>;
  const std::uint64_t first = lines.firstLine[component];
  const std::uint64_t last = lines.firstLine[component + 1];
  std::map<std::pair<IndexValueType, IndexValueType>, std::vector<std::pair<IndexValueType, IndexValueType>>> rows;
  for (std::uint64_t l = first; l < last; ++l)
  {
    const IndexType idx = LineIndex<D>(lines, l);
    rows[RowKey<D>(idx)].emplace_back(idx[0], idx[0] + static_cast<IndexValueType>(lines.length[l]) - 1);
  }
  auto contains = [&rows](const IndexType & idx) {
    auto row = rows.find(RowKey<D>(idx));
    if (row == rows.end())
    {
      return false;
    }
    const auto & lines = row->second;
    auto         it = std::upper_bound(
      lines.begin(), lines.end(), idx[0], [](IndexValueType x, const std::pair<IndexValueType, IndexValueType> & line) {
        return x < line.first;
      });
    return it != lines.begin() && idx[0] <= std::prev(it)->second;
  };
  unsigned int numOffsets = 1;
  for (unsigned int d = 0; d < D; ++d)
  {
    numOffsets *= 3;
  }
  std::vector<IndexType> boundary;
  for (std::uint64_t l = first; l < last; ++l)
  {
    IndexType idx = LineIndex<D>(lines, l);
    for (std::uint64_t x = 0; x < lines.length[l]; ++x, ++idx[0])
    {
      bool onBoundary = false;
      for (unsigned int o = 0; o < numOffsets && !onBoundary; ++o)
      {
        IndexType    neighbor = idx;
        unsigned int code = o;
        bool         centre = true;
        for (unsigned int d = 0; d < D; ++d, code /= 3)
        {
          const int delta = static_cast<int>(code % 3) - 1;
          neighbor[d] += delta;
          centre = centre && delta == 0;
        }
        onBoundary = !centre && (!region.IsInside(neighbor) || !contains(neighbor));
      }
      if (onBoundary)
      {
        boundary.push_back(idx);
      }
    }
  }
  double feret = 0;
  for (std::size_t p = 0; p < boundary.size(); ++p)
  {
    for (std::size_t q = p + 1; q < boundary.size(); ++q)
    {
      double length = 0;
      for (unsigned int i = 0; i < D; ++i)
      {
        length += std::pow((boundary[p][i] - boundary[q][i]) * spacing[i], 2);
      }
      feret = std::max(feret, length);
    }
  }
  return std::sqrt(feret);
}

/** ShapeLabelMapFilter::ComputeOrientedBoundingBox, on the component's lines. */
template <unsigned int D>
void
SetOrientedBoundingBox(const Lines & lines, std::uint64_t component, const ImageBase<D> * image,
                       const Matrix<double, D, D> & principalAxes, const Point<double, D> & centroid,
                       ShapeAttributes & a)
{
  using IndexType = Index<D>;
  using PointType = Point<double, D>;
  using VNLMatrixType = vnl_matrix<double>;
  using VNLVectorType = vnl_vector<double>;
  const std::uint64_t first = lines.firstLine[component];
  const std::uint64_t numLines = lines.firstLine[component + 1] - first;
  VNLMatrixType       principalAxesBasisMatrix{ principalAxes.GetVnlMatrix().as_matrix() };
  VNLMatrixType       pixelLocations(D, static_cast<unsigned int>(numLines * 2));
  for (unsigned int l = 0; l < numLines; ++l)
  {
    IndexType idx = LineIndex<D>(lines, first + l);
    PointType pt;
    image->TransformIndexToPhysicalPoint(idx, pt);
    for (unsigned int j = 0; j < D; ++j)
    {
      pixelLocations(j, l * 2) = pt[j] - centroid[j];
    }
    idx[0] += static_cast<IndexValueType>(lines.length[first + l]) - 1;
    image->TransformIndexToPhysicalPoint(idx, pt);
    for (unsigned int j = 0; j < D; ++j)
    {
      pixelLocations(j, l * 2 + 1) = pt[j] - centroid[j];
    }
  }
  const VNLMatrixType transformed = principalAxesBasisMatrix * pixelLocations;
  VNLVectorType       minimumPrincipalAxis = transformed.get_column(0);
  VNLVectorType       maximumPrincipalAxis = transformed.get_column(0);
  for (unsigned int column = 1; column < transformed.columns(); ++column)
  {
    for (unsigned int i = 0; i < D; ++i)
    {
      minimumPrincipalAxis[i] = std::min(minimumPrincipalAxis[i], transformed(i, column));
      maximumPrincipalAxis[i] = std::max(maximumPrincipalAxis[i], transformed(i, column));
    }
  }
  VNLVectorType adjustedMinimum = minimumPrincipalAxis;
  VNLVectorType adjustedMaximum = maximumPrincipalAxis;
  for (unsigned int p = 0; p < 1u << D; ++p)
  {
    Vector<double, D> spacingAxis(0.5 * image->GetSpacing());
    for (unsigned int i = 0; i < D; ++i)
    {
      if (p & 1u << i)
      {
        spacingAxis[i] *= -1;
      }
    }
    const auto          physicalOffset = image->TransformLocalVectorToPhysicalVector(spacingAxis);
    const VNLVectorType paOffset = principalAxesBasisMatrix * physicalOffset.GetVnlVector();
    for (unsigned int i = 0; i < D; ++i)
    {
      adjustedMinimum[i] = std::min(adjustedMinimum[i], minimumPrincipalAxis[i] + paOffset[i]);
      adjustedMaximum[i] = std::max(adjustedMaximum[i], maximumPrincipalAxis[i] + paOffset[i]);
    }
  }
  principalAxesBasisMatrix.inplace_transpose();
  const VNLVectorType minimum = principalAxesBasisMatrix * adjustedMinimum;
  for (unsigned int i = 0; i < D; ++i)
  {
    a.orientedBoundingBoxSize[i] = std::abs(adjustedMaximum[i] - adjustedMinimum[i]);
    a.orientedBoundingBoxOrigin[i] = minimum[i] + centroid[i];
  }
}

} // namespace cca
} // namespace itk

#endif
