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
 *  unites the runs whose rows both lie in the block; the few rows at a block's
 *  start whose neighbours lie in an earlier block are united afterwards by one
 *  thread. The result depends on the sets only, never on the order of the
 *  unions, so the labels are the same for any number of threads.
 *
 *=========================================================================*/
#include "itkCCAEngine.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
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

/** A growable array whose elements are not value-initialized: every element is written by the
 * engine before it is read, and zero-filling run and parent arrays of many millions of entries
 * would cost a single-threaded pass of its own. Keeps its capacity between calls. */
template <typename T>
class Buffer
{
public:
  void
  Resize(std::uint64_t size)
  {
    if (size > m_Capacity)
    {
      if (size > std::numeric_limits<std::size_t>::max() / sizeof(T))
      {
        throw std::bad_alloc();
      }
      m_Data.reset(); // release the old block before asking for the larger one
      m_Capacity = 0;
      m_Data.reset(new T[static_cast<std::size_t>(size)]);
      m_Capacity = size;
    }
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
    return m_Data[i];
  }
  const T &
  operator[](std::uint64_t i) const
  {
    return m_Data[i];
  }

private:
  std::unique_ptr<T[]> m_Data;
  std::uint64_t        m_Size = 0;
  std::uint64_t        m_Capacity = 0;
};

/** Rows are split into blocks of at least this many pixels: below it, starting a thread costs
 * more than the thread saves. */
constexpr std::uint64_t kMinPixelsPerBlock = 65536;

/** Calls function(block) for every block in [0, numberOfBlocks) on up to numberOfThreads threads
 * (the calling thread included). Blocks are handed out dynamically, which balances uneven blocks;
 * callers make the result independent of which thread runs which block. The first exception of a
 * block is rethrown after all threads have finished. */
template <typename TFunction>
void
ParallelFor(unsigned numberOfThreads, std::uint64_t numberOfBlocks, const TFunction & function)
{
  const std::uint64_t numberOfWorkers = std::min<std::uint64_t>(std::max(numberOfThreads, 1u), numberOfBlocks);
  if (numberOfWorkers <= 1)
  {
    for (std::uint64_t block = 0; block < numberOfBlocks; ++block)
    {
      function(block);
    }
    return;
  }

  std::atomic<std::uint64_t> nextBlock{ 0 };
  std::atomic<bool>          failed{ false };
  std::exception_ptr         firstError;
  std::mutex                 errorMutex;

  auto work = [&]() {
    for (std::uint64_t block = nextBlock++; block < numberOfBlocks && !failed; block = nextBlock++)
    {
      try
      {
        function(block);
      }
      catch (...)
      {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!firstError)
        {
          firstError = std::current_exception();
        }
        failed = true;
      }
    }
  };

  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(numberOfWorkers - 1));
  for (std::uint64_t i = 1; i < numberOfWorkers; ++i)
  {
    try
    {
      workers.emplace_back(work);
    }
    catch (const std::system_error &)
    {
      // No more threads to be had: the threads already started and this one do all the blocks.
      break;
    }
  }
  work();
  for (std::thread & worker : workers)
  {
    worker.join();
  }
  if (firstError)
  {
    std::rethrow_exception(firstError);
  }
}

/** Splits [0, numberOfRows) into at most numberOfThreads blocks of consecutive rows of at least
 * kMinPixelsPerBlock pixels each; returns the block boundaries (first row of each block, then
 * numberOfRows). */
std::vector<std::uint64_t>
PartitionRows(std::uint64_t numberOfRows, std::uint64_t rowLength, unsigned numberOfThreads)
{
  const std::uint64_t rowsPerMinBlock = std::max<std::uint64_t>(1, kMinPixelsPerBlock / rowLength);
  const std::uint64_t numberOfBlocks =
    std::max<std::uint64_t>(1, std::min<std::uint64_t>(numberOfThreads, numberOfRows / rowsPerMinBlock));

  // Spread the remainder over the first blocks; written to avoid numberOfRows * block overflowing.
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

/** Appends the runs of one row to `runs`. A pixel is foreground when it is not zero (so NaN is
 * foreground, as `!=` makes it in ITK) and the mask, if any, is not zero there: this is what
 * itk::MaskImageFilter followed by the labeling of non-zero pixels gives. */
template <typename TInput, typename TMask>
void
ScanRow(const TInput * input, const TMask * mask, std::uint64_t rowLength, std::vector<Run> & runs)
{
  auto isForeground = [input, mask](std::uint64_t x) -> bool {
    if constexpr (std::is_same<TMask, NoMask>::value)
    {
      (void)mask;
      return input[x] != TInput(0);
    }
    else
    {
      return input[x] != TInput(0) && mask[x] != TMask(0);
    }
  };

  std::uint64_t x = 0;
  while (x < rowLength)
  {
    while (x < rowLength && !isForeground(x))
    {
      ++x;
    }
    if (x == rowLength)
    {
      break;
    }
    const std::uint64_t begin = x;
    while (x < rowLength && isForeground(x))
    {
      ++x;
    }
    runs.push_back(Run{ begin, x });
  }
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

/** Unites the runs [current, currentEnd) of one row with the overlapping runs [neighbor,
 * neighborEnd) of an adjacent row. `widening` is 1 when diagonal contact counts (fully
 * connected), else 0: runs are neighbours when they share an x after the neighbour run is widened
 * by `widening` on both sides, as in ScanlineFilterCommon::CompareLines. Both rows are sorted and
 * their runs are separated by at least one pixel, so one merge-like pass finds every pair: the
 * run that ends first cannot touch any later run of the other row. */
inline void
UniteRows(const Run *    runs,
          std::uint64_t * parent,
          std::uint64_t   current,
          std::uint64_t   currentEnd,
          std::uint64_t   neighbor,
          std::uint64_t   neighborEnd,
          std::uint64_t   widening)
{
  while (current < currentEnd && neighbor < neighborEnd)
  {
    const Run & c = runs[current];
    const Run & n = runs[neighbor];
    if (c.begin < n.end + widening && n.begin < c.end + widening)
    {
      Unite(parent, neighbor, current);
    }
    if (c.end < n.end)
    {
      ++current;
    }
    else if (n.end < c.end)
    {
      ++neighbor;
    }
    else
    {
      ++current;
      ++neighbor;
    }
  }
}

/** The rows adjacent to `row` that precede it in raster order (the half neighbourhood, so that
 * each pair of rows is compared once). Row r is (y, z) = (r % ySize, r / ySize). Face neighbours
 * are (y-1, z) and (y, z-1); fully connected adds (y-1, z-1) and (y+1, z-1). */
unsigned
PrecedingNeighborRows(std::uint64_t row, std::uint64_t ySize, bool fullyConnected, std::uint64_t neighbors[4])
{
  const std::uint64_t y = row % ySize;
  const bool          hasPreviousSlice = row >= ySize;
  unsigned            count = 0;
  if (y > 0)
  {
    neighbors[count++] = row - 1;
  }
  if (hasPreviousSlice)
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

/** Sum of x over [begin, end), halving whichever factor is even so that no intermediate product
 * is larger than the result. */
inline std::uint64_t
SumOfRange(std::uint64_t begin, std::uint64_t end)
{
  const std::uint64_t length = end - begin;
  const std::uint64_t firstPlusLast = begin + end - 1;
  return (length % 2 == 0) ? (length / 2) * firstPlusLast : length * (firstPlusLast / 2);
}

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
    m_NumberOfRows = request.size[1] * request.size[2];
    m_FullyConnected = request.fullyConnected;
    try
    {
      const std::vector<std::uint64_t> blockFirstRow = PartitionRows(m_NumberOfRows, m_Size[0], m_NumberOfThreads);
      std::vector<std::vector<Run>>    blockRuns = FindRuns(request, blockFirstRow);
      GatherAndUniteWithinBlocks(blockFirstRow, blockRuns);
      UniteAcrossBlocks(blockFirstRow);
      const std::uint64_t numberOfComponents = NumberComponents();
      ComputeFeatures(numberOfComponents);
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

  /** Finds the runs of every block of rows, in parallel; leaves the number of runs of row r in
   * m_RowStart[r + 1]. */
  std::vector<std::vector<Run>>
  FindRuns(const LabelingRequest & request, const std::vector<std::uint64_t> & blockFirstRow)
  {
    const std::uint64_t           numberOfBlocks = blockFirstRow.size() - 1;
    std::vector<std::vector<Run>> blockRuns(static_cast<std::size_t>(numberOfBlocks));
    m_RowStart.Resize(m_NumberOfRows + 1);
    m_RowStart[0] = 0;

    const std::uint64_t rowLength = m_Size[0];
    auto                scan = [&](auto inputTag, auto maskTag) {
      using InputPixelType = decltype(inputTag);
      using MaskPixelType = decltype(maskTag);
      const auto * input = static_cast<const InputPixelType *>(request.input);
      const auto * mask = static_cast<const MaskPixelType *>(request.mask);
      ParallelFor(m_NumberOfThreads, numberOfBlocks, [&](std::uint64_t block) {
        std::vector<Run> & runs = blockRuns[block];
        for (std::uint64_t row = blockFirstRow[block]; row < blockFirstRow[block + 1]; ++row)
        {
          const std::size_t   offset = static_cast<std::size_t>(row * rowLength);
          const std::uint64_t before = runs.size();
          ScanRow(input + offset, mask ? mask + offset : mask, rowLength, runs);
          m_RowStart[row + 1] = runs.size() - before;
        }
      });
    };

    DispatchScalarKind(request.inputKind, [&](auto inputTag) {
      if (request.mask == nullptr)
      {
        scan(inputTag, NoMask{});
      }
      else
      {
        DispatchScalarKind(request.maskKind, [&](auto maskTag) { scan(inputTag, maskTag); });
      }
    });
    return blockRuns;
  }

  /** Numbers the runs globally (prefix sum of the row counts), copies each block's runs to its
   * place, and unites the runs of rows that are adjacent within a block -- in parallel: such
   * unions only touch the parents of the block's own runs. */
  void
  GatherAndUniteWithinBlocks(const std::vector<std::uint64_t> & blockFirstRow, std::vector<std::vector<Run>> & blockRuns)
  {
    for (std::uint64_t row = 0; row < m_NumberOfRows; ++row)
    {
      m_RowStart[row + 1] += m_RowStart[row];
    }
    const std::uint64_t numberOfRuns = m_RowStart[m_NumberOfRows];
    m_Runs.Resize(numberOfRuns);
    m_Parent.Resize(numberOfRuns);

    const std::uint64_t numberOfBlocks = blockFirstRow.size() - 1;
    const std::uint64_t ySize = m_Size[1];
    const std::uint64_t widening = m_FullyConnected ? 1 : 0;
    ParallelFor(m_NumberOfThreads, numberOfBlocks, [&](std::uint64_t block) {
      const std::uint64_t firstRow = blockFirstRow[block];
      const std::uint64_t endRow = blockFirstRow[block + 1];
      const std::uint64_t firstRun = m_RowStart[firstRow];
      std::vector<Run> &  runs = blockRuns[block];
      std::copy(runs.begin(), runs.end(), m_Runs.Data() + firstRun);
      for (std::uint64_t i = 0; i < runs.size(); ++i)
      {
        m_Parent[firstRun + i] = firstRun + i;
      }
      std::vector<Run>().swap(runs); // free as we go: the copy doubled the memory of the runs

      std::uint64_t neighbors[4];
      for (std::uint64_t row = firstRow; row < endRow; ++row)
      {
        if (m_RowStart[row] == m_RowStart[row + 1])
        {
          continue;
        }
        const unsigned count = PrecedingNeighborRows(row, ySize, m_FullyConnected, neighbors);
        for (unsigned i = 0; i < count; ++i)
        {
          if (neighbors[i] >= firstRow)
          {
            UniteRows(m_Runs.Data(),
                      m_Parent.Data(),
                      m_RowStart[row],
                      m_RowStart[row + 1],
                      m_RowStart[neighbors[i]],
                      m_RowStart[neighbors[i] + 1],
                      widening);
          }
        }
      }
    });
  }

  /** Unites runs of adjacent rows that lie in different blocks. Only the first ySize + 1 rows of a
   * block can have a neighbour in an earlier block, so this serial pass is short. */
  void
  UniteAcrossBlocks(const std::vector<std::uint64_t> & blockFirstRow)
  {
    const std::uint64_t ySize = m_Size[1];
    const std::uint64_t widening = m_FullyConnected ? 1 : 0;
    std::uint64_t       neighbors[4];
    for (std::size_t block = 1; block + 1 < blockFirstRow.size(); ++block)
    {
      const std::uint64_t firstRow = blockFirstRow[block];
      const std::uint64_t endRow = std::min(blockFirstRow[block + 1], firstRow + ySize + 1);
      for (std::uint64_t row = firstRow; row < endRow; ++row)
      {
        const unsigned count = PrecedingNeighborRows(row, ySize, m_FullyConnected, neighbors);
        for (unsigned i = 0; i < count; ++i)
        {
          if (neighbors[i] < firstRow)
          {
            UniteRows(m_Runs.Data(),
                      m_Parent.Data(),
                      m_RowStart[row],
                      m_RowStart[row + 1],
                      m_RowStart[neighbors[i]],
                      m_RowStart[neighbors[i] + 1],
                      widening);
          }
        }
      }
    }
  }

  /** Replaces each run's parent by its component number and returns the number of components.
   * Roots are the first runs of their components, so numbering the roots in run order numbers the
   * components in raster order of their first pixel, as ITK's CreateConsecutive does. A run's
   * parent precedes it and is already numbered when the run is reached, which lets the numbers
   * overwrite the parents in one pass. */
  std::uint64_t
  NumberComponents()
  {
    std::uint64_t * parent = m_Parent.Data();
    std::uint64_t   numberOfComponents = 0;
    for (std::uint64_t i = 0; i < m_Parent.Size(); ++i)
    {
      parent[i] = (parent[i] == i) ? numberOfComponents++ : parent[parent[i]];
    }
    return numberOfComponents;
  }

  void
  ComputeFeatures(std::uint64_t numberOfComponents)
  {
    m_Features.assign(static_cast<std::size_t>(numberOfComponents), ComponentFeatures{});
    const std::uint64_t ySize = m_Size[1];
    const Run *         runs = m_Runs.Data();
    const std::uint64_t * component = m_Parent.Data();
    for (std::uint64_t row = 0; row < m_NumberOfRows; ++row)
    {
      const std::uint64_t y = row % ySize;
      const std::uint64_t z = row / ySize;
      for (std::uint64_t i = m_RowStart[row]; i < m_RowStart[row + 1]; ++i)
      {
        const Run &         run = runs[i];
        const std::uint64_t length = run.end - run.begin;
        ComponentFeatures & features = m_Features[static_cast<std::size_t>(component[i])];
        if (features.numberOfPixels == 0)
        {
          features.boundingBoxMin = { { run.begin, y, z } };
          features.boundingBoxMax = { { run.end - 1, y, z } };
        }
        else
        {
          // Runs arrive in raster order: z never decreases, so its minimum is the first run's.
          features.boundingBoxMin[0] = std::min(features.boundingBoxMin[0], run.begin);
          features.boundingBoxMax[0] = std::max(features.boundingBoxMax[0], run.end - 1);
          features.boundingBoxMax[1] = std::max(features.boundingBoxMax[1], y);
          features.boundingBoxMax[2] = z;
          features.boundingBoxMin[1] = std::min(features.boundingBoxMin[1], y);
        }
        features.numberOfPixels += length;
        features.indexSum[0] += SumOfRange(run.begin, run.end);
        features.indexSum[1] += y * length;
        features.indexSum[2] += z * length;
      }
    }
  }

  template <typename TOutput>
  void
  WriteLabelsOfType(const LabelOutput & output) const
  {
    TOutput background;
    std::memcpy(&background, &output.backgroundBits, sizeof(TOutput));
    auto * const          data = static_cast<TOutput *>(output.data);
    const std::uint64_t   rowLength = m_Size[0];
    const Run *           runs = m_Runs.Data();
    const std::uint64_t * component = m_Parent.Data();

    const std::vector<std::uint64_t> blockFirstRow = PartitionRows(m_NumberOfRows, rowLength, m_NumberOfThreads);
    ParallelFor(m_NumberOfThreads, blockFirstRow.size() - 1, [&](std::uint64_t block) {
      for (std::uint64_t row = blockFirstRow[block]; row < blockFirstRow[block + 1]; ++row)
      {
        TOutput * const line = data + static_cast<std::size_t>(row * rowLength);
        std::uint64_t   x = 0;
        for (std::uint64_t i = m_RowStart[row]; i < m_RowStart[row + 1]; ++i)
        {
          const Run & run = runs[i];
          std::fill(line + x, line + run.begin, background);
          std::fill(line + run.begin, line + run.end, static_cast<TOutput>(output.LabelValue(component[i])));
          x = run.end;
        }
        std::fill(line + x, line + rowLength, background);
      }
    });
  }

  void
  ReleaseMemory()
  {
    m_RowStart.Release();
    m_Runs.Release();
    m_Parent.Release();
    std::vector<ComponentFeatures>().swap(m_Features);
  }

  const unsigned m_NumberOfThreads;

  bool                                    m_Analyzed = false;
  std::array<std::uint64_t, MaxDimension> m_Size{ { 1, 1, 1 } };
  std::uint64_t                           m_NumberOfRows = 0;
  bool                                    m_FullyConnected = false;

  /** The runs of row r are m_Runs[m_RowStart[r]] to m_Runs[m_RowStart[r + 1] - 1]. */
  Buffer<std::uint64_t> m_RowStart;
  Buffer<Run>           m_Runs;
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
