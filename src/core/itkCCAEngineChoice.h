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
#ifndef itkCCAEngineChoice_h
#define itkCCAEngineChoice_h

// Which engine a facade analyzes with: the backend asked for, or the automatic one (the CPU engine for small host
// images, else the CUDA engine where a device is usable, else the CPU engine, said once); engines kept between
// facades; where the facade's warnings go.

#include "itkCCAEngine.h"
#include "itkCudaConnectedComponentAnalysisEnums.h"

#include <cstdint>
#include <memory>
#include <string>

namespace itk
{
namespace cca
{

using Backend = CudaConnectedComponentAnalysisEnums::Backend;

/** Below this many pixels the automatic backend takes the CPU engine for a host image. Per call (labels + basic
 * table, numpy in/out, median; scripts/device-crossover.py, H100 host with 16 cores, 2026-11-28) the CPU engine was
 * the faster up to 128² (0.088 / 0.101 ms) and 28³ (0.148 / 0.156 ms), the CUDA engine from 160² (0.111 / 0.102 ms)
 * and 32³ (0.261 / 0.161 ms); between 2^14 and 2^15 pixels the two differ by less than 15 %. With its threads kept
 * in a pool (2026-11-29), the CPU engine splits images of 2 x 8,192 pixels and more into blocks; on an H200 host
 * with 16 cores it then came within 16 % of the CUDA engine from 160² to 512² and 48³ to 64³ either way, the CUDA
 * engine stayed the faster at 24³-40³ (by 8-27 %), and the threshold stayed (docs/performance.md). */
constexpr std::uint64_t AutomaticCudaFromPixels = 24576; // 3 * 2^13

/** `backend` for a host image of `numberOfPixels` pixels, the automatic backend's choice by size made: the CPU engine
 * below AutomaticCudaFromPixels, else as asked (Automatic then takes the GPU where one is usable). */
constexpr Backend
BackendForHostImage(Backend backend, std::uint64_t numberOfPixels)
{
  return backend == Backend::Automatic && numberOfPixels < AutomaticCudaFromPixels ? Backend::CPU : backend;
}

/** The engine one facade holds, with what it was made for (backend, device, threads, work units): kept while
 * those stay, else given to the process's cache of engines and the right one taken from it or made. Given back to
 * the cache on destruction. */
struct EngineChoice
{
  EngineChoice() = default;
  ~EngineChoice();
  EngineChoice(const EngineChoice &) = delete;
  EngineChoice &
  operator=(const EngineChoice &) = delete;

  /** The engine for `backend` (never Automatic here). */
  Engine &
  Acquire(Backend backend, int deviceId, unsigned numberOfThreads, unsigned numberOfWorkUnits);

  /** Automatic: the CUDA engine where a device is usable, else the CPU engine (said once). */
  Engine &
  AcquireAutomatic(int deviceId, unsigned numberOfThreads, unsigned numberOfWorkUnits);

  /** A second engine like the CUDA engine held, with its own stream, staging and device buffers, for the slab
   * engine to alternate with (itkCCASlabEngine.h): made on first need (or taken from the cache), kept like
   * `engine`. nullptr where the engine held is not the CUDA engine. */
  Engine *
  AcquirePartner();

  /** Frees the partner and its device memory: the first thing to give up where the GPU runs out of memory. */
  void
  ReleasePartner()
  {
    partner.reset();
  }

  /** Makes the CUDA engine of `deviceId` (for Backend::CUDA, or Automatic where a device is usable; nothing for CPU)
   * and keeps it in the cache for the next facade; errors are left to the analysis to report. Returns whether it is
   * ready. */
  static bool
  StartCudaEngine(Backend backend, int deviceId);

  /** Frees the engines of destroyed facades (their device and page-locked buffers, their host tables). */
  static void
  ReleaseCachedEngines();

  std::unique_ptr<Engine> engine;
  std::unique_ptr<Engine> partner; ///< AcquirePartner()'s, for `engine`'s backend and device
  Backend                 engineBackend{ Backend::Automatic };
  int                     engineDeviceId{ -1 };
  unsigned                engineThreads{ 0 };
  unsigned                engineWorkUnits{ 0 };
};

/** The automatic backend's fallback to the CPU engine, said once per process (not per Update()) through the
 * warning handler. */
void
ReportCPUFallbackOnce(const std::string & reason);

/** Where the facade's warnings go: `handler(text)`; nullptr: standard error. */
void
SetWarningHandler(void (*handler)(const char * text));

} // namespace cca
} // namespace itk

#endif
