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
#include "itkCCAPythonTable.h"

#include "itkCCAParallelFor.h"
#include "itkCudaConnectedComponentAnalysisAttributes.h"

#include <algorithm>
#include <memory>
#include <thread>

namespace itk
{
namespace cca
{
namespace python
{
namespace
{

struct Target
{
  const AttributeDefinition * attribute;
  void *                      data;
};

/** Writes component k's values of one attribute: the c-th value at data[c * count + k], coordinates in the
 * array's axis order (array axis c is ITK's axis d-1-c), integers as 64-bit integers. */
void
Store(const Target & t, const ShapeAttributes & a, const IntensityStatistics & s, unsigned d, std::uint64_t count,
      std::uint64_t k)
{
  double values[MaxAttributeValues];
  t.attribute->compute(a, s, d, values);
  const std::size_t n = NumberOfValues(*t.attribute, d);
  const auto        axis = [d](unsigned c) { return d - 1 - c; };
  const auto        source = [&](std::size_t c) -> std::size_t {
    switch (t.attribute->layout)
    {
      case AttributeLayout::PerAxis:
        return axis(static_cast<unsigned>(c));
      case AttributeLayout::BoundingBox: // first indices, then ends, each reordered
        return c < d ? axis(static_cast<unsigned>(c)) : d + axis(static_cast<unsigned>(c - d));
      case AttributeLayout::AxisMatrix: // row m stays the m-th principal axis; its components reordered
        return (c / d) * d + axis(static_cast<unsigned>(c % d));
      default:
        return c;
    }
  };
  for (std::size_t c = 0; c < n; ++c)
  {
    const double v = values[source(c)];
    if (t.attribute->integer)
    {
      static_cast<std::int64_t *>(t.data)[c * count + k] = static_cast<std::int64_t>(v);
    }
    else
    {
      static_cast<double *>(t.data)[c * count + k] = v;
    }
  }
}

const AttributeDefinition *
FindColumn(const std::string & name)
{
  const AttributeDefinition * a = FindAttribute(name);
  return a != nullptr && a->pythonName != nullptr && name == a->pythonName ? a : nullptr;
}

} // namespace

bool
DescribeColumn(const std::string & name, unsigned dimension, std::size_t & components, bool & isFloat,
               bool & needsShapeSums)
{
  const AttributeDefinition * a = FindColumn(name);
  if (a == nullptr)
  {
    return false;
  }
  components = NumberOfValues(*a, dimension);
  isFloat = !a->integer;
  needsShapeSums = NeedsShapeSums(*a);
  return true;
}

void
FillColumns(CudaConnectedComponentAnalysisEngine & engine, const TableRequest & request)
{
  const unsigned      d = request.dimension;
  const std::uint64_t count = request.count;
  std::vector<Target> targets;
  bool                shape = false;
  bool                intensity = false;
  bool                weightedMoments = false; ///< an eigen-decomposition per component: only where asked
  for (const Column & c : request.columns)
  {
    const AttributeDefinition * a = FindColumn(c.name);
    if (a == nullptr)
    {
      throw Error("table: no column named '" + c.name + "'");
    }
    if (c.size != NumberOfValues(*a, d) * count || c.isFloat == a->integer)
    {
      throw Error("table: column '" + c.name + "' has the wrong size or type");
    }
    shape = shape || NeedsShapeSums(*a);
    intensity = intensity || NeedsIntensity(*a);
    weightedMoments = weightedMoments || a->source == AttributeSource::WeightedMoments;
    targets.push_back({ a, c.data });
  }
  if (intensity && !engine.HasIntensityStatistics())
  {
    throw Error("table: the intensity columns need an intensity image (label(..., intensity=...))");
  }
  if (targets.empty() || count == 0)
  {
    return;
  }
  Lines lines;
  if (request.options.computeFeretDiameter || request.options.computeOrientedBoundingBox)
  {
    engine.ComputeLines(request.geometry, lines);
  }
  // Only for columns other than the intensity ones: the calculator reads the ComponentSums rows, which the CUDA
  // engine converts from its device arrays for every component.
  const bool other = std::any_of(targets.begin(), targets.end(), [](const Target & t) { return !NeedsIntensity(*t.attribute); });
  const auto calculator =
    other ? engine.MakeShapeAttributeCalculator(request.geometry, request.options, lines) : nullptr;
  const unsigned threads = request.threads != 0 ? request.threads : std::max(1u, std::thread::hardware_concurrency());
  ParallelForRange(threads, count, 1u << 14, [&](std::uint64_t begin, std::uint64_t end) {
    ShapeAttributes     a;
    IntensityStatistics s;
    for (std::uint64_t k = begin; k < end; ++k)
    {
      if (intensity)
      {
        engine.ComputeIntensityStatistics(k, request.geometry, s, weightedMoments);
      }
      if (shape)
      {
        calculator->Compute(k, a);
      }
      else if (other)
      {
        calculator->ComputeBasic(k, a);
      }
      for (const Target & t : targets)
      {
        Store(t, a, s, d, count, k);
      }
    }
  });
}

} // namespace python
} // namespace cca
} // namespace itk
