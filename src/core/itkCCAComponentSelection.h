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
#ifndef itkCCAComponentSelection_h
#define itkCCAComponentSelection_h

// The post-processing that users run after labeling (RelabelComponentImageFilter's minimum size and sort
// by size, LabelShapeKeepNObjectsImageFilter's N largest, ShapeOpeningLabelMapFilter on PhysicalSize),
// decided once from the components' pixel counts for both engines: which components stay and in which
// order they are numbered. The engines apply it where they write labels; the facade where it hands out
// the components' sums and lines.

#include "itkCCATypes.h"

#include <cstdint>
#include <vector>

namespace itk
{
namespace cca
{

/** Which components stay, and their new order. */
struct ComponentSelection
{
  static constexpr std::uint64_t Removed = UINT64_MAX;

  /** The kept components (engine order, 0-based), in the order of their new labels. */
  std::vector<std::uint64_t> order;
  /** For each component of the engine, its new index (0-based, before the background skip) or Removed. */
  std::vector<std::uint64_t> newIndex;
};

/** Decides the selection from the components' pixel counts (`sums`, engine order). Steps, in ITK's order: objects with
 * fewer than minimumObjectSize pixels, or with a physical size (pixels × `pixelVolume`) below minimumPhysicalSize, are
 * removed; of the rest, the numberOfObjectsToKeep largest stay (0: all; ties by engine order, as
 * RelabelComponentImageFilter's sort); the kept are numbered by decreasing size (ties by engine order) with
 * sortByObjectSize, else in engine order. `pixelVolume` is the product of the spacing, taken in dimension order as
 * ShapeLabelMapFilter takes it. A batch (Request::batchExtent, its images along index axis `batchAxis`) is
 * post-processed image by image: each image keeps its own N largest, numbered after the images before it. With
 * perClass (multi-label input), each class keeps its own N largest (ComponentSums::classValue). */
ComponentSelection
SelectComponents(const std::vector<ComponentSums> & sums, const PostProcessing & options, double pixelVolume,
                 unsigned batchAxis = 0, std::uint64_t batchExtent = 0);

} // namespace cca
} // namespace itk

#endif
