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
// Value-tolerance connectivity on the host (itkCCAValueTolerance.h): a union-find over pixels, blocks of rows
// on their own threads, then the rows whose neighbors lie in an earlier block, then one pass that turns every
// pixel's parent into its component's class. Roots always link under the smaller one, so a root is its
// component's first pixel and parents never point forward: the last pass can read each parent's final class.
#include "itkCCAValueTolerance.h"

#include "itkCCACPURowScan.h" // FindRoot, Unite
#include "itkCCAParallelFor.h"
#include "itkCCAPixelNeighbors.h"
#include "itkCCAScalarDispatch.h"

#include <algorithm>
#include <vector>

namespace itk
{
namespace cca
{
namespace
{
/** Non-zero input inside the mask, as 0 / 1 per pixel. */
std::vector<std::uint8_t>
Foreground(const Request & request, unsigned numberOfThreads)
{
  const std::uint64_t       n = request.NumberOfPixels();
  std::vector<std::uint8_t> foreground(static_cast<std::size_t>(n));
  const std::uint64_t       chunk = 1u << 20;
  DispatchScalarKind(request.inputKind, [&](auto tag) {
    using T = decltype(tag);
    const T * input = static_cast<const T *>(request.input);
    ParallelFor(numberOfThreads, (n + chunk - 1) / chunk, [&](std::uint64_t c) {
      for (std::uint64_t p = c * chunk; p < std::min(n, (c + 1) * chunk); ++p)
      {
        foreground[p] = input[p] != T(0);
      }
    });
  });
  if (request.mask)
  {
    DispatchScalarKind(request.maskKind, [&](auto tag) {
      using M = decltype(tag);
      const M * mask = static_cast<const M *>(request.mask);
      ParallelFor(numberOfThreads, (n + chunk - 1) / chunk, [&](std::uint64_t c) {
        for (std::uint64_t p = c * chunk; p < std::min(n, (c + 1) * chunk); ++p)
        {
          foreground[p] &= mask[p] != M(0);
        }
      });
    });
  }
  return foreground;
}
} // namespace

template <typename TId>
void
LabelWithinTolerance(const Request & request, unsigned numberOfThreads, TId * classes)
{
  const std::uint64_t width = request.size[0];
  const std::uint64_t height = request.size[1];
  const std::uint64_t numRows = request.size[1] * request.size[2];
  const std::uint64_t numPixels = request.NumberOfPixels();
  const PixelGrid     grid{ static_cast<std::int64_t>(request.size[0]),
                        static_cast<std::int64_t>(request.size[1]),
                        static_cast<std::int64_t>(request.size[2]),
                        request.dimension };
  const auto          foreground = Foreground(request, numberOfThreads);
  TId * const         parent = classes;
  // Blocks of rows, a few per thread: each unites its pixels with their neighbors in its own rows.
  const std::uint64_t numBlocks = std::min<std::uint64_t>(numRows, std::max(1u, numberOfThreads) * 4u);
  auto                firstRow = [&](std::uint64_t b) { return numRows * b / numBlocks; };
  DispatchScalarKind(request.inputKind, [&](auto tag) {
    using T = decltype(tag);
    const T *               input = static_cast<const T *>(request.input);
    const ValueCloseness<T> close(request.connectivity.valueTolerance);
    // Unites the pixels of `row` with their preceding neighbors in rows [fromRow, toRow).
    auto uniteRow = [&](std::uint64_t row, std::uint64_t fromRow, std::uint64_t toRow) {
      const auto y = static_cast<std::int64_t>(row % height);
      const auto z = static_cast<std::int64_t>(row / height);
      for (std::uint64_t x = 0; x < width; ++x)
      {
        const std::uint64_t p = row * width + x;
        if (!foreground[p])
        {
          continue;
        }
        ForEachPrecedingNeighbor(grid,
                                 static_cast<std::int64_t>(x),
                                 y,
                                 z,
                                 request.connectivity.maxNonZero,
                                 [&](std::uint64_t q, int) {
                                   const std::uint64_t qRow = q / width;
                                   if (qRow >= fromRow && qRow < toRow && foreground[q] && close(input[p], input[q]))
                                   {
                                     cpu::Unite(parent, static_cast<TId>(p), static_cast<TId>(q));
                                   }
                                 });
      }
    };
    ParallelFor(numberOfThreads, numBlocks, [&](std::uint64_t b) {
      for (std::uint64_t p = firstRow(b) * width; p < firstRow(b + 1) * width; ++p)
      {
        parent[p] = static_cast<TId>(p);
      }
      for (std::uint64_t row = firstRow(b); row < firstRow(b + 1); ++row)
      {
        uniteRow(row, firstRow(b), row + 1);
      }
    });
    // The rows whose preceding neighbors (one row, or one plane and a row, back) lie in an earlier block.
    for (std::uint64_t b = 1; b < numBlocks; ++b)
    {
      for (std::uint64_t row = firstRow(b); row < std::min(firstRow(b + 1), firstRow(b) + height + 1); ++row)
      {
        uniteRow(row, 0, firstRow(b));
      }
    }
  });
  // Each pixel's class: its root + 1 (0: background). Parents point backward, to pixels already done.
  for (std::uint64_t p = 0; p < numPixels; ++p)
  {
    const TId up = parent[p];
    parent[p] = !foreground[p] ? TId(0) : up == static_cast<TId>(p) ? static_cast<TId>(p + 1) : parent[up];
  }
}

template void
LabelWithinTolerance<std::uint32_t>(const Request &, unsigned, std::uint32_t *);
template void
LabelWithinTolerance<std::uint64_t>(const Request &, unsigned, std::uint64_t *);

} // namespace cca
} // namespace itk
