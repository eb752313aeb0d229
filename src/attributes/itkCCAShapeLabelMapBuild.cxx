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
// The LabelMap build's machinery, compiled once for every LabelMap type: the process-wide memory reserve
// that lets a label object's constructor survive running out of memory, and the schedule that builds the
// objects in parallel blocks while one work unit inserts them in label order
// (include/itkCCAShapeLabelMapBuilder.h holds the part that knows the LabelMap's type).
#include "itkCCAShapeLabelMapBuilder.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

namespace itk
{
namespace
{
constexpr std::size_t PieceBytes = std::size_t{ 1 } << 20;

std::array<std::atomic<void *>, 64> g_Pieces{};
std::atomic<bool>                   g_Exhausted{ false };
std::mutex                          g_Mutex;
unsigned                            g_Users = 0;
std::new_handler                    g_Previous = nullptr;

void
ReserveHandler()
{
  g_Exhausted.store(true);
  for (auto & piece : g_Pieces)
  {
    if (void * memory = piece.exchange(nullptr))
    {
      std::free(memory);
      return; // operator new tries again
    }
  }
  if (g_Previous)
  {
    g_Previous();
    return;
  }
  throw std::bad_alloc();
}

/** While alive, an allocation that fails first gets memory back from a reserve (one of 64 pieces of 1 MB per
 * failure) and marks the memory exhausted, instead of throwing at once. The previous new-handler is restored
 * (and called once the reserve is spent) on destruction. The pieces stay allocated between builds (untouched,
 * so address space rather than resident memory). One reserve and one handler per process. */
class MemoryReserve
{
public:
  MemoryReserve();
  ~MemoryReserve();
  MemoryReserve(const MemoryReserve &) = delete;
  MemoryReserve &
  operator=(const MemoryReserve &) = delete;
};

MemoryReserve::MemoryReserve()
{
  // Builds of several filters at once share one reserve and one handler (the first installs them).
  const std::lock_guard<std::mutex> lock(g_Mutex);
  if (g_Users++ == 0)
  {
    for (auto & piece : g_Pieces)
    {
      if (piece.load() == nullptr)
      {
        piece.store(std::malloc(PieceBytes));
      }
    }
    g_Exhausted.store(false);
    g_Previous = std::set_new_handler(&ReserveHandler);
  }
}

MemoryReserve::~MemoryReserve()
{
  const std::lock_guard<std::mutex> lock(g_Mutex);
  if (--g_Users == 0)
  {
    std::set_new_handler(g_Previous);
  }
}

} // namespace

namespace cca
{

void
ThrowIfOutOfMemory()
{
  if (g_Exhausted.load(std::memory_order_relaxed))
  {
    throw std::bad_alloc();
  }
}

void
BuildLabelObjectsInBlocks(std::size_t numComponents, unsigned numberOfWorkUnits, const LabelObjectBuildSteps & steps)
{
  // Slices only to report progress from the calling thread between them; few objects take one slice,
  // and one work unit where a parallel loop would cost more than it saves.
  constexpr std::size_t  blockSize = 512;
  const std::size_t      numSlices = std::min<std::size_t>(16, 1 + numComponents / (1u << 16));
  const unsigned         workUnits = numComponents < 4 * blockSize ? 1u : std::max(1u, numberOfWorkUnits);
  const MemoryReserve    reserve;
  bool                   inserting = false;
  for (std::size_t slice = 0; slice < numSlices; ++slice)
  {
    const std::size_t first = numComponents * slice / numSlices;
    const std::size_t last = numComponents * (slice + 1) / numSlices;
    const std::size_t numBlocks = (last - first + blockSize - 1) / blockSize;
    steps.startSlice(first, last);
    std::unique_ptr<std::atomic<bool>[]> done(new std::atomic<bool>[numBlocks]);
    for (std::size_t b = 0; b < numBlocks; ++b)
    {
      done[b].store(false, std::memory_order_relaxed);
    }
    std::atomic<std::size_t> nextBlock{ 0 };
    std::atomic<bool>        failed{ false };
    std::exception_ptr       error;
    std::mutex               errorMutex;
    auto                     fail = [&]() {
      const std::lock_guard<std::mutex> lock(errorMutex);
      if (!error)
      {
        error = std::current_exception();
      }
      failed.store(true);
    };
    auto buildBlock = [&](std::size_t b) {
      try
      {
        if (!failed.load(std::memory_order_relaxed))
        {
          steps.buildObjects(first + b * blockSize, std::min(last, first + (b + 1) * blockSize));
        }
      }
      catch (...)
      {
        fail();
      }
      done[b].store(true, std::memory_order_release);
    };
    auto buildBlocks = [&]() {
      for (std::size_t b = nextBlock++; b < numBlocks; b = nextBlock++)
      {
        buildBlock(b);
      }
    };
    auto insertBlocks = [&]() {
      try
      {
        for (std::size_t b = 0; b < numBlocks && !failed.load(); ++b)
        {
          // While block b is being built elsewhere, build the next free one rather than wait.
          while (!done[b].load(std::memory_order_acquire))
          {
            const std::size_t mine = nextBlock++;
            if (mine < numBlocks)
            {
              buildBlock(mine);
            }
            else
            {
              std::this_thread::yield();
            }
          }
          if (failed.load())
          {
            break;
          }
          if (!inserting)
          {
            inserting = true;
            if (steps.beforeFirstInsertion)
            {
              steps.beforeFirstInsertion();
            }
          }
          steps.insertObjects(first + b * blockSize, std::min(last, first + (b + 1) * blockSize));
        }
      }
      catch (...)
      {
        fail();
      }
    };
    if (workUnits == 1)
    {
      buildBlocks();
      insertBlocks();
    }
    else
    {
      steps.parallelize(workUnits, [&](unsigned unit) {
        if (unit == 0)
        {
          insertBlocks();
        }
        else
        {
          buildBlocks();
        }
      });
    }
    if (error)
    {
      std::rethrow_exception(error);
    }
    if (steps.progress)
    {
      steps.progress(static_cast<float>(slice + 1) / numSlices);
    }
  }
}

} // namespace cca
} // namespace itk
