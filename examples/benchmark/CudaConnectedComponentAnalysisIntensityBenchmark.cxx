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
// Mode i of examples/CudaConnectedComponentAnalysisBenchmark: intensity statistics through the filter's
// Update(), a feature image beside the input, against ITK's ConnectedComponentImageFilter →
// LabelImageToStatisticsLabelMapFilter in the same run.
#include "CudaConnectedComponentAnalysisBenchmarkImages.h"
#include "CudaConnectedComponentAnalysisUserPath.h"

#include "itkCCAEngine.h" // GetCudaDeviceCount (src/, internal: the benchmark builds with it)
#include "itkConnectedComponentImageFilter.h"
#include "itkCudaConnectedComponentAnalysisImageFilter.h"
#include "itkLabelImageToStatisticsLabelMapFilter.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>

namespace
{
using Backend = itk::CudaConnectedComponentAnalysisEnums::Backend;

/** Per density (3D size3D³, g = 1, 6-connectivity, a float feature image): the filter's labels alone; labels plus
 * the intensity table (GenerateLabelMapOff, GetIntensityFeatureTable()); labels plus the LabelMap of
 * StatisticsLabelObjects; on the CUDA and the CPU engine; then ITK's two filters. Seconds, best of the runs. */
void
RunIntensity(const UserPathOptions & o, bool gpu, nlohmann::json & out)
{
  using ImageType = itk::Image<unsigned char, 3>;
  using FeatureType = itk::Image<float, 3>;
  using LabelType = itk::Image<unsigned int, 3>;
  using MapType = itk::LabelMap<itk::StatisticsLabelObject<unsigned int, 3>>;
  using FilterType = itk::CudaConnectedComponentAnalysisImageFilter<ImageType, LabelType, ImageType, MapType>;
  std::cout << "\nIntensity statistics, 3D " << o.size3D
            << "^3, 6-connectivity, g = 1, float feature image, seconds (labels; + table; + LabelMap):\n"
            << std::left << std::setw(6) << "d" << std::setw(11) << "objects" << std::setw(11) << "CUDA lab"
            << std::setw(11) << "CUDA +tab" << std::setw(11) << "CUDA +map" << std::setw(11) << "CPU lab"
            << std::setw(11) << "CPU +tab" << std::setw(11) << "CPU +map" << std::setw(11) << "ITK CC"
            << std::setw(11) << "ITK stats" << std::setw(12) << "ITK/CUDAtab" << std::setw(12) << "ITK/CUDAmap"
            << "\n";
  auto feature = FeatureType::New();
  feature->SetRegions(FeatureType::SizeType{ { o.size3D, o.size3D, o.size3D } });
  feature->Allocate();
  {
    std::mt19937                          rng(4242);
    std::uniform_real_distribution<float> uniform(-1000.0f, 3000.0f);
    float *                               p = feature->GetBufferPointer();
    for (itk::SizeValueType i = 0; i < feature->GetBufferedRegion().GetNumberOfPixels(); ++i)
    {
      p[i] = uniform(rng);
    }
  }
  std::uint32_t seed = 9300;
  for (double density : o.densities)
  {
    auto               image = MakeBenchmarkImage<3>(o.size3D, density, 1, ++seed);
    nlohmann::json     row = { { "size", o.size3D }, { "density", density } };
    itk::SizeValueType objects = 0;
    // what: 0 labels only, 1 + the intensity table (no LabelMap), 2 + the LabelMap of StatisticsLabelObjects
    auto ours = [&](Backend backend, int what, const char * name) {
      double best = 1e300;
      for (int i = 0; i < o.warmup + o.runs; ++i)
      {
        auto filter = FilterType::New();
        filter->SetInput(image);
        filter->SetBackend(backend);
        filter->SetGenerateLabelMap(what == 2);
        if (what > 0)
        {
          filter->SetFeatureImage(feature);
        }
        const double s = SecondsOf([&]() {
          filter->Update();
          if (what == 1)
          {
            const vnl_matrix<double> table = filter->GetIntensityFeatureTable();
            if (table.rows() != filter->GetObjectCount())
            {
              throw std::runtime_error("intensity table rows");
            }
          }
        });
        if (i >= o.warmup && s < best)
        {
          best = s;
          const auto & split = filter->GetTimeSplit();
          row[std::string(name) + "_split"] = { { "analyze_s", split.Analyze },
                                                { "write_labels_s", split.WriteLabels },
                                                { "export_runs_s", split.ExportRuns },
                                                { "build_labelmap_s", split.BuildLabelMap } };
        }
        objects = filter->GetObjectCount();
      }
      row[std::string(name) + "_s"] = best;
      return best;
    };
    double cuda[3] = { 0, 0, 0 };
    if (gpu)
    {
      cuda[0] = ours(Backend::CUDA, 0, "cuda_labels");
      cuda[1] = ours(Backend::CUDA, 1, "cuda_table");
      cuda[2] = ours(Backend::CUDA, 2, "cuda_labelmap");
    }
    const double cpu[3] = { ours(Backend::CPU, 0, "cpu_labels"),
                            ours(Backend::CPU, 1, "cpu_table"),
                            ours(Backend::CPU, 2, "cpu_labelmap") };
    row["objects"] = objects;
    double itkLabel = 1e300, itkStatistics = 1e300;
    for (int i = 0; i < o.cpuRuns; ++i)
    {
      auto cc = itk::ConnectedComponentImageFilter<ImageType, LabelType>::New();
      cc->SetInput(image);
      auto statistics = itk::LabelImageToStatisticsLabelMapFilter<LabelType, FeatureType, MapType>::New();
      statistics->SetInput(cc->GetOutput());
      statistics->SetFeatureImage(feature);
      statistics->SetComputePerimeter(false);
      itkLabel = std::min(itkLabel, SecondsOf([&]() { cc->Update(); }));
      itkStatistics = std::min(itkStatistics, SecondsOf([&]() { statistics->Update(); }));
    }
    row["itk_connected_components_s"] = itkLabel;
    row["itk_statistics_label_map_s"] = itkStatistics;
    out["intensity"].push_back(row);
    const double itk = itkLabel + itkStatistics;
    std::cout << std::setw(6) << density << std::setw(11) << objects << std::setw(11) << cuda[0] << std::setw(11)
              << cuda[1] << std::setw(11) << cuda[2] << std::setw(11) << cpu[0] << std::setw(11) << cpu[1]
              << std::setw(11) << cpu[2] << std::setw(11) << itkLabel << std::setw(11) << itkStatistics
              << std::setw(12) << (gpu ? itk / cuda[1] : 0.0) << std::setw(12) << (gpu ? itk / cuda[2] : 0.0)
              << std::endl;
  }
}
} // namespace

void
RunIntensityBenchmark(const UserPathOptions & o, nlohmann::json & report)
{
  std::string reason;
  const bool  gpu = itk::cca::GetCudaDeviceCount(&reason) > 0;
  report["intensity"] = nlohmann::json::array();
  RunIntensity(o, gpu, report);
}
