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
#ifndef itkCCACPURowScan_h
#define itkCCACPURowScan_h

// The first stage of the CPU engine's data path: finding the foreground runs of an image row and
// uniting, in a union-find over run numbers, the runs of adjacent rows that touch. It holds the run
// and buffer types the whole engine stores runs in, the split of the rows into per-thread blocks,
// the branch-free row scan and the merge-like pass that unites two sorted rows of runs. Kept apart
// from the engine class (itkCCACPUEngine.h) and the feature sums (itkCCACPUFeatures.h) because it
// is the hot inner loop of every labeling and needs nothing but the row data: a private header of
// inline functions and templates, so that the engine's stages inline them.

#include "itkCCAEngine.h"
#include "itkCCANeighborRows.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SSE2__) || defined(_M_X64)
#  define CCA_ROW_SCAN_SSE2 1
#  include <emmintrin.h>
#endif
#if defined(_MSC_VER) && !defined(__clang__)
#  include <intrin.h>
#endif

namespace itk
{
namespace cca
{
namespace cpu
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

/** Rows are split into blocks of at least this many pixels: below it, handing a block to a thread of the pool
 * (itkCCAParallelFor.h) costs more than the thread saves. With threads started for each pass, as before the pool,
 * the least that paid was 65,536. */
constexpr std::uint64_t kMinPixelsPerBlock = 8192;

/** Splits [0, numberOfRows) into at most numberOfThreads blocks of consecutive rows of at least
 * kMinPixelsPerBlock pixels each; returns the first row of each block, then numberOfRows. */
inline std::vector<std::uint64_t>
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

/** Most runs a row of `rowLength` pixels can have, plus one slot. Multi-label rows can have a run per pixel
 * (neighbors of different values). */
inline std::uint64_t
RunSlotsPerRow(std::uint64_t rowLength, bool multiLabel = false)
{
  return multiLabel ? rowLength + 1 : rowLength / 2 + rowLength % 2 + 1;
}

/** Which of 64 consecutive values are not zero, as the bits of a word (bit i: values[i]). `!=` makes NaN not
 * zero, as in ITK. With SSE2 (every x86-64) the values are compared a vector at a time and the results' sign bits
 * gathered by movemask; the byte-wide comparison below is the form compilers vectorize for 1- to 4-byte types,
 * 8-byte ones are compared explicitly. Elsewhere, a plain loop. */
template <typename T>
inline std::uint64_t
NonZeroBits64(const T * values)
{
#if defined(CCA_ROW_SCAN_SSE2)
  std::uint64_t bits = 0;
  if constexpr (std::is_same<T, double>::value)
  {
    const __m128d zero = _mm_setzero_pd();
    for (unsigned k = 0; k < 32; ++k)
    {
      const __m128d notZero = _mm_cmpneq_pd(_mm_loadu_pd(values + 2 * k), zero);
      bits |= std::uint64_t(static_cast<unsigned>(_mm_movemask_pd(notZero))) << (2 * k);
    }
    return bits;
  }
  else if constexpr (std::is_integral<T>::value && sizeof(T) == 8)
  {
    // SSE2 has no 64-bit integer comparison: a value is zero where both of its 32-bit halves are.
    const __m128i zero = _mm_setzero_si128();
    for (unsigned k = 0; k < 32; ++k)
    {
      const __m128i halvesZero =
        _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(values + 2 * k)), zero);
      const __m128i isZero = _mm_and_si128(halvesZero, _mm_shuffle_epi32(halvesZero, _MM_SHUFFLE(2, 3, 0, 1)));
      bits |= std::uint64_t(static_cast<unsigned>(_mm_movemask_pd(_mm_castsi128_pd(isZero)))) << (2 * k);
    }
    return ~bits;
  }
  else
  {
    alignas(16) std::uint8_t lanes[64];
    for (unsigned i = 0; i < 64; ++i)
    {
      lanes[i] = values[i] != T(0) ? 0xFF : 0;
    }
    for (unsigned k = 0; k < 4; ++k)
    {
      const __m128i lane = _mm_load_si128(reinterpret_cast<const __m128i *>(lanes + 16 * k));
      bits |= std::uint64_t(static_cast<unsigned>(_mm_movemask_epi8(lane))) << (16 * k);
    }
    return bits;
  }
#else
  std::uint64_t bits = 0;
  for (unsigned i = 0; i < 64; ++i)
  {
    bits |= std::uint64_t(values[i] != T(0)) << i;
  }
  return bits;
#endif
}

/** NonZeroBits64() of the first `count` < 64 values; the bits above them are clear. The values are copied after
 * zeros, so that short rows and the ends of rows are compared a vector at a time too. */
template <typename T>
inline std::uint64_t
NonZeroBits(const T * values, std::uint64_t count)
{
  T padded[64] = {};
  std::copy(values, values + count, padded);
  return NonZeroBits64(padded);
}

/** The foreground (IsForeground()) of `count` <= 64 pixels from x, as the bits of a word (bit i: pixel x + i); the
 * bits above them are clear. Where the buffers hold 64 pixels from x (`readable`: how many they hold from the row's
 * start), a short word reads on into the next row and clears those bits: short rows (32 pixels wide, a 32^3
 * volume's) and rows' ends skip the padded copy. */
template <typename TInput, typename TMask>
inline std::uint64_t
ForegroundBits(const TInput * input, const TMask * mask, std::uint64_t x, std::uint64_t count, std::uint64_t readable)
{
  const auto nonZero = [count, x, readable](const auto * values) {
    if (count == 64)
    {
      return NonZeroBits64(values);
    }
    if (x + 64 <= readable)
    {
      return NonZeroBits64(values) & ((std::uint64_t(1) << count) - 1);
    }
    return NonZeroBits(values, count);
  };
  if constexpr (std::is_same<TMask, NoMask>::value)
  {
    return nonZero(input + x);
  }
  else
  {
    return nonZero(input + x) & nonZero(mask + x);
  }
}

/** The index of the lowest set bit of a word that is not zero. */
inline std::uint64_t
LowestSetBit(std::uint64_t word)
{
#if defined(_MSC_VER) && !defined(__clang__) && defined(_M_X64)
  unsigned long index;
  _BitScanForward64(&index, word);
  return index;
#elif defined(_MSC_VER) && !defined(__clang__)
  std::uint64_t index = 0;
  for (; (word & 1) == 0; word >>= 1)
  {
    ++index;
  }
  return index;
#else
  return static_cast<std::uint64_t>(__builtin_ctzll(word));
#endif
}

/** Writes the runs of one row to `runs` (RunSlotsPerRow() slots) and returns their number. `readable`: how many
 * pixels the input (and mask) hold from the row's start, at least `rowLength` (ForegroundBits()).
 *
 * The row is read 64 pixels at a time into a word of foreground bits; a run begins at a set bit whose lower
 * neighbor (the previous word's top bit for bit 0) is clear, and ends at a clear bit whose lower neighbor is set.
 * The begins and ends are then read off with count-trailing-zeros, so the cost is a few vector instructions per 64
 * pixels plus one step per run, on noise and on long uniform stretches alike. Begins and ends alternate along the
 * row, so the k-th begin and the k-th end are the same run's. */
template <typename TInput, typename TMask>
std::uint64_t
ScanRow(const TInput * input, const TMask * mask, std::uint64_t rowLength, std::uint64_t readable, Run * runs)
{
  std::uint64_t numberOfBegins = 0;
  std::uint64_t numberOfEnds = 0;
  std::uint64_t previous = 0; // the foreground bit of the pixel before the word
  for (std::uint64_t x = 0; x < rowLength; x += 64)
  {
    const std::uint64_t count = std::min<std::uint64_t>(64, rowLength - x);
    const std::uint64_t bits = ForegroundBits(input, mask, x, count, readable);
    const std::uint64_t lower = (bits << 1) | previous;
    std::uint64_t       begins = bits & ~lower;
    std::uint64_t       ends = ~bits & lower;
    if (count < 64)
    {
      ends &= (std::uint64_t(1) << count) - 1;
    }
    previous = (bits >> (count - 1)) & 1;
    for (; begins != 0; begins &= begins - 1)
    {
      runs[numberOfBegins++].begin = x + LowestSetBit(begins);
    }
    for (; ends != 0; ends &= ends - 1)
    {
      runs[numberOfEnds++].end = x + LowestSetBit(ends);
    }
  }
  if (previous)
  {
    runs[numberOfEnds].end = rowLength;
  }
  return numberOfBegins;
}

/** ScanRow() for multi-label input (Request::multiLabel): a run also ends where the value changes, so that each
 * run holds one class, the value of its first pixel. Neighboring runs of a row may then touch. Class maps are
 * piecewise constant: a plain loop, branching on the few changes, is what they need. */
template <typename TInput, typename TMask>
std::uint64_t
ScanRowMultiLabel(const TInput * input, const TMask * mask, std::uint64_t rowLength, Run * runs)
{
  std::uint64_t count = 0;
  bool          previous = false;
  TInput        previousValue{};
  for (std::uint64_t x = 0; x < rowLength; ++x)
  {
    const bool   current = IsForeground(input, mask, x);
    const TInput value = input[x];
    if (current != previous || (current && value != previousValue))
    {
      if (previous)
      {
        runs[count - 1].end = x;
      }
      if (current)
      {
        runs[count++].begin = x;
      }
    }
    previous = current;
    previousValue = value;
  }
  if (previous)
  {
    runs[count - 1].end = rowLength;
  }
  return count;
}

/** Root of the set of node i (a run; a pixel under value tolerance). Path halving only ever points a node to an
 * earlier node of its set, so the invariant parent[i] <= i, and with it "the root is the smallest node", is kept. */
template <typename TId>
TId
FindRoot(TId * parent, TId i)
{
  while (parent[i] != i)
  {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

/** Unites the sets of nodes a and b under the smaller of the two roots. */
template <typename TId>
void
Unite(TId * parent, TId a, TId b)
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
 * diagonal contact counts (fully connected), else 0: runs are neighbors when they share an x
 * after the neighbor run is widened by `widening` on both sides, as in
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

/** UniteRows() for multi-label input: only runs of the same value unite, the value of a run being that of its
 * first pixel in its row's input (`currentRow`, `neighborRow`: the rows' first pixels). Runs of a row may touch
 * here, so a run can meet neighbor runs that also meet the next run of its row: the neighbor runs that can
 * still touch are found again for each run, from the first one that reaches it (a pointer that only moves
 * forward, as the runs' begins do). */
template <typename TInput>
inline void
UniteRowsOfEqualValue(const RowRuns & current, const TInput * currentRow, const RowRuns & neighbor,
                      const TInput * neighborRow, std::uint64_t widening, std::uint64_t * parent)
{
  const Run * const   currentRuns = current.runs;
  const Run * const   neighborRuns = neighbor.runs;
  const std::uint64_t neighborCount = neighbor.count;
  std::uint64_t       first = 0;
  for (std::uint64_t c = 0; c < current.count; ++c)
  {
    const Run    cr = currentRuns[c];
    const TInput value = currentRow[cr.begin];
    // Neighbor runs ending (widened) before this run begins touch neither it nor any later run of its row.
    while (first < neighborCount && neighborRuns[first].end + widening <= cr.begin)
    {
      ++first;
    }
    for (std::uint64_t n = first; n < neighborCount && neighborRuns[n].begin < cr.end + widening; ++n)
    {
      if (neighborRow[neighborRuns[n].begin] == value)
      {
        Unite(parent, neighbor.firstId + n, current.firstId + c);
      }
    }
  }
}

/** The rows of `offsets` (PrecedingNeighborRowOffsets(), the half neighborhood the connectivity joins) that exist
 * for `row`, with their x-widening; returns their number. Row r is (y, z) = (r % ySize, r / ySize); the caller
 * passes y, which it tracks without a division per row. In a batch (Request::batchExtent, `dimension` the image's),
 * the first row (2-D) or slice (3-D) of each image has none in the image before it. */
inline unsigned
PrecedingNeighborRows(std::uint64_t row, std::uint64_t y, std::uint64_t ySize, const NeighborRowOffset * offsets,
                      unsigned numberOfOffsets, std::uint64_t neighbors[4], std::uint64_t widenings[4],
                      std::uint64_t batchExtent = 0, unsigned dimension = 2)
{
  unsigned count = 0;
  // Only a batch of 3-D images pays a division per row (its slice).
  const bool firstOfImage =
    batchExtent != 0 && (dimension == 2 ? y % batchExtent == 0 : (row / ySize) % batchExtent == 0);
  for (unsigned o = 0; o < numberOfOffsets; ++o)
  {
    const NeighborRowOffset & offset = offsets[o];
    const bool                yInside = offset.dy < 0 ? y > 0 : (offset.dy == 0 || y + 1 < ySize);
    const bool                zInside = offset.dz == 0 || row >= ySize;
    // A batch: the rows before an image's first row (2-D) or slice (3-D) belong to the image before it.
    const bool otherImage = firstOfImage && (dimension == 2 ? offset.dy != 0 : offset.dz != 0);
    if (yInside && zInside && !otherImage)
    {
      neighbors[count] = row + static_cast<std::uint64_t>(static_cast<std::int64_t>(offset.dy)) -
                         (offset.dz != 0 ? ySize : 0);
      widenings[count] = offset.widening;
      ++count;
    }
  }
  return count;
}

} // namespace cpu
} // namespace cca
} // namespace itk

#endif // itkCCACPURowScan_h
