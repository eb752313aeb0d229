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
// Mode r of examples/CudaConnectedComponentAnalysisBenchmark: the post-processing (MinimumObjectSize +
// SortByObjectSize) through the filter's Update(), with and without the LabelMap, against ITK's chain.
#include "CudaConnectedComponentAnalysisBenchmarkImages.h"
#include "CudaConnectedComponentAnalysisUserPath.h"

#include "itkCCAEngine.h" // GetCudaDeviceCount (src/, internal: the benchmark builds with it)
#include "itkConnectedComponentImageFilter.h"
#include "itkCudaConnectedComponentAnalysisImageFilter.h"
#include "itkLabelImageToShapeLabelMapFilter.h"
#include "itkRelabelComponentImageFilter.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <string>

namespace
{
using Backend = itk::CudaConnectedComponentAnalysisEnums::Backend;

/** The label image with and without the post-processing (MinimumObjectSize 10, SortByObjectSize) through
 * the filter's Update(), against ConnectedComponentImageFilter → RelabelComponentImageFilter; then the
 * post-processing with the LabelMap too, against LabelImageToShapeLabelMapFilter on Relabel's output. */
void
RunPostProcessing(const UserPathOptions & o, bool gpu, nlohmann::json & out)
{
  using ImageType = itk::Image<unsigned char, 3>;
  using LabelType = itk::Image<unsigned int, 3>;
  using FilterType = itk::CudaConnectedComponentAnalysisImageFilter<ImageType, LabelType>;
  using MapType = itk::LabelMap<itk::ShapeLabelObject<unsigned int, 3>>;
  constexpr itk::SizeValueType minimumSize = 10;
  std::cout << "\nPost-processing, 3D " << o.size3D << "^3, 6-connectivity, g = 1 (MinimumObjectSize " << minimumSize
            << ", SortByObjectSize), seconds; label image only, then with the LabelMap (+map):\n"
            << std::left << std::setw(6) << "d" << std::setw(11) << "objects" << std::setw(10) << "kept"
            << std::setw(12) << "CUDA plain" << std::setw(12) << "CUDA post" << std::setw(12) << "CPU plain"
            << std::setw(12) << "CPU post" << std::setw(12) << "ITK CC" << std::setw(12) << "ITK relabel"
            << std::setw(12) << "ITK/CUDA" << std::setw(12) << "CUDA +map" << std::setw(12) << "CPU +map"
            << std::setw(12) << "ITK +map" << std::setw(12) << "ITK/CUDA"
            << "\n";
  std::uint32_t seed = 9100;
  for (double density : o.densities)
  {
    auto               image = MakeBenchmarkImage<3>(o.size3D, density, 1, ++seed);
    nlohmann::json     row = { { "size", o.size3D }, { "density", density }, { "minimum_object_size", minimumSize } };
    itk::SizeValueType objects = 0, kept = 0;
    auto               ours = [&](Backend backend, bool post, bool labelMap, const char * name) {
      double best = 1e300;
      for (int i = 0; i < o.warmup + o.runs; ++i)
      {
        auto filter = FilterType::New();
        filter->SetInput(image);
        filter->SetBackend(backend);
        filter->SetGenerateLabelMap(labelMap);
        if (post)
        {
          filter->SetMinimumObjectSize(minimumSize);
          filter->SortByObjectSizeOn();
        }
        const double s = SecondsOf([&]() { filter->Update(); });
        if (i >= o.warmup && s < best)
        {
          best = s;
          const auto & split = filter->GetTimeSplit();
          row[std::string(name) + "_split"] = { { "analyze_s", split.Analyze },
                                                { "write_labels_s", split.WriteLabels },
                                                { "export_runs_s", split.ExportRuns },
                                                { "build_labelmap_s", split.BuildLabelMap } };
        }
        objects = filter->GetOriginalObjectCount();
        kept = filter->GetObjectCount();
      }
      row[std::string(name) + "_s"] = best;
      return best;
    };
    double cudaPlain = 0, cudaPost = 0, cudaMap = 0;
    if (gpu)
    {
      cudaPlain = ours(Backend::CUDA, false, false, "cuda_plain");
      cudaPost = ours(Backend::CUDA, true, false, "cuda_post");
      cudaMap = ours(Backend::CUDA, true, true, "cuda_post_labelmap");
    }
    const double cpuPlain = ours(Backend::CPU, false, false, "cpu_plain");
    const double cpuPost = ours(Backend::CPU, true, false, "cpu_post");
    const double cpuMap = ours(Backend::CPU, true, true, "cpu_post_labelmap");
    row["objects"] = objects;
    row["kept"] = kept;
    double itkLabel = 1e300, itkRelabel = 1e300, itkMap = 1e300;
    for (int i = 0; i < o.cpuRuns; ++i)
    {
      auto cc = itk::ConnectedComponentImageFilter<ImageType, LabelType>::New();
      cc->SetInput(image);
      auto relabel = itk::RelabelComponentImageFilter<LabelType, LabelType>::New();
      relabel->SetInput(cc->GetOutput());
      relabel->SetMinimumObjectSize(minimumSize);
      relabel->SortByObjectSizeOn();
      auto shape = itk::LabelImageToShapeLabelMapFilter<LabelType, MapType>::New();
      shape->SetInput(relabel->GetOutput());
      itkLabel = std::min(itkLabel, SecondsOf([&]() { cc->Update(); }));
      itkRelabel = std::min(itkRelabel, SecondsOf([&]() { relabel->Update(); }));
      itkMap = std::min(itkMap, SecondsOf([&]() { shape->Update(); }));
    }
    row["itk_connected_components_s"] = itkLabel;
    row["itk_relabel_s"] = itkRelabel;
    row["itk_shape_label_map_s"] = itkMap;
    out["post_processing"].push_back(row);
    std::cout << std::setw(6) << density << std::setw(11) << objects << std::setw(10) << kept << std::setw(12)
              << cudaPlain << std::setw(12) << cudaPost << std::setw(12) << cpuPlain << std::setw(12) << cpuPost
              << std::setw(12) << itkLabel << std::setw(12) << itkRelabel << std::setw(12)
              << (gpu ? (itkLabel + itkRelabel) / cudaPost : 0.0) << std::setw(12) << cudaMap << std::setw(12) << cpuMap
              << std::setw(12) << itkMap << std::setw(12) << (gpu ? (itkLabel + itkRelabel + itkMap) / cudaMap : 0.0)
              << std::endl;
  }
}
} // namespace

void
RunPostProcessingBenchmark(const UserPathOptions & o, nlohmann::json & report)
{
  std::string reason;
  const bool  gpu = itk::cca::GetCudaDeviceCount(&reason) > 0;
  report["post_processing"] = nlohmann::json::array();
  RunPostProcessing(o, gpu, report);
}
