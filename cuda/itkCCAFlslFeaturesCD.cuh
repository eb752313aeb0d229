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
// FLSL+CD (the default): per-component features voted with conflict detection (Lemaitre et al.
// 2021, Alg. 3). Each run votes its closed-form contribution; lanes of a warp voting for the same
// component are grouped with __match_any_sync and reduced with shuffles, so one atomic per component
// per warp reaches memory instead of one per run; one component per thread block (the first its warps meet: on a
// percolating foreground, the one that covers the image) is gathered in shared memory and reaches global memory
// once per block. The perimeter intercepts are voted the same way.
#ifndef itkCCAFlslFeaturesCD_cuh
#define itkCCAFlslFeaturesCD_cuh

#include "itkCCARunFeatures.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

/** Replaces each run's parent (its root after flattening) by its component's label, and votes the
 * run's features into that component. With `WithShape`, also the second-moment and border sums that
 * ITK's shape attributes derive from (ShapeLabelMapFilter::ThreadedProcessLabelObject's per-line terms). */
template <bool WithShape>
__device__ __forceinline__ void
LabelRunsAndVoteFeaturesPass(std::uint32_t * parentToLabel, const std::uint32_t * rootLabel,
                             const std::uint32_t * runBegin, const std::uint32_t * runEnd, const std::uint32_t * runRow,
                             std::uint32_t numRuns, const DeviceGeometry & g, const DeviceFeatures & features)
{
  constexpr int                                 NumSums = WithShape ? SumIntercepts0 : SumProducts0;
  __shared__ BlockHotComponent<NumSums> hot;
  hot.Reset();
  __syncthreads();
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t warpBase = GlobalWarpId() * 32u; warpBase < numRuns; warpBase += WarpCount() * 32u)
  {
    const std::uint64_t      run = warpBase + lane;
    const bool               valid = run < numRuns;
    std::uint32_t            label = 0xffffffffu;
    RunContribution<NumSums> c{};
    if (valid)
    {
      label = rootLabel[parentToLabel[run]];
      parentToLabel[run] = label;
      c = MakeRunContribution<WithShape>(runBegin[run], runEnd[run], runRow[run], g);
    }
    const std::uint32_t peers = __match_any_sync(FullWarp, label);
    if (ReducePeers(peers, c) && valid && !hot.Take(label, c))
    {
      AccumulateAtomically(features, label, c);
    }
  }
  __syncthreads();
  hot.Flush(features);
}


/** Perimeter intercepts (ITK's ShapeLabelMapFilter::ComputePerimeter): per run, its two x-neighbors
 * and, for every neighbor row, the pixels whose vertical and diagonal neighbors are not in the same
 * component, found by walking that row's runs of the same label. Runs of a row are contiguous ids
 * sorted by x, so the first candidate is found by binary search. Needs the labels (run it after
 * LabelRunsAndVoteFeaturesKernel). */
__device__ __forceinline__ void
CountPerimeterInterceptsPass(const std::uint32_t * runLabel, const std::uint32_t * firstRun,
                             const std::uint32_t * runBegin, const std::uint32_t * runEnd, const std::uint32_t * runRow,
                             std::uint32_t numRuns, const DeviceGeometry & g, const DeviceFeatures & features)
{
  __shared__ BlockHotComponent<7, SumIntercepts0, false> hot;
  hot.Reset();
  __syncthreads();
  const unsigned lane = threadIdx.x & 31u;
  for (std::uint64_t warpBase = GlobalWarpId() * 32u; warpBase < numRuns; warpBase += WarpCount() * 32u)
  {
    const std::uint64_t run = warpBase + lane;
    const bool          valid = run < numRuns;
    std::uint32_t       label = 0xffffffffu;
    SumContribution<7>  c{};
    if (valid)
    {
      label = runLabel[run];
      const long long     x0 = runBegin[run];
      const long long     x1 = runEnd[run];
      const long long     length = x1 - x0;
      const std::uint32_t row = runRow[run];
      const int           y = static_cast<int>(row % g.height);
      const int           z = static_cast<int>(row / g.height);
      c.sum[0] = 2; // the run's two x-neighbors are outside it
      const int dzMax = g.dimension > 2 ? 1 : 0;
      const int dyMax = g.dimension > 1 ? 1 : 0;
      for (int dz = -dzMax; dz <= dzMax; ++dz)
      {
        for (int dy = -dyMax; dy <= dyMax; ++dy)
        {
          if (dy == 0 && dz == 0)
          {
            continue;
          }
          // direction classes of the vertical (0,|dy|,|dz|) and diagonal (1,|dy|,|dz|) neighbors
          const int vertical = (dy != 0 && dz != 0) ? 5 : (dy != 0 ? 1 : 2);
          const int diagonal = (dy != 0 && dz != 0) ? 6 : (dy != 0 ? 3 : 4);
          long long same = 0, sameLeft = 0, sameRight = 0;
          const int ny = y + dy, nz = z + dz;
          if (ny >= 0 && ny < static_cast<int>(g.height) && nz >= 0 && nz < static_cast<int>(g.depth))
          {
            const std::uint32_t nRow = static_cast<std::uint32_t>(nz) * g.height + static_cast<std::uint32_t>(ny);
            std::uint32_t       lo = firstRun[static_cast<std::uint64_t>(nRow) * g.wordsPerRow];
            std::uint32_t       hi = firstRun[static_cast<std::uint64_t>(nRow + 1) * g.wordsPerRow];
            // first run of the row that ends after x0 - 1 (can touch [x0 - 1, x1 + 1))
            while (lo < hi)
            {
              const std::uint32_t mid = lo + (hi - lo) / 2;
              if (static_cast<long long>(runEnd[mid]) <= x0 - 1)
                lo = mid + 1;
              else
                hi = mid;
            }
            const std::uint32_t rowEnd = firstRun[static_cast<std::uint64_t>(nRow + 1) * g.wordsPerRow];
            for (std::uint32_t m = lo; m < rowEnd && static_cast<long long>(runBegin[m]) <= x1; ++m)
            {
              if (runLabel[m] != label)
              {
                continue;
              }
              const long long b0 = runBegin[m], b1 = runEnd[m];
              same += runmath::Overlap(x0, x1, b0, b1);
              sameLeft += runmath::Overlap(x0 - 1, x1 - 1, b0, b1);  // neighbors at x - 1
              sameRight += runmath::Overlap(x0 + 1, x1 + 1, b0, b1); // neighbors at x + 1
            }
          }
          c.sum[vertical] += static_cast<unsigned long long>(length - same);
          c.sum[diagonal] += static_cast<unsigned long long>(2 * length - sameLeft - sameRight);
        }
      }
    }
    const std::uint32_t peers = __match_any_sync(FullWarp, label);
    if (ReducePeers(peers, c) && valid && !hot.Take(label, c))
    {
#pragma unroll
      for (int i = 0; i < 7; ++i)
      {
        if (c.sum[i] != 0)
        {
          atomicAdd(features.Sum(SumIntercepts0 + i, label), c.sum[i]);
        }
      }
    }
  }
  __syncthreads();
  hot.Flush(features);
}


} // namespace cuda
} // namespace cca
} // namespace itk

#endif
