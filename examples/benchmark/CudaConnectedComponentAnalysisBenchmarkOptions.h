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
// The options of examples/CudaConnectedComponentAnalysisBenchmark (parsed in
// CudaConnectedComponentAnalysisBenchmarkOptions.cxx).
#ifndef CudaConnectedComponentAnalysisBenchmarkOptions_h
#define CudaConnectedComponentAnalysisBenchmarkOptions_h

#include "CudaConnectedComponentAnalysisLatency.h"
#include "CudaConnectedComponentAnalysisUserPath.h"

#include <sstream>
#include <string>
#include <vector>

struct Options
{
  unsigned            size = 8192;
  int                 runs = 10;
  int                 cpuRuns = 3;
  int                 warmup = 1;
  std::string         modes = "abcdet";
  std::string         connectivity = "both";
  std::string         cpuConnectivity = "4";
  std::string         json = "benchmark.json";
  bool                variants = false;
  std::vector<std::string> direct;       ///< mode a: also these direct algorithms by name
  std::vector<std::string> directImages; ///< --direct-images: real images for ours against the direct algorithms
  bool                labelMap = true; ///< modes c and e also build the LabelMap
  std::string         series = "all";  ///< all, or one of g1, g4, g16, ones (for profiling one case)
  std::vector<double> densities;       ///< only these densities of the g series (empty: 0, 0.1, ..., 1)
  LatencyOptions      latency;         ///< mode l
};

/** The usage text (--help). */
extern const char * const Usage;

/** Parses argv into `options` (modes a-e, s, t) and `userPath` (modes u, r), `command` the command line as
 * typed; returns -1 to go on, else the exit code (0 after --help, 1 for a bad option, with the usage). */
int
ParseBenchmarkOptions(int argc, char * argv[], Options & options, UserPathOptions & userPath,
                      std::ostringstream & command);

#endif
