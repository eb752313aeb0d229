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
// Lock-free union-find over runs (Komura; Playne & Hawick): a root always links under the smaller
// root with atomicMin, so every tree's root is its smallest run id -- the component's first run in
// raster order. That is what makes consecutive raster-order labels (ITK's numbering) a prefix scan
// over roots.
#ifndef itkCCAUnionFind_cuh
#define itkCCAUnionFind_cuh

#include <cstdint>

namespace itk
{
namespace cca
{
namespace cuda
{

/** Root of `node` while other threads may be linking, with path halving: each visited node is pointed
 * at its grandparent, so that chains (one run per row of a tall component) do not make every find walk
 * the whole component. Volatile loads, so that a stale cached parent cannot make Unite() spin.
 * The halving store is safe against concurrent links: it only rewrites nodes that already have a
 * parent, replacing it by an ancestor; the one write it may overwrite is an atomicMin that found the
 * node no longer a root, and Unite() retries exactly that case. */
__device__ __forceinline__ std::uint32_t
                           FindRootConcurrent(std::uint32_t * parent, std::uint32_t node)
{
  volatile std::uint32_t * p = parent;
  std::uint32_t            next = p[node];
  while (next != node)
  {
    const std::uint32_t grandparent = p[next];
    if (grandparent != next)
    {
      p[node] = grandparent;
    }
    node = next;
    next = grandparent;
  }
  return node;
}

/** Root of `node` by plain reads, where other threads may at most replace a parent by an ancestor of it (a
 * flattening pass setting entries to their roots, a relabel writing roots over nodes): every value read is an
 * ancestor, so the walk ends at the root. No writes, so it cannot undo another thread's flattening. */
__device__ __forceinline__ std::uint32_t
                           FindRoot(const std::uint32_t * parent, std::uint32_t node)
{
  for (std::uint32_t next = parent[node]; next != node; next = parent[node])
  {
    node = next;
  }
  return node;
}

/** Nothing to do when a root is linked (plain labeling). */
struct NoLinkAction
{
  __device__ __forceinline__ void
  operator()(std::uint32_t, std::uint32_t) const
  {}
};

/** Merges the sets of a and b. When atomicMin finds that `high` stopped being a root meanwhile, its
 * link may have been replaced by ours; retrying with the value it held reconnects both sets.
 * `onLink(high, low)` runs once this thread's atomicMin has made root `high` a child of `low`: exactly
 * one thread does so for each root (the on-the-fly merge moves features there). `PathHalving` false: the
 * roots are found by reads only (FindRoot), as BUF's paper does and the run merge (PlainUnite) does. */
template <typename TOnLink = NoLinkAction, bool PathHalving = true>
__device__ __forceinline__ void
Unite(std::uint32_t * parent, std::uint32_t a, std::uint32_t b, const TOnLink & onLink = TOnLink())
{
  for (;;)
  {
    a = PathHalving ? FindRootConcurrent(parent, a) : FindRoot(parent, a);
    b = PathHalving ? FindRootConcurrent(parent, b) : FindRoot(parent, b);
    if (a == b)
    {
      return;
    }
    const std::uint32_t low = a < b ? a : b;
    const std::uint32_t high = a < b ? b : a;
    const std::uint32_t previous = atomicMin(parent + high, low);
    if (previous == high)
    {
      onLink(high, low);
      return;
    }
    a = low;
    b = previous;
  }
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
