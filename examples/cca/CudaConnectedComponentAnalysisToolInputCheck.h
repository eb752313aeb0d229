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
// What the checks of an image file's completeness share (CudaConnectedComponentAnalysisToolInputCheck.cxx,
// CudaConnectedComponentAnalysisToolTiffCheck.cxx); internal to the tool.
#ifndef CudaConnectedComponentAnalysisToolInputCheck_h
#define CudaConnectedComponentAnalysisToolInputCheck_h

#include "CudaConnectedComponentAnalysisTool.h"

namespace cca_tool
{

/** "1 byte", "69120 bytes". */
std::string
Bytes(std::uint64_t n);

/** The error for a file that yields fewer bytes than its header promises: exit 2, the file and both sizes. */
ToolError
Truncated(const std::string & file, std::uint64_t promised, std::uint64_t yielded, const std::string & what);

std::uint64_t
FileSize(const std::string & file);

/** Throws Truncated when a strip, tile, directory or tag value of the TIFF `file` lies past its end. Files
 * that are no TIFF, or hold offsets of a type it does not read, are left to ITK's reader. */
void
CheckTiff(const std::string & file);

} // namespace cca_tool

#endif
