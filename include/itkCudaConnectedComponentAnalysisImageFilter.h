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
#ifndef itkCudaConnectedComponentAnalysisImageFilter_h
#define itkCudaConnectedComponentAnalysisImageFilter_h

#include "itkCudaConnectedComponentAnalysisEngine.h"
#include "itkCudaConnectedComponentAnalysisAttributes.h"
#include "itkContinuousIndex.h"
#include "itkFixedArray.h"
#include "itkLabelMap.h"
#include "itkShapeLabelObject.h"
#include "itkCudaConnectedComponentAnalysisEnums.h"
#include "itkImageToImageFilter.h"
#include "vnl/vnl_matrix.h"

#include <chrono>
#include <limits>
#include <memory>
#include <type_traits>
#include <string>
#include <thread>
#include <vector>

// VerifyInputInformation() is const since ITK 5 (ITKv5_CONST, empty with ITKV4_COMPATIBILITY); ITK 6 drops
// the macro and keeps the const.
#ifdef ITKv5_CONST
#  define CCA_ITKv5_CONST ITKv5_CONST
#else
#  define CCA_ITKv5_CONST const
#endif

namespace itk
{

/**
 * \class CudaConnectedComponentAnalysisImageFilter
 * \brief Labels the connected components of an image on the GPU, exactly as
 * ConnectedComponentImageFilter does, and measures them in the same pass.
 *
 * Non-zero input pixels are objects, zero pixels background; pixels where the optional mask image is
 * zero are background too. The output is identical, pixel for pixel, to ConnectedComponentImageFilter
 * with the same FullyConnected, BackgroundValue and MaskImage: labels are consecutive in raster order
 * of each object's first pixel, starting at 1 when the background is 0, else at 0 skipping the
 * background value. If there are more objects than the output pixel type holds, an
 * ExceptionObject is thrown before any output pixel is written.
 *
 * Two engines produce the result: a CUDA engine (run-based FLSL segment detection, lock-free
 * union-find over runs, features voted with warp conflict detection) and a multi-threaded CPU engine.
 * SetBackend() chooses: Automatic (default) uses the CUDA engine when a device is usable and falls
 * back to the CPU engine otherwise (said once per process); CUDA insists on the GPU and throws
 * without one; CPU never touches the GPU. GetBackendUsed() tells which engine produced the last output.
 *
 * After Update(), GetObjectCount() is the number of objects and GetComponentFeatures() their pixel
 * count, bounding box and centroid (index space), in label order.
 *
 * The output named "LabelMap" (GetLabelMap()) is a LabelMap of ShapeLabelObjects, one per component with
 * the label of the label image, its lines in raster order, and the attributes LabelImageToShapeLabelMapFilter computes
 * (ComputePerimeter on, ComputeFeretDiameter and ComputeOrientedBoundingBox off by default, as there).
 * The engine accumulates the raw sums (second moments, border counts, perimeter intercepts) in the
 * labeling pass; the host derives the attributes. GenerateLabelImageOff() or GenerateLabelMapOff()
 * skip the work of either output (the skipped output stays empty).
 *
 * TOutputLabelMap is the LabelMap type of that output: by default LabelMap<ShapeLabelObject<label pixel
 * type, dimension>>; any LabelMap whose objects derive from ShapeLabelObject can be asked for, such as
 * LabelMap<StatisticsLabelObject<unsigned long, D>>, the LabelMap type ITK's Python wrapping knows (the one
 * this module is wrapped with, as ITK wraps LabelImageToShapeLabelMapFilter). The LabelMap is a named
 * output, not output 1: output 0 stays the only indexed output, which is what ITK's Python functional
 * form (itk.cuda_connected_component_analysis_image_filter(image)) returns.
 *
 * Images too large for one analysis are labeled in slabs along the slowest axis (z in 3D, y in 2D) and merged
 * across the slabs' faces, with the same labels and features as a whole analysis (GetNumberOfSlabs() says into
 * how many): images of 2^32 pixels or more on the CUDA engine (32-bit indices), images that need more working
 * memory than SetMemoryBudget() allows, and, by default, images the engine runs out of memory on (slabs of half
 * as many planes each time, down to one).
 *
 * Images of 1 to 3 dimensions: both engines lay out runs along x in rows (y) and slices (z) and merge
 * over the 3^D neighborhood written out for D <= 3; for 4D images use ConnectedComponentImageFilter.
 *
 * As ITK's filters: progress from 0 to 1 over the whole update, AbortGenerateData honoured between stages
 * (ProcessAborted), SetNumberOfWorkUnits() for the CPU engine's threads and the LabelMap's loops (identical
 * results for any number), MemoryAllocationError when host or GPU memory runs out.
 *
 * \sa ConnectedComponentImageFilter
 * \ingroup CudaConnectedComponentAnalysis
 */
template <typename TInputImage, typename TOutputImage, typename TMaskImage = TInputImage,
          typename TOutputLabelMap =
            LabelMap<ShapeLabelObject<typename TOutputImage::PixelType, TOutputImage::ImageDimension>>>
class ITK_TEMPLATE_EXPORT CudaConnectedComponentAnalysisImageFilter
  : public ImageToImageFilter<TInputImage, TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaConnectedComponentAnalysisImageFilter);

  using Self = CudaConnectedComponentAnalysisImageFilter;
  using Superclass = ImageToImageFilter<TInputImage, TOutputImage>;
  using Pointer = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
#ifdef itkOverrideGetNameOfClassMacro
  itkOverrideGetNameOfClassMacro(CudaConnectedComponentAnalysisImageFilter);
#else // ITK before 5.4
  itkTypeMacro(CudaConnectedComponentAnalysisImageFilter, ImageToImageFilter);
#endif

  static constexpr unsigned int ImageDimension = TOutputImage::ImageDimension;
  static constexpr unsigned int InputImageDimension = TInputImage::ImageDimension;
  static_assert(ImageDimension == InputImageDimension, "input and output must have the same dimension");
  static_assert(ImageDimension >= 1 && ImageDimension <= cca::MaxDimension, "images of 1 to 3 dimensions");
  static_assert(std::is_integral<typename TOutputImage::PixelType>::value,
                "labels are integers, as ConnectedComponentImageFilter's IsInteger concept requires");

  using InputImageType = TInputImage;
  using OutputImageType = TOutputImage;
  using MaskImageType = TMaskImage;
  using InputPixelType = typename TInputImage::PixelType;
  using OutputPixelType = typename TOutputImage::PixelType;
  using OutputImagePixelType = OutputPixelType;
  using MaskPixelType = typename TMaskImage::PixelType;
  using RegionType = typename TOutputImage::RegionType;
  using IndexType = typename TOutputImage::IndexType;
  using SizeType = typename TOutputImage::SizeType;
  using LabelType = SizeValueType;

  using BackendEnum = CudaConnectedComponentAnalysisEnums::Backend;

  using LabelMapType = TOutputLabelMap;
  using LabelObjectType = typename LabelMapType::LabelObjectType;
  static_assert(LabelMapType::ImageDimension == ImageDimension, "the LabelMap has the images' dimension");
  static_assert(
    std::is_base_of<ShapeLabelObject<typename LabelObjectType::LabelType, ImageDimension>, LabelObjectType>::value,
    "the LabelMap's objects are ShapeLabelObjects (or derive from ShapeLabelObject)");
  static_assert(std::numeric_limits<typename LabelObjectType::LabelType>::max() >=
                  std::numeric_limits<OutputPixelType>::max(),
                "the LabelMap's label type holds every label of the label image");

  /** Where the last Update() spent its time, in seconds (wall clock). With both outputs generated, the
   * label image is written on its own thread while the LabelMap is built: WriteLabels then overlaps
   * BuildLabelMap, and the update takes less than the sum. */
  struct TimeSplit
  {
    double ClearLabelMap{ 0 }; ///< the previous update's LabelMap emptied
    double Analyze{ 0 };       ///< labeling and features in the engine, transfers of the input included
    double WriteLabels{ 0 };   ///< the label image written (and copied back from the GPU)
    double ExportRuns{ 0 };    ///< the runs copied from the engine and grouped into lines
    double BuildLabelMap{ 0 }; ///< LabelMap objects, their lines and attributes built on the host
  };

  /** Pixel count, bounding box (index space) and centroid (continuous index) of one component; with
   * MultiLabel, its class (the input value its pixels share; 0 otherwise). */
  struct ComponentFeatures
  {
    OutputPixelType                         Label{};
    std::int64_t                            ClassValue{ 0 };
    SizeValueType                           NumberOfPixels{ 0 };
    RegionType                              BoundingBox;
    ContinuousIndex<double, ImageDimension> Centroid;
  };
  using ComponentFeaturesContainer = std::vector<ComponentFeatures>;

  /** Face connectivity only (4 in 2D, 6 in 3D; default), or face+edge+vertex (8 / 26), as ITK's filters have it.
   * Setting it undoes a SetConnectivity(). */
  virtual void
  SetFullyConnected(bool fullyConnected)
  {
    if (m_FullyConnected != fullyConnected || m_Connectivity != 0)
    {
      m_FullyConnected = fullyConnected;
      m_Connectivity = 0;
      this->Modified();
    }
  }
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);

  /** Past ITK: the connectivity as the number of neighbors that join (cc3d's and the Python package's count): 2 in
   * 1D; 4 or 8 in 2D; 6, 18 (faces and edges, which ITK's filters do not have) or 26 in 3D. 0 (the default):
   * FullyConnected decides. Set, it decides, and FullyConnected says whether it is every neighbor. A count the
   * image's dimension does not have is refused at the update. */
  virtual void
  SetConnectivity(unsigned numberOfNeighbors)
  {
    if (m_Connectivity != numberOfNeighbors)
    {
      m_Connectivity = numberOfNeighbors;
      m_FullyConnected = numberOfNeighbors != 0 && numberOfNeighbors == NumberOfNeighbors(ImageDimension);
      this->Modified();
    }
  }
  itkGetConstMacro(Connectivity, unsigned);

  /** Past ITK: the axes along which the image wraps around (periodic boundaries, a torus; cc3d's
   * periodic_boundary): the pixel past an axis' last index is its first, at every connectivity, so that components
   * crossing the region's opposite faces are one. The attributes describe the pixels as they lie in the region
   * (a wrapped component's bounding box spans both faces; the region's border is the border). Default: none.
   * 2-D and 3-D images, without a feature image. */
  using PeriodicType = FixedArray<bool, ImageDimension>;
  itkSetMacro(Periodic, PeriodicType);
  itkGetConstReferenceMacro(Periodic, PeriodicType);

  /** As ScalarConnectedComponentImageFilter's (and cc3d's delta): neighbors join only where their input values
   * differ by at most this distance -- exactly for integer pixels, in the pixel type's precision for floating-point
   * ones -- and both are non-zero (and inside the mask; ScalarConnectedComponentImageFilter itself labels the zero
   * pixels too, unless masked out). Negative (the default): every non-zero neighbor joins. Not with MultiLabel (a
   * distance of 0 on classes), periodic boundaries or a memory budget. */
  itkSetMacro(DistanceThreshold, double);
  itkGetConstMacro(DistanceThreshold, double);

  /** Output value of background pixels; object labels step over it (as ConnectedComponentImageFilter). */
  itkSetMacro(BackgroundValue, OutputPixelType);
  itkGetConstMacro(BackgroundValue, OutputPixelType);

  /** Optional mask: pixels where it is zero are background. It must cover the input's region. */
  itkSetInputMacro(MaskImage, MaskImageType);
  itkGetInputMacro(MaskImage, MaskImageType);

  /** Produce the label image (output 0; default on) and the LabelMap (the output "LabelMap"; default on).
   * With GenerateLabelImageOff() output 0 has no buffer: Update() runs the analysis once (through the
   * LabelMap), and a filter connected to output 0 throws an exception naming GenerateLabelImageOff(). */
  itkSetMacro(GenerateLabelImage, bool);
  itkGetConstMacro(GenerateLabelImage, bool);
  itkBooleanMacro(GenerateLabelImage);
  itkSetMacro(GenerateLabelMap, bool);
  itkGetConstMacro(GenerateLabelMap, bool);
  itkBooleanMacro(GenerateLabelMap);

  /** LabelMap attributes computed on request, with ShapeLabelMapFilter's defaults (on, off, off). */
  itkSetMacro(ComputePerimeter, bool);
  itkGetConstMacro(ComputePerimeter, bool);
  itkBooleanMacro(ComputePerimeter);
  itkSetMacro(ComputeFeretDiameter, bool);
  itkGetConstMacro(ComputeFeretDiameter, bool);
  itkBooleanMacro(ComputeFeretDiameter);
  itkSetMacro(ComputeOrientedBoundingBox, bool);
  itkGetConstMacro(ComputeOrientedBoundingBox, bool);
  itkBooleanMacro(ComputeOrientedBoundingBox);

  /** Post-processing (off by default: the labels are then ConnectedComponentImageFilter's). Decided from
   * the components' pixel counts and applied where the labels are written, so that the label image, the
   * LabelMap and GetComponentFeatures() come out filtered and renumbered, as ITK's chain
   * ConnectedComponentImageFilter → RelabelComponentImageFilter gives them: components with fewer than
   * MinimumObjectSize pixels, or with a physical size (pixels × the spacing's product, as
   * ShapeLabelObject::GetPhysicalSize()) below MinimumPhysicalSize, become background (0: no limit); of
   * the rest the NumberOfObjectsToKeep largest stay (0: all; among equal sizes the first in raster order);
   * the kept are numbered 1, 2, ... by decreasing size with SortByObjectSize (ties in raster order, as
   * RelabelComponentImageFilter), else in raster order. GetObjectCount() is then the number kept, and
   * GetOriginalObjectCount() the number labeled. */
  itkSetMacro(MinimumObjectSize, SizeValueType);
  itkGetConstMacro(MinimumObjectSize, SizeValueType);
  itkSetMacro(MinimumPhysicalSize, double);
  itkGetConstMacro(MinimumPhysicalSize, double);
  itkSetMacro(NumberOfObjectsToKeep, SizeValueType);
  itkGetConstMacro(NumberOfObjectsToKeep, SizeValueType);
  itkSetMacro(SortByObjectSize, bool);
  itkGetConstMacro(SortByObjectSize, bool);
  itkBooleanMacro(SortByObjectSize);

  /** Multi-label input (off by default): the input holds class values (an integer pixel type), and a component
   * is a connected set of pixels of the same non-zero value, as ScalarConnectedComponentImageFilter labels them
   * with a distance threshold of 0 (and as a loop of ConnectedComponentImageFilter over the classes, numbered
   * together in raster order of first pixels). Each component records its class (ComponentFeatures::ClassValue,
   * the table's ClassValue column). With the default off, every non-zero pixel is foreground, whatever its value.
   * The CUDA engine does not label multi-label input yet: the Automatic backend then uses the CPU engine and says
   * so; the CUDA backend throws. */
  itkSetMacro(MultiLabel, bool);
  itkGetConstMacro(MultiLabel, bool);
  itkBooleanMacro(MultiLabel);

  /** Multi-label input: NumberOfObjectsToKeep is the number of components kept of each class (its largest), not
   * overall (nnU-Net's "keep the largest component per class"). The minimum sizes act per component either way;
   * the kept components of all classes are numbered together. Off by default. */
  itkSetMacro(PerClass, bool);
  itkGetConstMacro(PerClass, bool);
  itkBooleanMacro(PerClass);

  /** Multi-label input: the label image gets each kept component's class value instead of its label -- the
   * input segmentation cleaned by the post-processing (removed components become the background value). The
   * class values must fit the output pixel type. The LabelMap and GetComponentFeatures() still hold the
   * components under their labels. Off by default. */
  itkSetMacro(OutputClassValues, bool);
  itkGetConstMacro(OutputClassValues, bool);
  itkBooleanMacro(OutputClassValues);

  /** The number of components labeled before the post-processing removed any (after Update()). */
  itkGetConstMacro(OriginalObjectCount, SizeValueType);

  /** The feature image (optional): an image of the input's dimension, size and geometry, of any scalar
   * pixel type (dispatched at run time, so that one wrapped filter takes CT's short and PET's float alike).
   * With one, the engine sums each component's feature values in the labeling pass (on the GPU with the CUDA
   * engine): StatisticsLabelMapFilter's attributes, equal to LabelImageToStatisticsLabelMapFilter's but for
   * the median and the histogram, which are not computed (ITK takes them from bins over the whole feature
   * image's range, an approximation). They fill the LabelMap where its objects are StatisticsLabelObjects
   * (the wrapped type), and GetIntensityFeatureTable() in any case. Not with a MemoryBudget. */
  void
  SetFeatureImage(const ImageBase<ImageDimension> * image)
  {
    this->ProcessObject::SetInput("FeatureImage", const_cast<ImageBase<ImageDimension> *>(image));
  }
  const ImageBase<ImageDimension> *
  GetFeatureImage() const
  {
    return itkDynamicCastInDebugMode<const ImageBase<ImageDimension> *>(this->ProcessObject::GetInput("FeatureImage"));
  }

  /** The intensity statistics of the last Update()'s components (a feature image), one row per component in label
   * order, columns named by GetIntensityFeatureTableColumnNames(): Label, Minimum, Maximum, Sum, Mean,
   * StandardDeviation, Variance, Skewness, Kurtosis, CenterOfGravity-i (the physical point), MinimumIndex-i,
   * MaximumIndex-i (the weighted principal moments, an eigen-decomposition per component, are the LabelMap's only).
   * Throws where the last Update() had no feature image. */
  vnl_matrix<double>
  GetIntensityFeatureTable() const;

  /** The column names of GetIntensityFeatureTable(), separated by single spaces. */
  static std::string
  GetIntensityFeatureTableColumnNames();

  /** The LabelMap of ShapeLabelObjects (the output named "LabelMap"). */
  LabelMapType *
  GetLabelMap()
  {
    return itkDynamicCastInDebugMode<LabelMapType *>(this->ProcessObject::GetOutput("LabelMap"));
  }
  const LabelMapType *
  GetLabelMap() const
  {
    return itkDynamicCastInDebugMode<const LabelMapType *>(this->ProcessObject::GetOutput("LabelMap"));
  }

#if !defined(ITK_WRAPPING_PARSER)
  /** Not wrapped for Python (a nested struct): use the four getters below there. */
  const TimeSplit &
  GetTimeSplit() const
  {
    return m_TimeSplit;
  }
#endif
  /** The stages of GetTimeSplit() one by one (seconds), for the Python wrapping. */
  double
  GetClearLabelMapTime() const
  {
    return m_TimeSplit.ClearLabelMap;
  }
  double
  GetAnalyzeTime() const
  {
    return m_TimeSplit.Analyze;
  }
  double
  GetWriteLabelsTime() const
  {
    return m_TimeSplit.WriteLabels;
  }
  double
  GetExportRunsTime() const
  {
    return m_TimeSplit.ExportRuns;
  }
  double
  GetBuildLabelMapTime() const
  {
    return m_TimeSplit.BuildLabelMap;
  }

  /** Number of objects found by the last Update(). */
  itkGetConstReferenceMacro(ObjectCount, LabelType);

  /** Engine choice: Automatic (default), CUDA or CPU. */
  itkSetEnumMacro(Backend, BackendEnum);
  itkGetConstMacro(Backend, BackendEnum);

  /** CUDA device used by the CUDA engine (default 0). */
  itkSetMacro(DeviceId, int);
  itkGetConstMacro(DeviceId, int);

  /** The most working memory, in bytes, one analysis may take, counted at its worst case per pixel (the CUDA
   * engine: GPU memory; the CPU engine: host memory besides the images): an image that needs more is labeled
   * in slabs, with the same result. 0 (default): the image whole where the engine's indices reach, and slabs of
   * half as many planes each time the engine runs out of memory. Small budgets force many slabs (tests). */
  itkSetMacro(MemoryBudget, SizeValueType);
  itkGetConstMacro(MemoryBudget, SizeValueType);

  /** Into how many slabs the last Update() cut the image (1: whole). */
  itkGetConstMacro(NumberOfSlabs, SizeValueType);

  /** The engine that produced the last output: Backend::CUDA or Backend::CPU (Automatic before any Update()). */
  itkGetConstMacro(BackendUsed, BackendEnum);

  /** Description of that engine (device name, thread count). */
  const std::string &
  GetBackendDescription() const
  {
    return m_BackendDescription;
  }

#if !defined(ITK_WRAPPING_PARSER)
  /** Features of the components of the last Update(), in label order (element i has the i-th label).
   * Not wrapped for Python (a std::vector of a nested struct): use GetComponentFeaturesAsArrays() there. */
  const ComponentFeaturesContainer &
  GetComponentFeatures() const
  {
    return m_ComponentFeatures;
  }
#endif

  /** GetComponentFeatures() as one table of doubles, for array libraries (in Python,
   * GetComponentFeaturesAsArrays() turns it into a dict of NumPy arrays): one row per component in label
   * order, the columns named by GetComponentFeatureTableColumnNames(): Label, NumberOfPixels,
   * PhysicalSize (NumberOfPixels times the pixel's volume), Centroid-i (the physical point),
   * BoundingBoxIndex-i and BoundingBoxSize-i (index space), i = 0 .. ImageDimension-1 in ITK's index
   * order (x first), Extent (pixels / bounding box pixels, scikit-image's extent; not an ITK attribute), then
   * ClassValue (MultiLabel: the component's class; 0 otherwise): the attributes made from the basic sums
   * (itkCudaConnectedComponentAnalysisAttributes.h). Filled by every Update(), also with GenerateLabelMapOff(), which skips the LabelMap. */
  vnl_matrix<double>
  GetComponentFeatureTable() const;

  /** The column names of GetComponentFeatureTable(), separated by single spaces. */
  static std::string
  GetComponentFeatureTableColumnNames();

  /** Those of its columns that hold integers (counts, indices, labels, classes), separated by single spaces. */
  static std::string
  GetComponentFeatureTableIntegerColumnNames();

  /** Updates the filter through its primary output, the label image, as ITK's filters do; with
   * GenerateLabelImageOff() through the LabelMap instead, so that the skipped label image (which has no
   * buffer) does not make every Update() run the analysis again. */
  void
  Update() override;
  void
  UpdateLargestPossibleRegion() override;

  /** The engine of a destroyed filter (its GPU memory, page-locked staging buffers and host tables) is kept
   * for the next filter of the same backend, device and thread count, so that a new filter per image does
   * not pay for allocating them again. This frees the kept engines (GPU memory included). */
  static void
  ReleaseCachedEngines()
  {
    CudaConnectedComponentAnalysisEngine::ReleaseCachedEngines();
  }

  /** Whether this build has the CUDA engine, and how many CUDA devices it can use now. */
  static bool
  IsCudaEngineCompiled()
  {
    return CudaConnectedComponentAnalysisEngine::IsCudaEngineCompiled();
  }
  static int
  GetCudaDeviceCount()
  {
    return CudaConnectedComponentAnalysisEngine::GetCudaDeviceCount(nullptr);
  }

protected:
  CudaConnectedComponentAnalysisImageFilter();
  ~CudaConnectedComponentAnalysisImageFilter() override;

  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  /** Besides ITK's geometry checks, the mask must have the input's size (checked before the pipeline
   * asks the mask for the input's region, which would fail with a less helpful message). */
  void
  VerifyInputInformation() CCA_ITKv5_CONST override;

  /** The whole input (and mask) is needed: components span the image. */
  void
  GenerateInputRequestedRegion() override;

  /** The whole output is produced. A request that comes through the label image (output 0) while
   * GenerateLabelImageOff() is set throws: that output has no pixels to give. */
  void
  EnlargeOutputRequestedRegion(DataObject * output) override;

  void
  GenerateData() override;

  using Superclass::MakeOutput;
  /** The output named "LabelMap" is a LabelMapType. */
  DataObject::Pointer
  MakeOutput(const ProcessObject::DataObjectIdentifierType & name) override;

  /** The label image is allocated only when it is generated. */
  void
  AllocateOutputs() override;

private:
  /** How many neighbors have an offset of at most `maxNonZero` non-zero components in ImageDimension dimensions:
   * the sum over k of C(D, k) 2^k (3^D - 1 for every neighbor). */
  static constexpr unsigned
  NumberOfNeighbors(unsigned maxNonZero)
  {
    unsigned count = 0;
    unsigned choose = 1; // C(D, k)
    for (unsigned k = 1; k <= maxNonZero && k <= ImageDimension; ++k)
    {
      choose = choose * (ImageDimension - k + 1) / k;
      count += choose << k;
    }
    return count;
  }

  using EngineType = CudaConnectedComponentAnalysisEngine;

  /** The attributes of GetComponentFeatureTable() (ITK-named, from the basic sums) or, with `intensity`, of
   * GetIntensityFeatureTable() (ITK-named, from a feature image's sums), in column order. */
  static std::vector<const cca::AttributeDefinition *>
  TableAttributes(bool intensity);

  /** Writes one component's values of `attributes` into `table`'s `row` from `column` on, advancing it. */
  static void
  WriteTableValues(const std::vector<const cca::AttributeDefinition *> & attributes, const cca::ShapeAttributes & shape,
                   const cca::IntensityStatistics & intensity, vnl_matrix<double> & table, SizeValueType row,
                   unsigned int & column);

  /** How many table columns the attributes take in ImageDimension dimensions. */
  static unsigned int
  NumberOfTableValues(const std::vector<const cca::AttributeDefinition *> & attributes);

  /** Their column names: Label, each attribute (Name-i per axis), and ClassValue in the component table; with
   * `integerOnly`, only those of integer values. */
  static std::string
  TableColumnNames(bool intensity, bool integerOnly = false);

  /** Builds the engine request for the input (and mask), checking that their buffers match the region. */
  EngineType::Request
  MakeRequest(const RegionType & region) const;

  /** Sets the LabelMap's region and background, and starts emptying the previous update's objects on a thread
   * of its own (itkCudaConnectedComponentAnalysisImageFilterLabelMap.hxx, as every LabelMap stage). */
  void
  PrepareLabelMap();

  /** Returns once the previous update's LabelMap objects, freed on their own thread, are gone. */
  void
  WaitForLabelMapCleared();

  /** Throws ProcessAborted, as ITK's filters do, once AbortGenerateData is set (checked between stages). */
  void
  ThrowIfAborted();

  /** The image's geometry for the LabelMap's lines and attributes. */
  EngineType::Geometry
  MakeGeometry(const RegionType & region) const;

  /** The feature image's buffer and pixel kind into `request`, where it is an itk::Image of one of TPixels. */
  template <typename... TPixels>
  static bool
  FeatureBuffer(const ImageBase<ImageDimension> * feature, EngineType::Request & request);

  // GenerateData()'s stages, in order.
  /** What to analyze: the image, the sums the outputs need, the post-processing. */
  EngineType::Request
  PrepareRequest(const RegionType & region);
  /** Labels and measures on the engine; returns the number of (kept) components. */
  std::uint64_t
  AnalyzeRequest(const EngineType::Request & request);
  /** Every output asked for, from the analysis: the one place where output kinds are produced. */
  void
  ProduceOutputs(const RegionType & region, std::uint64_t count);
  /** Output 0: the label image, written by the engine in the output pixel type. */
  void
  ProduceLabelImage();
  /** The output named "LabelMap": its lines (the runs) from the engine, before anything else uses it... */
  void
  ExportLabelMapLines(const EngineType::Geometry & geometry, EngineType::Lines & lines);
  /** ... then one ShapeLabelObject per component, built on the host (beside the label image). */
  void
  BuildLabelMap(const EngineType::Geometry & geometry, const EngineType::Lines & lines);
  /** The counts, the backend and the feature table the filter keeps. */
  void
  StoreResults(const RegionType & region, std::uint64_t count);

  using Clock = std::chrono::steady_clock;
  static double
  SecondsSince(Clock::time_point start)
  {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  void
  StoreFeatures(const RegionType & region);
  /** function(i) for i in [0, count): on the filter's threads for many components, else on this one. */
  template <typename TFunction>
  void
  ForEachComponent(SizeValueType count, const TFunction & function) const;

  /** Label of the k-th component (0-based): k + 1 from the background value on, as ConnectedComponentImageFilter
   * steps over it (its consecutive counter starts at 0 and can only meet a non-negative background). */
  std::uint64_t
  LabelOf(std::uint64_t k) const
  {
    return cca::LabelValue(k, m_SkippedLabel);
  }

  bool                       m_FullyConnected{ false };
  unsigned                   m_Connectivity{ 0 };
  PeriodicType               m_Periodic{ PeriodicType::Filled(false) };
  double                     m_DistanceThreshold{ -1 };
  bool                       m_GenerateLabelImage{ true };
  bool                       m_GenerateLabelMap{ true };
  bool                       m_ComputePerimeter{ true };
  bool                       m_ComputeFeretDiameter{ false };
  bool                       m_ComputeOrientedBoundingBox{ false };
  SizeValueType              m_MinimumObjectSize{ 0 };
  double                     m_MinimumPhysicalSize{ 0 };
  SizeValueType              m_NumberOfObjectsToKeep{ 0 };
  bool                       m_SortByObjectSize{ false };
  bool                       m_MultiLabel{ false };
  bool                       m_PerClass{ false };
  bool                       m_OutputClassValues{ false };
  SizeValueType              m_OriginalObjectCount{ 0 };
  TimeSplit                  m_TimeSplit;
  OutputPixelType            m_BackgroundValue{};
  LabelType                  m_ObjectCount{ 0 };
  BackendEnum                m_Backend{ BackendEnum::Automatic };
  int                        m_DeviceId{ 0 };
  BackendEnum                m_BackendUsed{ BackendEnum::Automatic };
  SizeValueType              m_MemoryBudget{ 0 };
  SizeValueType              m_NumberOfSlabs{ 0 };
  std::string                m_BackendDescription;
  ComponentFeaturesContainer m_ComponentFeatures;
  std::uint64_t              m_SkippedLabel{ 0 };
  /** The engines behind one compiled facade, kept across updates so that device buffers are too. */
  EngineType m_Engine;
  /** Frees the previous update's LabelMap objects while the next analysis runs. */
  std::thread m_LabelMapClearer;
};
} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaConnectedComponentAnalysisImageFilter.hxx"
#endif

#endif
