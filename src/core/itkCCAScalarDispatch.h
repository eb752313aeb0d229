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
#ifndef itkCCAScalarDispatch_h
#define itkCCAScalarDispatch_h

// The one scalar-type dispatch of both engines: from the ScalarKind of a request's buffer to the C++
// type the templated scans and writers are instantiated for.

#include "itkCCAEngine.h"

#include <cstdint>
#include <string>

namespace itk
{
namespace cca
{

/** Calls function(T{}) with the C++ type T of `kind`. */
template <typename TFunction>
void
DispatchScalarKind(ScalarKind kind, const TFunction & function)
{
  switch (kind)
  {
    case ScalarKind::UInt8:
      return function(std::uint8_t{});
    case ScalarKind::Int8:
      return function(std::int8_t{});
    case ScalarKind::UInt16:
      return function(std::uint16_t{});
    case ScalarKind::Int16:
      return function(std::int16_t{});
    case ScalarKind::UInt32:
      return function(std::uint32_t{});
    case ScalarKind::Int32:
      return function(std::int32_t{});
    case ScalarKind::UInt64:
      return function(std::uint64_t{});
    case ScalarKind::Int64:
      return function(std::int64_t{});
    case ScalarKind::Float32:
      return function(float{});
    case ScalarKind::Float64:
      return function(double{});
  }
  throw Error("unknown scalar kind " + std::to_string(static_cast<int>(kind)));
}

} // namespace cca
} // namespace itk

#endif
