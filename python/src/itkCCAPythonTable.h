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
// The Python table: requested columns of the last analysis, each written straight into an array that Python
// allocated, on several threads, from the same attribute code as the filter's LabelMap
// (ShapeAttributeCalculator). Axis order is the array's: component 0 of a coordinate is the first numpy axis
// (z in 3D), ITK's x the last.
#ifndef itkCCAPythonTable_h
#define itkCCAPythonTable_h

#include "itkCudaConnectedComponentAnalysisEngine.h"

#include <string>
#include <vector>

namespace itk
{
namespace cca
{
namespace python
{

/** One requested column: `size` 64-bit values (double where isFloat, else integers), a column of k
 * components stored as k consecutive blocks of one value per component of the image. */
struct Column
{
  std::string name;
  void *      data = nullptr;
  std::size_t size = 0;
  bool        isFloat = false;
};

struct TableRequest
{
  unsigned            dimension = 2;
  std::uint64_t       count = 0;
  unsigned            threads = 0; ///< 0: all hardware threads
  Geometry            geometry;
  ShapeOptions        options;
  std::vector<Column> columns;
};

/** How many values per component the column `name` has in `dimension` dimensions, whether they are
 * floating point and whether it needs the shape sums; false where there is no such column. */
bool
DescribeColumn(const std::string & name, unsigned dimension, std::size_t & components, bool & isFloat,
               bool & needsShapeSums);

/** Fills the request's columns from the facade's last Analyze() (checked: names, sizes, types). */
void
FillColumns(CudaConnectedComponentAnalysisEngine & engine, const TableRequest & request);

} // namespace python
} // namespace cca
} // namespace itk

#endif
