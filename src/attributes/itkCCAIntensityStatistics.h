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
#ifndef itkCCAIntensityStatistics_h
#define itkCCAIntensityStatistics_h

// The intensity statistics of a component from its raw sums: StatisticsLabelMapFilter's
// final computations, once for both engines, the LabelMap, the table, the CLI and the Python package. ITK-free.

#include "CudaConnectedComponentAnalysisExport.h"
#include "itkCCATypes.h"

namespace itk
{
namespace cca
{

/** Component k's statistics from its intensity sums (`intensity`, column k), in `geometry`'s physical space;
 * the weighted principal moments, axes, elongation and flatness only with `weightedMoments`. */
CudaConnectedComponentAnalysis_EXPORT void
ComputeIntensityStatistics(const IntensitySums & intensity, std::uint64_t k, const Geometry & geometry,
                           bool weightedMoments, IntensityStatistics & statistics);

/** The feature type's NumericTraits NonpositiveMin() and max(), as doubles: where ITK starts an object's
 * maximum and minimum. */
CudaConnectedComponentAnalysis_EXPORT void
FeatureValueLimits(ScalarKind kind, double & lowest, double & highest);

} // namespace cca
} // namespace itk

#endif
