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
// Helpers shared by the tests: paper-style random images, ITK's reference labels, brute-force
// features, and the exact comparison of our filter's outputs with them.
#ifndef itkCCATestUtilities_h
#define itkCCATestUtilities_h

#include "itkConnectedComponentImageFilter.h"
#include "itkCCAEngine.h"
#include "itkCudaConnectedComponentAnalysisImageFilter.h"
#include "itkImage.h"
#include "itkImageRegionConstIteratorWithIndex.h"
#include "itkImageRegionIteratorWithIndex.h"
#include "itkTestingMacros.h"

#include <cstring>
#include <functional>
#include <map>
#include <iostream>
#include <vector>
#include <random>
#include <sstream>
#include <string>

namespace itk
{
namespace ccatest
{

constexpr int SkipReturnCode = 77;

using Backend = CudaConnectedComponentAnalysisEnums::Backend;

inline Backend
ParseBackend(const std::string & name)
{
  if (name == "cuda")
  {
    return Backend::CUDA;
  }
  if (name == "cpu")
  {
    return Backend::CPU;
  }
  if (name == "auto")
  {
    return Backend::Automatic;
  }
  throw std::invalid_argument("backend must be cpu, cuda or auto, not " + name);
}

/** True when the CUDA backend cannot run here: GPU tests then exit with SkipReturnCode. */
inline bool
CudaUnavailable(Backend backend)
{
  if (backend != Backend::CUDA)
  {
    return false;
  }
  std::string reason;
  if (cca::GetCudaDeviceCount(&reason) == 0)
  {
    std::cout << "CCA_TEST_SKIPPED: " << reason << std::endl;
    return true;
  }
  return false;
}

/** Paper-style random image (Lemaitre et al. 2021 §4): MT19937, foreground blocks of g x g pixels with
 * probability `density`; foreground pixels get `onValue(rng)` (any non-zero value). */
template <typename TImage, typename TOnValue>
typename TImage::Pointer
MakeRandomImage(const typename TImage::SizeType & size, double density, unsigned granularity, std::uint32_t seed,
                TOnValue onValue)
{
  auto image = TImage::New();
  image->SetRegions(size);
  image->Allocate();
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  constexpr unsigned                     D = TImage::ImageDimension;
  typename TImage::SizeType              blocks;
  SizeValueType                          numBlocks = 1;
  for (unsigned d = 0; d < D; ++d)
  {
    blocks[d] = (size[d] + granularity - 1) / granularity;
    numBlocks *= blocks[d];
  }
  std::vector<bool> on(numBlocks);
  for (SizeValueType b = 0; b < numBlocks; ++b)
  {
    on[b] = uniform(rng) < density;
  }
  using PixelType = typename TImage::PixelType;
  for (ImageRegionIteratorWithIndex<TImage> it(image, image->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
  {
    SizeValueType block = 0;
    for (int d = D - 1; d >= 0; --d)
    {
      block = block * blocks[d] + it.GetIndex()[d] / granularity;
    }
    it.Set(on[block] ? static_cast<PixelType>(onValue(rng)) : PixelType{});
  }
  return image;
}

/** Compares two label images pixel for pixel; reports the first difference. */
template <typename TImage>
bool
SameImage(const TImage * a, const TImage * b, const std::string & what)
{
  const SizeValueType n = a->GetBufferedRegion().GetNumberOfPixels();
  if (a->GetBufferedRegion() != b->GetBufferedRegion())
  {
    std::cerr << what << ": regions differ" << std::endl;
    return false;
  }
  const auto * pa = a->GetBufferPointer();
  const auto * pb = b->GetBufferPointer();
  for (SizeValueType i = 0; i < n; ++i)
  {
    // compare bit patterns so that float labels compare exactly too
    if (std::memcmp(pa + i, pb + i, sizeof(*pa)) != 0)
    {
      std::cerr << what << ": first difference at offset " << i << ": "
                << static_cast<typename NumericTraits<typename TImage::PixelType>::PrintType>(pa[i]) << " vs ITK "
                << static_cast<typename NumericTraits<typename TImage::PixelType>::PrintType>(pb[i]) << std::endl;
      return false;
    }
  }
  return true;
}

/** Recounts every component's features from a label image and compares with the filter's. */
template <typename TFilter>
bool
FeaturesMatchBruteForce(const TFilter * filter, const std::string & what)
{
  using OutputImageType = typename TFilter::OutputImageType;
  using PixelType = typename OutputImageType::PixelType;
  constexpr unsigned D = OutputImageType::ImageDimension;
  struct Sums
  {
    SizeValueType                       count = 0;
    typename OutputImageType::IndexType min, max;
    double                              sum[D] = {};
  };
  // Labels are integers in [0, objects + 1] (ITK's numbering steps over the background): index by value.
  const SizeValueType     maxLabel = filter->GetObjectCount() + 1;
  std::vector<Sums>       sums(maxLabel + 1);
  SizeValueType           distinct = 0;
  const OutputImageType * labels = filter->GetOutput();
  for (ImageRegionConstIteratorWithIndex<OutputImageType> it(labels, labels->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    const PixelType value = it.Get();
    if (value == filter->GetBackgroundValue())
    {
      continue;
    }
    if (value < PixelType{ 0 } || static_cast<SizeValueType>(value) > maxLabel)
    {
      std::cerr << what << ": label " << static_cast<double>(value) << " outside [0, " << maxLabel << "]" << std::endl;
      return false;
    }
    Sums &     s = sums[static_cast<SizeValueType>(value)];
    const auto idx = it.GetIndex();
    if (s.count == 0)
    {
      s.min = s.max = idx;
      ++distinct;
    }
    ++s.count;
    for (unsigned d = 0; d < D; ++d)
    {
      s.min[d] = std::min(s.min[d], idx[d]);
      s.max[d] = std::max(s.max[d], idx[d]);
      s.sum[d] += static_cast<double>(idx[d]);
    }
  }
  const auto & features = filter->GetComponentFeatures();
  if (features.size() != distinct || features.size() != filter->GetObjectCount())
  {
    std::cerr << what << ": " << features.size() << " feature records, " << distinct << " labels in the image, "
              << filter->GetObjectCount() << " objects" << std::endl;
    return false;
  }
  for (const auto & f : features)
  {
    if (f.Label < PixelType{ 0 } || static_cast<SizeValueType>(f.Label) > maxLabel ||
        sums[static_cast<SizeValueType>(f.Label)].count == 0)
    {
      std::cerr << what << ": label " << static_cast<double>(f.Label) << " not in the image" << std::endl;
      return false;
    }
    const Sums & s = sums[static_cast<SizeValueType>(f.Label)];
    bool         ok = f.NumberOfPixels == s.count;
    for (unsigned d = 0; d < D; ++d)
    {
      ok = ok && f.BoundingBox.GetIndex()[d] == s.min[d] &&
           f.BoundingBox.GetIndex()[d] + static_cast<IndexValueType>(f.BoundingBox.GetSize()[d]) - 1 == s.max[d];
      // sums of integer indices are exact in double up to 2^53, far above the test sizes
      ok = ok && std::abs(f.Centroid[d] - s.sum[d] / static_cast<double>(s.count)) <=
                   1e-12 * std::max(1.0, std::abs(f.Centroid[d]));
    }
    if (!ok)
    {
      std::cerr << what << ": features of label " << static_cast<double>(f.Label) << " differ: count "
                << f.NumberOfPixels << " vs " << s.count << ", bbox " << f.BoundingBox << std::endl;
      return false;
    }
  }
  return true;
}

/** Runs our filter and ITK's on the same input (and mask) and checks labels, object count and features. */
template <typename TInputImage, typename TOutputImage, typename TMaskImage = TInputImage>
bool
CheckAgainstITK(const TInputImage * input, Backend backend, bool fullyConnected, const std::string & what,
                const typename std::common_type<TMaskImage>::type * mask = nullptr, // not deduced: nullptr is fine
                typename TOutputImage::PixelType                    background = typename TOutputImage::PixelType{})
{
  using OursType = CudaConnectedComponentAnalysisImageFilter<TInputImage, TOutputImage, TMaskImage>;
  using ITKType = ConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>;
  auto ours = OursType::New();
  ours->SetInput(input);
  ours->SetBackend(backend);
  ours->SetFullyConnected(fullyConnected);
  ours->SetBackgroundValue(background);
  auto reference = ITKType::New();
  reference->SetInput(input);
  reference->SetFullyConnected(fullyConnected);
  reference->SetBackgroundValue(background);
  if (mask)
  {
    ours->SetMaskImage(mask);
    reference->SetMaskImage(mask);
  }
  ours->Update();
  reference->Update();
  if (backend != Backend::Automatic && ours->GetBackendUsed() != backend)
  {
    std::cerr << what << ": ran on " << ours->GetBackendUsed() << " instead of " << backend << std::endl;
    return false;
  }
  if (ours->GetObjectCount() != reference->GetObjectCount())
  {
    std::cerr << what << ": " << ours->GetObjectCount() << " objects, ITK finds " << reference->GetObjectCount()
              << std::endl;
    return false;
  }
  return SameImage(ours->GetOutput(), reference->GetOutput(), what) && FeaturesMatchBruteForce(ours.GetPointer(), what);
}

/** The start of a test entry, as ITK's tests begin: fewer than `numberOfArguments` arguments (argv[0]
 * included) print the usage and fail; a backend that cannot run here (argv[backendArgument], or CUDA where
 * backendArgument is 0) skips. Returns -1 to go on, else the exit status to end with; `backend` receives the
 * backend. */
inline int
StartTest(int argc, char * argv[], int numberOfArguments, const char * usage, int backendArgument, Backend & backend)
{
  if (argc < numberOfArguments)
  {
    std::cerr << "Usage: " << argv[0] << " " << usage << std::endl;
    return EXIT_FAILURE;
  }
  backend = backendArgument > 0 ? ParseBackend(argv[backendArgument]) : Backend::CUDA;
  return CudaUnavailable(backend) ? SkipReturnCode : -1;
}

/** The main of a test file whose cases are named by argv[1] and run on the backend argv[2]: usage, the skip
 * without a CUDA device, the case's result as the exit status. */
inline int
RunNamedCase(int argc, char * argv[], const std::map<std::string, std::function<bool(Backend)>> & cases)
{
  std::string names;
  for (const auto & c : cases)
  {
    names += (names.empty() ? "" : "|") + c.first;
  }
  const auto found = argc > 1 ? cases.find(argv[1]) : cases.end();
  if (argc > 1 && found == cases.end())
  {
    std::cerr << "unknown case " << argv[1] << " (" << names << ")" << std::endl;
    return EXIT_FAILURE;
  }
  Backend   backend = Backend::CPU;
  const int start = StartTest(argc, argv, 3, (names + " backend").c_str(), 2, backend);
  if (start >= 0)
  {
    return start;
  }
  const bool ok = found->second(backend);
  std::cout << argv[1] << ": " << (ok ? "passed" : "FAILED") << std::endl;
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

/** Whether `a` and `b` are the same partition of the pixels into components (labels up to renaming; 0 in both
 * the same pixels). */
template <typename TImage>
bool
SamePartition(const TImage * a, const TImage * b, const std::string & what)
{
  std::map<std::uint64_t, std::uint64_t> aToB, bToA;
  const SizeValueType                    n = a->GetBufferedRegion().GetNumberOfPixels();
  for (SizeValueType i = 0; i < n; ++i)
  {
    const auto la = static_cast<std::uint64_t>(a->GetBufferPointer()[i]);
    const auto lb = static_cast<std::uint64_t>(b->GetBufferPointer()[i]);
    if ((la == 0) != (lb == 0) || aToB.emplace(la, lb).first->second != lb || bToA.emplace(lb, la).first->second != la)
    {
      std::cerr << what << ": partitions differ at offset " << i << std::endl;
      return false;
    }
  }
  return true;
}

} // namespace ccatest
} // namespace itk

#endif
