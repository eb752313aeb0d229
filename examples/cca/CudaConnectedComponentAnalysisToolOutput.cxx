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
// What the command-line tool `cca` prints and writes as text, none of it typed by pixel or dimension:
// - the progress bars on stderr;
// - the one-screen summary on stdout;
// - the tables: the objects' attributes as CSV (one row per object, one column per number) and as JSON
//   (one object per row, vectors and matrices as arrays, after a header describing the input and the run).
//   Both are written from the neutral rows of CudaConnectedComponentAnalysisTool.h, so that they hold the
//   same numbers, printed with enough digits (max_digits10) to read back the very doubles the filter computed.
#include "CudaConnectedComponentAnalysisTool.h"

#include "itkOutputWindow.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace cca_tool
{
namespace
{

std::ofstream
OpenForWriting(const std::string & fileName)
{
  std::ofstream file(fileName, std::ios::out | std::ios::trunc);
  if (!file)
  {
    throw std::runtime_error("cannot write " + fileName);
  }
  return file;
}

void
Close(std::ofstream & file, const std::string & fileName)
{
  file.close();
  if (file.fail())
  {
    throw std::runtime_error("writing " + fileName + " failed (disk full?)");
  }
}

/** Integers without a fraction (they are exact in a double up to 2^53); other numbers round-trip. */
void
PrintNumber(std::ostream & os, double value, bool integer)
{
  if (integer && std::abs(value) < 9007199254740992.0)
  {
    os << static_cast<std::int64_t>(value);
  }
  else if (std::isnan(value))
  {
    os << "nan";
  }
  else
  {
    os << value;
  }
}

Json
JsonNumber(double value, bool integer)
{
  if (integer && std::abs(value) < 9007199254740992.0)
  {
    return Json(static_cast<std::int64_t>(value));
  }
  return Json(value); // NaN and infinities come out as null: JSON has no such numbers
}

template <typename T>
std::string
ToText(const T & value)
{
  std::ostringstream os;
  os << value;
  return os.str();
}

} // namespace

ProgressBar * ProgressBar::s_Drawing = nullptr;

ProgressBar::~ProgressBar()
{
  if (m_Open)
  {
    Interrupt(); // a stage cut short by an error: its message starts on a line of its own
  }
}

void
ProgressBar::Interrupt()
{
  if (s_Drawing)
  {
    std::cerr << std::endl;
    s_Drawing->m_Percent = -1; // drawn again, whole, at the next event
    s_Drawing = nullptr;
  }
}

void
ProgressBar::Start(const std::string & stage)
{
  m_Stage = stage;
  m_Open = m_Enabled;
  m_Percent = -1;
  Draw(0.0);
}

void
ProgressBar::Finish()
{
  if (m_Open)
  {
    Draw(1.0);
    Interrupt();
    m_Open = false;
  }
}

void
ProgressBar::Draw(double fraction)
{
  const int percent = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 100.0);
  if (!m_Open || percent <= m_Percent) // monotonic, and no redraw without change
  {
    return;
  }
  m_Percent = percent;
  constexpr int width = 40;
  const int     filled = percent * width / 100;
  std::cerr << '\r' << std::left << std::setw(10) << m_Stage << std::right << " [" << std::string(filled, '#')
            << std::string(width - filled, '.') << "] " << std::setw(3) << percent << '%' << std::flush;
  s_Drawing = this;
}

namespace
{
/** itk::OutputWindow's default writes to std::cerr too, but in the middle of a progress bar's line. */
class ToolOutputWindow : public itk::OutputWindow
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(ToolOutputWindow);
  using Self = ToolOutputWindow;
  using Superclass = itk::OutputWindow;
  using Pointer = itk::SmartPointer<Self>;
  itkNewMacro(Self);
#ifdef itkOverrideGetNameOfClassMacro
  itkOverrideGetNameOfClassMacro(ToolOutputWindow);
#else
  itkTypeMacro(ToolOutputWindow, OutputWindow);
#endif

  void
  DisplayText(const char * text) override
  {
    ProgressBar::Interrupt();
    std::cerr << "cca: " << text << std::flush;
  }

protected:
  ToolOutputWindow() = default;
  ~ToolOutputWindow() override = default;
};
} // namespace

void
InstallOutputWindow()
{
  itk::OutputWindow::SetInstance(ToolOutputWindow::New());
}

std::string
ForegroundRule(const Options & options)
{
  std::ostringstream os;
  if (options.hasLower && options.hasUpper)
  {
    os << options.lower << " <= value <= " << options.upper;
  }
  else if (options.hasLower)
  {
    os << "value >= " << options.lower;
  }
  else if (options.hasUpper)
  {
    os << "value <= " << options.upper;
  }
  else
  {
    os << (options.multiLabel ? "value != 0, each value a class" : "value != 0");
  }
  if (!options.mask.empty())
  {
    os << ", where " << options.mask << " is non-zero";
  }
  return os.str();
}

void
DescribeInput(const Options & options, const InputDescription & input, const Geometry & geometry, Report & report,
              Json & header)
{
  const std::size_t D = geometry.size.size();
  report.image = std::to_string(D) + "D, ";
  header["input"] = input.path;
  header["dicomSeries"] = input.dicomSeries;
  header["dimension"] = D;
  header["pixelType"] = input.componentName;
  header["size"] = geometry.size;
  header["spacing"] = geometry.spacing;
  header["origin"] = geometry.origin;
  for (std::size_t d = 0; d < D; ++d)
  {
    header["direction"].push_back(
      std::vector<double>(geometry.direction.begin() + d * D, geometry.direction.begin() + (d + 1) * D));
    report.image += (d ? " x " : "") + std::to_string(geometry.size[d]);
  }
  report.image += " pixels, spacing ";
  for (std::size_t d = 0; d < D; ++d)
  {
    report.image += (d ? " x " : "") + ToText(geometry.spacing[d]);
  }
  report.image += " mm, " + input.componentName;
  if (input.dicomSeries)
  {
    report.image += " (DICOM series of " + std::to_string(input.fileNames.size()) + " files)";
  }
  report.connectivity = options.connectivityNeighbors == 18
                          ? "face and edge (18 neighbours)"
                          : options.fullyConnected ? (D == 2 ? "full (8 neighbours)" : "full (26 neighbours)")
                                                   : (D == 2 ? "face (4 neighbours)" : "face (6 neighbours)");
  std::string periodic;
  for (std::size_t d = 0; d < D; ++d)
  {
    if ((options.periodicAxes >> d) & 1u)
    {
      periodic += "xyz"[d];
    }
  }
  if (!periodic.empty())
  {
    report.connectivity += ", periodic along " + periodic;
  }
  std::vector<std::string> steps;
  if (options.minimumObjectSize > 0)
  {
    steps.push_back("under " + std::to_string(options.minimumObjectSize) + " pixels removed");
  }
  if (options.minimumPhysicalSize > 0)
  {
    steps.push_back("under " + ToText(options.minimumPhysicalSize) + " " + report.sizeUnit + " removed");
  }
  if (options.numberOfObjectsToKeep > 0)
  {
    steps.push_back("the " + std::to_string(options.numberOfObjectsToKeep) + " largest" +
                    (options.perClass ? " of each class" : "") + " kept");
  }
  if (options.sortByObjectSize)
  {
    steps.push_back("numbered by decreasing size");
  }
  for (std::size_t i = 0; i < steps.size(); ++i)
  {
    report.postProcessing += (i ? ", " : " (") + steps[i] + (i + 1 == steps.size() ? ")" : "");
  }
  header["foreground"] = { { "rule", report.foreground },
                           { "lower", options.hasLower ? Json(options.lower) : Json() },
                           { "upper", options.hasUpper ? Json(options.upper) : Json() },
                           { "mask", options.mask.empty() ? Json() : Json(options.mask) } };
  header["connectivity"] = options.connectivityNeighbors == 18 ? "18" : options.fullyConnected ? "full" : "face";
  header["fullyConnected"] = options.fullyConnected;
  if (!periodic.empty())
  {
    header["periodic"] = periodic; // only with --periodic, as --multilabel below
  }
  header["postProcessing"] = { { "minimumObjectSize", options.minimumObjectSize },
                               { "minimumPhysicalSize", options.minimumPhysicalSize },
                               { "numberOfObjectsToKeep", options.numberOfObjectsToKeep },
                               { "sortByObjectSize", options.sortByObjectSize } };
  // Only with --multilabel: the header of a binary input stays as it was (scripts and tests compare it).
  if (options.multiLabel)
  {
    header["foreground"]["multiLabel"] = true;
    header["postProcessing"]["perClass"] = options.perClass;
  }
  // Likewise only with --intensity: the image whose statistics the tables' intensity_* columns hold.
  if (!options.intensity.empty())
  {
    report.intensity = options.intensity;
    header["intensity"] = options.intensity;
  }
}

void
PrintSummary(const Report & r)
{
  std::ostream & os = std::cout;
  const auto     line = [&os](const char * key) -> std::ostream & {
    return os << "  " << std::left << std::setw(14) << key;
  };
  os << "cca: connected component analysis" << std::endl;
  line("input") << r.input << std::endl;
  line("image") << r.image << std::endl;
  line("foreground") << r.foreground << std::endl;
  if (!r.intensity.empty())
  {
    line("intensity") << r.intensity << " (statistics in the tables)" << std::endl;
  }
  line("connectivity") << r.connectivity << std::endl;
  if (r.labeled == 0)
  {
    line("objects") << "0 objects: no pixel has " << r.foreground << std::endl;
  }
  else
  {
    line("objects") << r.labeled << " labeled, " << r.kept << " kept" << r.postProcessing << std::endl;
  }
  if (!r.largestLabel.empty())
  {
    const bool classes = !r.largestClass.empty(); // --multilabel
    line("largest") << std::right << std::setw(10) << "label";
    if (classes)
    {
      os << std::setw(10) << "class";
    }
    os << std::setw(14) << "pixels" << std::setw(22) << ("size (" + r.sizeUnit + ")") << std::endl;
    for (std::size_t i = 0; i < r.largestLabel.size(); ++i)
    {
      line("") << std::right << std::setw(10) << r.largestLabel[i];
      if (classes)
      {
        os << std::setw(10) << r.largestClass[i];
      }
      os << std::setw(14) << r.largestPixels[i] << std::setw(22) << std::setprecision(6) << r.largestSize[i]
         << std::endl;
    }
  }
  line("backend") << r.backend << std::endl;
  line("time (s)") << std::fixed << std::setprecision(3) << "read " << r.readSeconds;
  if (r.inflatingThreads > 0)
  {
    os << (r.inflatedInPlace ? " (decompressed in place on " : " (decompressed into a copy on ") << r.inflatingThreads
       << (r.inflatingThreads == 1 ? " thread)" : " threads)");
  }
  os << ", analyze " << r.analyzeSeconds;
  if (r.engineWaitSeconds >= 0.0005)
  {
    os << " (" << r.engineWaitSeconds << " of it the GPU's start-up, beyond the read)";
  }
  os << ", write " << r.writeSeconds << std::defaultfloat << std::endl;
  std::string written;
  for (const auto & name : r.written)
  {
    written += (written.empty() ? "" : ", ") + name;
  }
  line("written") << (written.empty() ? "nothing (no --output, --csv or --json)" : written) << std::endl;
}

std::string
SmallestLabelType(std::uint64_t count)
{
  return count <= 0xFFu ? "uint8" : count <= 0xFFFFu ? "uint16" : count <= 0xFFFFFFFFu ? "uint32" : "uint64";
}

std::uint64_t
LabelTypeMax(const std::string & labelType)
{
  return labelType == "uint8"    ? 0xFFu
         : labelType == "uint16" ? 0xFFFFu
         : labelType == "uint32" ? 0xFFFFFFFFu
                                 : std::numeric_limits<std::uint64_t>::max();
}

void
WriteContactsCSV(const std::string & fileName, const itk::cca::ContactTable & table, const std::vector<double> & spacing)
{
  std::ofstream file = OpenForWriting(fileName);
  file << "label_1,label_2,num_contacts,contact_area\n";
  for (std::size_t i = 0; i < table.Size(); ++i)
  {
    double area = 0;
    for (std::size_t d = 0; d < spacing.size(); ++d)
    {
      double face = 1; // the face across axis d: the other axes' spacing
      for (std::size_t e = 0; e < spacing.size(); ++e)
      {
        face *= e != d ? spacing[e] : 1.0;
      }
      area += static_cast<double>(table.faces[d][i]) * face;
    }
    file << table.first[i] << ',' << table.second[i] << ',' << table.neighborPairs[i] << ',';
    PrintNumber(file, area, false);
    file << '\n';
  }
  Close(file, fileName);
}

void
WriteCSV(const std::string & fileName, const ObjectRow & layout, const std::vector<ObjectRow> & rows)
{
  std::ofstream file = OpenForWriting(fileName);
  file.precision(std::numeric_limits<double>::max_digits10);
  // Header: Name, Name_0, Name_1, ... (vectors), Name_0_0, Name_0_1, ... (matrices, row-major).
  bool first = true;
  for (const Attribute & a : layout)
  {
    const auto column = [&](const std::string & name) {
      file << (first ? "" : ",") << name;
      first = false;
    };
    if (a.shape.empty())
    {
      column(a.name);
    }
    else if (a.shape.size() == 1)
    {
      for (std::size_t i = 0; i < a.shape[0]; ++i)
      {
        column(a.name + "_" + std::to_string(i));
      }
    }
    else
    {
      for (std::size_t i = 0; i < a.shape[0]; ++i)
      {
        for (std::size_t j = 0; j < a.shape[1]; ++j)
        {
          column(a.name + "_" + std::to_string(i) + "_" + std::to_string(j));
        }
      }
    }
  }
  file << '\n';
  for (const ObjectRow & row : rows)
  {
    first = true;
    for (const Attribute & a : row)
    {
      for (double value : a.values)
      {
        if (!first)
        {
          file << ',';
        }
        first = false;
        PrintNumber(file, value, a.integer);
      }
    }
    file << '\n';
  }
  Close(file, fileName);
}

void
WriteJSON(const std::string & fileName, Json header, const std::vector<ObjectRow> & rows)
{
  Json objects = Json::array();
  for (const ObjectRow & row : rows)
  {
    Json object = Json::object();
    for (const Attribute & a : row)
    {
      if (a.shape.empty())
      {
        object[a.name] = JsonNumber(a.values.front(), a.integer);
        continue;
      }
      Json array = Json::array();
      if (a.shape.size() == 1)
      {
        for (double value : a.values)
        {
          array.push_back(JsonNumber(value, a.integer));
        }
      }
      else
      {
        for (std::size_t i = 0; i < a.shape[0]; ++i)
        {
          Json matrixRow = Json::array();
          for (std::size_t j = 0; j < a.shape[1]; ++j)
          {
            matrixRow.push_back(JsonNumber(a.values[i * a.shape[1] + j], a.integer));
          }
          array.push_back(matrixRow);
        }
      }
      object[a.name] = array;
    }
    objects.push_back(object);
  }
  header["objects"] = objects;
  std::ofstream file = OpenForWriting(fileName);
  file << header.dump(2) << '\n';
  Close(file, fileName);
}

} // namespace cca_tool
