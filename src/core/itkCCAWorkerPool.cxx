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

// The worker pool behind ParallelFor (itkCCAParallelFor.h). An analysis runs several parallel passes, each a few
// microseconds to milliseconds long; starting and joining threads for each pass cost about as much as a small
// image's passes themselves (on an H200 machine's 16-core host, the CPU engine's 64³ call took 0.68-0.76 ms so,
// 0.25-0.38 ms with the pool). The pool's threads are started once, as OpenMP's are, poll for the next job for a
// while after each one, since the next pass or call usually follows within microseconds, and then sleep.
//
// One job at a time: a call that finds the pool busy (another thread's analysis, or a ParallelFor inside a pool
// job) starts its own threads, as before the pool. A forked child (Python's multiprocessing, PyTorch's data loader
// workers) has none of the parent's threads: it gets a pool of its own on its first call.

#include "itkCCAParallelFor.h"

#include <chrono>
#include <condition_variable>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#  include <immintrin.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#  include <pthread.h>
#  define CCA_WORKER_POOL_ATFORK 1
#endif

namespace itk
{
namespace cca
{
namespace
{

/** How long an idle thread polls for the next job before it sleeps: longer than the gaps between an analysis'
 * passes and between the calls of a loop over small images, short enough to leave the cores alone soon after. */
constexpr std::chrono::microseconds kPollTime{ 200 };

/** Set on the threads running a pool job: a ParallelFor inside it does not wait on the pool it runs on. */
thread_local bool t_InPoolJob = false;

inline void
CpuRelax()
{
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
  _mm_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/** Polls `done` for kPollTime; whether it came true. */
template <typename TPredicate>
bool
PollUntil(const TPredicate & done)
{
  const auto until = std::chrono::steady_clock::now() + kPollTime;
  for (unsigned i = 1;; ++i)
  {
    if (done())
    {
      return true;
    }
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until)
    {
      return false;
    }
    CpuRelax();
  }
}

/** The pool. A job is posted by storing a new generation in `m_State`; its threads take a slot each by one
 * compare-and-swap on that word (generation in the high half, slots taken in the low half), so that the threads the
 * job does not need only read it, and neither they nor the others contend for a lock. */
class WorkerPool
{
public:
  bool
  Run(unsigned extraWorkers, void (*work)(void *), void * context)
  {
    std::unique_lock<std::mutex> call(m_CallMutex, std::try_to_lock);
    if (!call.owns_lock())
    {
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(m_Mutex);
      const std::uint64_t         generation = Generation(m_State.load(std::memory_order_relaxed));
      while (m_NumberOfThreads < extraWorkers)
      {
        try
        {
          // Detached: the pool lives as long as the process (its threads may be asleep in it at exit).
          std::thread(&WorkerPool::Serve, this, generation).detach();
        }
        catch (const std::system_error &)
        {
          break; // no more threads to be had: the ones there are share the job
        }
        ++m_NumberOfThreads;
      }
      if (m_NumberOfThreads == 0)
      {
        return false;
      }
      m_Work.store(work, std::memory_order_relaxed);
      m_Context.store(context, std::memory_order_relaxed);
      m_Wanted.store(std::min(extraWorkers, m_NumberOfThreads), std::memory_order_relaxed);
      m_Finished.store(0, std::memory_order_relaxed);
      m_State.store((generation + 1) << 32, std::memory_order_release);
      if (m_Sleeping > 0)
      {
        m_Wake.notify_all();
      }
    }

    t_InPoolJob = true;
    work(context);
    t_InPoolJob = false;

    // `work` returns once nothing is left to hand out: the slots no thread has taken yet are not needed. Close them,
    // and wait for the threads that took one.
    const unsigned taken = Taken(m_State.fetch_or(kClosed, std::memory_order_acq_rel));
    if (!PollUntil([&] { return m_Finished.load(std::memory_order_acquire) == taken; }))
    {
      std::unique_lock<std::mutex> lock(m_Mutex);
      m_Done.wait(lock, [&] { return m_Finished.load(std::memory_order_acquire) == taken; });
    }
    return true;
  }

private:
  static constexpr std::uint64_t kClosed = std::uint64_t{ 1 } << 31; ///< in the low half: no more slots

  static std::uint64_t
  Generation(std::uint64_t state)
  {
    return state >> 32;
  }

  static unsigned
  Taken(std::uint64_t state)
  {
    return static_cast<unsigned>(state & (kClosed - 1));
  }

  [[noreturn]] void
  Serve(std::uint64_t seen)
  {
    t_InPoolJob = true;
    for (;;)
    {
      std::uint64_t state = 0;
      const auto    posted = [&] {
        state = m_State.load(std::memory_order_acquire);
        return Generation(state) != seen;
      };
      if (!PollUntil(posted))
      {
        std::unique_lock<std::mutex> lock(m_Mutex);
        ++m_Sleeping;
        m_Wake.wait(lock, posted);
        --m_Sleeping;
      }
      seen = Generation(state);
      // A slot of this generation's job, while there is one: the swap fails where another thread took one first, or
      // where the job was closed or replaced meanwhile (the generation only grows), and the loop reads again.
      while (Generation(state) == seen && (state & kClosed) == 0 &&
             Taken(state) < m_Wanted.load(std::memory_order_relaxed))
      {
        if (m_State.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel, std::memory_order_acquire))
        {
          m_Work.load(std::memory_order_relaxed)(m_Context.load(std::memory_order_relaxed));
          m_Finished.fetch_add(1, std::memory_order_acq_rel);
          std::lock_guard<std::mutex> lock(m_Mutex); // the caller may be asleep in m_Done
          m_Done.notify_one();
          break;
        }
      }
    }
  }

  std::mutex                    m_CallMutex; ///< held by the one caller whose job the pool runs
  std::mutex                    m_Mutex;     ///< guards posting against falling asleep, and the counts below
  std::condition_variable       m_Wake;
  std::condition_variable       m_Done;
  unsigned                      m_NumberOfThreads = 0;
  unsigned                      m_Sleeping = 0;
  std::atomic<std::uint64_t>    m_State{ 0 }; ///< generation << 32 | closed bit | slots taken
  std::atomic<void (*)(void *)> m_Work{ nullptr };
  std::atomic<void *>           m_Context{ nullptr };
  std::atomic<unsigned>         m_Wanted{ 0 }; ///< slots: pool threads the job may take
  std::atomic<unsigned>         m_Finished{ 0 };
};

std::atomic<WorkerPool *> g_Pool{ nullptr };

#if defined(CCA_WORKER_POOL_ATFORK)
/** In a forked child, the parent's pool threads do not exist: the next call makes a new pool (the old one is left
 * as it is, its locks possibly held by threads that are gone). */
void
ForgetPoolInChild()
{
  g_Pool.store(nullptr);
}
#endif

WorkerPool &
Pool()
{
  WorkerPool * pool = g_Pool.load(std::memory_order_acquire);
  if (pool == nullptr)
  {
#if defined(CCA_WORKER_POOL_ATFORK)
    static const int registered = pthread_atfork(nullptr, nullptr, ForgetPoolInChild);
    (void)registered;
#endif
    auto * created = new WorkerPool; // never deleted: detached threads serve it until the process ends
    if (g_Pool.compare_exchange_strong(pool, created, std::memory_order_acq_rel))
    {
      pool = created;
    }
    else
    {
      delete created; // another thread's came first; no thread started on this one
    }
  }
  return *pool;
}

} // namespace

bool
RunOnWorkerPool(unsigned extraWorkers, void (*work)(void *), void * context)
{
  if (extraWorkers == 0 || t_InPoolJob)
  {
    return false;
  }
  return Pool().Run(extraWorkers, work, context);
}

} // namespace cca
} // namespace itk
