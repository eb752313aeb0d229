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
#ifndef itkCCAPixelNeighbors_h
#define itkCCAPixelNeighbors_h

// A pixel's neighbors before it in raster order that a connectivity joins: each neighbor pair of an image once.
// Written once for the pixel-level passes of both engines (value tolerance, contacts): host functions for the CPU
// engine, device functions for the CUDA engine's kernels.

#include "itkCCARunMath.h" // CCA_HOST_DEVICE

#include <cstdint>
#include <type_traits>

namespace itk
{
namespace cca
{

/** The extent of an image as the pixel-level passes see it (unused dimensions 1). */
struct PixelGrid
{
  std::int64_t width = 1;
  std::int64_t height = 1;
  std::int64_t depth = 1;
  unsigned     dimension = 2;
};

/** Calls visit(q, axis) for each neighbor q (linear index) of pixel (x, y, z) that comes before it in raster order,
 * lies in the image and is joined at `maxNonZero` (the most non-zero offset components); `axis` is the axis of a face
 * neighbor's offset, or -1 for an edge or corner neighbor. */
template <typename TVisit>
CCA_HOST_DEVICE void
ForEachPrecedingNeighbor(const PixelGrid & grid, std::int64_t x, std::int64_t y, std::int64_t z, unsigned maxNonZero,
                         TVisit && visit)
{
  const int reachY = grid.dimension > 1 ? 1 : 0;
  const int reachZ = grid.dimension > 2 ? 1 : 0;
  for (int dz = -reachZ; dz <= 0; ++dz)
  {
    for (int dy = -reachY; dy <= (dz < 0 ? reachY : 0); ++dy)
    {
      for (int dx = -1; dx <= (dz < 0 || dy < 0 ? 1 : -1); ++dx)
      {
        const unsigned     nonZero = (dx != 0 ? 1u : 0u) + (dy != 0 ? 1u : 0u) + (dz != 0 ? 1u : 0u);
        const std::int64_t qx = x + dx;
        const std::int64_t qy = y + dy;
        const std::int64_t qz = z + dz;
        if (nonZero > maxNonZero || qx < 0 || qx >= grid.width || qy < 0 || qy >= grid.height || qz < 0)
        {
          continue;
        }
        const int axis = nonZero != 1 ? -1 : dx != 0 ? 0 : dy != 0 ? 1 : 2;
        visit(static_cast<std::uint64_t>((qz * grid.height + qy) * grid.width + qx), axis);
      }
    }
  }
}

/** Whether a label is negative (never, for an unsigned type). */
template <typename T>
CCA_HOST_DEVICE bool
IsNegative(T value)
{
  if constexpr (std::is_signed<T>::value)
  {
    return value < T(0);
  }
  else
  {
    return false;
  }
}

} // namespace cca
} // namespace itk

#endif
