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
// The filter's connectivity past ITK's FullyConnected, with the backend as argument: SetConnectivity(18) (faces and
// edges in 3-D) against a flood fill written here (raster-order labels, features from the pixels), whole and in
// slabs; SetConnectivity(6/26) and (4/8) equal FullyConnected off and on; SetFullyConnected() undoes
// SetConnectivity(); a count the dimension does not have is an itk::ExceptionObject at the update. Periodic
// boundaries (SetPeriodic) at every connectivity and along every set of axes, against the flood fill over the
// wrapped image: labels, features, the LabelMap's attributes against ITK's on those labels, whole and in slabs.
// Value tolerance (SetDistanceThreshold) at every connectivity, on integer and floating-point images, with and
// without a mask: labels against the flood fill joining close values, the partition against
// ScalarConnectedComponentImageFilter's (zero pixels masked out), features; its refusals.
#include "itkCCALabelMapComparison.h"
#include "itkCCATestUtilities.h"
#include "itkScalarConnectedComponentImageFilter.h"

#include <array>
#include <deque>
#include <vector>

namespace
{
using namespace itk;
using namespace itk::ccatest;

/** Labels in raster order of first pixels, joining the neighbors whose offset has at most `maxNonZero` non-zero
 * components: a breadth-first flood fill over the image, the plainest reading of the rule. Along a `periodic`
 * axis the neighbor past the last index is the first (and before the first, the last). With a `tolerance` of 0 or
 * more, neighbors join only where their values differ by at most it (the test's values are exact in double). */
template <typename TImage>
typename Image<unsigned int, TImage::ImageDimension>::Pointer
FloodFill(const TImage * input, unsigned maxNonZero,
          FixedArray<bool, TImage::ImageDimension> periodic = FixedArray<bool, TImage::ImageDimension>::Filled(false),
          double tolerance = -1, const TImage * mask = nullptr)
{
  constexpr unsigned D = TImage::ImageDimension;
  using LabelImage = Image<unsigned int, D>;
  const auto region = input->GetLargestPossibleRegion();
  auto       labels = LabelImage::New();
  labels->SetRegions(region);
  labels->Allocate(true);
  std::vector<Offset<D>> offsets;
  Offset<D>              o;
  o.Fill(-1);
  for (;;)
  {
    unsigned nonZero = 0;
    for (unsigned d = 0; d < D; ++d)
    {
      nonZero += o[d] != 0 ? 1u : 0u;
    }
    if (nonZero > 0 && nonZero <= maxNonZero)
    {
      offsets.push_back(o);
    }
    unsigned d = 0;
    while (d < D && o[d] == 1)
    {
      o[d++] = -1;
    }
    if (d == D)
    {
      break;
    }
    ++o[d];
  }
  auto foreground = [&](const Index<D> & i) { return input->GetPixel(i) != 0 && (!mask || mask->GetPixel(i) != 0); };
  unsigned int next = 0;
  for (ImageRegionConstIteratorWithIndex<TImage> it(input, region); !it.IsAtEnd(); ++it)
  {
    if (!foreground(it.GetIndex()) || labels->GetPixel(it.GetIndex()) != 0)
    {
      continue;
    }
    ++next;
    std::deque<Index<D>> queue{ it.GetIndex() };
    labels->SetPixel(it.GetIndex(), next);
    while (!queue.empty())
    {
      const Index<D> p = queue.front();
      queue.pop_front();
      for (const auto & offset : offsets)
      {
        Index<D> q = p + offset;
        for (unsigned d = 0; d < D; ++d)
        {
          const auto n = static_cast<IndexValueType>(region.GetSize(d));
          q[d] = periodic[d] ? (q[d] + n) % n : q[d];
        }
        if (region.IsInside(q) && foreground(q) && labels->GetPixel(q) == 0 &&
            (tolerance < 0 ||
             std::abs(static_cast<double>(input->GetPixel(p)) - static_cast<double>(input->GetPixel(q))) <= tolerance))
        {
          labels->SetPixel(q, next);
          queue.push_back(q);
        }
      }
    }
  }
  return labels;
}

template <unsigned D>
using FilterOf = CudaConnectedComponentAnalysisImageFilter<Image<unsigned char, D>, Image<unsigned int, D>>;

template <unsigned D>
typename FilterOf<D>::Pointer
MakeFilter(const Image<unsigned char, D> * input, Backend backend)
{
  auto filter = FilterOf<D>::New();
  filter->SetInput(input);
  filter->SetBackend(backend);
  return filter;
}

bool
FaceAndEdgeIn3D(Backend backend)
{
  using Volume = Image<unsigned char, 3>;
  bool          ok = true;
  std::uint32_t seed = 18;
  for (const auto & size : { Size<3>{ { 23, 19, 17 } }, Size<3>{ { 1, 40, 9 } }, Size<3>{ { 31, 1, 1 } } })
  {
    for (const unsigned g : { 1u, 3u })
    {
      for (const double density : { 0.2, 0.4, 0.6, 0.9 })
      {
        auto image = MakeRandomImage<Volume>(size, density, g, ++seed, [](std::mt19937 &) { return 1; });
        std::ostringstream what;
        what << "3-D " << size << " g=" << g << " d=" << density << " connectivity 18";
        const auto expected = FloodFill(image.GetPointer(), 2);
        auto       filter = MakeFilter<3>(image, backend);
        filter->SetConnectivity(18);
        filter->Update();
        ok = SameImage(filter->GetOutput(), expected.GetPointer(), what.str()) && ok;
        ok = FeaturesMatchBruteForce(filter.GetPointer(), what.str()) && ok;
        if (filter->GetFullyConnected())
        {
          std::cerr << what.str() << ": FullyConnected is on" << std::endl;
          ok = false;
        }
        // In slabs of a few planes (a budget far below the image's need): the same labels.
        auto slabs = MakeFilter<3>(image, backend);
        slabs->SetConnectivity(18);
        slabs->SetMemoryBudget(1);
        slabs->Update();
        ok = SameImage(slabs->GetOutput(), expected.GetPointer(), what.str() + " in slabs") && ok;
      }
    }
  }
  return ok;
}

/** SetConnectivity(count) labels as FullyConnected(fully) does, and says so. */
template <unsigned D>
bool
SameAsFullyConnected(Backend backend, unsigned count, bool fully)
{
  using InputImage = Image<unsigned char, D>;
  Size<D> size;
  for (unsigned d = 0; d < D; ++d)
  {
    size[d] = 29 + 2 * d;
  }
  auto image = MakeRandomImage<InputImage>(size, 0.5, 1, count, [](std::mt19937 &) { return 1; });
  auto counted = MakeFilter<D>(image, backend);
  counted->SetConnectivity(count);
  counted->Update();
  auto flagged = MakeFilter<D>(image, backend);
  flagged->SetFullyConnected(fully);
  flagged->Update();
  const std::string what = std::to_string(D) + "-D connectivity " + std::to_string(count);
  bool              ok = SameImage(counted->GetOutput(), flagged->GetOutput(), what);
  ok = SameImage(counted->GetOutput(), FloodFill(image.GetPointer(), fully ? D : 1).GetPointer(), what) && ok;
  if (counted->GetFullyConnected() != fully || counted->GetConnectivity() != count)
  {
    std::cerr << what << ": FullyConnected " << counted->GetFullyConnected() << ", Connectivity "
              << counted->GetConnectivity() << std::endl;
    ok = false;
  }
  // SetFullyConnected() afterwards is what decides.
  counted->SetFullyConnected(!fully);
  counted->Update();
  auto other = MakeFilter<D>(image, backend);
  other->SetFullyConnected(!fully);
  other->Update();
  ok = SameImage(counted->GetOutput(), other->GetOutput(), what + " then FullyConnected " + std::to_string(!fully)) &&
       ok;
  if (counted->GetConnectivity() != 0)
  {
    std::cerr << what << ": SetFullyConnected() left Connectivity " << counted->GetConnectivity() << std::endl;
    ok = false;
  }
  return ok;
}

/** Periodic boundaries at every connectivity and along every set of axes: random images of odd sizes and sides
 * of 1 and 2, against the flood fill over the wrapped image; the LabelMap against ITK's on those labels; in
 * slabs too. */
template <unsigned D>
bool
Periodic(Backend backend)
{
  using InputImage = Image<unsigned char, D>;
  using PeriodicType = typename FilterOf<D>::PeriodicType;
  std::vector<Size<D>> sizes;
  if constexpr (D == 2)
  {
    sizes = { Size<2>{ { 13, 11 } }, Size<2>{ { 1, 17 } }, Size<2>{ { 16, 1 } }, Size<2>{ { 2, 9 } } };
  }
  else
  {
    sizes = { Size<3>{ { 9, 8, 7 } }, Size<3>{ { 1, 6, 5 } }, Size<3>{ { 6, 2, 1 } }, Size<3>{ { 5, 4, 2 } } };
  }
  const unsigned neighbors[2][3] = { { 4, 8, 0 }, { 6, 18, 26 } };
  bool           ok = true;
  std::uint32_t  seed = 100;
  for (const auto & size : sizes)
  {
    for (unsigned maxNonZero = 1; maxNonZero <= D; ++maxNonZero)
    {
      for (unsigned axes = 1; axes < (1u << D); ++axes)
      {
        PeriodicType periodic;
        for (unsigned d = 0; d < D; ++d)
        {
          periodic[d] = ((axes >> d) & 1u) != 0;
        }
        for (const double density : { 0.3, 0.6 })
        {
          const unsigned     g = 1 + seed % 2;
          auto               image = MakeRandomImage<InputImage>(size, density, g, ++seed, [](std::mt19937 &) { return 1; });
          const unsigned     count = neighbors[D - 2][maxNonZero - 1];
          std::ostringstream what;
          what << D << "-D " << size << " d=" << density << " g=" << g << " connectivity " << count << " periodic "
               << periodic;
          const auto expected = FloodFill(image.GetPointer(), maxNonZero, periodic);
          auto       filter = MakeFilter<D>(image, backend);
          filter->SetConnectivity(count);
          filter->SetPeriodic(periodic);
          filter->Update();
          ok = SameImage(filter->GetOutput(), expected.GetPointer(), what.str()) && ok;
          ok = FeaturesMatchBruteForce(filter.GetPointer(), what.str()) && ok;
          ok = SameShapeAttributes(filter.GetPointer(), expected.GetPointer(), what.str()) && ok;
          auto slabs = MakeFilter<D>(image, backend);
          slabs->SetConnectivity(count);
          slabs->SetPeriodic(periodic);
          slabs->SetMemoryBudget(1); // a plane per slab
          slabs->Update();
          ok = SameImage(slabs->GetOutput(), expected.GetPointer(), what.str() + " in slabs") && ok;
          ok = SameShapeAttributes(slabs.GetPointer(), expected.GetPointer(), what.str() + " in slabs") && ok;
        }
      }
    }
  }
  return ok;
}

/** Value tolerance: random images of values in blocks (integers, or floats on a grid of quarters), every
 * connectivity, a few distances, with and without a mask. */
template <typename TPixel, unsigned D>
bool
ValueTolerance(Backend backend)
{
  using InputImage = Image<TPixel, D>;
  using Filter = CudaConnectedComponentAnalysisImageFilter<InputImage, Image<unsigned int, D>, InputImage>;
  const bool     isFloat = std::is_floating_point<TPixel>::value;
  const unsigned neighbors[2][3] = { { 4, 8, 0 }, { 6, 18, 26 } };
  bool           ok = true;
  std::uint32_t  seed = 300;
  Size<D>        size;
  for (unsigned d = 0; d < D; ++d)
  {
    size[d] = D == 2 ? 37 - 6 * d : 13 - 2 * d;
  }
  for (unsigned maxNonZero = 1; maxNonZero <= D; ++maxNonZero)
  {
    for (const double distance : { 0.0, 1.0, 2.5 })
    {
      for (const unsigned g : { 1u, 2u })
      {
        for (const bool masked : { false, true })
        {
          auto image = MakeRandomImage<InputImage>(size, 0.8, g, ++seed, [isFloat](std::mt19937 & random) {
            const auto v = static_cast<int>(random() % 9) - (std::is_signed<TPixel>::value ? 3 : 0);
            return static_cast<TPixel>(isFloat ? v * 0.75 : v);
          });
          auto mask = MakeRandomImage<InputImage>(size, 0.8, 1, seed * 7, [](std::mt19937 &) { return TPixel(1); });
          const unsigned     count = neighbors[D - 2][maxNonZero - 1];
          std::ostringstream what;
          what << D << "-D " << typeid(TPixel).name() << " connectivity " << count << " distance " << distance
               << " g=" << g << (masked ? " masked" : "");
          const auto expected = FloodFill(image.GetPointer(), maxNonZero, FixedArray<bool, D>::Filled(false), distance,
                                          masked ? mask.GetPointer() : nullptr);
          auto filter = Filter::New();
          filter->SetInput(image);
          filter->SetBackend(backend);
          filter->SetConnectivity(count);
          filter->SetDistanceThreshold(distance);
          if (masked)
          {
            filter->SetMaskImage(mask);
          }
          filter->Update();
          ok = SameImage(filter->GetOutput(), expected.GetPointer(), what.str()) && ok;
          ok = FeaturesMatchBruteForce(filter.GetPointer(), what.str()) && ok;
          if (maxNonZero == 1 || maxNonZero == D)
          {
            // ITK's filter labels the zero pixels too: masked out here.
            auto itkMask = InputImage::New();
            itkMask->SetRegions(size);
            itkMask->Allocate();
            for (SizeValueType i = 0; i < image->GetBufferedRegion().GetNumberOfPixels(); ++i)
            {
              itkMask->GetBufferPointer()[i] =
                image->GetBufferPointer()[i] != 0 && (!masked || mask->GetBufferPointer()[i] != 0) ? 1 : 0;
            }
            auto scalar = ScalarConnectedComponentImageFilter<InputImage, Image<unsigned int, D>, InputImage>::New();
            scalar->SetInput(image);
            scalar->SetMaskImage(itkMask);
            scalar->SetDistanceThreshold(static_cast<TPixel>(distance));
            scalar->SetFullyConnected(maxNonZero == D);
            scalar->Update();
            ok = SamePartition(filter->GetOutput(), scalar->GetOutput(), what.str() + " (ScalarConnectedComponent)") &&
                 ok;
          }
        }
      }
    }
  }
  return ok;
}

/** A distance threshold with MultiLabel, periodic boundaries or a memory budget: refused with a message. */
bool
ValueToleranceRefusals(Backend backend)
{
  using InputImage = Image<unsigned char, 2>;
  auto image = MakeRandomImage<InputImage>(Size<2>{ { 8, 8 } }, 0.5, 1, 7, [](std::mt19937 &) { return 1; });
  bool ok = true;
  for (int c = 0; c < 3; ++c)
  {
    auto filter = MakeFilter<2>(image, backend);
    filter->SetDistanceThreshold(1);
    const char * expected = c == 0   ? "multi-label input is a tolerance of 0"
                            : c == 1 ? "not joined across slabs or periodic boundaries"
                                     : "no memory budget with a value tolerance";
    if (c == 0)
    {
      filter->MultiLabelOn();
    }
    else if (c == 1)
    {
      filter->SetPeriodic(FilterOf<2>::PeriodicType::Filled(true));
    }
    else
    {
      filter->SetMemoryBudget(1);
    }
    try
    {
      filter->Update();
      std::cerr << "distance threshold: '" << expected << "' was not refused" << std::endl;
      ok = false;
    }
    catch (const ExceptionObject & e)
    {
      if (std::string(e.GetDescription()).find(expected) == std::string::npos)
      {
        std::cerr << "distance threshold: unexpected message: " << e.GetDescription() << std::endl;
        ok = false;
      }
    }
  }
  return ok;
}

/** Periodic boundaries with a feature image: refused with a message. */
bool
PeriodicWithIntensityRefused(Backend backend)
{
  using InputImage = Image<unsigned char, 2>;
  auto image = MakeRandomImage<InputImage>(Size<2>{ { 8, 8 } }, 0.5, 1, 7, [](std::mt19937 &) { return 1; });
  auto filter = MakeFilter<2>(image, backend);
  filter->SetFeatureImage(image);
  filter->SetPeriodic(FilterOf<2>::PeriodicType::Filled(true));
  try
  {
    filter->Update();
  }
  catch (const ExceptionObject & e)
  {
    if (std::string(e.GetDescription()).find("not computed with periodic boundaries") != std::string::npos)
    {
      return true;
    }
    std::cerr << "periodic with a feature image: unexpected message: " << e.GetDescription() << std::endl;
    return false;
  }
  std::cerr << "periodic with a feature image was not refused" << std::endl;
  return false;
}

template <unsigned D>
bool
Refused(Backend backend, unsigned count, const std::string & expected)
{
  auto image = Image<unsigned char, D>::New();
  Size<D> size;
  size.Fill(4);
  image->SetRegions(size);
  image->Allocate(true);
  auto filter = MakeFilter<D>(image, backend);
  filter->SetConnectivity(count);
  try
  {
    filter->Update();
  }
  catch (const ExceptionObject & e)
  {
    if (std::string(e.GetDescription()).find(expected) != std::string::npos)
    {
      return true;
    }
    std::cerr << D << "-D connectivity " << count << ": unexpected message: " << e.GetDescription() << std::endl;
    return false;
  }
  std::cerr << D << "-D connectivity " << count << " was not refused" << std::endl;
  return false;
}
} // namespace

int
itkCudaConnectedComponentAnalysisConnectivityTest(int argc, char * argv[])
{
  Backend backend;
  if (int status = StartTest(argc, argv, 2, "backend(cpu|cuda|auto)", 1, backend); status >= 0)
  {
    return status;
  }
  bool ok = FaceAndEdgeIn3D(backend);
  ok = SameAsFullyConnected<2>(backend, 4, false) && ok;
  ok = SameAsFullyConnected<2>(backend, 8, true) && ok;
  ok = SameAsFullyConnected<3>(backend, 6, false) && ok;
  ok = SameAsFullyConnected<3>(backend, 26, true) && ok;
  ok = Refused<2>(backend, 18, "4 or 8 neighbors") && ok;
  ok = Refused<3>(backend, 8, "6, 18 or 26 neighbors") && ok;
  ok = Refused<1>(backend, 4, "2 neighbors") && ok;
  ok = Periodic<2>(backend) && ok;
  ok = Periodic<3>(backend) && ok;
  ok = PeriodicWithIntensityRefused(backend) && ok;
  ok = ValueTolerance<unsigned char, 2>(backend) && ok;
  ok = ValueTolerance<short, 3>(backend) && ok;
  ok = ValueTolerance<float, 2>(backend) && ok;
  ok = ValueTolerance<double, 3>(backend) && ok;
  ok = ValueToleranceRefusals(backend) && ok;
  std::cout << (ok ? "every connectivity labels as its flood fill" : "FAILED") << std::endl;
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
