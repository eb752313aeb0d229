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
// cca --batch FOLDER: every image file of a folder labeled as `cca FILE` would (many cases in one
// call); cca --batch FILE: every 2D slice of a 3D file, or 3D volume of a 4D file, along its last axis. Every case is
// checked before the first is labeled, so a bad one stops the batch before any work, with its name; the label images go
// to --output-dir under the cases' names, and --csv / --json take one table of every case's objects, with the case's
// file name in an `image` column (CSV) or a `cases` list (JSON). One process serves every case: the engine (GPU
// buffers, pinned staging) is made once.
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

/** One case of a batch: its name (the `image` column, and its label image's file name), its probed input and
 * where its label image goes. */
struct Case
{
  std::string      name;
  Json             id; ///< its `image` entry in the tables: the file name, or the index in a file of cases
  InputDescription input;
  std::string      output;
};

/** The cases of a folder, each probed (a bad one throws, named). A case read from several files (Analyze's .hdr
 * and .img) is one case: the files an earlier case reads are not cases of their own. */
std::vector<Case>
CasesOfFolder(const Options & options)
{
  const std::string folder = options.input;
  const std::string outputs = options.outputDirectory;
  if (!outputs.empty() && itksys::SystemTools::GetRealPath(outputs) == itksys::SystemTools::GetRealPath(folder))
  {
    throw ToolError(ExitUsage,
                    "--output-dir " + outputs + " is the input folder: the label images would replace the cases");
  }
  std::vector<Case>        cases;
  std::vector<std::string> read; // every file the kept cases read, as full paths
  for (const std::string & name : CasesOf(folder))
  {
    Options one = options;
    one.input = folder + "/" + name;
    if (std::find(read.begin(), read.end(), itksys::SystemTools::CollapseFullPath(one.input)) != read.end())
    {
      continue;
    }
    Case c{ name, Json(name), ProbeInput(one.input, one), std::string() };
    for (const std::string & file : c.input.files)
    {
      read.push_back(itksys::SystemTools::CollapseFullPath(file));
    }
    if (!cases.empty() && c.input.dimension != cases.front().input.dimension)
    {
      throw ToolError(ExitUnsupported,
                      "--batch: " + one.input + " is " + std::to_string(c.input.dimension) + "D, " +
                        cases.front().name + " " + std::to_string(cases.front().input.dimension) +
                        "D: the cases of one batch share a dimension (one table)");
    }
    c.output = outputs.empty() ? std::string() : outputs + "/" + name;
    cases.push_back(std::move(c));
  }
  return cases;
}

/** The cases of one 3D or 4D file: its slices or volumes along the last axis, named NAME_i.EXT after the file
 * (i zero-padded to the last case's width). The file is read once, by the first case (RunTool()), whose read
 * also runs the completeness check. */
std::vector<Case>
CasesOfFile(const Options & options)
{
  const InputDescription stack = ProbeInput(options.input, options, true);
  const std::string      file = itksys::SystemTools::GetFilenameName(options.input);
  std::string            extension = itksys::SystemTools::GetFilenameLastExtension(file);
  std::string            stem = file.substr(0, file.size() - extension.size());
  if (extension == ".gz" || extension == ".bz2" || extension == ".zst")
  {
    const std::string inner = itksys::SystemTools::GetFilenameLastExtension(stem); // .nii.gz: one extension
    extension = inner + extension;
    stem = stem.substr(0, stem.size() - inner.size());
  }
  const std::size_t width = std::to_string(stack.stackCases == 0 ? 0 : stack.stackCases - 1).size();
  std::vector<Case> cases;
  for (std::uint64_t i = 0; i < stack.stackCases; ++i)
  {
    std::string index = std::to_string(i);
    index.insert(0, width - index.size(), '0');
    Case c{ stem + "_" + index + extension, Json(i), stack, std::string() };
    c.input.stackCase = static_cast<std::int64_t>(i);
    if (i > 0)
    {
      c.input.verifyData = nullptr; // the file is read once, checked then
    }
    c.output = options.outputDirectory.empty() ? std::string() : options.outputDirectory + "/" + c.name;
    cases.push_back(std::move(c));
  }
  return cases;
}
} // namespace

int
RunBatch(const Options & options)
{
  const std::string source = options.input;
  const bool        folder = itksys::SystemTools::FileIsDirectory(source);
  // Every case checked first (readable, complete, scalar, 2D/3D, one dimension for the table's columns, its
  // label image's destination): a bad one stops the batch before any work, named.
  const std::vector<Case> cases = folder ? CasesOfFolder(options) : CasesOfFile(options);
  for (const Case & c : cases)
  {
    Options one = options;
    one.input = c.input.path;
    one.output = c.output;
    CheckOutputFormatHoldsDimension(one.output, c.input.dimension);
    CheckOutputsAreNotInputs(one, c.input.files);
  }
  // Each case's tables go to hidden files in the tables' folder, then into the one table asked for.
  auto partOf = [](const std::string & table, std::size_t i) {
    const std::string dir = itksys::SystemTools::GetFilenamePath(table);
    return (dir.empty() ? std::string(".") : dir) + "/.cca-batch-" + std::to_string(i) + "-" +
           itksys::SystemTools::GetFilenameName(table);
  };
  std::ostringstream csv;
  Json               json = Json::object();
  json["batch"] = source;
  json["cases"] = Json::array();
  const auto    start = std::chrono::steady_clock::now();
  std::uint64_t totalObjects = 0;
  for (std::size_t i = 0; i < cases.size(); ++i)
  {
    Options one = options;
    one.input = cases[i].input.path;
    one.output = cases[i].output;
    one.csv = options.csv.empty() ? std::string() : partOf(options.csv, i);
    one.json = options.json.empty() ? std::string() : partOf(options.json, i);
    one.quiet = true;
    one.progress = false;
    int code = ExitFailure;
    try
    {
      code = RunTool(one, cases[i].input);
    }
    catch (...)
    {
      std::remove(one.csv.c_str()); // no part of a table left behind
      std::remove(one.json.c_str());
      std::cerr << "cca: --batch stopped at " << cases[i].name
                << "; the label images of the cases before it are written, the tables are not" << std::endl;
      throw;
    }
    if (code != ExitOk)
    {
      std::remove(one.csv.c_str());
      std::remove(one.json.c_str());
      std::cerr << "cca: --batch stopped at " << cases[i].name << " (exit " << code
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
        csv << (cases[i].id.is_string() ? CsvField(cases[i].name) : cases[i].id.dump()) << ',' << lines[l] << '\n';
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
        throw ToolError(ExitFailure, "--batch: the table of " + cases[i].name + " could not be read back");
      }
      objects = part.contains("objects") ? part["objects"].size() : objects;
      Json entry = Json::object();
      entry["image"] = cases[i].id;
      for (auto & item : part.items())
      {
        entry[item.key()] = item.value();
      }
      json["cases"].push_back(entry);
    }
    totalObjects += objects;
    if (!options.quiet)
    {
      std::cout << "  " << std::left << std::setw(40) << cases[i].name << std::right;
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
    std::cout << "cca --batch: " << cases.size() << " cases of " << source;
    if (!options.csv.empty() || !options.json.empty())
    {
      std::cout << ", " << totalObjects << " objects";
    }
    std::cout << ", " << std::fixed << std::setprecision(3) << seconds << " s" << std::endl;
  }
  return ExitOk;
}

} // namespace cca_tool
