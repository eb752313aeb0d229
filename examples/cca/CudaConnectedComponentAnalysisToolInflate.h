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
// A gzip image file decompressed once, into memory, for ITK's reader; internal to the tool.
#ifndef CudaConnectedComponentAnalysisToolInflate_h
#define CudaConnectedComponentAnalysisToolInflate_h

#include <cstdint>
#include <memory>
#include <string>

namespace cca_tool
{

/** The decompressed copy of a gzip image file (a `.nii.gz`), made in one pass by libdeflate into a memory file
 * that ITK's reader reads as the uncompressed format. ITK's own read inflates with zlib, and the completeness
 * check inflated the stream a second time beside it; this pass is both, at libdeflate's speed. The copy lives in
 * memory (a memfd, named by a link in a temporary folder) and is gone with the object or the process.
 * Where the NIfTI header says that the data are the pixels as they lie in memory, InflateInto() does better:
 * the stream decompressed on every core straight into the image's buffer, with no copy for ITK to read. */
class InflatedCopy
{
public:
  /** Whether this build makes copies (libdeflate found at build time, Linux). */
  static bool
  Available();

  /** Inflates every gzip member of `file` into the copy, named `name` (its extension tells ITK the format), and
   * returns it where the stream inflated whole, CRCs and lengths checked, to at least the `promised` bytes. Else
   * nullptr: none could be kept (no memory file, or more bytes than half the available memory), or the stream is
   * damaged, cut or short; the caller then checks `file` as it did without copies (zlib's messages say where the
   * stream breaks off) and lets ITK read it. */
  static std::shared_ptr<InflatedCopy>
  Make(const std::string & file, const std::string & name, std::uint64_t promised);

  /** Decompresses `file`, skipping its first `skip` bytes, the next `size` bytes into `out`, and the rest to the
   * end, every member's CRC checked (and its length, by libdeflate): on every core by rapidgzip where this build has
   * it and the machine has 8 threads or more, else (or where rapidgzip fails) by libdeflate into memory of its own
   * and copied. Returns the number of threads that decompressed it, or 0 where the stream did not hold them and end
   * whole, or memory or threads were wanting. */
  static unsigned int
  InflateInto(const std::string & file, std::uint64_t skip, void * out, std::uint64_t size);

  ~InflatedCopy();
  InflatedCopy(const InflatedCopy &) = delete;
  InflatedCopy &
  operator=(const InflatedCopy &) = delete;

  /** The file ITK reads. */
  const std::string &
  Path() const
  {
    return m_Path;
  }

private:
  InflatedCopy() = default;
  int         m_Descriptor{ -1 };
  std::string m_Directory;
  std::string m_Path;
};

} // namespace cca_tool

#endif
