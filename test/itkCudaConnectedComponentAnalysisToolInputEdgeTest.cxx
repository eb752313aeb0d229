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
// The tool's input checks on files that are whole although unusual (each was refused, or let through, by the
// first version of the checks; a review found them). Arguments: tool case outputFolder.
//   meta_compressed_TRUE   a compressed MetaImage whose header says "CompressedData = TRUE" (MetaIO: any value
//                          starting with T, t or 1): labeled (exit 0)
//   nifti_bitpix           a .nii whose bitpix disagrees with its datatype (niftilib reads by datatype): labeled
//   analyze_img_input      an Analyze pair named by its .img, the .img cut short: refused (exit 2)
//   dicom_other_sop        a series beside a cut DICOM file of another SOP class (as an RT structure set or a
//                          report that GDCM puts in no series): the series labeled, 6 slices (exit 0)
//   outputs_clash          --output r.mhd writes r.zraw: --csv r.zraw is refused (exit 1), nothing written
//   symlink_output         --csv through a symbolic link: the link kept, its target replaced
//   overwrite_nrrd_data    --csv onto the detached data file of the NRRD input: refused (exit 1)
// The .nii.gz cases are itkCudaConnectedComponentAnalysisToolGzipTest's.
#include "itkCCAToolTestUtilities.h"

#include <cstdio>
#include <fstream>

namespace
{
using namespace itk;
using ccatest::Expect;
using ccatest::g_Folder;
using ccatest::g_Tool;
using ccatest::Outcome;
using ccatest::Run;
using ccatest::Slurp;

using ccatest::Path;
using ccatest::Save;
using ccatest::ShortVolume;

/** `bytes` with every `from` replaced by `to` (same length); false where `from` is not in it. */
bool
Patch(std::string & bytes, const std::string & from, const std::string & to)
{
  bool found = false;
  for (auto at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + to.size()))
  {
    bytes.replace(at, from.size(), to);
    found = true;
  }
  if (!found)
  {
    std::cerr << "'" << from << "' not found" << std::endl;
  }
  return found;
}

bool
RunCase(const std::string & name)
{
  if (name == "meta_compressed_TRUE")
  {
    ccatest::WriteShortVolume("v.mha", true);
    std::string bytes = Slurp(Path("v.mha"));
    return Patch(bytes, "CompressedData = True", "CompressedData = TRUE") && (Save(Path("v.mha"), bytes), true) &&
           Expect(Run(ccatest::OnCpu({ Path("v.mha") }), "m"), 0, "");
  }
  if (name == "nifti_bitpix")
  {
    ccatest::WriteShortVolume("v.nii", false);
    std::string        bytes = Slurp(Path("v.nii"));
    const std::int16_t bitpix = 32; // the short data's datatype (4) says 16 bits
    std::memcpy(&bytes[72], &bitpix, sizeof(bitpix));
    Save(Path("v.nii"), bytes);
    return Expect(Run(ccatest::OnCpu({ Path("v.nii") }), "n"), 0, "");
  }
  if (name == "analyze_img_input")
  {
    ccatest::WriteShortVolume("v.hdr", false);
    const std::string bytes = Slurp(Path("v.img"));
    Save(Path("v.img"), bytes.substr(0, bytes.size() / 2));
    return Expect(Run(ccatest::OnCpu({ Path("v.img") }), "a"), 2, "v.img is truncated or damaged");
  }
  if (name == "dicom_other_sop")
  {
    const auto files = ccatest::WriteDicomSeries(ShortVolume({ { 32, 28, 6 } }), Path("series"));
    // the slices' SOP class UID (a storage class: 1.2.840.10008.5.1.4.1.1.*), as written in the file
    std::string       bytes = Slurp(files.front());
    const std::string root = "1.2.840.10008.5.1.4.1.1.";
    const auto        at = bytes.find(root);
    if (at == std::string::npos)
    {
      std::cerr << "no SOP class UID in " << files.front() << std::endl;
      return false;
    }
    const std::string sopClass = bytes.substr(at, bytes.find_first_not_of("0123456789.", at) - at);
    std::string       other = sopClass;
    other.back() = other.back() == '9' ? '8' : '9'; // another SOP class, of the same length
    if (!Patch(bytes, sopClass, other))
    {
      return false;
    }
    Save(Path("series/other.dcm"), bytes.substr(0, bytes.size() / 3)); // no series takes it
    const Outcome o = Run(ccatest::OnCpu({ Path("series") }), "d");
    return Expect(o, 0, "") && o.out.find("DICOM series of 6 files") != std::string::npos;
  }
  if (name == "outputs_clash")
  {
    ccatest::WriteShortVolume("v.nrrd", true);
    return Expect(Run(ccatest::OnCpu({ Path("v.nrrd"), "--output", Path("r.mhd"), "--csv", Path("r.zraw") }), "c"),
                  1,
                  "would both write") &&
           !itksys::SystemTools::FileExists(Path("r.mhd")) && !itksys::SystemTools::FileExists(Path("r.zraw"));
  }
  if (name == "symlink_output")
  {
    ccatest::WriteShortVolume("v.nrrd", true);
    itksys::SystemTools::MakeDirectory(Path("real"));
    Save(Path("real/target.csv"), "old\n");
    std::remove(Path("link.csv").c_str());
    if (!itksys::SystemTools::CreateSymlink(Path("real/target.csv"), Path("link.csv")))
    {
      std::cerr << "cannot make a symbolic link" << std::endl;
      return false;
    }
    return Expect(Run(ccatest::OnCpu({ Path("v.nrrd"), "--csv", Path("link.csv") }), "s"), 0, "") &&
           itksys::SystemTools::FileIsSymlink(Path("link.csv")) &&
           Slurp(Path("real/target.csv")).rfind("Label,NumberOfPixels,", 0) == 0;
  }
  if (name == "overwrite_nrrd_data")
  {
    ccatest::WriteShortVolume("v.nhdr", true);
    const std::string data = itksys::SystemTools::FileExists(Path("v.raw.gz")) ? "v.raw.gz" : "v.raw";
    const std::string before = Slurp(Path(data));
    return Expect(Run(ccatest::OnCpu({ Path("v.nhdr"), "--csv", Path(data) }), "o"), 1, "would overwrite") &&
           Slurp(Path(data)) == before;
  }
  std::cerr << "unknown case " << name << std::endl;
  return false;
}

} // namespace

int
itkCudaConnectedComponentAnalysisToolInputEdgeTest(int argc, char * argv[])
{
  return ccatest::RunToolTest(argc, argv, "CCAToolInputEdge_", RunCase);
}
