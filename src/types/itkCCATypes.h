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
// The plain types of the connected component analysis: what the filter asks (Request), what the engines
// measure (ComponentSums) and hand over for the LabelMap (Lines, Geometry, ShapeAttributes), the pixel kinds,
// the label rule and the errors. Free of ITK and CUDA: both engines (src/, cuda/), the engine facade
// (include/itkCudaConnectedComponentAnalysisEngine.h, which re-exports what the filter needs) and the
// Python package include it. Installed with the public headers.
#ifndef itkCCATypes_h
#define itkCCATypes_h

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
  /** Multi-label input (Request::multiLabel): the input value all the component's pixels share, its class
   * (an unsigned 64-bit value's bits as they are); 0 otherwise. */
  std::int64_t classValue = 0;

  bool
  operator==(const ComponentSums & o) const
  {
    return numberOfPixels == o.numberOfPixels && boundingBoxMin == o.boundingBoxMin &&
           boundingBoxMax == o.boundingBoxMax && indexSum == o.indexSum && indexProductSum == o.indexProductSum &&
           numberOfPixelsOnBorder == o.numberOfPixelsOnBorder && borderFaces == o.borderFaces &&
           intercepts == o.intercepts && classValue == o.classValue;
  }
  bool
  operator!=(const ComponentSums & o) const
  {
    return !(*this == o);
  }
};


/** Raw intensity sums of a feature image, per component, as columns: what ITK's
 * StatisticsLabelMapFilter accumulates over an object's pixels, in the engine's zero-based index space. Column c
 * of component k is values[c * numberOfComponents + k]. The weighted index sums are taken relative to the
 * component's bounding box minimum (ComponentSums::boundingBoxMin), so that they keep their precision far from
 * the image's origin. Minimum and maximum follow ITK's `v <= min` and `v >= max` in raster order: where a value
 * repeats, the last pixel in raster order gives the index. */
struct IntensitySums
{
  enum Column : unsigned
  {
    Sum,        ///< Σv
    Sum2,       ///< Σv²
    Sum3,       ///< Σv³
    Sum4,       ///< Σv⁴
    Minimum,    ///< the smallest value (the feature type's largest where no value compares, NaN)
    Maximum,    ///< the largest value
    Weighted0,  ///< Σv·(x - x0), then y, z: x0 the bounding box's first index
    Weighted1,
    Weighted2,
    Weighted00, ///< Σv·(x - x0)², then yy, zz, xy, xz, yz (ComponentSums::indexProductSum's order)
    Weighted11,
    Weighted22,
    Weighted01,
    Weighted02,
    Weighted12,
    NumberOfColumns
  };
  /** The integer columns: each component's linear pixel index (x + sizeX·(y + sizeY·z)) of its minimum and of its
   * maximum, its pixel count, and the reference of the weighted sums (its bounding box's first index): what the
   * statistics need besides the sums, so that they need no ComponentSums rows (which the CUDA engine would convert
   * from its device arrays for millions of components). */
  enum IntegerColumn : unsigned
  {
    MinimumIndex,
    MaximumIndex,
    NumberOfPixels,
    Reference0,
    Reference1,
    Reference2,
    NumberOfIntegerColumns
  };
  std::uint64_t              numberOfComponents = 0;
  std::vector<double>        values;   ///< column c of component k at [c * numberOfComponents + k]
  std::vector<std::uint64_t> integers; ///< integer column c of component k at [c * numberOfComponents + k]

  double
  Get(Column column, std::uint64_t k) const
  {
    return values[static_cast<std::size_t>(column * numberOfComponents + k)];
  }
  std::uint64_t
  Get(IntegerColumn column, std::uint64_t k) const
  {
    return integers[static_cast<std::size_t>(column * numberOfComponents + k)];
  }
  void
  Resize(std::uint64_t k)
  {
    numberOfComponents = k;
    values.resize(static_cast<std::size_t>(NumberOfColumns * k));
    integers.resize(static_cast<std::size_t>(NumberOfIntegerColumns * k));
  }
  void
  Clear()
  {
    numberOfComponents = 0;
    values.clear();
    integers.clear();
  }
};

/** The one error hierarchy of the engines and their facade (the filter turns each into an
 * itk::ExceptionObject: OutOfMemory into itk::MemoryAllocationError). */
class Error : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/** Host or device memory ran out; what() says what was being allocated. */
class OutOfMemory : public Error
{
public:
  using Error::Error;
};

/** An engine cannot be used at all (no device, no CUDA build, an image too large for its index type); the
 * automatic backend falls back to the CPU engine on this error and on no other. */
class Unavailable : public Error
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
  /** Multi-label input: numberOfObjectsToKeep is the number kept of each class (its largest), not overall. */
  bool perClass = false;
  /** Multi-label input: the label image gets each kept component's class value instead of its label (the
   * cleaned segmentation); removed components become background. */
  bool writeClassValues = false;
  bool
  Active() const
  {
    return minimumObjectSize > 0 || minimumPhysicalSize > 0 || numberOfObjectsToKeep > 0 || sortByObjectSize;
  }
};

/** Which neighbors join: those whose offset has at most `maxNonZero` non-zero components (scikit-image's
 * `connectivity`). 1: face neighbors (4 in 2-D, 6 in 3-D, ITK's default); 2: also the edge neighbors (8 in 2-D,
 * 18 in 3-D); 3: every neighbor (26 in 3-D). A value past the image's dimension is full connectivity there.
 * `periodicAxes` (bit d: axis d, x first): the image wraps along those axes -- the pixel past the last index is
 * the first one (a torus; cc3d's periodic_boundary), so that components crossing the image's opposite faces are
 * one. The engines label within the image; the slab engine joins across the wrapped faces.
 * `valueTolerance` (0 or more): neighbors join only where their values differ by at most it (ITK's
 * ScalarConnectedComponentImageFilter's distance threshold, cc3d's delta; itkCCAValueTolerance.h says how exactly),
 * both foreground; negative: every foreground neighbor joins. */
struct Connectivity
{
  unsigned maxNonZero = 1;
  unsigned periodicAxes = 0;
  double   valueTolerance = -1;

  static constexpr Connectivity
  Face()
  {
    return Connectivity{ 1 };
  }
  /** Every neighbor, whatever the dimension (ITK's FullyConnected). */
  static constexpr Connectivity
  Full()
  {
    return Connectivity{ MaxDimension };
  }
  /** ITK's FullyConnected flag as a connectivity. */
  static constexpr Connectivity
  FromFullyConnected(bool fullyConnected)
  {
    return fullyConnected ? Full() : Face();
  }
  constexpr bool
  IsFace() const
  {
    return maxNonZero <= 1;
  }
  /** Every neighbor of a `dimension`-D image joins. */
  constexpr bool
  IsFull(unsigned dimension) const
  {
    return maxNonZero >= dimension;
  }
  /** Whether the neighbor at an offset with `nonZero` non-zero components joins. */
  constexpr bool
  Joins(unsigned nonZero) const
  {
    return nonZero <= maxNonZero;
  }
  /** Whether neighbors join by their values' difference (valueTolerance). */
  constexpr bool
  HasValueTolerance() const
  {
    return valueTolerance >= 0;
  }
  /** Whether the image wraps along axis `axis`. */
  constexpr bool
  IsPeriodic(unsigned axis) const
  {
    return ((periodicAxes >> axis) & 1u) != 0;
  }
};

/** What to label and measure: a dense image in raster order (x fastest), up to three dimensions, and what is
 * done with its components afterwards. The one request type: the filter fills it, the facade and both
 * engines read it. */
struct Request
{
  unsigned                                dimension = 2;
  std::array<std::uint64_t, MaxDimension> size{ { 1, 1, 1 } }; ///< unused dimensions are 1
  Connectivity                            connectivity;                ///< face neighbors unless set
  const void *                            input = nullptr;
  ScalarKind                              inputKind = ScalarKind::UInt8;
  const void *                            mask = nullptr; ///< optional; zero mask pixels are background
  ScalarKind                              maskKind = ScalarKind::UInt8;
  /** Equal-value connectivity: the input holds class values (an integer type); a component is a
   * connected set of pixels of the same non-zero value, as ScalarConnectedComponentImageFilter with a distance
   * of 0 and background 0 labels them, and records that value (ComponentSums::classValue). false: every
   * non-zero pixel is foreground, whatever its value (ConnectedComponentImageFilter). */
  bool multiLabel = false;
  /** Optional: a feature image of the input's size, in the input's memory (host, or the device with
   * inputOnDevice): each component's intensity sums (IntensitySums) over its pixels' values. Not with batches or
   * slabs (a memoryBudget). */
  const void * feature = nullptr;
  ScalarKind   featureKind = ScalarKind::Float32;
  /** Also accumulate the sums behind ITK's shape attributes (second moments, border counts). */
  bool computeShapeSums = false;
  /** Also count the perimeter intercepts (needs computeShapeSums). */
  bool           computePerimeter = false;
  PostProcessing postProcessing;
  double         pixelVolume = 1; ///< the spacing's product, in dimension order (for minimumPhysicalSize)
  /** CUDA engine only: `input` and `mask` are device pointers (CuPy, PyTorch) on the engine's device; the
   * engine's work is ordered after the work already queued on `stream` (a cudaStream_t; nullptr: none). */
  bool   inputOnDevice = false;
  void * stream = nullptr;
  /** The CUDA engine keeps the per-component sums on the device: the table's columns are then made there
   * (WriteBasicColumns(), host or device columns), and the sums' rows come to the host only if
   * GetComponentSums() asks for them, which must then not run beside another call on the same facade (it
   * uses the engine's transfer buffers). For callers that take columns (the Python table: millions of
   * components' rows cost more than the labeling). false: the rows come to the host with the analysis (the
   * LabelMap's build reads them beside the label image's writing). */
  bool keepSumsOnDevice = false;
  /** Batches: the image is a stack of images along its slowest axis (y in 2-D, z in 3-D), each
   * `batchExtent` indices long, labeled each on its own: no component reaches from one image into the next.
   * 0: one image. Must divide the slowest axis' size; the basic features only (no shape sums). */
  std::uint64_t batchExtent = 0;
  /** The most working memory, in bytes, one analysis may take (the CUDA engine: device memory; the CPU engine:
   * host memory besides the image and the outputs), counted at its worst case per pixel: an image that needs
   * more is labeled in slabs along its slowest axis, with the same result. 0: automatic -- the image
   * whole, or slabs of fewer pixels than the engine's indices reach (the CUDA engine: 2^32), and where the
   * engine runs out of memory, slabs of half as many planes, down to one. Host images of 2 or 3 dimensions,
   * not batches. */
  std::uint64_t memoryBudget = 0;

  std::uint64_t
  NumberOfPixels() const
  {
    return size[0] * size[1] * size[2];
  }
};

/** A label image whose touching labels are wanted (ContactTable): integer labels, 0 the background, none negative. */
struct ContactRequest
{
  unsigned                                dimension = 2;
  std::array<std::uint64_t, MaxDimension> size{ { 1, 1, 1 } }; ///< unused dimensions are 1
  Connectivity                            connectivity;                ///< which neighbors touch (maxNonZero)
  const void *                            labels = nullptr;
  ScalarKind                              labelKind = ScalarKind::UInt32;
  /** CUDA engine only: `labels` is a device pointer on the engine's device, ready after the work queued on
   * `stream` (a cudaStream_t; nullptr: none). */
  bool   labelsOnDevice = false;
  void * stream = nullptr;

  std::uint64_t
  NumberOfPixels() const
  {
    return size[0] * size[1] * size[2];
  }
};

/** The pairs of touching labels first < second, in increasing (first, second) order (cc3d's contacts and
 * region_graph): how many neighbor pairs at the connectivity join them, and per axis d how many face neighbors
 * across d (their shared face is perpendicular to d: its area is the product of the other axes' spacings). */
struct ContactTable
{
  std::vector<std::uint64_t>                            first, second, neighborPairs;
  std::array<std::vector<std::uint64_t>, MaxDimension> faces;

  std::size_t
  Size() const
  {
    return first.size();
  }
  /** `n` rows of zeros. */
  void
  Resize(std::size_t n)
  {
    for (auto * column : { &first, &second, &neighborPairs, &faces[0], &faces[1], &faces[2] })
    {
      column->assign(n, 0);
    }
  }
};

/** The image's geometry, for the LabelMap (unused dimensions: start 0, spacing 1, identity direction). */
struct Geometry
{
  unsigned                                                   dimension = 2;
  std::array<std::int64_t, MaxDimension>                     start{ { 0, 0, 0 } };
  std::array<std::uint64_t, MaxDimension>                    size{ { 1, 1, 1 } };
  std::array<double, MaxDimension>                           origin{ { 0, 0, 0 } };
  std::array<double, MaxDimension>                           spacing{ { 1, 1, 1 } };
  std::array<std::array<double, MaxDimension>, MaxDimension> direction{
    { { { 1, 0, 0 } }, { { 0, 1, 0 } }, { { 0, 0, 1 } } }
  };
};

/** Where the basic columns go: one value per component, at its (new) index; nullptr: not wanted. Per
 * dimension d (ITK's order, x first): the bounding box's first index and its end (last index + 1), and the
 * centroid's coordinate. `onDevice`: the pointers are GPU memory of the device that analyzed, written in order on
 * the analyzed request's stream (Request::stream; without one, written when the call returns). */
struct BasicColumns
{
  /** The component's label in the label image, its row + 1 (written with the other columns, on the device where
   * they are, so that a table needs no pass of its own for it). Not for batches, whose labels restart per image. */
  std::uint64_t * label = nullptr;
  std::uint64_t * numberOfPixels = nullptr;
  double *        physicalSize = nullptr;
  std::int64_t *  boundingBoxBegin[MaxDimension] = { nullptr, nullptr, nullptr };
  std::int64_t *  boundingBoxEnd[MaxDimension] = { nullptr, nullptr, nullptr };
  double *        centroid[MaxDimension] = { nullptr, nullptr, nullptr };
  /** Batches: images stacked along the slowest axis, `batchStride` indices apart (Request::batchExtent, or
   * the image's extent plus a background separator). Each component's image (its first index along that axis /
   * batchStride) goes to `image`, and its box and centroid are taken within its image, from integer sums made relative
   * first, so that they equal a call on that image alone. 0: no batch. */
  std::uint64_t  batchStride = 0;
  std::int64_t * image = nullptr;
  /** Multi-label input: each component's class value (ComponentSums::classValue). */
  std::int64_t * classValue = nullptr;
  bool           onDevice = false;
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
  std::uint64_t                                              numberOfPixels = 0;
  double                                                     physicalSize = 0;
  std::array<std::int64_t, MaxDimension>                     boundingBoxIndex{ { 0, 0, 0 } };
  std::array<std::uint64_t, MaxDimension>                    boundingBoxSize{ { 0, 0, 0 } };
  std::array<double, MaxDimension>                           centroid{ { 0, 0, 0 } };
  std::uint64_t                                              numberOfPixelsOnBorder = 0;
  double                                                     perimeterOnBorder = 0;
  std::array<double, MaxDimension>                           principalMoments{ { 0, 0, 0 } };
  std::array<std::array<double, MaxDimension>, MaxDimension> principalAxes{};
  double                                                     elongation = 0;
  double                                                     flatness = 0;
  double                                                     equivalentSphericalRadius = 0;
  double                                                     equivalentSphericalPerimeter = 0;
  std::array<double, MaxDimension>                           equivalentEllipsoidDiameter{ { 0, 0, 0 } };
  double                                                     perimeter = 0;              ///< with computePerimeter
  double                                                     roundness = 0;              ///< with computePerimeter
  double                                                     perimeterOnBorderRatio = 0; ///< with computePerimeter
  double                                                     feretDiameter = 0;          ///< with computeFeretDiameter
  std::array<double, MaxDimension> orientedBoundingBoxSize{ { 0, 0, 0 } };   ///< with computeOrientedBoundingBox
  std::array<double, MaxDimension> orientedBoundingBoxOrigin{ { 0, 0, 0 } }; ///< with computeOrientedBoundingBox
};

/** One component's StatisticsLabelObject attributes, as StatisticsLabelMapFilter computes them from a feature
 * image (physical space), except the histogram and the median, which ITK takes from a histogram of bins
 * spread over the whole feature image's range (an approximation) and which are not computed here. */
struct IntensityStatistics
{
  double                                                     minimum = 0;
  double                                                     maximum = 0;
  double                                                     sum = 0;
  double                                                     mean = 0;
  double                                                     variance = 0;
  double                                                     standardDeviation = 0;
  double                                                     skewness = 0;
  double                                                     kurtosis = 0;
  std::array<std::int64_t, MaxDimension>                     minimumIndex{ { 0, 0, 0 } };
  std::array<std::int64_t, MaxDimension>                     maximumIndex{ { 0, 0, 0 } };
  std::array<double, MaxDimension>                           centerOfGravity{ { 0, 0, 0 } };
  std::array<double, MaxDimension>                           weightedPrincipalMoments{ { 0, 0, 0 } };
  std::array<std::array<double, MaxDimension>, MaxDimension> weightedPrincipalAxes{};
  double                                                     weightedElongation = 0;
  double                                                     weightedFlatness = 0;
  bool weightedMoments = false; ///< whether the last four were computed (an eigen-decomposition per component)
};

/** The LabelMap's lines (the runs), grouped by component, each group in raster order: component k
 * (0-based) has lines [firstLine[k], firstLine[k + 1]); indices include the region's start. */
struct Lines
{
  /** The columns' allocator: std::allocator whose resize() leaves new elements default-initialized (integers:
   * uninitialized), for columns that the engines fill completely right away (tens of millions of lines would
   * otherwise be zero-filled first, single-threaded). */
  template <typename T>
  struct Allocator : std::allocator<T>
  {
    template <typename U>
    struct rebind
    {
      using other = Allocator<U>;
    };
    Allocator() = default;
    template <typename U>
    Allocator(const Allocator<U> &) noexcept
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
  template <typename T>
  using Column = std::vector<T, Allocator<T>>;
  Column<std::uint64_t>                          firstLine;
  Column<std::array<std::int64_t, MaxDimension>> index;
  Column<std::uint64_t>                          length;
};

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
  /** Only what needs no shape sums: numberOfPixels, physicalSize, boundingBoxIndex/Size and centroid (the
   * Python table's basic columns, from any Analyze()). */
  virtual void
  ComputeBasic(std::uint64_t component, ShapeAttributes & attributes) const = 0;
};

} // namespace cca
} // namespace itk

#endif
