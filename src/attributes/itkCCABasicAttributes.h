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
// The attributes every analysis gives without shape sums -- pixels, physical size, bounding box, centroid --
// from a component's sums, written once for the host (the LabelMap's ShapeAttributeCalculator, the CPU engine's
// columns) and the device (the CUDA engine's columns, cuda/itkCCABasicColumns.cu): the same operations in the
// same order, without fused multiply-adds on the device, so the two give the same bits. The centroid is
// ImageBase::TransformContinuousIndexToPhysicalPoint of the mean index, as ShapeLabelMapFilter computes it.
#ifndef itkCCABasicAttributes_h
#define itkCCABasicAttributes_h

#include "itkCCARunMath.h" // CCA_HOST_DEVICE: inline on the host, __host__ __device__ __forceinline__ under nvcc
#include "itkCCATypes.h"

#include <cstdint>

namespace itk
{
namespace cca
{

/** a * b and a + b, rounded once each (nvcc would otherwise fuse them on the device). */
CCA_HOST_DEVICE double
MulRounded(double a, double b)
{
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
CCA_HOST_DEVICE double
AddRounded(double a, double b)
{
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/** What the basic attributes need of the image: its region's start and ImageBase's index-to-physical mapping
 * (M = Direction·diag(spacing), the origin), and the size of a pixel (the spacing's product). */
struct BasicGeometry
{
  unsigned     dimension = 2;
  std::int64_t start[MaxDimension] = { 0, 0, 0 };
  double       origin[MaxDimension] = { 0, 0, 0 };
  double       indexToPhysical[MaxDimension][MaxDimension] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  double       sizePerPixel = 1;
};

/** BasicGeometry of a Geometry, as ImageBase computes its matrix and ShapeLabelMapFilter its pixel size. */
inline BasicGeometry
MakeBasicGeometry(const Geometry & g)
{
  BasicGeometry b;
  b.dimension = g.dimension;
  b.sizePerPixel = 1.0;
  for (unsigned i = 0; i < g.dimension; ++i)
  {
    b.start[i] = g.start[i];
    b.origin[i] = g.origin[i];
    for (unsigned j = 0; j < g.dimension; ++j)
    {
      b.indexToPhysical[i][j] = g.direction[i][j] * g.spacing[j];
    }
    b.sizePerPixel *= g.spacing[i];
  }
  return b;
}

/** The physical centroid of a component of `n` pixels whose indices (from the region's start) sum to
 * `indexSum`. */
CCA_HOST_DEVICE void
BasicCentroid(const BasicGeometry & g, std::uint64_t n, const std::uint64_t * indexSum, double * centroid)
{
  double index[MaxDimension];
  for (unsigned i = 0; i < g.dimension; ++i)
  {
    index[i] = AddRounded(static_cast<double>(g.start[i]), static_cast<double>(indexSum[i]) / static_cast<double>(n));
  }
  for (unsigned r = 0; r < g.dimension; ++r)
  {
    double sum = 0;
    for (unsigned c = 0; c < g.dimension; ++c)
    {
      sum = AddRounded(sum, MulRounded(g.indexToPhysical[r][c], index[c]));
    }
    centroid[r] = AddRounded(sum, g.origin[r]);
  }
}

/** Writes row `row` of the basic columns from one component's sums (bounding box min/max inclusive, in
 * index space from the region's start). */
template <typename TBox>
CCA_HOST_DEVICE void
WriteBasicRow(const BasicGeometry & g, const BasicColumns & c, std::uint64_t row, std::uint64_t n,
              const std::uint64_t * sumsIn, const TBox * boxMinIn, const TBox * boxMaxIn)
{
  std::uint64_t indexSum[MaxDimension];
  std::uint64_t boxMin[MaxDimension];
  std::uint64_t boxMax[MaxDimension];
  for (unsigned d = 0; d < MaxDimension; ++d)
  {
    indexSum[d] = sumsIn[d];
    boxMin[d] = boxMinIn[d];
    boxMax[d] = boxMaxIn[d];
  }
  if (c.batchStride != 0)
  {
    // Within its image: exact integer shifts, before any rounding.
    const unsigned      axis = g.dimension - 1;
    const std::uint64_t image = boxMin[axis] / c.batchStride;
    const std::uint64_t shift = image * c.batchStride;
    boxMin[axis] -= shift;
    boxMax[axis] -= shift;
    indexSum[axis] -= n * shift;
    if (c.image)
    {
      c.image[row] = static_cast<std::int64_t>(image);
    }
  }
  if (c.label)
  {
    c.label[row] = row + 1;
  }
  if (c.numberOfPixels)
  {
    c.numberOfPixels[row] = n;
  }
  if (c.physicalSize)
  {
    c.physicalSize[row] = MulRounded(static_cast<double>(n), g.sizePerPixel);
  }
  double centroid[MaxDimension];
  BasicCentroid(g, n, indexSum, centroid);
  for (unsigned d = 0; d < g.dimension; ++d)
  {
    if (c.boundingBoxBegin[d])
    {
      c.boundingBoxBegin[d][row] = g.start[d] + static_cast<std::int64_t>(boxMin[d]);
    }
    if (c.boundingBoxEnd[d])
    {
      c.boundingBoxEnd[d][row] = g.start[d] + static_cast<std::int64_t>(boxMax[d]) + 1;
    }
    if (c.centroid[d])
    {
      c.centroid[d][row] = centroid[d];
    }
  }
}

} // namespace cca
} // namespace itk

#endif
