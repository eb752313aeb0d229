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
// The tool's outputs never destroy what they replace: an output that is the input (or the mask, or one of
// their data files) is refused unless --overwrite-input is given, and every output is written into a hidden
// folder beside its destination and moved into place only when all of them are complete.
#include "CudaConnectedComponentAnalysisTool.h"

#include "itksys/Directory.hxx"
#include "itksys/SystemTools.hxx"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>

namespace cca_tool
{
namespace
{

/** The files the tool's writer makes for `output` (compressed, as the tool writes): the file itself and,
 * for the formats with a detached data file (MetaImage .mhd, NRRD .nhdr, Analyze / NIfTI pair .hdr), the
 * data file it writes beside it. */
std::vector<std::string>
FilesWrittenFor(const std::string & output)
{
  std::vector<std::string> files{ output };
  const std::string        extension = itksys::SystemTools::GetFilenameLastExtension(output);
  const std::string        base = output.substr(0, output.size() - extension.size());
  if (extension == ".mhd")
  {
    files.push_back(base + ".zraw");
  }
  else if (extension == ".nhdr")
  {
    files.push_back(base + ".raw.gz");
  }
  else if (extension == ".hdr")
  {
    files.insert(files.end(), { base + ".img", base + ".img.gz" });
  }
  return files;
}

bool
SamePath(const std::string & a, const std::string & b)
{
  return itksys::SystemTools::CollapseFullPath(a) == itksys::SystemTools::CollapseFullPath(b) ||
         (itksys::SystemTools::FileExists(a) && itksys::SystemTools::FileExists(b) &&
          itksys::SystemTools::SameFile(a, b));
}

} // namespace

void
CheckOutputsAreNotInputs(const Options & options, const std::vector<std::string> & sources)
{
  const std::vector<std::pair<const char *, const std::string *>> outputs{ { "--output", &options.output },
                                                                           { "--csv", &options.csv },
                                                                           { "--json", &options.json } };
  for (std::size_t i = 0; i < outputs.size(); ++i)
  {
    const std::string & output = *outputs[i].second;
    if (output.empty())
    {
      continue;
    }
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
    {
      // the files each writes, a detached output's data file included (--output r.mhd writes r.zraw)
      for (const std::string & mine : FilesWrittenFor(output))
      {
        for (const std::string & theirs : FilesWrittenFor(*outputs[j].second))
        {
          if (!outputs[j].second->empty() && SamePath(mine, theirs))
          {
            throw ToolError(ExitUsage,
                            std::string(outputs[i].first) + " and " + outputs[j].first + " would both write " + mine);
          }
        }
      }
    }
    for (const std::string & written : FilesWrittenFor(output))
    {
      for (const std::string & source : sources)
      {
        // Same inode (a hard link, another path to the file) or the same path not yet resolvable.
        if (!options.overwriteInput && SamePath(written, source))
        {
          throw ToolError(ExitUsage,
                          std::string(outputs[i].first) + " " + output + " would overwrite " +
                            (written == output ? "" : "(with its data file " + written + ") ") + "the input file " +
                            source + ": choose another name, or give --overwrite-input to replace it");
        }
      }
    }
  }
}

StagedOutputs::~StagedOutputs()
{
  for (const auto & folder : m_Folders)
  {
    itksys::SystemTools::RemoveADirectory(folder.second);
  }
}

std::string
StagedOutputs::Stage(const std::string & requested)
{
  // A destination that is a symbolic link is written through it: the link's target is replaced, the link kept.
  const std::string destination =
    itksys::SystemTools::FileIsSymlink(requested) ? itksys::SystemTools::GetRealPath(requested) : requested;
  std::string folder = itksys::SystemTools::GetFilenamePath(destination);
  if (folder.empty())
  {
    folder = ".";
  }
  auto it = std::find_if(m_Folders.begin(), m_Folders.end(), [&folder](const auto & f) { return f.first == folder; });
  if (it == m_Folders.end())
  {
    // A hidden folder in the destination's folder (one file system: the final rename is atomic).
    std::random_device rd;
    std::ostringstream name;
    name << folder << "/.cca-partial-" << std::hex << rd() << rd();
    if (!itksys::SystemTools::MakeDirectory(name.str()))
    {
      throw ToolError(ExitFailure, "cannot write into the folder " + folder);
    }
    m_Folders.emplace_back(folder, name.str());
    it = m_Folders.end() - 1;
  }
  return it->second + "/" + itksys::SystemTools::GetFilenameName(destination);
}

void
StagedOutputs::Commit()
{
  // Every move listed and checked first, in all folders: nothing is moved while one destination cannot take
  // its file (a folder of that name).
  std::vector<std::pair<std::string, std::string>> moves; // from, to
  for (const auto & folder : m_Folders)
  {
    itksys::Directory staging;
    staging.Load(folder.second);
    std::vector<std::string> names;
    for (unsigned long i = 0; i < staging.GetNumberOfFiles(); ++i)
    {
      const std::string name = staging.GetFile(i);
      if (name != "." && name != "..")
      {
        names.push_back(name);
      }
    }
    // Headers of detached formats last: a header in place never names a data file that is not.
    const auto isHeader = [](const std::string & name) {
      const std::string e = itksys::SystemTools::GetFilenameLastExtension(name);
      return e == ".mhd" || e == ".nhdr" || e == ".hdr";
    };
    std::stable_partition(names.begin(), names.end(), [&isHeader](const std::string & n) { return !isHeader(n); });
    for (const auto & name : names)
    {
      const std::string to = folder.first + "/" + name;
      if (itksys::SystemTools::FileIsDirectory(to))
      {
        throw ToolError(ExitFailure, "cannot write " + to + ": it is a folder");
      }
      moves.emplace_back(folder.second + "/" + name, to);
    }
  }
  for (const auto & [from, to] : moves)
  {
    if (std::rename(from.c_str(), to.c_str()) != 0)
    {
      throw ToolError(ExitFailure, "cannot move the finished " + to + " into place: " + std::strerror(errno));
    }
  }
}

} // namespace cca_tool
