/*=========================================================================
 *
 *  CPU engine of itk::CudaConnectedComponentAnalysisImageFilter.
 *
 *  Run-length labeling with the semantics of itk::ConnectedComponentImageFilter
 *  (ITK 5.2): the foreground of each image row is encoded as runs, runs of
 *  adjacent rows that overlap are united, and components are numbered in the
 *  raster order of their first pixel. Runs are numbered in raster order and the
 *  union-find always keeps the smallest run of a set as its root, so a
 *  component's root is its first run and the numbering needs no sorting.
 *
 *  Threads work on blocks of consecutive rows. Each block finds its runs and
 *  unites the runs of adjacent rows of the block while those rows are still in
 *  the cache; the few rows at a block's start whose neighbours lie in an
 *  earlier block are united afterwards by one thread. The result depends on
 *  the sets only, never on the order of the unions, so the labels are the same
 *  for any number of threads.
 *
 *  On request, the feature pass also accumulates the sums behind ITK's shape
 *  attributes: second moments and border counts in closed form per run, and the
 *  perimeter intercepts of itk::ShapeLabelMapFilter::ComputePerimeter by
 *  comparing each run with the runs of its component in the neighbouring rows.
 *
 *=========================================================================*/
#include "itkCCAEngine.h"
#include "itkCCAParallelFor.h"
#include "itkCCARunMath.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace itk
{
namespace cca
{
namespace
{

/** A row's maximal foreground interval [begin, end) along x. */
struct Run
{
  std::uint64_t begin;
  std::uint64_t end;
};

/** A growable array whose elements are not value-initialized: every element is written before it
 * is read, and zero-filling run and parent arrays of many millions of entries would cost a pass of
 * its own. Keeps its capacity between calls. */
template <typename T>
class Buffer
{
public:
  /** Makes room for `capacity` elements, keeping the current ones; grows geometrically so that
   * appending row after row costs amortized constant time per element. */
  void
  Reserve(std::uint64_t capacity)
  {
    if (capacity <= m_Capacity)
    {
      return;
    }
    const std::uint64_t  newCapacity = std::max(capacity, m_Capacity + m_Capacity / 2);
    std::unique_ptr<T[]> data(new T[CheckedCount(newCapacity)]);
    std::copy(m_Data.get(), m_Data.get() + m_Size, data.get());
    m_Data = std::move(data);
    m_Capacity = newCapacity;
  }

  /** Sets the size; the contents are undefined when this grows the buffer beyond its capacity. */
  void
  Resize(std::uint64_t size)
  {
    if (size > m_Capacity)
    {
      m_Data.reset(); // release the old block before asking for the larger one
      m_Capacity = 0;
      m_Data.reset(new T[CheckedCount(size)]);
      m_Capacity = size;
    }
    m_Size = size;
  }

  /** Sets the size within the capacity, keeping the contents. */
  void
  SetSize(std::uint64_t size)
  {
    m_Size = size;
  }

  void
  Release()
  {
    m_Data.reset();
    m_Capacity = 0;
    m_Size = 0;
  }

  T *
  Data()
  {
    return m_Data.get();
  }
  const T *
  Data() const
  {
    return m_Data.get();
  }
  std::uint64_t
  Size() const
  {
    return m_Size;
  }
  T &
  operator[](std::uint64_t i)
  {
    return m_Data[static_cast<std::size_t>(i)];
  }
  const T &
  operator[](std::uint64_t i) const
  {
    return m_Data[static_cast<std::size_t>(i)];
  }

private:
  static std::size_t
  CheckedCount(std::uint64_t count)
  {
    if (count > std::numeric_limits<std::size_t>::max() / sizeof(T))
    {
      throw std::bad_alloc();
    }
    return static_cast<std::size_t>(count);
  }

  std::unique_ptr<T[]> m_Data;
  std::uint64_t        m_Size = 0;
  std::uint64_t        m_Capacity = 0;
};

/** Rows are split into blocks of at least this many pixels: below it, starting a thread costs
 * more than the thread saves. */
constexpr std::uint64_t kMinPixelsPerBlock = 65536;

/** Splits [0, numberOfRows) into at most numberOfThreads blocks of consecutive rows of at least
 * kMinPixelsPerBlock pixels each; returns the first row of each block, then numberOfRows. */
std::vector<std::uint64_t>
PartitionRows(std::uint64_t numberOfRows, std::uint64_t rowLength, unsigned numberOfThreads)
{
  const std::uint64_t rowsPerMinBlock = std::max<std::uint64_t>(1, kMinPixelsPerBlock / rowLength);
  const std::uint64_t numberOfBlocks =
    std::max<std::uint64_t>(1, std::min<std::uint64_t>(numberOfThreads, numberOfRows / rowsPerMinBlock));

  // Spread the remainder over the first blocks; written so that numberOfRows * block cannot overflow.
  const std::uint64_t        quotient = numberOfRows / numberOfBlocks;
  const std::uint64_t        remainder = numberOfRows % numberOfBlocks;
  std::vector<std::uint64_t> firstRow(static_cast<std::size_t>(numberOfBlocks + 1));
  for (std::uint64_t block = 0; block <= numberOfBlocks; ++block)
  {
    firstRow[block] = block * quotient + std::min(block, remainder);
  }
  return firstRow;
}

/** Calls function(tag) with a value of the C++ type of `kind`. */
template <typename TFunction>
void
DispatchScalarKind(ScalarKind kind, const TFunction & function)
{
  switch (kind)
  {
    case ScalarKind::UInt8:
      return function(std::uint8_t{});
    case ScalarKind::Int8:
      return function(std::int8_t{});
    case ScalarKind::UInt16:
      return function(std::uint16_t{});
    case ScalarKind::Int16:
      return function(std::int16_t{});
    case ScalarKind::UInt32:
      return function(std::uint32_t{});
    case ScalarKind::Int32:
      return function(std::int32_t{});
    case ScalarKind::UInt64:
      return function(std::uint64_t{});
    case ScalarKind::Int64:
      return function(std::int64_t{});
    case ScalarKind::Float32:
      return function(float{});
    case ScalarKind::Float64:
      return function(double{});
  }
  throw EngineError("CPU engine: unknown scalar kind " + std::to_string(static_cast<int>(kind)));
}

/** Stands for "no mask image" in the templated row scan. */
struct NoMask
{};

/** A pixel is foreground when it is not zero (so NaN is foreground, as `!=` makes it in ITK) and
 * the mask, if any, is not zero there: what itk::MaskImageFilter followed by the labeling of
 * non-zero pixels gives. `&` instead of `&&` keeps the test free of branches. */
template <typename TInput, typename TMask>
inline bool
IsForeground(const TInput * input, const TMask * mask, std::uint64_t x)
{
  if constexpr (std::is_same<TMask, NoMask>::value)
  {
    (void)mask;
    return input[x] != TInput(0);
  }
  else
  {
    return (input[x] != TInput(0)) & (mask[x] != TMask(0));
  }
}

/** Most runs a row of `rowLength` pixels can have, plus the one slot that ScanRow() writes past
 * its last run. */
inline std::uint64_t
RunSlotsPerRow(std::uint64_t rowLength)
{
  return rowLength / 2 + rowLength % 2 + 1;
}

/** Writes the runs of one row to `runs` (RunSlotsPerRow() slots) and returns their number.
 *
 * On images with noise, run boundaries fall at random, and a loop that branches on each pixel
 * mispredicts most of them; the loop below stores every pixel's x as the next run's begin and the
 * open run's end and only moves the counters on a change, which costs the same on any pattern.
 * Chunks that cannot change the state (all background outside a run, all foreground inside one)
 * are skipped first, which makes the long uniform stretches of real images cheap. */
template <typename TInput, typename TMask>
std::uint64_t
ScanRow(const TInput * input, const TMask * mask, std::uint64_t rowLength, Run * runs)
{
  constexpr std::uint64_t chunk = 16;
  std::uint64_t           numberOfStarts = 0;
  std::uint64_t           numberOfEnds = 0;
  bool                    previous = false;
  std::uint64_t           x = 0;
  while (x < rowLength)
  {
    if (rowLength - x >= chunk)
    {
      bool any = false;
      bool all = true;
      for (std::uint64_t i = x; i < x + chunk; ++i)
      {
        const bool current = IsForeground(input, mask, i);
        any |= current;
        all &= current;
      }
      if (previous ? all : !any)
      {
        x += chunk;
        continue;
      }
    }
    const std::uint64_t chunkEnd = std::min(x + chunk, rowLength);
    for (; x < chunkEnd; ++x)
    {
      const bool current = IsForeground(input, mask, x);
      runs[numberOfStarts].begin = x;
      runs[numberOfEnds].end = x;
      numberOfStarts += static_cast<std::uint64_t>(current & !previous);
      numberOfEnds += static_cast<std::uint64_t>(previous & !current);
      previous = current;
    }
  }
  if (previous)
  {
    runs[numberOfEnds].end = rowLength;
  }
  return numberOfStarts;
}

/** Root of the set of run i. Path halving only ever points a run to an earlier run of its set, so
 * the invariant parent[i] <= i, and with it "the root is the smallest run", is kept. */
inline std::uint64_t
FindRoot(std::uint64_t * parent, std::uint64_t i)
{
  while (parent[i] != i)
  {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

/** Unites the sets of runs a and b under the smaller of the two roots. */
inline void
Unite(std::uint64_t * parent, std::uint64_t a, std::uint64_t b)
{
  a = FindRoot(parent, a);
  b = FindRoot(parent, b);
  if (a < b)
  {
    parent[b] = a;
  }
  else if (b < a)
  {
    parent[a] = b;
  }
}

/** The runs of one row: `count` runs from `runs`, numbered from `firstId` in the union-find. */
struct RowRuns
{
  const Run *   runs;
  std::uint64_t firstId;
  std::uint64_t count;
};

/** Unites the runs of one row with the overlapping runs of an adjacent row. `widening` is 1 when
 * diagonal contact counts (fully connected), else 0: runs are neighbours when they share an x
 * after the neighbour run is widened by `widening` on both sides, as in
 * ScanlineFilterCommon::CompareLines. Both rows are sorted and their runs are separated by at
 * least one pixel, so one merge-like pass finds every pair: the run that ends first cannot touch
 * any later run of the other row. */
inline void
UniteRows(const RowRuns & current, const RowRuns & neighbor, std::uint64_t widening, std::uint64_t * parent)
{
  // Locals, not the structs' fields: the stores to `parent` could alias those, forcing reloads.
  const Run * const   currentRuns = current.runs;
  const Run * const   neighborRuns = neighbor.runs;
  const std::uint64_t currentCount = current.count;
  const std::uint64_t neighborCount = neighbor.count;
  std::uint64_t       c = 0;
  std::uint64_t       n = 0;
  while (c < currentCount && n < neighborCount)
  {
    const Run cr = currentRuns[c];
    const Run nr = neighborRuns[n];
    if (cr.begin < nr.end + widening && nr.begin < cr.end + widening)
    {
      Unite(parent, neighbor.firstId + n, current.firstId + c);
    }
    // Branch-free advance: on noisy images which run ends first is a coin toss.
    c += static_cast<std::uint64_t>(cr.end <= nr.end);
    n += static_cast<std::uint64_t>(nr.end <= cr.end);
  }
}

/** The rows adjacent to `row` that precede it in raster order (the half neighbourhood, so that
 * each pair of rows is compared once); returns their number. Row r is (y, z) = (r % ySize,
 * r / ySize); the caller passes y, which it tracks without a division per row. Face neighbours
 * are (y-1, z) and (y, z-1); fully connected adds (y-1, z-1) and (y+1, z-1). In 2-D only (y-1)
 * exists, in 1-D none. */
unsigned
PrecedingNeighborRows(std::uint64_t row,
                      std::uint64_t y,
                      std::uint64_t ySize,
                      bool          fullyConnected,
                      std::uint64_t neighbors[4])
{
  unsigned count = 0;
  if (y > 0)
  {
    neighbors[count++] = row - 1;
  }
  if (row >= ySize)
  {
    const std::uint64_t below = row - ySize;
    neighbors[count++] = below;
    if (fullyConnected)
    {
      if (y > 0)
      {
        neighbors[count++] = below - 1;
      }
      if (y + 1 < ySize)
      {
        neighbors[count++] = below + 1;
      }
    }
  }
  return count;
}

/** Adds the run [begin, end) of row (y, z) to `features`. */
inline void
AddRun(ComponentFeatures & features, const Run & run, std::uint64_t y, std::uint64_t z)
{
  const std::uint64_t length = run.end - run.begin;
  if (features.numberOfPixels == 0)
  {
    features.boundingBoxMin = { { run.begin, y, z } };
    features.boundingBoxMax = { { run.end - 1, y, z } };
  }
  else
  {
    features.boundingBoxMin[0] = std::min(features.boundingBoxMin[0], run.begin);
    features.boundingBoxMin[1] = std::min(features.boundingBoxMin[1], y);
    features.boundingBoxMin[2] = std::min(features.boundingBoxMin[2], z);
    features.boundingBoxMax[0] = std::max(features.boundingBoxMax[0], run.end - 1);
    features.boundingBoxMax[1] = std::max(features.boundingBoxMax[1], y);
    features.boundingBoxMax[2] = std::max(features.boundingBoxMax[2], z);
  }
  features.numberOfPixels += length;
  std::uint64_t sums[3];
  runmath::RunIndexSums(runmath::SumOfRange(run.begin, run.end), length, y, z, sums);
  for (unsigned d = 0; d < MaxDimension; ++d)
  {
    features.indexSum[d] += sums[d];
  }
}

/** What the shape sums need to know about a row (y, z) besides the run's x range. */
struct RowShape
{
  std::uint64_t y;
  std::uint64_t z;
  std::uint64_t rowLength;
  unsigned      dimension;
  /** Whether the row's y or z (dimensions below `dimension` only) is a first or last index. */
  bool onBorder;
  /** Per dimension d >= 1: how many of the row's y or z faces lie on the border (0, 1 or 2). */
  std::array<std::uint64_t, MaxDimension> borderSides;
};

RowShape
MakeRowShape(const std::array<std::uint64_t, MaxDimension> & size, unsigned dimension, std::uint64_t y, std::uint64_t z)
{
  RowShape                                      shape{ y, z, size[0], dimension, false, { { 0, 0, 0 } } };
  const std::array<std::uint64_t, MaxDimension> index{ { 0, y, z } };
  for (unsigned d = 1; d < dimension; ++d)
  {
    shape.borderSides[d] =
      static_cast<std::uint64_t>(index[d] == 0) + static_cast<std::uint64_t>(index[d] + 1 == size[d]);
    shape.onBorder = shape.onBorder || shape.borderSides[d] != 0;
  }
  return shape;
}

/** Adds the second moments and border counts of the run [begin, end) of a row to `features`, as
 * ITK's ShapeLabelMapFilter counts NumberOfPixelsOnBorder and PerimeterOnBorder (the latter per
 * dimension, before the spacing). */
inline void
AddShapeSums(ComponentFeatures & features, const Run & run, const RowShape & row)
{
  const std::uint64_t length = run.end - run.begin;
  std::uint64_t       products[6];
  runmath::RunIndexProductSums(run.begin, run.end, runmath::SumOfRange(run.begin, run.end), row.y, row.z, products);
  for (std::size_t i = 0; i < features.indexProductSum.size(); ++i)
  {
    features.indexProductSum[i] += products[i];
  }
  features.numberOfPixelsOnBorder += runmath::RunPixelsOnBorder(run.begin, run.end, row.rowLength, row.onBorder);
  features.borderFaces[0] += runmath::RunXBorderFaces(run.begin, run.end, row.rowLength);
  for (unsigned d = 1; d < row.dimension; ++d)
  {
    features.borderFaces[d] += length * row.borderSides[d];
  }
}

/** A row adjacent to the row being measured, for the perimeter intercepts: its runs (none when it
 * lies outside the image), the first of them that can still touch the current run, and the
 * intercept classes of its straight and its x-diagonal neighbours. */
struct InterceptNeighbor
{
  RowRuns       runs;
  std::uint64_t next;
  unsigned      straightClass;
  unsigned      diagonalClass;
};

/** Adds the perimeter intercepts of run `run` of component `component` to `features`: for each
 * pixel of the run and each of its 3^D - 1 neighbours that is not in the component, one intercept
 * of the neighbour's direction class (see ComponentFeatures::intercepts). The two x neighbours
 * outside the run give two intercepts of class (1,0,0); in each neighbouring row, the pixels of
 * the run whose neighbour straight across, and those whose neighbours at x - 1 and x + 1, are not
 * in the component count for the straight and the x-diagonal class. Runs of the neighbouring row
 * are visited in order, and `next` moves forward only, as the runs of the current row do. */
inline void
AddIntercepts(ComponentFeatures &   features,
              const Run &           run,
              std::uint64_t         component,
              InterceptNeighbor *   neighbors,
              unsigned              numberOfNeighbors,
              const std::uint64_t * componentOfRun)
{
  const std::uint64_t length = run.end - run.begin;
  features.intercepts[0] += 2;
  for (unsigned j = 0; j < numberOfNeighbors; ++j)
  {
    InterceptNeighbor & neighbor = neighbors[j];
    const Run *         neighborRuns = neighbor.runs.runs;
    const std::uint64_t count = neighbor.runs.count;
    // Runs that end before run.begin - 1 touch neither this run nor any later one.
    std::uint64_t n = neighbor.next;
    while (n < count && neighborRuns[n].end < run.begin)
    {
      ++n;
    }
    neighbor.next = n;

    std::uint64_t straight = 0; // pixels x with x in the component in the neighbouring row
    std::uint64_t diagonal = 0; // same for x - 1, plus for x + 1
    for (; n < count && neighborRuns[n].begin <= run.end; ++n)
    {
      if (componentOfRun[neighbor.runs.firstId + n] != component)
      {
        continue;
      }
      const Run & other = neighborRuns[n];
      straight += runmath::Overlap(run.begin, run.end, other.begin, other.end);
      diagonal += runmath::Overlap(run.begin, run.end, other.begin + 1, other.end + 1) +
                  runmath::Overlap(run.begin + 1, run.end + 1, other.begin, other.end);
    }
    features.intercepts[neighbor.straightClass] += length - straight;
    features.intercepts[neighbor.diagonalClass] += 2 * length - diagonal;
  }
}

/** Adds the pixels summed up in `part` to `features`. */
inline void
MergeFeatures(ComponentFeatures & features, const ComponentFeatures & part)
{
  if (features.numberOfPixels == 0)
  {
    features = part;
    return;
  }
  features.numberOfPixels += part.numberOfPixels;
  for (unsigned d = 0; d < MaxDimension; ++d)
  {
    features.boundingBoxMin[d] = std::min(features.boundingBoxMin[d], part.boundingBoxMin[d]);
    features.boundingBoxMax[d] = std::max(features.boundingBoxMax[d], part.boundingBoxMax[d]);
    features.indexSum[d] += part.indexSum[d];
    features.borderFaces[d] += part.borderFaces[d];
  }
  for (std::size_t i = 0; i < features.indexProductSum.size(); ++i)
  {
    features.indexProductSum[i] += part.indexProductSum[i];
  }
  features.numberOfPixelsOnBorder += part.numberOfPixelsOnBorder;
  for (std::size_t i = 0; i < features.intercepts.size(); ++i)
  {
    features.intercepts[i] += part.intercepts[i];
  }
}

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
  std::vector<std::pair<std::uint64_t, ComponentFeatures>> foreignFeatures;
};

class CPUEngine final : public Engine
{
public:
  explicit CPUEngine(unsigned numberOfThreads)
    : m_NumberOfThreads(numberOfThreads != 0 ? numberOfThreads : std::max(1u, std::thread::hardware_concurrency()))
  {}

  std::string
  GetName() const override
  {
    return "CPU";
  }

  std::string
  GetDescription() const override
  {
    return "CPU engine, " + std::to_string(m_NumberOfThreads) + (m_NumberOfThreads == 1 ? " thread" : " threads");
  }

  std::uint64_t
  Analyze(const LabelingRequest & request) override
  {
    m_Analyzed = false;
    Validate(request);

    m_Size = request.size;
    m_Dimension = request.dimension;
    m_NumberOfRows = request.size[1] * request.size[2];
    m_FullyConnected = request.fullyConnected;
    m_ComputeShapeSums = request.computeShapeSums;
    m_ComputePerimeter = request.computeShapeSums && request.computePerimeter;
    try
    {
      SetUpBlocks();
      FindAndUniteRunsWithinBlocks(request);
      NumberRunsGlobally();
      UniteAcrossBlocks();
      NumberComponents();
      ComputeFeatures();
    }
    catch (const std::bad_alloc &)
    {
      ReleaseMemory();
      throw EngineError("CPU engine: out of memory while labeling an image of " +
                        std::to_string(request.NumberOfPixels()) + " pixels");
    }
    m_Analyzed = true;
    return m_Features.size();
  }

  const std::vector<ComponentFeatures> &
  GetFeatures() const override
  {
    return m_Features;
  }

  void
  WriteLabels(const LabelOutput & output) override
  {
    if (!m_Analyzed)
    {
      throw EngineError("CPU engine: WriteLabels() called without a successful Analyze()");
    }
    if (output.data == nullptr)
    {
      throw EngineError("CPU engine: WriteLabels() called with a null output buffer");
    }
    DispatchScalarKind(output.kind, [this, &output](auto tag) {
      using OutputPixelType = decltype(tag);
      this->WriteLabelsOfType<OutputPixelType>(output);
    });
  }

  void
  ExportRuns(RunTable & table) override
  {
    if (!m_Analyzed)
    {
      throw EngineError("CPU engine: ExportRuns() called without a successful Analyze()");
    }
    const std::uint64_t numberOfRuns = m_RowStart[m_NumberOfRows];
    if (numberOfRuns > std::numeric_limits<std::size_t>::max())
    {
      throw EngineError("CPU engine: " + std::to_string(numberOfRuns) + " runs do not fit in memory");
    }
    try
    {
      const auto count = static_cast<std::size_t>(numberOfRuns);
      table.row.resize(count);
      table.begin.resize(count);
      table.length.resize(count);
      table.label.resize(count);
    }
    catch (const std::bad_alloc &)
    {
      throw EngineError("CPU engine: out of memory while exporting " + std::to_string(numberOfRuns) + " runs");
    }
    catch (const std::length_error &)
    {
      throw EngineError("CPU engine: out of memory while exporting " + std::to_string(numberOfRuns) + " runs");
    }

    ParallelFor(m_NumberOfThreads, m_Blocks.size(), [this, &table](std::uint64_t b) {
      const RowBlock &      block = m_Blocks[static_cast<std::size_t>(b)];
      const std::uint64_t * component = m_Parent.Data();
      for (std::uint64_t row = block.firstRow; row < block.endRow; ++row)
      {
        const RowRuns rowRuns = RunsOfRow(block, row);
        for (std::uint64_t i = 0; i < rowRuns.count; ++i)
        {
          const auto  id = static_cast<std::size_t>(rowRuns.firstId + i);
          const Run & run = rowRuns.runs[i];
          table.row[id] = row;
          table.begin[id] = run.begin;
          table.length[id] = run.end - run.begin;
          table.label[id] = component[id];
        }
      }
    });
  }

private:
  static void
  Validate(const LabelingRequest & request)
  {
    if (request.dimension < 1 || request.dimension > MaxDimension)
    {
      throw EngineError("CPU engine: image dimension " + std::to_string(request.dimension) +
                        " is not supported (1 to " + std::to_string(MaxDimension) + ")");
    }
    std::uint64_t numberOfPixels = 1;
    for (unsigned d = 0; d < MaxDimension; ++d)
    {
      const std::uint64_t size = request.size[d];
      if (size == 0)
      {
        throw EngineError("CPU engine: image size is 0 along dimension " + std::to_string(d));
      }
      if (d >= request.dimension && size != 1)
      {
        throw EngineError("CPU engine: size along unused dimension " + std::to_string(d) + " must be 1, not " +
                          std::to_string(size));
      }
      if (numberOfPixels > std::numeric_limits<std::uint64_t>::max() / size)
      {
        throw EngineError("CPU engine: the number of pixels overflows 64 bits");
      }
      numberOfPixels *= size;
    }
    if (request.input == nullptr)
    {
      throw EngineError("CPU engine: the input buffer is null");
    }
  }

  void
  SetUpBlocks()
  {
    const std::vector<std::uint64_t> firstRow = PartitionRows(m_NumberOfRows, m_Size[0], m_NumberOfThreads);
    m_Blocks.resize(firstRow.size() - 1);
    for (std::size_t b = 0; b < m_Blocks.size(); ++b)
    {
      m_Blocks[b].firstRow = firstRow[b];
      m_Blocks[b].endRow = firstRow[b + 1];
    }
    m_RowStart.Resize(m_NumberOfRows + 1);
  }

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

  /** Scans each block of rows for runs and unites the runs of adjacent rows of the block, in
   * parallel; a block only touches its own runs, parents and rows of m_RowStart. Leaves the
   * block-local number of row r's first run in m_RowStart[r]. */
  void
  FindAndUniteRunsWithinBlocks(const LabelingRequest & request)
  {
    auto scanBlocks = [&](auto inputTag, auto maskTag) {
      using InputPixelType = decltype(inputTag);
      using MaskPixelType = decltype(maskTag);
      const auto * input = static_cast<const InputPixelType *>(request.input);
      const auto * mask = static_cast<const MaskPixelType *>(request.mask);
      ParallelFor(m_NumberOfThreads, m_Blocks.size(), [&](std::uint64_t b) {
        this->ScanBlock(m_Blocks[static_cast<std::size_t>(b)],
                        [input, mask](std::uint64_t offset, std::uint64_t length, Run * runs) {
                          return ScanRow(input + offset, mask ? mask + offset : mask, length, runs);
                        });
      });
    };

    DispatchScalarKind(request.inputKind, [&](auto inputTag) {
      if (request.mask == nullptr)
      {
        scanBlocks(inputTag, NoMask{});
      }
      else
      {
        DispatchScalarKind(request.maskKind, [&](auto maskTag) { scanBlocks(inputTag, maskTag); });
      }
    });
  }

  template <typename TScanRow>
  void
  ScanBlock(RowBlock & block, const TScanRow & scanRow)
  {
    const std::uint64_t rowLength = m_Size[0];
    const std::uint64_t ySize = m_Size[1];
    const std::uint64_t widening = m_FullyConnected ? 1 : 0;
    const std::uint64_t slotsPerRow = RunSlotsPerRow(rowLength);
    block.runs.SetSize(0);
    block.localParent.SetSize(0);
    block.foreignFeatures.clear();

    std::uint64_t neighbors[4];
    std::uint64_t y = block.firstRow % ySize;
    for (std::uint64_t row = block.firstRow; row < block.endRow; ++row, y = (y + 1 == ySize) ? 0 : y + 1)
    {
      const std::uint64_t first = block.runs.Size();
      m_RowStart[row] = first;
      block.runs.Reserve(first + slotsPerRow);
      const std::uint64_t count = scanRow(row * rowLength, rowLength, block.runs.Data() + first);
      if (count == 0)
      {
        continue;
      }
      block.runs.SetSize(first + count);
      block.localParent.Reserve(first + count);
      block.localParent.SetSize(first + count);
      std::uint64_t * parent = block.localParent.Data();
      for (std::uint64_t i = first; i < first + count; ++i)
      {
        parent[i] = i;
      }

      const RowRuns  current{ block.runs.Data() + first, first, count };
      const unsigned numberOfNeighbors = PrecedingNeighborRows(row, y, ySize, m_FullyConnected, neighbors);
      for (unsigned i = 0; i < numberOfNeighbors; ++i)
      {
        const std::uint64_t neighborRow = neighbors[i];
        if (neighborRow >= block.firstRow)
        {
          // neighborRow < row, so its end is the start of the next row, already recorded
          const std::uint64_t neighborFirst = m_RowStart[neighborRow];
          const RowRuns       neighbor{ block.runs.Data() + neighborFirst,
                                  neighborFirst,
                                  m_RowStart[neighborRow + 1] - neighborFirst };
          UniteRows(current, neighbor, widening, parent);
        }
      }
    }
  }

  /** Numbers the runs in raster order across blocks: offsets each block's run numbers, row starts
   * and parents by the runs of the blocks before it, gathering the parents into one array. */
  void
  NumberRunsGlobally()
  {
    std::uint64_t numberOfRuns = 0;
    for (RowBlock & block : m_Blocks)
    {
      block.firstRun = numberOfRuns;
      numberOfRuns += block.runs.Size();
    }
    m_RowStart[m_NumberOfRows] = numberOfRuns;
    m_Parent.Resize(numberOfRuns);

    ParallelFor(m_NumberOfThreads, m_Blocks.size(), [this](std::uint64_t b) {
      RowBlock &          block = m_Blocks[static_cast<std::size_t>(b)];
      const std::uint64_t offset = block.firstRun;
      for (std::uint64_t row = block.firstRow; row < block.endRow; ++row)
      {
        m_RowStart[row] += offset;
      }
      const std::uint64_t * local = block.localParent.Data();
      std::uint64_t *       global = m_Parent.Data() + offset;
      for (std::uint64_t i = 0; i < block.runs.Size(); ++i)
      {
        global[i] = local[i] + offset;
      }
      block.localParent.Release(); // the global parents replace them; keep the peak memory down
    });
  }

  /** Unites runs of adjacent rows that lie in different blocks. Only the first ySize + 1 rows of a
   * block can have a neighbour in an earlier block, so this serial pass is short. */
  void
  UniteAcrossBlocks()
  {
    const std::uint64_t ySize = m_Size[1];
    const std::uint64_t widening = m_FullyConnected ? 1 : 0;
    std::uint64_t       neighbors[4];
    for (std::size_t b = 1; b < m_Blocks.size(); ++b)
    {
      const RowBlock &    block = m_Blocks[b];
      const std::uint64_t endRow = std::min(block.endRow, block.firstRow + ySize + 1);
      for (std::uint64_t row = block.firstRow; row < endRow; ++row)
      {
        const RowRuns current = RunsOfRow(block, row);
        if (current.count == 0)
        {
          continue;
        }
        const unsigned numberOfNeighbors = PrecedingNeighborRows(row, row % ySize, ySize, m_FullyConnected, neighbors);
        for (unsigned i = 0; i < numberOfNeighbors; ++i)
        {
          const std::uint64_t neighborRow = neighbors[i];
          if (neighborRow < block.firstRow)
          {
            UniteRows(current, RunsOfRow(m_Blocks[BlockOfRow(neighborRow)], neighborRow), widening, m_Parent.Data());
          }
        }
      }
    }
  }

  /** Replaces each run's parent by its component number. Roots are the first runs of their
   * components, so numbering the roots in run order numbers the components in raster order of
   * their first pixel, as ITK's CreateConsecutive does. A run's parent precedes it and is already
   * numbered when the run is reached, which lets the numbers overwrite the parents in one pass. */
  void
  NumberComponents()
  {
    std::uint64_t * parent = m_Parent.Data();
    std::uint64_t   numberOfComponents = 0;
    for (RowBlock & block : m_Blocks)
    {
      block.firstComponent = numberOfComponents;
      const std::uint64_t endRun = block.firstRun + block.runs.Size();
      for (std::uint64_t i = block.firstRun; i < endRun; ++i)
      {
        parent[i] = (parent[i] == i) ? numberOfComponents++ : parent[parent[i]];
      }
    }
    m_NumberOfComponents = numberOfComponents;
  }

  /** Sums up the features, in parallel by blocks. A block owns the components whose first run it
   * holds -- a consecutive range of numbers -- and adds its runs of those directly; its runs of
   * components owned by an earlier block go to a small per-block list, added afterwards in block
   * order. */
  void
  ComputeFeatures()
  {
    m_Features.assign(static_cast<std::size_t>(m_NumberOfComponents), ComponentFeatures{});

    ParallelFor(m_NumberOfThreads, m_Blocks.size(), [this](std::uint64_t b) {
      RowBlock & block = m_Blocks[static_cast<std::size_t>(b)];
      if (m_ComputePerimeter)
      {
        this->ComputeFeaturesOfBlock<true, true>(block);
      }
      else if (m_ComputeShapeSums)
      {
        this->ComputeFeaturesOfBlock<true, false>(block);
      }
      else
      {
        this->ComputeFeaturesOfBlock<false, false>(block);
      }
    });

    for (RowBlock & block : m_Blocks)
    {
      for (const auto & part : block.foreignFeatures)
      {
        MergeFeatures(m_Features[static_cast<std::size_t>(part.first)], part.second);
      }
      std::vector<std::pair<std::uint64_t, ComponentFeatures>>().swap(block.foreignFeatures);
    }
  }

  /** The runs of any row, found from the block that asks (rows of other blocks are looked up). */
  RowRuns
  RunsOfAnyRow(const RowBlock & block, std::uint64_t row) const
  {
    if (row >= block.firstRow && row < block.endRow)
    {
      return RunsOfRow(block, row);
    }
    return RunsOfRow(m_Blocks[BlockOfRow(row)], row);
  }

  /** The rows adjacent to row (y, z) in the image's dimension, all 3^(D-1) - 1 of them, with the
   * intercept classes of their straight and x-diagonal neighbours; rows outside the image have no
   * runs. Returns their number. */
  unsigned
  InterceptNeighbors(const RowBlock & block, std::uint64_t y, std::uint64_t z, InterceptNeighbor neighbors[8]) const
  {
    if (m_Dimension < 2)
    {
      return 0;
    }
    const int     zReach = m_Dimension >= 3 ? 1 : 0;
    unsigned      count = 0;
    const RowRuns none{ nullptr, 0, 0 };
    for (int dz = -zReach; dz <= zReach; ++dz)
    {
      for (int dy = -1; dy <= 1; ++dy)
      {
        if (dy == 0 && dz == 0)
        {
          continue;
        }
        // classes: (0,1,0) 1, (0,0,1) 2, (0,1,1) 5 and (1,1,0) 3, (1,0,1) 4, (1,1,1) 6
        const unsigned straightClass = dz == 0 ? 1 : (dy == 0 ? 2 : 5);
        const unsigned diagonalClass = dz == 0 ? 3 : (dy == 0 ? 4 : 6);
        const bool     inside =
          (dy >= 0 || y > 0) && (dy <= 0 || y + 1 < m_Size[1]) && (dz >= 0 || z > 0) && (dz <= 0 || z + 1 < m_Size[2]);
        RowRuns runs = none;
        if (inside)
        {
          const std::uint64_t ny = dy < 0 ? y - 1 : (dy > 0 ? y + 1 : y);
          const std::uint64_t nz = dz < 0 ? z - 1 : (dz > 0 ? z + 1 : z);
          runs = RunsOfAnyRow(block, ny + nz * m_Size[1]);
        }
        neighbors[count++] = InterceptNeighbor{ runs, 0, straightClass, diagonalClass };
      }
    }
    return count;
  }

  /** The features of one block's runs; VShapeSums and VPerimeter add the requested sums, so that
   * the plain labeling pays nothing for them. */
  template <bool VShapeSums, bool VPerimeter>
  void
  ComputeFeaturesOfBlock(RowBlock & block)
  {
    const std::uint64_t         ySize = m_Size[1];
    const std::uint64_t * const componentOfRun = m_Parent.Data();
    const std::uint64_t *       component = componentOfRun + block.firstRun;
    const Run *                 runs = block.runs.Data();
    ComponentFeatures *         features = m_Features.data();

    std::unordered_map<std::uint64_t, std::size_t> foreignIndex;
    // The runs of a foreign component tend to follow each other: remember the last one looked up.
    std::uint64_t lastForeign = std::numeric_limits<std::uint64_t>::max();
    std::size_t   lastForeignIndex = 0;

    InterceptNeighbor neighbors[8];
    unsigned          numberOfNeighbors = 0;

    std::uint64_t y = block.firstRow % ySize;
    std::uint64_t z = block.firstRow / ySize;
    for (std::uint64_t row = block.firstRow; row < block.endRow; ++row)
    {
      const std::uint64_t begin = m_RowStart[row] - block.firstRun;
      const std::uint64_t end = m_RowStart[row + 1] - block.firstRun;
      RowShape            rowShape{};
      if constexpr (VShapeSums)
      {
        if (begin != end)
        {
          rowShape = MakeRowShape(m_Size, m_Dimension, y, z);
        }
      }
      if constexpr (VPerimeter)
      {
        if (begin != end)
        {
          numberOfNeighbors = InterceptNeighbors(block, y, z, neighbors);
        }
      }
      for (std::uint64_t i = begin; i < end; ++i)
      {
        const std::uint64_t k = component[i];
        ComponentFeatures * target;
        if (k >= block.firstComponent)
        {
          target = features + k;
        }
        else
        {
          if (k != lastForeign)
          {
            const auto inserted = foreignIndex.emplace(k, block.foreignFeatures.size());
            if (inserted.second)
            {
              block.foreignFeatures.emplace_back(k, ComponentFeatures{});
            }
            lastForeign = k;
            lastForeignIndex = inserted.first->second;
          }
          target = &block.foreignFeatures[lastForeignIndex].second;
        }
        AddRun(*target, runs[i], y, z);
        if constexpr (VShapeSums)
        {
          AddShapeSums(*target, runs[i], rowShape);
        }
        if constexpr (VPerimeter)
        {
          AddIntercepts(*target, runs[i], k, neighbors, numberOfNeighbors, componentOfRun);
        }
      }
      if (++y == ySize)
      {
        y = 0;
        ++z;
      }
    }
  }

  template <typename TOutput>
  void
  WriteLabelsOfType(const LabelOutput & output) const
  {
    TOutput background;
    std::memcpy(&background, &output.backgroundBits, sizeof(TOutput));
    TOutput * const     data = static_cast<TOutput *>(output.data);
    const std::uint64_t rowLength = m_Size[0];

    ParallelFor(m_NumberOfThreads, m_Blocks.size(), [&](std::uint64_t b) {
      const RowBlock &      block = m_Blocks[static_cast<std::size_t>(b)];
      const std::uint64_t * component = m_Parent.Data();
      for (std::uint64_t row = block.firstRow; row < block.endRow; ++row)
      {
        const RowRuns   rowRuns = RunsOfRow(block, row);
        TOutput * const line = data + static_cast<std::size_t>(row * rowLength);
        std::uint64_t   x = 0;
        for (std::uint64_t i = 0; i < rowRuns.count; ++i)
        {
          const Run &   run = rowRuns.runs[i];
          const TOutput label = static_cast<TOutput>(output.LabelValue(component[rowRuns.firstId + i]));
          std::fill(line + x, line + run.begin, background);
          std::fill(line + run.begin, line + run.end, label);
          x = run.end;
        }
        std::fill(line + x, line + rowLength, background);
      }
    });
  }

  void
  ReleaseMemory()
  {
    std::vector<RowBlock>().swap(m_Blocks);
    m_RowStart.Release();
    m_Parent.Release();
    std::vector<ComponentFeatures>().swap(m_Features);
  }

  const unsigned m_NumberOfThreads;

  bool                                    m_Analyzed = false;
  std::array<std::uint64_t, MaxDimension> m_Size{ { 1, 1, 1 } };
  unsigned                                m_Dimension = 2;
  std::uint64_t                           m_NumberOfRows = 0;
  bool                                    m_FullyConnected = false;
  bool                                    m_ComputeShapeSums = false;
  bool                                    m_ComputePerimeter = false;
  std::uint64_t                           m_NumberOfComponents = 0;

  std::vector<RowBlock> m_Blocks;
  /** Number of the first run of row r (runs of row r: m_RowStart[r] to m_RowStart[r + 1] - 1). */
  Buffer<std::uint64_t> m_RowStart;
  /** Union-find parent of each run while uniting; its component number after NumberComponents(). */
  Buffer<std::uint64_t>          m_Parent;
  std::vector<ComponentFeatures> m_Features;
};

} // namespace

std::unique_ptr<Engine>
CreateCPUEngine(unsigned numberOfThreads)
{
  return std::make_unique<CPUEngine>(numberOfThreads);
}

} // namespace cca
} // namespace itk
