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
#ifndef itkCCAFeatureVariant_cuh
#define itkCCAFeatureVariant_cuh

// The feature stage of the CUDA engine as a strategy: how the runs are merged and how each component's
// features are accumulated (Lemaitre et al. 2021, Table 1). One file per variant owns its kernels
// (itkCCAFeatureVariant<Name>.cu). The engine holds one and has no per-variant branches: FLSL+CD, the only
// one in the module's library, unless the research library hands it another (CreateResearchCudaEngine()).

#include "itkCCAEngine.h"
#include "itkCCAFlslMerge.cuh"
#include "itkCCARunFeatures.cuh"

#include <memory>

namespace itk
{
namespace cca
{
namespace cuda
{

/** The runs on the device, and what the merge and feature stages need to know about them. */
struct DeviceRuns
{
  const std::uint32_t * bits;      ///< foreground bits, one 32-bit word per 32 pixels of a row
  const std::uint32_t * firstRun;  ///< per word: the id of the first run starting in it
  std::uint32_t *       parent;    ///< union-find forest over runs; each run's label after the feature stage
  const std::uint32_t * rootLabel; ///< per run: the label of the component it is the root of
  const std::uint32_t * begin;     ///< per run: first x
  const std::uint32_t * end;       ///< per run: one past the last x
  const std::uint32_t * row;       ///< per run: y + z * height
  std::uint32_t         count;
  DeviceGeometry        geometry;
  NeighborRows          neighbors; ///< the preceding rows a run can touch (connectivity)
  cudaStream_t          stream;
  int                   multiprocessors;
  /** Multi-label input: the value-change bits (one word per bitmask word) and each run's value; nullptr both
   * for binary input. Only the plain merge honours them (the engine refuses other variants there). */
  const std::uint32_t * breaks = nullptr;
  const long long *     runClass = nullptr;
};

class FeatureVariant
{
public:
  virtual ~FeatureVariant() = default;

  /** The paper's name ("FLSL+CD", ...), for messages. */
  virtual const char *
  Name() const = 0;

  /** Whether the variant also measures a feature image's intensity sums and multi-label input's classes. */
  virtual bool
  MeasuresIntensityAndClasses() const
  {
    return false;
  }

  /** Whether the variant also accumulates the LabelMap's shape sums and perimeter intercepts. */
  virtual bool
  ComputesShapeSums() const
  {
    return false;
  }

  /** false for the labels-only variant: the engine then allocates no features, passes an empty DeviceFeatures to
   * LabelRunsAndMeasure and refuses every read of the features. */
  virtual bool
  MeasuresFeatures() const
  {
    return true;
  }

  /** Union-find over the runs of neighboring rows. The default is the plain lock-free union. */
  virtual void
  MergeRuns(const DeviceRuns & runs);

  /** Sums (in SumIndex order) before this one the variant writes itself; the engine zeroes the rest. */
  virtual int
  FirstAccumulatedSum() const
  {
    return 0;
  }

  /** Whether the engine may analyze a small image in one launch (itkCCASmallImageAnalysis.cuh), whose
   * features are this variant's. */
  virtual bool
  AnalyzesSmallImagesInOneLaunch() const
  {
    return false;
  }

  /** Whether the variant writes every bounding box itself (else the engine initializes them for min/max). */
  virtual bool
  WritesBoundingBoxes() const
  {
    return false;
  }

  /** After the roots are numbered: sets each run's parent to its label and fills `features` (the first
   * `numSums` sums and the bounding boxes; with `perimeter` also the intercepts). */
  virtual void
  LabelRunsAndMeasure(const DeviceRuns & runs, const DeviceFeatures & features, bool shapeSums, bool perimeter) = 0;
};

// One factory per variant file.
std::unique_ptr<FeatureVariant>
CreateConflictDetectionVariant();
std::unique_ptr<FeatureVariant>
CreateOnTheFlyMergeVariant(); // research library
std::unique_ptr<FeatureVariant>
CreateRunAtomicsVariant(); // research library
std::unique_ptr<FeatureVariant>
CreatePixelAtomicsVariant(); // research library
std::unique_ptr<FeatureVariant>
CreateLabelsOnlyVariant(); // research library

// Stages the variants share, launched from itkCCACudaStages.cu (which owns their kernels).
/** The plain merge: MergeRunsKernel with the lock-free union. */
void
LaunchPlainMerge(const DeviceRuns & runs);
/** parent[run] = rootLabel[parent[run]]: each run's label, without features. */
void
LaunchLabelRuns(const DeviceRuns & runs);

} // namespace cuda
} // namespace cca
} // namespace itk

#endif
