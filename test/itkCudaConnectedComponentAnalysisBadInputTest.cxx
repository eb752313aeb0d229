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
// Bad and degenerate input: every case ends in a clear itk::ExceptionObject or in ITK's answer,
// never in a crash or a silently wrong image.  Argument: backend (cpu | cuda | auto).
#include "itkCCATestUtilities.h"

#if defined(__linux__)
#  include <dlfcn.h>
#endif

namespace
{
using namespace itk;
using namespace itk::ccatest;

using UCharImage = Image<unsigned char, 2>;
using UCharLabelImage = Image<unsigned char, 2>;
using LabelImage = Image<unsigned int, 2>;
using FilterType = CudaConnectedComponentAnalysisImageFilter<UCharImage, LabelImage>;

UCharImage::Pointer
MakeImage(SizeValueType w, SizeValueType h, unsigned char value)
{
  auto image = UCharImage::New();
  image->SetRegions(UCharImage::SizeType{ { w, h } });
  image->Allocate();
  image->FillBuffer(value);
  return image;
}

bool
ExpectMessage(const std::function<void()> & f, const std::string & needle, const std::string & what)
{
  try
  {
    f();
  }
  catch (const ExceptionObject & e)
  {
    const std::string text = e.GetDescription();
    if (text.find(needle) == std::string::npos)
    {
      std::cerr << what << ": exception without \"" << needle << "\": " << text << std::endl;
      return false;
    }
    std::cout << what << ": expected exception: " << text << std::endl;
    return true;
  }
  std::cerr << what << ": no exception" << std::endl;
  return false;
}
} // namespace

int
itkCudaConnectedComponentAnalysisBadInputTest(int argc, char * argv[])
{
  Backend backend = Backend::CPU;
  if (const int start = StartTest(argc, argv, 2, "backend", 1, backend); start >= 0)
  {
    return start;
  }
  bool ok = true;

  // The object as ITK's filters are: printable, with the documented defaults.
  {
    auto filter = FilterType::New();
    ITK_EXERCISE_BASIC_OBJECT_METHODS(filter, CudaConnectedComponentAnalysisImageFilter, ImageToImageFilter);
    ITK_TEST_EXPECT_TRUE(!filter->GetFullyConnected());
    ITK_TEST_EXPECT_EQUAL(filter->GetBackgroundValue(), 0u);
    ITK_TEST_EXPECT_TRUE(filter->GetBackend() == Backend::Automatic);
  }

  // Empty region.
  {
    auto filter = FilterType::New();
    filter->SetInput(MakeImage(0, 7, 1));
    filter->SetBackend(backend);
    ok = ExpectMessage([&] { filter->Update(); }, "empty", "empty region") && ok;
  }

  // Mask of a different size.
  {
    auto filter = FilterType::New();
    filter->SetInput(MakeImage(20, 10, 1));
    filter->SetMaskImage(MakeImage(10, 20, 1));
    filter->SetBackend(backend);
    ok = ExpectMessage([&] { filter->Update(); }, "size", "mask size mismatch") && ok;
  }

  // More objects than the output pixel type holds: a 4-connected checkerboard of 2048 objects in uchar.
  {
    auto image = MakeImage(64, 64, 0);
    for (ImageRegionIteratorWithIndex<UCharImage> it(image, image->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
    {
      it.Set(((it.GetIndex()[0] + it.GetIndex()[1]) % 2) ? 1 : 0);
    }
    auto filter = CudaConnectedComponentAnalysisImageFilter<UCharImage, UCharLabelImage>::New();
    filter->SetInput(image);
    filter->SetBackend(backend);
    ok = ExpectMessage([&] { filter->Update(); }, "greater than maximum of output pixel type", "label overflow") && ok;
    auto reference = ConnectedComponentImageFilter<UCharImage, UCharLabelImage>::New();
    reference->SetInput(image);
    ok =
      ExpectMessage([&] { reference->Update(); }, "greater than maximum of output pixel type", "ITK's overflow") && ok;
    // 8-connected the checkerboard is 1 object: fits.
    filter->SetFullyConnected(true);
    ITK_TRY_EXPECT_NO_EXCEPTION(filter->Update());
    ITK_TEST_EXPECT_EQUAL(filter->GetObjectCount(), 1u);
  }

  // Degenerate images: 1x1 foreground and background, all background, all foreground.
  for (auto value : { 0, 5 })
  {
    for (auto size : { std::pair<int, int>{ 1, 1 }, std::pair<int, int>{ 37, 23 } })
    {
      auto               image = MakeImage(size.first, size.second, static_cast<unsigned char>(value));
      std::ostringstream what;
      what << size.first << "x" << size.second << " filled with " << value;
      ok = CheckAgainstITK<UCharImage, LabelImage>(image, backend, false, what.str()) && ok;
      ok = CheckAgainstITK<UCharImage, LabelImage>(image, backend, true, what.str() + " bg=7", nullptr, 7u) && ok;
    }
  }

  // A region that does not start at the origin: bounding boxes and centroids in ITK's index space.
  {
    auto image =
      MakeRandomImage<UCharImage>(UCharImage::SizeType{ { 45, 38 } }, 0.5, 2, 99, [](std::mt19937 &) { return 1; });
    UCharImage::RegionType region = image->GetLargestPossibleRegion();
    region.SetIndex(UCharImage::IndexType{ { 5, -3 } });
    image->SetRegions(region);
    ok = CheckAgainstITK<UCharImage, LabelImage>(image, backend, false, "shifted region") && ok;
  }

  // Reusing one filter (and its engine buffers) across updates of different sizes.
  {
    auto filter = FilterType::New();
    filter->SetBackend(backend);
    std::uint32_t seed = 500;
    for (auto n : { 100, 37, 250, 100 })
    {
      auto image = MakeRandomImage<UCharImage>(
        UCharImage::SizeType{ { static_cast<SizeValueType>(n), static_cast<SizeValueType>(n + 3) } },
        0.45,
        1,
        ++seed,
        [](std::mt19937 &) { return 1; });
      filter->SetInput(image);
      filter->Update();
      auto reference = ConnectedComponentImageFilter<UCharImage, LabelImage>::New();
      reference->SetInput(image);
      reference->Update();
      ok = SameImage(filter->GetOutput(), reference->GetOutput(), "reused filter, size " + std::to_string(n)) && ok;
      ok = FeaturesMatchBruteForce(filter.GetPointer(), "reused filter features") && ok;
    }
  }

  // StartEngine: nothing for the CPU engine's images; the CUDA engine where a device is usable, else nothing (the
  // analysis says why), and the next filter then runs as it would have.
  {
    using Engine = CudaConnectedComponentAnalysisEngine;
    const bool gpu = cca::GetCudaDeviceCount() > 0;
    ITK_TEST_EXPECT_TRUE(!Engine::StartEngine(Backend::CPU, 0, std::uint64_t{ 1 } << 20));
    ITK_TEST_EXPECT_TRUE(!Engine::StartEngine(Backend::Automatic, 0, 1000));
    ITK_TEST_EXPECT_EQUAL(Engine::StartEngine(Backend::Automatic, 0, std::uint64_t{ 1 } << 20), gpu);
    ITK_TEST_EXPECT_EQUAL(Engine::StartEngine(Backend::CUDA, 0, 1000), gpu);
    ITK_TEST_EXPECT_TRUE(!Engine::StartEngine(Backend::CUDA, 99, 1000)); // no such device: nothing, no exception
    auto filter = FilterType::New();
    filter->SetInput(MakeImage(300, 200, 2));
    ITK_TRY_EXPECT_NO_EXCEPTION(filter->Update());
    ITK_TEST_EXPECT_TRUE(filter->GetBackendUsed() == (gpu ? Backend::CUDA : Backend::CPU));
  }

  // Where there is no CUDA device: CUDA is refused with a clear exception, Automatic runs on the CPU.
  std::string reason;
  if (cca::GetCudaDeviceCount(&reason) == 0)
  {
    auto filter = FilterType::New();
    filter->SetInput(MakeImage(8, 8, 1));
    filter->SetBackend(Backend::CUDA);
    ok = ExpectMessage([&] { filter->Update(); }, "CUDA", "CUDA backend without a device") && ok;
    filter->SetBackend(Backend::Automatic);
    ITK_TRY_EXPECT_NO_EXCEPTION(filter->Update());
    ITK_TEST_EXPECT_TRUE(filter->GetBackendUsed() == Backend::CPU);
    ITK_TEST_EXPECT_EQUAL(filter->GetObjectCount(), 1u);
#if defined(__linux__)
    // Without the driver library, the reason says so (not "driver version is insufficient").
    void * driver = dlopen("libcuda.so.1", RTLD_LAZY);
    if (driver)
    {
      dlclose(driver);
    }
    else if (cca::IsCudaEngineCompiled() && reason.find("no CUDA driver found") == std::string::npos)
    {
      std::cerr << "no driver library, but the reason is: " << reason << std::endl;
      ok = false;
    }
    std::cout << "no CUDA device: " << reason << std::endl;
#endif
  }
  else
  {
    // More pixels than the CUDA engine's 32-bit index type: refused before any buffer is touched,
    // so that Automatic can fall back to the CPU engine and CUDA reports it.
    auto         engine = cca::CreateCudaEngine(0);
    cca::Request request;
    request.size = { { 65536, 65536, 1 } };
    unsigned char dummy = 0;
    request.input = &dummy;
    bool refused = false;
    try
    {
      engine->Analyze(request);
    }
    catch (const cca::Unavailable & e)
    {
      refused = std::string(e.what()).find("32-bit") != std::string::npos;
      std::cout << "expected refusal: " << e.what() << std::endl;
    }
    ok = refused && ok;
  }

  std::cout << (ok ? "all bad-input cases handled" : "FAILED") << std::endl;
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
