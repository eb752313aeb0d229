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
#ifndef itkCCAPairsAcross_h
#define itkCCAPairsAcross_h

// The pixels that face each other across a plane cut through an image: the rule by which the pieces of a
// component labeled apart (the slabs of a large image, the chunks of a Dask array) are joined again.

#include "itkCCATypes.h"

#include <algorithm>
#include <cstdint>

namespace itk
{
namespace cca
{

/** A plane of pixels, x fastest: x and y (a 2-D image's plane is one row, a 1-D image's one pixel). Along a
 * wrapped axis (periodic boundaries) the pixel past the last one is the first. */
struct PlaneShape
{
  std::uint64_t width = 1;
  std::uint64_t height = 1;
  bool          wrapX = false;
  bool          wrapY = false;
};

/** Calls visit(i, j, dx, dy) for each pixel i of a plane and each pixel j = i + (dx, dy) of the next plane, with
 * |dx|, |dy| at most `reach` (0 or 1) and j inside the plane, or wrapped into it along a wrapped axis; offset by
 * offset, each over the plane's rows [firstRow, endRow) (of i; by default all). */
template <typename TVisit>
void
ForEachPairAcross(const PlaneShape & shape, int reach, const TVisit & visit, std::uint64_t firstRow = 0,
                  std::uint64_t endRow = UINT64_MAX)
{
  const auto w = static_cast<std::int64_t>(shape.width);
  const auto h = static_cast<std::int64_t>(shape.height);
  const int  reachX = w > 1 ? reach : 0;
  const int  reachY = h > 1 ? reach : 0;
  for (int dy = -reachY; dy <= reachY; ++dy)
  {
    const std::int64_t firstY = std::max<std::int64_t>(dy < 0 && !shape.wrapY ? 1 : 0,
                                                       static_cast<std::int64_t>(std::min<std::uint64_t>(firstRow, h)));
    const std::int64_t endY = std::min<std::int64_t>(dy > 0 && !shape.wrapY ? h - 1 : h,
                                                     static_cast<std::int64_t>(std::min<std::uint64_t>(endRow, h)));
    for (int dx = -reachX; dx <= reachX; ++dx)
    {
      const std::int64_t firstX = dx < 0 && !shape.wrapX ? 1 : 0;
      const std::int64_t endX = dx > 0 && !shape.wrapX ? w - 1 : w;
      for (std::int64_t y = firstY; y < endY; ++y)
      {
        const std::int64_t ny = y + dy < 0 ? h - 1 : (y + dy >= h ? 0 : y + dy);
        for (std::int64_t x = firstX; x < endX; ++x)
        {
          // Only the first and last pixel of a wrapped row wrap: no division in the loop.
          const std::int64_t nx = x + dx < 0 ? w - 1 : (x + dx >= w ? 0 : x + dx);
          visit(static_cast<std::uint64_t>(y * w + x), static_cast<std::uint64_t>(ny * w + nx), dx, dy);
        }
      }
    }
  }
}

/** The pairs across that `connectivity` joins: the pixel straight across (one non-zero offset component), and its
 * neighbors in the plane where they add no more non-zero components than the connectivity allows (fully
 * connected: all 3 in 2-D, all 9 in 3-D). Calls visit(i, j) for each, i in the rows [firstRow, endRow). */
template <typename TVisit>
void
ForEachJoinedPairAcross(const PlaneShape & shape, Connectivity connectivity, const TVisit & visit,
                        std::uint64_t firstRow = 0, std::uint64_t endRow = UINT64_MAX)
{
  ForEachPairAcross(
    shape,
    connectivity.IsFace() ? 0 : 1,
    [&](std::uint64_t i, std::uint64_t j, int dx, int dy) {
      if (connectivity.Joins(1u + (dx != 0 ? 1u : 0u) + (dy != 0 ? 1u : 0u)))
      {
        visit(i, j);
      }
    },
    firstRow,
    endRow);
}

} // namespace cca
} // namespace itk

#endif
