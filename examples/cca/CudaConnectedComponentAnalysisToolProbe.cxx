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
// The input and the mask probed before any pixel is read: dimension and pixel type from the file's header
// (they pick the typed pipeline of CudaConnectedComponentAnalysisToolRun.cxx), the data checked whole
// (CudaConnectedComponentAnalysisToolInputCheck.cxx, ...DicomCheck.cxx), and the files they are read from
// listed, so that no output replaces them.
#include "CudaConnectedComponentAnalysisTool.h"

#include "itkGDCMImageIO.h"
#include "itkGDCMSeriesFileNames.h"
#include "itkImageFileReader.h" // registers the IO factories (ITK_IO_FACTORY_REGISTER_MANAGER)
#include "itkImageIOFactory.h"
#include "itksys/SystemTools.hxx"

#include <algorithm>
#include <iostream>

namespace cca_tool
{

/** Reads the header of the input (the first file of a DICOM series), checks that cca can label it and
 * that its data are whole (every slice of a series). */
InputDescription
ProbeInput(const std::string & path, const Options & options, bool stackOfCases)
{
  InputDescription input;
  input.path = path;
  if (!itksys::SystemTools::FileExists(path))
  {
    throw ToolError(ExitCannotRead, "the input " + path + " does not exist");
  }
  itk::ImageIOBase::Pointer io;
  try
  {
    if (itksys::SystemTools::FileIsDirectory(path))
    {
      auto names = itk::GDCMSeriesFileNames::New();
      // its "No Series were found" warning would say less than our message below
      const bool warnings = itk::Object::GetGlobalWarningDisplay();
      itk::Object::SetGlobalWarningDisplay(false);
      names->SetDirectory(path);
      const auto uids = names->GetSeriesUIDs();
      itk::Object::SetGlobalWarningDisplay(warnings);
      if (uids.empty())
      {
        throw ToolError(ExitCannotRead, "the directory " + path + " holds no DICOM series");
      }
      if (uids.size() > 1)
      {
        std::cerr << "cca: " << path << " holds " << uids.size() << " DICOM series; reading the first, " << uids.front()
                  << std::endl;
      }
      input.dicomSeries = true;
      input.fileNames = names->GetFileNames(uids.front());
      // every series' files: none may be overwritten, and a DICOM file of none is looked at (CheckDicomSeries)
      for (const auto & uid : uids)
      {
        const auto files = names->GetFileNames(uid);
        input.files.insert(input.files.end(), files.begin(), files.end());
      }
      io = itk::GDCMImageIO::New();
      io->SetFileName(input.fileNames.front());
    }
    else
    {
      io = itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::IOFileModeEnum::ReadMode);
      if (!io)
      {
        throw ToolError(ExitCannotRead,
                        "Could not create IO object for reading file " + path +
                          ": not an image format ITK can read (or a damaged file)");
      }
      io->SetFileName(path);
    }
    io->ReadImageInformation();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw ToolError(ExitCannotRead, "cannot read " + path + ": " + e.GetDescription());
  }
  if (input.dicomSeries)
  {
    CheckDicomSeries(input, options.allowIrregularSlices);
  }
  else
  {
    input.files = CheckImageFileComplete(path, *io, &input.verifyData, stackOfCases ? nullptr : &input.inflateData);
  }

  // A series is a volume: its slices are stacked along the third axis.
  input.dimension = input.dicomSeries ? 3 : io->GetNumberOfDimensions();
  input.componentType = io->GetComponentType();
  input.componentName = itk::ImageIOBase::GetComponentTypeAsString(input.componentType);
  if (io->GetPixelType() != itk::IOPixelEnum::SCALAR || io->GetNumberOfComponents() != 1)
  {
    throw ToolError(ExitUnsupported,
                    path + " has " + itk::ImageIOBase::GetPixelTypeAsString(io->GetPixelType()) + " pixels of " +
                      std::to_string(io->GetNumberOfComponents()) + " " + input.componentName +
                      " components; cca labels scalar (grey-level) images only");
  }
  if (stackOfCases)
  {
    if (input.dicomSeries || (input.dimension != 3 && input.dimension != 4))
    {
      throw ToolError(ExitUnsupported,
                      "--batch " + path + " is a " + std::to_string(input.dimension) +
                        "D image; a file of cases is 3D (2D cases along its last axis) or 4D (3D cases)");
    }
    input.stackCases = io->GetDimensions(input.dimension - 1);
    input.dimension -= 1;
  }
  if (input.dimension != 2 && input.dimension != 3)
  {
    throw ToolError(ExitUnsupported,
                    path + " is a " + std::to_string(input.dimension) + "D image; cca labels 2D and 3D images only");
  }
  input.numberOfPixels = input.dicomSeries ? input.fileNames.size() : 1;
  for (unsigned int d = 0; d < std::min(input.dimension, io->GetNumberOfDimensions()); ++d)
  {
    input.numberOfPixels *= io->GetDimensions(d);
  }
  return input;
}

/** The mask's files, its data checked whole as the input's. */
std::vector<std::string>
ProbeMask(const std::string & path)
{
  if (!itksys::SystemTools::FileExists(path))
  {
    throw ToolError(ExitCannotRead, "the mask " + path + " does not exist");
  }
  const auto io = itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::IOFileModeEnum::ReadMode);
  if (!io)
  {
    throw ToolError(ExitCannotRead,
                    "Could not create IO object for reading the mask " + path +
                      ": not an image format ITK can read (or a damaged file)");
  }
  try
  {
    io->SetFileName(path);
    io->ReadImageInformation();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw ToolError(ExitCannotRead, "cannot read the mask " + path + ": " + e.GetDescription());
  }
  return CheckImageFileComplete(path, *io);
}

/** The --intensity image's files, checked as the mask's; a non-scalar image would be read as its luminance and a
 * file of another dimension cut or padded by ITK's reader without a word: both refused here, before any read. */
std::vector<std::string>
ProbeIntensity(const std::string & path, unsigned int dimension)
{
  if (!itksys::SystemTools::FileExists(path) || itksys::SystemTools::FileIsDirectory(path))
  {
    throw ToolError(ExitCannotRead,
                    "the intensity image " + path + " does not exist (--intensity takes an image file)");
  }
  const auto io = itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::IOFileModeEnum::ReadMode);
  if (!io)
  {
    throw ToolError(ExitCannotRead,
                    "Could not create IO object for reading the intensity image " + path +
                      ": not an image format ITK can read (or a damaged file)");
  }
  try
  {
    io->SetFileName(path);
    io->ReadImageInformation();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw ToolError(ExitCannotRead, "cannot read the intensity image " + path + ": " + e.GetDescription());
  }
  if (io->GetPixelType() != itk::IOPixelEnum::SCALAR || io->GetNumberOfComponents() != 1)
  {
    throw ToolError(ExitUnsupported,
                    "--intensity " + path + " has " + itk::ImageIOBase::GetPixelTypeAsString(io->GetPixelType()) +
                      " pixels of " + std::to_string(io->GetNumberOfComponents()) +
                      " components; the intensity image needs a scalar pixel type");
  }
  if (io->GetNumberOfDimensions() != dimension)
  {
    throw ToolError(ExitUnsupported,
                    "--intensity " + path + " is a " + std::to_string(io->GetNumberOfDimensions()) +
                      "D image and the input " + std::to_string(dimension) +
                      "D: the intensity image needs the input's size and geometry");
  }
  return CheckImageFileComplete(path, *io);
}

/** ITK's writers for 2D-only formats (PNG, JPEG, BMP) write a 3D image's first slice without a word, and
 * their SupportsDimension() cannot tell (ITK's NIfTI and TIFF IOs do not override it either): refuse those
 * by name for a 3D input, before the analysis. */
void
CheckOutputFormatHoldsDimension(const std::string & output, unsigned int dimension)
{
  if (output.empty() || dimension < 3)
  {
    return;
  }
  const auto        io = itk::ImageIOFactory::CreateImageIO(output.c_str(), itk::IOFileModeEnum::WriteMode);
  const std::string name = io ? io->GetNameOfClass() : "";
  if (name == "PNGImageIO" || name == "JPEGImageIO" || name == "BMPImageIO")
  {
    throw ToolError(ExitUsage,
                    "--output " + output + ": " + name.substr(0, name.size() - 7) +
                      " files hold 2D images only, and the input is 3D (use .nii.gz, .nrrd, .mha or .tif)");
  }
}

} // namespace cca_tool
