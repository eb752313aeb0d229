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
// Mode u of examples/CudaConnectedComponentAnalysisBenchmark: the user's path, as a user times it.
#ifndef CudaConnectedComponentAnalysisUserPath_h
#define CudaConnectedComponentAnalysisUserPath_h

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

struct UserPathOptions
{
  unsigned              size2D = 8192;
  unsigned              size3D = 512;
  std::string           dimensions = "2,3";
  std::vector<double>   densities{ 0.2, 0.4, 0.6, 0.8 };
  std::vector<unsigned> granularities{ 1, 4, 16 };
  std::string           connectivity = "both";
  int                   runs = 3;
  int                   cpuRuns = 1;
  int                   warmup = 1;
  bool                  itk = true;       ///< ITK's pipeline in the same run (the ratio's denominator)
  bool                  cpuEngine = true; ///< our CPU engine through the filter as well
  unsigned              workUnits = 0;    ///< the filter's NumberOfWorkUnits (0: ITK's default)
};

/** Host image in, label image + LabelMap (perimeter on) out through Update(), on the hard densities, for
 * the CUDA engine (where a device is usable), our CPU engine and ITK's pipeline
 * (ConnectedComponentImageFilter + LabelImageToShapeLabelMapFilter), each in this process: total pixels /
 * total time per (dimension, connectivity, g), the ratios to ITK, the filter's time split, peak RSS and
 * LabelMap bytes per object; plus the label image alone (GenerateLabelMapOff) against the PCIe bound
 * (input + label bytes at the measured pinned rates) on g = 16 and the all-ones image, and the paper's
 * device-resident metric for the same images. Fills report["user_path"]. */
void
RunUserPathBenchmark(const UserPathOptions & options, nlohmann::json & report);

/** Mode r: the label image of 3D size3D³ images (g = 1, the densities) through Update() with and without
 * the post-processing (MinimumObjectSize 10 + SortByObjectSize), CUDA and CPU engines, against ITK's
 * ConnectedComponentImageFilter → RelabelComponentImageFilter in the same run. Fills report["post_processing"]. */
void
RunPostProcessingBenchmark(const UserPathOptions & options, nlohmann::json & report);

/** Mode i: intensity statistics of 3D size3D³ images (g = 1, the densities) with a float feature image
 * through Update() (labels alone, + the intensity table, + the LabelMap of StatisticsLabelObjects), CUDA and CPU
 * engines, against ITK's ConnectedComponentImageFilter → LabelImageToStatisticsLabelMapFilter in the same run.
 * Fills report["intensity"]. */
void
RunIntensityBenchmark(const UserPathOptions & options, nlohmann::json & report);

/** --direct-images (CudaConnectedComponentAnalysisDirectImages.cxx): each file's (middle) slice made
 * binary above its mean, labelled device-resident by our CUDA engine and by each direct algorithm of
 * `algorithms`. Fills report["direct_images"]. */
void
RunDirectOnImages(const std::vector<std::string> & files, const std::vector<std::string> & algorithms, int warmup,
                  int runs, nlohmann::json & report);

/** The sweep's table of modes a-e and the direct algorithms (CudaConnectedComponentAnalysisBenchmarkTable.cxx):
 * printed where `sweep`, with Gpix/s per density in `gpixMin` / `gpixMedian` under "mode|conn|series"; returns
 * the JSON summary rows. */
nlohmann::json
PrintSweepTable(const std::map<std::string, std::vector<double>> & gpixMin,
                const std::map<std::string, std::vector<double>> & gpixMedian, const std::vector<std::string> & direct,
                unsigned size, const std::string & device, unsigned threads, bool sweep);

#endif
