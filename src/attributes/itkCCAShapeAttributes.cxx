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
// The LabelMap's attributes from the engines' exact integer sums, compiled once for dimensions 1 to 3:
// ShapeLabelMapFilter::ThreadedProcessLabelObject's steps (ITK 5.2), but starting from the sums where ITK
// accumulates physical coordinates in double. The covariance is (N·Σqqᵀ − ΣqΣqᵀ)/N², numerators in 128 bits,
// mapped to physical space by M = Direction·diag(spacing); the two agree to rounding, and on degenerate
// objects (zero moments) this side gives exact zeros where ITK may keep a residue of ~1e-16·|origin|².
// Under a rotated direction the moments are taken before the rotation (the same eigenvalues), so that
// they are exact zeros there too.
// The Feret diameter and the oriented bounding box read the component's lines, as ITK reads the object's
// (itkCCALineAttributes.h). ITK-free (itkCCAPhysicalSpace.h, itkCCASymmetricEigensystem.h): the Python package
// computes its table with this code.

#include "itkCCATypes.h"

#include "itkCCABasicAttributes.h"
#include "itkCCALineAttributes.h"
#include "itkCCALineMoments.h"
#include "itkCCAPhysicalSpace.h"
#include "itkCCAProductDifference.h"
#include "itkCCASymmetricEigensystem.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

namespace itk
{
namespace cca
{
namespace
{


template <unsigned int D>
class ShapeAttributeCalculatorOf final : public cca::ShapeAttributeCalculator
{
public:
  using MatrixType = SquareMatrix<D>;
  using PointType = std::array<double, D>;

  ShapeAttributeCalculatorOf(const std::vector<ComponentSums> & sums, const Geometry & geometry,
                             const ShapeOptions & options, const Lines & lines)
    : m_Space(geometry)
    , m_Basic(MakeBasicGeometry(geometry))
    , m_Sums(sums)
    , m_Options(options)
    , m_Lines(lines)
  {
    const auto & direction = m_Space.direction;
    for (unsigned int i = 0; i < D; ++i)
    {
      m_SizePerPixel *= m_Space.spacing[i];
    }
    // A rotation (DᵀD = I) does not change the principal moments: they are then taken in the index
    // axes (scaled by the spacing), where a flat or one-pixel object has exact zero moments instead of
    // rounding noise whose sign would decide elongation and flatness.
    m_DirectionIsIdentity = true;
    m_DirectionIsRotation = true;
    for (unsigned int i = 0; i < D; ++i)
    {
      for (unsigned int j = 0; j < D; ++j)
      {
        double dot = 0;
        for (unsigned int k = 0; k < D; ++k)
        {
          dot += direction[k][i] * direction[k][j];
        }
        const double identity = i == j ? 1.0 : 0.0;
        m_DirectionIsIdentity = m_DirectionIsIdentity && direction[i][j] == identity;
        m_DirectionIsRotation = m_DirectionIsRotation && std::abs(dot - identity) <= 1e-12;
      }
    }
  }

  void
  ComputeBasic(std::uint64_t component, ShapeAttributes & a) const override
  {
    const ComponentSums & f = m_Sums[component];
    for (unsigned int i = 0; i < D; ++i)
    {
      a.boundingBoxIndex[i] = m_Space.start[i] + static_cast<std::int64_t>(f.boundingBoxMin[i]);
      a.boundingBoxSize[i] = f.boundingBoxMax[i] - f.boundingBoxMin[i] + 1;
    }
    BasicCentroid(m_Basic, f.numberOfPixels, f.indexSum.data(), a.centroid.data());
    a.numberOfPixels = f.numberOfPixels;
    a.physicalSize = MulRounded(static_cast<double>(f.numberOfPixels), m_Basic.sizePerPixel);
  }

  void
  Compute(std::uint64_t component, ShapeAttributes & a) const override
  {
    ComputeBasic(component, a);
    const ComponentSums & f = m_Sums[component];
    const double          n = static_cast<double>(f.numberOfPixels);
    PointType             centroid;
    for (unsigned int i = 0; i < D; ++i)
    {
      centroid[i] = a.centroid[i];
    }

    // Index-space covariance from exact sums: (N·Σqiqj − Σqi·Σqj) / N²; for a component too long for the
    // engines' 64-bit product sums, the same numerators from its lines (itkCCALineMoments.h).
    std::uint64_t largestIndex = 0;
    for (unsigned int i = 0; i < D; ++i)
    {
      largestIndex = std::max(largestIndex, f.boundingBoxMax[i]);
    }
    MatrixType covariance;
    if (ProductSumsFitIn64Bits(f.numberOfPixels, largestIndex))
    {
      static constexpr int productIndex[3][3] = { { 0, 3, 4 }, { 3, 1, 5 }, { 4, 5, 2 } };
      for (unsigned int i = 0; i < D; ++i)
      {
        for (unsigned int j = 0; j < D; ++j)
        {
          covariance[i][j] =
            ProductDifference(f.numberOfPixels, f.indexProductSum[productIndex[i][j]], f.indexSum[i], f.indexSum[j]) /
            (n * n);
        }
      }
    }
    else
    {
      covariance = CovarianceFromLines(component, a, n * n);
    }
    // C = M·Cov·Mᵀ
    const MatrixType centralMoments = m_Space.CovarianceToPhysical(covariance);

    // From here on, ShapeLabelMapFilter::ThreadedProcessLabelObject's own steps.
    std::array<double, 3> principalMoments{ { 0, 0, 0 } };
    MatrixType            principalAxes;
    SymmetricEigensystem<D>(centralMoments, principalMoments, principalAxes);
    if (!m_DirectionIsIdentity && m_DirectionIsRotation)
    {
      // The same moments (C = D·A·Dᵀ), taken from A = diag(s)·Cov·diag(s) so that they do not depend on
      // the direction: exact zeros for one-pixel objects and for objects one pixel thick along an index
      // axis. The axes stay those of C, as ITK's (an eigenvector's sign is the solver's choice).
      MatrixType scaledCovariance;
      for (unsigned int i = 0; i < D; ++i)
      {
        for (unsigned int j = 0; j < D; ++j)
        {
          scaledCovariance[i][j] = m_Space.spacing[i] * covariance[i][j] * m_Space.spacing[j];
        }
      }
      MatrixType indexSpaceVectors;
      SymmetricEigensystem<D>(scaledCovariance, principalMoments, indexSpaceVectors);
    }
    // The axes must form a rotation: the last one is multiplied by the determinant (±1). ITK takes it as
    // the product of the eigenvalues of a general eigen-solver; the determinant itself is the same number
    // up to rounding and costs a fraction (the solver dominated the LabelMap build).
    const double det = Determinant<D>(principalAxes);
    for (unsigned int i = 0; i < D; ++i)
    {
      principalAxes[D - 1][i] *= det;
    }

    double elongation = 0;
    double flatness = 0;
    if (D < 2)
    {
      elongation = 1;
      flatness = 1;
    }
    else
    {
      if (NotAlmostZero(principalMoments[0]))
      {
        const double flatnessRatio = principalMoments[1] / principalMoments[0];
        flatness = flatnessRatio > 0.0 ? std::sqrt(flatnessRatio) : 0.0;
      }
      if (NotAlmostZero(principalMoments[D - 2]))
      {
        const double elongationRatio = principalMoments[D - 1] / principalMoments[D - 2];
        elongation = elongationRatio > 0.0 ? std::sqrt(elongationRatio) : 0.0;
      }
    }

    const double physicalSize = a.physicalSize;
    const double equivalentRadius = HyperSphereRadiusFromVolume(D, physicalSize);
    const double equivalentPerimeter = HyperSpherePerimeter(D, equivalentRadius);
    double       edet = 1.0;
    for (unsigned int i = 0; i < D; ++i)
    {
      edet *= principalMoments[i];
    }
    edet = std::pow(edet, 1.0 / D);
    for (unsigned int i = 0; i < D; ++i)
    {
      a.equivalentEllipsoidDiameter[i] = 0.0;
      if (edet != 0.0 && principalMoments[i] / edet > 0.0)
      {
        a.equivalentEllipsoidDiameter[i] = 2.0 * equivalentRadius * std::sqrt(principalMoments[i] / edet);
      }
    }

    double perimeterOnBorder = 0;
    for (unsigned int i = 0; i < D; ++i)
    {
      perimeterOnBorder += static_cast<double>(f.borderFaces[i]) * (m_SizePerPixel / m_Space.spacing[i]);
    }

    for (unsigned int i = 0; i < D; ++i)
    {
      a.principalMoments[i] = principalMoments[i];
      for (unsigned int j = 0; j < D; ++j)
      {
        a.principalAxes[i][j] = principalAxes[i][j];
      }
    }
    a.numberOfPixelsOnBorder = f.numberOfPixelsOnBorder;
    a.perimeterOnBorder = perimeterOnBorder;
    a.elongation = elongation;
    a.flatness = flatness;
    a.equivalentSphericalRadius = equivalentRadius;
    a.equivalentSphericalPerimeter = equivalentPerimeter;
    if (m_Options.computePerimeter)
    {
      a.perimeter = PerimeterFromIntercepts(f.intercepts);
      a.roundness = equivalentPerimeter / a.perimeter;
      a.perimeterOnBorderRatio = perimeterOnBorder / a.perimeter;
    }
    if (m_Options.computeFeretDiameter)
    {
      a.feretDiameter = FeretDiameter<D>(m_Lines, component, m_Space);
    }
    if (m_Options.computeOrientedBoundingBox)
    {
      SetOrientedBoundingBox<D>(m_Lines, component, m_Space, principalAxes, centroid, a);
    }
  }

private:
  /** ShapeLabelMapFilter::PerimeterFromInterceptCount (its 2D and 3D specializations, and the generic form). */
  double
  PerimeterFromIntercepts(const std::array<std::uint64_t, 7> & n) const
  {
    const auto & s = m_Space.spacing;
    if constexpr (D == 2)
    {
      double perimeter = 0.0;
      perimeter += s[1] * n[0] / 2.0;
      perimeter += s[0] * n[1] / 2.0;
      perimeter += s[0] * s[1] / std::sqrt(s[0] * s[0] + s[1] * s[1]) * n[3] / 2.0; // Vector::GetNorm
      return perimeter * Pi / 4.0;
    }
    else if constexpr (D == 3)
    {
      const double dxy = std::sqrt(s[0] * s[0] + s[1] * s[1]);
      const double dxz = std::sqrt(s[0] * s[0] + s[2] * s[2]);
      const double dyz = std::sqrt(s[1] * s[1] + s[2] * s[2]);
      const double dxyz = std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
      const double vol = s[0] * s[1] * s[2];
      const double axis = 0.04577789120476 * 2, face = 0.03698062787608 * 2, body = 0.03519563978232 * 2;
      double       perimeter = 0.0;
      perimeter += vol / s[0] * n[0] / 2.0 * axis;
      perimeter += vol / s[1] * n[1] / 2.0 * axis;
      perimeter += vol / s[2] * n[2] / 2.0 * axis;
      perimeter += vol / dxy * n[3] / 2.0 * face;
      perimeter += vol / dxz * n[4] / 2.0 * face;
      perimeter += vol / dyz * n[5] / 2.0 * face;
      perimeter += vol / dxyz * n[6] / 2.0 * body;
      return perimeter * 4;
    }
    else
    {
      double pixelSize = 1.0;
      for (unsigned int i = 0; i < D; ++i)
      {
        pixelSize *= s[i];
      }
      double perimeter = 0.0;
      for (unsigned int i = 0; i < D; ++i)
      {
        perimeter += pixelSize / s[i] * n[i] / 2.0;
      }
      return perimeter * HyperSphereVolume(D, 1.0) / HyperSphereVolume(D - 1, 1.0);
    }
  }

  /** The covariance (numerators / `nSquared`) of a component whose 64-bit product sums may have wrapped,
   * from its lines. */
  MatrixType
  CovarianceFromLines(std::uint64_t component, const ShapeAttributes & a, double nSquared) const
  {
#if !defined(__SIZEOF_INT128__)
    // CanMeasureMoments refused such images before labeling.
    throw Error("shape attributes: moment sums exceed 64 bits and this compiler has no 128-bit integers");
#else
    std::array<std::int64_t, 3> corner{ { 0, 0, 0 } };
    for (unsigned int i = 0; i < D; ++i)
    {
      corner[i] = a.boundingBoxIndex[i];
    }
    const auto numerators = CovarianceNumeratorsFromLines<D>(
      corner,
      m_Lines.firstLine[component],
      m_Lines.firstLine[component + 1],
      [this](std::uint64_t l) -> const std::array<std::int64_t, MaxDimension> & { return m_Lines.index[l]; },
      [this](std::uint64_t l) { return m_Lines.length[l]; });
    MatrixType covariance;
    for (unsigned int i = 0; i < D; ++i)
    {
      for (unsigned int j = 0; j < D; ++j)
      {
        covariance[i][j] = numerators[i][j] / nSquared;
      }
    }
    return covariance;
#endif
  }

  PhysicalSpace<D>                   m_Space;
  BasicGeometry                      m_Basic;
  double                             m_SizePerPixel = 1.0;
  bool                               m_DirectionIsIdentity = true;
  bool                               m_DirectionIsRotation = true;
  const std::vector<ComponentSums> & m_Sums;
  ShapeOptions                       m_Options;
  const Lines &                      m_Lines;
};

} // namespace

std::unique_ptr<cca::ShapeAttributeCalculator>
MakeShapeAttributeCalculator(const std::vector<ComponentSums> & sums, const Geometry & geometry,
                             const ShapeOptions & options, const Lines & lines)
{
  switch (geometry.dimension)
  {
    case 1:
      return std::make_unique<ShapeAttributeCalculatorOf<1>>(sums, geometry, options, lines);
    case 2:
      return std::make_unique<ShapeAttributeCalculatorOf<2>>(sums, geometry, options, lines);
    case 3:
      return std::make_unique<ShapeAttributeCalculatorOf<3>>(sums, geometry, options, lines);
    default:
      throw Error("shape attributes: image dimension " + std::to_string(geometry.dimension) +
                  " is not supported (1 to 3)");
  }
}

} // namespace cca
} // namespace itk
