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
// Mode u of the benchmark (see the header): what a user's Update() costs, against ITK's pipeline.
#include "CudaConnectedComponentAnalysisUserPath.h"
#include "CudaConnectedComponentAnalysisBenchmarkImages.h"

#include "itkCCABenchmark.h"
#include "itkConnectedComponentImageFilter.h"
#include "itkCudaConnectedComponentAnalysisImageFilter.h"
#include "itkLabelImageToShapeLabelMapFilter.h"
#include "itkMultiThreaderBase.h"
#include "itkRelabelComponentImageFilter.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#if defined(__GLIBC__)
#  include <malloc.h>
#endif
#if defined(__linux__)
#  include <sys/resource.h>
#endif

namespace
{
using Backend = itk::CudaConnectedComponentAnalysisEnums::Backend;

/** Resident set size now and its peak since the last ResetPeak(), in bytes (Linux; 0 elsewhere). */
struct Memory
{
  static double
  Read(const char * key)
  {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
    {
      if (line.rfind(key, 0) == 0)
      {
        return std::stod(line.substr(std::string(key).size())) * 1024.0;
      }
    }
    return 0.0;
  }
  static double
  Resident()
  {
    return Read("VmRSS:");
  }
  static double
  Peak()
  {
    return Read("VmHWM:");
  }
  /** Linux resets VmHWM to the current RSS on "5" written to clear_refs. Freed heap memory is first given
   * back to the system, so that what the next update allocates shows in the RSS instead of reusing it. */
  static void
  ResetPeak()
  {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
    std::ofstream("/proc/self/clear_refs") << "5";
  }
};

/** CPU time and page faults of the whole process (every thread) while `f` runs: where the host's time goes
 * (user: our code and ITK's; system: mostly the kernel giving the heap fresh pages). */
nlohmann::json
ResourcesOf(const std::function<void()> & f)
{
#if defined(__linux__)
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  f();
  getrusage(RUSAGE_SELF, &after);
  auto seconds = [](const timeval & a, const timeval & b) {
    return static_cast<double>(b.tv_sec - a.tv_sec) + 1e-6 * static_cast<double>(b.tv_usec - a.tv_usec);
  };
  return { { "user_cpu_s", seconds(before.ru_utime, after.ru_utime) },
           { "system_cpu_s", seconds(before.ru_stime, after.ru_stime) },
           { "minor_page_faults", after.ru_minflt - before.ru_minflt } };
#else
  f();
  return nlohmann::json::object();
#endif
}

struct Timed
{
  double         seconds = 1e300; ///< best of the timed runs
  std::uint64_t  objects = 0;
  double         peakExtraBytes = 0; ///< peak RSS during the update minus RSS before it
  double         labelMapBytes = 0;  ///< RSS held after the update minus before (outputs kept)
  nlohmann::json split;
  nlohmann::json resources; ///< ResourcesOf() the update
};

template <unsigned D>
Timed
OurFilter(const itk::Image<unsigned char, D> * image, Backend backend, bool fully, bool labelMap, int warmup, int runs,
          unsigned workUnits)
{
  using FilterType =
    itk::CudaConnectedComponentAnalysisImageFilter<itk::Image<unsigned char, D>, itk::Image<unsigned int, D>>;
  Timed t;
  for (int i = 0; i < warmup + runs; ++i)
  {
    // A new filter each time, as a user's script makes one: no previous LabelMap to empty.
    auto filter = FilterType::New();
    filter->SetInput(image);
    filter->SetBackend(backend);
    filter->SetFullyConnected(fully);
    filter->SetGenerateLabelMap(labelMap);
    if (workUnits != 0)
    {
      filter->SetNumberOfWorkUnits(workUnits);
    }
    Memory::ResetPeak();
    const double   before = Memory::Resident();
    double         s = 0;
    nlohmann::json resources = ResourcesOf([&]() { s = SecondsOf([&]() { filter->Update(); }); });
    const double   peak = Memory::Peak() - before;
    const double   held = Memory::Resident() - before;
    if (i >= warmup && s < t.seconds)
    {
      const auto & split = filter->GetTimeSplit();
      t.seconds = s;
      t.objects = filter->GetObjectCount();
      t.peakExtraBytes = peak;
      t.labelMapBytes = held;
      t.resources = resources;
      t.split = { { "clear_labelmap_s", split.ClearLabelMap },
                  { "analyze_s", split.Analyze },
                  { "write_labels_s", split.WriteLabels },
                  { "export_runs_s", split.ExportRuns },
                  { "build_labelmap_s", split.BuildLabelMap } };
    }
  }
  return t;
}

template <unsigned D>
Timed
ITKPipeline(const itk::Image<unsigned char, D> * image, bool fully, int runs)
{
  using LabelImageType = itk::Image<unsigned int, D>;
  using MapType = itk::LabelMap<itk::ShapeLabelObject<unsigned int, D>>;
  Timed t;
  for (int i = 0; i < runs; ++i)
  {
    auto cc = itk::ConnectedComponentImageFilter<itk::Image<unsigned char, D>, LabelImageType>::New();
    cc->SetInput(image);
    cc->SetFullyConnected(fully);
    auto shape = itk::LabelImageToShapeLabelMapFilter<LabelImageType, MapType>::New();
    shape->SetInput(cc->GetOutput());
    Memory::ResetPeak();
    const double   before = Memory::Resident();
    double         labelSeconds = 0;
    double         s = 0;
    nlohmann::json resources = ResourcesOf([&]() {
      s = SecondsOf([&]() {
        labelSeconds = SecondsOf([&]() { cc->Update(); });
        shape->Update();
      });
    });
    if (s < t.seconds)
    {
      t.seconds = s;
      t.objects = shape->GetOutput()->GetNumberOfLabelObjects();
      t.peakExtraBytes = Memory::Peak() - before;
      t.labelMapBytes = Memory::Resident() - before;
      t.resources = resources;
      t.split = { { "connected_components_s", labelSeconds }, { "shape_label_map_s", s - labelSeconds } };
    }
  }
  return t;
}

template <unsigned D>
void
RunDimension(const UserPathOptions & o, bool gpu, const itk::cca::TransferRates & rates, nlohmann::json & out)
{
  const unsigned side = D == 2 ? o.size2D : o.size3D;
  double         pixels = 1;
  for (unsigned d = 0; d < D; ++d)
  {
    pixels *= side;
  }
  std::uint32_t seed = 7000 + D;
  for (bool fully : { false, true })
  {
    if (o.connectivity != "both" && (o.connectivity == "face") == fully)
    {
      continue;
    }
    const int conn = D == 2 ? (fully ? 8 : 4) : (fully ? 26 : 6);
    for (unsigned g : o.granularities)
    {
      double total[3] = { 0, 0, 0 }; // CUDA, CPU engine, ITK
      double deviceResident = 0;
      for (double density : o.densities)
      {
        auto           image = MakeBenchmarkImage<D>(side, density, g, ++seed);
        nlohmann::json row = { { "dimension", D },   { "size", side },       { "connectivity", conn },
                               { "granularity", g }, { "density", density }, { "work_units", o.workUnits } };
        auto           record = [&row](const std::string & name, const Timed & t) {
          row[name] = { { "seconds", t.seconds },
                        { "objects", t.objects },
                        { "peak_extra_rss_bytes", t.peakExtraBytes },
                        { "held_rss_bytes", t.labelMapBytes },
                        { "split", t.split },
                        { "resources", t.resources } };
        };
        if (gpu)
        {
          const Timed cuda =
            OurFilter<D>(image.GetPointer(), Backend::CUDA, fully, true, o.warmup, o.runs, o.workUnits);
          record("cuda", cuda);
          total[0] += cuda.seconds;
          itk::cca::Request request;
          request.dimension = D;
          request.size = { { side, side, D > 2 ? side : 1 } };
          request.connectivity = itk::cca::Connectivity::FromFullyConnected(fully);
          request.input = image->GetBufferPointer();
          request.inputKind = itk::cca::ScalarKind::UInt8;
          const auto   resident = itk::cca::BenchmarkCudaDeviceResident(request, 0, o.warmup, std::max(3, o.runs));
          const double ms = *std::min_element(resident.featuresAndLabelsMs.begin(), resident.featuresAndLabelsMs.end());
          row["device_resident_ms"] = ms;
          deviceResident += ms / 1e3;
        }
        if (o.cpuEngine)
        {
          const Timed cpu = OurFilter<D>(image.GetPointer(), Backend::CPU, fully, true, 0, o.cpuRuns, o.workUnits);
          record("cpu_engine", cpu);
          total[1] += cpu.seconds;
        }
        if (o.itk)
        {
          const Timed reference = ITKPipeline<D>(image.GetPointer(), fully, o.cpuRuns);
          record("itk", reference);
          total[2] += reference.seconds;
        }
        std::cerr << "  " << D << "D conn " << conn << " g" << g << " d=" << density << ": " << row.dump() << std::endl;
        out["rows"].push_back(row);
      }
      const double   n = pixels * o.densities.size();
      nlohmann::json summary = { { "dimension", D }, { "connectivity", conn }, { "granularity", g } };
      std::cout << std::left << std::setw(4) << D << std::setw(6) << conn << std::setw(5) << g;
      auto column = [&](const char * name, double seconds) {
        if (seconds > 0)
        {
          summary[std::string(name) + "_mpix_s"] = n / seconds / 1e6;
          std::cout << std::setw(14) << n / seconds / 1e6;
        }
        else
        {
          std::cout << std::setw(14) << "-";
        }
      };
      column("cuda", total[0]);
      column("cpu_engine", total[1]);
      column("itk", total[2]);
      column("paper_metric_device_resident", deviceResident);
      const double ratioCuda = total[0] > 0 && total[2] > 0 ? total[2] / total[0] : 0;
      const double ratioCpu = total[1] > 0 && total[2] > 0 ? total[2] / total[1] : 0;
      summary["cuda_vs_itk"] = ratioCuda;
      summary["cpu_engine_vs_itk"] = ratioCpu;
      std::cout << std::setw(10) << ratioCuda << std::setw(10) << ratioCpu << "\n";
      out["summary"].push_back(summary);
    }
  }

  // The label image alone (GenerateLabelMapOff) against the PCIe bound, where little else is to do.
  if (gpu)
  {
    for (unsigned g : { 16u, 0u })
    {
      auto         image = g ? MakeBenchmarkImage<D>(side, 0.5, g, 99) : MakeBenchmarkImage<D>(side, 1.0, 1, 99);
      const Timed  t = OurFilter<D>(image.GetPointer(), Backend::CUDA, false, false, o.warmup, o.runs, o.workUnits);
      const double inBytes = pixels * sizeof(unsigned char);
      const double labelBytes = pixels * sizeof(unsigned int);
      const double bound = inBytes / (rates.pinnedToDevice * 1e9) + labelBytes / (rates.pinnedToHost * 1e9);
      const std::string name = g ? "g16 d=0.5" : "all ones";
      std::cout << D << "D label image only, " << name << ": " << t.seconds * 1e3 << " ms, PCIe bound " << bound * 1e3
                << " ms: " << 100 * bound / t.seconds << " % of the bound; split " << t.split.dump() << "\n";
      out["label_image_only"].push_back({ { "dimension", D },
                                          { "image", name },
                                          { "seconds", t.seconds },
                                          { "pcie_bound_seconds", bound },
                                          { "fraction_of_bound", bound / t.seconds },
                                          { "split", t.split } });
    }
  }
}
} // namespace

void
RunUserPathBenchmark(const UserPathOptions & o, nlohmann::json & report)
{
  std::string             reason;
  const bool              gpu = itk::cca::GetCudaDeviceCount(&reason) > 0;
  nlohmann::json          out = { { "threads", itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads() },
                                  { "densities", o.densities },
                                  { "granularities", o.granularities },
                                  { "runs", o.runs },
                                  { "cpu_runs", o.cpuRuns },
                                  { "rows", nlohmann::json::array() },
                                  { "summary", nlohmann::json::array() } };
  itk::cca::TransferRates rates;
  if (gpu)
  {
    rates = itk::cca::BenchmarkCudaTransfers(0, std::uint64_t{ 256 } << 20, 5);
    out["device"] = rates.device;
    out["pinned_to_device_gb_s"] = rates.pinnedToDevice;
    out["pinned_to_host_gb_s"] = rates.pinnedToHost;
  }
  else
  {
    out["device"] = "none: " + reason;
  }
  std::cout << "\nUser's path: host image in, label image + LabelMap (perimeter) out through Update(); Mpix/s = "
               "total pixels / total time over d = ";
  for (double d : o.densities)
  {
    std::cout << d << " ";
  }
  std::cout << "(" << out["threads"] << " threads)\n"
            << std::left << std::setw(4) << "D" << std::setw(6) << "conn" << std::setw(5) << "g" << std::setw(14)
            << "CUDA" << std::setw(14) << "CPU engine" << std::setw(14) << "ITK" << std::setw(14) << "paper metric"
            << std::setw(10) << "CUDA/ITK" << std::setw(10) << "CPU/ITK"
            << "\n";
  if (o.dimensions.find('2') != std::string::npos)
  {
    RunDimension<2>(o, gpu, rates, out);
  }
  if (o.dimensions.find('3') != std::string::npos)
  {
    RunDimension<3>(o, gpu, rates, out);
  }
  report["user_path"] = out;
}
