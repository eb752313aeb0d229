/*=========================================================================
 *
 *  Copyright NumFOCUS
 *
 *  Licensed under the Apache License, Version 2.0 (the "License");
 *  you may not use this file except in compliance with the License.
 *  You may obtain a copy of the License at
 *
 *         https://www.apache.org/licenses/LICENSE-2.0.txt
 *
 *  Unless required by applicable law or agreed to in writing, software
 *  distributed under the License is distributed on an "AS IS" BASIS,
 *  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 *  See the License for the specific language governing permissions and
 *  limitations under the License.
 *
 *=========================================================================*/

// The engines through their facade, with no ITK: labels and per-component sums of random images against a
// plain flood fill written here (ITK's rule: labels in raster order of each component's first pixel), the CPU
// engine's result on 16 blocks of rows against its first, and the CUDA engine's shape sums against the CPU
// engine's, at every connectivity the engines' value holds (4 and 8 in 2-D;
// 6, 18 and 26 in 3-D: 18, face and edge neighbors, is the engines' alone so far). Built with the module (CTest: CCAEngineCPU, CCAEngineCUDA)
// and alone, ITK-free, from test/engine/CMakeLists.txt, so that a machine without ITK (the GPU machine) builds
// and runs it with its own compilers.
//
//   CudaConnectedComponentAnalysisEngineTest cpu|cuda [repeats]
//
// Exit 0: every case agreed; 1: a mismatch or an error (named); 77: `cuda` without a usable CUDA device.

#include "itkCudaConnectedComponentAnalysisEngine.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <random>
#include <stdexcept>
#include <algorithm>
#include <string>
#include <vector>

namespace
{
using Engine = itk::CudaConnectedComponentAnalysisEngine;
using Size = std::array<std::uint64_t, 3>;

struct Reference
{
  std::vector<std::uint32_t>           labels;
  std::vector<itk::cca::ComponentSums> sums;
};

// Breadth-first flood fill from each unlabeled foreground pixel in raster order: component k (1-based) is the
// k-th first pixel met, as ConnectedComponentImageFilter numbers them.
Reference
FloodFill(const std::vector<std::uint8_t> & image, const Size & size, unsigned dimension, unsigned maxNonZero)
{
  Reference                       r;
  const std::uint64_t             n = size[0] * size[1] * size[2];
  std::vector<std::array<int, 3>> offsets;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
      {
        const int nonZero = (dx != 0) + (dy != 0) + (dz != 0);
        if (nonZero == 0 || (dimension == 2 && dz != 0) || nonZero > static_cast<int>(maxNonZero))
          continue;
        offsets.push_back({ dx, dy, dz });
      }
  r.labels.assign(n, 0);
  std::deque<std::uint64_t> queue;
  for (std::uint64_t start = 0; start < n; ++start)
  {
    if (image[start] == 0 || r.labels[start] != 0)
      continue;
    r.sums.emplace_back();
    auto &              s = r.sums.back();
    const std::uint32_t label = static_cast<std::uint32_t>(r.sums.size());
    s.boundingBoxMin = { size[0], size[1], size[2] };
    r.labels[start] = label;
    queue.push_back(start);
    while (!queue.empty())
    {
      const std::uint64_t i = queue.front();
      queue.pop_front();
      const Size q{ i % size[0], (i / size[0]) % size[1], i / (size[0] * size[1]) };
      ++s.numberOfPixels;
      for (unsigned d = 0; d < 3; ++d)
      {
        s.boundingBoxMin[d] = std::min(s.boundingBoxMin[d], q[d]);
        s.boundingBoxMax[d] = std::max(s.boundingBoxMax[d], q[d]);
        s.indexSum[d] += q[d];
      }
      for (const auto & o : offsets)
      {
        const std::int64_t x = static_cast<std::int64_t>(q[0]) + o[0];
        const std::int64_t y = static_cast<std::int64_t>(q[1]) + o[1];
        const std::int64_t z = static_cast<std::int64_t>(q[2]) + o[2];
        if (x < 0 || y < 0 || z < 0 || x >= static_cast<std::int64_t>(size[0]) ||
            y >= static_cast<std::int64_t>(size[1]) || z >= static_cast<std::int64_t>(size[2]))
          continue;
        const std::uint64_t j = (static_cast<std::uint64_t>(z) * size[1] + static_cast<std::uint64_t>(y)) * size[0] +
                                static_cast<std::uint64_t>(x);
        if (image[j] != 0 && r.labels[j] == 0)
        {
          r.labels[j] = label;
          queue.push_back(j);
        }
      }
    }
  }
  return r;
}

struct Result
{
  std::vector<std::uint32_t>           labels;
  std::vector<itk::cca::ComponentSums> sums;
};

Result
Run(Engine & engine, Engine::Backend backend, const std::vector<std::uint8_t> & image, const Size & size,
    unsigned dimension, unsigned maxNonZero, unsigned numberOfThreads = 0, unsigned numberOfWorkUnits = 0)
{
  itk::cca::Request request;
  request.dimension = dimension;
  request.size = size;
  request.connectivity = itk::cca::Connectivity{ maxNonZero };
  request.input = image.data();
  request.inputKind = itk::cca::ScalarKind::UInt8;
  request.computeShapeSums = true;
  request.computePerimeter = true;
  Result              result;
  const std::uint64_t count = engine.Analyze(request, backend, 0, numberOfThreads, numberOfWorkUnits);
  result.labels.assign(image.size(), 0xFFFFFFFFu);
  engine.WriteLabels(result.labels.data(), itk::cca::ScalarKind::UInt32, 0, 0);
  result.sums = engine.GetComponentSums();
  if (result.sums.size() != count)
    throw std::runtime_error("the count and the number of sums differ");
  return result;
}

bool
SameBasicSums(const itk::cca::ComponentSums & a, const itk::cca::ComponentSums & b)
{
  return a.numberOfPixels == b.numberOfPixels && a.boundingBoxMin == b.boundingBoxMin &&
         a.boundingBoxMax == b.boundingBoxMax && a.indexSum == b.indexSum;
}

std::string
Describe(const Size & size, unsigned dimension, unsigned maxNonZero, double density)
{
  std::string s = std::to_string(size[0]) + "x" + std::to_string(size[1]);
  if (dimension == 3)
    s += "x" + std::to_string(size[2]);
  static const char * const names[2][3] = { { "4", "8", "8" }, { "6", "18", "26" } };
  return s + " " + names[dimension == 3][maxNonZero - 1] + "-connectivity density " + std::to_string(density);
}
} // namespace

int
main(int argc, char * argv[])
{
  const std::string which = argc > 1 ? argv[1] : "cpu";
  const int         repeats = argc > 2 ? std::stoi(argv[2]) : 2;
  if (which != "cpu" && which != "cuda")
  {
    std::fprintf(stderr, "usage: %s cpu|cuda [repeats]\n", argv[0]);
    return 1;
  }
  const bool cuda = which == "cuda";
  if (cuda)
  {
    std::string reason;
    if (!Engine::IsCudaEngineCompiled() || Engine::GetCudaDeviceCount(&reason) < 1)
    {
      std::printf("SKIP: no CUDA engine or device (%s)\n",
                  Engine::IsCudaEngineCompiled() ? reason.c_str() : "built without the CUDA engine");
      return 77;
    }
  }
  const Engine::Backend backend = cuda ? Engine::Backend::CUDA : Engine::Backend::CPU;

  // Odd sizes, single rows and columns, one pixel, images past the automatic backend's size rule (24,576 pixels),
  // and images past the CUDA engine's one-launch small-image path (2^18 pixels: its multi-stage path);
  // granularity 1 (salt and pepper) and 4 (blobs).
  const std::vector<std::pair<Size, unsigned>> shapes = {
    { { 1, 1, 1 }, 2 },     { { 1, 97, 1 }, 2 },    { { 97, 1, 1 }, 2 },    { { 33, 17, 1 }, 2 },
    { { 257, 263, 1 }, 2 }, { { 1031, 67, 1 }, 2 }, { { 701, 401, 1 }, 2 }, { { 1, 1, 5 }, 3 },
    { { 7, 5, 3 }, 3 },     { { 45, 39, 41 }, 3 },  { { 67, 1, 71 }, 3 },   { { 71, 69, 61 }, 3 },
  };
  const std::vector<double> densities = { 0.0, 0.2, 0.5, 0.8, 1.0 };
  std::mt19937_64           random(20261127);
  Engine                    engine;
  Engine                    cpuEngine;
  int                       cases = 0;
  int                       failures = 0;
  for (const auto & [size, dimension] : shapes)
    for (const double density : densities)
      for (const unsigned granularity : { 1u, 4u })
        for (unsigned maxNonZero = 1; maxNonZero <= std::max(dimension, 2u); ++maxNonZero)
        {
          // One draw per cell of granularity^D pixels; foreground pixels get assorted non-zero values.
          std::vector<std::uint8_t>   image(size[0] * size[1] * size[2]);
          std::bernoulli_distribution on(density);
          Size                        cells{};
          for (unsigned d = 0; d < 3; ++d)
            cells[d] = (size[d] + granularity - 1) / granularity;
          std::vector<std::uint8_t> cellOn(cells[0] * cells[1] * cells[2]);
          for (auto & c : cellOn)
            c = on(random) ? 1 : 0;
          for (std::uint64_t i = 0; i < image.size(); ++i)
          {
            const Size          q{ i % size[0], (i / size[0]) % size[1], i / (size[0] * size[1]) };
            const std::uint64_t cell =
              ((q[2] / granularity) * cells[1] + q[1] / granularity) * cells[0] + q[0] / granularity;
            image[i] = static_cast<std::uint8_t>(cellOn[cell] ? 1 + i % 250 : 0);
          }
          const std::string name =
            Describe(size, dimension, maxNonZero, density) + " g" + std::to_string(granularity);
          ++cases;
          try
          {
            const Reference expected = FloodFill(image, size, dimension, maxNonZero);
            const Result    first = Run(engine, backend, image, size, dimension, maxNonZero);
            bool            ok = first.labels == expected.labels && first.sums.size() == expected.sums.size();
            for (std::size_t k = 0; ok && k < first.sums.size(); ++k)
              ok = SameBasicSums(first.sums[k], expected.sums[k]);
            if (!ok)
              std::printf("FAIL %s: labels or sums differ from the flood fill (%zu components, engine %zu)\n",
                          name.c_str(),
                          expected.sums.size(),
                          first.sums.size());
            // The same call again on the engine's used buffers: bit-identical.
            for (int r = 1; ok && r < repeats; ++r)
            {
              const Result again = Run(engine, backend, image, size, dimension, maxNonZero);
              if (!(again.labels == first.labels && again.sums == first.sums))
              {
                std::printf("FAIL %s: run %d differs from the first\n", name.c_str(), r + 1);
                ok = false;
              }
            }
            // The CPU engine on 3 threads and 16 blocks of rows (its passes on the worker pool, the runs and
            // components numbered across the blocks): bit for bit its result on one block.
            if (ok && !cuda)
            {
              const Result blocks = Run(cpuEngine, backend, image, size, dimension, maxNonZero, 3, 16);
              if (!(blocks.labels == first.labels && blocks.sums == first.sums))
              {
                std::printf("FAIL %s: 16 blocks on 3 threads differ from the first run\n", name.c_str());
                ok = false;
              }
            }
            // The CUDA engine's shape sums (moments, border counts, perimeter intercepts) equal the CPU engine's.
            if (ok && cuda)
            {
              const Result cpu = Run(cpuEngine, Engine::Backend::CPU, image, size, dimension, maxNonZero);
              if (!(cpu.sums == first.sums))
              {
                std::printf("FAIL %s: the CUDA engine's shape sums differ from the CPU engine's\n", name.c_str());
                ok = false;
              }
            }
            failures += ok ? 0 : 1;
          }
          catch (const std::exception & e)
          {
            std::printf("FAIL %s: %s\n", name.c_str(), e.what());
            ++failures;
          }
        }
  // The engine's description (the CUDA engine's formats numbers in a stream) names the engine that ran. The
  // toolchain fault of a static C++ runtime bound across two libraries needs a shared library beside another
  // libstdc++ to show: the wheels' export check (scripts/python-tests.sh, device-own-build.sh) guards that.
  const std::string description = engine.GetDescription();
  const bool        described = description.find(cuda ? "CUDA engine on device 0" : "CPU engine") != std::string::npos;
  if (!described)
  {
    std::printf("FAIL: unexpected engine description '%s'\n", description.c_str());
    ++failures;
  }
  std::printf("%s engine (%s): %d cases, %d failed\n", which.c_str(), description.c_str(), cases, failures);
  return failures == 0 ? 0 : 1;
}
