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
// A small ITK-free parallel loop shared by the engines' host code (the CPU engine's passes, the CUDA
// engine's conversions of downloaded buffers): blocks handed out dynamically to the calling thread and to the
// threads of a pool kept from call to call (itkCCAWorkerPool.cxx), so that a small image's passes do not each pay
// for starting threads.
#ifndef itkCCAParallelFor_h
#define itkCCAParallelFor_h

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace itk
{
namespace cca
{

/** Runs work(context) on up to `extraWorkers` threads of the process' worker pool while the calling thread runs it
 * too, and returns once every pool thread that started it has returned. `work` hands out its pieces itself, so that
 * it is done whether or not each pool thread joins in, and throws nothing (ParallelFor's catches and keeps the first
 * exception). Returns false, having run nothing, where the pool is busy (another thread's call, or a call from inside
 * a pool job) or could start no thread: the caller then starts threads of its own. */
bool
RunOnWorkerPool(unsigned extraWorkers, void (*work)(void *), void * context);

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

  using Work = decltype(work);
  if (!RunOnWorkerPool(
        static_cast<unsigned>(numberOfWorkers - 1), [](void * context) { (*static_cast<Work *>(context))(); }, &work))
  {
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
  }
  if (firstError)
  {
    std::rethrow_exception(firstError);
  }
}

/** Calls function(begin, end) on consecutive pieces of [0, count) of at least minPerPiece elements, on up
 * to numberOfThreads threads: for element-wise host loops over large arrays. */
template <typename TFunction>
void
ParallelForRange(unsigned numberOfThreads, std::uint64_t count, std::uint64_t minPerPiece, const TFunction & function)
{
  const std::uint64_t pieces = std::max<std::uint64_t>(
    1, std::min<std::uint64_t>(std::max(numberOfThreads, 1u), count / std::max<std::uint64_t>(minPerPiece, 1)));
  const std::uint64_t perPiece = (count + pieces - 1) / pieces;
  ParallelFor(static_cast<unsigned>(pieces), pieces, [&](std::uint64_t piece) {
    const std::uint64_t begin = piece * perPiece;
    const std::uint64_t end = std::min(count, begin + perPiece);
    if (begin < end)
    {
      function(begin, end);
    }
  });
}

} // namespace cca
} // namespace itk

#endif
