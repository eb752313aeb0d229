/*=========================================================================
 *  FLSL+OTF (Lemaitre et al. 2021, §3.2, Alg. 2): every run starts with its own features at its own
 *  index; whenever the union-find links a root under another, the linked root's features are moved to
 *  the new root (atomicExch out, atomic add/min/max in). Concurrent links can leave features on a node
 *  that stops being a root afterwards, so once the merge is over every non-root still holding features
 *  passes them to its root; the roots' features are then gathered in label order. Kept for the paper's
 *  comparison; FLSL+CD is the default.
 *=========================================================================*/
#ifndef itkCCAFlslFeaturesOTF_cuh
#define itkCCAFlslFeaturesOTF_cuh

#include "itkCCARunFeatures.cuh"
#include "itkCCAUnionFind.cuh"

namespace itk
{
namespace cca
{
namespace cuda
{

constexpr int OtfSums = SumProducts0; // count and index sums

/** Per-run features at the run's own index (perRun has numberOfComponents = number of runs). */
__global__ void
InitRunFeaturesKernel(const std::uint32_t * __restrict__ runBegin,
                      const std::uint32_t * __restrict__ runEnd,
                      const std::uint32_t * __restrict__ runRow,
                      std::uint32_t  numRuns,
                      DeviceGeometry g,
                      DeviceFeatures perRun)
{
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    const auto c = MakeRunContribution<false>(runBegin[run], runEnd[run], runRow[run], g);
    for (int i = 0; i < OtfSums; ++i)
    {
      *perRun.Sum(i, static_cast<std::uint32_t>(run)) = c.sum[i];
    }
    for (int d = 0; d < 3; ++d)
    {
      perRun.boundingBoxMin[d][run] = c.boundingBoxMin[d];
      perRun.boundingBoxMax[d][run] = c.boundingBoxMax[d];
    }
  }
}

/** Moves all features of node `from` into node `to`, field by field (each field is conserved). */
__device__ __forceinline__ void
MoveFeatures(const DeviceFeatures & perRun, std::uint32_t from, std::uint32_t to)
{
  for (int i = 0; i < OtfSums; ++i)
  {
    const unsigned long long v = atomicExch(perRun.Sum(i, from), 0ull);
    if (v != 0)
    {
      atomicAdd(perRun.Sum(i, to), v);
    }
  }
  for (int d = 0; d < 3; ++d)
  {
    atomicMin(perRun.boundingBoxMin[d] + to, atomicExch(perRun.boundingBoxMin[d] + from, 0xffffffffu));
    atomicMax(perRun.boundingBoxMax[d] + to, atomicExch(perRun.boundingBoxMax[d] + from, 0u));
  }
}

/** Union that carries the linked root's features to its new root (Alg. 2): after each link attempt,
 * `high` is under `low` (or already under another root, which joins low's set next round); either way
 * its features belong to the merged set. */
struct OnTheFlyUnite
{
  DeviceFeatures perRun;

  __device__ __forceinline__ void
  operator()(std::uint32_t * parent, std::uint32_t a, std::uint32_t b) const
  {
    const DeviceFeatures features = perRun;
    Unite(parent, a, b, [features](std::uint32_t high, std::uint32_t low) {
      __threadfence();
      MoveFeatures(features, high, low);
      __threadfence();
    });
  }
};

/** After the merge and flattening (parent = root): non-roots hand what they still hold to their root. */
__global__ void
PushFeaturesToRootsKernel(const std::uint32_t * __restrict__ parent, std::uint32_t numRuns, DeviceFeatures perRun)
{
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    const std::uint32_t root = parent[run];
    const std::uint32_t r = static_cast<std::uint32_t>(run);
    if (root == r)
    {
      continue;
    }
    // Fields move one by one, so a node may hold some fields and not others: look at all of them.
    bool holds = false;
    for (int i = 0; i < OtfSums; ++i)
    {
      holds = holds || *perRun.Sum(i, r) != 0;
    }
    for (int d = 0; d < 3; ++d)
    {
      holds = holds || perRun.boundingBoxMin[d][r] != 0xffffffffu || perRun.boundingBoxMax[d][r] != 0u;
    }
    if (holds)
    {
      MoveFeatures(perRun, r, root);
    }
  }
}

/** Roots' features into label order. */
__global__ void
GatherRootFeaturesKernel(const std::uint32_t * __restrict__ parent,
                         const std::uint32_t * __restrict__ rootLabel,
                         std::uint32_t  numRuns,
                         DeviceFeatures perRun,
                         DeviceFeatures features)
{
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    if (parent[run] != run)
    {
      continue;
    }
    const std::uint32_t r = static_cast<std::uint32_t>(run);
    const std::uint32_t label = rootLabel[run];
    for (int i = 0; i < OtfSums; ++i)
    {
      *features.Sum(i, label) = *perRun.Sum(i, r);
    }
    for (int d = 0; d < 3; ++d)
    {
      features.boundingBoxMin[d][label] = perRun.boundingBoxMin[d][r];
      features.boundingBoxMax[d][label] = perRun.boundingBoxMax[d][r];
    }
  }
}

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
