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
#include "itkCCAComponentSelection.h"

#include <algorithm>
#include <array>
#include <numeric>

namespace itk
{
namespace cca
{
namespace
{
/** Sorts `items` (engine indices in increasing order) by decreasing pixel count, ties staying in engine
 * order: a stable LSD radix sort on (largest count − count), 11 bits a pass, as many passes as the largest
 * key needs (one or two for most images): O(K) where a comparison sort of millions of sizes takes a second. */
void
SortBySizeDecreasing(std::vector<std::uint64_t> & items, const std::vector<ComponentSums> & sums)
{
  std::uint64_t largest = 0;
  std::uint64_t smallest = UINT64_MAX;
  for (const std::uint64_t k : items)
  {
    largest = std::max(largest, sums[k].numberOfPixels);
    smallest = std::min(smallest, sums[k].numberOfPixels);
  }
  if (items.size() < 2 || largest == smallest)
  {
    return;
  }
  const std::uint64_t        range = largest - smallest;
  constexpr unsigned         digitBits = 11;
  constexpr std::size_t      radix = std::size_t{ 1 } << digitBits;
  std::vector<std::uint64_t> scratch(items.size());
  for (unsigned shift = 0; shift < 64 && (range >> shift) != 0; shift += digitBits)
  {
    std::array<std::size_t, radix> count{};
    auto digit = [&](std::uint64_t k) { return ((largest - sums[k].numberOfPixels) >> shift) & (radix - 1); };
    for (const std::uint64_t k : items)
    {
      ++count[digit(k)];
    }
    std::size_t position = 0;
    for (std::size_t & c : count)
    {
      const std::size_t n = c;
      c = position;
      position += n;
    }
    for (const std::uint64_t k : items)
    {
      scratch[count[digit(k)]++] = k;
    }
    items.swap(scratch);
  }
}

/** Appends to `kept` the selection among the components `candidates` (engine indices in increasing order), in
 * their new order. */
void
SelectAmong(const std::vector<ComponentSums> & sums, const std::vector<std::uint64_t> & candidates,
            const PostProcessing & options, double pixelVolume, std::vector<std::uint64_t> & kept)
{
  std::vector<std::uint64_t> order;
  order.reserve(candidates.size());
  for (const std::uint64_t k : candidates)
  {
    const std::uint64_t n = sums[k].numberOfPixels;
    // RelabelComponentImageFilter removes n < MinimumObjectSize; ShapeOpeningLabelMapFilter keeps
    // PhysicalSize >= Lambda, PhysicalSize being n · (product of the spacing) in double.
    if ((options.minimumObjectSize > 0 && n < options.minimumObjectSize) ||
        (options.minimumPhysicalSize > 0 && static_cast<double>(n) * pixelVolume < options.minimumPhysicalSize))
    {
      continue;
    }
    order.push_back(k);
  }
  if (options.numberOfObjectsToKeep > 0 && order.size() > options.numberOfObjectsToKeep)
  {
    // The N largest; among equal sizes the first in engine order (a total order, so the same set every time).
    const auto larger = [&sums](std::uint64_t a, std::uint64_t b) {
      return sums[a].numberOfPixels > sums[b].numberOfPixels ||
             (sums[a].numberOfPixels == sums[b].numberOfPixels && a < b);
    };
    const auto keep = static_cast<std::ptrdiff_t>(options.numberOfObjectsToKeep);
    std::nth_element(order.begin(), order.begin() + keep, order.end(), larger);
    order.resize(options.numberOfObjectsToKeep);
    std::sort(order.begin(), order.end());
  }
  if (options.sortByObjectSize)
  {
    SortBySizeDecreasing(order, sums);
  }
  kept.insert(kept.end(), order.begin(), order.end());
}

/** Appends to `kept` the selection among components [begin, end) (engine order), in their new order: with
 * PostProcessing::perClass, each class (ComponentSums::classValue) keeps its own N largest, and the kept
 * components of all classes are numbered together, in engine order or by decreasing size. */
void
SelectRange(const std::vector<ComponentSums> & sums, std::uint64_t begin, std::uint64_t end,
            const PostProcessing & options, double pixelVolume, std::vector<std::uint64_t> & kept)
{
  std::vector<std::uint64_t> candidates(static_cast<std::size_t>(end - begin));
  std::iota(candidates.begin(), candidates.end(), begin);
  if (!options.perClass)
  {
    SelectAmong(sums, candidates, options, pixelVolume, kept);
    return;
  }
  // Classes one after the other, each in engine order.
  std::stable_sort(candidates.begin(), candidates.end(), [&sums](std::uint64_t a, std::uint64_t b) {
    return sums[a].classValue < sums[b].classValue;
  });
  PostProcessing perClass = options;
  perClass.sortByObjectSize = false;
  std::vector<std::uint64_t> keptOfRange;
  std::vector<std::uint64_t> ofClass;
  for (std::size_t first = 0, last = 0; first < candidates.size(); first = last)
  {
    const std::int64_t classValue = sums[candidates[first]].classValue;
    for (last = first + 1; last < candidates.size() && sums[candidates[last]].classValue == classValue; ++last)
    {}
    ofClass.assign(candidates.begin() + static_cast<std::ptrdiff_t>(first),
                   candidates.begin() + static_cast<std::ptrdiff_t>(last));
    SelectAmong(sums, ofClass, perClass, pixelVolume, keptOfRange);
  }
  std::sort(keptOfRange.begin(), keptOfRange.end());
  if (options.sortByObjectSize)
  {
    SortBySizeDecreasing(keptOfRange, sums);
  }
  kept.insert(kept.end(), keptOfRange.begin(), keptOfRange.end());
}
} // namespace

ComponentSelection
SelectComponents(const std::vector<ComponentSums> & sums, const PostProcessing & options, double pixelVolume,
                 unsigned batchAxis, std::uint64_t batchExtent)
{
  ComponentSelection selection;
  const std::size_t  numComponents = sums.size();
  selection.order.reserve(numComponents);
  if (batchExtent == 0)
  {
    SelectRange(sums, 0, numComponents, options, pixelVolume, selection.order);
  }
  else
  {
    // Raster order is image by image: each image's components are one range, selected on their own.
    auto imageOf = [&](std::uint64_t k) { return sums[k].boundingBoxMin[batchAxis] / batchExtent; };
    for (std::uint64_t begin = 0, end = 0; begin < numComponents; begin = end)
    {
      for (end = begin + 1; end < numComponents && imageOf(end) == imageOf(begin); ++end)
      {}
      SelectRange(sums, begin, end, options, pixelVolume, selection.order);
    }
  }
  const std::vector<std::uint64_t> & order = selection.order;
  selection.newIndex.assign(numComponents, ComponentSelection::Removed);
  for (std::uint64_t j = 0; j < order.size(); ++j)
  {
    selection.newIndex[order[j]] = j;
  }
  return selection;
}

} // namespace cca
} // namespace itk
