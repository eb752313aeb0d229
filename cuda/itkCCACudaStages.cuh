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
#ifndef itkCCACudaStages_cuh
#define itkCCACudaStages_cuh

// The CUDA engine's stages along the data path, each a launcher of the kernels that itkCCACudaStages.cu
// owns: foreground bits (upload, input != 0 and mask != 0), runs (count, scan, emit), numbering of the
// union-find roots in raster order, and the label image. The merge and the features are the feature
// variant's (itkCCAFeatureVariant.cuh).

#include "itkCCADeviceBuffer.cuh"
#include "itkCCADeviceGeometry.cuh"
#include "itkCCAPinnedStaging.cuh"
#include "itkCCAPixelNeighbors.h"

namespace itk
{
namespace cca
{
namespace cuda
{

/** Stage 1: the request's input (and mask) to the device through `staging`, unless they are device
 * pointers already (`onDevice`), and the foreground bits: input != 0, and mask != 0 where there is one.
 * `pixels` holds the input, then the mask (multi-label input: the mask after the input, which the later stages
 * read). Returns the input on the device. */
const void *
BuildForegroundBits(const Request & request, bool onDevice, DeviceBuffer & pixels, PinnedStaging & staging,
                    std::uint32_t * bits, const DeviceGeometry & g, cudaStream_t stream, int multiprocessors);

/** Stage 2a: per word, the number of runs starting in it (firstRun[numWords] must be 0; the exclusive
 * scan then makes each entry the id of the word's first run and the last the run count). */
void
CountRunStarts(const std::uint32_t * bits, std::uint32_t * firstRun, const DeviceGeometry & g, cudaStream_t stream,
               int multiprocessors, const std::uint32_t * breaks = nullptr);

/** Stage 2b: each run's begin, end and row, and a union-find forest of singletons. */
void
EmitRuns(const std::uint32_t * bits, const std::uint32_t * firstRun, std::uint32_t * runBegin, std::uint32_t * runEnd,
         std::uint32_t * runRow, std::uint32_t * parent, const DeviceGeometry & g, cudaStream_t stream,
         int multiprocessors, const std::uint32_t * breaks = nullptr);

// Multi-label input (Request::multiLabel; itkCCAMultiLabelStages.cu). `input` is the request's input on the
// device (the engine keeps it there for these stages).

/** Stage 1a, value tolerance (Connectivity::valueTolerance; itkCCAValueToleranceStages.cu): each foreground
 * pixel's component by a union-find over pixels, neighbors joining where itkCCAValueTolerance.h's rule says, as its
 * root's index into `classes` (one per pixel): the classes the multi-label stages then label. */
void
LabelWithinTolerance(const void * input, ScalarKind inputKind, const std::uint32_t * bits, Connectivity connectivity,
                     std::uint32_t * classes, const DeviceGeometry & g, cudaStream_t stream, int multiprocessors);

/** The contacts' device memory, kept by the engine between calls (itkCCAContactStages.cu). */
struct ContactBuffers
{
  DeviceBuffer scalars, records, temp;
};

/** Which labels of `labels` (device memory, an integer `kind`) touch at `maxNonZero`, into `table` (host). Labels
 * of 2^30 or more, or more than 2^31 touching pairs: Unavailable (the CPU engine counts those). */
void
ComputeContactsOnDevice(const void * labels, ScalarKind kind, const PixelGrid & grid, unsigned maxNonZero,
                        ContactBuffers & buffers, cudaStream_t stream, int multiprocessors, ContactTable & table);

/** Stage 1b: breaks[word] marks the foreground pixels whose left neighbor is foreground and of another value,
 * where runs of another class start (after BuildForegroundBits, the mask applied). */
void
BuildValueBreaks(const void * input, ScalarKind inputKind, const std::uint32_t * bits, std::uint32_t * breaks,
                 const DeviceGeometry & g, cudaStream_t stream, int multiprocessors);

/** Stage 2c: each run's value (its first pixel's), as a 64-bit integer. */
void
ClassifyRuns(const void * input, ScalarKind inputKind, const std::uint32_t * runBegin, const std::uint32_t * runRow,
             long long * runClass, std::uint32_t numRuns, const DeviceGeometry & g, cudaStream_t stream,
             int multiprocessors);

/** Stage 5b: each component's value from its runs' (`runLabel`: each run's component, after the feature stage). */
void
ClassifyComponents(const long long * runClass, const std::uint32_t * runLabel, long long * componentClass,
                   std::uint32_t numRuns, cudaStream_t stream, int multiprocessors);

/** The class column: componentClass[k] to out[newIndex[k]] (or out[k]; removed ones nowhere), all device memory. */
void
ScatterComponentClasses(const long long * componentClass, const unsigned long long * newIndex, long long * out,
                        std::uint64_t k, cudaStream_t stream, int multiprocessors);

/** Stage 4: every parent made its root, and rootLabel[run] = 1 for roots, 0 else (scanned afterwards
 * into the roots' labels in raster order). */
void
FlattenAndMarkRoots(std::uint32_t * parent, std::uint32_t * rootLabel, std::uint32_t numRuns, cudaStream_t stream,
                    int multiprocessors);

/** The post-processing's table (host, `numComponents` entries: each component's new index, or ~0 for a
 * removed one) copied into `newIndex` (device); returns the device table. The copy is from pageable memory,
 * so the host table may go once this returns. */
const unsigned long long *
UploadNewIndexTable(const std::uint64_t * table, std::uint64_t numComponents, DeviceBuffer & newIndex,
                    cudaStream_t stream);

/** The basic columns of K components into `columns` (device memory) from the feature accumulators (`sums`:
 * blocks of K counters in the Sum* order, `boxes`: min then max, 3 blocks each); row newIndex[k] where the
 * post-processing's table (device) is given (itkCCABasicColumns.cu). */
void
WriteBasicColumnsOnDevice(const BasicGeometry & geometry, const BasicColumns & columns, const unsigned long long * sums,
                          const std::uint32_t * boxes, std::uint64_t k, const unsigned long long * newIndex,
                          cudaStream_t stream, int multiprocessors);

/** The label image in `output.kind`, into `target` (device memory, such as a CuPy array) or, where that is
 * nullptr, into `labels` (device); returns its size in bytes. `newIndex` (device, UploadNewIndexTable())
 * renumbers the components for the post-processing, or is nullptr. Where `output` asks for rows
 * (LabelOutput::numberOfRows), only those, at the start of `labels` (sized for the whole image all the same). */
std::size_t
WriteLabelImage(const LabelOutput & output, const std::uint32_t * bits, const std::uint32_t * firstRun,
                const std::uint32_t * runLabel, const unsigned long long * newIndex, void * target,
                DeviceBuffer & labels, const DeviceGeometry & g, cudaStream_t stream, int multiprocessors,
                const std::uint32_t * breaks = nullptr, const long long * classOfIndex = nullptr);

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
