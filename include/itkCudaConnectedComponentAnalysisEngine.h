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
#ifndef itkCudaConnectedComponentAnalysisEngine_h
#define itkCudaConnectedComponentAnalysisEngine_h

#include "CudaConnectedComponentAnalysisExport.h"
#include "itkCudaConnectedComponentAnalysisEnums.h"
#include "itkMultiThreaderBase.h"
#include "itkProcessObject.h"

#include <array>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace itk
{
namespace cca
{

constexpr unsigned MaxDimension = 3;

/** std::allocator whose resize() leaves new elements default-initialized (integers: uninitialized): for
 * buffers that are filled completely right away (tens of millions of runs or lines would otherwise be
 * zero-filled first, single-threaded). */
template <typename T>
struct UninitializedAllocator : std::allocator<T>
{
  template <typename U>
  struct rebind
  {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U> &) noexcept
  {}
  template <typename U>
  void
  construct(U * p) noexcept(std::is_nothrow_default_constructible<U>::value)
  {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... TArgs>
  void
  construct(U * p, TArgs &&... args)
  {
    ::new (static_cast<void *>(p)) U(std::forward<TArgs>(args)...);
  }
};

/** The label of the k-th component (0-based, raster order of first pixels): k, plus one from `skipValue` on,
 * which is how ConnectedComponentImageFilter steps over a non-negative background value. The one rule for
 * the label image (both engines) and the filter's features and LabelMap. */
constexpr std::uint64_t
LabelValue(std::uint64_t k, std::uint64_t skipValue)
{
  return k >= skipValue ? k + 1 : k;
}

/** Scalar pixel types an engine can read (input, mask) or write (labels). */
enum class ScalarKind : std::uint8_t
{
  UInt8,
  Int8,
  UInt16,
  Int16,
  UInt32,
  Int32,
  UInt64,
  Int64,
  Float32,
  Float64
};

/** Maps a C++ scalar type to its ScalarKind; integer types map by size and signedness. */
template <typename T>
constexpr ScalarKind
ScalarKindOf()
{
  static_assert(std::is_arithmetic<T>::value, "engine pixel types must be scalar");
  if constexpr (std::is_floating_point<T>::value)
  {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "long double pixels are not supported");
    return sizeof(T) == 4 ? ScalarKind::Float32 : ScalarKind::Float64;
  }
  else if constexpr (std::is_same<T, bool>::value)
  {
    return ScalarKind::UInt8;
  }
  else
  {
    constexpr bool isSigned = std::is_signed<T>::value;
    switch (sizeof(T))
    {
      case 1:
        return isSigned ? ScalarKind::Int8 : ScalarKind::UInt8;
      case 2:
        return isSigned ? ScalarKind::Int16 : ScalarKind::UInt16;
      case 4:
        return isSigned ? ScalarKind::Int32 : ScalarKind::UInt32;
      default:
        return isSigned ? ScalarKind::Int64 : ScalarKind::UInt64;
    }
  }
}

/** Raw per-component sums, in the engine's zero-based index space (the filter adds the region start). */
struct ComponentSums
{
  std::uint64_t                           numberOfPixels = 0;
  std::array<std::uint64_t, MaxDimension> boundingBoxMin{ { 0, 0, 0 } };
  std::array<std::uint64_t, MaxDimension> boundingBoxMax{ { 0, 0, 0 } }; ///< inclusive
  std::array<std::uint64_t, MaxDimension> indexSum{ { 0, 0, 0 } };       ///< Σx, Σy, Σz over the pixels

  // The rest is filled only when the request asks for shape sums (computeShapeSums / computePerimeter).

  /** Σxx, Σyy, Σzz, Σxy, Σxz, Σyz over the pixels (engine index space). */
  std::array<std::uint64_t, 6> indexProductSum{ { 0, 0, 0, 0, 0, 0 } };
  /** Pixels with any index on the image's first or last index of its dimension. */
  std::uint64_t numberOfPixelsOnBorder = 0;
  /** Per dimension d: pixel faces perpendicular to d lying on the image border (both sides). */
  std::array<std::uint64_t, MaxDimension> borderFaces{ { 0, 0, 0 } };
  /** Perimeter intercepts, ITK's ShapeLabelMapFilter::ComputePerimeter: for direction class k, the
   * number of (pixel, offset) pairs, offset among the 3^D-1 neighbors with |offset| = k, whose
   * neighbor is not in the component (other labels, background and outside the image alike).
   * k in order: (1,0,0) (0,1,0) (0,0,1) (1,1,0) (1,0,1) (0,1,1) (1,1,1); 2D uses 0, 1 and 3. */
  std::array<std::uint64_t, 7> intercepts{ { 0, 0, 0, 0, 0, 0, 0 } };

  bool
  operator==(const ComponentSums & o) const
  {
    return numberOfPixels == o.numberOfPixels && boundingBoxMin == o.boundingBoxMin &&
           boundingBoxMax == o.boundingBoxMax && indexSum == o.indexSum && indexProductSum == o.indexProductSum &&
           numberOfPixelsOnBorder == o.numberOfPixelsOnBorder && borderFaces == o.borderFaces &&
           intercepts == o.intercepts;
  }
  bool
  operator!=(const ComponentSums & o) const
  {
    return !(*this == o);
  }
};

} // namespace cca

/** \class CudaConnectedComponentAnalysisEngine
 * \brief The engines of CudaConnectedComponentAnalysisImageFilter behind one narrow, non-template,
 * compiled interface: engine choice (CUDA, CPU, or Automatic with the CPU fallback), the engine kept between
 * updates, labeling and measuring, the label image, and what the LabelMap needs (its lines, and its shape
 * attributes computed from the engines' exact sums).
 *
 * The filter owns one; the engines themselves (src/, cuda/) are internal to the module's library.
 * \ingroup CudaConnectedComponentAnalysis
 */
class CudaConnectedComponentAnalysis_EXPORT CudaConnectedComponentAnalysisEngine
{
public:
  using Backend = CudaConnectedComponentAnalysisEnums::Backend;

  /** Raised for every failure; the filter turns it into an itk::ExceptionObject. */
  class Error : public std::runtime_error
  {
  public:
    using std::runtime_error::runtime_error;
  };
  /** Raised when memory (host or device) runs out; what() says what was being allocated. */
  class MemoryError : public Error
  {
  public:
    using Error::Error;
  };

  /** What is done with the components after labeling (RelabelComponentImageFilter's options, with
   * LabelShapeKeepNObjectsImageFilter's N largest and ShapeOpeningLabelMapFilter's physical size): the
   * removed components become background in both outputs, the kept ones are numbered 1, 2, ... (stepping
   * over the background value) in their order. */
  struct PostProcessing
  {
    std::uint64_t minimumObjectSize = 0;     ///< pixels; fewer are removed (0: none)
    double        minimumPhysicalSize = 0;   ///< pixels × the spacing's product; below is removed (0: none)
    std::uint64_t numberOfObjectsToKeep = 0; ///< the largest that stay (0: all)
    bool          sortByObjectSize = false;  ///< numbered by decreasing size, else in raster order
    bool
    Active() const
    {
      return minimumObjectSize > 0 || minimumPhysicalSize > 0 || numberOfObjectsToKeep > 0 || sortByObjectSize;
    }
  };

  /** What to label: a dense image in raster order (x fastest), up to three dimensions. */
  struct Request
  {
    unsigned                                dimension = 2;
    std::array<std::uint64_t, cca::MaxDimension> size{ { 1, 1, 1 } }; ///< unused dimensions are 1
    bool                                    fullyConnected = false;
    const void *                            input = nullptr;
    cca::ScalarKind                         inputKind = cca::ScalarKind::UInt8;
    const void *                            mask = nullptr; ///< optional; zero mask pixels are background
    cca::ScalarKind                         maskKind = cca::ScalarKind::UInt8;
    bool computeShapeSums = false; ///< the sums behind the LabelMap's attributes
    bool computePerimeter = false; ///< the perimeter intercepts (with computeShapeSums)
    PostProcessing postProcessing;
    double         pixelVolume = 1; ///< the spacing's product, in dimension order (for minimumPhysicalSize)
  };

  /** The image's geometry, for the LabelMap (unused dimensions: start 0, spacing 1, identity direction). */
  struct Geometry
  {
    unsigned                                                         dimension = 2;
    std::array<std::int64_t, cca::MaxDimension>                      start{ { 0, 0, 0 } };
    std::array<std::uint64_t, cca::MaxDimension>                     size{ { 1, 1, 1 } };
    std::array<double, cca::MaxDimension>                            origin{ { 0, 0, 0 } };
    std::array<double, cca::MaxDimension>                            spacing{ { 1, 1, 1 } };
    std::array<std::array<double, cca::MaxDimension>, cca::MaxDimension> direction{ { { { 1, 0, 0 } }, { { 0, 1, 0 } }, { { 0, 0, 1 } } } };
  };

  /** The optional attributes, with ShapeLabelMapFilter's defaults. */
  struct ShapeOptions
  {
    bool computePerimeter = true;
    bool computeFeretDiameter = false;
    bool computeOrientedBoundingBox = false;
  };

  /** One component's ShapeLabelObject attributes, as ShapeLabelMapFilter computes them (physical space). */
  struct ShapeAttributes
  {
    std::uint64_t                                 numberOfPixels = 0;
    double                                        physicalSize = 0;
    std::array<std::int64_t, cca::MaxDimension>   boundingBoxIndex{ { 0, 0, 0 } };
    std::array<std::uint64_t, cca::MaxDimension>  boundingBoxSize{ { 0, 0, 0 } };
    std::array<double, cca::MaxDimension>         centroid{ { 0, 0, 0 } };
    std::uint64_t                                 numberOfPixelsOnBorder = 0;
    double                                        perimeterOnBorder = 0;
    std::array<double, cca::MaxDimension>         principalMoments{ { 0, 0, 0 } };
    std::array<std::array<double, cca::MaxDimension>, cca::MaxDimension> principalAxes{};
    double                                        elongation = 0;
    double                                        flatness = 0;
    double                                        equivalentSphericalRadius = 0;
    double                                        equivalentSphericalPerimeter = 0;
    std::array<double, cca::MaxDimension>         equivalentEllipsoidDiameter{ { 0, 0, 0 } };
    double                                        perimeter = 0;              ///< with computePerimeter
    double                                        roundness = 0;              ///< with computePerimeter
    double                                        perimeterOnBorderRatio = 0; ///< with computePerimeter
    double                                        feretDiameter = 0;          ///< with computeFeretDiameter
    std::array<double, cca::MaxDimension>         orientedBoundingBoxSize{ { 0, 0, 0 } };   ///< with computeOrientedBoundingBox
    std::array<double, cca::MaxDimension>         orientedBoundingBoxOrigin{ { 0, 0, 0 } }; ///< with computeOrientedBoundingBox
  };

  /** The LabelMap's lines (the runs), grouped by component, each group in raster order: component k
   * (0-based) has lines [firstLine[k], firstLine[k + 1]); indices include the region's start. */
  struct Lines
  {
    template <typename T>
    using Column = std::vector<T, cca::UninitializedAllocator<T>>;
    Column<std::uint64_t>                               firstLine;
    Column<std::array<std::int64_t, cca::MaxDimension>> index;
    Column<std::uint64_t>                               length;
  };

  CudaConnectedComponentAnalysisEngine();
  ~CudaConnectedComponentAnalysisEngine();
  CudaConnectedComponentAnalysisEngine(const CudaConnectedComponentAnalysisEngine &) = delete;
  CudaConnectedComponentAnalysisEngine &
  operator=(const CudaConnectedComponentAnalysisEngine &) = delete;

  /** Labels and measures the request's image on `backend` and returns the number of components (those kept by
   * the request's post-processing; everything below then sees only those, in their new order). The engine
   * is kept for the next call with the same backend, device, thread and work unit counts. Automatic uses the
   * CUDA engine where a device is usable and the image fits it, else the CPU engine, and says so once per
   * process. The CPU engine starts at most `numberOfThreads` threads (0: all hardware threads) and cuts the
   * image into `numberOfWorkUnits` blocks (0: one per thread). */
  std::uint64_t
  Analyze(const Request & request,
          Backend         backend,
          int             deviceId,
          unsigned        numberOfThreads,
          unsigned        numberOfWorkUnits = 0);

  /** The number of components the last Analyze() labeled, before its post-processing. */
  std::uint64_t
  GetOriginalComponentCount() const;

  /** The engine that ran the last Analyze(): Backend::CUDA or Backend::CPU (Automatic before any). */
  Backend
  GetBackendUsed() const;

  /** That engine's description (device name, thread count). */
  std::string
  GetDescription() const;

  /** The raw sums of the last Analyze()'s (kept) components, in label order. */
  const std::vector<cca::ComponentSums> &
  GetComponentSums() const;

  /** Writes the label image of the last Analyze() into `data` (raster order, the input's size): the k-th
   * (kept) component (0-based) gets the value k, plus one from `skipValue` on; background pixels (and
   * removed components) the value whose bytes are `backgroundBits`. */
  void
  WriteLabels(void * data, cca::ScalarKind kind, std::uint64_t backgroundBits, std::uint64_t skipValue);

  /** The lines of the last Analyze()'s components. */
  void
  ComputeLines(const Geometry & geometry, Lines & lines);

  /** Computes the ShapeLabelObject attributes of one component at a time, from the sums of the Analyze()
   * that made it (which needed computeShapeSums, and computePerimeter for the perimeter). Compute() may run
   * on many threads at once: the LabelMap builder calls it as it builds each object, so that no table of
   * every component's attributes is kept. */
  class ShapeAttributeCalculator
  {
  public:
    virtual ~ShapeAttributeCalculator() = default;
    virtual void
    Compute(std::uint64_t component, ShapeAttributes & attributes) const = 0;
  };

  /** The calculator for the last Analyze()'s components; `lines` (from ComputeLines(), kept alive by the
   * caller) serve the Feret diameter and the oriented bounding box. */
  std::unique_ptr<ShapeAttributeCalculator>
  MakeShapeAttributeCalculator(const Geometry & geometry, const ShapeOptions & options, const Lines & lines) const;

  /** Engines outlive their facade: a destroyed filter's engine (its device and page-locked buffers, its host
   * tables) serves the next filter of the same backend, device and thread count. This frees the kept ones. */
  static void
  ReleaseCachedEngines();

  /** Whether the LabelMap's moments of an image of this size (unused dimensions 1) can be computed exactly:
   * every image with a side below about 3.6·10^9 pixels (compilers with 128-bit integers). */
  static bool
  CanMeasureMoments(const std::array<std::uint64_t, cca::MaxDimension> & size);

  /** Whether this build has the CUDA engine, and how many CUDA devices it can use now (`reason`: why none). */
  static bool
  IsCudaEngineCompiled();
  static int
  GetCudaDeviceCount(std::string * reason = nullptr);

private:
  struct Internals;
  std::unique_ptr<Internals> m_Internals;
};

} // namespace itk

#endif
