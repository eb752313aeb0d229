/*=========================================================================
 *  GPU-only cases (CTest label gpu; exit 77 without a device):
 *   large       8192x8192 paper images against ITK, both connectivities;
 *   repeat      100 runs of a dense 4096x4096 image, bit-identical labels and features;
 *   outofmemory the device's memory taken first: a clear exception, then a normal run once freed.
 *=========================================================================*/
#include "itkCCATestUtilities.h"

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
      auto image = MakeRandomImage<UCharImage>(UCharImage::SizeType{ { 8192, 8192 } }, density, g, ++seed,
                                               [](std::mt19937 &) { return 1; });
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
  auto image = MakeRandomImage<UCharImage>(UCharImage::SizeType{ { 4096, 4096 } }, 0.6, 1, 4096,
                                           [](std::mt19937 &) { return 1; });
  bool ok = true;
  for (bool fully : { false, true })
  {
    auto filter = FilterType::New();
    filter->SetInput(image);
    filter->SetBackend(Backend::CUDA);
    filter->SetFullyConnected(fully);
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
      bool         same = std::memcmp(first->GetBufferPointer(), filter->GetOutput()->GetBufferPointer(),
                              sizeof(unsigned int) * 4096 * 4096) == 0 &&
                  f.size() == firstFeatures.size();
      for (std::size_t i = 0; same && i < f.size(); ++i)
      {
        same = f[i].NumberOfPixels == firstFeatures[i].NumberOfPixels && f[i].BoundingBox == firstFeatures[i].BoundingBox &&
               f[i].Centroid == firstFeatures[i].Centroid;
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
  auto image = MakeRandomImage<UCharImage>(UCharImage::SizeType{ { 2048, 2048 } }, 0.5, 1, 7,
                                           [](std::mt19937 &) { return 1; });
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
  for (void * p : hogs)
  {
    cudaFree(p);
  }
  if (!threw)
  {
    std::cerr << "no out-of-memory exception" << std::endl;
    return false;
  }
  // The engine recovers once memory is back.
  return CheckAgainstITK<UCharImage, LabelImage>(image, Backend::CUDA, false, "after out of memory");
#else
  std::cerr << "built without the CUDA runtime" << std::endl;
  return false;
#endif
}
} // namespace

int
itkCudaConnectedComponentAnalysisGPUTest(int argc, char * argv[])
{
  if (argc < 2)
  {
    std::cerr << "Usage: " << argv[0] << " large|repeat|outofmemory" << std::endl;
    return EXIT_FAILURE;
  }
  if (CudaUnavailable(Backend::CUDA))
  {
    return SkipReturnCode;
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
  else
  {
    std::cerr << "unknown mode " << mode << std::endl;
  }
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
