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
#ifndef itkCCACPUEngine_h
#define itkCCACPUEngine_h

// The CPU engine's class, private to the library (CreateCPUEngine() in itkCCAEngine.h is its only
// way out). One Analyze() runs stages over blocks of consecutive rows, and each stage is compiled
// in a file of its own, sharing the state declared here: itkCCACPUEngine.cxx checks the request,
// runs the stages and writes the labels and runs out; itkCCACPUEngineLabeling.cxx finds, unites
// and numbers the runs; itkCCACPUEngineFeatures.cxx sums up the components' features. The per-row
// and per-run work they call lives in itkCCACPURowScan.h and itkCCACPUFeatures.h.

#include "itkCCACPUFeatures.h"
#include "itkCCACPURowScan.h"
#include "itkCCAEngine.h"
#include "itkCCAScalarDispatch.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace itk
{
namespace cca
{
namespace cpu
{

/** What one thread finds in one block of consecutive rows. */
struct RowBlock
{
  std::uint64_t firstRow = 0;
  std::uint64_t endRow = 0;
  std::uint64_t firstRun = 0;       ///< global number of the block's first run
  std::uint64_t firstComponent = 0; ///< components whose first run lies in the block are numbered from here on
  Buffer<Run>   runs;
  /** Union-find parents in block numbering, while the block is scanned; then copied into the
   * global parent array and released. */
  Buffer<std::uint64_t> localParent;
  /** Sums over the block's runs of components whose first run lies in an earlier block. */
  std::vector<std::pair<std::uint64_t, ComponentSums>> foreignFeatures;
};

/** The Engine that CreateCPUEngine() returns: run-length labeling on host threads. */
class CPUEngine final : public Engine
{
public:
  CPUEngine(unsigned numberOfThreads, unsigned numberOfWorkUnits);

  std::string
  GetName() const override;

  std::string
  GetDescription() const override;

  std::uint64_t
  Analyze(const Request & request) override;

  const std::vector<ComponentSums> &
  GetFeatures() const override;

  const IntensitySums &
  GetIntensitySums() const override;

  void
  WriteLabels(const LabelOutput & output) override;

  void
  WriteBasicColumns(const BasicGeometry & geometry, const BasicColumns & columns,
                    const std::uint64_t * newIndex) override;
  void
  ExportLines(const LineLayout & layout, const RunSelection & selection, unsigned numberOfThreads,
              Lines & lines) override;

  std::uint64_t
  GetMaximumPixels() const override;
  double
  GetWorstCaseBytesPerPixel(const Request & request) const override;

  void
  ComputeContacts(const ContactRequest & request, ContactTable & table) override;

private:
  // Checking the request, setting up and tearing down (itkCCACPUEngine.cxx).
  static void
  Validate(const Request & request);

  void
  SetUpBlocks();

  void
  ReleaseMemory();

  /** Value tolerance: the request over the components' classes (LabelWithinTolerance), kept in this engine. */
  Request
  ToleranceClasses(const Request & request);

  // Looking up the runs of a row, for every stage.

  /** Index of the block that holds `row`. */
  std::size_t
  BlockOfRow(std::uint64_t row) const
  {
    const auto it =
      std::upper_bound(m_Blocks.begin(), m_Blocks.end(), row, [](std::uint64_t r, const RowBlock & block) {
        return r < block.firstRow;
      });
    return static_cast<std::size_t>(it - m_Blocks.begin()) - 1;
  }

  /** The runs of `row`, which lies in `block`, once the runs are numbered globally. */
  RowRuns
  RunsOfRow(const RowBlock & block, std::uint64_t row) const
  {
    const std::uint64_t first = m_RowStart[row];
    return RowRuns{ block.runs.Data() + (first - block.firstRun), first, m_RowStart[row + 1] - first };
  }

  // Labeling: runs, their union and their numbering (itkCCACPUEngineLabeling.cxx).

  /** Scans each block of rows for runs and unites the runs of adjacent rows of the block, in
   * parallel; a block only touches its own runs, parents and rows of m_RowStart. Leaves the
   * block-local number of row r's first run in m_RowStart[r]. */
  void
  FindAndUniteRunsWithinBlocks(const Request & request);

  /** One block of FindAndUniteRunsWithinBlocks(); scanRow(offset, length, runs) scans one row,
   * uniteRows(current, row, neighbor, neighborRow, widening, parent) unites its runs with those of a preceding row. */
  template <typename TScanRow, typename TUniteRows>
  void
  ScanBlock(RowBlock & block, const TScanRow & scanRow, const TUniteRows & uniteRows);

  /** Calls function(input, mask, uniteRows) with the request's typed input and mask (a null `const NoMask *`
   * without one) and the row union of the analysis (by overlap; with multi-label input, of equal values). */
  template <typename TFunction>
  void
  DispatchRowPass(const Request & request, const TFunction & function) const;

  /** Numbers the runs in raster order across blocks: offsets each block's run numbers, row starts
   * and parents by the runs of the blocks before it, gathering the parents into one array. */
  void
  NumberRunsGlobally();

  /** Unites runs of adjacent rows that lie in different blocks. Only the first ySize + 1 rows of a
   * block can have a neighbor in an earlier block, so this serial pass is short. */
  void
  UniteAcrossBlocks(const Request & request);

  /** Replaces each run's parent by its component number. Roots are the first runs of their
   * components, so numbering the roots in run order numbers the components in raster order of
   * their first pixel, as ITK's CreateConsecutive does. A run's parent precedes it: one block is
   * numbered in one pass, several in parallel passes by block that resolve the parents pointing
   * into earlier blocks last. */
  void
  NumberComponents();

  // Features of the components (itkCCACPUEngineFeatures.cxx).

  /** Sums up the features, in parallel by blocks. A block owns the components whose first run it
   * holds -- a consecutive range of numbers -- and adds its runs of those directly; its runs of
   * components owned by an earlier block go to a small per-block list, added afterwards in block
   * order. */
  void
  ComputeFeatures();

  /** Multi-label input: each component's class value, the input value at its runs, into its sums. */
  void
  RecordClassValues(const Request & request);

  /** With a feature image: each component's intensity sums (itkCCACPUEngineIntensity.cxx). */
  void
  AccumulateIntensities(const Request & request);

  /** The runs of any row, found from the block that asks (rows of other blocks are looked up). */
  RowRuns
  RunsOfAnyRow(const RowBlock & block, std::uint64_t row) const;

  /** The rows adjacent to row (y, z) in the image's dimension, all 3^(D-1) - 1 of them, with the
   * intercept classes of their straight and x-diagonal neighbors; rows outside the image have no
   * runs. Returns their number. */
  unsigned
  InterceptNeighbors(const RowBlock & block, std::uint64_t y, std::uint64_t z, InterceptNeighbor neighbors[8]) const;

  /** The features of one block's runs; VShapeSums and VPerimeter add the requested sums, so that
   * the plain labeling pays nothing for them. */
  template <bool VShapeSums, bool VPerimeter>
  void
  ComputeFeaturesOfBlock(RowBlock & block);

  // The LabelMap's lines (itkCCACPUEngineLines.cxx).

  /** Writes the line of every run whose group (`groupOf(id)`, or UINT64_MAX: none) is below `numGroups`,
   * grouped by group and in raster order within each (a stable counting sort), in parallel. Each group
   * must hold the runs of at most one component (a component's own index, or its new index under the
   * post-processing): the block that owns the component owns the group's counter and cursor. */
  template <typename TGroupOf>
  void
  PlaceLines(const TGroupOf & groupOf, std::size_t numGroups, const LineLayout & layout, Lines & lines) const;

  /** PlaceLines() of every component's runs (ExportLines() without a selection; the intensity stage). */
  void
  PlaceLinesByComponent(const LineLayout & layout, Lines & lines) const;

  // Writing the labels out (itkCCACPUEngine.cxx).

  template <typename TOutput>
  void
  WriteLabelsOfType(const LabelOutput & output) const;

  // State, shared by the stages.

  const unsigned m_NumberOfThreads;   ///< threads started at most
  const unsigned m_NumberOfWorkUnits; ///< blocks of rows the image is cut into (ITK's work units)

  bool                                    m_Analyzed = false;
  std::array<std::uint64_t, MaxDimension> m_Size{ { 1, 1, 1 } };
  unsigned                                m_Dimension = 2;
  std::uint64_t                           m_NumberOfRows = 0;
  NeighborRowOffset                       m_NeighborOffsets[4]; ///< the rows the connectivity joins
  unsigned                                m_NumberOfNeighborOffsets = 0;
  bool                                    m_MultiLabel = false; ///< Request::multiLabel of the analysis
  std::uint64_t                           m_BatchExtent = 0; ///< Request::batchExtent of the analysis
  bool                                    m_ComputeShapeSums = false;
  bool                                    m_ComputePerimeter = false;
  std::uint64_t                           m_NumberOfComponents = 0;

  std::vector<RowBlock> m_Blocks;
  /** Number of the first run of row r (runs of row r: m_RowStart[r] to m_RowStart[r + 1] - 1). */
  Buffer<std::uint64_t> m_RowStart;
  /** Union-find parent of each run while uniting; its component number after NumberComponents(). */
  Buffer<std::uint64_t>      m_Parent;
  std::vector<ComponentSums> m_Features;
  IntensitySums              m_Intensity; ///< empty without a feature image
  /** Value tolerance: each pixel's class (itkCCAValueTolerance.h), 32-bit below 2^32 pixels. */
  UninitializedVector<std::uint32_t> m_ToleranceClasses32;
  UninitializedVector<std::uint64_t> m_ToleranceClasses64;
};

} // namespace cpu
} // namespace cca
} // namespace itk

#endif // itkCCACPUEngine_h
