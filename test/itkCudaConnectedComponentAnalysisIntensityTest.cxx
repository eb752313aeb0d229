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
// Intensity statistics from a feature image: SetFeatureImage() against ITK's
// LabelImageToStatisticsLabelMapFilter, one case per argument:
//   random    binary random images (densities × granularities, odd sizes, 1×1, 1×N, N×1, both connectivities, 2D
//             and 3D) with a spacing, an origin and a rotation; feature images of float (mixed signs), short,
//             unsigned char (many equal values: the minimum's and maximum's index is the last in raster order, as
//             ITK's `v <= min`), double, and constant ones (every pixel ties): each object's StatisticsLabelObject
//             attributes (but the median and the histogram, which are not computed) equal ITK's on our label image
//             (itself ITK's, checked), and the intensity table equals the LabelMap; two updates give bit-identical
//             tables
//   selection multi-label input with the per-class clean-up (the largest of each class) and a minimum size: the
//             statistics of the kept objects, renumbered, equal ITK's on the cleaned label image; the same bits on
//             1 and 5 work units
//   real      the bundled MRI volume and CT slice as feature images, their intensity bands as the labels (arguments:
//             the two files)
//   refusals  a feature image of another size, with a MemoryBudget, of a vector pixel type, and the table without a
//             feature image: each an ExceptionObject naming the reason
// Tolerances: ITK sums v, v², v³, v⁴ and v·p·pᵀ in physical space in one order, the engines in another (the CUDA
// engine by chunks of runs), so values agree to 1e-9 of the terms that cancel in ITK's formulas: the variance to
// 1e-9 of max|v|², the skewness and kurtosis to 1e-9 of (max|v|/σ)³ and ⁴, the center of gravity and the weighted
// moments to 1e-9 of N·max|v|/|Σv| times the coordinates' scale. Minimum, maximum and their indices are exact.
#include "itkCCALabelMapComparison.h"
#include "itkCCATestUtilities.h"
#include "itkConnectedComponentImageFilter.h"
#include "itkImageFileReader.h"
#include "itkLabelImageToStatisticsLabelMapFilter.h"
#include "itkVectorImage.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

namespace
{
using namespace itk;
using namespace itk::ccatest;

template <unsigned D>
using LabelImage = Image<unsigned int, D>;
template <unsigned D>
using StatisticsMap = LabelMap<StatisticsLabelObject<unsigned int, D>>;
template <typename TInput, unsigned D>
using FilterOf = CudaConnectedComponentAnalysisImageFilter<TInput, LabelImage<D>, TInput, StatisticsMap<D>>;

/** A spacing, an origin far from 0 and a rotation (3D: about z and x; 2D: 30 degrees). */
template <typename TImage>
void
SetGeometry(TImage * image)
{
  constexpr unsigned         D = TImage::ImageDimension;
  typename TImage::SpacingType spacing;
  typename TImage::PointType   origin;
  const double                 s[3] = { 0.7, 1.3, 2.1 };
  const double                 o[3] = { -250.0, 40.5, 1000.0 };
  for (unsigned d = 0; d < D; ++d)
  {
    spacing[d] = s[d];
    origin[d] = o[d];
  }
  typename TImage::DirectionType direction;
  direction.SetIdentity();
  if (D >= 2)
  {
    const double a = 0.5235987755982988; // 30 degrees
    direction[0][0] = std::cos(a);
    direction[0][1] = -std::sin(a);
    direction[1][0] = std::sin(a);
    direction[1][1] = std::cos(a);
  }
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
}

template <typename TFeature>
typename TFeature::Pointer
MakeFeature(const typename TFeature::SizeType & size, std::uint32_t seed, double low, double high)
{
  using PixelType = typename TFeature::PixelType;
  auto feature = TFeature::New();
  feature->SetRegions(size);
  feature->Allocate();
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> uniform(low, high);
  for (ImageRegionIterator<TFeature> it(feature, feature->GetBufferedRegion()); !it.IsAtEnd(); ++it)
  {
    const double v = uniform(rng);
    it.Set(std::is_integral<PixelType>::value ? static_cast<PixelType>(std::floor(v)) : static_cast<PixelType>(v));
  }
  return feature;
}

/** Our LabelMap's statistics against ITK's on `labels` and `feature`; `table` (the filter's intensity table) must
 * hold the LabelMap's values. */
template <unsigned D, typename TFeature>
bool
SameStatistics(const StatisticsMap<D> * ours, const vnl_matrix<double> & table, const LabelImage<D> * labels,
               const TFeature * feature, const std::string & what)
{
  auto reference = LabelImageToStatisticsLabelMapFilter<LabelImage<D>, TFeature, StatisticsMap<D>>::New();
  reference->SetInput(labels);
  reference->SetFeatureImage(feature);
  reference->SetBackgroundValue(0);
  reference->SetComputePerimeter(false);
  reference->Update();
  const StatisticsMap<D> * itk = reference->GetOutput();
  if (ours->GetNumberOfLabelObjects() != itk->GetNumberOfLabelObjects() || table.rows() != itk->GetNumberOfLabelObjects())
  {
    std::cerr << what << ": " << ours->GetNumberOfLabelObjects() << " objects, " << table.rows() << " table rows vs ITK "
              << itk->GetNumberOfLabelObjects() << std::endl;
    return false;
  }
  // The coordinates' scale: the largest |p| over the image's corners.
  double coordinateScale = 1;
  {
    const auto & region = labels->GetLargestPossibleRegion();
    for (unsigned corner = 0; corner < (1u << D); ++corner)
    {
      typename LabelImage<D>::IndexType index = region.GetIndex();
      for (unsigned d = 0; d < D; ++d)
      {
        index[d] += (corner >> d & 1u) ? static_cast<IndexValueType>(region.GetSize(d)) : 0;
      }
      typename LabelImage<D>::PointType p;
      labels->TransformIndexToPhysicalPoint(index, p);
      for (unsigned d = 0; d < D; ++d)
      {
        coordinateScale = std::max(coordinateScale, std::abs(p[d]));
      }
    }
  }
  bool          ok = true;
  SizeValueType row = 0;
  for (typename StatisticsMap<D>::ConstIterator it(itk); !it.IsAtEnd() && ok; ++it, ++row)
  {
    const auto * r = it.GetLabelObject();
    if (!ours->HasLabel(r->GetLabel()))
    {
      std::cerr << what << ": label " << r->GetLabel() << " missing" << std::endl;
      return false;
    }
    const auto *      o = ours->GetLabelObject(r->GetLabel());
    const std::string w = what + " label " + std::to_string(r->GetLabel());
    const double      n = static_cast<double>(r->GetNumberOfPixels());
    const double      m = std::max({ std::abs(r->GetMinimum()), std::abs(r->GetMaximum()), 1e-300 });
    if (o->GetNumberOfPixels() != r->GetNumberOfPixels() || o->GetMinimum() != r->GetMinimum() ||
        o->GetMaximum() != r->GetMaximum() || o->GetMinimumIndex() != r->GetMinimumIndex() ||
        o->GetMaximumIndex() != r->GetMaximumIndex())
    {
      std::cerr << w << ": pixels " << o->GetNumberOfPixels() << "/" << r->GetNumberOfPixels() << ", minimum "
                << o->GetMinimum() << " at " << o->GetMinimumIndex() << " vs ITK " << r->GetMinimum() << " at "
                << r->GetMinimumIndex() << ", maximum " << o->GetMaximum() << " at " << o->GetMaximumIndex()
                << " vs ITK " << r->GetMaximum() << " at " << r->GetMaximumIndex() << std::endl;
      return false;
    }
    ok = Close(o->GetSum(), r->GetSum(), n * m, w + " Sum") && ok;
    ok = Close(o->GetMean(), r->GetMean(), m, w + " Mean") && ok;
    ok = Close(o->GetVariance(), r->GetVariance(), m * m * n / std::max(n - 1, 1.0), w + " Variance") && ok;
    const double sigma = r->GetStandardDeviation();
    ok = Close(o->GetStandardDeviation(), sigma, m * m / std::max(sigma, 1e-300), w + " StandardDeviation") && ok;
    if (sigma > 1e-6 * m)
    {
      ok = Close(o->GetSkewness(), r->GetSkewness(), 6 * std::pow(m / sigma, 3), w + " Skewness") && ok;
      ok = Close(o->GetKurtosis(), r->GetKurtosis(), 14 * std::pow(m / sigma, 4), w + " Kurtosis") && ok;
    }
    const double mass = std::abs(r->GetSum());
    const double conditioning = mass > 0 ? n * m / mass : 0;
    const bool   massive = mass > 1e-6 * n * m; // else ITK's weighted attributes divide its own rounding
    if (massive)
    {
      for (unsigned d = 0; d < D; ++d)
      {
        ok = Close(o->GetCenterOfGravity()[d], r->GetCenterOfGravity()[d], conditioning * coordinateScale,
                   w + " CenterOfGravity") &&
             ok;
      }
      const auto & rm = r->GetWeightedPrincipalMoments();
      const auto & om = o->GetWeightedPrincipalMoments();
      double       largest = 0;
      for (unsigned d = 0; d < D; ++d)
      {
        largest = std::max(largest, std::abs(rm[d]));
      }
      const double residue = 1e-13 * conditioning * coordinateScale * coordinateScale;
      for (unsigned d = 0; d < D; ++d)
      {
        ok = Close(om[d], rm[d], largest, w + " WeightedPrincipalMoments", residue) && ok;
      }
      if (std::abs(rm[0]) > 1e3 * residue && (D < 2 || std::abs(rm[D - 2]) > 1e3 * residue))
      {
        double ratioRounding = 0;
        for (unsigned d = 0; d < D; ++d)
        {
          ratioRounding += 1e3 * residue / std::abs(rm[d]);
        }
        ok = Close(o->GetWeightedElongation(), r->GetWeightedElongation(), 0, w + " WeightedElongation",
                   ratioRounding * std::abs(r->GetWeightedElongation())) &&
             ok;
        ok = Close(o->GetWeightedFlatness(), r->GetWeightedFlatness(), 0, w + " WeightedFlatness",
                   ratioRounding * std::abs(r->GetWeightedFlatness())) &&
             ok;
        // The axes where the moments are distinct, each up to its sign (the solver's choice; see
        // itkCCALabelMapComparison.h)
        double gap = std::numeric_limits<double>::max();
        for (unsigned d = 0; d + 1 < D; ++d)
        {
          gap = std::min(gap, std::abs(rm[d + 1] - rm[d]) / std::max(largest, residue));
        }
        if (gap > 1e-6)
        {
          // an axis moves by the moments' error over their gap
          bool flipped = false;
          ok = CloseAxesUpToSign<D>(o->GetWeightedPrincipalAxes(), r->GetWeightedPrincipalAxes(), 1,
                                    10 * residue / (gap * largest), w + " WeightedPrincipalAxes", flipped) &&
               ok;
        }
      }
    }
    // The table holds the LabelMap's values, in label order.
    if (ok)
    {
      const vnl_vector<double> t = table.get_row(row);
      const double             expected[] = { static_cast<double>(o->GetLabel()), o->GetMinimum(), o->GetMaximum(),
                                  o->GetSum(), o->GetMean(), o->GetStandardDeviation(), o->GetVariance(),
                                  o->GetSkewness(), o->GetKurtosis() };
      bool same = true;
      for (unsigned c = 0; c < 9; ++c)
      {
        same = same && (t[c] == expected[c] || (std::isnan(t[c]) && std::isnan(expected[c])));
      }
      for (unsigned d = 0; d < D; ++d)
      {
        same = same && t[9 + d] == o->GetCenterOfGravity()[d] &&
               t[9 + D + d] == static_cast<double>(o->GetMinimumIndex()[d]) &&
               t[9 + 2 * D + d] == static_cast<double>(o->GetMaximumIndex()[d]);
      }
      if (!same)
      {
        std::cerr << w << ": the intensity table's row differs from the LabelMap's object" << std::endl;
        ok = false;
      }
    }
  }
  return ok;
}

/** Labels and statistics of `input` with `feature` on `backend`. */
template <typename TInput, typename TFeature>
auto
AnalyzeWithFeature(const TInput * input, const TFeature * feature, Backend backend, bool fully)
{
  auto filter = FilterOf<TInput, TInput::ImageDimension>::New();
  filter->SetInput(input);
  filter->SetFeatureImage(feature);
  filter->SetBackend(backend);
  filter->SetFullyConnected(fully);
  filter->Update();
  return filter;
}

/** Whether two tables are equal bit for bit (NaN included). */
bool
BitIdentical(const vnl_matrix<double> & a, const vnl_matrix<double> & b)
{
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.size() == 0 || std::memcmp(a.data_block(), b.data_block(), a.size() * sizeof(double)) == 0);
}

template <unsigned D, typename TFeature>
bool
RandomCaseOf(Backend backend, const typename LabelImage<D>::SizeType & size, double low, double high,
             std::uint32_t seed)
{
  using InputType = Image<unsigned char, D>;
  bool ok = true;
  for (const double density : { 0.2, 0.5, 0.8 })
  {
    for (const unsigned granularity : { 1u, 4u })
    {
      auto input = MakeRandomImage<InputType>(size, density, granularity, seed, [](std::mt19937 &) { return 1; });
      auto feature = MakeFeature<TFeature>(size, seed + 1, low, high);
      SetGeometry(input.GetPointer());
      SetGeometry(feature.GetPointer());
      for (const bool fully : { false, true })
      {
        std::ostringstream what;
        what << D << "D " << size << " d=" << density << " g=" << granularity << (fully ? " full" : " face") << " "
             << typeid(typename TFeature::PixelType).name();
        auto filter = AnalyzeWithFeature(input.GetPointer(), feature.GetPointer(), backend, fully);
        // Our label image is ITK's (checked here too, as the statistics are compared on it).
        auto itkLabels = ConnectedComponentImageFilter<InputType, LabelImage<D>>::New();
        itkLabels->SetInput(input);
        itkLabels->SetFullyConnected(fully);
        itkLabels->Update();
        const vnl_matrix<double> table = filter->GetIntensityFeatureTable();
        ok = ok && SameImage(filter->GetOutput(), itkLabels->GetOutput(), what.str()) &&
             SameStatistics<D>(filter->GetLabelMap(), table, itkLabels->GetOutput(), feature.GetPointer(), what.str());
        // Repeated: the same bits (the CUDA engine's chunks are joined in a fixed order).
        filter->Modified();
        filter->Update();
        if (!BitIdentical(table, filter->GetIntensityFeatureTable()))
        {
          std::cerr << what.str() << ": a second update's intensity table differs" << std::endl;
          ok = false;
        }
      }
      ++seed;
    }
  }
  return ok;
}

bool
RandomCase(Backend backend)
{
  return RandomCaseOf<2, Image<float, 2>>(backend, { { 97, 61 } }, -100.0, 1000.0, 1) &&
         RandomCaseOf<2, Image<unsigned char, 2>>(backend, { { 130, 67 } }, 0.0, 256.0, 2) &&
         RandomCaseOf<2, Image<short, 2>>(backend, { { 1, 1 } }, -1024.0, 3000.0, 3) &&
         RandomCaseOf<2, Image<short, 2>>(backend, { { 1, 301 } }, -1024.0, 3000.0, 4) &&
         RandomCaseOf<2, Image<double, 2>>(backend, { { 301, 1 } }, 0.5, 2.0, 5) &&
         RandomCaseOf<3, Image<short, 3>>(backend, { { 31, 29, 17 } }, -1024.0, 3000.0, 6) &&
         RandomCaseOf<3, Image<unsigned char, 3>>(backend, { { 40, 33, 21 } }, 0.0, 4.0, 7) &&
         RandomCaseOf<3, Image<float, 3>>(backend, { { 17, 23, 29 } }, 1.0, 500.0, 8) &&
         // constant features: every pixel ties, and the last one in raster order must give both indices, also where
         // a long run (32 pixels or more) precedes short ones among the 32 runs a CUDA warp sums together
         RandomCaseOf<2, Image<unsigned char, 2>>(backend, { { 300, 41 } }, 5.0, 6.0, 9) &&
         RandomCaseOf<3, Image<short, 3>>(backend, { { 70, 9, 7 } }, 7.0, 8.0, 10);
}

bool
SelectionCase(Backend backend)
{
  constexpr unsigned D = 3;
  using InputType = Image<unsigned char, D>;
  using FeatureType = Image<float, D>;
  const typename InputType::SizeType size{ { 45, 37, 23 } };
  // three classes in blocks of 2 pixels
  auto input = MakeRandomImage<InputType>(size, 0.6, 2, 11, [](std::mt19937 & rng) { return 1 + rng() % 3; });
  auto feature = MakeFeature<FeatureType>(size, 12, 0.0, 100.0);
  auto filter = FilterOf<InputType, D>::New();
  filter->SetInput(input);
  filter->SetFeatureImage(feature);
  filter->SetBackend(backend);
  filter->MultiLabelOn();
  filter->PerClassOn();
  filter->SetNumberOfObjectsToKeep(1);
  filter->Update();
  bool ok = filter->GetObjectCount() == 3 &&
            SameStatistics<D>(filter->GetLabelMap(), filter->GetIntensityFeatureTable(), filter->GetOutput(),
                              feature.GetPointer(), "per-class largest");
  // The same bits on one work unit and on five (the CPU engine sums each component on one thread).
  const vnl_matrix<double> table = filter->GetIntensityFeatureTable();
  for (const unsigned units : { 1u, 5u })
  {
    filter->SetNumberOfWorkUnits(units);
    filter->Update();
    if (!BitIdentical(table, filter->GetIntensityFeatureTable()))
    {
      std::cerr << "per-class largest: the intensity table differs on " << units << " work units" << std::endl;
      ok = false;
    }
  }
  filter->SetNumberOfObjectsToKeep(0);
  filter->PerClassOff();
  filter->SetMinimumObjectSize(5);
  filter->SortByObjectSizeOn();
  filter->Update();
  std::cout << "minimum size 5, sorted: " << filter->GetObjectCount() << " of " << filter->GetOriginalObjectCount()
            << " components kept" << std::endl;
  ok = ok && filter->GetObjectCount() > 3 && filter->GetObjectCount() < filter->GetOriginalObjectCount() &&
       SameStatistics<D>(filter->GetLabelMap(), filter->GetIntensityFeatureTable(), filter->GetOutput(),
                         feature.GetPointer(), "minimum size, sorted");
  return ok;
}

std::string g_Volume;
std::string g_Slice;

/** The real image as the feature image; the label image: its upper 40 % of intensities (binary input). */
template <unsigned D>
bool
RealCaseOf(Backend backend, const std::string & fileName)
{
  using FeatureType = Image<float, D>;
  using InputType = Image<unsigned char, D>;
  auto reader = ImageFileReader<FeatureType>::New();
  reader->SetFileName(fileName);
  reader->Update();
  const FeatureType * feature = reader->GetOutput();
  const SizeValueType n = feature->GetBufferedRegion().GetNumberOfPixels();
  std::vector<float>  sorted(feature->GetBufferPointer(), feature->GetBufferPointer() + n);
  std::sort(sorted.begin(), sorted.end());
  const float cut = sorted[n * 60 / 100];
  auto        input = InputType::New();
  input->CopyInformation(feature);
  input->SetRegions(feature->GetBufferedRegion());
  input->Allocate();
  for (SizeValueType i = 0; i < n; ++i)
  {
    input->GetBufferPointer()[i] = feature->GetBufferPointer()[i] > cut ? 1 : 0;
  }
  bool ok = true;
  for (const bool fully : { false, true })
  {
    auto              filter = AnalyzeWithFeature(input.GetPointer(), feature, backend, fully);
    const std::string what = fileName + (fully ? " full" : " face");
    std::cout << what << ": " << filter->GetObjectCount() << " components" << std::endl;
    ok = ok && filter->GetObjectCount() > 10 &&
         SameStatistics<D>(filter->GetLabelMap(), filter->GetIntensityFeatureTable(), filter->GetOutput(), feature, what);
  }
  return ok;
}

template <typename TFunction>
bool
Refused(const TFunction & function, const std::string & expected, const std::string & what)
{
  try
  {
    function();
  }
  catch (const ExceptionObject & e)
  {
    if (std::string(e.GetDescription()).find(expected) != std::string::npos)
    {
      std::cout << what << ": refused (" << e.GetDescription() << ")" << std::endl;
      return true;
    }
    std::cerr << what << ": refused with \"" << e.GetDescription() << "\", expected it to name \"" << expected << "\""
              << std::endl;
    return false;
  }
  std::cerr << what << ": not refused" << std::endl;
  return false;
}

bool
RefusalsCase(Backend backend)
{
  using InputType = Image<unsigned char, 2>;
  auto input = MakeRandomImage<InputType>({ { 20, 10 } }, 0.5, 1, 3, [](std::mt19937 &) { return 1; });
  auto other = MakeFeature<Image<float, 2>>({ { 20, 11 } }, 4, 0, 1);
  auto filter = FilterOf<InputType, 2>::New();
  filter->SetInput(input);
  filter->SetBackend(backend);
  filter->Update();
  bool ok = Refused([&]() { filter->GetIntensityFeatureTable(); }, "no feature image", "table without a feature image");
  filter->SetFeatureImage(other);
  ok = Refused([&]() { filter->Update(); }, "feature image's size", "feature image of another size") && ok;
  auto feature = MakeFeature<Image<float, 2>>({ { 20, 10 } }, 5, 0, 1);
  filter->SetFeatureImage(feature);
  filter->SetMemoryBudget(1000);
  ok = Refused([&]() { filter->Update(); }, "memory budget", "feature image with a memory budget") && ok;
  filter->SetMemoryBudget(0);
  auto vectors = VectorImage<float, 2>::New();
  vectors->SetRegions(input->GetLargestPossibleRegion());
  vectors->SetNumberOfComponentsPerPixel(2);
  vectors->Allocate();
  filter->SetFeatureImage(vectors);
  ok = Refused([&]() { filter->Update(); }, "scalar pixel type", "feature image of vectors") && ok;
  return ok;
}

} // namespace

int
itkCudaConnectedComponentAnalysisIntensityTest(int argc, char * argv[])
{
  if (argc > 4)
  {
    g_Volume = argv[3];
    g_Slice = argv[4];
  }
  return RunNamedCase(argc,
                      argv,
                      { { "random", RandomCase },
                        { "selection", SelectionCase },
                        { "real", [](Backend b) { return RealCaseOf<3>(b, g_Volume) && RealCaseOf<2>(b, g_Slice); } },
                        { "refusals", RefusalsCase } });
}
