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
// Mode l of the benchmark (see the header): what one call on a small image costs.
#include "CudaConnectedComponentAnalysisLatency.h"
#include "CudaConnectedComponentAnalysisBenchmarkImages.h"

#include "itkCudaConnectedComponentAnalysisEngine.h"
#include "itkCudaConnectedComponentAnalysisImageFilter.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

namespace
{
using Backend = itk::CudaConnectedComponentAnalysisEnums::Backend;
using Clock = std::chrono::steady_clock;

double
Milliseconds(Clock::time_point a, Clock::time_point b)
{
  return std::chrono::duration<double, std::milli>(b - a).count();
}

/** The q-quantile of `values` (nearest rank). */
double
Quantile(std::vector<double> values, double q)
{
  if (values.empty())
  {
    return 0;
  }
  std::sort(values.begin(), values.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(i, values.size() - 1)];
}

/** Per-call times (ms) of `call`, after `warmup` untimed calls; `stages` collects what the call reports. */
std::vector<double>
TimeCalls(const LatencyOptions & o, const std::function<void()> & call)
{
  for (int i = 0; i < o.warmup; ++i)
  {
    call();
  }
  std::vector<double> ms;
  const auto          begin = Clock::now();
  for (int i = 0; i < o.calls; ++i)
  {
    const auto t0 = Clock::now();
    call();
    const auto t1 = Clock::now();
    ms.push_back(Milliseconds(t0, t1));
    if (i >= 20 && Milliseconds(begin, t1) > 1e3 * o.seconds)
    {
      break;
    }
  }
  return ms;
}

using Engine = itk::CudaConnectedComponentAnalysisEngine;

/** What a user's call gets back, in new arrays each call as a user's are (uninitialized, as numpy.empty and
 * ITK's Allocate(): the label image's fresh pages are part of what a call costs): the basic columns (with a
 * batch's image column) and the label image. */
template <unsigned D>
struct CallOutputs
{
  std::vector<std::uint64_t>       pixels;
  std::vector<double>              size;
  std::vector<double>              centroid[D];
  std::vector<std::int64_t>        begin[D], end[D], image;
  std::unique_ptr<std::uint32_t[]> labels;

  void
  WriteColumns(Engine & engine, const Engine::Geometry & geometry, std::uint64_t k, std::uint64_t batchStride)
  {
    itk::cca::BasicColumns c;
    pixels.resize(k);
    size.resize(k);
    c.numberOfPixels = pixels.data();
    c.physicalSize = size.data();
    for (unsigned d = 0; d < D; ++d)
    {
      centroid[d].resize(k);
      begin[d].resize(k);
      end[d].resize(k);
      c.centroid[d] = centroid[d].data();
      c.boundingBoxBegin[d] = begin[d].data();
      c.boundingBoxEnd[d] = end[d].data();
    }
    if (batchStride != 0)
    {
      image.resize(k);
      c.image = image.data();
      c.batchStride = batchStride;
    }
    engine.WriteBasicColumns(geometry, c);
  }

  void
  WriteLabels(Engine & engine, std::uint64_t numberOfPixels, bool restartPerImage)
  {
    labels.reset(new std::uint32_t[numberOfPixels]);
    engine.WriteLabels(labels.get(), itk::cca::ScalarKind::UInt32, 0, 0, false, restartPerImage);
  }
};

/** The engine facade, as the Python package and the CLI use it: labels + the basic columns, host in/out, into
 * new arrays each call. */
template <unsigned D>
nlohmann::json
FacadeRow(const LatencyOptions & o, const itk::Image<unsigned char, D> * image, Backend backend,
          std::uint64_t batchExtent = 0)
{
  Engine           engine;
  Engine::Request  request;
  Engine::Geometry geometry;
  request.dimension = D;
  geometry.dimension = D;
  for (unsigned d = 0; d < D; ++d)
  {
    request.size[d] = image->GetBufferedRegion().GetSize(d);
    geometry.size[d] = request.size[d];
  }
  request.input = image->GetBufferPointer();
  request.inputKind = itk::cca::ScalarKind::UInt8;
  request.keepSumsOnDevice = true;
  request.batchExtent = batchExtent;
  std::uint64_t       objects = 0;
  std::vector<double> analyze, columns, write;
  const auto          ms = TimeCalls(o, [&]() {
    const auto          t0 = Clock::now();
    const std::uint64_t k = engine.Analyze(request, backend, 0, 0);
    const auto          t1 = Clock::now();
    CallOutputs<D>      outputs;
    outputs.WriteColumns(engine, geometry, k, batchExtent);
    const auto t2 = Clock::now();
    outputs.WriteLabels(engine, request.NumberOfPixels(), batchExtent != 0);
    const auto t3 = Clock::now();
    objects = k;
    analyze.push_back(Milliseconds(t0, t1));
    columns.push_back(Milliseconds(t1, t2));
    write.push_back(Milliseconds(t2, t3));
  });
  return { { "engine", engine.GetBackendUsed() == Backend::CUDA ? "cuda" : "cpu" },
           { "objects", objects },
           { "median_ms", Quantile(ms, 0.5) },
           { "p90_ms", Quantile(ms, 0.9) },
           { "calls", ms.size() },
           { "analyze_median_ms", Quantile(analyze, 0.5) },
           { "columns_median_ms", Quantile(columns, 0.5) },
           { "labels_median_ms", Quantile(write, 0.5) } };
}

enum class FilterOutput
{
  LabelImage,
  LabelImageAndTable,
  LabelImageAndLabelMap
};

/** The filter, made new per call as a user's script does (its engine kept between filters). */
template <unsigned D>
nlohmann::json
FilterRow(const LatencyOptions & o, const itk::Image<unsigned char, D> * image, Backend backend, FilterOutput output)
{
  using FilterType =
    itk::CudaConnectedComponentAnalysisImageFilter<itk::Image<unsigned char, D>, itk::Image<unsigned int, D>>;
  std::uint64_t objects = 0;
  std::string   used;
  double        checksum = 0;
  const auto    ms = TimeCalls(o, [&]() {
    auto filter = FilterType::New();
    filter->SetInput(image);
    filter->SetBackend(backend);
    filter->SetGenerateLabelMap(output == FilterOutput::LabelImageAndLabelMap);
    filter->Update();
    if (output == FilterOutput::LabelImageAndTable)
    {
      checksum += filter->GetComponentFeatureTable().rows();
    }
    objects = filter->GetObjectCount();
    used = filter->GetBackendUsed() == Backend::CUDA ? "cuda" : "cpu";
  });
  return { { "engine", used },
           { "objects", objects },
           { "median_ms", Quantile(ms, 0.5) },
           { "p90_ms", Quantile(ms, 0.9) },
           { "calls", ms.size() },
           { "table_rows", checksum } };
}

/** A batch of `count` images of side x side (blobs as above) through the facade in one call, against the
 * same pixels as one image, and against a loop of one call per image. */
void
RunBatch(const LatencyOptions & o, bool gpu, nlohmann::json & rows)
{
  const unsigned side = o.batchSide;
  const unsigned count = o.batchImages;
  using ImageType = itk::Image<unsigned char, 2>;
  auto                stack = ImageType::New();
  ImageType::SizeType size{ { side, static_cast<itk::SizeValueType>(side) * count } };
  stack->SetRegions(size);
  stack->Allocate();
  const std::size_t perImage = std::size_t{ side } * side;
  for (unsigned i = 0; i < count; ++i)
  {
    const auto one = MakeBenchmarkImage<2>(side, 0.4, 4, 1000 + i);
    std::copy(one->GetBufferPointer(), one->GetBufferPointer() + perImage, stack->GetBufferPointer() + i * perImage);
  }
  std::cout << "\nA batch of " << count << " images of " << side << 'x' << side << " (labels restarting per image + "
            << "the basic columns with the image column), against the same pixels as one image and a loop of calls\n";
  const Backend backends[] = { Backend::CUDA, Backend::CPU };
  for (const Backend backend : backends)
  {
    if (backend == Backend::CUDA && !gpu)
    {
      continue;
    }
    LatencyOptions few = o;
    few.calls = std::max(3, o.calls / 20);
    few.warmup = 2;
    nlohmann::json batch = FacadeRow<2>(few, stack, backend, side);
    nlohmann::json whole = FacadeRow<2>(few, stack, backend);
    // The loop: one facade call per image, the engine kept, as a user's loop over slices.
    Engine            engine;
    const auto        loop = TimeCalls(few, [&]() {
      for (unsigned i = 0; i < count; ++i)
      {
        Engine::Request r;
        r.dimension = 2;
        r.size = { side, side, 1 };
        r.input = stack->GetBufferPointer() + i * perImage;
        r.keepSumsOnDevice = true;
        const std::uint64_t k = engine.Analyze(r, backend, 0, 0);
        Engine::Geometry    g;
        g.size = r.size;
        CallOutputs<2> outputs;
        outputs.WriteColumns(engine, g, k, 0);
        outputs.WriteLabels(engine, perImage, false);
      }
    });
    const double      pixels = static_cast<double>(perImage) * count;
    const std::string name = backend == Backend::CUDA ? "cuda" : "cpu";
    const double      batchMs = batch["median_ms"].get<double>();
    const double      wholeMs = whole["median_ms"].get<double>();
    const double      loopMs = Quantile(loop, 0.5);
    std::cout << std::fixed << std::setprecision(3) << "  " << name << ": batch " << batchMs << " ms ("
              << pixels / batchMs / 1e3 << " Mpix/s), one image of the same pixels " << wholeMs << " ms ("
              << pixels / wholeMs / 1e3 << " Mpix/s; the batch at " << std::setprecision(0) << 100 * wholeMs / batchMs
              << " % of its throughput), a loop of " << count << " calls " << std::setprecision(3) << loopMs << " ms"
              << std::defaultfloat << '\n';
    rows.push_back({ { "row", "batch" },
                     { "engine", name },
                     { "images", count },
                     { "side", side },
                     { "batch_median_ms", batchMs },
                     { "batch_p90_ms", batch["p90_ms"] },
                     { "batch_objects", batch["objects"] },
                     { "one_image_median_ms", wholeMs },
                     { "loop_median_ms", loopMs } });
  }
}

template <unsigned D>
void
RunSide(const LatencyOptions & o, unsigned side, bool gpu, nlohmann::json & rows)
{
  const auto         image = MakeBenchmarkImage<D>(side, 0.4, 4, 7);
  std::ostringstream name;
  name << side;
  for (unsigned d = 1; d < D; ++d)
  {
    name << 'x' << side;
  }
  auto add = [&](const std::string & what, nlohmann::json row) {
    row["image"] = name.str();
    row["pixels"] = image->GetBufferedRegion().GetNumberOfPixels();
    row["row"] = what;
    std::cout << std::left << std::setw(12) << name.str() << std::setw(46) << what << std::setw(6)
              << row["engine"].get<std::string>() << std::right << std::setw(10) << row["objects"].get<std::uint64_t>()
              << std::fixed << std::setprecision(3) << std::setw(10) << row["median_ms"].get<double>() << std::setw(10)
              << row["p90_ms"].get<double>();
    if (row.contains("analyze_median_ms"))
    {
      std::cout << "   (analysis " << row["analyze_median_ms"].get<double>() << ", columns "
                << row["columns_median_ms"].get<double>() << ", labels " << row["labels_median_ms"].get<double>()
                << ')';
    }
    std::cout << std::defaultfloat << '\n' << std::flush;
    rows.push_back(row);
  };
  if (gpu)
  {
    add("facade, CUDA engine", FacadeRow<D>(o, image, Backend::CUDA));
  }
  add("facade, CPU engine", FacadeRow<D>(o, image, Backend::CPU));
  add("facade, automatic", FacadeRow<D>(o, image, Backend::Automatic));
  const Backend filterBackends[] = { Backend::Automatic, Backend::CUDA };
  for (const Backend backend : filterBackends)
  {
    if (backend == Backend::CUDA && !gpu)
    {
      continue;
    }
    const std::string prefix = backend == Backend::CUDA ? "filter, CUDA engine: " : "filter, automatic: ";
    add(prefix + "label image", FilterRow<D>(o, image, backend, FilterOutput::LabelImage));
    add(prefix + "label image + table", FilterRow<D>(o, image, backend, FilterOutput::LabelImageAndTable));
    add(prefix + "label image + LabelMap", FilterRow<D>(o, image, backend, FilterOutput::LabelImageAndLabelMap));
  }
}
} // namespace

void
RunLatencyBenchmark(const LatencyOptions & o, nlohmann::json & report)
{
  std::string    reason;
  const bool     gpu = itk::CudaConnectedComponentAnalysisEngine::GetCudaDeviceCount(&reason) > 0;
  nlohmann::json rows = nlohmann::json::array();
  std::cout << "\nPer call, one image at a time (blobs of 4-pixel cells, 40 %, face connectivity, uint8 in, uint32 "
               "labels out; up to "
            << o.calls << " calls after " << o.warmup << " untimed; ms)" << (gpu ? "" : ("; no CUDA device: " + reason))
            << "\n"
            << std::left << std::setw(12) << "image" << std::setw(46) << "what" << std::setw(6) << "ran" << std::right
            << std::setw(10) << "objects" << std::setw(10) << "median" << std::setw(10) << "p90" << '\n';
  for (unsigned side : o.sides2D)
  {
    RunSide<2>(o, side, gpu, rows);
  }
  for (unsigned side : o.sides3D)
  {
    RunSide<3>(o, side, gpu, rows);
  }
  if (o.batchImages > 0)
  {
    RunBatch(o, gpu, rows);
  }
  report["latency"] = { { "rows", rows }, { "calls", o.calls }, { "warmup", o.warmup } };
}
