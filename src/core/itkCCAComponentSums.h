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
#ifndef itkCCAComponentSums_h
#define itkCCAComponentSums_h

#include "itkCCATypes.h"

#include <algorithm>

namespace itk
{
namespace cca
{

/** Adds the sums of `part` (pixels of the same component, none of them counted in `into` yet) to `into`: counts and
 * sums added, the bounding box widened. The class value stays `into`'s (both pieces have the same). The one rule for
 * joining a component's pieces: the CPU engine's blocks and the slab engine's slabs. */
inline void
AddComponentSums(const ComponentSums & part, ComponentSums & into)
{
  into.numberOfPixels += part.numberOfPixels;
  for (unsigned d = 0; d < MaxDimension; ++d)
  {
    into.boundingBoxMin[d] = std::min(into.boundingBoxMin[d], part.boundingBoxMin[d]);
    into.boundingBoxMax[d] = std::max(into.boundingBoxMax[d], part.boundingBoxMax[d]);
    into.indexSum[d] += part.indexSum[d];
    into.borderFaces[d] += part.borderFaces[d];
  }
  for (std::size_t i = 0; i < into.indexProductSum.size(); ++i)
  {
    into.indexProductSum[i] += part.indexProductSum[i];
  }
  into.numberOfPixelsOnBorder += part.numberOfPixelsOnBorder;
  for (std::size_t i = 0; i < into.intercepts.size(); ++i)
  {
    into.intercepts[i] += part.intercepts[i];
  }
}

} // namespace cca
} // namespace itk

#endif
