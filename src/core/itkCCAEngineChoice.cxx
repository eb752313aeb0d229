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
#include "itkCCAEngineChoice.h"

#include <atomic>
#include <exception>
#include <iostream>
#include <mutex>
#include <utility>
#include <vector>

namespace itk
{
namespace cca
{
namespace
{
using WarningHandler = void (*)(const char * text);

void
WriteWarningToStandardError(const char * text)
{
  std::cerr << "CudaConnectedComponentAnalysis: " << text << std::flush;
}

std::atomic<WarningHandler> warningHandler{ &WriteWarningToStandardError };

} // namespace

void
ReportCPUFallbackOnce(const std::string & reason)
{
  static std::once_flag once;
  std::call_once(once, [&reason]() {
    const std::string text = reason + " -- using the CPU engine.\n";
    warningHandler.load()(text.c_str());
  });
}

void
SetWarningHandler(WarningHandler handler)
{
  warningHandler.store(handler != nullptr ? handler : &WriteWarningToStandardError);
}

namespace
{
/** Engines of destroyed filters, kept for the next filter of the same backend, device and thread count:
 * a user's script makes a new filter for each image, and a new engine would allocate its device buffers,
 * its page-locked staging buffers and its host tables (millions of components) again, first touch
 * included, which costs more than a small image's whole analysis. One engine per key; released by
 * ReleaseCachedEngines(). Never destroyed at exit (device memory goes with the process; a CUDA engine's
 * destructor must not run after the CUDA runtime's own teardown). */
class EngineCache
{
public:
  static EngineCache &
  Instance()
  {
    static auto * cache = new EngineCache;
    return *cache;
  }

  struct Key
  {
    Backend backend;
    int                                           deviceId;
    unsigned                                      threads;
    unsigned                                      workUnits;
    bool                                          partner; ///< a facade's second engine (AcquirePartner())
    bool
    operator==(const Key & other) const
    {
      return backend == other.backend && deviceId == other.deviceId && threads == other.threads &&
             workUnits == other.workUnits && partner == other.partner;
    }
  };

  std::unique_ptr<Engine>
  Take(const Key & key)
  {
    const std::lock_guard<std::mutex> lock(m_Mutex);
    for (auto it = m_Engines.begin(); it != m_Engines.end(); ++it)
    {
      if (it->first == key)
      {
        auto engine = std::move(it->second);
        m_Engines.erase(it);
        return engine;
      }
    }
    return nullptr;
  }

  void
  Give(const Key & key, std::unique_ptr<Engine> engine)
  {
    const std::lock_guard<std::mutex> lock(m_Mutex);
    for (auto & entry : m_Engines)
    {
      if (entry.first == key)
      {
        entry.second = std::move(engine); // the newer one; the older is freed here
        return;
      }
    }
    m_Engines.emplace_back(key, std::move(engine));
  }

  void
  Clear()
  {
    std::vector<std::pair<Key, std::unique_ptr<Engine>>> engines;
    {
      const std::lock_guard<std::mutex> lock(m_Mutex);
      engines.swap(m_Engines);
    }
  }

private:
  std::mutex                                                m_Mutex;
  std::vector<std::pair<Key, std::unique_ptr<Engine>>> m_Engines;
};

/** The cache key of the engine `choice` holds, or of its partner. */
EngineCache::Key
HeldKey(const EngineChoice & choice, bool partner)
{
  return { choice.engineBackend, choice.engineDeviceId, choice.engineThreads, choice.engineWorkUnits, partner };
}

/** Gives the engine `choice` holds and its partner back to the cache, for the next choice of the same key. */
void
GiveBack(EngineChoice & choice)
{
  if (choice.engine)
  {
    EngineCache::Instance().Give(HeldKey(choice, false), std::move(choice.engine));
  }
  if (choice.partner)
  {
    EngineCache::Instance().Give(HeldKey(choice, true), std::move(choice.partner));
  }
}
} // namespace

EngineChoice::~EngineChoice()
{
  GiveBack(*this);
}

Engine &
EngineChoice::Acquire(Backend backend, int deviceId, unsigned numberOfThreads, unsigned numberOfWorkUnits)
{
  const bool same =
    engine && engineBackend == backend &&
    (backend == Backend::CUDA ? engineDeviceId == deviceId
                              : engineThreads == numberOfThreads && engineWorkUnits == numberOfWorkUnits);
  if (!same)
  {
    GiveBack(*this);
    const bool             cuda = backend == Backend::CUDA;
    const EngineCache::Key key{
      backend, cuda ? deviceId : -1, cuda ? 0u : numberOfThreads, cuda ? 0u : numberOfWorkUnits, false
    };
    engine = EngineCache::Instance().Take(key);
    if (!engine)
    {
      engine = cuda ? CreateCudaEngine(deviceId) : CreateCPUEngine(numberOfThreads, numberOfWorkUnits);
    }
    engineBackend = key.backend;
    engineDeviceId = key.deviceId;
    engineThreads = key.threads;
    engineWorkUnits = key.workUnits;
  }
  return *engine;
}

Engine *
EngineChoice::AcquirePartner()
{
  if (!engine || engineBackend != Backend::CUDA)
  {
    return nullptr;
  }
  if (!partner)
  {
    partner = EngineCache::Instance().Take(HeldKey(*this, true));
    if (!partner)
    {
      partner = CreateCudaEngine(engineDeviceId);
    }
  }
  return partner.get();
}

bool
EngineChoice::StartCudaEngine(Backend backend, int deviceId)
{
  if (backend == Backend::CPU || (backend == Backend::Automatic && GetCudaDeviceCount(nullptr) <= 0))
  {
    return false;
  }
  EngineChoice choice; // its destructor hands the engine to the cache
  try
  {
    choice.Acquire(Backend::CUDA, deviceId, 0, 0);
    return true;
  }
  catch (const std::exception &)
  {
    return false; // the analysis meets the same error and reports it (or falls back, said once)
  }
}

Engine &
EngineChoice::AcquireAutomatic(int deviceId, unsigned numberOfThreads, unsigned numberOfWorkUnits)
{
  if (engine && engineBackend == Backend::CUDA && engineDeviceId == deviceId)
  {
    return *engine;
  }
  std::string reason;
  if (GetCudaDeviceCount(&reason) > 0)
  {
    try
    {
      return Acquire(Backend::CUDA, deviceId, numberOfThreads, numberOfWorkUnits);
    }
    catch (const Unavailable & e)
    {
      reason = e.what();
    }
  }
  ReportCPUFallbackOnce(reason);
  return Acquire(Backend::CPU, deviceId, numberOfThreads, numberOfWorkUnits);
}

void
EngineChoice::ReleaseCachedEngines()
{
  EngineCache::Instance().Clear();
}

} // namespace cca
} // namespace itk
