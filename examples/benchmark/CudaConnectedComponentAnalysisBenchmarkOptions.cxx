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
// The command line of examples/CudaConnectedComponentAnalysisBenchmark.
#include "CudaConnectedComponentAnalysisBenchmarkOptions.h"

#include <cstdlib>
#include <iostream>

const char * const Usage =
  "Usage: CudaConnectedComponentAnalysisBenchmark [--option value ...]\n"
  "  --modes abcdetsurli  what to run (default abcdet); a, b: CUDA device-resident (paper metric);\n"
  "                       c: CUDA through the filter; d: ITK's pipeline; e: CPU engine through the filter;\n"
  "                       t: host<->device copy rates; s: the filter's time split; u: the user's path\n"
  "                       (hard densities, 2D and 3D, against ITK in the same run); r: post-processing\n"
  "                       (3D, MinimumObjectSize + SortByObjectSize against RelabelComponentImageFilter);\n"
  "                       l: the per-call cost on small images (facade and filter, median and p90);\n"
  "                       i: intensity statistics (3D, a float feature image, against\n"
  "                       LabelImageToStatisticsLabelMapFilter)\n"
  "  --size N             2D image side (default 8192)        --size3d N      3D side, mode u (default 512)\n"
  "  --runs R             timed runs (default 10)             --cpu-runs R    timed runs on the CPU (default 3)\n"
  "  --warmup W           untimed runs first (default 1)      --json FILE     report (default benchmark.json)\n"
  "  --connectivity 4|8|both (in 3D: 4 = 6, 8 = 26)         --cpu-connectivity 4|8|both (mode d, e)\n"
  "  --series all|g1|g4|g16|ones                              --densities 0.1,0.5,...\n"
  "  --variants 0|1       modes a: also naive, FLSL, OTF      --labelmap 0|1  modes c, e: LabelMap too\n"
  "  --direct buf,buf-halving,ha4,ha4-otf,ha4-cd  mode a: also the seeds' direct algorithms at their\n"
  "                       connectivity (CCA features; CCL labels in their own numbering and in raster order),\n"
  "                       and our own labels without features (ccl-ours)\n"
  "  --direct-images F,G  ours and the --direct algorithms on real images (a slice above its mean)\n"
  "  --dimensions 2,3     mode u                              --granularities 1,4,16 (mode u)\n"
  "  --itk 0|1            mode u: ITK's pipeline too          --cpu-engine 0|1 (mode u)\n"
  "  --work-units N       mode u: the filter's NumberOfWorkUnits (default: ITK's)\n"
  "  --latency-2d 64,256  mode l: 2D sides (default 64,256,512,2048)  --latency-3d 64,128 (default 64,128,256)\n"
  "  --latency-calls N    mode l: timed calls per row (default 200, at most ~2 s a row)\n"
  "  --latency-batch NxS  mode l: a batch of N images of SxS (default 1000x256; 0: none)\n";

int
ParseBenchmarkOptions(int argc, char * argv[], Options & opt, UserPathOptions & userPath, std::ostringstream & command)
{
  for (int i = 0; i < argc; ++i)
  {
    command << (i ? " " : "") << argv[i];
  }
  for (int i = 1; i < argc; ++i)
  {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h")
    {
      std::cout << Usage;
      return 0;
    }
  }
  if (argc % 2 == 0)
  {
    std::cerr << "every option takes a value: " << command.str() << "\n" << Usage;
    return 1;
  }
  auto numbers = [](const std::string & list) {
    std::vector<double> values;
    std::istringstream  in(list);
    for (std::string item; std::getline(in, item, ',');)
    {
      values.push_back(std::stod(item));
    }
    return values;
  };
  for (int i = 1; i + 1 < argc; i += 2)
  {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--size3d")
      userPath.size3D = std::stoul(value);
    else if (key == "--dimensions")
      userPath.dimensions = value;
    else if (key == "--granularities")
    {
      userPath.granularities.clear();
      for (double g : numbers(value))
      {
        userPath.granularities.push_back(static_cast<unsigned>(g));
      }
    }
    else if (key == "--itk")
      userPath.itk = value == "1";
    else if (key == "--cpu-engine")
      userPath.cpuEngine = value == "1";
    else if (key == "--work-units")
      userPath.workUnits = static_cast<unsigned>(std::stoul(value));
    else if (key == "--latency-2d" || key == "--latency-3d")
    {
      auto & sides = key == "--latency-2d" ? opt.latency.sides2D : opt.latency.sides3D;
      sides.clear();
      for (double side : numbers(value))
      {
        sides.push_back(static_cast<unsigned>(side));
      }
    }
    else if (key == "--latency-calls")
      opt.latency.calls = std::stoi(value);
    else if (key == "--latency-batch")
    {
      // N x SIDE, e.g. 1000x256; 0: no batch row
      const auto x = value.find('x');
      opt.latency.batchImages = static_cast<unsigned>(std::stoul(value.substr(0, x)));
      opt.latency.batchSide = x == std::string::npos ? 256u : static_cast<unsigned>(std::stoul(value.substr(x + 1)));
    }
    else if (key == "--size")
      opt.size = std::stoul(value);
    else if (key == "--runs")
      opt.runs = std::stoi(value);
    else if (key == "--cpu-runs")
      opt.cpuRuns = std::stoi(value);
    else if (key == "--warmup")
      opt.warmup = std::stoi(value);
    else if (key == "--modes")
      opt.modes = value;
    else if (key == "--connectivity")
      opt.connectivity = value;
    else if (key == "--cpu-connectivity")
      opt.cpuConnectivity = value;
    else if (key == "--json")
      opt.json = value;
    else if (key == "--variants")
      opt.variants = value == "1";
    else if (key == "--direct" || key == "--direct-images")
    {
      std::istringstream list(value);
      for (std::string item; std::getline(list, item, ',');)
        (key == "--direct" ? opt.direct : opt.directImages).push_back(item);
    }
    else if (key == "--labelmap")
      opt.labelMap = value == "1";
    else if (key == "--series")
      opt.series = value;
    else if (key == "--densities")
    {
      std::istringstream list(value);
      for (std::string item; std::getline(list, item, ',');)
      {
        opt.densities.push_back(std::stod(item));
      }
    }
    else
    {
      std::cerr << "unknown option " << key << "\n" << Usage;
      return 1;
    }
  }
  for (const std::string * connectivity : { &opt.connectivity, &opt.cpuConnectivity })
  {
    if (*connectivity != "4" && *connectivity != "8" && *connectivity != "both")
    {
      // 4 and 8 name the 3D connectivities of mode u too (6 and 26).
      std::cerr << "connectivity must be 4, 8 or both, not '" << *connectivity << "'\n" << Usage;
      return 1;
    }
  }
  userPath.size2D = opt.size;
  userPath.runs = opt.runs;
  userPath.cpuRuns = opt.cpuRuns;
  userPath.warmup = opt.warmup;
  if (!opt.densities.empty())
  {
    userPath.densities = opt.densities;
  }
  if (opt.connectivity != "both")
  {
    userPath.connectivity = opt.connectivity == "4" ? "face" : "full";
  }
  return -1;
}
