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
#ifndef itkCCACudaEngine_cuh
#define itkCCACudaEngine_cuh

// The CUDA engine: owns the device buffers, the stream and the pinned staging, and runs the stages of
// an update in order (itkCCACudaEngine.cu). ITK-free; the filter reaches it through itkCCAEngine.h, the
// benchmark (itkCCACudaBenchmark.cu) through this header.

#include "itkCCACudaStages.cuh"
#include "itkCCADeviceBuffer.cuh"
#include "itkCCAIntensityStages.cuh"
#include "itkCCARunGrouping.cuh"
#include "itkCCAEngine.h"
#include "itkCCAFeatureVariant.cuh"
#include "itkCCAHostMemory.h"
#include "itkCCAPinnedStaging.cuh"

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace itk
{
namespace cca
{
namespace cuda
{

/** Throws Unavailable, saying why, where the CUDA engine cannot run on `deviceId` (no usable device, no such one). */
void
RequireCudaDevice(int deviceId);

class CudaEngine final : public Engine
{
public:
  /** The engine on `deviceId`, with `variant`'s feature stage (the research library's; nullptr: FLSL+CD). */
  explicit CudaEngine(int deviceId, std::unique_ptr<FeatureVariant> variant = nullptr);
  ~CudaEngine() override;

  std::string
  GetName() const override;
  std::string
  GetDescription() const override;
  std::uint64_t
  Analyze(const Request & request) override;
  const std::vector<ComponentSums> &
  GetFeatures() const override;
  const IntensitySums &
  GetIntensitySums() const override;
  void
  WriteLabels(const LabelOutput & output) override;
  void
  ExportLines(const LineLayout & layout, const RunSelection & selection, unsigned numberOfThreads,
              Lines & lines) override;
  void
  WriteBasicColumns(const BasicGeometry & geometry, const BasicColumns & columns,
                    const std::uint64_t * newIndex) override;
  std::uint64_t
  GetMaximumPixels() const override;
  double
  GetWorstCaseBytesPerPixel(const Request & request) const override;

  void
  ComputeContacts(const ContactRequest & request, ContactTable & table) override;

  /** Analyze() where the request's input and mask may already be device pointers (`onDevice`), and the
   * features may stay on the device (`featuresToHost` false): the benchmark's device-resident modes. */
  std::uint64_t
  Update(const Request & request, bool onDevice, bool featuresToHost);

  /** Writes the label image into output.data where it is device memory (output.onDevice), else into the
   * engine's device buffer (output.data is not touched); returns its size in bytes. */
  std::size_t
  WriteLabelsOnDevice(const LabelOutput & output);

  cudaStream_t
  GetStream() const
  {
    return m_Stream;
  }

private:
  /** The device tables the label writer reads: the post-processing's new indices and the class values. */
  struct LabelTables
  {
    const unsigned long long * newIndex = nullptr;
    const long long *          classOfIndex = nullptr;
  };
  LabelTables
  UploadLabelTables(const LabelOutput & output);
  /** WriteLabelImage() of this analysis into `target` (nullptr: the engine's buffer). */
  std::size_t
  LaunchLabelWrite(const LabelOutput & output, const LabelTables & tables, void * target);

  // The stages of Update(), in order.
  void
  SetGeometry(const Request & request);
  std::uint32_t
  FindRuns();
  DeviceRuns
  MakeDeviceRuns(const Request & request, std::uint32_t numRuns) const;
  std::uint64_t
  NumberComponents(std::uint32_t numRuns);
  void
  MeasureComponents(const Request & request, FeatureVariant & variant, const DeviceRuns & runs);
  /** With a feature image (Request::feature): each component's intensity sums, to the host
   * (itkCCAIntensityStages.cuh). */
  void
  MeasureIntensities(const Request & request, bool onDevice, std::uint32_t numRuns);
  /** The ComponentSums rows, made on the first GetFeatures() after an analysis (the LabelMap, the
   * post-processing): the Python table's columns never need them. */
  void
  DownloadFeatures();

  // The small-image path (itkCCACudaEngineSmallImage.cu): buffers for the most runs the image can
  // have, the foreground bits and then one cooperative launch for the rest (itkCCASmallImageAnalysis.cuh),
  // one synchronization; the two launches replayed as a CUDA graph once the same analysis comes twice in a row.
  /** The blocks of the small-image launch for this request, or 0 where it takes the general path. */
  unsigned
  SmallImageBlocks(const Request & request, const FeatureVariant & variant);
  /** false where the device refuses the cooperative launch: nothing was analyzed, the general path must. */
  bool
  AnalyzeSmallImage(const Request & request, bool onDevice, unsigned blocks);
  /** false where the device refuses the cooperative launch. `outputsToHost`: the label image and the basic sums
   * into the mapped buffer too. */
  bool
  EnqueueSmallImageAnalysis(const Request & request, bool inputOnDevice, unsigned blocks, std::uint32_t capacity,
                            bool outputsToHost);
  /** Those launches as a graph, or nullptr where the capture or the instantiation fails. */
  cudaGraphExec_t
  CaptureSmallImageAnalysis(const Request & request, bool inputOnDevice, unsigned blocks, std::uint32_t capacity,
                            bool outputsToHost);
  /** What the small-image launches depend on: sizes, kinds, options and every buffer's address. */
  std::vector<std::uint64_t>
  SmallImageGraphKey(const Request & request, unsigned blocks, std::uint32_t capacity, bool outputsToHost) const;
  void
  ReleaseGraph();
  /** WriteLabels() and WriteBasicColumns() from what the small-image kernel wrote into host-mapped memory,
   * where it did and the output is what it wrote; false: the general way. */
  bool
  WriteLabelsFromHost(const LabelOutput & output);
  bool
  WriteBasicColumnsFromHost(const BasicGeometry & geometry, const BasicColumns & columns,
                            const std::uint64_t * newIndex);

  void
  ExclusiveScan(std::uint32_t * data, std::uint64_t count);
  std::uint32_t
  ReadDeviceScalar(const std::uint32_t * device);
  void
  ReleaseHandles();
  /** Orders the engine's stream after the work queued so far on the last device request's stream. */
  void
  WaitForCallerStream();
  /** Device outputs just queued: the work queued next on the last device request's stream waits for them, the host
   * does not (without a stream, returns when they are written). */
  void
  OrderCallerStreamAfterOutputs();
  /** The post-processing's table on the device (nullptr without one): `host` (one entry per component of
   * the last Analyze()) is uploaded once per analysis. */
  const unsigned long long *
  DeviceNewIndexTable(const std::uint64_t * host);

  int                                            m_DeviceId;
  cudaDeviceProp                                 m_Properties{};
  cudaStream_t                                   m_Stream = nullptr;
  PinnedStaging                                  m_Staging;
  std::uint32_t *                                m_HostScalars = nullptr;   ///< pinned and mapped
  std::uint32_t *                                m_MappedScalars = nullptr; ///< the same, as the device sees it
  cudaEvent_t                                    m_CallerReady = nullptr;   ///< Request::stream's work done
  cudaEvent_t                                    m_OutputsReady = nullptr;  ///< device outputs written
  void *                                         m_CallerStream = nullptr;  ///< the last device request's stream
  mutable std::mutex                             m_FeaturesMutex;
  std::unique_ptr<FeatureVariant>                m_Variant;

  DeviceBuffer m_Pixels, m_Bits, m_FirstRun, m_RunBegin, m_RunEnd, m_RunRow, m_Parent, m_RootLabel, m_ScanTemp,
    m_FeatureSums, m_FeatureBoxes, m_NewIndex, m_Labels, m_Columns;
  /** Multi-label input: the value breaks (per bitmask word), each run's and each component's value, the label
   * image's class values (the cleaned segmentation). */
  DeviceBuffer m_Breaks, m_RunClass, m_ComponentClass, m_ClassOfIndex;
  /** Value tolerance: each pixel's class (its component's first pixel), which the multi-label stages label. */
  DeviceBuffer m_ToleranceClasses;
  /** ComputeContacts(): the uploaded labels, the records and their sort. */
  DeviceBuffer   m_ContactLabels;
  ContactBuffers m_Contacts;
  bool         m_MultiLabel = false; ///< the last analysis's Request::multiLabel

  DeviceGeometry             m_Geometry{};
  bool                       m_Analyzed = false;
  const std::uint64_t *      m_UploadedNewIndex = nullptr; ///< host table now in m_NewIndex (this analysis)
  std::vector<std::uint64_t> m_UploadedNewIndexCopy;       ///< its contents when uploaded
  std::uint32_t              m_NumberOfRuns = 0;
  std::uint64_t              m_NumberOfComponents = 0;
  std::array<int, 3>         m_SmallImageMaxBlocks{ { -1, -1, -1 } }; ///< per kernel instance; -1: not asked yet
  cudaGraphExec_t            m_Graph = nullptr;                       ///< the small-image analysis of m_GraphKey
  void *                     m_OutputsOnHost = nullptr; ///< pinned, mapped: the small-image kernel's outputs
  void *                     m_MappedOutputs = nullptr; ///< the same, as the device sees it
  bool                       m_LabelsOnHost = false;    ///< this analysis's labels (uint32, 1 .. K) are there
  bool                       m_SumsOnHost = false;      ///< and its basic sums
  std::vector<std::uint64_t> m_GraphKey, m_PreviousSmallImageKey;
  bool                       m_GraphsUnavailable = false; ///< a capture failed once: launches only
  std::vector<ComponentSums> m_Features;
  bool                       m_FeaturesOnHost = false;
  bool                       m_ShapeSums = false; ///< the last analysis accumulated the shape sums
  bool                       m_FeaturesMeasured = true; ///< false after the labels-only variant
  /// Host copies of device arrays, kept between calls (no zero-filling of fresh memory each time).
  UninitializedVector<unsigned long long> m_HostSums;
  UninitializedVector<long long> m_HostClasses;
  UninitializedVector<std::uint32_t> m_HostBoxes, m_HostRunBegin, m_HostRunLength,
    m_HostRunRow, m_HostFirstRun;
  RunGroupingBuffers m_RunGrouping;
  IntensityBuffers   m_IntensityBuffers;
  IntensitySums      m_Intensity; ///< the last analysis's (empty without a feature image)
};

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
