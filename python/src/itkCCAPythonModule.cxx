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
// The Python package's compiled module, cudacca._core: the engine facade (CudaConnectedComponentAnalysisEngine,
// ITK-free) over arrays handed through DLPack (numpy on the host, CuPy and PyTorch on the GPU), and the table's
// columns written straight into arrays that Python allocated. Argument checks and array conversion live in
// Python (cudacca/_arrays.py); this file trusts shapes and dtypes no further than it checks them below.

#include "itkCudaConnectedComponentAnalysisEngine.h"
#include "itkCudaConnectedComponentAnalysisAttributes.h"

#include "itkCCAPythonHostCache.h"
#include "itkCCAPythonTable.h"
#include "itkCCAPairsAcross.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/optional.h>

#include <cstring>
#include <mutex>
#include <optional>
#include <string>

namespace nb = nanobind;
using Engine = itk::CudaConnectedComponentAnalysisEngine;
using Backend = Engine::Backend;
using itk::cca::ScalarKind;

namespace
{

/** The engines' warnings (the automatic backend's CPU fallback), kept for Python's warnings module. */
std::mutex  warningMutex;
std::string pendingWarning;

void
KeepWarning(const char * text)
{
  std::lock_guard<std::mutex> lock(warningMutex);
  pendingWarning += text;
}

using Array = nb::ndarray<nb::ro>;
using OutArray = nb::ndarray<>;

ScalarKind
KindOf(const nb::dlpack::dtype & t, const char * what)
{
  const auto code = static_cast<nb::dlpack::dtype_code>(t.code);
  if (t.lanes == 1)
  {
    if (code == nb::dlpack::dtype_code::Bool && t.bits == 8)
    {
      return ScalarKind::UInt8;
    }
    if (code == nb::dlpack::dtype_code::UInt || code == nb::dlpack::dtype_code::Int)
    {
      const bool s = code == nb::dlpack::dtype_code::Int;
      switch (t.bits)
      {
        case 8:
          return s ? ScalarKind::Int8 : ScalarKind::UInt8;
        case 16:
          return s ? ScalarKind::Int16 : ScalarKind::UInt16;
        case 32:
          return s ? ScalarKind::Int32 : ScalarKind::UInt32;
        case 64:
          return s ? ScalarKind::Int64 : ScalarKind::UInt64;
        default:
          break;
      }
    }
    if (code == nb::dlpack::dtype_code::Float && (t.bits == 32 || t.bits == 64))
    {
      return t.bits == 32 ? ScalarKind::Float32 : ScalarKind::Float64;
    }
  }
  throw nb::type_error((std::string(what) +
                        ": the pixel type must be a real scalar (bool, integer, float32 or "
                        "float64), not this one (DLPack code " +
                        std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits)")
                         .c_str());
}

template <typename TArray>
bool
IsContiguous(const TArray & a)
{
  if (a.size() == 0)
  {
    return true; // no element to misplace (numpy gives empty arrays various strides)
  }
  std::int64_t expected = 1;
  for (std::size_t d = a.ndim(); d-- > 0;)
  {
    if (a.shape(d) != 1 && a.stride(d) != expected)
    {
      return false;
    }
    expected *= static_cast<std::int64_t>(a.shape(d));
  }
  return true;
}

/** Where an array lives: -1 for host memory, else its CUDA device. */
template <typename TArray>
int
DeviceOf(const TArray & a, const char * what)
{
  const int type = a.device_type();
  if (type == nb::device::cpu::value || type == nb::device::cuda_host::value)
  {
    return -1;
  }
  if (type == nb::device::cuda::value || type == nb::device::cuda_managed::value)
  {
    return a.device_id();
  }
  throw nb::value_error((std::string(what) +
                         ": arrays must be in host memory or on a CUDA device (DLPack device "
                         "type " +
                         std::to_string(type) + ")")
                          .c_str());
}

/** An array's dimension (1 to 3, checked, C-contiguous) and its size in ITK's order into `size` (numpy's last axis
 * is ITK's x, the fastest). */
unsigned
SizeOf(const Array & array, const char * what, std::array<std::uint64_t, itk::cca::MaxDimension> & size)
{
  const std::size_t dims = array.ndim();
  if (dims < 1 || dims > 3)
  {
    throw nb::value_error((std::string(what) + ": 1 to 3 dimensions are supported").c_str());
  }
  if (!IsContiguous(array))
  {
    throw nb::value_error((std::string(what) + ": must be C-contiguous (cudacca copies other layouts first)").c_str());
  }
  for (std::size_t d = 0; d < dims; ++d)
  {
    size[d] = array.shape(dims - 1 - d);
    if (size[d] == 0)
    {
      throw nb::value_error((std::string(what) + ": has an empty axis").c_str());
    }
  }
  return static_cast<unsigned>(dims);
}

/** The backend a Python caller names. */
Backend
BackendOf(const std::string & name)
{
  if (name == "cuda")
  {
    return Backend::CUDA;
  }
  if (name == "cpu")
  {
    return Backend::CPU;
  }
  if (name != "auto")
  {
    throw nb::value_error("backend: 'auto', 'cuda' or 'cpu'");
  }
  return Backend::Automatic;
}

/** The facade for one Python caller (cudacca keeps one per thread): analyze, then labels and columns of that
 * analysis. The GIL is released while the engines work. */
class Analysis
{
public:
  std::uint64_t
  Run(const Array & image, const std::optional<Array> & mask, unsigned connectivity, const std::string & backendName,
      int deviceId, unsigned threads, std::uint64_t minSize, double minPhysicalSize, std::uint64_t keep, bool sort,
      double pixelVolume, bool shapeSums, bool perimeter, std::uintptr_t stream, std::uint64_t batchExtent,
      std::uint64_t memoryBudget, bool multiLabel, bool perClass, bool classValues,
      const std::optional<Array> & intensity, unsigned periodicAxes, double valueTolerance)
  {
    m_Valid = false;
    itk::cca::Request r;
    const std::size_t dims = image.ndim();
    r.dimension = SizeOf(image, "image", r.size);
    r.input = image.data();
    r.inputKind = KindOf(image.dtype(), "image");
    const int where = DeviceOf(image, "image");
    if (mask)
    {
      if (mask->ndim() != dims || !IsContiguous(*mask))
      {
        throw nb::value_error("mask: must be C-contiguous and have the image's shape");
      }
      for (std::size_t d = 0; d < dims; ++d)
      {
        if (mask->shape(d) != image.shape(d))
        {
          throw nb::value_error("mask: must have the image's shape");
        }
      }
      if (DeviceOf(*mask, "mask") != where)
      {
        throw nb::value_error("mask: must be on the image's device");
      }
      r.mask = mask->data();
      r.maskKind = KindOf(mask->dtype(), "mask");
    }
    if (intensity)
    {
      if (intensity->ndim() != dims || !IsContiguous(*intensity))
      {
        throw nb::value_error("intensity: must be C-contiguous and have the image's shape");
      }
      for (std::size_t d = 0; d < dims; ++d)
      {
        if (intensity->shape(d) != image.shape(d))
        {
          throw nb::value_error("intensity: must have the image's shape");
        }
      }
      if (DeviceOf(*intensity, "intensity") != where)
      {
        throw nb::value_error("intensity: must be on the image's device");
      }
      r.feature = intensity->data();
      r.featureKind = KindOf(intensity->dtype(), "intensity");
    }
    r.connectivity = itk::cca::Connectivity{ connectivity, periodicAxes, valueTolerance };
    r.postProcessing.minimumObjectSize = minSize;
    r.postProcessing.minimumPhysicalSize = minPhysicalSize;
    r.postProcessing.numberOfObjectsToKeep = keep;
    r.postProcessing.sortByObjectSize = sort;
    r.multiLabel = multiLabel;
    r.postProcessing.perClass = perClass;
    r.postProcessing.writeClassValues = classValues;
    r.pixelVolume = pixelVolume;
    r.computeShapeSums = shapeSums;
    r.computePerimeter = shapeSums && perimeter;
    r.inputOnDevice = where >= 0;
    r.keepSumsOnDevice = true; // the table's columns come from the device's per-sum arrays (WriteBasicColumns)
    r.stream = reinterpret_cast<void *>(stream);
    r.batchExtent = batchExtent;
    r.memoryBudget = memoryBudget;
    const Backend backend = BackendOf(backendName);
    const int     device = where >= 0 ? where : deviceId;
    std::uint64_t count = 0;
    {
      nb::gil_scoped_release release;
      count = m_Engine.Analyze(r, backend, device, threads);
    }
    m_Valid = true;
    m_OnDevice = where;
    m_Dimension = r.dimension;
    m_Size = r.size;
    m_Count = count;
    return count;
  }

  void
  WriteLabels(nb::ndarray<> & out, std::uint64_t backgroundBits, std::uint64_t skipValue, bool restartPerImage)
  {
    RequireAnalysis();
    if (out.ndim() != m_Dimension || !IsContiguous(out))
    {
      throw nb::value_error("labels: must be C-contiguous and have the image's shape");
    }
    for (std::size_t d = 0; d < m_Dimension; ++d)
    {
      if (out.shape(d) != m_Size[m_Dimension - 1 - d])
      {
        throw nb::value_error("labels: must have the image's shape");
      }
    }
    const ScalarKind kind = KindOf(out.dtype(), "labels");
    const int        where = DeviceOf(out, "labels");
    if (where != m_OnDevice)
    {
      throw nb::value_error("labels: must be where the image is (host memory or the image's device)");
    }
    nb::gil_scoped_release release;
    m_Engine.WriteLabels(out.data(), kind, backgroundBits, skipValue, where >= 0, restartPerImage);
  }

  void
  FillColumns(nb::dict columns, const std::vector<std::int64_t> & start, const std::vector<double> & spacing,
              const std::vector<double> & origin, const std::vector<double> & direction, bool feret, bool obb,
              unsigned threads)
  {
    RequireAnalysis();
    itk::cca::python::TableRequest t;
    t.dimension = m_Dimension;
    t.count = m_Count;
    t.geometry = MakeGeometry(start, spacing, origin, direction);
    t.threads = threads;
    t.options.computePerimeter = true;
    t.options.computeFeretDiameter = feret;
    t.options.computeOrientedBoundingBox = obb;
    for (auto item : columns)
    {
      const std::string        name = nb::cast<std::string>(item.first);
      auto                     array = nb::cast<nb::ndarray<nb::c_contig, nb::device::cpu>>(item.second, false);
      itk::cca::python::Column c;
      c.name = name;
      c.data = array.data();
      c.size = array.size();
      const auto code = static_cast<nb::dlpack::dtype_code>(array.dtype().code);
      c.isFloat = code == nb::dlpack::dtype_code::Float;
      if (array.dtype().bits != 64)
      {
        throw nb::type_error(("column " + name + ": 64-bit arrays expected").c_str());
      }
      t.columns.push_back(c);
    }
    nb::gil_scoped_release release;
    itk::cca::python::FillColumns(m_Engine, t);
  }

  /** The basic columns into arrays where the image is (numpy, or CuPy/PyTorch on its device): "label" (1 x K: the
   * labels 1 .. K), "num_pixels" (1 x K), "area" (1 x K), "bbox" (2D x K: first index per array axis, then end),
   * "centroid" (D x K), each row C-contiguous, 64-bit. */
  void
  WriteBasicColumns(nb::dict columns, const std::vector<std::int64_t> & start, const std::vector<double> & spacing,
                    const std::vector<double> & origin, const std::vector<double> & direction,
                    std::uint64_t batchStride)
  {
    RequireAnalysis();
    const itk::cca::Geometry geometry = MakeGeometry(start, spacing, origin, direction);
    itk::cca::BasicColumns   c;
    c.onDevice = m_OnDevice >= 0 && m_Engine.CanWriteDeviceColumns();
    c.batchStride = batchStride;
    const unsigned d = m_Dimension;
    for (auto item : columns)
    {
      const std::string name = nb::cast<std::string>(item.first);
      auto              array = nb::cast<nb::ndarray<>>(item.second);
      const std::size_t rows = name == "bbox" ? 2 * d : name == "centroid" ? d : 1;
      if (array.dtype().bits != 64 || array.size() != rows * m_Count || !IsContiguous(array) ||
          DeviceOf(array, "table") != (c.onDevice ? m_OnDevice : -1))
      {
        throw nb::value_error(
          ("column " + name + ": a contiguous 64-bit array of the right size, where device_columns says").c_str());
      }
      if (name == "image" && batchStride != 0)
      {
        c.image = static_cast<std::int64_t *>(array.data());
      }
      else if (!SetBasicColumn(c, name, static_cast<char *>(array.data())))
      {
        throw nb::value_error(("no basic column named " + name).c_str());
      }
    }
    nb::gil_scoped_release release;
    m_Engine.WriteBasicColumns(geometry, c);
  }

  /** The default table in one step: `block` (where device_columns says: the image's GPU or host memory) holds
   * 3 + 3D rows of K 64-bit values, the labels 1 .. K, "num_pixels", "area", "bbox" (2D rows) and "centroid" (D
   * rows), in that order (cudacca's short path for the common call, where write_basic_columns() takes a dict of
   * arrays). */
  void
  WriteBasicTable(nb::ndarray<> & block, const std::vector<std::int64_t> & start, const std::vector<double> & spacing,
                  const std::vector<double> & origin, const std::vector<double> & direction)
  {
    RequireAnalysis();
    const unsigned         d = m_Dimension;
    itk::cca::BasicColumns c;
    c.onDevice = DeviceColumns();
    if (block.ndim() != 2 || block.shape(0) != 3 + 3 * std::size_t{ d } || block.shape(1) != m_Count ||
        block.dtype().bits != 64 || !IsContiguous(block) || DeviceOf(block, "table") != (c.onDevice ? m_OnDevice : -1))
    {
      throw nb::value_error(
        "write_basic_table: a contiguous block of 3 + 3D rows of K 64-bit values, where device_columns says");
    }
    const itk::cca::Geometry geometry = MakeGeometry(start, spacing, origin, direction);
    auto * const             base = static_cast<char *>(block.data());
    const std::size_t        rowBytes = m_Count * 8;
    SetBasicColumn(c, "label", base);
    SetBasicColumn(c, "num_pixels", base + rowBytes);
    SetBasicColumn(c, "area", base + 2 * rowBytes);
    SetBasicColumn(c, "bbox", base + 3 * rowBytes);
    SetBasicColumn(c, "centroid", base + (3 + 2 * d) * rowBytes);
    nb::gil_scoped_release release;
    m_Engine.WriteBasicColumns(geometry, c);
  }

  /** Whether write_basic_columns() writes device columns for a device image (else host ones: merged on the host). */
  bool
  DeviceColumns() const
  {
    return m_OnDevice >= 0 && m_Engine.CanWriteDeviceColumns();
  }

  /** Which labels of `labels` touch (ComputeContacts): the columns first, second, neighbor pairs, then the face pairs
   * across ITK's axes x, y, z (six uint64 arrays of one length, the table's own memory: no copy). */
  nb::list
  Contacts(const Array & labels, unsigned connectivity, const std::string & backendName, int deviceId, unsigned threads,
           std::uintptr_t stream)
  {
    m_Valid = false; // the facade keeps no analysis
    itk::cca::ContactRequest r;
    r.dimension = SizeOf(labels, "labels", r.size);
    r.labels = labels.data();
    r.labelKind = KindOf(labels.dtype(), "labels");
    const int where = DeviceOf(labels, "labels");
    r.labelsOnDevice = where >= 0;
    r.stream = reinterpret_cast<void *>(stream);
    r.connectivity = itk::cca::Connectivity{ connectivity };
    const Backend          backend = BackendOf(backendName);
    itk::cca::ContactTable table;
    {
      nb::gil_scoped_release release;
      table = m_Engine.ComputeContacts(r, backend, where >= 0 ? where : deviceId, threads);
    }
    const std::size_t n = table.Size();
    nb::list          out;
    for (auto * column :
         { &table.first, &table.second, &table.neighborPairs, &table.faces[0], &table.faces[1], &table.faces[2] })
    {
      // Each column moved into an array of its own: holding one keeps no other alive.
      auto * owned = new std::vector<std::uint64_t>(std::move(*column));
      owned->reserve(1); // a valid pointer for an empty table too
      nb::capsule owner(owned, [](void * p) noexcept { delete static_cast<std::vector<std::uint64_t> *>(p); });
      out.append(nb::ndarray<nb::numpy, std::uint64_t>(owned->data(), { n }, owner));
    }
    return out;
  }

  std::uint64_t
  NumberOfSlabs() const
  {
    return m_Engine.GetNumberOfSlabs();
  }

  std::string
  BackendUsed() const
  {
    return m_Engine.GetBackendUsed() == Backend::CUDA ? "cuda" : m_Engine.GetBackendUsed() == Backend::CPU ? "cpu" : "";
  }
  std::string
  Description() const
  {
    return m_Engine.GetDescription();
  }
  std::uint64_t
  OriginalCount() const
  {
    return m_Engine.GetOriginalComponentCount();
  }

private:
  /** The image's geometry in ITK's axis order (spacing, origin; direction row-major). */
  itk::cca::Geometry
  MakeGeometry(const std::vector<std::int64_t> & start, const std::vector<double> & spacing,
               const std::vector<double> & origin, const std::vector<double> & direction) const
  {
    if (start.size() != m_Dimension || spacing.size() != m_Dimension || origin.size() != m_Dimension ||
        direction.size() != std::size_t{ m_Dimension } * m_Dimension)
    {
      throw nb::value_error("geometry: spacing and origin need one value per axis, direction D x D");
    }
    itk::cca::Geometry g;
    g.dimension = m_Dimension;
    for (unsigned i = 0; i < m_Dimension; ++i)
    {
      g.start[i] = start[i];
      g.size[i] = m_Size[i];
      g.spacing[i] = spacing[i];
      g.origin[i] = origin[i];
      for (unsigned j = 0; j < m_Dimension; ++j)
      {
        g.direction[i][j] = direction[i * m_Dimension + j];
      }
    }
    return g;
  }

  /** Points `c`'s column `name` ("label", "num_pixels", "area", "class", "bbox": 2D rows, "centroid": D rows; rows of K
   * 64-bit values in array axis order) at `base`; false for another name. */
  bool
  SetBasicColumn(itk::cca::BasicColumns & c, const std::string & name, char * base) const
  {
    const unsigned d = m_Dimension;
    auto           row = [&](std::size_t r) { return base + r * m_Count * 8; };
    if (name == "label")
    {
      c.label = reinterpret_cast<std::uint64_t *>(base);
    }
    else if (name == "num_pixels")
    {
      c.numberOfPixels = reinterpret_cast<std::uint64_t *>(base);
    }
    else if (name == "area")
    {
      c.physicalSize = reinterpret_cast<double *>(base);
    }
    else if (name == "class")
    {
      c.classValue = reinterpret_cast<std::int64_t *>(base);
    }
    else if (name == "bbox")
    {
      for (unsigned a = 0; a < d; ++a) // array axis a is ITK's axis d - 1 - a
      {
        c.boundingBoxBegin[d - 1 - a] = reinterpret_cast<std::int64_t *>(row(a));
        c.boundingBoxEnd[d - 1 - a] = reinterpret_cast<std::int64_t *>(row(d + a));
      }
    }
    else if (name == "centroid")
    {
      for (unsigned a = 0; a < d; ++a)
      {
        c.centroid[d - 1 - a] = reinterpret_cast<double *>(row(a));
      }
    }
    else
    {
      return false;
    }
    return true;
  }

  void
  RequireAnalysis() const
  {
    if (!m_Valid)
    {
      throw nb::value_error("no analysis: run() failed or was not called");
    }
  }

  Engine                                            m_Engine;
  bool                                              m_Valid = false;
  int                                               m_OnDevice = -1;
  unsigned                                          m_Dimension = 0;
  std::array<std::uint64_t, itk::cca::MaxDimension> m_Size{ { 1, 1, 1 } };
  std::uint64_t                                     m_Count = 0;
};

} // namespace

NB_MODULE(_core, m)
{
  m.doc() = "cudacca's compiled engines (CUDA and CPU); use cudacca.label().";
  Engine::SetWarningHandler(&KeepWarning);
  // The per-thread facades (cudacca._label) of threads still running at exit go with the interpreter;
  // nanobind would report them as leaks.
  nb::set_leak_warnings(false);

  static nb::exception<itk::cca::Error> error(m, "EngineError", PyExc_RuntimeError);
  nb::register_exception_translator([](const std::exception_ptr & p, void *) {
    try
    {
      std::rethrow_exception(p);
    }
    catch (const itk::cca::OutOfMemory & e)
    {
      PyErr_SetString(PyExc_MemoryError, e.what());
    }
  });

  nb::class_<Analysis>(m, "Analysis")
    .def(nb::init<>())
    .def("run",
         &Analysis::Run,
         nb::arg("image"),
         nb::arg("mask").none(),
         nb::arg("connectivity"),
         nb::arg("backend"),
         nb::arg("device"),
         nb::arg("threads"),
         nb::arg("min_size"),
         nb::arg("min_physical_size"),
         nb::arg("keep"),
         nb::arg("sort"),
         nb::arg("pixel_volume"),
         nb::arg("shape_sums"),
         nb::arg("perimeter"),
         nb::arg("stream"),
         nb::arg("batch_extent") = 0,
         nb::arg("memory_budget") = 0,
         nb::arg("multi_label") = false,
         nb::arg("per_class") = false,
         nb::arg("class_values") = false,
         nb::arg("intensity").none() = nb::none(),
         nb::arg("periodic_axes") = 0,
         nb::arg("value_tolerance") = -1.0)
    .def("write_labels",
         &Analysis::WriteLabels,
         nb::arg("out"),
         nb::arg("background_bits"),
         nb::arg("skip_value"),
         nb::arg("restart_per_image") = false)
    .def("write_basic_columns",
         &Analysis::WriteBasicColumns,
         nb::arg("columns"),
         nb::arg("start"),
         nb::arg("spacing"),
         nb::arg("origin"),
         nb::arg("direction"),
         nb::arg("batch_stride") = 0)
    .def("write_basic_table",
         &Analysis::WriteBasicTable,
         nb::arg("block"),
         nb::arg("start"),
         nb::arg("spacing"),
         nb::arg("origin"),
         nb::arg("direction"))
    .def("fill_columns",
         &Analysis::FillColumns,
         nb::arg("columns"),
         nb::arg("start"),
         nb::arg("spacing"),
         nb::arg("origin"),
         nb::arg("direction"),
         nb::arg("feret"),
         nb::arg("obb"),
         nb::arg("threads"))
    .def_prop_ro("backend_used", &Analysis::BackendUsed)
    .def_prop_ro("description", &Analysis::Description)
    .def_prop_ro("original_count", &Analysis::OriginalCount)
    .def_prop_ro("number_of_slabs", &Analysis::NumberOfSlabs)
    .def_prop_ro("device_columns", &Analysis::DeviceColumns)
    .def("contacts",
         &Analysis::Contacts,
         nb::arg("labels"),
         nb::arg("connectivity"),
         nb::arg("backend"),
         nb::arg("device"),
         nb::arg("threads"),
         nb::arg("stream"));

  m.def("take_warning", []() {
    std::lock_guard<std::mutex> lock(warningMutex);
    std::string                 text;
    text.swap(pendingWarning);
    return text;
  });
  m.def("column_info", [](const std::string & name, unsigned dimension) -> nb::object {
    std::size_t components = 0;
    bool        isFloat = false;
    bool        shape = false;
    if (!itk::cca::python::DescribeColumn(name, dimension, components, isFloat, shape))
    {
      return nb::none();
    }
    return nb::make_tuple(components, isFloat, shape);
  });
  // The attributes the table has (itkCudaConnectedComponentAnalysisAttributes.h), in column order: the Python
  // name, its group and layout, whether its values are integers, whether it needs the shape sums, the perimeter
  // intercepts, an intensity image (the C++ rules, NeedsShapeSums() ...), and its description.
  m.def("attributes", []() {
    static const char * const groups[] = { "basic", "shape", "on_request", "intensity_default", "intensity" };
    static const char * const layouts[] = { "scalar", "per_axis", "per_principal_axis", "bbox", "axis_matrix" };
    std::size_t                                   count = 0;
    const itk::cca::AttributeDefinition * const attributes = itk::cca::Attributes(count);
    nb::list                                      list;
    for (std::size_t i = 0; i < count; ++i)
    {
      const itk::cca::AttributeDefinition & a = attributes[i];
      if (a.pythonName != nullptr)
      {
        list.append(nb::make_tuple(a.pythonName, groups[static_cast<int>(a.group)], layouts[static_cast<int>(a.layout)],
                                   a.integer, itk::cca::NeedsShapeSums(a), itk::cca::NeedsPerimeter(a),
                                   itk::cca::NeedsIntensity(a), a.description));
      }
    }
    return list;
  });
  // The Dask path's join across a chunk boundary: the pairs of non-zero labels facing each other across it that
  // the connectivity joins (the slab engine's rule, itkCCAPairsAcross.h), each once where it repeats side by
  // side. `before` and `after` are the planes on either side (0-, 1- or 2-D, C order), of equal shape.
  m.def(
    "touching_pairs",
    [](nb::ndarray<const std::int64_t, nb::c_contig, nb::device::cpu> before,
       nb::ndarray<const std::int64_t, nb::c_contig, nb::device::cpu> after,
       unsigned                                                       connectivity) {
      if (before.ndim() > 2 || before.ndim() != after.ndim())
      {
        throw nb::value_error("touching_pairs: two planes of 0 to 2 dimensions and one shape");
      }
      for (std::size_t d = 0; d < before.ndim(); ++d)
      {
        if (before.shape(d) != after.shape(d))
        {
          throw nb::value_error("touching_pairs: the planes' shapes differ");
        }
      }
      if (connectivity < 1)
      {
        throw nb::value_error("touching_pairs: connectivity is the most non-zero offset components, 1 or more");
      }
      itk::cca::PlaneShape shape;
      if (before.ndim() >= 1)
      {
        shape.width = before.shape(before.ndim() - 1);
      }
      if (before.ndim() == 2)
      {
        shape.height = before.shape(0);
      }
      const std::int64_t *      a = before.data();
      const std::int64_t *      b = after.data();
      std::vector<std::int64_t> first, second;
      {
        nb::gil_scoped_release release;
        itk::cca::ForEachJoinedPairAcross(
          shape, itk::cca::Connectivity{ connectivity }, [&](std::uint64_t i, std::uint64_t j) {
            if (a[i] != 0 && b[j] != 0 && (first.empty() || first.back() != a[i] || second.back() != b[j]))
            {
              first.push_back(a[i]);
              second.push_back(b[j]);
            }
          });
      }
      const std::size_t n = first.size();
      auto *            pairs = new std::vector<std::int64_t>(std::move(first));
      pairs->insert(pairs->end(), second.begin(), second.end());
      nb::capsule owner(pairs, [](void * p) noexcept { delete static_cast<std::vector<std::int64_t> *>(p); });
      return nb::ndarray<nb::numpy, std::int64_t>(pairs->data(), { 2, n }, owner);
    },
    nb::arg("before"),
    nb::arg("after"),
    nb::arg("connectivity"));
  m.def("cuda_compiled", &Engine::IsCudaEngineCompiled);
  m.def("cuda_device_count", []() {
    std::string reason;
    const int   n = Engine::GetCudaDeviceCount(&reason);
    return nb::make_tuple(n, reason);
  });
  m.def("release_cached_engines", &Engine::ReleaseCachedEngines);
  // Large host outputs in reused memory (itkCCAPythonHostCache.h): a 1-D uint8 numpy array of `bytes` whose block
  // goes back to the cache when the array dies; None where the system has no memory to give.
  m.def(
    "host_empty",
    [](std::size_t bytes) -> nb::object {
      using itk::cca::python::HostBlockCache;
      void * block = HostBlockCache::Instance().Acquire(bytes);
      if (block == nullptr)
      {
        return nb::none();
      }
      nb::capsule owner(block, [](void * p) noexcept { HostBlockCache::Instance().Release(p); });
      return nb::ndarray<nb::numpy, std::uint8_t, nb::ndim<1>>(block, { bytes }, owner).cast();
    },
    nb::arg("bytes"));
  m.def("host_cache_info", []() {
    const auto info = itk::cca::python::HostBlockCache::Instance().GetInfo();
    nb::dict   d;
    d["cached_bytes"] = info.cachedBytes;
    d["used_bytes"] = info.usedBytes;
    d["limit"] = info.limit;
    return d;
  });
  m.def(
    "set_host_cache_limit",
    [](std::size_t bytes) { return itk::cca::python::HostBlockCache::Instance().SetLimit(bytes); },
    nb::arg("bytes"));
  m.def("free_host_cache", []() { itk::cca::python::HostBlockCache::Instance().FreeAll(); });
}
