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
// The comparison of our LabelMap with ITK's LabelImageToShapeLabelMapFilter's, attribute by attribute, with the
// tolerances (and their reasons) that itkCudaConnectedComponentAnalysisLabelMapTest.cxx's header describes: the
// LabelMap test and the multi-label test use it.
#ifndef itkCCALabelMapComparison_h
#define itkCCALabelMapComparison_h

#include "itkCCATestUtilities.h"
#include "itkLabelImageToShapeLabelMapFilter.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <string>

namespace itk
{
namespace ccatest
{

struct Counters
{
  std::size_t objects = 0;
  std::size_t comparisons = 0;
  std::size_t ratioSkipped = 0;
  std::size_t axesSkipped = 0;
  std::size_t axesSignFlipped = 0; ///< axes equal to ITK's up to the sign of rows (see CompareLabelMaps)
};

inline bool
Close(double ours, double itk, double scale, const std::string & what, double absoluteFloor = 0)
{
  if (std::isnan(ours) != std::isnan(itk))
  {
    std::cerr << what << ": NaN mismatch " << ours << " vs ITK " << itk << std::endl;
    return false;
  }
  if (std::isnan(itk) || ours == itk)
  {
    return true;
  }
  const double tolerance = std::max(1e-9 * std::max({ std::abs(ours), std::abs(itk), scale }), absoluteFloor);
  if (std::abs(ours - itk) > tolerance)
  {
    std::cerr << std::setprecision(17) << what << ": " << ours << " vs ITK " << itk << " (tolerance " << tolerance
              << ")" << std::endl;
    return false;
  }
  return true;
}

/** Principal axes (rows of `ours` against ITK's `itk`, D × D) equal to `Close(.., scale, .., absoluteFloor)`, each
 * row up to its sign: an eigenvector's sign is not part of the eigenproblem (see CompareLabelMaps). Sets `flipped`
 * where a row's sign differs. */
template <unsigned D, typename TMatrix>
bool
CloseAxesUpToSign(const TMatrix & ours, const TMatrix & itk, double scale, double absoluteFloor, const std::string & what,
                  bool & flipped)
{
  bool ok = true;
  for (unsigned i = 0; i < D; ++i)
  {
    double dot = 0;
    for (unsigned j = 0; j < D; ++j)
    {
      dot += ours[i][j] * itk[i][j];
    }
    const double sign = dot < 0 ? -1.0 : 1.0;
    flipped = flipped || dot < 0;
    for (unsigned j = 0; j < D; ++j)
    {
      ok = Close(sign * ours[i][j], itk[i][j], scale, what, absoluteFloor) && ok;
    }
  }
  return ok;
}

/** `momentScale`: the largest squared physical coordinate |p|²max (ITK's moment residue scales with it). */
template <typename TLabelMap>
bool
CompareLabelMaps(const TLabelMap * ours, const TLabelMap * reference, bool perimeter, bool extras, double momentScale,
                 Counters & counters, const std::string & what)
{
  constexpr unsigned D = TLabelMap::ImageDimension;
  if (ours->GetNumberOfLabelObjects() != reference->GetNumberOfLabelObjects())
  {
    std::cerr << what << ": " << ours->GetNumberOfLabelObjects() << " objects vs ITK "
              << reference->GetNumberOfLabelObjects() << std::endl;
    return false;
  }
  bool ok = true;
  // (an iterator: GetNthLabelObject(n) walks the map from its start each time)
  for (typename TLabelMap::ConstIterator it(reference); !it.IsAtEnd() && ok; ++it)
  {
    const auto * r = it.GetLabelObject();
    if (!ours->HasLabel(r->GetLabel()))
    {
      std::cerr << what << ": label " << r->GetLabel() << " missing" << std::endl;
      return false;
    }
    const auto *      o = ours->GetLabelObject(r->GetLabel());
    const std::string w = what + " label " + std::to_string(r->GetLabel());
    ++counters.objects;
    // lines, in ITK's order
    if (o->GetNumberOfLines() != r->GetNumberOfLines())
    {
      std::cerr << w << ": " << o->GetNumberOfLines() << " lines vs ITK " << r->GetNumberOfLines() << std::endl;
      return false;
    }
    for (SizeValueType l = 0; l < r->GetNumberOfLines(); ++l)
    {
      if (o->GetLine(l).GetIndex() != r->GetLine(l).GetIndex() ||
          o->GetLine(l).GetLength() != r->GetLine(l).GetLength())
      {
        std::cerr << w << ": line " << l << " differs" << std::endl;
        return false;
      }
    }
    ok = ok && o->GetNumberOfPixels() == r->GetNumberOfPixels() && o->GetBoundingBox() == r->GetBoundingBox() &&
         o->GetNumberOfPixelsOnBorder() == r->GetNumberOfPixelsOnBorder();
    if (!ok)
    {
      std::cerr << w << ": pixels " << o->GetNumberOfPixels() << "/" << r->GetNumberOfPixels() << ", on border "
                << o->GetNumberOfPixelsOnBorder() << "/" << r->GetNumberOfPixelsOnBorder() << ", bbox "
                << o->GetBoundingBox() << " vs " << r->GetBoundingBox() << std::endl;
      return false;
    }
    ok = Close(o->GetPhysicalSize(), r->GetPhysicalSize(), 0, w + " PhysicalSize") && ok;
    ok = Close(o->GetPerimeterOnBorder(), r->GetPerimeterOnBorder(), 0, w + " PerimeterOnBorder") && ok;
    ok = Close(o->GetEquivalentSphericalRadius(), r->GetEquivalentSphericalRadius(), 0, w + " ESR") && ok;
    ok = Close(o->GetEquivalentSphericalPerimeter(), r->GetEquivalentSphericalPerimeter(), 0, w + " ESP") && ok;
    double centroidScale = 1;
    for (unsigned i = 0; i < D; ++i)
    {
      centroidScale = std::max(centroidScale, std::abs(r->GetCentroid()[i]));
    }
    const auto & rm = r->GetPrincipalMoments();
    const auto & om = o->GetPrincipalMoments();
    double       largest = 0;
    for (unsigned i = 0; i < D; ++i)
    {
      largest = std::max(largest, std::abs(rm[i]));
    }
    const double residue = 1e-13 * momentScale; // ITK's cancellation residue, see the header comment
    for (unsigned i = 0; i < D; ++i)
    {
      ok = Close(o->GetCentroid()[i], r->GetCentroid()[i], centroidScale, w + " Centroid") && ok;
      ok = Close(om[i], rm[i], largest, w + " PrincipalMoments", residue) && ok;
      counters.comparisons += 2;
    }
    // ratios of moments, where ITK's denominators are above its residue
    const bool ratiosDefined = std::abs(rm[0]) > residue && (D < 2 || std::abs(rm[D - 2]) > residue);
    if (ratiosDefined)
    {
      // plus the relative rounding of the ITK moments each ratio divides (see the header comment)
      double ratioRounding = 0;
      for (unsigned i = 0; i < D; ++i)
      {
        ratioRounding += 1e-15 * momentScale / std::abs(rm[i]);
      }
      auto closeRatio = [&](double ours, double itk, const std::string & name) {
        return Close(ours, itk, 0, w + name, ratioRounding * std::abs(itk));
      };
      ok = closeRatio(o->GetElongation(), r->GetElongation(), " Elongation") && ok;
      ok = closeRatio(o->GetFlatness(), r->GetFlatness(), " Flatness") && ok;
      for (unsigned i = 0; i < D; ++i)
      {
        ok = closeRatio(o->GetEquivalentEllipsoidDiameter()[i], r->GetEquivalentEllipsoidDiameter()[i], " EED") && ok;
      }
    }
    else
    {
      ++counters.ratioSkipped;
      // where ITK's ratios divide its rounding residue, ours must still be numbers (the exact moments' values)
      bool finite = std::isfinite(o->GetElongation()) && std::isfinite(o->GetFlatness());
      for (unsigned i = 0; i < D; ++i)
      {
        finite = finite && std::isfinite(o->GetEquivalentEllipsoidDiameter()[i]);
      }
      if (!finite)
      {
        std::cerr << w << ": non-finite elongation, flatness or ellipsoid diameter" << std::endl;
        ok = false;
      }
    }
    // axes where the eigenvalues are distinct
    double gap = std::numeric_limits<double>::max();
    for (unsigned i = 0; i + 1 < D; ++i)
    {
      gap = std::min(gap, std::abs(rm[i + 1] - rm[i]) / std::max(largest, residue));
    }
    const bool axesDefined = ratiosDefined && gap > 1e-6;
    // An eigenvector's sign is not part of the eigenproblem: vnl's choice follows the last bits of the matrix,
    // and where the moments balance (axes at 45 degrees: Cxx = Cyy exactly in our integer sums) ITK's rounding
    // residue decides it. Rows are compared up to their sign where ours is still a rotation (determinant +1);
    // such objects are counted, and their oriented box (which follows the axes' signs) is not compared.
    bool flippedAxes = false;
    if (axesDefined)
    {
      const auto & oa = o->GetPrincipalAxes();
      const auto & ra = r->GetPrincipalAxes();
      // eigenvector accuracy degrades as 1/gap
      ok = CloseAxesUpToSign<D>(oa, ra, 1.0 / std::min(1.0, gap), 0, w + " PrincipalAxes", flippedAxes) && ok;
      if (flippedAxes)
      {
        ++counters.axesSignFlipped;
        double det = oa[0][0];
        if constexpr (D == 2)
        {
          det = oa[0][0] * oa[1][1] - oa[0][1] * oa[1][0];
        }
        if constexpr (D == 3)
        {
          det = oa[0][0] * (oa[1][1] * oa[2][2] - oa[1][2] * oa[2][1]) -
                oa[0][1] * (oa[1][0] * oa[2][2] - oa[1][2] * oa[2][0]) +
                oa[0][2] * (oa[1][0] * oa[2][1] - oa[1][1] * oa[2][0]);
        }
        ok = Close(det, 1.0, 0, w + " PrincipalAxes determinant (axes flipped against ITK's)") && ok;
      }
    }
    else
    {
      ++counters.axesSkipped;
    }
    if (perimeter)
    {
      ok = Close(o->GetPerimeter(), r->GetPerimeter(), 0, w + " Perimeter") && ok;
      ok = Close(o->GetRoundness(), r->GetRoundness(), 0, w + " Roundness") && ok;
      ok =
        Close(o->GetPerimeterOnBorderRatio(), r->GetPerimeterOnBorderRatio(), 0, w + " PerimeterOnBorderRatio") && ok;
    }
    if (extras)
    {
      ok = Close(o->GetFeretDiameter(), r->GetFeretDiameter(), 0, w + " FeretDiameter") && ok;
      if (axesDefined && !flippedAxes)
      {
        for (unsigned i = 0; i < D; ++i)
        {
          ok = Close(o->GetOrientedBoundingBoxSize()[i],
                     r->GetOrientedBoundingBoxSize()[i],
                     centroidScale * 1e-3 / std::min(1.0, gap),
                     w + " OBB size") &&
               ok;
          ok = Close(o->GetOrientedBoundingBoxOrigin()[i],
                     r->GetOrientedBoundingBoxOrigin()[i],
                     centroidScale / std::min(1.0, gap),
                     w + " OBB origin") &&
               ok;
        }
      }
    }
  }
  return ok;
}

/** The LabelMap against LabelImageToShapeLabelMapFilter's on `expected` (one work unit: whole runs as lines),
 * with CompareLabelMaps()'s tolerances. */
template <typename TFilter, typename TLabelImage>
bool
SameShapeAttributes(const TFilter * filter, const TLabelImage * expected, const std::string & what)
{
  using MapType = typename TFilter::LabelMapType;
  auto toMap = LabelImageToShapeLabelMapFilter<TLabelImage, MapType>::New();
  toMap->SetInput(expected);
  toMap->SetComputePerimeter(true);
  toMap->SetNumberOfWorkUnits(1);
  toMap->Update();
  double extent = 1;
  for (unsigned d = 0; d < TLabelImage::ImageDimension; ++d)
  {
    extent = std::max(extent, static_cast<double>(expected->GetLargestPossibleRegion().GetSize(d)));
  }
  Counters counters;
  return CompareLabelMaps(filter->GetLabelMap(), toMap->GetOutput(), true, false, extent * extent, counters, what);
}

} // namespace ccatest
} // namespace itk

#endif
