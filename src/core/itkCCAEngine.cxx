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
// Engine-independent helpers of the connected component analysis engines.
#include "itkCCAEngine.h"
#include "itkCCAParallelFor.h"

#include <cmath>
#include <limits>
#include <string>

namespace itk
{
namespace cca
{

Engine::~Engine() = default;

void
ValidateContactRequest(const ContactRequest & request)
{
  Request asImage;
  asImage.dimension = request.dimension;
  asImage.size = request.size;
  asImage.input = request.labels;
  asImage.inputKind = request.labelKind;
  asImage.connectivity.maxNonZero = request.connectivity.maxNonZero;
  ValidateRequest(asImage, UINT64_MAX, "64-bit");
  if (request.labelKind == ScalarKind::Float32 || request.labelKind == ScalarKind::Float64)
  {
    throw Error(std::string("contacts need integer labels, not ") + ScalarKindName(request.labelKind));
  }
}

void
ValidateRequest(const Request & request, std::uint64_t maxPixels, const char * indexType, bool joinsPeriodic)
{
  if (request.dimension < 1 || request.dimension > MaxDimension)
  {
    throw Error("image dimension " + std::to_string(request.dimension) + " is not supported (1 to 3)");
  }
  if (request.connectivity.maxNonZero < 1 || request.connectivity.maxNonZero > MaxDimension)
  {
    throw Error("connectivity of " + std::to_string(request.connectivity.maxNonZero) +
                " non-zero offset components is not one (1: face, 2: face and edge, 3: all neighbors)");
  }
  std::uint64_t numberOfPixels = 1;
  for (unsigned d = 0; d < MaxDimension; ++d)
  {
    const std::uint64_t size = request.size[d];
    if (size == 0)
    {
      throw Error("empty image region: size 0 along dimension " + std::to_string(d));
    }
    if (d >= request.dimension && size != 1)
    {
      throw Error("size along unused dimension " + std::to_string(d) + " must be 1, not " + std::to_string(size));
    }
    if (numberOfPixels > std::numeric_limits<std::uint64_t>::max() / size)
    {
      throw Error("the number of pixels overflows 64 bits");
    }
    numberOfPixels *= size;
  }
  if (!request.input)
  {
    throw Error("no input buffer");
  }
  if (request.multiLabel && (request.inputKind == ScalarKind::Float32 || request.inputKind == ScalarKind::Float64))
  {
    throw Error(std::string("multi-label input must have an integer pixel type, not ") +
                ScalarKindName(request.inputKind) + ": its values are the classes");
  }
  if (std::isnan(request.connectivity.valueTolerance))
  {
    throw Error("the value tolerance is NaN: a distance of 0 or more, or negative for none");
  }
  if (request.connectivity.HasValueTolerance())
  {
    if (request.multiLabel)
    {
      throw Error("a value tolerance and multi-label input together: multi-label input is a tolerance of 0");
    }
    if (request.batchExtent != 0)
    {
      throw Error("a value tolerance is not applied to batches: label each image on its own");
    }
    if (joinsPeriodic)
    {
      throw Error("a value tolerance is not joined across slabs or periodic boundaries: the image is labeled whole");
    }
  }
  if (request.connectivity.periodicAxes != 0)
  {
    if (request.connectivity.periodicAxes >> request.dimension != 0)
    {
      throw Error("periodic boundaries along an axis the " + std::to_string(request.dimension) +
                  "-D image does not have");
    }
    if (request.dimension < 2)
    {
      throw Error("periodic boundaries need a 2-D or 3-D image");
    }
    if (request.batchExtent != 0)
    {
      throw Error("periodic boundaries are not joined in batches: label each image on its own");
    }
    if (request.feature)
    {
      throw Error("intensity statistics (a feature image) are not computed with periodic boundaries");
    }
    if (!joinsPeriodic)
    {
      throw Error("periodic boundaries are joined by the slab engine (the engine facade), not by this engine");
    }
  }
  if (request.feature && request.batchExtent != 0)
  {
    throw Error("intensity statistics (a feature image) are not computed for batches: analyze each image on its own");
  }
  if (request.batchExtent != 0)
  {
    const std::uint64_t slowest = request.size[request.dimension - 1];
    if (request.dimension < 2)
    {
      throw Error("a batch is a 2-D or 3-D image (a stack of 1-D or 2-D images, or of 3-D images along z)");
    }
    if (slowest % request.batchExtent != 0)
    {
      throw Error("a batch's images must divide the image's slowest axis (" + std::to_string(slowest) + " indices, " +
                  std::to_string(request.dimension) + "-D) into equal parts of " + std::to_string(request.batchExtent));
    }
    if (request.computeShapeSums)
    {
      throw Error("a batch measures the basic features only (no LabelMap sums)");
    }
  }
  if (numberOfPixels >= maxPixels)
  {
    throw Unavailable("the image has " + std::to_string(numberOfPixels) + " pixels, more than the engine's " +
                      indexType + " index type holds (" + std::to_string(maxPixels - 1) + ")");
  }
}

std::size_t
ScalarKindSize(ScalarKind kind)
{
  switch (kind)
  {
    case ScalarKind::UInt8:
    case ScalarKind::Int8:
      return 1;
    case ScalarKind::UInt16:
    case ScalarKind::Int16:
      return 2;
    case ScalarKind::UInt32:
    case ScalarKind::Int32:
    case ScalarKind::Float32:
      return 4;
    case ScalarKind::UInt64:
    case ScalarKind::Int64:
    case ScalarKind::Float64:
      return 8;
  }
  return 0;
}

const char *
ScalarKindName(ScalarKind kind)
{
  switch (kind)
  {
    case ScalarKind::UInt8:
      return "uint8";
    case ScalarKind::Int8:
      return "int8";
    case ScalarKind::UInt16:
      return "uint16";
    case ScalarKind::Int16:
      return "int16";
    case ScalarKind::UInt32:
      return "uint32";
    case ScalarKind::Int32:
      return "int32";
    case ScalarKind::UInt64:
      return "uint64";
    case ScalarKind::Int64:
      return "int64";
    case ScalarKind::Float32:
      return "float32";
    case ScalarKind::Float64:
      return "float64";
  }
  return "unknown";
}

void
WriteBasicColumnsOfSums(const std::vector<ComponentSums> & sums, const BasicGeometry & geometry,
                        const BasicColumns & columns, const std::uint64_t * newIndex, unsigned numberOfThreads)
{
  if (columns.onDevice)
  {
    throw Error("columns from host sums cannot be written into GPU memory");
  }
  ParallelForRange(numberOfThreads, sums.size(), 1u << 14, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t k = begin; k < end; ++k)
    {
      const std::uint64_t row = newIndex ? newIndex[k] : k;
      if (row != UINT64_MAX)
      {
        const ComponentSums & f = sums[k];
        WriteBasicRow(geometry,
                      columns,
                      row,
                      f.numberOfPixels,
                      f.indexSum.data(),
                      f.boundingBoxMin.data(),
                      f.boundingBoxMax.data());
        if (columns.classValue)
        {
          columns.classValue[row] = f.classValue;
        }
      }
    }
  });
}

} // namespace cca
} // namespace itk
