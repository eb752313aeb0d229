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
#ifndef itkCCAIntensityStages_cuh
#define itkCCAIntensityStages_cuh

// The CUDA engine's intensity stage: each component's IntensitySums from a feature image on the
// device, in a fixed order (bit-identical from run to run): the runs grouped by component
// (itkCCARunGrouping.cuh) are cut into chunks of 32 runs, each chunk summed by one warp, and each component's
// chunks joined by one warp, lane by lane and then down a fixed tree.

#include "itkCCADeviceBuffer.cuh"
#include "itkCCADeviceGeometry.cuh"
#include "itkCCATypes.h"

#include <cstdint>

namespace itk
{
namespace cca
{
namespace cuda
{

/** Device buffers of the stage, kept between calls. */
struct IntensityBuffers
{
  DeviceBuffer feature, chunkStart, scanTemp, chunks, values, integers;
};

/** Sums the feature image `feature` (device memory, `kind`) over each of `numComponents` components, whose runs
 * are grouped (`firstRun`, numComponents + 1 entries; `begin`, `length`, `row` by group, each group's in raster
 * order). `boxMin[d]`: each component's bounding box minimum along d (the reference of the weighted sums).
 * Writes buffers.values (IntensitySums::NumberOfColumns columns of numComponents doubles) and buffers.integers
 * (IntensitySums::NumberOfIntegerColumns). Asynchronous in `stream` but for one scalar read back. */
void
AccumulateIntensitySums(const void * feature, ScalarKind kind, const std::uint32_t * firstRun,
                        const std::uint32_t * begin, const std::uint32_t * length, const std::uint32_t * row,
                        const std::uint32_t * const boxMin[3], std::uint64_t numComponents, const DeviceGeometry & g,
                        IntensityBuffers & buffers, cudaStream_t stream, int multiprocessors);

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
