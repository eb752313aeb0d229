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
// Throughput benchmark, the method of Lemaitre et al. 2021 (ICASSP) §4: square MT19937 random images
// (default 8192^2) of density 0..100 % in 10 % steps at granularity g in {1, 4, 16}, plus the all-ones
// image; Gpix/s = pixels / time, over the densities of each g both as the mean of the images' rates and as total
// pixels over total time (the paper's Table 1: docs/performance.md). Modes, side by side in one run:
//  a  CUDA, device-resident: labeling + features, features left on the device (CUDA events); FLSL+CD,
//     and with --variants 1 also naive (a-naive), FLSL (a-flsl) and FLSL+OTF (a-otf)
//  b  CUDA, device-resident: a + the label image written on the device (CUDA events)
//  c  CUDA end to end through the ITK filter: host image in, label image + LabelMap out (wall clock)
//  d  ITK's CPU pipeline: ConnectedComponentImageFilter + LabelImageToShapeLabelMapFilter (defaults,
//     all threads), and d0 ConnectedComponentImageFilter alone (wall clock)
//  e  our CPU engine through the ITK filter, label image + LabelMap out (wall clock)
//  t  host<->device copy rates (GB/s) of an image-sized label buffer: pinned (the PCIe ceiling),
//     pageable, and the engine's staged path from and to an ordinary host buffer
//  s  where the filter's time goes (engine, label image, runs, LabelMap build) on a g=4 d=50 % image
//     and on a 2-component image, for each engine that can run
//  u  the user's path (CudaConnectedComponentAnalysisUserPath.h): Update() on the hard densities d = 0.2 ..
//     0.8, 2D (--size, default 8192) and 3D (--size3d, default 512), CUDA engine, CPU engine and ITK's
//     pipeline in the same run, with time split, peak RSS, LabelMap bytes per object and the PCIe bound
//  r  post-processing: 3D --size3d images, label image with and without MinimumObjectSize + SortByObjectSize,
//     against ITK's ConnectedComponentImageFilter -> RelabelComponentImageFilter in the same run
//  l  the per-call cost on small images (CudaConnectedComponentAnalysisLatency.h): the facade on each engine
//     and the filter with each output, median and p90 of many calls (--latency-2d, --latency-3d, --latency-calls)
// Each figure: warm-up runs, then the minimum (the paper's statistic) and the median of the timed runs.
//
// Usage: CudaConnectedComponentAnalysisBenchmark [--size N] [--runs R] [--cpu-runs R] [--warmup W] [--variants 0|1]
//          [--labelmap 0|1 (modes c, e: also the LabelMap; default 1)] [--series all|g1|g4|g16|ones] [--densities
//          0.1,0.5,...]
//          [--modes abcdetsu] [--connectivity 4|8|both] [--cpu-connectivity 4|8|both] [--json file]
//          mode u: [--size3d N] [--dimensions 2,3] [--granularities 1,4,16] [--itk 0|1] [--cpu-engine 0|1]
//          (its densities: --densities, default 0.2,0.4,0.6,0.8; --runs, --cpu-runs, --warmup as above)
#include "CudaConnectedComponentAnalysisBenchmarkImages.h"
#include "CudaConnectedComponentAnalysisBenchmarkOptions.h"
#include "CudaConnectedComponentAnalysisUserPath.h"
#include "itkCCABenchmark.h"
#include "itkConnectedComponentImageFilter.h"
#include "itkCudaConnectedComponentAnalysisImageFilter.h"
#include "itkLabelImageToShapeLabelMapFilter.h"
#include "itkMultiThreaderBase.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <ctime>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>

namespace
{
using BinaryImageType = itk::Image<unsigned char, 2>;
using LabelImageType = itk::Image<unsigned int, 2>;


/** The paper's images: blocks of g x g pixels set with probability `density`. */
BinaryImageType::Pointer
MakeImage(unsigned size, double density, unsigned g, std::uint32_t seed)
{
  return MakeBenchmarkImage<2>(size, density, g, seed);
}

struct Stats
{
  double minMs = 0;
  double medianMs = 0;
};

Stats
Summarize(std::vector<double> ms)
{
  std::sort(ms.begin(), ms.end());
  Stats s;
  s.minMs = ms.front();
  s.medianMs = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  return s;
}

std::vector<double>
TimeWallClock(int warmup, int runs, const std::function<void()> & f)
{
  for (int i = 0; i < warmup; ++i)
  {
    f();
  }
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i)
  {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return ms;
}

bool
WantsConnectivity(const std::string & setting, bool fully)
{
  return setting == "both" || (setting == "8") == fully;
}
} // namespace

int
Benchmark(int argc, char * argv[]);


int
main(int argc, char * argv[])
{
  try
  {
    return Benchmark(argc, argv);
  }
  catch (const std::exception & e)
  {
    std::cerr << "Error: " << e.what() << std::endl;
    return EXIT_FAILURE;
  }
}

int
Benchmark(int argc, char * argv[])
{
  itk::cca::RegisterDirectAlgorithms(); // the seed papers' algorithms (the research library)
  Options            opt;
  UserPathOptions    userPath;
  std::ostringstream command;
  if (const int exitCode = ParseBenchmarkOptions(argc, argv, opt, userPath, command); exitCode >= 0)
  {
    return exitCode;
  }
  auto has = [&opt](char m) { return opt.modes.find(m) != std::string::npos; };

  std::string reason;
  const bool  gpu = itk::cca::GetCudaDeviceCount(&reason) > 0;
  if (!gpu && (has('a') || has('b') || has('c') || has('t')))
  {
    std::cout << "No CUDA device (" << reason << "): modes a, b, c, t skipped." << std::endl;
  }
  const unsigned threads = itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads();

  nlohmann::json report;
  report["command"] = command.str();
  report["size"] = opt.size;
  report["runs"] = opt.runs;
  report["cpu_runs"] = opt.cpuRuns;
  report["warmup"] = opt.warmup;
  report["labelmap_in_c_e"] = opt.labelMap;
  report["cpu_threads"] = threads;
  report["cuda_engine_compiled"] = itk::cca::IsCudaEngineCompiled();
  report["device"] = gpu ? "" : ("none: " + reason);
  report["results"] = nlohmann::json::array();

  const double pixels = static_cast<double>(opt.size) * opt.size;
  // (mode, connectivity, g) -> Gpix/s of each density, from the minimum and the median time
  std::map<std::string, std::vector<double>> gpixMin, gpixMedian;

  struct Series
  {
    unsigned g;
    double   density;
  };
  std::vector<Series> series;
  for (unsigned g : { 1u, 4u, 16u })
  {
    for (int step = 0; step <= 10; ++step)
    {
      series.push_back({ g, step / 10.0 });
    }
  }
  series.push_back({ 0u, 1.0 }); // all ones

  std::uint32_t seed = 2021;
  const bool    sweep = has('a') || has('b') || has('c') || has('d') || has('e');
  for (const auto & s : series)
  {
    if (!sweep)
    {
      break;
    }
    const bool        allOnes = s.g == 0;
    const std::string gName = allOnes ? "ones" : ("g" + std::to_string(s.g));
    ++seed;
    if (opt.series != "all" && opt.series != gName)
    {
      continue;
    }
    if (!allOnes && !opt.densities.empty() && std::none_of(opt.densities.begin(), opt.densities.end(), [&s](double d) {
          return std::abs(d - s.density) < 1e-9;
        }))
    {
      continue;
    }
    auto image = MakeImage(opt.size, s.density, allOnes ? 1 : s.g, seed);
    for (bool fully : { false, true })
    {
      const std::string conn = fully ? "8" : "4";
      auto              record = [&](const std::string & mode, const std::vector<double> & ms, std::uint64_t objects) {
        const Stats st = Summarize(ms);
        std::cerr << "  mode " << mode << " conn " << conn << " " << gName << " d=" << s.density << ": min " << st.minMs
                  << " ms, median " << st.medianMs << " ms, " << objects << " objects" << std::endl;
        const std::string key = mode + "|" + conn + "|" + gName;
        gpixMin[key].push_back(pixels / (st.minMs * 1e6));
        gpixMedian[key].push_back(pixels / (st.medianMs * 1e6));
        report["results"].push_back({ { "mode", mode },
                                      { "connectivity", std::stoi(conn) },
                                      { "granularity", gName },
                                      { "density", s.density },
                                      { "objects", objects },
                                      { "min_ms", st.minMs },
                                      { "median_ms", st.medianMs },
                                      { "runs_ms", ms } });
      };

      if (gpu && WantsConnectivity(opt.connectivity, fully) && (has('a') || has('b')))
      {
        itk::cca::Request request;
        request.size = { { opt.size, opt.size, 1 } };
        request.connectivity = itk::cca::Connectivity::FromFullyConnected(fully);
        request.input = image->GetBufferPointer();
        request.inputKind = itk::cca::ScalarKind::UInt8;
        const auto t = itk::cca::BenchmarkCudaDeviceResident(request, 0, opt.warmup, opt.runs);
        report["device"] = t.device;
        if (has('a'))
          record("a", t.featuresMs, t.components);
        if (has('b'))
          record("b", t.featuresAndLabelsMs, t.components);
        if (has('a') && opt.variants)
        {
          for (auto [algorithm, name] : { std::pair{ itk::cca::FeatureAlgorithm::PixelAtomics, "a-naive" },
                                          std::pair{ itk::cca::FeatureAlgorithm::RunAtomics, "a-flsl" },
                                          std::pair{ itk::cca::FeatureAlgorithm::OnTheFlyMerge, "a-otf" } })
          {
            const auto v = itk::cca::BenchmarkCudaDeviceResident(request, 0, opt.warmup, opt.runs, algorithm);
            record(name, v.featuresMs, v.components);
          }
        }
        // Beside the direct algorithms: our labeling path without the feature stage (runs, merge, numbering,
        // label image), the labels-only counterpart of mode b.
        if (has('a') && !opt.direct.empty())
        {
          const auto v = itk::cca::BenchmarkCudaDeviceResident(
            request, 0, opt.warmup, opt.runs, itk::cca::FeatureAlgorithm::LabelsOnly);
          record("ccl-ours", v.featuresAndLabelsMs, v.components);
        }
        // The seeds' direct algorithms at their own connectivity: their CCA (features, as mode a times
        // ours), their CCL in their own numbering, and with the raster-order relabel that makes it ours.
        for (const auto & name : has('a') ? opt.direct : std::vector<std::string>{})
        {
          if (itk::cca::DirectAlgorithmFullyConnected(name) != fully)
          {
            continue;
          }
          const auto v = itk::cca::BenchmarkDirectAlgorithm(
            name, image->GetBufferPointer(), opt.size, opt.size, 0, opt.warmup, opt.runs, false);
          record("ccl-" + name, v.labelsMs, v.components);
          record("ccl-" + name + "-raster", v.labelsInRasterOrderMs, v.components);
          if (v.computesFeatures)
          {
            record("a-" + name, v.featuresMs, v.components);
          }
        }
      }
      if (gpu && has('c') && WantsConnectivity(opt.cpuConnectivity, fully))
      {
        auto filter = itk::CudaConnectedComponentAnalysisImageFilter<BinaryImageType, LabelImageType>::New();
        filter->SetInput(image);
        filter->SetFullyConnected(fully);
        filter->SetBackend(itk::CudaConnectedComponentAnalysisEnums::Backend::CUDA);
        filter->SetGenerateLabelMap(opt.labelMap);
        const auto ms = TimeWallClock(opt.warmup, opt.cpuRuns, [&] {
          filter->Modified();
          filter->Update();
        });
        record("c", ms, filter->GetObjectCount());
      }
      if (has('d') && WantsConnectivity(opt.cpuConnectivity, fully))
      {
        auto cc = itk::ConnectedComponentImageFilter<BinaryImageType, LabelImageType>::New();
        cc->SetInput(image);
        cc->SetFullyConnected(fully);
        auto shape = itk::LabelImageToShapeLabelMapFilter<LabelImageType>::New();
        shape->SetInput(cc->GetOutput());
        const auto ms0 = TimeWallClock(opt.warmup, opt.cpuRuns, [&] {
          cc->Modified();
          cc->Update();
        });
        record("d0", ms0, cc->GetObjectCount());
        const auto ms = TimeWallClock(opt.warmup, opt.cpuRuns, [&] {
          cc->Modified();
          shape->Update();
        });
        record("d", ms, cc->GetObjectCount());
      }
      if (has('e') && WantsConnectivity(opt.cpuConnectivity, fully))
      {
        auto filter = itk::CudaConnectedComponentAnalysisImageFilter<BinaryImageType, LabelImageType>::New();
        filter->SetInput(image);
        filter->SetFullyConnected(fully);
        filter->SetBackend(itk::CudaConnectedComponentAnalysisEnums::Backend::CPU);
        filter->SetGenerateLabelMap(opt.labelMap);
        const auto ms = TimeWallClock(opt.warmup, opt.cpuRuns, [&] {
          filter->Modified();
          filter->Update();
        });
        record("e", ms, filter->GetObjectCount());
      }
    }
    std::cerr << "done " << gName << " d=" << s.density << std::endl;
  }

  if (has('t') && gpu)
  {
    // The size of the label image (32-bit labels), the largest transfer of mode c.
    const std::uint64_t bytes = static_cast<std::uint64_t>(opt.size) * opt.size * sizeof(LabelImageType::PixelType);
    const auto          t = itk::cca::BenchmarkCudaTransfers(0, bytes, opt.runs);
    report["device"] = t.device;
    std::cout << "\nHost<->device copies of " << bytes / 1e6 << " MB, GB/s (best of " << opt.runs << ")\n"
              << std::left << std::setw(34) << "" << std::setw(14) << "to device" << std::setw(14) << "to host"
              << "\n";
    auto row = [](const std::string & name, double toDevice, double toHost) {
      std::cout << std::setw(34) << name << std::setw(14) << toDevice << std::setw(14) << toHost << "\n";
    };
    row("pinned host memory (ceiling)", t.pinnedToDevice, t.pinnedToHost);
    row("pageable host memory", t.pageableToDevice, t.pageableToHost);
    row("engine path (pinned staging)", t.stagedToDevice, t.stagedToHost);
    row("engine path / pinned, %", 100 * t.stagedToDevice / t.pinnedToDevice, 100 * t.stagedToHost / t.pinnedToHost);
    report["transfers"] = { { "bytes", bytes },
                            { "pinned_to_device_gb_s", t.pinnedToDevice },
                            { "pinned_to_host_gb_s", t.pinnedToHost },
                            { "pageable_to_device_gb_s", t.pageableToDevice },
                            { "pageable_to_host_gb_s", t.pageableToHost },
                            { "staged_to_device_gb_s", t.stagedToDevice },
                            { "staged_to_host_gb_s", t.stagedToHost } };
  }

  if (has('s'))
  {
    std::cout << "\nTime split of the filter (label image + LabelMap with perimeter), " << opt.size << "^2, seconds\n";
    std::cout << std::left << std::setw(28) << "image" << std::setw(8) << "engine" << std::setw(10) << "objects"
              << std::setw(12) << "analyze" << std::setw(12) << "labels" << std::setw(12) << "runs" << std::setw(12)
              << "labelmap" << std::setw(12) << "clear" << std::setw(12) << "total"
              << "\n";
    auto twoComponents = BinaryImageType::New();
    twoComponents->SetRegions(BinaryImageType::SizeType{ { opt.size, opt.size } });
    twoComponents->Allocate();
    twoComponents->FillBuffer(0);
    for (unsigned y = 0; y < opt.size; ++y)
    {
      for (unsigned x = 0; x < opt.size; ++x)
      {
        // two filled discs
        const double dx1 = x - opt.size * 0.3, dy1 = y - opt.size * 0.3, dx2 = x - opt.size * 0.72,
                     dy2 = y - opt.size * 0.7;
        const double r = opt.size * 0.2;
        if (dx1 * dx1 + dy1 * dy1 < r * r || dx2 * dx2 + dy2 * dy2 < r * r)
        {
          twoComponents->SetPixel({ { x, y } }, 1);
        }
      }
    }
    const std::vector<std::pair<std::string, BinaryImageType::Pointer>> images = {
      { "g=4 d=50%", MakeImage(opt.size, 0.5, 4, 4242) }, { "2 components (discs)", twoComponents }
    };
    for (const auto & [name, image] : images)
    {
      for (auto backend : { itk::CudaConnectedComponentAnalysisEnums::Backend::CUDA,
                            itk::CudaConnectedComponentAnalysisEnums::Backend::CPU })
      {
        if (backend == itk::CudaConnectedComponentAnalysisEnums::Backend::CUDA && !gpu)
        {
          continue;
        }
        auto filter = itk::CudaConnectedComponentAnalysisImageFilter<BinaryImageType, LabelImageType>::New();
        filter->SetInput(image);
        filter->SetBackend(backend);
        std::vector<double>                                                                        total;
        itk::CudaConnectedComponentAnalysisImageFilter<BinaryImageType, LabelImageType>::TimeSplit best;
        double                                                                                     bestTotal = 1e300;
        for (int i = 0; i < opt.warmup + std::max(1, opt.cpuRuns); ++i)
        {
          filter->Modified();
          const auto start = std::chrono::steady_clock::now();
          filter->Update();
          const double sum = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          const auto & t = filter->GetTimeSplit();
          if (i >= opt.warmup && sum < bestTotal)
          {
            bestTotal = sum;
            best = t;
          }
        }
        const std::string engineName = itk::CudaConnectedComponentAnalysisEnums::BackendName(backend);
        std::cout << std::setw(28) << name << std::setw(8) << engineName << std::setw(10) << filter->GetObjectCount()
                  << std::setw(12) << best.Analyze << std::setw(12) << best.WriteLabels << std::setw(12)
                  << best.ExportRuns << std::setw(12) << best.BuildLabelMap << std::setw(12) << best.ClearLabelMap
                  << std::setw(12) << bestTotal << "\n";
        report["time_split"].push_back({ { "image", name },
                                         { "engine", engineName },
                                         { "total_s", bestTotal },
                                         { "clear_labelmap_s", best.ClearLabelMap },
                                         { "objects", filter->GetObjectCount() },
                                         { "analyze_s", best.Analyze },
                                         { "write_labels_s", best.WriteLabels },
                                         { "export_runs_s", best.ExportRuns },
                                         { "build_labelmap_s", best.BuildLabelMap } });
      }
    }
  }

  const std::string device = report.contains("device") ? report["device"].get<std::string>() : std::string();
  report["summary"] = PrintSweepTable(gpixMin, gpixMedian, opt.direct, opt.size, device, threads, sweep);
  if (has('u'))
  {
    RunUserPathBenchmark(userPath, report);
  }
  if (has('r'))
  {
    RunPostProcessingBenchmark(userPath, report);
  }
  if (has('i'))
  {
    RunIntensityBenchmark(userPath, report);
  }
  if (gpu && !opt.directImages.empty())
  {
    RunDirectOnImages(opt.directImages, opt.direct, opt.warmup, opt.runs, report);
  }
  if (has('l'))
  {
    RunLatencyBenchmark(opt.latency, report);
  }
  std::ofstream(opt.json) << report.dump(1) << std::endl;
  std::cout << "JSON: " << opt.json << std::endl;
  return EXIT_SUCCESS;
}
