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
// The LabelMap output against LabelImageToShapeLabelMapFilter run on ITK's own labels: every
// attribute of every object, on paper-style random images with anisotropic spacing, a non-zero origin
// and a rotated direction; then downstream LabelMap filters on both maps.
// Arguments: backend (cpu | cuda | auto), fullyConnected (0 | 1), dimension (2 | 3), extras (0 | 1:
// Feret diameter and oriented bounding box on, perimeter off).
//
// Tolerances (the reason for each is that ITK computes in floating point what we compute from exact
// integer sums): direct quantities 1e-9 relative. Second moments: ITK accumulates Σppᵀ in physical
// coordinates and subtracts ccᵀ, which leaves a residue of about 1e-16·|p|² even for a single pixel;
// moments are therefore compared to 1e-9 relative of the largest |λ|, or within 1e-13·|p|²max (the
// residue, with a margin of about 500) where that is larger. Ratios of moments
// (elongation, flatness, ellipsoid diameters) are compared only where ITK's denominator is above that
// residue, to 1e-9 relative or, where larger, the relative rounding of the ITK moments they divide,
// Σᵢ 1e-15·|p|²max/|λᵢ|: on a 1201×601 image (|p|²max 3.3e6) ITK's smaller moment of a 3-pixel object is
// off by 1.9e-10 (6e-17·|p|²max), which moves its elongation by 1.4e-9 relative. Principal axes (and the
// oriented box, built on them) are compared only where the eigenvalues are apart by more than 1e-6 relative, since for
// equal eigenvalues any rotation of the axes is an answer. The test counts and prints how many comparisons each rule
// skipped. ITK's reference runs with one work unit: multi-threaded, LabelImageToShapeLabelMapFilter splits lines at
// work-unit boundaries where it splits an image along x (1-row images), which changes the lines and, through their
// count, the perimeter. Single-threaded its lines are whole runs.
#include "itkCCALabelMapComparison.h"
#include "itkCCATestUtilities.h"
#include "itkLabelImageToShapeLabelMapFilter.h"
#include "itkLabelMapToLabelImageFilter.h"
#include "itkShapeKeepNObjectsLabelMapFilter.h"
#include "itkShapeOpeningLabelMapFilter.h"
#include "itkShapeRelabelLabelMapFilter.h"
#include "itkStatisticsLabelObject.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <type_traits>

namespace
{
using namespace itk;
using namespace itk::ccatest;

/** Runs a downstream LabelMap filter on both maps and compares the resulting label images. */
template <typename TLabelMap, typename TFilter, typename TLabelImage>
bool
SameDownstream(typename TFilter::Pointer onOurs, typename TFilter::Pointer onITKs, const TLabelMap * ours,
               const TLabelMap * reference, const std::string & what)
{
  onOurs->SetInput(ours);
  onITKs->SetInput(reference);
  auto toImage = [](const TLabelMap * map) {
    auto f = LabelMapToLabelImageFilter<TLabelMap, TLabelImage>::New();
    f->SetInput(map);
    f->Update();
    typename TLabelImage::Pointer image = f->GetOutput();
    image->DisconnectPipeline();
    return image;
  };
  onOurs->Update();
  onITKs->Update();
  auto a = toImage(onOurs->GetOutput());
  auto b = toImage(onITKs->GetOutput());
  return SameImage(a.GetPointer(), b.GetPointer(), what);
}

/** VStatisticsLabelMap: the filter's LabelMap is LabelMap<StatisticsLabelObject<unsigned long, D>> (its
 * fourth template parameter; the type the Python wrapping uses) instead of the default
 * LabelMap<ShapeLabelObject<label pixel type, D>>. `workUnits` (0: ITK's default) sets our filter's; with
 * `coarse`, fewer granularities and densities (for the larger images). */
template <unsigned D, bool VStatisticsLabelMap>
bool
RunSweep(Backend backend, bool fullyConnected, bool extras, const std::vector<Size<D>> & sizes, unsigned workUnits = 0,
         bool coarse = false, SizeValueType memoryBudget = 0)
{
  using InputImageType = Image<unsigned char, D>;
  using LabelImageType = Image<unsigned int, D>;
  using DefaultFilterType = CudaConnectedComponentAnalysisImageFilter<InputImageType, LabelImageType>;
  using LabelMapType = std::conditional_t<VStatisticsLabelMap,
                                          LabelMap<StatisticsLabelObject<SizeValueType, D>>,
                                          typename DefaultFilterType::LabelMapType>;
  using FilterType =
    CudaConnectedComponentAnalysisImageFilter<InputImageType, LabelImageType, InputImageType, LabelMapType>;
  static_assert(VStatisticsLabelMap || std::is_same<LabelMapType, LabelMap<ShapeLabelObject<unsigned int, D>>>::value,
                "the default LabelMap type is LabelMap<ShapeLabelObject<label pixel type, D>>");

  // anisotropic spacing, non-zero origin, rotated direction (about z by 30°, then about x by 20° in 3D)
  typename InputImageType::SpacingType   spacing;
  typename InputImageType::PointType     origin;
  typename InputImageType::DirectionType direction;
  direction.SetIdentity();
  const double spacings[3] = { 0.7, 1.3, 2.1 }, origins[3] = { -158.1, 37.5, 12.25 };
  for (unsigned d = 0; d < D; ++d)
  {
    spacing[d] = spacings[d];
    origin[d] = origins[d];
  }
  if (D >= 2)
  {
    const double a = 30.0 * Math::pi / 180.0;
    direction[0][0] = std::cos(a);
    direction[0][1] = -std::sin(a);
    direction[1][0] = std::sin(a);
    direction[1][1] = std::cos(a);
  }
  if (D == 3)
  {
    typename InputImageType::DirectionType rx;
    rx.SetIdentity();
    const double b = 20.0 * Math::pi / 180.0;
    rx[1 % D][1 % D] = std::cos(b);
    rx[1 % D][2 % D] = -std::sin(b);
    rx[2 % D][1 % D] = std::sin(b);
    rx[2 % D][2 % D] = std::cos(b);
    direction = rx * direction;
  }

  Counters      counters;
  bool          ok = true;
  std::uint32_t seed = 77;
  for (const auto & size : sizes)
  {
    double extent = 0;
    for (unsigned d = 0; d < D; ++d)
    {
      extent += std::abs(origin[d]) + size[d] * spacing[d];
    }
    for (unsigned g : { 1u, 2u, 4u, 16u })
    {
      if (coarse && (g == 2 || g == 16))
      {
        continue;
      }
      for (int step = 0; step <= 10; step += (extras ? 3 : (coarse ? 2 : 1)))
      {
        const double density = step / 10.0;
        auto image = MakeRandomImage<InputImageType>(size, density, g, ++seed, [](std::mt19937 &) { return 1; });
        image->SetSpacing(spacing);
        image->SetOrigin(origin);
        image->SetDirection(direction);
        std::ostringstream what;
        what << "size " << size << " g=" << g << " d=" << density << " fully=" << fullyConnected;

        auto ours = FilterType::New();
        ours->SetInput(image);
        ours->SetBackend(backend);
        ours->SetFullyConnected(fullyConnected);
        if (workUnits != 0)
        {
          ours->SetNumberOfWorkUnits(workUnits);
        }
        ours->SetComputePerimeter(!extras);
        ours->SetComputeFeretDiameter(extras);
        ours->SetComputeOrientedBoundingBox(extras);
        ours->SetMemoryBudget(memoryBudget);
        ours->Update();
        // A budget of one byte: one plane per slab, every plane a cut.
        if (memoryBudget == 1 && ours->GetNumberOfSlabs() != (D > 1 ? size[D - 1] : 1))
        {
          std::cerr << what.str() << ": " << ours->GetNumberOfSlabs() << " slabs, one per plane expected" << std::endl;
          return false;
        }

        auto cc = ConnectedComponentImageFilter<InputImageType, LabelImageType>::New();
        cc->SetInput(image);
        cc->SetFullyConnected(fullyConnected);
        auto shape = LabelImageToShapeLabelMapFilter<LabelImageType, LabelMapType>::New();
        shape->SetInput(cc->GetOutput());
        shape->SetNumberOfWorkUnits(1);
        shape->SetComputePerimeter(!extras);
        shape->SetComputeFeretDiameter(extras);
        shape->SetComputeOrientedBoundingBox(extras);
        shape->Update();

        ok = CompareLabelMaps(
               ours->GetLabelMap(), shape->GetOutput(), !extras, extras, extent * extent, counters, what.str()) &&
             ok;

        // LabelMapToLabelImageFilter on our map gives our label image
        auto back = LabelMapToLabelImageFilter<LabelMapType, LabelImageType>::New();
        back->SetInput(ours->GetLabelMap());
        back->Update();
        ok = SameImage(back->GetOutput(), ours->GetOutput(), what.str() + " LabelMapToLabelImage") && ok;

        if (!extras && step % 3 == 1)
        {
          using Opening = ShapeOpeningLabelMapFilter<LabelMapType>;
          auto o1 = Opening::New(), o2 = Opening::New();
          for (auto * o : { o1.GetPointer(), o2.GetPointer() })
          {
            o->SetAttribute(LabelMapType::LabelObjectType::PERIMETER);
            o->SetLambda(10.0);
            o->SetInPlace(false);
          }
          ok = SameDownstream<LabelMapType, Opening, LabelImageType>(
                 o1, o2, ours->GetLabelMap(), shape->GetOutput(), what.str() + " ShapeOpening") &&
               ok;
          using KeepN = ShapeKeepNObjectsLabelMapFilter<LabelMapType>;
          auto k1 = KeepN::New(), k2 = KeepN::New();
          for (auto * k : { k1.GetPointer(), k2.GetPointer() })
          {
            k->SetAttribute(LabelMapType::LabelObjectType::NUMBER_OF_PIXELS);
            k->SetNumberOfObjects(5);
            k->SetInPlace(false);
          }
          ok = SameDownstream<LabelMapType, KeepN, LabelImageType>(
                 k1, k2, ours->GetLabelMap(), shape->GetOutput(), what.str() + " ShapeKeepNObjects") &&
               ok;
          using Relabel = ShapeRelabelLabelMapFilter<LabelMapType>;
          auto r1 = Relabel::New(), r2 = Relabel::New();
          for (auto * r : { r1.GetPointer(), r2.GetPointer() })
          {
            r->SetAttribute(LabelMapType::LabelObjectType::PHYSICAL_SIZE);
            r->SetInPlace(false);
          }
          ok = SameDownstream<LabelMapType, Relabel, LabelImageType>(
                 r1, r2, ours->GetLabelMap(), shape->GetOutput(), what.str() + " ShapeRelabel") &&
               ok;
        }
        if (!ok)
        {
          return false;
        }
      }
    }
  }
  std::cout << counters.objects << " objects compared; ratio comparisons skipped (ITK denominator at its residue): "
            << counters.ratioSkipped << "; axes skipped (equal eigenvalues): " << counters.axesSkipped
            << "; axes equal up to the sign of rows: " << counters.axesSignFlipped << std::endl;
  return ok;
}

} // namespace

int
itkCudaConnectedComponentAnalysisLabelMapTest(int argc, char * argv[])
{
  Backend backend = Backend::CPU;
  if (const int start =
        StartTest(argc, argv, 5, "backend fullyConnected dimension extras [statistics|blocks]", 1, backend);
      start >= 0)
  {
    return start;
  }
  const bool     fully = std::stoi(argv[2]) != 0;
  const unsigned dimension = std::stoul(argv[3]);
  const bool     extras = std::stoi(argv[4]) != 0;
  const bool     statistics = argc > 5 && std::string(argv[5]) == "statistics";
  // "slabs": the image labeled in slabs of one plane (a memory budget of one byte), each plane a cut to merge.
  const bool slabs = argc > 5 && std::string(argv[5]) == "slabs";
  // "blocks": images large enough for the CPU engine to split into several blocks of rows, on 8 work units
  // whatever the machine: a component's lines then come from several blocks, placed by several threads,
  // and must still be in ITK's order.
  const bool blocks = argc > 5 && std::string(argv[5]) == "blocks";
  bool       ok = false;
  if (blocks && dimension == 2)
  {
    using S = Size<2>;
    const std::vector<S> sizes{ S{ { 1201, 601 } } };
    ok = RunSweep<2, false>(backend, fully, extras, sizes, 8, true);
  }
  else if (blocks)
  {
    using S = Size<3>;
    const std::vector<S> sizes{ S{ { 129, 101, 71 } } };
    ok = RunSweep<3, false>(backend, fully, extras, sizes, 8, true);
  }
  else if (slabs && dimension == 2)
  {
    using S = Size<2>;
    const std::vector<S> sizes{ S{ { 1, 40 } }, S{ { 31, 33 } }, S{ { 157, 93 } } };
    ok = RunSweep<2, false>(backend, fully, extras, sizes, 0, true, 1);
  }
  else if (slabs)
  {
    using S = Size<3>;
    const std::vector<S> sizes{ S{ { 1, 1, 30 } }, S{ { 17, 19, 23 } } };
    ok = RunSweep<3, false>(backend, fully, extras, sizes, 0, true, 1);
  }
  else if (dimension == 2)
  {
    using S = Size<2>;
    const std::vector<S> sizes{ S{ { 1, 1 } }, S{ { 1, 40 } }, S{ { 40, 1 } }, S{ { 31, 33 } }, S{ { 157, 93 } } };
    ok =
      statistics ? RunSweep<2, true>(backend, fully, extras, sizes) : RunSweep<2, false>(backend, fully, extras, sizes);
  }
  else
  {
    using S = Size<3>;
    const std::vector<S> sizes{ S{ { 1, 1, 1 } }, S{ { 1, 1, 9 } }, S{ { 17, 9, 5 } }, S{ { 33, 31, 29 } } };
    ok =
      statistics ? RunSweep<3, true>(backend, fully, extras, sizes) : RunSweep<3, false>(backend, fully, extras, sizes);
  }
  std::cout << (ok ? "LabelMap identical to ITK's" : "MISMATCH") << std::endl;
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
