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
// GPU-only cases (CTest label gpu; exit 77 without a device):
//  large       8192x8192 paper images against ITK, both connectivities;
//  repeat      100 runs of a dense 4096x4096 image, bit-identical labels and features;
//  outofmemory the device's memory taken first: a clear exception, then a normal run once freed;
//  variants    the benchmark's feature algorithms (naive, FLSL, FLSL+OTF) give FLSL+CD's labels and
//              features, 2D and 3D, both connectivities, the paper's density x granularity sweep; the
//              labels-only variant (the benchmark's ccl-ours) the same labels, its features refused;
//  direct      the seed papers' other algorithms (BenchmarkDirectAlgorithm: BUF, HA4, HA4+OTF, HA4+CD), their
//              labels put into raster order, equal to ConnectedComponentImageFilter's (at each one's
//              connectivity) pixel for pixel, and for the CCA its label image too and its features (S, Sx, Sy,
//              box) those of ITK's labels, on the suite's random images (density x granularity, odd sizes, 1x1,
//              1xN, Nx1, all ones), run again on used buffers (4096^2 at d = 0.6: five times), identical;
//              "direct small" leaves out the large images (for compute-sanitizer).
#include "itkCCATestUtilities.h"
#include "itkCCABenchmark.h" // the research library: its feature variants and direct algorithms

#include <algorithm>
#include <map>

#ifdef CCA_TEST_WITH_CUDART
#  include <cuda_runtime.h>
#endif

namespace
{
using namespace itk;
using namespace itk::ccatest;
using UCharImage = Image<unsigned char, 2>;
using LabelImage = Image<unsigned int, 2>;
using FilterType = CudaConnectedComponentAnalysisImageFilter<UCharImage, LabelImage>;

bool
Large()
{
  bool          ok = true;
  std::uint32_t seed = 8192;
  for (unsigned g : { 1u, 4u, 16u })
  {
    for (double density : { 0.1, 0.3, 0.5, 0.6, 0.8, 1.0 })
    {
      auto image = MakeRandomImage<UCharImage>(
        UCharImage::SizeType{ { 8192, 8192 } }, density, g, ++seed, [](std::mt19937 &) { return 1; });
      for (bool fully : { false, true })
      {
        std::ostringstream what;
        what << "8192^2 g=" << g << " d=" << density << " fully=" << fully;
        const bool same = CheckAgainstITK<UCharImage, LabelImage>(image, Backend::CUDA, fully, what.str());
        std::cout << what.str() << (same ? ": identical" : ": DIFFERENT") << std::endl;
        ok = same && ok;
      }
    }
  }
  return ok;
}

bool
Repeat()
{
  auto image =
    MakeRandomImage<UCharImage>(UCharImage::SizeType{ { 4096, 4096 } }, 0.6, 1, 4096, [](std::mt19937 &) { return 1; });
  bool ok = true;
  for (bool fully : { false, true })
  {
    auto filter = FilterType::New();
    filter->SetInput(image);
    filter->SetBackend(Backend::CUDA);
    filter->SetFullyConnected(fully);
    filter->GenerateLabelMapOff(); // labels and features only: 100 LabelMaps of 400k objects would dominate
    filter->Update();
    auto first = LabelImage::New();
    first->Graft(filter->GetOutput());
    first->DisconnectPipeline();
    const auto firstFeatures = filter->GetComponentFeatures();
    int        differing = 0;
    for (int run = 1; run < 100; ++run)
    {
      filter->Modified();
      filter->Update();
      const auto & f = filter->GetComponentFeatures();
      bool         same = std::memcmp(first->GetBufferPointer(),
                              filter->GetOutput()->GetBufferPointer(),
                              sizeof(unsigned int) * 4096 * 4096) == 0 &&
                  f.size() == firstFeatures.size();
      for (std::size_t i = 0; same && i < f.size(); ++i)
      {
        same = f[i].NumberOfPixels == firstFeatures[i].NumberOfPixels &&
               f[i].BoundingBox == firstFeatures[i].BoundingBox && f[i].Centroid == firstFeatures[i].Centroid;
      }
      differing += same ? 0 : 1;
    }
    std::cout << "fully=" << fully << ": " << filter->GetObjectCount() << " objects, " << differing
              << " of 99 repeated runs differ from the first" << std::endl;
    ok = ok && differing == 0;
  }
  // and the first run was right
  return CheckAgainstITK<UCharImage, LabelImage>(image, Backend::CUDA, false, "4096^2 repeat reference") && ok;
}

bool
OutOfMemory()
{
#ifdef CCA_TEST_WITH_CUDART
  auto image =
    MakeRandomImage<UCharImage>(UCharImage::SizeType{ { 2048, 2048 } }, 0.5, 1, 7, [](std::mt19937 &) { return 1; });
  // Take nearly all of the device's memory in large blocks.
  std::vector<void *> hogs;
  for (std::size_t block = std::size_t{ 1 } << 30; block >= (std::size_t{ 1 } << 20);)
  {
    void * p = nullptr;
    if (cudaMalloc(&p, block) == cudaSuccess)
    {
      hogs.push_back(p);
    }
    else
    {
      cudaGetLastError();
      block /= 2;
    }
  }
  std::cout << "holding " << hogs.size() << " device blocks" << std::endl;
  bool threw = false;
  auto filter = FilterType::New();
  filter->SetInput(image);
  filter->SetBackend(Backend::CUDA);
  // A budget far above what is free: the engine takes the image whole, and runs out.
  filter->SetMemoryBudget(SizeValueType{ 1 } << 40);
  try
  {
    filter->Update();
  }
  catch (const ExceptionObject & e)
  {
    const std::string text = e.GetDescription();
    std::cout << "expected exception: " << text << std::endl;
    threw = text.find("out of memory") != std::string::npos;
  }
  // The default budget: with about 48 MB given back, a 4096^2 image does not fit whole (16 MB of pixels, 80 MB of
  // runs), so the engine runs out, and the image is labeled in slabs of half the rows, then a quarter, ...
  std::size_t free = 0;
  std::size_t total = 0;
  while (!hogs.empty() && cudaMemGetInfo(&free, &total) == cudaSuccess && free < (std::size_t{ 48 } << 20))
  {
    cudaFree(hogs.back());
    hogs.pop_back();
  }
  std::cout << "free for the slabs: " << (free >> 20) << " MB" << std::endl;
  const auto large =
    MakeRandomImage<UCharImage>(UCharImage::SizeType{ { 4096, 4096 } }, 0.5, 1, 8, [](std::mt19937 &) { return 1; });
  bool slabbed = false;
  try
  {
    auto inSlabs = FilterType::New();
    inSlabs->SetInput(large);
    inSlabs->GenerateLabelMapOff();
    inSlabs->SetBackend(Backend::CUDA);
    inSlabs->Update();
    auto reference = ConnectedComponentImageFilter<UCharImage, LabelImage>::New();
    reference->SetInput(large);
    reference->Update();
    std::cout << "labeled in " << inSlabs->GetNumberOfSlabs() << " slabs (" << inSlabs->GetBackendDescription() << ")"
              << std::endl;
    slabbed = inSlabs->GetNumberOfSlabs() > 1 &&
              SameImage(inSlabs->GetOutput(), reference->GetOutput(), "in slabs under the default budget");
  }
  catch (const ExceptionObject & e)
  {
    std::cerr << "in slabs: " << e.GetDescription() << std::endl;
  }
  for (void * p : hogs)
  {
    cudaFree(p);
  }
  if (!threw)
  {
    std::cerr << "no out-of-memory exception" << std::endl;
    return false;
  }
  if (!slabbed)
  {
    std::cerr << "not labeled in slabs under the default budget" << std::endl;
    return false;
  }
  // The engine recovers once memory is back.
  return CheckAgainstITK<UCharImage, LabelImage>(image, Backend::CUDA, false, "after out of memory");
#else
  std::cerr << "built without the CUDA runtime" << std::endl;
  return false;
#endif
}
/** Labels and features of one algorithm, through the engine interface. */
struct EngineResult
{
  std::uint64_t                   count = 0;
  std::vector<cca::ComponentSums> features;
  std::vector<std::uint32_t>      labels;
};

/** Whether `call` throws cca::Error with `what` in its message. */
template <typename TCall>
bool
RefusedWith(TCall call, const std::string & what)
{
  try
  {
    call();
  }
  catch (const cca::Error & e)
  {
    return std::string(e.what()).find(what) != std::string::npos;
  }
  return false;
}

/** The labels-only variant's features are refused; `featuresRefused` says whether every way to them was. */
EngineResult
RunEngine(cca::Engine & engine, cca::Request request, bool * featuresRefused = nullptr)
{
  EngineResult r;
  if (featuresRefused)
  {
    // Features asked for with the analysis are refused before any work; later, on their own.
    const std::string noFeatures = "computes no features";
    const bool        withAnalysis = RefusedWith([&] { engine.Analyze(request); }, noFeatures);
    request.keepSumsOnDevice = true;
    r.count = engine.Analyze(request);
    std::vector<std::uint64_t> pixelCounts(r.count);
    cca::BasicColumns          columns;
    columns.numberOfPixels = pixelCounts.data();
    *featuresRefused =
      withAnalysis && RefusedWith([&] { engine.GetFeatures(); }, noFeatures) &&
      RefusedWith([&] { engine.WriteBasicColumns(cca::BasicGeometry{}, columns, nullptr); }, noFeatures);
  }
  else
  {
    r.count = engine.Analyze(request);
    r.features = engine.GetFeatures();
  }
  r.labels.assign(request.NumberOfPixels(), 0xdeadbeefu); // poisoned: every pixel must be written
  cca::LabelOutput out;
  out.data = r.labels.data();
  out.kind = cca::ScalarKind::UInt32;
  out.skipValue = 0;
  engine.WriteLabels(out);
  return r;
}

bool
Variants()
{
  // The research variants measure what the paper's do: intensity and classes are refused, naming the variant.
  {
    auto                otf = cca::CreateResearchCudaEngine(0, cca::FeatureAlgorithm::OnTheFlyMerge);
    cca::Request        request;
    const unsigned char one = 1;
    request.input = &one;
    request.multiLabel = true;
    if (!RefusedWith([&] { otf->Analyze(request); }, "FLSL+CD only, not the FLSL+OTF variant"))
    {
      std::cerr << "FLSL+OTF took multi-label input" << std::endl;
      return false;
    }
  }
  std::map<cca::FeatureAlgorithm, std::unique_ptr<cca::Engine>> engines;
  for (auto algorithm : { cca::FeatureAlgorithm::ConflictDetection,
                          cca::FeatureAlgorithm::PixelAtomics,
                          cca::FeatureAlgorithm::RunAtomics,
                          cca::FeatureAlgorithm::OnTheFlyMerge,
                          cca::FeatureAlgorithm::LabelsOnly })
  {
    engines[algorithm] = cca::CreateResearchCudaEngine(0, algorithm);
  }
  bool          ok = true;
  std::uint32_t seed = 31;
  auto          check =
    [&](const unsigned char * pixels, std::array<std::uint64_t, 3> size, unsigned dimension, const std::string & what) {
      for (bool fully : { false, true })
      {
        cca::Request request;
        request.dimension = dimension;
        request.size = size;
        request.connectivity = itk::cca::Connectivity::FromFullyConnected(fully);
        request.input = pixels;
        const EngineResult reference = RunEngine(*engines[cca::FeatureAlgorithm::ConflictDetection], request);
        for (auto algorithm : { cca::FeatureAlgorithm::PixelAtomics,
                                cca::FeatureAlgorithm::RunAtomics,
                                cca::FeatureAlgorithm::OnTheFlyMerge })
        {
          const EngineResult r = RunEngine(*engines[algorithm], request);
          const bool         same =
            r.count == reference.count && r.features == reference.features && r.labels == reference.labels;
          if (!same)
          {
            std::cerr << what << " fully=" << fully << ": " << cca::FeatureAlgorithmName(algorithm)
                      << " differs from FLSL+CD (" << r.count << " vs " << reference.count << " components)"
                      << std::endl;
            ok = false;
          }
        }
        // The labeling path without features: the same labels, its features refused.
        bool               refused = false;
        const EngineResult l = RunEngine(*engines[cca::FeatureAlgorithm::LabelsOnly], request, &refused);
        if (l.count != reference.count || l.labels != reference.labels)
        {
          std::cerr << what << " fully=" << fully << ": labels only differs from FLSL+CD (" << l.count << " vs "
                    << reference.count << " components)" << std::endl;
          ok = false;
        }
        if (!refused)
        {
          std::cerr << what << " fully=" << fully << ": the labels-only variant's features were not all refused"
                    << std::endl;
          ok = false;
        }
      }
    };
  for (unsigned g : { 1u, 4u, 16u })
  {
    for (int step = 0; step <= 10; ++step)
    {
      const double density = step / 10.0;
      auto         image2 = MakeRandomImage<UCharImage>(
        UCharImage::SizeType{ { 1021, 999 } }, density, g, ++seed, [](std::mt19937 &) { return 1; });
      check(image2->GetBufferPointer(),
            { { 1021, 999, 1 } },
            2,
            "2D g=" + std::to_string(g) + " d=" + std::to_string(density));
      using Volume = Image<unsigned char, 3>;
      auto image3 = MakeRandomImage<Volume>(
        Volume::SizeType{ { 101, 67, 45 } }, density, g, ++seed, [](std::mt19937 &) { return 1; });
      check(image3->GetBufferPointer(),
            { { 101, 67, 45 } },
            3,
            "3D g=" + std::to_string(g) + " d=" + std::to_string(density));
    }
  }
  // Large images, where many threads link and move features at once (the on-the-fly merge's races):
  // around the percolation threshold, and one component over the whole image.
  for (double density : { 0.6, 1.0 })
  {
    auto image = MakeRandomImage<UCharImage>(
      UCharImage::SizeType{ { 4096, 4096 } }, density, 1, ++seed, [](std::mt19937 &) { return 1; });
    check(image->GetBufferPointer(), { { 4096, 4096, 1 } }, 2, "2D 4096^2 g=1 d=" + std::to_string(density));
  }
  std::cout << (ok ? "all variants agree with FLSL+CD" : "variants DIFFER") << std::endl;
  return ok;
}

/** One direct algorithm on one image against ConnectedComponentImageFilter (the algorithm's connectivity): the
 * CCL's labels, and for a CCA algorithm its label image and features; run `1 + repeats` times, the repeats on
 * buffers already used once (a warm-up run first), each equal to the first (the union-find races must not show). */
bool
DirectMatchesITK(const std::string & name, const UCharImage * image, const std::string & what, int repeats = 1)
{
  const auto size = image->GetLargestPossibleRegion().GetSize();
  const auto first = cca::BenchmarkDirectAlgorithm(name,
                                                   image->GetBufferPointer(),
                                                   static_cast<std::uint32_t>(size[0]),
                                                   static_cast<std::uint32_t>(size[1]),
                                                   0,
                                                   0,
                                                   1,
                                                   true);
  for (int r = 0; r < repeats; ++r)
  {
    const auto again = cca::BenchmarkDirectAlgorithm(name,
                                                     image->GetBufferPointer(),
                                                     static_cast<std::uint32_t>(size[0]),
                                                     static_cast<std::uint32_t>(size[1]),
                                                     0,
                                                     1,
                                                     1,
                                                     true);
    if (again.labels != first.labels || again.analyzedLabels != first.analyzedLabels || again.count != first.count ||
        again.sumX != first.sumX || again.sumY != first.sumY || again.minX != first.minX || again.minY != first.minY ||
        again.maxX != first.maxX || again.maxY != first.maxY)
    {
      std::cerr << name << " " << what << ": run " << r + 2 << " differs from the first" << std::endl;
      return false;
    }
  }
  using ITKType = ConnectedComponentImageFilter<UCharImage, LabelImage>;
  auto reference = ITKType::New();
  reference->SetInput(image);
  reference->SetFullyConnected(first.fullyConnected);
  reference->Update();
  const std::string label = name + " " + what;
  if (first.components != reference->GetObjectCount())
  {
    std::cerr << label << ": " << first.components << " components, ITK finds " << reference->GetObjectCount()
              << std::endl;
    return false;
  }
  const unsigned int * expected = reference->GetOutput()->GetBufferPointer();
  for (std::size_t i = 0; i < first.labels.size(); ++i)
  {
    if (first.labels[i] != expected[i] || (first.computesFeatures && first.analyzedLabels[i] != expected[i]))
    {
      std::cerr << label << ": first difference at offset " << i << ": CCL " << first.labels[i] << ", CCA "
                << (first.computesFeatures ? std::to_string(first.analyzedLabels[i]) : std::string("-")) << " vs ITK "
                << expected[i] << std::endl;
      return false;
    }
  }
  if (!first.computesFeatures)
  {
    return true;
  }
  // The CCA's features (raster order) against each ITK label's pixels counted here; both runs the same.
  const std::size_t          k = first.components;
  std::vector<std::uint64_t> count(k, 0), sumX(k, 0), sumY(k, 0);
  std::vector<std::uint32_t> minX(k, ~0u), minY(k, ~0u), maxX(k, 0), maxY(k, 0);
  for (std::uint32_t y = 0; y < size[1]; ++y)
  {
    for (std::uint32_t x = 0; x < size[0]; ++x)
    {
      const unsigned int l = expected[static_cast<std::size_t>(y) * size[0] + x];
      if (l == 0)
      {
        continue;
      }
      ++count[l - 1];
      sumX[l - 1] += x;
      sumY[l - 1] += y;
      minX[l - 1] = std::min(minX[l - 1], x);
      minY[l - 1] = std::min(minY[l - 1], y);
      maxX[l - 1] = std::max(maxX[l - 1], x);
      maxY[l - 1] = std::max(maxY[l - 1], y);
    }
  }
  const bool same = first.count == count && first.sumX == sumX && first.sumY == sumY && first.minX == minX &&
                    first.minY == minY && first.maxX == maxX && first.maxY == maxY;
  if (!same)
  {
    std::cerr << label << ": features differ from those of ITK's labels' pixels" << std::endl;
    return false;
  }
  return true;
}

/** `small`: without the 1021x999 and 4096^2 images (for compute-sanitizer's slowdown). */
bool
DirectAlgorithms(bool small)
{
  cca::RegisterDirectAlgorithms();
  const auto names = cca::DirectAlgorithmNames();
  if (names.empty())
  {
    std::cerr << "no direct algorithm registered" << std::endl;
    return false;
  }
  bool          ok = true;
  std::uint32_t seed = 2019;
  auto          random = [&](unsigned width, unsigned height, double density, unsigned g) {
    return MakeRandomImage<UCharImage>(
      UCharImage::SizeType{ { width, height } }, density, g, ++seed, [](std::mt19937 &) { return 1; });
  };
  for (const auto & name : names)
  {
    std::size_t cases = 0;
    auto        check = [&](const UCharImage * image, const std::string & what, int repeats = 1) {
      ok = DirectMatchesITK(name, image, what, repeats) && ok;
      ++cases;
    };
    for (unsigned g : { 1u, 4u, 16u })
    {
      for (int step = 0; step <= 10; ++step)
      {
        const double density = step / 10.0;
        const auto   what = "g=" + std::to_string(g) + " d=" + std::to_string(density);
        if (!small)
        {
          check(random(1021, 999, density, g), "1021x999 " + what);
        }
        check(random(64, 64, density, g), "64x64 " + what);
        check(random(131, 67, density, g), "131x67 " + what);
      }
    }
    for (double density : { 0.3, 0.6, 1.0 })
    {
      for (auto wh : { std::array<unsigned, 2>{ 1, 1 },
                       std::array<unsigned, 2>{ 1, 777 },
                       std::array<unsigned, 2>{ 777, 1 },
                       std::array<unsigned, 2>{ 2, 333 },
                       std::array<unsigned, 2>{ 333, 2 },
                       std::array<unsigned, 2>{ 3, 5 } })
      {
        check(random(wh[0], wh[1], density, 1),
              std::to_string(wh[0]) + "x" + std::to_string(wh[1]) + " d=" + std::to_string(density));
      }
    }
    // Many threads uniting at once: around the percolation threshold and one component over the whole image.
    for (double density : small ? std::vector<double>{} : std::vector<double>{ 0.6, 1.0 })
    {
      // around the percolation threshold, where races would show first: five more runs
      check(random(4096, 4096, density, 1), "4096^2 g=1 d=" + std::to_string(density), density < 1 ? 5 : 1);
    }
    std::cout << name << ": " << cases << " images checked against ITK" << std::endl;
  }
  // An unknown name is refused with the registered ones named.
  try
  {
    const unsigned char one = 1;
    cca::BenchmarkDirectAlgorithm("no-such-algorithm", &one, 1, 1, 0, 0, 1, false);
    std::cerr << "an unknown direct algorithm ran" << std::endl;
    ok = false;
  }
  catch (const cca::Error & e)
  {
    // The message names every registered algorithm.
    const std::string message = e.what();
    for (const auto & name : names)
    {
      if (message.find(name) == std::string::npos)
      {
        std::cerr << "unexpected message (no '" << name << "'): " << message << std::endl;
        ok = false;
      }
    }
  }
  std::cout << (ok ? "the direct algorithms agree with ITK" : "a direct algorithm DIFFERS") << std::endl;
  return ok;
}
} // namespace

int
itkCudaConnectedComponentAnalysisGPUTest(int argc, char * argv[])
{
  Backend backend = Backend::CPU;
  if (const int start = StartTest(argc, argv, 2, "large|repeat|outofmemory|variants|direct", 0, backend); start >= 0)
  {
    return start;
  }
  const std::string mode = argv[1];
  bool              ok = false;
  if (mode == "large")
  {
    ok = Large();
  }
  else if (mode == "repeat")
  {
    ok = Repeat();
  }
  else if (mode == "outofmemory")
  {
    ok = OutOfMemory();
  }
  else if (mode == "variants")
  {
    ok = Variants();
  }
  else if (mode == "direct")
  {
    ok = DirectAlgorithms(argc > 2 && std::string(argv[2]) == "small");
  }
  else
  {
    std::cerr << "unknown mode " << mode << std::endl;
  }
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
