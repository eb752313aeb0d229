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
// The engine facade's ComputeContacts() (which labels touch, cc3d's contacts and region_graph), with the backend as
// argument: random label images of several integer types, 1-D to 3-D, odd sizes and sides of 1, every connectivity,
// against a count written here over every neighbor pair; labels of 2^30 and more (the CUDA engine hands them to the
// CPU engine under the automatic backend); negative and floating-point labels refused.
#include "itkCCATestUtilities.h"

#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace
{
using namespace itk;
using namespace itk::ccatest;
using Engine = CudaConnectedComponentAnalysisEngine;

/** Every neighbor pair at `maxNonZero`, counted per pair of labels (low, high): neighbor pairs and face pairs per
 * axis. */
std::map<std::pair<std::uint64_t, std::uint64_t>, std::array<std::uint64_t, 4>>
CountPairs(const std::vector<std::uint64_t> & labels, const std::array<std::uint64_t, 3> & size, unsigned dimension,
           unsigned maxNonZero)
{
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::array<std::uint64_t, 4>> pairs;
  const auto n = [&](unsigned d) { return static_cast<std::int64_t>(size[d]); };
  for (std::int64_t z = 0; z < n(2); ++z)
    for (std::int64_t y = 0; y < n(1); ++y)
      for (std::int64_t x = 0; x < n(0); ++x)
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
            {
              const unsigned nonZero = (dx != 0) + (dy != 0) + (dz != 0);
              const std::int64_t qx = x + dx, qy = y + dy, qz = z + dz;
              // each unordered pair once: the neighbor after the pixel in raster order
              if (nonZero == 0 || nonZero > maxNonZero || qx < 0 || qy < 0 || qz < 0 || qx >= n(0) || qy >= n(1) ||
                  qz >= n(2) || std::make_tuple(qz, qy, qx) < std::make_tuple(z, y, x) ||
                  (dimension < 3 && dz != 0) || (dimension < 2 && dy != 0))
              {
                continue;
              }
              const std::uint64_t a = labels[static_cast<std::size_t>((z * n(1) + y) * n(0) + x)];
              const std::uint64_t b = labels[static_cast<std::size_t>((qz * n(1) + qy) * n(0) + qx)];
              if (a == 0 || b == 0 || a == b)
              {
                continue;
              }
              auto & counts = pairs[{ std::min(a, b), std::max(a, b) }];
              ++counts[0];
              if (nonZero == 1)
              {
                ++counts[1 + (dx != 0 ? 0 : dy != 0 ? 1 : 2)];
              }
            }
  return pairs;
}

template <typename T>
bool
SameAsCounted(Engine::Backend backend, const std::vector<T> & labels, const std::array<std::uint64_t, 3> & size,
              unsigned dimension, unsigned maxNonZero, const std::string & what)
{
  cca::ContactRequest request;
  request.dimension = dimension;
  request.size = size;
  request.labels = labels.data();
  request.labelKind = cca::ScalarKindOf<T>();
  request.connectivity.maxNonZero = maxNonZero;
  Engine                       engine;
  const cca::ContactTable      table = engine.ComputeContacts(request, backend, 0, 0);
  std::vector<std::uint64_t>   wide(labels.begin(), labels.end());
  const auto                   expected = CountPairs(wide, size, dimension, maxNonZero);
  bool                         ok = table.Size() == expected.size();
  std::size_t                  i = 0;
  for (auto it = expected.begin(); ok && it != expected.end(); ++it, ++i)
  {
    ok = table.first[i] == it->first.first && table.second[i] == it->first.second &&
         table.neighborPairs[i] == it->second[0] && table.faces[0][i] == it->second[1] &&
         table.faces[1][i] == it->second[2] && table.faces[2][i] == it->second[3];
  }
  if (!ok)
  {
    std::cerr << what << ": " << table.Size() << " pairs, expected " << expected.size() << " (first difference at row "
              << i << ")" << std::endl;
  }
  if (backend != Engine::Backend::Automatic && engine.GetContactsBackendUsed() != backend)
  {
    std::cerr << what << ": ran on another backend" << std::endl;
    ok = false;
  }
  return ok;
}

template <typename T>
std::vector<T>
RandomLabels(const std::array<std::uint64_t, 3> & size, unsigned granularity, std::uint64_t numLabels, T base,
             std::uint32_t seed)
{
  std::mt19937   random(seed);
  std::vector<T> labels(static_cast<std::size_t>(size[0] * size[1] * size[2]));
  for (std::uint64_t z = 0; z < size[2]; ++z)
    for (std::uint64_t y = 0; y < size[1]; ++y)
      for (std::uint64_t x = 0; x < size[0]; ++x)
      {
        // blocks of one label, a tenth of the pixels another, a fifth background
        std::mt19937        block(seed * 7919u + static_cast<std::uint32_t>(x / granularity * 31 + y / granularity * 17 +
                                                                    z / granularity * 13));
        const std::uint64_t value = (random() % 10 == 0 ? random() : block()) % (numLabels + 2);
        labels[static_cast<std::size_t>((z * size[1] + y) * size[0] + x)] =
          value < 2 ? T(0) : static_cast<T>(base + static_cast<T>(value - 1));
      }
  return labels;
}

bool
Random(Engine::Backend backend)
{
  bool          ok = true;
  std::uint32_t seed = 1;
  const std::vector<std::pair<unsigned, std::array<std::uint64_t, 3>>> shapes = {
    { 1, { { 1, 1, 1 } } },  { 1, { { 97, 1, 1 } } },   { 2, { { 1, 31, 1 } } }, { 2, { { 31, 1, 1 } } },
    { 2, { { 45, 37, 1 } } }, { 3, { { 13, 11, 9 } } }, { 3, { { 1, 7, 6 } } }, { 3, { { 40, 33, 21 } } },
  };
  for (const auto & [dimension, size] : shapes)
  {
    for (unsigned maxNonZero = 1; maxNonZero <= dimension; ++maxNonZero)
    {
      for (const unsigned g : { 1u, 3u })
      {
        std::ostringstream what;
        what << dimension << "-D " << size[0] << "x" << size[1] << "x" << size[2] << " connectivity " << maxNonZero
             << " g=" << g;
        ok = SameAsCounted(backend, RandomLabels<std::uint16_t>(size, g, 12, 1, ++seed), size, dimension, maxNonZero,
                           what.str() + " uint16") && ok;
        ok = SameAsCounted(backend, RandomLabels<std::uint32_t>(size, g, 500, 1, ++seed), size, dimension, maxNonZero,
                           what.str() + " uint32") && ok;
        ok = SameAsCounted(backend, RandomLabels<std::int64_t>(size, g, 7, 1, ++seed), size, dimension, maxNonZero,
                           what.str() + " int64") && ok;
      }
    }
  }
  // Labels of 2^30 and more: the CPU engine's (the automatic backend falls back to it, said once).
  const std::array<std::uint64_t, 3> size{ { 300, 300, 1 } };
  const auto wide = RandomLabels<std::uint64_t>(size, 4, 20, std::uint64_t{ 1 } << 40, 99);
  ok = SameAsCounted(backend == Engine::Backend::CUDA ? Engine::Backend::Automatic : backend, wide, size, 2, 2,
                     "labels past 2^40") && ok;
  return ok;
}

bool
Refusals(Engine::Backend backend)
{
  bool ok = true;
  auto refused = [&](const cca::ContactRequest & request, const std::string & expected) {
    try
    {
      Engine engine;
      engine.ComputeContacts(request, backend, 0, 0);
      std::cerr << "'" << expected << "' was not refused" << std::endl;
      ok = false;
    }
    catch (const cca::Error & e)
    {
      if (std::string(e.what()).find(expected) == std::string::npos)
      {
        std::cerr << "unexpected message: " << e.what() << std::endl;
        ok = false;
      }
    }
  };
  std::vector<std::int32_t> negative(70000, 3);
  negative[5000] = -2;
  cca::ContactRequest request;
  request.dimension = 2;
  request.size = { { 700, 100, 1 } };
  request.labels = negative.data();
  request.labelKind = cca::ScalarKind::Int32;
  refused(request, "non-negative labels");
  std::vector<float> floats(70000, 1.0f);
  request.labels = floats.data();
  request.labelKind = cca::ScalarKind::Float32;
  refused(request, "integer labels");
  return ok;
}
} // namespace

int
itkCudaConnectedComponentAnalysisContactsTest(int argc, char * argv[])
{
  Backend backend;
  if (int status = StartTest(argc, argv, 2, "backend(cpu|cuda|auto)", 1, backend); status >= 0)
  {
    return status;
  }
  const bool ok = Random(backend) && Refusals(backend);
  std::cout << (ok ? "the touching labels equal their count over every neighbor pair" : "FAILED") << std::endl;
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
