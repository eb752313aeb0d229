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
// cca --batch FOLDER: every image file of a folder labeled as `cca FILE` would (issue 29: many cases in one
// call). Every case is checked before the first is labeled, so a bad one stops the batch before any work, with
// its name; the label images go to --output-dir under the cases' names, and --csv / --json take one table of
// every case's objects, with the case's file name in an `image` column (CSV) or a `cases` list (JSON). One
// process serves every case: the engine (GPU buffers, pinned staging) is made once.
#include "CudaConnectedComponentAnalysisTool.h"

#include "itkImageIOFactory.h"
#include "itksys/Directory.hxx"
#include "itksys/SystemTools.hxx"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace cca_tool
{
namespace
{
/** The folder's files that an ITK reader takes, by name; subfolders (a DICOM series) are not cases. */
std::vector<std::string>
CasesOf(const std::string & folder)
{
  itksys::Directory directory;
  if (!itksys::SystemTools::FileIsDirectory(folder) || !directory.Load(folder))
  {
    throw ToolError(ExitCannotRead, "--batch " + folder + ": not a folder that can be read");
  }
  std::vector<std::string> cases;
  for (unsigned long i = 0; i < directory.GetNumberOfFiles(); ++i)
  {
    const std::string name = directory.GetFile(i);
    const std::string path = folder + "/" + name;
    if (name.empty() || name[0] == '.' || itksys::SystemTools::FileIsDirectory(path))
    {
      continue;
    }
    if (itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::IOFileModeEnum::ReadMode))
    {
      cases.push_back(name);
    }
  }
  std::sort(cases.begin(), cases.end());
  if (cases.empty())
  {
    throw ToolError(ExitCannotRead, "--batch " + folder + ": no image file that ITK reads");
  }
  return cases;
}

/** Lines of a text file. */
std::vector<std::string>
ReadLines(const std::string & path)
{
  std::ifstream            in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
  {
    lines.push_back(line);
  }
  return lines;
}

std::string
CsvField(const std::string & text)
{
  if (text.find_first_of(",\"\n") == std::string::npos)
  {
    return text;
  }
  std::string quoted = "\"";
  for (const char c : text)
  {
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return quoted + "\"";
}
} // namespace

int
RunBatch(const Options & options)
{
  const std::string        folder = options.input;
  std::vector<std::string> cases = CasesOf(folder);
  const std::string        outputs = options.outputDirectory;
  if (!outputs.empty() && itksys::SystemTools::GetRealPath(outputs) == itksys::SystemTools::GetRealPath(folder))
  {
    throw ToolError(ExitUsage,
                    "--output-dir " + outputs + " is the input folder: the label images would replace the cases");
  }
  // Every case checked first (readable, complete, scalar, 2D/3D, one dimension for the table's columns): a bad
  // one stops the batch before any work, named.
  // A case read from several files (Analyze's .hdr and .img) is one case: the files an earlier case reads are
  // not cases of their own.
  std::vector<InputDescription> inputs;
  std::vector<std::string>      kept;
  std::vector<std::string>      read; // every file the kept cases read, as full paths
  for (const std::string & name : cases)
  {
    Options one = options;
    one.input = folder + "/" + name;
    if (std::find(read.begin(), read.end(), itksys::SystemTools::CollapseFullPath(one.input)) != read.end())
    {
      continue;
    }
    inputs.push_back(ProbeInput(one.input, one));
    kept.push_back(name);
    for (const std::string & file : inputs.back().files)
    {
      read.push_back(itksys::SystemTools::CollapseFullPath(file));
    }
    if (inputs.back().dimension != inputs.front().dimension)
    {
      throw ToolError(ExitUnsupported,
                      "--batch: " + one.input + " is " + std::to_string(inputs.back().dimension) + "D, " +
                        cases.front() + " " + std::to_string(inputs.front().dimension) +
                        "D: the cases of one batch share a dimension (one table)");
    }
    one.output = outputs.empty() ? std::string() : outputs + "/" + name;
    CheckOutputFormatHoldsDimension(one.output, inputs.back().dimension);
    CheckOutputsAreNotInputs(one, inputs.back().files);
  }
  cases = kept;
  // Each case's tables go to hidden files in the tables' folder, then into the one table asked for.
  auto partOf = [](const std::string & table, std::size_t i) {
    const std::string dir = itksys::SystemTools::GetFilenamePath(table);
    return (dir.empty() ? std::string(".") : dir) + "/.cca-batch-" + std::to_string(i) + "-" +
           itksys::SystemTools::GetFilenameName(table);
  };
  std::ostringstream csv;
  Json               json = Json::object();
  json["batch"] = folder;
  json["cases"] = Json::array();
  const auto    start = std::chrono::steady_clock::now();
  std::uint64_t totalObjects = 0;
  for (std::size_t i = 0; i < cases.size(); ++i)
  {
    Options one = options;
    one.input = folder + "/" + cases[i];
    one.output = outputs.empty() ? std::string() : outputs + "/" + cases[i];
    one.csv = options.csv.empty() ? std::string() : partOf(options.csv, i);
    one.json = options.json.empty() ? std::string() : partOf(options.json, i);
    one.quiet = true;
    one.progress = false;
    int code = ExitFailure;
    try
    {
      code = RunTool(one, inputs[i]);
    }
    catch (...)
    {
      std::remove(one.csv.c_str()); // no part of a table left behind
      std::remove(one.json.c_str());
      std::cerr << "cca: --batch stopped at " << one.input
                << "; the label images of the cases before it are written, the tables are not" << std::endl;
      throw;
    }
    if (code != ExitOk)
    {
      std::remove(one.csv.c_str());
      std::remove(one.json.c_str());
      std::cerr << "cca: --batch stopped at " << one.input << " (exit " << code
                << "); the label images of the cases before it are written, the tables are not" << std::endl;
      return code;
    }
    std::uint64_t objects = 0;
    if (!one.csv.empty())
    {
      const std::vector<std::string> lines = ReadLines(one.csv);
      std::remove(one.csv.c_str());
      if (i == 0 && !lines.empty())
      {
        csv << "image," << lines[0] << '\n';
      }
      for (std::size_t l = 1; l < lines.size(); ++l)
      {
        csv << CsvField(cases[i]) << ',' << lines[l] << '\n';
      }
      objects = lines.empty() ? 0 : lines.size() - 1;
    }
    if (!one.json.empty())
    {
      std::ifstream in(one.json);
      Json          part = Json::parse(in, nullptr, false); // no exception: the part file is removed either way
      in.close();
      std::remove(one.json.c_str());
      if (part.is_discarded())
      {
        throw ToolError(ExitFailure, "--batch: the table of " + one.input + " could not be read back");
      }
      objects = part.contains("objects") ? part["objects"].size() : objects;
      Json entry = Json::object();
      entry["image"] = cases[i];
      for (auto & item : part.items())
      {
        entry[item.key()] = item.value();
      }
      json["cases"].push_back(entry);
    }
    totalObjects += objects;
    if (!options.quiet)
    {
      std::cout << "  " << std::left << std::setw(40) << cases[i] << std::right;
      if (!one.csv.empty() || !one.json.empty())
      {
        std::cout << std::setw(10) << objects << " objects";
      }
      std::cout << (one.output.empty() ? "" : "  -> " + one.output) << '\n';
    }
  }
  // The tables, written whole under a temporary name and moved into place.
  StagedOutputs staged;
  if (!options.csv.empty())
  {
    std::ofstream out(staged.Stage(options.csv));
    out << csv.str();
    if (!out)
    {
      throw ToolError(ExitFailure, "cannot write " + options.csv);
    }
  }
  if (!options.json.empty())
  {
    std::ofstream out(staged.Stage(options.json));
    out << json.dump(1) << '\n';
    if (!out)
    {
      throw ToolError(ExitFailure, "cannot write " + options.json);
    }
  }
  staged.Commit();
  if (!options.quiet)
  {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "cca --batch: " << cases.size() << " cases of " << folder;
    if (!options.csv.empty() || !options.json.empty())
    {
      std::cout << ", " << totalObjects << " objects";
    }
    std::cout << ", " << std::fixed << std::setprecision(3) << seconds << " s" << std::endl;
  }
  return ExitOk;
}

} // namespace cca_tool
