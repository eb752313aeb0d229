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
#ifndef itkCCAShapeLabelMapBuilder_h
#define itkCCAShapeLabelMapBuilder_h

#include "itkCCAEngine.h"
#include "itkGeometryUtilities.h"
#include "itkLabelMap.h"
#include "itkMath.h"
#include "itkMultiThreaderBase.h"
#include "itkShapeLabelObject.h"
#include "vnl/algo/vnl_determinant.h"
#include "vnl/algo/vnl_symmetric_eigensystem.h"

#include <algorithm>
#include <complex>
#include <map>
#include <deque>
#include <vector>

namespace itk
{
/** \class CCAShapeLabelMapBuilder
 * \brief Builds the LabelMap of ShapeLabelObjects of CudaConnectedComponentAnalysisImageFilter from an
 * engine's runs and raw per-component sums, for both engines alike.
 *
 * Lines come from the runs in raster order (what LabelImageToLabelMapFilter produces). Attributes follow
 * ShapeLabelMapFilter::ThreadedProcessLabelObject of ITK 5.2, but start from exact integer sums: the
 * covariance is (N·Σqqᵀ − ΣqΣqᵀ)/N² in 128-bit integers, mapped to physical space by M = Direction·diag(spacing),
 * where ITK accumulates physical coordinates in double. The two agree to rounding; on degenerate objects
 * (zero moments) this side gives exact zeros where ITK may keep a residue of the order of 1e-16·|origin|².
 * \ingroup CudaConnectedComponentAnalysis
 */
template <typename TLabelMap>
class CCAShapeLabelMapBuilder
{
public:
  using LabelMapType = TLabelMap;
  using LabelObjectType = typename LabelMapType::LabelObjectType;
  using LabelType = typename LabelObjectType::LabelType;
  static constexpr unsigned int ImageDimension = LabelMapType::ImageDimension;
  using IndexType = typename LabelMapType::IndexType;
  using RegionType = typename LabelMapType::RegionType;
  using SizeType = typename LabelMapType::SizeType;
  using MatrixType = typename LabelObjectType::MatrixType;
  using VectorType = typename LabelObjectType::VectorType;
  using CentroidType = typename LabelObjectType::CentroidType;

  struct Options
  {
    bool computePerimeter = true;
    bool computeFeretDiameter = false;
    bool computeOrientedBoundingBox = false;
  };

  /** Fills `labelMap` (whose geometry is already the image's) with one object per component. */
  static void
  Build(LabelMapType *                               labelMap,
        const cca::RunTable &                        runs,
        const std::vector<cca::ComponentFeatures> &  features,
        const cca::LabelOutput &                     labelValues,
        const Options &                              options)
  {
    const std::size_t numComponents = features.size();
    const std::size_t numRuns = runs.row.size();
    const RegionType  region = labelMap->GetLargestPossibleRegion();
    const IndexType   start = region.GetIndex();
    const SizeValueType sizeY = ImageDimension > 1 ? region.GetSize(1) : 1;

    // Counting sort of the runs by component, stable: each object's lines stay in raster order.
    std::vector<std::size_t> firstRunOf(numComponents + 1, 0);
    for (std::size_t i = 0; i < numRuns; ++i)
    {
      ++firstRunOf[runs.label[i] + 1];
    }
    for (std::size_t k = 0; k < numComponents; ++k)
    {
      firstRunOf[k + 1] += firstRunOf[k];
    }
    std::vector<std::size_t> order(numRuns);
    {
      std::vector<std::size_t> next(firstRunOf.begin(), firstRunOf.end() - 1);
      for (std::size_t i = 0; i < numRuns; ++i)
      {
        order[next[runs.label[i]]++] = i;
      }
    }

    const Geometry geometry(labelMap);
    std::vector<typename LabelObjectType::Pointer> objects(numComponents);
    // Objects are independent (their lines, and their eigen-systems, which dominate): build them on
    // ITK's threads, as ShapeLabelMapFilter does; only the insertion into the map is serial.
    MultiThreaderBase::New()->ParallelizeArray(
      0,
      numComponents,
      [&](SizeValueType k) {
        auto object = LabelObjectType::New();
        object->SetLabel(static_cast<LabelType>(labelValues.LabelValue(k)));
        for (std::size_t j = firstRunOf[k]; j < firstRunOf[k + 1]; ++j)
        {
          const std::size_t i = order[j];
          IndexType         idx;
          idx[0] = start[0] + static_cast<IndexValueType>(runs.begin[i]);
          if (ImageDimension > 1)
          {
            idx[1 % ImageDimension] = start[1 % ImageDimension] + static_cast<IndexValueType>(runs.row[i] % sizeY);
          }
          if (ImageDimension > 2)
          {
            idx[2 % ImageDimension] = start[2 % ImageDimension] + static_cast<IndexValueType>(runs.row[i] / sizeY);
          }
          object->AddLine(idx, static_cast<typename LabelObjectType::LengthType>(runs.length[i]));
        }
        SetAttributes(object, features[k], geometry, options);
        objects[k] = object;
      },
      nullptr);
    for (auto & object : objects)
    {
      labelMap->AddLabelObject(object);
    }
  }

private:
  /** What the attributes need of the image's geometry. */
  struct Geometry
  {
    explicit Geometry(const LabelMapType * image)
      : spacing(image->GetSpacing())
      , region(image->GetLargestPossibleRegion())
      , image(image)
    {
      for (unsigned int i = 0; i < ImageDimension; ++i)
      {
        for (unsigned int j = 0; j < ImageDimension; ++j)
        {
          indexToPhysical[i][j] = image->GetDirection()[i][j] * spacing[j];
        }
        sizePerPixel *= spacing[i];
      }
    }
    typename LabelMapType::SpacingType spacing;
    RegionType                         region;
    const LabelMapType *               image;
    MatrixType                         indexToPhysical;
    double                             sizePerPixel = 1.0;
  };

  static void
  SetAttributes(LabelObjectType *              object,
                const cca::ComponentFeatures & f,
                const Geometry &               geometry,
                const Options &                options)
  {
    const IndexType     start = geometry.region.GetIndex();
    const double        n = static_cast<double>(f.numberOfPixels);
    IndexType           boxIndex;
    SizeType            boxSize;
    ContinuousIndex<double, ImageDimension> centroidIndex;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      boxIndex[i] = start[i] + static_cast<IndexValueType>(f.boundingBoxMin[i]);
      boxSize[i] = static_cast<SizeValueType>(f.boundingBoxMax[i] - f.boundingBoxMin[i] + 1);
      centroidIndex[i] = static_cast<double>(start[i]) + static_cast<double>(f.indexSum[i]) / n;
    }
    CentroidType physicalCentroid;
    geometry.image->TransformContinuousIndexToPhysicalPoint(centroidIndex, physicalCentroid);

    // Index-space covariance from exact sums: (N·Σqiqj − Σqi·Σqj) / N², numerators in 128 bits.
    static constexpr int productIndex[3][3] = { { 0, 3, 4 }, { 3, 1, 5 }, { 4, 5, 2 } };
    MatrixType           covariance;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      for (unsigned int j = 0; j < ImageDimension; ++j)
      {
        const __int128 numerator = static_cast<__int128>(f.numberOfPixels) * f.indexProductSum[productIndex[i][j]] -
                                   static_cast<__int128>(f.indexSum[i]) * f.indexSum[j];
        covariance[i][j] = static_cast<double>(numerator) / (n * n);
      }
    }
    // C = M·Cov·Mᵀ
    MatrixType         centralMoments;
    const MatrixType & m = geometry.indexToPhysical;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      for (unsigned int j = 0; j < ImageDimension; ++j)
      {
        double c = 0;
        for (unsigned int a = 0; a < ImageDimension; ++a)
        {
          for (unsigned int b = 0; b < ImageDimension; ++b)
          {
            c += m[i][a] * covariance[a][b] * m[j][b];
          }
        }
        centralMoments[i][j] = c;
      }
    }

    // From here on, ShapeLabelMapFilter::ThreadedProcessLabelObject's own steps.
    VectorType                        principalMoments;
    vnl_symmetric_eigensystem<double> eigen{ centralMoments.GetVnlMatrix().as_matrix() };
    vnl_diag_matrix<double>           pm = eigen.D;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      principalMoments[i] = pm(i);
    }
    MatrixType principalAxes(eigen.V.transpose());
    // The axes must form a rotation: the last one is multiplied by the determinant (±1). ITK takes it as
    // the product of the eigenvalues of a general eigen-solver; the determinant itself is the same number
    // up to rounding and costs a fraction (the solver dominated the LabelMap build).
    const double det = vnl_determinant(principalAxes.GetVnlMatrix().as_matrix());
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      principalAxes[ImageDimension - 1][i] *= det;
    }

    double elongation = 0;
    double flatness = 0;
    if (ImageDimension < 2)
    {
      elongation = 1;
      flatness = 1;
    }
    else
    {
      if (Math::NotAlmostEquals(principalMoments[0], 0.0))
      {
        const double flatnessRatio = principalMoments[1] / principalMoments[0];
        flatness = flatnessRatio > 0.0 ? std::sqrt(flatnessRatio) : 0.0;
      }
      if (Math::NotAlmostEquals(principalMoments[ImageDimension - 2], 0.0))
      {
        const double elongationRatio = principalMoments[ImageDimension - 1] / principalMoments[ImageDimension - 2];
        elongation = elongationRatio > 0.0 ? std::sqrt(elongationRatio) : 0.0;
      }
    }

    const double physicalSize = n * geometry.sizePerPixel;
    const double equivalentRadius = GeometryUtilities::HyperSphereRadiusFromVolume(ImageDimension, physicalSize);
    const double equivalentPerimeter = GeometryUtilities::HyperSpherePerimeter(ImageDimension, equivalentRadius);
    VectorType   ellipsoidDiameter;
    double       edet = 1.0;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      edet *= principalMoments[i];
    }
    edet = std::pow(edet, 1.0 / ImageDimension);
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      ellipsoidDiameter[i] = 0.0;
      if (edet != 0.0 && principalMoments[i] / edet > 0.0)
      {
        ellipsoidDiameter[i] = 2.0 * equivalentRadius * std::sqrt(principalMoments[i] / edet);
      }
    }

    double perimeterOnBorder = 0;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      perimeterOnBorder += static_cast<double>(f.borderFaces[i]) * (geometry.sizePerPixel / geometry.spacing[i]);
    }

    object->SetNumberOfPixels(static_cast<SizeValueType>(f.numberOfPixels));
    object->SetPhysicalSize(physicalSize);
    object->SetBoundingBox(RegionType(boxIndex, boxSize));
    object->SetCentroid(physicalCentroid);
    object->SetNumberOfPixelsOnBorder(static_cast<SizeValueType>(f.numberOfPixelsOnBorder));
    object->SetPerimeterOnBorder(perimeterOnBorder);
    object->SetPrincipalMoments(principalMoments);
    object->SetPrincipalAxes(principalAxes);
    object->SetElongation(elongation);
    object->SetEquivalentSphericalRadius(equivalentRadius);
    object->SetEquivalentSphericalPerimeter(equivalentPerimeter);
    object->SetEquivalentEllipsoidDiameter(ellipsoidDiameter);
    object->SetFlatness(flatness);
    if (options.computePerimeter)
    {
      const double perimeter = PerimeterFromIntercepts(f.intercepts, geometry.spacing);
      object->SetPerimeter(perimeter);
      object->SetRoundness(equivalentPerimeter / perimeter);
      object->SetPerimeterOnBorderRatio(perimeterOnBorder / perimeter);
    }
    if (options.computeFeretDiameter)
    {
      object->SetFeretDiameter(FeretDiameter(object, geometry));
    }
    if (options.computeOrientedBoundingBox)
    {
      SetOrientedBoundingBox(object, geometry);
    }
  }

  /** ShapeLabelMapFilter::PerimeterFromInterceptCount (its 2D and 3D specializations, and the generic form). */
  static double
  PerimeterFromIntercepts(const std::array<std::uint64_t, 7> & n, const typename LabelMapType::SpacingType & s)
  {
    if constexpr (ImageDimension == 2)
    {
      double perimeter = 0.0;
      perimeter += s[1] * n[0] / 2.0;
      perimeter += s[0] * n[1] / 2.0;
      perimeter += s[0] * s[1] / s.GetNorm() * n[3] / 2.0;
      return perimeter * itk::Math::pi / 4.0;
    }
    else if constexpr (ImageDimension == 3)
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
      for (unsigned int i = 0; i < ImageDimension; ++i)
      {
        pixelSize *= s[i];
      }
      double perimeter = 0.0;
      for (unsigned int i = 0; i < ImageDimension; ++i)
      {
        perimeter += pixelSize / s[i] * n[i] / 2.0;
      }
      return perimeter * GeometryUtilities::HyperSphereVolume(ImageDimension, 1.0) /
             GeometryUtilities::HyperSphereVolume(ImageDimension - 1, 1.0);
    }
  }

  /** ShapeLabelMapFilter::ComputeFeretDiameter: the largest distance (index differences times spacing,
   * as ITK) between boundary pixels, those with a neighbor (3^D − 1 offsets) outside the object or the
   * image. Membership is looked up in the object's own lines, grouped by row. */
  static double
  FeretDiameter(const LabelObjectType * object, const Geometry & geometry)
  {
    using LineType = typename LabelObjectType::LineType;
    // lines by row (y, z): consecutive in the object's raster order
    std::map<std::pair<IndexValueType, IndexValueType>, std::vector<std::pair<IndexValueType, IndexValueType>>> rows;
    for (SizeValueType l = 0; l < object->GetNumberOfLines(); ++l)
    {
      const LineType & line = object->GetLine(l);
      const IndexType  idx = line.GetIndex();
      rows[RowKey(idx)].emplace_back(idx[0], idx[0] + static_cast<IndexValueType>(line.GetLength()) - 1);
    }
    auto contains = [&rows](IndexType idx) {
      auto row = rows.find(RowKey(idx));
      if (row == rows.end())
      {
        return false;
      }
      const auto & lines = row->second;
      auto it = std::upper_bound(lines.begin(), lines.end(), idx[0],
                                 [](IndexValueType x, const std::pair<IndexValueType, IndexValueType> & line) { return x < line.first; });
      return it != lines.begin() && idx[0] <= std::prev(it)->second;
    };
    std::vector<IndexType> boundary;
    for (typename LabelObjectType::ConstIndexIterator it(object); !it.IsAtEnd(); ++it)
    {
      const IndexType idx = it.GetIndex();
      bool            onBoundary = false;
      unsigned int numOffsets = 1;
      for (unsigned int d = 0; d < ImageDimension; ++d)
      {
        numOffsets *= 3;
      }
      for (unsigned int o = 0; o < numOffsets && !onBoundary; ++o)
      {
        IndexType     neighbor = idx;
        unsigned int  code = o;
        bool          centre = true;
        for (unsigned int d = 0; d < ImageDimension; ++d, code /= 3)
        {
          const int delta = static_cast<int>(code % 3) - 1;
          neighbor[d] += delta;
          centre = centre && delta == 0;
        }
        onBoundary = !centre && (!geometry.region.IsInside(neighbor) || !contains(neighbor));
      }
      if (onBoundary)
      {
        boundary.push_back(idx);
      }
    }
    double feret = 0;
    for (std::size_t a = 0; a < boundary.size(); ++a)
    {
      for (std::size_t b = a + 1; b < boundary.size(); ++b)
      {
        double length = 0;
        for (unsigned int i = 0; i < ImageDimension; ++i)
        {
          length += std::pow((boundary[a][i] - boundary[b][i]) * geometry.spacing[i], 2);
        }
        feret = std::max(feret, length);
      }
    }
    return std::sqrt(feret);
  }

  static std::pair<IndexValueType, IndexValueType>
  RowKey(const IndexType & idx)
  {
    return { ImageDimension > 1 ? idx[1 % ImageDimension] : 0, ImageDimension > 2 ? idx[2 % ImageDimension] : 0 };
  }

  /** ShapeLabelMapFilter::ComputeOrientedBoundingBox, on the object's lines. */
  static void
  SetOrientedBoundingBox(LabelObjectType * object, const Geometry & geometry)
  {
    using VNLMatrixType = vnl_matrix<double>;
    using VNLVectorType = vnl_vector<double>;
    const LabelMapType * image = geometry.image;
    VNLMatrixType        principalAxesBasisMatrix{ object->GetPrincipalAxes().GetVnlMatrix().as_matrix() };
    const CentroidType   centroid = object->GetCentroid();
    const unsigned int   numLines = object->GetNumberOfLines();
    VNLMatrixType        pixelLocations(ImageDimension, numLines * 2);
    for (unsigned int l = 0; l < numLines; ++l)
    {
      const auto line = object->GetLine(l);
      IndexType  idx = line.GetIndex();
      typename LabelMapType::PointType pt;
      image->TransformIndexToPhysicalPoint(idx, pt);
      for (unsigned int j = 0; j < ImageDimension; ++j)
      {
        pixelLocations(j, l * 2) = pt[j] - centroid[j];
      }
      idx[0] += line.GetLength() - 1;
      image->TransformIndexToPhysicalPoint(idx, pt);
      for (unsigned int j = 0; j < ImageDimension; ++j)
      {
        pixelLocations(j, l * 2 + 1) = pt[j] - centroid[j];
      }
    }
    const VNLMatrixType transformed = principalAxesBasisMatrix * pixelLocations;
    VNLVectorType       minimumPrincipalAxis = transformed.get_column(0);
    VNLVectorType       maximumPrincipalAxis = transformed.get_column(0);
    for (unsigned int column = 1; column < transformed.columns(); ++column)
    {
      for (unsigned int i = 0; i < ImageDimension; ++i)
      {
        minimumPrincipalAxis[i] = std::min(minimumPrincipalAxis[i], transformed(i, column));
        maximumPrincipalAxis[i] = std::max(maximumPrincipalAxis[i], transformed(i, column));
      }
    }
    VNLVectorType adjustedMinimum = minimumPrincipalAxis;
    VNLVectorType adjustedMaximum = maximumPrincipalAxis;
    for (unsigned int p = 0; p < 1u << ImageDimension; ++p)
    {
      Vector<double, ImageDimension> spacingAxis(0.5 * geometry.spacing);
      for (unsigned int i = 0; i < ImageDimension; ++i)
      {
        if (p & 1u << i)
        {
          spacingAxis[i] *= -1;
        }
      }
      const auto          physicalOffset = image->TransformLocalVectorToPhysicalVector(spacingAxis);
      const VNLVectorType paOffset = principalAxesBasisMatrix * physicalOffset.GetVnlVector();
      for (unsigned int i = 0; i < ImageDimension; ++i)
      {
        adjustedMinimum[i] = std::min(adjustedMinimum[i], minimumPrincipalAxis[i] + paOffset[i]);
        adjustedMaximum[i] = std::max(adjustedMaximum[i], maximumPrincipalAxis[i] + paOffset[i]);
      }
    }
    Vector<double, ImageDimension> rsize;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      rsize[i] = std::abs(adjustedMaximum[i] - adjustedMinimum[i]);
    }
    principalAxesBasisMatrix.inplace_transpose();
    typename LabelObjectType::OrientedBoundingBoxPointType origin;
    const VNLVectorType                                    min = principalAxesBasisMatrix * adjustedMinimum;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      origin[i] = min[i] + centroid[i];
    }
    object->SetOrientedBoundingBoxSize(rsize);
    object->SetOrientedBoundingBoxOrigin(origin);
  }
};
} // namespace itk

#endif
