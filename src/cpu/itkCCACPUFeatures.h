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
#ifndef itkCCACPUFeatures_h
#define itkCCACPUFeatures_h

// The per-run feature sums of the CPU engine: adding one run to a component's ComponentSums
// (pixel count, bounding box, index sums), and on request the second moments, border counts and
// perimeter intercepts that ITK's shape attributes are computed from, plus the merge of two partial
// sums of one component. The closed-form arithmetic per run is shared with the CUDA engine through
// itkCCARunMath.h; this header holds the CPU side around it (which rows and runs to compare), as
// inline functions for the engine's feature stage (itkCCACPUEngineFeatures.cxx) to inline.

#include "itkCCACPURowScan.h"
#include "itkCCAEngine.h"
#include "itkCCARunMath.h"
#include "itkCCAComponentSums.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace itk
{
namespace cca
{
namespace cpu
{

/** Adds the run [begin, end) of row (y, z) to `features`. */
inline void
AddRun(ComponentSums & features, const Run & run, std::uint64_t y, std::uint64_t z)
{
  const std::uint64_t length = run.end - run.begin;
  if (features.numberOfPixels == 0)
  {
    features.boundingBoxMin = { { run.begin, y, z } };
    features.boundingBoxMax = { { run.end - 1, y, z } };
  }
  else
  {
    features.boundingBoxMin[0] = std::min(features.boundingBoxMin[0], run.begin);
    features.boundingBoxMin[1] = std::min(features.boundingBoxMin[1], y);
    features.boundingBoxMin[2] = std::min(features.boundingBoxMin[2], z);
    features.boundingBoxMax[0] = std::max(features.boundingBoxMax[0], run.end - 1);
    features.boundingBoxMax[1] = std::max(features.boundingBoxMax[1], y);
    features.boundingBoxMax[2] = std::max(features.boundingBoxMax[2], z);
  }
  features.numberOfPixels += length;
  std::uint64_t sums[3];
  runmath::RunIndexSums(runmath::SumOfRange(run.begin, run.end), length, y, z, sums);
  for (unsigned d = 0; d < MaxDimension; ++d)
  {
    features.indexSum[d] += sums[d];
  }
}

/** What the shape sums need to know about a row (y, z) besides the run's x range. */
struct RowShape
{
  std::uint64_t y;
  std::uint64_t z;
  std::uint64_t rowLength;
  unsigned      dimension;
  /** Whether the row's y or z (dimensions below `dimension` only) is a first or last index. */
  bool onBorder;
  /** Per dimension d >= 1: how many of the row's y or z faces lie on the border (0, 1 or 2). */
  std::array<std::uint64_t, MaxDimension> borderSides;
};

inline RowShape
MakeRowShape(const std::array<std::uint64_t, MaxDimension> & size, unsigned dimension, std::uint64_t y, std::uint64_t z)
{
  RowShape                                      shape{ y, z, size[0], dimension, false, { { 0, 0, 0 } } };
  const std::array<std::uint64_t, MaxDimension> index{ { 0, y, z } };
  for (unsigned d = 1; d < dimension; ++d)
  {
    shape.borderSides[d] =
      static_cast<std::uint64_t>(index[d] == 0) + static_cast<std::uint64_t>(index[d] + 1 == size[d]);
    shape.onBorder = shape.onBorder || shape.borderSides[d] != 0;
  }
  return shape;
}

/** Adds the second moments and border counts of the run [begin, end) of a row to `features`, as
 * ITK's ShapeLabelMapFilter counts NumberOfPixelsOnBorder and PerimeterOnBorder (the latter per
 * dimension, before the spacing). */
inline void
AddShapeSums(ComponentSums & features, const Run & run, const RowShape & row)
{
  const std::uint64_t length = run.end - run.begin;
  std::uint64_t       products[6];
  runmath::RunIndexProductSums(run.begin, run.end, runmath::SumOfRange(run.begin, run.end), row.y, row.z, products);
  for (std::size_t i = 0; i < features.indexProductSum.size(); ++i)
  {
    features.indexProductSum[i] += products[i];
  }
  features.numberOfPixelsOnBorder += runmath::RunPixelsOnBorder(run.begin, run.end, row.rowLength, row.onBorder);
  features.borderFaces[0] += runmath::RunXBorderFaces(run.begin, run.end, row.rowLength);
  for (unsigned d = 1; d < row.dimension; ++d)
  {
    features.borderFaces[d] += length * row.borderSides[d];
  }
}

/** A row adjacent to the row being measured, for the perimeter intercepts: its runs (none when it
 * lies outside the image), the first of them that can still touch the current run, and the
 * intercept classes of its straight and its x-diagonal neighbors. */
struct InterceptNeighbor
{
  RowRuns       runs;
  std::uint64_t next;
  unsigned      straightClass;
  unsigned      diagonalClass;
};

/** Adds the perimeter intercepts of run `run` of component `component` to `features`: for each
 * pixel of the run and each of its 3^D - 1 neighbors that is not in the component, one intercept
 * of the neighbor's direction class (see ComponentSums::intercepts). The two x neighbors
 * outside the run give two intercepts of class (1,0,0); in each neighboring row, the pixels of
 * the run whose neighbor straight across, and those whose neighbors at x - 1 and x + 1, are not
 * in the component count for the straight and the x-diagonal class. Runs of the neighboring row
 * are visited in order, and `next` moves forward only, as the runs of the current row do. */
inline void
AddIntercepts(ComponentSums & features, const Run & run, std::uint64_t component, InterceptNeighbor * neighbors,
              unsigned numberOfNeighbors, const std::uint64_t * componentOfRun)
{
  const std::uint64_t length = run.end - run.begin;
  features.intercepts[0] += 2;
  for (unsigned j = 0; j < numberOfNeighbors; ++j)
  {
    InterceptNeighbor & neighbor = neighbors[j];
    const Run *         neighborRuns = neighbor.runs.runs;
    const std::uint64_t count = neighbor.runs.count;
    // Runs that end before run.begin - 1 touch neither this run nor any later one.
    std::uint64_t n = neighbor.next;
    while (n < count && neighborRuns[n].end < run.begin)
    {
      ++n;
    }
    neighbor.next = n;

    std::uint64_t straight = 0; // pixels x with x in the component in the neighboring row
    std::uint64_t diagonal = 0; // same for x - 1, plus for x + 1
    for (; n < count && neighborRuns[n].begin <= run.end; ++n)
    {
      if (componentOfRun[neighbor.runs.firstId + n] != component)
      {
        continue;
      }
      const Run & other = neighborRuns[n];
      straight += runmath::Overlap(run.begin, run.end, other.begin, other.end);
      diagonal += runmath::Overlap(run.begin, run.end, other.begin + 1, other.end + 1) +
                  runmath::Overlap(run.begin + 1, run.end + 1, other.begin, other.end);
    }
    features.intercepts[neighbor.straightClass] += length - straight;
    features.intercepts[neighbor.diagonalClass] += 2 * length - diagonal;
  }
}

/** Adds the pixels summed up in `part` to `features`. */
inline void
MergeFeatures(ComponentSums & features, const ComponentSums & part)
{
  if (features.numberOfPixels == 0)
  {
    features = part;
    return;
  }
  AddComponentSums(part, features);
}

} // namespace cpu
} // namespace cca
} // namespace itk

#endif // itkCCACPUFeatures_h
