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
// The benchmark's sweep table (modes a-e and the direct algorithms): per mode, connectivity and series (g1, g4,
// g16, ones), Gpix/s over the densities two ways -- the mean of each image's rate, and total pixels over total
// time, the paper's Table 1 figure -- from the minimum times, and the mean from the median times.

#include "CudaConnectedComponentAnalysisUserPath.h"

#include <iomanip>
#include <iostream>
#include <numeric>
#include <sstream>

namespace
{
const std::vector<double> &
RatesOf(const std::map<std::string, std::vector<double>> & rates, const std::string & key)
{
  static const std::vector<double> none;
  const auto                       found = rates.find(key);
  return found == rates.end() ? none : found->second;
}
} // namespace

nlohmann::json
PrintSweepTable(const std::map<std::string, std::vector<double>> & gpixMin,
                const std::map<std::string, std::vector<double>> & gpixMedian, const std::vector<std::string> & direct,
                unsigned size, const std::string & device, unsigned threads, bool sweep)
{
  std::vector<std::pair<std::string, std::string>> modeNames = { { "a-naive", "a: naive (pixel atomics)" },
                                                                 { "a-flsl", "a: FLSL (run atomics)" },
                                                                 { "a-otf", "a: FLSL+OTF" },
                                                                 { "a", "a: CUDA device-resident features FLSL+CD" },
                                                                 { "b", "b: CUDA device-resident features + labels" },
                                                                 { "ccl-ours", "ccl: ours, labels only (no features)" },
                                                                 { "c", "c: CUDA end to end via ITK filter" },
                                                                 { "d0", "d0: ITK ConnectedComponentImageFilter" },
                                                                 { "d", "d: ITK CC + LabelImageToShapeLabelMap" },
                                                                 { "e", "e: our CPU engine via ITK filter" } };
  for (const auto & name : direct)
  {
    modeNames.insert(modeNames.begin() + 3,
                     { { "a-" + name, "a: " + name + " features (CCA)" },
                       { "ccl-" + name, "ccl: " + name + " labels, its own numbering" },
                       { "ccl-" + name + "-raster", "ccl: " + name + " labels, raster order" } });
  }
  nlohmann::json summary = nlohmann::json::array();
  if (sweep) // the table of modes a-e
  {
    std::cout << "\n"
              << size << "x" << size
              << " images, Gpix/s over the densities: mean of each image's rate / total pixels over total time"
                 " (the paper's Table 1), from the min time; (the mean from the median time)\n"
              << "device: " << device << "; CPU threads: " << threads << "\n";
    std::cout << std::left << std::setw(45) << "mode" << std::setw(5) << "conn";
    for (const char * g : { "g1", "g4", "g16", "ones" })
    {
      std::cout << std::setw(22) << g;
    }
    std::cout << "\n";
    for (const auto & [mode, name] : modeNames)
    {
      for (const std::string conn : { "4", "8" })
      {
        bool any = false;
        for (const std::string g : { "g1", "g4", "g16", "ones" })
        {
          any = any || gpixMin.count(mode + "|" + conn + "|" + g);
        }
        if (!any)
        {
          continue;
        }
        std::cout << std::setw(45) << name << std::setw(5) << conn;
        for (const std::string g : { "g1", "g4", "g16", "ones" })
        {
          const auto & mins = RatesOf(gpixMin, mode + "|" + conn + "|" + g);
          const auto & meds = RatesOf(gpixMedian, mode + "|" + conn + "|" + g);
          if (mins.empty())
          {
            std::cout << std::setw(22) << "-";
            continue;
          }
          const double avgMin = std::accumulate(mins.begin(), mins.end(), 0.0) / mins.size();
          const double avgMed = std::accumulate(meds.begin(), meds.end(), 0.0) / meds.size();
          // Every image has the same pixels: total pixels over total time is the harmonic mean of the rates. It
          // is the only reading of "averaged over the density range" that the paper's figures allow (FLSL's 4.85
          // Gpix/s at g = 1 beside its 244 on the all-ones image); the plain mean is led by the empty image.
          double inverseSum = 0;
          for (double rate : mins)
          {
            inverseSum += 1.0 / rate;
          }
          const double       totalMin = mins.size() / inverseSum;
          std::ostringstream cell;
          cell << std::fixed << std::setprecision(avgMin < 10 ? 2 : 1) << avgMin << " / "
               << std::setprecision(totalMin < 10 ? 2 : 1) << totalMin << " (" << std::setprecision(avgMed < 10 ? 2 : 1)
               << avgMed << ")";
          std::cout << std::setw(22) << cell.str();
          summary.push_back({ { "mode", mode },
                              { "connectivity", std::stoi(conn) },
                              { "granularity", g },
                              { "gpix_per_s_min_time", avgMin },
                              { "gpix_per_s_total_min_time", totalMin },
                              { "gpix_per_s_median_time", avgMed } });
        }
        std::cout << "\n";
      }
    }
  }
  return summary;
}
