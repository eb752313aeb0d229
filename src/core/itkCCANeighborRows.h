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

#include <cstdint>

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

/** Which of PrecedingNeighborRowOffsets()'s rows cover others: where a covering row is foreground at a pixel x, the
 * runs of a row and of a covered row that overlap at x need no union of their own. Both touch the covering row's run at
 * x, and the unions that join that run to each of them are never skipped, or skipped only for the same reason one
 * slice further back, which ends at the first slice. Call the rows A (y-1, z), C (y, z-1), B (y-1, z-1), D (y+1, z-1):
 *  - C covers A, B and D. A run at x of this row and one of C are face neighbors, and so are runs at x of C and of B
 *    or D; those of C and A are edge neighbors, so this needs edges to join. This row's union with C is never skipped.
 *    C's run's union with B's or D's is the A-row union of row C or D, one slice back. A's run's union with C's is the
 *    D-row union of row A, covered in its turn only by rows one slice back.
 *  - A covers B. Runs at x of this row and A are face neighbors, and so are those of A and B. A's union with B is row
 *    A's C-row union, never skipped; this row's union with A is made, or covered by C as above.
 * `coveringRow` gets the indices of C and A (-1: none), `coveredBy[n]` bit k where coveringRow[k] covers row n. Nothing
 * is covered in 2-D, with face connectivity (no rows B and D, and A and C do not touch), or where touching runs must
 * also have equal values (`equalValuesOnly`, multi-label input): a covering run need not join both there. */
inline void
CoveringNeighborRows(const NeighborRowOffset * offsets, unsigned count, const Connectivity & connectivity,
                     bool equalValuesOnly, int coveringRow[2], std::uint32_t coveredBy[4])
{
  coveringRow[0] = coveringRow[1] = -1;
  for (unsigned n = 0; n < 4; ++n)
  {
    coveredBy[n] = 0;
  }
  int c = -1;
  int a = -1;
  for (unsigned n = 0; n < count; ++n)
  {
    c = offsets[n].dy == 0 && offsets[n].dz == -1 ? static_cast<int>(n) : c;
    a = offsets[n].dy == -1 && offsets[n].dz == 0 ? static_cast<int>(n) : a;
  }
  if (equalValuesOnly || c < 0 || a < 0 || !connectivity.Joins(2))
  {
    return;
  }
  coveringRow[0] = c;
  coveringRow[1] = a;
  for (unsigned n = 0; n < count; ++n)
  {
    if (static_cast<int>(n) != c)
    {
      coveredBy[n] |= 1u; // A, B, D by C
    }
    if (offsets[n].dy == -1 && offsets[n].dz == -1)
    {
      coveredBy[n] |= 2u; // B by A
    }
  }
}

} // namespace cca
} // namespace itk

#endif
