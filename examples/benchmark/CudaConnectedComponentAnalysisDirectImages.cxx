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
// Benchmark option --direct-images: the seeds' direct algorithms against our labels path on real
// images. Each file is read as a float image (a 3-D one: its middle slice), made binary above its mean (the bright
// tissue of a CT or MRI), and labelled device-resident: our CUDA engine (features: mode a; features + label image:
// mode b; the label image alone: the labels-only variant) at 4- and 8-connectivity, and each direct algorithm at
// its own connectivity (its CCA features where it has them, its CCL labels in its own numbering and in raster
// order). Minimum of the timed runs, CUDA events.

#include "CudaConnectedComponentAnalysisUserPath.h"
#include "itkCCABenchmark.h"
#include "itkExtractImageFilter.h"
#include "itkImage.h"
#include "itkImageFileReader.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <numeric>

namespace
{
double
MinimumOf(const std::vector<double> & ms)
{
  return ms.empty() ? 0.0 : *std::min_element(ms.begin(), ms.end());
}
} // namespace

void
RunDirectOnImages(const std::vector<std::string> & files, const std::vector<std::string> & algorithms, int warmup,
                  int runs, nlohmann::json & report)
{
  using VolumeType = itk::Image<float, 3>;
  report["direct_images"] = nlohmann::json::array();
  std::cout << "\nReal images, device-resident, ms (minimum of " << runs
            << " runs; on images this small FLSL+CD takes the engine's one-launch path, labels only the general one)\n";
  for (const auto & file : files)
  {
    const auto                volume = itk::ReadImage<VolumeType>(file);
    const auto                size = volume->GetLargestPossibleRegion().GetSize();
    const auto                width = static_cast<std::uint32_t>(size[0]);
    const auto                height = static_cast<std::uint32_t>(size[1]);
    const std::size_t         slice = static_cast<std::size_t>(width) * height;
    const float *             first = volume->GetBufferPointer() + slice * (size[2] / 2);
    const double              mean = std::accumulate(first, first + slice, 0.0) / static_cast<double>(slice);
    std::vector<std::uint8_t> binary(slice);
    std::transform(first, first + slice, binary.begin(), [mean](float v) { return v > mean ? 1 : 0; });
    const std::size_t foreground = std::count(binary.begin(), binary.end(), 1);

    nlohmann::json row = {
      { "file", file }, { "width", width }, { "height", height }, { "threshold", mean }, { "foreground", foreground }
    };
    std::cout << file << " (" << width << "x" << height << (size[2] > 1 ? ", middle slice" : "") << ", above " << mean
              << ": " << foreground << " foreground pixels)\n";
    for (bool fully : { false, true })
    {
      itk::cca::Request request;
      request.size = { { width, height, 1 } };
      request.connectivity = itk::cca::Connectivity::FromFullyConnected(fully);
      request.input = binary.data();
      request.inputKind = itk::cca::ScalarKind::UInt8;
      const auto        t = itk::cca::BenchmarkCudaDeviceResident(request, 0, warmup, runs);
      const std::string conn = fully ? "8" : "4";
      row["ours_features_ms_" + conn] = MinimumOf(t.featuresMs);
      row["ours_features_and_labels_ms_" + conn] = MinimumOf(t.featuresAndLabelsMs);
      row["components_" + conn] = t.components;
      const auto l =
        itk::cca::BenchmarkCudaDeviceResident(request, 0, warmup, runs, itk::cca::FeatureAlgorithm::LabelsOnly);
      row["ours_labels_ms_" + conn] = MinimumOf(l.featuresAndLabelsMs);
      std::cout << "  ours (FLSL+CD), conn " << conn << ": features " << MinimumOf(t.featuresMs)
                << ", features + labels " << MinimumOf(t.featuresAndLabelsMs) << ", labels only "
                << MinimumOf(l.featuresAndLabelsMs) << " (" << t.components << " components)\n";
    }
    for (const auto & name : algorithms)
    {
      const auto v = itk::cca::BenchmarkDirectAlgorithm(name, binary.data(), width, height, 0, warmup, runs, false);
      row[name] = { { "connectivity", v.fullyConnected ? 8 : 4 },
                    { "components", v.components },
                    { "labels_ms", MinimumOf(v.labelsMs) },
                    { "labels_raster_order_ms", MinimumOf(v.labelsInRasterOrderMs) },
                    { "features_ms", MinimumOf(v.featuresMs) } };
      std::cout << "  " << name << ", conn " << (v.fullyConnected ? 8 : 4) << ": labels " << MinimumOf(v.labelsMs)
                << ", in raster order " << MinimumOf(v.labelsInRasterOrderMs);
      if (v.computesFeatures)
      {
        std::cout << ", features " << MinimumOf(v.featuresMs);
      }
      std::cout << " (" << v.components << " components)\n";
    }
    report["direct_images"].push_back(row);
  }
}
