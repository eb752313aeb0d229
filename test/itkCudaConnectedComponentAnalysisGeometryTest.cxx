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
// The LabelMap's geometry at its limits, one case per argument:
//   degenerate one-pixel objects and objects one pixel thick along an index axis, under a 30 degree
//              direction: exact zero smallest moments, elongation/flatness 0 there (ITK's rule for a zero
//              denominator), and every object's moments bit-identical to those under the identity direction
//   longimage  images of 3,000,000 and 4,000,000 pixels along one axis (1 or 2 rows) get their label image
//              and LabelMap, equal to ITK's, also for a component whose 64-bit moment sums wrap
#include "itkCCATestUtilities.h"
#include "itkImageRegionIterator.h"
#include "itkLabelImageToShapeLabelMapFilter.h"

#include <cstdlib>
#include <iomanip>
#include <limits>
#include <vector>

namespace
{
using namespace itk;
using namespace itk::ccatest;

/** Draws boxes (index ranges, inclusive) into a zero image of the given size. */
template <unsigned D>
typename Image<unsigned char, D>::Pointer
BoxesImage(const Size<D> & size, const std::vector<std::pair<Index<D>, Index<D>>> & boxes)
{
  auto image = Image<unsigned char, D>::New();
  image->SetRegions(size);
  image->Allocate(true);
  for (const auto & box : boxes)
  {
    Size<D> boxSize;
    for (unsigned d = 0; d < D; ++d)
    {
      boxSize[d] = static_cast<SizeValueType>(box.second[d] - box.first[d] + 1);
    }
    ImageRegion<D> region(box.first, boxSize);
    for (ImageRegionIterator<Image<unsigned char, D>> it(image, region); !it.IsAtEnd(); ++it)
    {
      it.Set(1);
    }
  }
  return image;
}

template <unsigned D>
bool
DegenerateMoments(Backend backend, const Size<D> & size, const std::vector<std::pair<Index<D>, Index<D>>> & boxes)
{
  using InputType = Image<unsigned char, D>;
  using LabelType = Image<unsigned int, D>;
  using Filter = CudaConnectedComponentAnalysisImageFilter<InputType, LabelType>;
  auto                            image = BoxesImage<D>(size, boxes);
  typename InputType::SpacingType spacing;
  for (unsigned d = 0; d < D; ++d)
  {
    spacing[d] = 0.7 + 0.45 * d;
  }
  image->SetSpacing(spacing);
  auto straight = Filter::New();
  straight->SetInput(image);
  straight->SetBackend(backend);
  straight->Update();

  // The same pixels under a direction rotated by 30 degrees (about z in 3D) and a far origin.
  auto rotatedImage = BoxesImage<D>(size, boxes);
  rotatedImage->SetSpacing(spacing);
  typename InputType::DirectionType direction;
  direction.SetIdentity();
  const double angle = itk::Math::pi / 6;
  direction[0][0] = std::cos(angle);
  direction[0][1] = -std::sin(angle);
  direction[1][0] = std::sin(angle);
  direction[1][1] = std::cos(angle);
  rotatedImage->SetDirection(direction);
  typename InputType::PointType origin;
  origin.Fill(-1234.5);
  rotatedImage->SetOrigin(origin);
  auto rotated = Filter::New();
  rotated->SetInput(rotatedImage);
  rotated->SetBackend(backend);
  rotated->Update();

  bool ok = straight->GetLabelMap()->GetNumberOfLabelObjects() == boxes.size() &&
            rotated->GetLabelMap()->GetNumberOfLabelObjects() == boxes.size();
  for (unsigned n = 0; ok && n < boxes.size(); ++n)
  {
    const auto * a = straight->GetLabelMap()->GetNthLabelObject(n);
    const auto * b = rotated->GetLabelMap()->GetNthLabelObject(n);
    // Labels follow raster order: the object's box is the one that starts at its bounding box's index.
    unsigned flatAxes = D + 1; // index axes along which the box is one pixel thick
    for (const auto & box : boxes)
    {
      if (box.first == a->GetBoundingBox().GetIndex())
      {
        flatAxes = 0;
        for (unsigned d = 0; d < D; ++d)
        {
          flatAxes += box.first[d] == box.second[d] ? 1 : 0;
        }
      }
    }
    ok = ok && flatAxes <= D;
    const auto & moments = b->GetPrincipalMoments();
    std::cout << D << "D object " << n + 1 << " (" << flatAxes << " flat axes): moments " << moments << ", elongation "
              << b->GetElongation() << ", flatness " << b->GetFlatness() << std::endl;
    bool objectOk = a->GetPrincipalMoments() == b->GetPrincipalMoments() && a->GetElongation() == b->GetElongation() &&
                    a->GetFlatness() == b->GetFlatness();
    for (unsigned i = 0; i < flatAxes; ++i)
    {
      objectOk = objectOk && moments[i] == 0.0;
    }
    for (unsigned i = flatAxes; i < D; ++i)
    {
      objectOk = objectOk && moments[i] > 0.0;
    }
    if (flatAxes >= 1)
    {
      // ITK's rule: a zero denominator gives 0 (flatness divides by the smallest, elongation by the
      // second largest moment).
      objectOk = objectOk && b->GetFlatness() == 0.0;
      objectOk = objectOk && (flatAxes < D - 1 || b->GetElongation() == 0.0);
    }
    if (!objectOk)
    {
      std::cerr << "object " << n + 1 << ": moments differ from the identity direction's " << a->GetPrincipalMoments()
                << " or are not exact" << std::endl;
    }
    ok = ok && objectOk;
  }
  return ok;
}

bool
DegenerateCase(Backend backend)
{
  using I2 = Index<2>;
  using I3 = Index<3>;
  bool ok = DegenerateMoments<2>(backend,
                                 Size<2>{ { 20, 12 } },
                                 { { I2{ { 1, 1 } }, I2{ { 1, 1 } } },     // one pixel
                                   { I2{ { 4, 1 } }, I2{ { 5, 1 } } },     // two pixels in a row
                                   { I2{ { 8, 1 } }, I2{ { 8, 6 } } },     // a column
                                   { I2{ { 11, 2 } }, I2{ { 17, 2 } } },   // a row
                                   { I2{ { 2, 8 } }, I2{ { 6, 10 } } } }); // a box
  ok = DegenerateMoments<3>(backend,
                            Size<3>{ { 16, 10, 8 } },
                            { { I3{ { 1, 1, 1 } }, I3{ { 1, 1, 1 } } },     // one voxel
                              { I3{ { 4, 1, 1 } }, I3{ { 9, 1, 1 } } },     // a line along x
                              { I3{ { 12, 1, 0 } }, I3{ { 12, 1, 6 } } },   // a line along z
                              { I3{ { 1, 4, 3 } }, I3{ { 6, 8, 3 } } },     // a plate, one slice thick
                              { I3{ { 9, 4, 2 } }, I3{ { 9, 7, 6 } } },     // a plate, one column thick
                              { I3{ { 12, 5, 3 } }, I3{ { 14, 8, 6 } } } }) // a box
       && ok;
  return ok;
}

template <unsigned D>
bool
LongImage(Backend backend, const typename Image<unsigned char, D>::SizeType & size, SizeValueType solidFrom)
{
  using InputType = Image<unsigned char, D>;
  using LabelType = Image<unsigned int, D>;
  auto image = MakeRandomImage<InputType>(size, 0.1, 1, 6, [](std::mt19937 &) { return 1; });
  // One solid stretch along the longest axis from `solidFrom` to its end, in the first row: a component of
  // millions of pixels reaching the last index, whose Σq² passes 2^64 when the side does (~2.6·10^6 pixels).
  unsigned longAxis = 0;
  for (unsigned d = 1; d < D; ++d)
  {
    longAxis = size[d] > size[longAxis] ? d : longAxis;
  }
  typename InputType::IndexType index{};
  for (index[longAxis] = static_cast<IndexValueType>(solidFrom);
       index[longAxis] < static_cast<IndexValueType>(size[longAxis]);
       ++index[longAxis])
  {
    image->SetPixel(index, 1);
  }
  auto spacing = image->GetSpacing();
  spacing[longAxis] = 0.25; // physical moments at another scale than the index ones
  image->SetSpacing(spacing);
  auto filter = CudaConnectedComponentAnalysisImageFilter<InputType, LabelType>::New();
  filter->SetInput(image);
  filter->SetBackend(backend);
  ITK_TRY_EXPECT_NO_EXCEPTION(filter->Update());
  auto reference = ConnectedComponentImageFilter<InputType, LabelType>::New();
  reference->SetInput(image);
  using MapType = typename CudaConnectedComponentAnalysisImageFilter<InputType, LabelType>::LabelMapType;
  auto shape = LabelImageToShapeLabelMapFilter<LabelType, MapType>::New();
  shape->SetInput(reference->GetOutput());
  shape->SetNumberOfWorkUnits(
    1); // multi-threaded, ITK splits lines of 1-row images (docs/filter.md, "Differences from ITK")
  shape->Update();
  std::ostringstream what;
  what << "image " << size;
  bool            ok = SameImage(filter->GetOutput(), reference->GetOutput(), what.str());
  const MapType * ours = filter->GetLabelMap();
  const MapType * theirs = shape->GetOutput();
  ok = ok && ours->GetNumberOfLabelObjects() == theirs->GetNumberOfLabelObjects();
  auto          close = [](double x, double y, double scale) { return std::abs(x - y) <= 1e-9 * scale; };
  SizeValueType largestObject = 0;
  typename MapType::ConstIterator io(ours), it(theirs);
  for (SizeValueType i = 0; ok && !it.IsAtEnd(); ++i, ++io, ++it)
  {
    const auto * x = io.GetLabelObject();
    const auto * y = it.GetLabelObject();
    largestObject = std::max(largestObject, y->GetNumberOfPixels());
    ok = x->GetLabel() == y->GetLabel() && x->GetNumberOfPixels() == y->GetNumberOfPixels() &&
         x->GetBoundingBox() == y->GetBoundingBox() && x->GetNumberOfPixelsOnBorder() == y->GetNumberOfPixelsOnBorder();
    for (unsigned d = 0; ok && d < D; ++d)
    {
      ok = close(x->GetCentroid()[d], y->GetCentroid()[d], 1.0 + std::abs(y->GetCentroid()[d]));
    }
    ok = ok && close(x->GetPerimeter(), y->GetPerimeter(), y->GetPerimeter());
    // Second moments: the long component's come from its lines (its 64-bit sums wrapped), the others' from
    // the engine's sums. ITK sums physical coordinates in double, hence the tolerance on the largest.
    // ITK's E[x²] − E[x]², summed over N pixels in double, is off by up to N ulps of |centroid|² (worst-case
    // summation): the absolute floor. Ours is exact, checked below on the solid stretch.
    const auto & xm = x->GetPrincipalMoments();
    const auto & ym = y->GetPrincipalMoments();
    const double largest = std::abs(ym[D - 1]);
    double       residue = 0;
    for (unsigned d = 0; d < D; ++d)
    {
      residue = std::max(residue,
                         static_cast<double>(y->GetNumberOfPixels()) * std::numeric_limits<double>::epsilon() *
                           y->GetCentroid()[d] * y->GetCentroid()[d]);
    }
    for (unsigned d = 0; ok && d < D; ++d)
    {
      ok = std::abs(xm[d] - ym[d]) <= std::max(1e-9 * largest, residue);
    }
    if (ok && D > 1 && std::abs(ym[D - 2]) > std::max(1e-9 * largest, residue))
    {
      // ITK's residue on the smaller moment carries over to the ratio, relatively
      const double relative = std::max(1e-9, residue / std::abs(ym[D - 2]));
      ok = std::abs(x->GetElongation() - y->GetElongation()) <= relative * y->GetElongation();
    }
    if (!ok)
    {
      std::cerr << std::setprecision(17) << what.str() << ": object " << i << " (" << y->GetNumberOfPixels()
                << " pixels) differs from ITK's: moments " << xm << " vs " << ym << ", residue " << residue
                << std::endl;
    }
  }
  // In a one-row image the stretch is a component of L pixels in a row: its variance (L² − 1)/12·spacing².
  if (ok && size[longAxis] == image->GetLargestPossibleRegion().GetNumberOfPixels())
  {
    index[longAxis] = static_cast<IndexValueType>(size[longAxis]) - 1;
    const auto * stretch = ours->GetLabelObject(filter->GetOutput()->GetPixel(index));
    const double length = static_cast<double>(size[longAxis] - solidFrom);
    const double exact = (length * length - 1) / 12 * spacing[longAxis] * spacing[longAxis];
    ok = stretch->GetNumberOfPixels() == size[longAxis] - solidFrom &&
         std::abs(stretch->GetPrincipalMoments()[D - 1] - exact) <= 1e-12 * exact;
    if (!ok)
    {
      std::cerr << std::setprecision(17) << what.str() << ": the stretch's moment " << stretch->GetPrincipalMoments()
                << ", exact " << exact << std::endl;
    }
  }
  std::cout << what.str() << ": " << filter->GetObjectCount() << " objects, the largest " << largestObject
            << " pixels, LabelMap equal to ITK's: " << ok << std::endl;
  return ok;
}

bool
LongImageCase(Backend backend)
{
  // Below the 64-bit bound of the whole image (the engine's sums), then past it: 4,000,000 pixels along x
  // and a component of 3,600,000 (N·max² ≈ 5.8·10^19), in one row and with a second row along y or z (cross
  // moments). Long along z only below the bound: ITK's perimeter allocates a deque per (y, z) row of an
  // object's bounding box, gigabytes for a long component along z.
  bool ok = LongImage<2>(backend, Size<2>{ { 3000000, 1 } }, 2000000);
  ok = LongImage<3>(backend, Size<3>{ { 1, 1, 3000000 } }, 2990000) && ok;
  ok = LongImage<2>(backend, Size<2>{ { 4000000, 1 } }, 400000) && ok;
  ok = LongImage<2>(backend, Size<2>{ { 4000000, 2 } }, 400000) && ok;
  ok = LongImage<3>(backend, Size<3>{ { 4000000, 1, 2 } }, 400000) && ok;
  return ok;
}

} // namespace

int
itkCudaConnectedComponentAnalysisGeometryTest(int argc, char * argv[])
{
  return RunNamedCase(argc, argv, { { "degenerate", DegenerateCase }, { "longimage", LongImageCase } });
}
