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
// The on-the-fly feature merge's union (Lemaitre et al. 2021, Alg. 2): the union-find of itkCCAUnionFind.cuh
// that carries a linked root's features to its new root. Shared by FLSL+OTF (itkCCAFlslFeaturesOTF.cuh) and
// HA+OTF (itkCCADirectHA4.cuh); device functions only, so any translation unit may include it.
#ifndef itkCCAOnTheFlyUnite_cuh
#define itkCCAOnTheFlyUnite_cuh

#include "itkCCARunFeatures.cuh"
#include "itkCCAUnionFind.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

/** Moves the features of node `from` into node `to`, field by field (each field is conserved: what
 * atomicExch takes out is added exactly once). */
__device__ __forceinline__ void
MoveFeatures(const DeviceFeatures & perRun, int dims, std::uint32_t from, std::uint32_t to)
{
  for (int i = 0; i <= dims; ++i)
  {
    const unsigned long long v = atomicExch(perRun.Sum(i, from), 0ull);
    if (v != 0)
    {
      atomicAdd(perRun.Sum(i, to), v);
    }
  }
  for (int d = 0; d < dims; ++d)
  {
    const std::uint32_t lo = atomicExch(perRun.boundingBoxMin[d] + from, 0xffffffffu);
    if (lo != 0xffffffffu)
    {
      atomicMin(perRun.boundingBoxMin[d] + to, lo);
    }
    const std::uint32_t hi = atomicExch(perRun.boundingBoxMax[d] + from, 0u);
    if (hi != 0u)
    {
      atomicMax(perRun.boundingBoxMax[d] + to, hi);
    }
  }
}

/** Union that carries the linked root's features to its new root (Alg. 2). The thread whose link made
 * root `high` a child of `low` moves high's features to `low` (a thread whose atomicMin found `high`
 * already linked leaves them to the thread that linked it). If `low` has itself been linked by
 * another thread in the meantime, that thread may have emptied it before our deposit: follow `low` to
 * its root and move again until the deposit sits at a root. The fences order "link, then move" in the
 * linking thread against "move, then look at the parent" here, so a deposit is never left behind. */
struct OnTheFlyUnite
{
  DeviceFeatures perRun;
  int            dims;

  __device__ __forceinline__ void
  operator()(std::uint32_t * parent, std::uint32_t a, std::uint32_t b) const
  {
    const DeviceFeatures features = perRun;
    const int            d = dims;
    Unite(parent, a, b, [features, d, parent](std::uint32_t high, std::uint32_t low) {
      __threadfence();
      MoveFeatures(features, d, high, low);
      __threadfence();
      for (std::uint32_t root = FindRootConcurrent(parent, low); root != low; root = FindRootConcurrent(parent, low))
      {
        MoveFeatures(features, d, low, root);
        __threadfence();
        low = root;
      }
    });
  }
};

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
