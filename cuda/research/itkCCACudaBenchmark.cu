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
// The benchmark's entry into the CUDA engine (itkCCABenchmark.h): device-resident timing with CUDA
// events around the on-device work only (the paper's method), and the host<->device copy rates.

#include "itkCCABenchmark.h"
#include "itkCCACudaEngine.cuh"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>
namespace itk
{
namespace cca
{

DeviceResidentTimings
BenchmarkCudaDeviceResident(const Request & hostRequest, int deviceId, int warmupRuns, int timedRuns,
                            FeatureAlgorithm algorithm)
{
  if (hostRequest.mask)
  {
    throw Error("the device-resident benchmark takes no mask");
  }
  auto               engineOwner = CreateResearchCudaEngine(deviceId, algorithm);
  auto &             engine = static_cast<cuda::CudaEngine &>(*engineOwner);
  const std::size_t  bytes = hostRequest.NumberOfPixels() * ScalarKindSize(hostRequest.inputKind);
  cuda::DeviceBuffer deviceInput;
  deviceInput.Reserve(bytes, "the benchmark image");
  // On the engine's non-blocking stream and waited for (a pageable cudaMemcpy may return before its DMA ends).
  CCA_CUDA_CHECK(
    cudaMemcpyAsync(deviceInput.As<void>(), hostRequest.input, bytes, cudaMemcpyHostToDevice, engine.GetStream()));
  CCA_CUDA_CHECK(cudaStreamSynchronize(engine.GetStream()));
  Request request = hostRequest;
  request.input = deviceInput.As<void>();

  LabelOutput labels;
  labels.kind = ScalarKind::UInt32;
  labels.skipValue = 0; // background 0: labels 1..K

  cudaEvent_t start, stop;
  CCA_CUDA_CHECK(cudaEventCreate(&start));
  CCA_CUDA_CHECK(cudaEventCreate(&stop));
  DeviceResidentTimings result;
  result.device = engine.GetDescription();
  auto timeOnce = [&](bool withLabels) {
    CCA_CUDA_CHECK(cudaEventRecord(start, engine.GetStream()));
    result.components = engine.Update(request, true, false);
    if (withLabels)
    {
      engine.WriteLabelsOnDevice(labels);
    }
    CCA_CUDA_CHECK(cudaEventRecord(stop, engine.GetStream()));
    CCA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CCA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return static_cast<double>(ms);
  };
  for (bool withLabels : { false, true })
  {
    for (int i = 0; i < warmupRuns; ++i)
    {
      timeOnce(withLabels);
    }
    auto & times = withLabels ? result.featuresAndLabelsMs : result.featuresMs;
    for (int i = 0; i < timedRuns; ++i)
    {
      times.push_back(timeOnce(withLabels));
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return result;
}

TransferRates
BenchmarkCudaTransfers(int deviceId, std::uint64_t bytes, int timedRuns)
{
  auto               engineOwner = CreateCudaEngine(deviceId); // selects and checks the device
  auto &             engine = static_cast<cuda::CudaEngine &>(*engineOwner);
  const cudaStream_t stream = engine.GetStream();
  TransferRates      rates;
  rates.device = engine.GetDescription();
  rates.bytes = bytes;

  cuda::DeviceBuffer device;
  device.Reserve(bytes, "the transfer benchmark");
  void * pinned = nullptr;
  CCA_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
  std::unique_ptr<void, cudaError_t (*)(void *)> pinnedOwner(pinned, cudaFreeHost);
  std::vector<unsigned char> pageable(bytes, 1); // written once, so that its pages exist, as an image's do
  cuda::PinnedStaging        staging;
  staging.Initialize();

  // Wall clock around a synchronized copy: the engine's staged path is host work plus DMA.
  auto best = [&](const std::function<void()> & copy) {
    copy(); // warm-up
    double bestSeconds = 1e300;
    for (int i = 0; i < std::max(1, timedRuns); ++i)
    {
      const auto t0 = std::chrono::steady_clock::now();
      copy();
      CCA_CUDA_CHECK(cudaStreamSynchronize(stream));
      bestSeconds = std::min(bestSeconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return static_cast<double>(bytes) / bestSeconds / 1e9;
  };
  void *          d = device.As<void>();
  unsigned char * h = pageable.data();
  rates.pinnedToDevice =
    best([&] { CCA_CUDA_CHECK(cudaMemcpyAsync(d, pinned, bytes, cudaMemcpyHostToDevice, stream)); });
  rates.pinnedToHost = best([&] { CCA_CUDA_CHECK(cudaMemcpyAsync(pinned, d, bytes, cudaMemcpyDeviceToHost, stream)); });
  rates.pageableToDevice = best([&] { CCA_CUDA_CHECK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, stream)); });
  rates.pageableToHost = best([&] { CCA_CUDA_CHECK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, stream)); });
  rates.stagedToDevice = best([&] { staging.ToDevice(d, h, bytes, stream); });
  rates.stagedToHost = best([&] { staging.ToHost(h, d, bytes, stream); });
  return rates;
}

} // namespace cca
} // namespace itk
