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
// Included only by itkCCAShapeAttributes.cxx. ITK-free (itkCCAPhysicalSpace.h): the Python package computes them
// with this code too.

#include "itkCCAPhysicalSpace.h"
#include "itkCCATypes.h"

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
IndexOf<D>
LineIndex(const Lines & lines, std::uint64_t line)
{
  IndexOf<D> idx;
  for (unsigned int i = 0; i < D; ++i)
  {
    idx[i] = lines.index[line][i];
  }
  return idx;
}

/** The row (y, z) of an index. */
template <unsigned int D>
std::pair<std::int64_t, std::int64_t>
RowKey(const IndexOf<D> & idx)
{
  return { D > 1 ? idx[1 % D] : 0, D > 2 ? idx[2 % D] : 0 };
}

/** ShapeLabelMapFilter::ComputeFeretDiameter: the largest distance (index differences times spacing, as
 * ITK) between boundary pixels, those with a neighbor (3^D − 1 offsets) outside the object or the image.
 * Membership is looked up in the component's lines, grouped by row. */
template <unsigned int D>
double
FeretDiameter(const Lines & lines, std::uint64_t component, const PhysicalSpace<D> & space)
{
  using IndexType = IndexOf<D>;
  const std::uint64_t first = lines.firstLine[component];
  const std::uint64_t last = lines.firstLine[component + 1];
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<std::int64_t, std::int64_t>>> rows;
  for (std::uint64_t l = first; l < last; ++l)
  {
    const IndexType idx = LineIndex<D>(lines, l);
    rows[RowKey<D>(idx)].emplace_back(idx[0], idx[0] + static_cast<std::int64_t>(lines.length[l]) - 1);
  }
  auto contains = [&rows](const IndexType & idx) {
    auto row = rows.find(RowKey<D>(idx));
    if (row == rows.end())
    {
      return false;
    }
    const auto & lines = row->second;
    auto         it = std::upper_bound(
      lines.begin(), lines.end(), idx[0], [](std::int64_t x, const std::pair<std::int64_t, std::int64_t> & line) {
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
        onBoundary = !centre && (!space.IsInside(neighbor) || !contains(neighbor));
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
        length += std::pow((boundary[p][i] - boundary[q][i]) * space.spacing[i], 2);
      }
      feret = std::max(feret, length);
    }
  }
  return std::sqrt(feret);
}

/** ShapeLabelMapFilter::ComputeOrientedBoundingBox, on the component's lines; the products as vnl's matrix
 * products sum them (from zero, in index order). */
template <unsigned int D>
void
SetOrientedBoundingBox(const Lines & lines, std::uint64_t component, const PhysicalSpace<D> & space,
                       const SquareMatrix<D> & principalAxes, const std::array<double, D> & centroid,
                       ShapeAttributes & a)
{
  using Vector = std::array<double, D>;
  const std::uint64_t first = lines.firstLine[component];
  const std::uint64_t numLines = lines.firstLine[component + 1] - first;
  // principalAxes · (p - centroid): each line's first and last pixel, as ITK's pixel locations.
  auto project = [&](const Vector & p) {
    Vector out;
    for (unsigned int i = 0; i < D; ++i)
    {
      double sum = 0;
      for (unsigned int j = 0; j < D; ++j)
      {
        sum += principalAxes[i][j] * (p[j] - centroid[j]);
      }
      out[i] = sum;
    }
    return out;
  };
  Vector minimumPrincipalAxis{};
  Vector maximumPrincipalAxis{};
  for (std::uint64_t l = 0; l < numLines; ++l)
  {
    IndexOf<D> idx = LineIndex<D>(lines, first + l);
    for (int end = 0; end < 2; ++end)
    {
      if (end == 1)
      {
        idx[0] += static_cast<std::int64_t>(lines.length[first + l]) - 1;
      }
      const Vector t = project(space.IndexToPoint(idx));
      for (unsigned int i = 0; i < D; ++i)
      {
        minimumPrincipalAxis[i] = l == 0 && end == 0 ? t[i] : std::min(minimumPrincipalAxis[i], t[i]);
        maximumPrincipalAxis[i] = l == 0 && end == 0 ? t[i] : std::max(maximumPrincipalAxis[i], t[i]);
      }
    }
  }
  Vector adjustedMinimum = minimumPrincipalAxis;
  Vector adjustedMaximum = maximumPrincipalAxis;
  for (unsigned int p = 0; p < 1u << D; ++p)
  {
    Vector spacingAxis;
    for (unsigned int i = 0; i < D; ++i)
    {
      spacingAxis[i] = 0.5 * space.spacing[i];
      if (p & 1u << i)
      {
        spacingAxis[i] *= -1;
      }
    }
    const Vector physicalOffset = space.LocalVectorToPhysical(spacingAxis);
    for (unsigned int i = 0; i < D; ++i)
    {
      double paOffset = 0;
      for (unsigned int j = 0; j < D; ++j)
      {
        paOffset += principalAxes[i][j] * physicalOffset[j];
      }
      adjustedMinimum[i] = std::min(adjustedMinimum[i], minimumPrincipalAxis[i] + paOffset);
      adjustedMaximum[i] = std::max(adjustedMaximum[i], maximumPrincipalAxis[i] + paOffset);
    }
  }
  for (unsigned int i = 0; i < D; ++i)
  {
    double minimum = 0; // principalAxesᵀ · adjustedMinimum
    for (unsigned int j = 0; j < D; ++j)
    {
      minimum += principalAxes[j][i] * adjustedMinimum[j];
    }
    a.orientedBoundingBoxSize[i] = std::abs(adjustedMaximum[i] - adjustedMinimum[i]);
    a.orientedBoundingBoxOrigin[i] = minimum + centroid[i];
  }
}

} // namespace cca
} // namespace itk

#endif
