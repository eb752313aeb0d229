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
#ifndef itkCCANeighborRows_h
#define itkCCANeighborRows_h

#include "itkCCATypes.h"

namespace itk
{
namespace cca
{

/** A row that precedes a row in raster order and may hold its neighbors: at (dy, dz) from it, its pixels at x and,
 * where `widening` is 1, at x - 1 and x + 1 too. */
struct NeighborRowOffset
{
  int           dy = 0;
  int           dz = 0;
  std::uint64_t widening = 0;
};

/** The rows a row's runs unite with, for both engines: the preceding half of the neighborhood (so that each pair of
 * rows is compared once) that `connectivity` joins, in a `dimension`-D image: (y-1, z), in 3-D (y, z-1), and where
 * offsets of two non-zero components join, (y-1, z-1) and (y+1, z-1). The x-neighbors of a row add one non-zero
 * component: they join where that many do. Returns how many (at most 4). */
inline unsigned
PrecedingNeighborRowOffsets(const Connectivity & connectivity, unsigned dimension, NeighborRowOffset offsets[4])
{
  unsigned count = 0;
  auto     add = [&](int dy, int dz) {
    const unsigned nonZero = (dy != 0 ? 1u : 0u) + (dz != 0 ? 1u : 0u);
    if (connectivity.Joins(nonZero))
    {
      offsets[count++] = NeighborRowOffset{ dy, dz, connectivity.Joins(nonZero + 1) ? 1u : 0u };
    }
  };
  if (dimension >= 2)
  {
    add(-1, 0);
  }
  if (dimension >= 3)
  {
    add(0, -1);
    add(-1, -1);
    add(+1, -1);
  }
  return count;
}

} // namespace cca
} // namespace itk

#endif
