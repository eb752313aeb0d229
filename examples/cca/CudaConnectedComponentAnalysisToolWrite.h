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
// How the tool `cca` writes its label image: the names of the label types (the input's own integer type for
// --class-values, and whether a class value fits a type) and the labels cast to the type asked for and written,
// compressed (NIfTI by the tool's own gzip writer, on every thread), with the writer's progress on the bar; kept apart
// from the pipeline (CudaConnectedComponentAnalysisToolRun.cxx) that uses them. Internal to the tool.
#ifndef CudaConnectedComponentAnalysisToolWrite_h
#define CudaConnectedComponentAnalysisToolWrite_h

#include "CudaConnectedComponentAnalysisTool.h"

#include "itkCastImageFilter.h"
#include "itkCommonEnums.h"
#include "itkImage.h"
#include "itkImageFileWriter.h"
#include "itksys/SystemTools.hxx"

#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

namespace cca_tool
{

/** The label image's type under --class-values by default: the input file's own integer type, named as
 * --label-type names types, so that the cleaned segmentation has the pixel type of the one it cleans. */
inline std::string
ClassTypeName(itk::IOComponentEnum type)
{
  switch (type)
  {
    case itk::IOComponentEnum::UCHAR:
      return "uint8";
    case itk::IOComponentEnum::CHAR:
      return "int8";
    case itk::IOComponentEnum::USHORT:
      return "uint16";
    case itk::IOComponentEnum::SHORT:
      return "int16";
    case itk::IOComponentEnum::UINT:
      return "uint32";
    case itk::IOComponentEnum::INT:
      return "int32";
    case itk::IOComponentEnum::ULONG: // 32 or 64 bits by platform
      return sizeof(unsigned long) == 4 ? "uint32" : "uint64";
    case itk::IOComponentEnum::LONG:
      return sizeof(long) == 4 ? "int32" : "int64";
    case itk::IOComponentEnum::ULONGLONG:
      return "uint64";
    default:
      return "int64";
  }
}

/** Whether `value` is one of the integer type `typeName`'s values (uint8 ... int64). */
inline bool
FitsType(std::int64_t value, const std::string & typeName)
{
  const bool         isSigned = typeName[0] == 'i';
  const unsigned int bits = static_cast<unsigned int>(std::stoul(typeName.substr(isSigned ? 3 : 4)));
  if (bits == 64)
  {
    return isSigned || value >= 0;
  }
  const std::int64_t lowest = isSigned ? -(std::int64_t{ 1 } << (bits - 1)) : 0;
  const std::int64_t highest = isSigned ? (std::int64_t{ 1 } << (bits - 1)) - 1 : (std::int64_t{ 1 } << bits) - 1;
  return value >= lowest && value <= highest;
}

/** A .nii.gz of `image` deflated from its buffer by GzipBytes(), behind the header ITK writes (into `staged`, then
 * removed) for one pixel of the same geometry. False, nothing written, where that header cannot be made the image's
 * (NiftiHeaderForSize()): the caller lets ITK write the file. */
template <typename TImage>
bool
WriteNiftiGzipFromBuffer(const TImage * image, const std::string & fileName, const std::string & staged)
{
  const auto & region = image->GetLargestPossibleRegion();
  if (image->GetBufferedRegion() != region)
  {
    return false;
  }
  auto                                  pixel = TImage::New();
  typename TImage::RegionType::SizeType one;
  one.Fill(1);
  pixel->CopyInformation(image);
  pixel->SetRegions(typename TImage::RegionType(region.GetIndex(), one)); // the same origin in the file
  pixel->Allocate(true);
  auto writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(pixel);
  writer->SetFileName(staged);
  writer->SetUseCompression(false);
  writer->Update();
  std::vector<std::uint64_t> size(region.GetSize().begin(), region.GetSize().end());
  std::vector<unsigned char> header;
  const bool                 made = NiftiHeaderForSize(staged, size, sizeof(typename TImage::PixelType), header);
  std::remove(staged.c_str());
  if (made)
  {
    GzipBytes(header,
              reinterpret_cast<const unsigned char *>(image->GetBufferPointer()),
              std::uint64_t{ region.GetNumberOfPixels() } * sizeof(typename TImage::PixelType),
              fileName,
              LabelCompressionLevel);
  }
  return made;
}

/** Casts the labels to TOut (a separate update, so that the bar moves forward) and writes them. */
template <typename TOut, typename TLabelImage>
void
WriteLabelImage(const TLabelImage * labels, const std::string & fileName, const std::string & destination,
                const std::string & labelType, ProgressBar & bar)
{
  using OutputImageType = itk::Image<TOut, TLabelImage::ImageDimension>;
  bar.Start("writing");
  typename OutputImageType::ConstPointer image;
  if constexpr (std::is_same<OutputImageType, TLabelImage>::value)
  {
    image = labels;
  }
  else
  {
    auto cast = itk::CastImageFilter<TLabelImage, OutputImageType>::New();
    cast->SetInput(labels);
    bar.Watch(cast, 0.0, 0.3);
    cast->Update();
    image = cast->GetOutput();
  }
  // A compressed NIfTI file: deflated on every thread by the tool's own writer, from the image's buffer where it
  // can make the header, else from the uncompressed file ITK writes beside.
  const bool        ownGzip = itksys::SystemTools::StringEndsWith(fileName, ".nii.gz");
  const std::string written = ownGzip ? fileName.substr(0, fileName.size() - 3) : fileName;
  try
  {
    if (ownGzip && WriteNiftiGzipFromBuffer(image.GetPointer(), fileName, written))
    {
      bar.Finish();
      return;
    }
    auto writer = itk::ImageFileWriter<OutputImageType>::New();
    writer->SetInput(image);
    writer->SetFileName(written);
    writer->SetUseCompression(!ownGzip);
    bar.Watch(writer, 0.3, ownGzip ? 0.6 : 1.0);
    writer->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    // An IO that refuses the pixel type (PNG and uint32, say) may have created the staged file already:
    // it is removed with its staging folder, and the destination was never touched.
    throw ToolError(ExitFailure,
                    "cannot write " + destination + " with " + labelType + " labels: " + e.GetDescription());
  }
  if (ownGzip)
  {
    GzipFile(written, fileName, LabelCompressionLevel);
    std::remove(written.c_str());
  }
  bar.Finish();
}

/** Writes `labels` as the integer type `labelType` names (uint8 ... uint64; int8 ... int64 for class values,
 * which come in a signed label image). */
template <typename TLabelImage>
void
WriteLabelImageAs(const TLabelImage * labels, const std::string & fileName, const std::string & destination,
                  const std::string & labelType, ProgressBar & bar)
{
  if (labelType == "uint8")
  {
    WriteLabelImage<std::uint8_t>(labels, fileName, destination, labelType, bar);
  }
  else if (labelType == "uint16")
  {
    WriteLabelImage<std::uint16_t>(labels, fileName, destination, labelType, bar);
  }
  else if (labelType == "uint32")
  {
    WriteLabelImage<std::uint32_t>(labels, fileName, destination, labelType, bar);
  }
  else if (labelType == "uint64")
  {
    WriteLabelImage<std::uint64_t>(labels, fileName, destination, labelType, bar);
  }
  else if constexpr (std::is_signed<typename TLabelImage::PixelType>::value)
  {
    if (labelType == "int8")
    {
      WriteLabelImage<std::int8_t>(labels, fileName, destination, labelType, bar);
    }
    else if (labelType == "int16")
    {
      WriteLabelImage<std::int16_t>(labels, fileName, destination, labelType, bar);
    }
    else if (labelType == "int32")
    {
      WriteLabelImage<std::int32_t>(labels, fileName, destination, labelType, bar);
    }
    else
    {
      WriteLabelImage<std::int64_t>(labels, fileName, destination, labelType, bar);
    }
  }
  else
  {
    throw ToolError(ExitFailure, "no " + labelType + " label image from unsigned labels"); // not reached
  }
}

} // namespace cca_tool

#endif
