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
// Mode l of examples/CudaConnectedComponentAnalysisBenchmark: the per-call cost on small images.
#ifndef CudaConnectedComponentAnalysisLatency_h
#define CudaConnectedComponentAnalysisLatency_h

#include <nlohmann/json.hpp>

#include <vector>

struct LatencyOptions
{
  std::vector<unsigned> sides2D{ 64, 256, 512, 2048 };
  std::vector<unsigned> sides3D{ 64, 128, 256 };
  int                   calls = 200; ///< timed calls per row (fewer where a row's calls pass `seconds`)
  int                   warmup = 10;
  double                seconds = 2;        ///< at most about this long per row
  unsigned              batchImages = 1000; ///< the batch row: this many images (0: none) ...
  unsigned              batchSide = 256;    ///< ... of this side
};

/** The per-call table: blobs of 4-pixel cells at 40 % density, face connectivity, uint8 in, uint32 labels out,
 * one image per call, the same pixels for every row. Rows: the engine facade (labels + the basic columns,
 * host in/out) on the CUDA engine, the CPU engine and the automatic backend, with its stages (analysis,
 * columns, labels); the filter made new per call, as a user's script does, with the label image alone, the
 * label image + the component table (GetComponentFeatureTable()), and the label image + the LabelMap. Median
 * and 90th percentile of many calls. Then a batch (Request::batchExtent) against the same pixels as one image
 * and against a loop of calls. Fills report["latency"]. */
void
RunLatencyBenchmark(const LatencyOptions & options, nlohmann::json & report);

#endif
