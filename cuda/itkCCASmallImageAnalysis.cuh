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
#ifndef itkCCASmallImageAnalysis_cuh
#define itkCCASmallImageAnalysis_cuh

// The analysis of a small image in one cooperative launch: from the foreground bits to labelled runs
// and FLSL+CD features, the passes of the separate kernels (runs, scan, merge, numbering, features) run one
// after the other inside one grid, separated by grid-wide barriers. The run and component counts never leave
// the device between passes; the kernel writes them to host-mapped memory at the end, and on request the label
// image and the basic sums too (then nothing else crosses the bus for the usual outputs). A 64^2 image's whole
// work takes a few microseconds of GPU time, so a dozen launches, two scans' launches and two round trips to
// the host were most of its time.

#include "itkCCADeviceGeometry.cuh"
#include "itkCCAFlslMerge.cuh"

#include <cuda_runtime.h>

namespace itk
{
namespace cca
{
namespace cuda
{

struct SmallImageAnalysis
{
  const std::uint32_t * bits;     ///< the foreground bits, built before the launch
  std::uint32_t *       firstRun; ///< numWords + 1 entries
  std::uint32_t *       runBegin; ///< the runs, up to `capacity` of each
  std::uint32_t *       runEnd;
  std::uint32_t *       runRow;
  std::uint32_t *       parent;      ///< each run's label at the end, as the general path leaves it
  std::uint32_t *       rootLabel;   ///< capacity + 1 entries
  std::uint32_t *       blockTotals; ///< one per block (the grid-wide scans)
  unsigned long long *  sums;        ///< numSums blocks of K counters (K known on the device only)
  std::uint32_t *       boxes;       ///< 6 blocks of K: min then max
  std::uint32_t *       counts;      ///< device pointer to host-mapped memory: runs, components
  // Outputs written straight into host-mapped memory at the end (nullptr: not wanted), so that a small image's
  // usual outputs need no further launch, copy or synchronization (CudaEngine::AnalyzeSmallImage()).
  std::uint32_t *      labelsToHost; ///< the label image as uint32, background 0, components 1 .. K
  unsigned long long * sumsToHost;   ///< where K <= rowsToHost: pixels and index sums, 4 blocks of K
  std::uint32_t *      boxesToHost;  ///< and the bounding boxes, 6 blocks of K (min, then max)
  std::uint32_t        rowsToHost;
  DeviceGeometry       geometry;
  NeighborRows         neighbors;
};

/** Blocks of BlockSize threads that can all be resident at once for this kernel instance on the current
 * device (0 where the device has no cooperative launch). */
unsigned
SmallImageMaxBlocks(bool shapeSums, bool perimeter, int multiprocessors);

/** Enqueues the analysis on `stream` with `blocks` blocks (at most SmallImageMaxBlocks()); false where the device
 * refuses the cooperative launch (too many blocks, or not supported where it runs). The sums and boxes are laid
 * out with K, the number of components, as the stride, like the general path's. */
bool
LaunchSmallImageAnalysis(const SmallImageAnalysis & analysis, bool shapeSums, bool perimeter, unsigned blocks,
                         cudaStream_t stream);

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
