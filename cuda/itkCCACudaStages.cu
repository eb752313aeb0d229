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
// The kernels of the CUDA engine's shared stages (itkCCACudaStages.cuh) and their launches: FLSL segment
// detection (foreground bits, runs), the plain merge, the numbering of the roots, the label writer.

#include "itkCCACudaStages.cuh"

#include "itkCCAFeatureVariant.cuh"
#include "itkCCAFlslMerge.cuh"
#include "itkCCAFlslSegments.cuh"
#include "itkCCALabelWriter.cuh"
#include "itkCCARelabel.cuh"
#include "itkCCAScalarDispatch.h"

#include <algorithm>
#include <cstring>

namespace itk
{
namespace cca
{
namespace cuda
{

namespace
{
// The passes of itkCCAFlslSegments.cuh and itkCCARelabel.cuh as kernels of their own.
__global__ void
CountRunStartsKernel(const std::uint32_t * __restrict__ bits, std::uint32_t * __restrict__ startCounts,
                     DeviceGeometry g, const std::uint32_t * __restrict__ breaks)
{
  CountRunStartsPass(bits, startCounts, g, breaks);
}

__global__ void
EmitRunsKernel(const std::uint32_t * __restrict__ bits, const std::uint32_t * __restrict__ firstRun,
               std::uint32_t * __restrict__ runBegin, std::uint32_t * __restrict__ runEnd,
               std::uint32_t * __restrict__ runRow, std::uint32_t * __restrict__ parent, DeviceGeometry g,
               const std::uint32_t * __restrict__ breaks)
{
  EmitRunsPass(bits, firstRun, runBegin, runEnd, runRow, parent, g, breaks);
}

__global__ void
FlattenAndMarkRootsKernel(std::uint32_t * parent, std::uint32_t * isRoot, std::uint32_t numRuns)
{
  FlattenAndMarkRootsPass(parent, isRoot, numRuns);
}

/** parent[run] (its root after flattening) becomes its component's label. */
__global__ void
LabelRunsKernel(std::uint32_t * __restrict__ parentToLabel, const std::uint32_t * __restrict__ rootLabel,
                std::uint32_t numRuns)
{
  for (std::uint64_t run = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; run < numRuns;
       run += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
  {
    parentToLabel[run] = rootLabel[parentToLabel[run]];
  }
}
template <typename TOutput>
__global__ void
WriteLabelsKernel(const std::uint32_t * __restrict__ bits, const std::uint32_t * __restrict__ firstRun,
                  const std::uint32_t * __restrict__ runLabel, const unsigned long long * __restrict__ newIndex,
                  TOutput * __restrict__ output, TOutput background, unsigned long long skipValue, DeviceGeometry g,
                  const std::uint32_t * __restrict__ breaks, const long long * __restrict__ classOfIndex)
{
  WriteLabelsPass(bits, firstRun, runLabel, newIndex, output, background, skipValue, g, breaks, classOfIndex);
}
} // namespace

const void *
BuildForegroundBits(const Request & request, bool onDevice, DeviceBuffer & pixels, PinnedStaging & staging,
                    std::uint32_t * bits, const DeviceGeometry & g, cudaStream_t stream, int multiprocessors)
{
  const std::uint64_t numPixels = request.NumberOfPixels();
  // One pixel buffer takes the input, then the mask: the input is in the bitmask by then. Sized once
  // for both, so that no reallocation can free it under a kernel still reading it. Multi-label input is read
  // again (its values): the mask goes after it, 16-byte aligned.
  const std::size_t inputBytes = numPixels * ScalarKindSize(request.inputKind);
  const std::size_t maskBytes = request.mask ? numPixels * ScalarKindSize(request.maskKind) : 0;
  const bool        keepValues = request.multiLabel || request.connectivity.HasValueTolerance();
  const std::size_t maskOffset = keepValues ? (inputBytes + 15) / 16 * 16 : 0;
  if (!onDevice)
  {
    pixels.Reserve(std::max(inputBytes, maskOffset + maskBytes), "the input image");
  }
  const void * deviceInput = onDevice ? request.input : pixels.As<void>();
  DispatchScalarKind(request.inputKind, [&](auto tag) {
    using T = decltype(tag);
    const T * input = static_cast<const T *>(request.input);
    if (!onDevice)
    {
      staging.ToDevice(pixels.As<void>(), request.input, inputBytes, stream);
      input = pixels.As<T>();
    }
    constexpr unsigned pixelsPerChunk = 32 * 16 / sizeof(T);
    if (g.width % pixelsPerChunk == 0 && reinterpret_cast<std::uintptr_t>(input) % 16 == 0)
    {
      BuildForegroundBitsVectorKernel<T>
        <<<GridFor(numPixels / (16 / sizeof(T)), multiprocessors), BlockSize, 0, stream>>>(input, bits, g);
    }
    else
    {
      BuildForegroundBitsKernel<T>
        <<<GridFor(std::uint64_t{ g.numWords } * 32u, multiprocessors), BlockSize, 0, stream>>>(input, bits, g);
    }
    CCA_CUDA_CHECK_LAUNCH("BuildForegroundBitsKernel");
  });
  if (request.mask)
  {
    DispatchScalarKind(request.maskKind, [&](auto tag) {
      using M = decltype(tag);
      const M * mask = static_cast<const M *>(request.mask);
      if (!onDevice)
      {
        staging.ToDevice(pixels.As<char>() + maskOffset, request.mask, maskBytes, stream);
        mask = reinterpret_cast<const M *>(pixels.As<char>() + maskOffset);
      }
      ApplyMaskKernel<M>
        <<<GridFor(std::uint64_t{ g.numWords } * 32u, multiprocessors), BlockSize, 0, stream>>>(mask, bits, g);
      CCA_CUDA_CHECK_LAUNCH("ApplyMaskKernel");
    });
  }
  return deviceInput;
}

void
CountRunStarts(const std::uint32_t * bits, std::uint32_t * firstRun, const DeviceGeometry & g, cudaStream_t stream,
               int multiprocessors, const std::uint32_t * breaks)
{
  CountRunStartsKernel<<<GridFor(g.numWords, multiprocessors), BlockSize, 0, stream>>>(bits, firstRun, g, breaks);
  CCA_CUDA_CHECK_LAUNCH("CountRunStartsKernel");
}

void
EmitRuns(const std::uint32_t * bits, const std::uint32_t * firstRun, std::uint32_t * runBegin, std::uint32_t * runEnd,
         std::uint32_t * runRow, std::uint32_t * parent, const DeviceGeometry & g, cudaStream_t stream,
         int multiprocessors, const std::uint32_t * breaks)
{
  EmitRunsKernel<<<GridFor(g.numWords, multiprocessors), BlockSize, 0, stream>>>(
    bits, firstRun, runBegin, runEnd, runRow, parent, g, breaks);
  CCA_CUDA_CHECK_LAUNCH("EmitRunsKernel");
}

void
FeatureVariant::MergeRuns(const DeviceRuns & runs)
{
  LaunchPlainMerge(runs);
}

void
LaunchPlainMerge(const DeviceRuns & runs)
{
  if (runs.neighbors.count > 0 && runs.geometry.numRows > 1)
  {
    const auto merge = runs.neighbors.coveringRow[0] >= 0 ? MergeRunsKernel<PlainUnite, true>
                                                          : MergeRunsKernel<PlainUnite, false>;
    merge<<<GridFor(runs.geometry.numWords, runs.multiprocessors), BlockSize, 0, runs.stream>>>(
      runs.bits, runs.firstRun, runs.parent, runs.geometry, runs.neighbors, PlainUnite{}, runs.breaks, runs.runClass);
    CCA_CUDA_CHECK_LAUNCH("MergeRunsKernel");
  }
}

void
FlattenAndMarkRoots(std::uint32_t * parent, std::uint32_t * rootLabel, std::uint32_t numRuns, cudaStream_t stream,
                    int multiprocessors)
{
  FlattenAndMarkRootsKernel<<<GridFor(numRuns, multiprocessors), BlockSize, 0, stream>>>(parent, rootLabel, numRuns);
  CCA_CUDA_CHECK_LAUNCH("FlattenAndMarkRootsKernel");
}

void
LaunchLabelRuns(const DeviceRuns & runs)
{
  LabelRunsKernel<<<GridFor(runs.count, runs.multiprocessors), BlockSize, 0, runs.stream>>>(
    runs.parent, runs.rootLabel, runs.count);
  CCA_CUDA_CHECK_LAUNCH("LabelRunsKernel");
}

const unsigned long long *
UploadNewIndexTable(const std::uint64_t * table, std::uint64_t numComponents, DeviceBuffer & newIndex,
                    cudaStream_t stream)
{
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t), "the table is copied as is");
  newIndex.Reserve(std::max<std::uint64_t>(numComponents, 1) * sizeof(unsigned long long),
                   "the post-processing's label table");
  // Pageable, so the copy is complete when cudaMemcpyAsync returns: the host table may go right after.
  CCA_CUDA_CHECK(cudaMemcpyAsync(newIndex.As<unsigned long long>(),
                                 table,
                                 numComponents * sizeof(unsigned long long),
                                 cudaMemcpyHostToDevice,
                                 stream));
  return newIndex.As<unsigned long long>();
}

std::size_t
WriteLabelImage(const LabelOutput & output, const std::uint32_t * bits, const std::uint32_t * firstRun,
                const std::uint32_t * runLabel, const unsigned long long * newIndex, void * target,
                DeviceBuffer & labels, const DeviceGeometry & g, cudaStream_t stream, int multiprocessors,
                const std::uint32_t * breaks, const long long * classOfIndex)
{
  // Rows asked for (the slab engine's face planes, into host memory): those rows alone, from the start of
  // `labels`, their words and run offsets found from the first of them on (whole rows: the same starts and runs).
  const std::uint64_t wordOffset = output.numberOfRows != 0 ? std::uint64_t{ output.firstRow } * g.wordsPerRow : 0;
  DeviceGeometry      rows = g;
  if (output.numberOfRows != 0)
  {
    rows.numRows = static_cast<std::uint32_t>(output.numberOfRows);
    rows.numWords = static_cast<std::uint32_t>(output.numberOfRows * g.wordsPerRow);
  }
  const std::uint64_t numPixels = static_cast<std::uint64_t>(rows.width) * rows.numRows;
  DispatchScalarKind(output.kind, [&](auto tag) {
    using T = decltype(tag);
    T background;
    std::memcpy(&background, &output.backgroundBits, sizeof(T));
    T * out = static_cast<T *>(target);
    if (out == nullptr)
    {
      // Sized for the whole image even where rows are asked for: the slab engine asks for its face planes during
      // the analysis, where running out of memory can still be met with a partner engine let go or thinner slabs,
      // and the label image that follows needs the whole.
      labels.Reserve(static_cast<std::uint64_t>(g.width) * g.numRows * sizeof(T), "the label image");
      out = labels.As<T>();
    }
    // Without runs the run arrays may be unallocated; the kernel never reads them then.
    WriteLabelsKernel<T><<<GridFor(std::uint64_t{ rows.numWords } * 32u, multiprocessors), BlockSize, 0, stream>>>(
      bits + wordOffset,
      firstRun + wordOffset,
      runLabel,
      newIndex,
      out,
      background,
      output.skipValue,
      rows,
      breaks != nullptr ? breaks + wordOffset : nullptr,
      classOfIndex);
    CCA_CUDA_CHECK_LAUNCH("WriteLabelsKernel");
  });
  return numPixels * ScalarKindSize(output.kind);
}

} // namespace cuda
} // namespace cca
} // namespace itk
