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
// Multi-label input: MultiLabelOn(), PerClassOn(), OutputClassValuesOn() against ITK, one case per
// argument, on random class maps (densities × granularities × numbers of classes, odd sizes, 1×1, 1×N, N×1,
// both connectivities, 2D and 3D, with and without a mask, unsigned and signed classes):
//   labels    the label image equals a loop of ConnectedComponentImageFilter over the classes, each class's
//             components numbered together in raster order of their first pixel; the same partition as
//             ScalarConnectedComponentImageFilter with a distance of 0 (masked to the non-zero pixels: ITK 5.2's
//             functor filter labels zero pixels too); every component's ClassValue is its pixels' value; the
//             features recounted from the labels; the LabelMap's attributes (perimeter and moments included)
//             equal LabelImageToShapeLabelMapFilter's on the expected labels
//   perclass  NumberOfObjectsToKeep per class (1, 2), MinimumObjectSize, sorted or not: the label image equals
//             a loop over the classes of ConnectedComponentImageFilter → RelabelComponentImageFilter keeping its
//             N first labels, numbered together; with OutputClassValues the cleaned segmentation (the input where
//             a kept component is, 0 elsewhere)
//   refusals  float input, PerClass or OutputClassValues without MultiLabel, class values that do not fit the
//             output type: each an ExceptionObject naming the reason
//   slabs     MemoryBudget 1 (one plane per slab, every plane a cut): labels, classes, the LabelMap and the per-class
//             clean-up equal the reference, as whole
//   real      class maps made from the bundled images (the MRI volume Anatomical.nii.gz, the CT slice CTSlice.mha):
//             five intensity bands as classes; labels, LabelMap and per-class clean-up as in `labels` and
//             `perclass` (arguments: the two files)
//   automatic an image above the size rule (24,576 pixels) on the Automatic backend: the CUDA engine where there is a device, else
//             the CPU engine, the same labels
// Each case runs on the backend its second argument names (cpu, cuda, auto): the CUDA engine labels multi-label
// input too (value breaks in the bitmask, runs of equal value merged; itkCCAMultiLabelStages.cu).
#include "itkCCALabelMapComparison.h"
#include "itkCCATestUtilities.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkImageFileReader.h"
#include "itkLabelImageToShapeLabelMapFilter.h"
#include "itkRelabelComponentImageFilter.h"
#include "itkScalarConnectedComponentImageFilter.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace
{
using namespace itk;
using namespace itk::ccatest;

/** A class map: blocks of g pixels on with probability `density`, each on block's pixels of one class drawn from
 * `classes` (the blocks of a class touch often, so components cross blocks and classes meet face to face). */
template <typename TImage>
typename TImage::Pointer
MakeClassMap(const typename TImage::SizeType & size, double density, unsigned granularity, std::uint32_t seed,
             const std::vector<typename TImage::PixelType> & classes)
{
  auto         onOff = MakeRandomImage<TImage>(size, density, granularity, seed, [](std::mt19937 &) { return 1; });
  std::mt19937 rng(seed ^ 0x9e3779b9u);
  constexpr unsigned             D = TImage::ImageDimension;
  std::map<SizeValueType, typename TImage::PixelType> classOfBlock;
  for (ImageRegionIteratorWithIndex<TImage> it(onOff, onOff->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
  {
    if (it.Get() == 0)
    {
      continue;
    }
    SizeValueType block = 0;
    for (int d = D - 1; d >= 0; --d)
    {
      block = block * (size[d] / granularity + 1) + it.GetIndex()[d] / granularity;
    }
    auto found = classOfBlock.find(block);
    if (found == classOfBlock.end())
    {
      found = classOfBlock.emplace(block, classes[rng() % classes.size()]).first;
    }
    it.Set(found->second);
  }
  return onOff;
}

/** Pixels of `image` equal to `value` (and, with `mask`, where the mask is not zero): 1, else 0. */
template <typename TImage, typename TMask>
typename TMask::Pointer
ClassMask(const TImage * image, typename TImage::PixelType value, const TMask * mask)
{
  auto out = TMask::New();
  out->CopyInformation(image);
  out->SetRegions(image->GetBufferedRegion());
  out->Allocate();
  const SizeValueType n = image->GetBufferedRegion().GetNumberOfPixels();
  for (SizeValueType i = 0; i < n; ++i)
  {
    const bool on = image->GetBufferPointer()[i] == value && (!mask || mask->GetBufferPointer()[i] != 0);
    out->GetBufferPointer()[i] = on ? 1 : 0;
  }
  return out;
}

/** One component of the reference: its class and its label in that class's labeling by ITK. */
using ClassComponent = std::pair<std::int64_t, std::uint64_t>;

/** ITK's answer: ConnectedComponentImageFilter (then, with `keep` > 0 or `minimumSize` > 0,
 * RelabelComponentImageFilter sorted by size, keeping its `keep` first labels) on each class's pixels; per pixel
 * its (class, label) or (0, 0) for background. */
template <typename TImage, typename TMask>
std::vector<ClassComponent>
PerClassReference(const TImage * image, const TMask * mask, bool fullyConnected, SizeValueType keep,
                  SizeValueType minimumSize)
{
  using LabelImageType = Image<unsigned int, TImage::ImageDimension>;
  const SizeValueType                   n = image->GetBufferedRegion().GetNumberOfPixels();
  std::set<typename TImage::PixelType> classes(image->GetBufferPointer(), image->GetBufferPointer() + n);
  classes.erase(0);
  std::vector<ClassComponent> out(n, ClassComponent{ 0, 0 });
  for (const auto c : classes)
  {
    auto cc = ConnectedComponentImageFilter<TMask, LabelImageType>::New();
    cc->SetInput(ClassMask(image, c, mask));
    cc->SetFullyConnected(fullyConnected);
    auto relabel = RelabelComponentImageFilter<LabelImageType, LabelImageType>::New();
    relabel->SetInput(cc->GetOutput());
    relabel->SetSortByObjectSize(true);
    relabel->SetMinimumObjectSize(minimumSize);
    const bool post = keep > 0 || minimumSize > 0;
    if (post)
    {
      relabel->Update();
    }
    else
    {
      cc->Update();
    }
    const LabelImageType * labels = post ? relabel->GetOutput() : cc->GetOutput();
    for (SizeValueType i = 0; i < n; ++i)
    {
      const unsigned int l = labels->GetBufferPointer()[i];
      if (l != 0 && (keep == 0 || l <= keep))
      {
        out[i] = ClassComponent{ static_cast<std::int64_t>(c), l };
      }
    }
  }
  return out;
}

/** The reference's components numbered 1, 2, ... together: in raster order of their first pixel, or, with
 * `bySize`, by decreasing size with ties in that order (RelabelComponentImageFilter's rule). */
template <typename TLabelImage>
typename TLabelImage::Pointer
NumberTogether(const std::vector<ClassComponent> & reference, const ImageBase<TLabelImage::ImageDimension> * like,
               bool bySize)
{
  std::map<ClassComponent, std::uint64_t> rasterIndex;
  std::vector<std::uint64_t>              size;
  for (const ClassComponent & c : reference)
  {
    if (c.second == 0)
    {
      continue;
    }
    const auto found = rasterIndex.emplace(c, rasterIndex.size());
    if (found.second)
    {
      size.push_back(0);
    }
    ++size[found.first->second];
  }
  std::vector<std::uint64_t> order(size.size());
  std::iota(order.begin(), order.end(), std::uint64_t{ 0 });
  if (bySize)
  {
    std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) { return size[a] > size[b]; });
  }
  std::vector<std::uint64_t> label(order.size());
  for (std::size_t j = 0; j < order.size(); ++j)
  {
    label[order[j]] = j + 1;
  }
  auto out = TLabelImage::New();
  out->CopyInformation(like);
  out->SetRegions(like->GetLargestPossibleRegion());
  out->Allocate();
  for (std::size_t i = 0; i < reference.size(); ++i)
  {
    out->GetBufferPointer()[i] =
      reference[i].second == 0
        ? 0
        : static_cast<typename TLabelImage::PixelType>(label[rasterIndex.find(reference[i])->second]);
  }
  return out;
}

/** The cleaned segmentation the reference describes: each kept pixel's class, 0 elsewhere. */
template <typename TLabelImage>
typename TLabelImage::Pointer
ClassImage(const std::vector<ClassComponent> & reference, const ImageBase<TLabelImage::ImageDimension> * like)
{
  auto out = TLabelImage::New();
  out->CopyInformation(like);
  out->SetRegions(like->GetLargestPossibleRegion());
  out->Allocate();
  for (std::size_t i = 0; i < reference.size(); ++i)
  {
    out->GetBufferPointer()[i] = static_cast<typename TLabelImage::PixelType>(reference[i].first);
  }
  return out;
}

template <unsigned D>
std::vector<typename Image<short, D>::SizeType>
Sizes()
{
  std::vector<typename Image<short, D>::SizeType> sizes;
  if constexpr (D == 2)
  {
    sizes = { { { 37, 29 } }, { { 1, 1 } }, { { 1, 23 } }, { { 23, 1 } }, { { 64, 48 } }, { { 100, 13 } } };
  }
  else
  {
    sizes = { { { 13, 11, 9 } }, { { 1, 1, 1 } }, { { 1, 1, 17 } }, { { 17, 1, 1 } }, { { 24, 20, 16 } },
              { { 70, 9, 7 } } };
  }
  return sizes;
}

template <typename TInput, unsigned D>
bool
LabelsCase(Backend backend, const std::vector<TInput> & classes)
{
  using InputType = Image<TInput, D>;
  using MaskType = Image<unsigned char, D>;
  using LabelType = Image<unsigned int, D>;
  bool          ok = true;
  std::uint32_t seed = 17;
  for (const auto & size : Sizes<D>())
  {
    for (const double density : { 0.3, 0.6, 0.9, 1.0 })
    {
      for (const unsigned granularity : { 1u, 2u, 4u })
      {
        for (const std::size_t numberOfClasses : { std::size_t{ 1 }, std::size_t{ 2 }, classes.size() })
        {
          const std::vector<TInput> used(classes.begin(), classes.begin() + static_cast<std::ptrdiff_t>(numberOfClasses));
          const auto image = MakeClassMap<InputType>(size, density, granularity, ++seed, used);
          const auto mask =
            MakeRandomImage<MaskType>(size, 0.8, 3, seed + 1000, [](std::mt19937 &) { return 1; });
          for (const bool fully : { false, true })
          {
            for (const bool masked : { false, true })
            {
              std::ostringstream what;
              what << D << "D " << size << " d " << density << " g " << granularity << " classes " << numberOfClasses
                   << " fully " << fully << " masked " << masked;
              auto filter = CudaConnectedComponentAnalysisImageFilter<InputType, LabelType, MaskType>::New();
              filter->SetInput(image);
              filter->SetBackend(backend);
              filter->SetFullyConnected(fully);
              filter->MultiLabelOn();
              filter->SetNumberOfWorkUnits(5); // blocks of rows whose boundaries cut components
              if (masked)
              {
                filter->SetMaskImage(mask);
              }
              filter->Update();
              const MaskType * m = masked ? mask.GetPointer() : nullptr;
              const auto       reference = PerClassReference(image.GetPointer(), m, fully, 0, 0);
              const auto       expected = NumberTogether<LabelType>(reference, image, false);
              ok = ok && SameImage(filter->GetOutput(), expected.GetPointer(), what.str()) &&
                   FeaturesMatchBruteForce(filter.GetPointer(), what.str()) &&
                   SameShapeAttributes(filter.GetPointer(), expected.GetPointer(), what.str());
              // ScalarConnectedComponentImageFilter, distance 0, zero pixels masked out: the same partition.
              auto scalarMask = ClassMask<InputType, MaskType>(image, 0, m);
              for (SizeValueType i = 0; i < image->GetBufferedRegion().GetNumberOfPixels(); ++i)
              {
                scalarMask->GetBufferPointer()[i] =
                  image->GetBufferPointer()[i] != 0 && (!m || m->GetBufferPointer()[i] != 0) ? 1 : 0;
              }
              auto scalar = ScalarConnectedComponentImageFilter<InputType, LabelType, MaskType>::New();
              scalar->SetInput(image);
              scalar->SetMaskImage(scalarMask);
              scalar->SetDistanceThreshold(0);
              scalar->SetFullyConnected(fully);
              scalar->Update();
              ok = ok && SamePartition(filter->GetOutput(), scalar->GetOutput(), what.str() + " (scalar CC)");
              // Each component's class: the value of its pixels.
              for (SizeValueType i = 0; ok && i < image->GetBufferedRegion().GetNumberOfPixels(); ++i)
              {
                const unsigned int l = filter->GetOutput()->GetBufferPointer()[i];
                if (l != 0 &&
                    filter->GetComponentFeatures()[l - 1].ClassValue !=
                      static_cast<std::int64_t>(image->GetBufferPointer()[i]))
                {
                  std::cerr << what.str() << ": component " << l << " has class "
                            << filter->GetComponentFeatures()[l - 1].ClassValue << ", its pixel "
                            << static_cast<std::int64_t>(image->GetBufferPointer()[i]) << std::endl;
                  ok = false;
                }
              }
              if (!ok)
              {
                return false;
              }
            }
          }
        }
      }
    }
  }
  return ok;
}

template <unsigned D>
bool
PerClassCase(Backend backend)
{
  using InputType = Image<unsigned char, D>;
  using LabelType = Image<unsigned int, D>;
  bool          ok = true;
  std::uint32_t seed = 4711;
  for (const auto & size : Sizes<D>())
  {
    for (const double density : { 0.4, 0.7 })
    {
      for (const unsigned granularity : { 1u, 2u })
      {
        const auto image = MakeClassMap<InputType>(size, density, granularity, ++seed, { 1, 2, 7 });
        for (const SizeValueType keep : { SizeValueType{ 1 }, SizeValueType{ 2 } })
        {
          for (const SizeValueType minimumSize : { SizeValueType{ 0 }, SizeValueType{ 3 } })
          {
            for (const bool sort : { false, true })
            {
              for (const bool fully : { false, true })
              {
                std::ostringstream what;
                what << D << "D " << size << " d " << density << " g " << granularity << " keep " << keep << " min "
                     << minimumSize << " sort " << sort << " fully " << fully;
                const auto reference =
                  PerClassReference<InputType, InputType>(image, nullptr, fully, keep, minimumSize);
                auto run = [&](bool classValues) {
                  auto filter = CudaConnectedComponentAnalysisImageFilter<InputType, LabelType>::New();
                  filter->SetInput(image);
                  filter->SetBackend(backend);
                  filter->SetFullyConnected(fully);
                  filter->MultiLabelOn();
                  filter->PerClassOn();
                  filter->SetNumberOfObjectsToKeep(keep);
                  filter->SetMinimumObjectSize(minimumSize);
                  filter->SetSortByObjectSize(sort);
                  filter->SetOutputClassValues(classValues);
                  filter->SetNumberOfWorkUnits(3);
                  filter->Update();
                  return filter;
                };
                const auto numbered = run(false);
                const auto expected = NumberTogether<LabelType>(reference, image, sort);
                ok = ok && SameImage(numbered->GetOutput(), expected.GetPointer(), what.str()) &&
                     FeaturesMatchBruteForce(numbered.GetPointer(), what.str());
                // The cleaned segmentation: the class of each kept pixel, 0 elsewhere.
                const auto cleaned = run(true);
                const auto expectedClasses = ClassImage<LabelType>(reference, image);
                ok = ok && SameImage(cleaned->GetOutput(), expectedClasses.GetPointer(), what.str() + " class values") &&
                     cleaned->GetObjectCount() == numbered->GetObjectCount();
                if (!ok)
                {
                  std::cerr << what.str() << ": failed" << std::endl;
                  return false;
                }
              }
            }
          }
        }
      }
    }
  }
  return ok;
}

/** Runs `update` and expects an ExceptionObject whose description contains `needle`. */
template <typename TUpdate>
bool
Refused(const TUpdate & update, const std::string & needle, const std::string & what)
{
  try
  {
    update();
  }
  catch (const ExceptionObject & e)
  {
    if (std::string(e.GetDescription()).find(needle) != std::string::npos)
    {
      return true;
    }
    std::cerr << what << ": refused, but with \"" << e.GetDescription() << "\"" << std::endl;
    return false;
  }
  std::cerr << what << ": not refused" << std::endl;
  return false;
}

bool
RefusalsCase(Backend backend)
{
  using FloatImage = Image<float, 2>;
  using ShortImage = Image<unsigned short, 2>;
  using LabelImage = Image<unsigned int, 2>;
  using ByteLabelImage = Image<unsigned char, 2>;
  Image<float, 2>::SizeType size{ { 9, 7 } };
  bool                      ok = true;

  auto floats = MakeClassMap<FloatImage>(size, 0.5, 2, 1, { 1.0f, 2.5f });
  auto floatFilter = CudaConnectedComponentAnalysisImageFilter<FloatImage, LabelImage>::New();
  floatFilter->SetInput(floats);
  floatFilter->SetBackend(backend);
  floatFilter->MultiLabelOn();
  ok = Refused([&]() { floatFilter->Update(); }, "integer pixel type", "float input") && ok;

  auto classes = MakeClassMap<ShortImage>(size, 0.8, 2, 2, { 3, 300 });
  auto noMulti = CudaConnectedComponentAnalysisImageFilter<ShortImage, LabelImage>::New();
  noMulti->SetInput(classes);
  noMulti->SetBackend(backend);
  noMulti->PerClassOn();
  ok = Refused([&]() { noMulti->Update(); }, "MultiLabelOn", "PerClass without MultiLabel") && ok;
  noMulti->PerClassOff();
  noMulti->OutputClassValuesOn();
  ok = Refused([&]() { noMulti->Update(); }, "MultiLabelOn", "OutputClassValues without MultiLabel") && ok;

  auto narrow = CudaConnectedComponentAnalysisImageFilter<ShortImage, ByteLabelImage>::New();
  narrow->SetInput(classes);
  narrow->SetBackend(backend);
  narrow->MultiLabelOn();
  narrow->OutputClassValuesOn();
  narrow->GenerateLabelMapOff();
  ok = Refused([&]() { narrow->Update(); }, "does not fit the output pixel type", "class 300 into uint8") && ok;

  narrow->OutputClassValuesOff(); // and the same filter labels once its output holds what it writes
  narrow->Update();
  ok = ok && narrow->GetObjectCount() > 0;
  return ok;
}

/** MemoryBudget 1: one plane per slab, so that every plane is a cut where classes meet, join and part. */
template <unsigned D>
bool
SlabsCase(Backend backend)
{
  using InputType = Image<unsigned char, D>;
  using LabelType = Image<unsigned int, D>;
  bool          ok = true;
  std::uint32_t seed = 808;
  for (const auto & size : Sizes<D>())
  {
    if (size[D - 1] < 2)
    {
      continue; // one plane: no cut
    }
    for (const double density : { 0.5, 0.9 })
    {
      const auto image = MakeClassMap<InputType>(size, density, 2, ++seed, { 1, 2, 9 });
      for (const bool fully : { false, true })
      {
        std::ostringstream what;
        what << D << "D " << size << " d " << density << " fully " << fully << " in slabs";
        auto filter = CudaConnectedComponentAnalysisImageFilter<InputType, LabelType>::New();
        filter->SetInput(image);
        filter->SetBackend(backend);
        filter->SetFullyConnected(fully);
        filter->MultiLabelOn();
        filter->SetMemoryBudget(1);
        filter->Update();
        const auto expected = NumberTogether<LabelType>(
          PerClassReference<InputType, InputType>(image, nullptr, fully, 0, 0), image, false);
        ok = ok && filter->GetNumberOfSlabs() == size[D - 1] &&
             SameImage(filter->GetOutput(), expected.GetPointer(), what.str()) &&
             FeaturesMatchBruteForce(filter.GetPointer(), what.str()) &&
             SameShapeAttributes(filter.GetPointer(), expected.GetPointer(), what.str());
        for (SizeValueType i = 0; ok && i < image->GetBufferedRegion().GetNumberOfPixels(); ++i)
        {
          const unsigned int l = filter->GetOutput()->GetBufferPointer()[i];
          ok = l == 0 || filter->GetComponentFeatures()[l - 1].ClassValue == image->GetBufferPointer()[i];
        }
        // The largest component of each class, written back as its class.
        filter->PerClassOn();
        filter->SetNumberOfObjectsToKeep(1);
        filter->OutputClassValuesOn();
        filter->Update();
        const auto cleaned =
          ClassImage<LabelType>(PerClassReference<InputType, InputType>(image, nullptr, fully, 1, 0), image);
        ok = ok && SameImage(filter->GetOutput(), cleaned.GetPointer(), what.str() + " cleaned");
        if (!ok)
        {
          std::cerr << what.str() << ": failed (" << filter->GetNumberOfSlabs() << " slabs)" << std::endl;
          return false;
        }
      }
    }
  }
  return ok;
}

/** The bundled images of the `real` case (argv[3], argv[4]). */
std::string g_Volume;
std::string g_Slice;

/** A class map from a real image: its intensities in five bands between quantiles (0: the lowest 30 %, classes 1 to
 * 4 above, 4 the top 5 %), so that the classes follow the anatomy: nested, touching shells and many islands. */
template <unsigned D>
typename Image<unsigned char, D>::Pointer
BandsOf(const std::string & fileName)
{
  auto reader = ImageFileReader<Image<float, D>>::New();
  reader->SetFileName(fileName);
  reader->Update();
  const auto *        image = reader->GetOutput();
  const SizeValueType n = image->GetBufferedRegion().GetNumberOfPixels();
  std::vector<float>  sorted(image->GetBufferPointer(), image->GetBufferPointer() + n);
  std::sort(sorted.begin(), sorted.end());
  const float cuts[4] = { sorted[n * 30 / 100], sorted[n * 60 / 100], sorted[n * 85 / 100], sorted[n * 95 / 100] };
  auto        classes = Image<unsigned char, D>::New();
  classes->CopyInformation(image);
  classes->SetRegions(image->GetBufferedRegion());
  classes->Allocate();
  for (SizeValueType i = 0; i < n; ++i)
  {
    const float   v = image->GetBufferPointer()[i];
    unsigned char c = 0;
    for (const float cut : cuts)
    {
      c += v > cut ? 1 : 0;
    }
    classes->GetBufferPointer()[i] = c;
  }
  return classes;
}

template <unsigned D>
bool
RealImageCase(Backend backend, const std::string & fileName)
{
  using InputType = Image<unsigned char, D>;
  using LabelType = Image<unsigned int, D>;
  const auto image = BandsOf<D>(fileName);
  bool       ok = true;
  for (const bool fully : { false, true })
  {
    const std::string what = fileName + (fully ? " full" : " face");
    auto              filter = CudaConnectedComponentAnalysisImageFilter<InputType, LabelType>::New();
    filter->SetInput(image);
    filter->SetBackend(backend);
    filter->SetFullyConnected(fully);
    filter->MultiLabelOn();
    filter->Update();
    const auto expected =
      NumberTogether<LabelType>(PerClassReference<InputType, InputType>(image, nullptr, fully, 0, 0), image, false);
    std::cout << what << ": " << filter->GetObjectCount() << " components of 4 classes" << std::endl;
    ok = ok && filter->GetObjectCount() > 10 && SameImage(filter->GetOutput(), expected.GetPointer(), what) &&
         FeaturesMatchBruteForce(filter.GetPointer(), what) &&
         SameShapeAttributes(filter.GetPointer(), expected.GetPointer(), what);
    // nnU-Net's clean-up: the largest component of each class, written back as the class
    filter->PerClassOn();
    filter->SetNumberOfObjectsToKeep(1);
    filter->OutputClassValuesOn();
    filter->Update();
    const auto cleaned =
      ClassImage<LabelType>(PerClassReference<InputType, InputType>(image, nullptr, fully, 1, 0), image);
    ok = ok && filter->GetObjectCount() == 4 && SameImage(filter->GetOutput(), cleaned.GetPointer(), what + " cleaned");
  }
  return ok;
}

bool
AutomaticCase(Backend)
{
  using InputType = Image<unsigned char, 3>;
  using LabelType = Image<unsigned int, 3>;
  const auto image = MakeClassMap<InputType>({ { 40, 40, 41 } }, 0.6, 2, 99, { 1, 2, 3 }); // above the automatic backend's size rule
  auto       automatic = CudaConnectedComponentAnalysisImageFilter<InputType, LabelType>::New();
  automatic->SetInput(image);
  automatic->MultiLabelOn();
  automatic->Update();
  const auto expected = NumberTogether<LabelType>(PerClassReference<InputType, InputType>(image, nullptr, false, 0, 0),
                                                  image, false);
  const Backend expectedBackend = cca::GetCudaDeviceCount() > 0 ? Backend::CUDA : Backend::CPU;
  if (automatic->GetBackendUsed() != expectedBackend)
  {
    std::cerr << "automatic backend: ran on " << automatic->GetBackendUsed() << ", expected " << expectedBackend
              << std::endl;
    return false;
  }
  return SameImage(automatic->GetOutput(), expected.GetPointer(), "automatic backend") &&
         SameShapeAttributes(automatic.GetPointer(), expected.GetPointer(), "automatic backend");
}

} // namespace

int
itkCudaConnectedComponentAnalysisMultiLabelTest(int argc, char * argv[])
{
  if (argc > 4)
  {
    g_Volume = argv[3];
    g_Slice = argv[4];
  }
  return RunNamedCase(
    argc,
    argv,
    { { "labels",
        [](Backend b) {
          return LabelsCase<unsigned char, 2>(b, { 1, 2, 255, 7, 8 }) && LabelsCase<short, 2>(b, { -3, 5, -1, 2 }) &&
                 LabelsCase<unsigned char, 3>(b, { 1, 2, 255, 7, 8 }) && LabelsCase<std::int64_t, 3>(b, { -9, 1, 4 });
        } },
      { "perclass", [](Backend b) { return PerClassCase<2>(b) && PerClassCase<3>(b); } },
      { "refusals", RefusalsCase },
      { "slabs", [](Backend b) { return SlabsCase<2>(b) && SlabsCase<3>(b); } },
      { "real", [](Backend b) { return RealImageCase<3>(b, g_Volume) && RealImageCase<2>(b, g_Slice); } },
      { "automatic", AutomaticCase } });
}
