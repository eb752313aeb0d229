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
// How the tool `cca` reads its images: the input file whole or one case of a file of cases, the --mask as 0 / 1 and
// the --intensity image, with the foreground range in the input's pixel type and the comparison of two images'
// grids; templates over pixel type and dimension, kept apart from the pipeline
// (CudaConnectedComponentAnalysisToolRun.cxx) that uses them. Internal to the tool.
// --intensity's feature image is read as double whatever its file's type (exact for float and every integer up to
// 2^53): the filter dispatches its pixel type at run time, and one type is enough.
#ifndef CudaConnectedComponentAnalysisToolRead_h
#define CudaConnectedComponentAnalysisToolRead_h

#include "CudaConnectedComponentAnalysisTool.h"

#include "itkBinaryThresholdImageFilter.h"
#include "itkExtractImageFilter.h"
#include "itkImage.h"
#include "itkImageBase.h"
#include "itkImageFileReader.h"
#include "itkMatrix.h"
#include "itkMultiThreaderBase.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

namespace cca_tool
{

/** The thresholds of the foreground rule in the pixel type: the smallest value >= --lower and the largest
 * <= --upper that the type holds (missing bounds: the type's extremes). False when no value of the type
 * lies in between: the selection is empty whatever the pixels are. */
template <typename TPixel>
bool
SelectionRange(const Options & options, TPixel & lower, TPixel & upper)
{
  using Limits = std::numeric_limits<TPixel>;
  if constexpr (std::is_integral<TPixel>::value)
  {
    const double lo = options.hasLower ? std::ceil(options.lower) : -std::numeric_limits<double>::infinity();
    const double hi = options.hasUpper ? std::floor(options.upper) : std::numeric_limits<double>::infinity();
    const double typeLowest = static_cast<double>(Limits::lowest()); // exact: 0 or -2^(bits-1)
    const double typeMax = static_cast<double>(Limits::max());       // rounded up to 2^bits for 64 bits
    const bool   maxExact = Limits::digits <= std::numeric_limits<double>::digits;
    if ((maxExact ? lo > typeMax : lo >= typeMax) || hi < typeLowest || lo > hi)
    {
      return false;
    }
    lower = lo <= typeLowest ? Limits::lowest() : static_cast<TPixel>(lo);
    upper = hi >= typeMax ? Limits::max() : static_cast<TPixel>(hi);
  }
  else
  {
    const double maxValue = static_cast<double>(Limits::max());
    lower = -Limits::infinity();
    upper = Limits::infinity();
    if (options.hasLower && options.lower > -maxValue)
    {
      lower = options.lower > maxValue ? Limits::infinity() : static_cast<TPixel>(options.lower);
      if (static_cast<double>(lower) < options.lower) // rounded down: the next value up is the first inside
      {
        lower = std::nextafter(lower, Limits::infinity());
      }
    }
    if (options.hasUpper && options.upper < maxValue)
    {
      upper = options.upper < -maxValue ? -Limits::infinity() : static_cast<TPixel>(options.upper);
      if (static_cast<double>(upper) > options.upper)
      {
        upper = std::nextafter(upper, -Limits::infinity());
      }
    }
    if (lower > upper)
    {
      return false;
    }
  }
  return true;
}

/** The mask as 0 / 1: read as double so that any non-zero value of any pixel type stays non-zero. */
template <unsigned int D>
typename itk::Image<unsigned char, D>::Pointer
ReadMask(const std::string & fileName, ProgressBar & bar)
{
  using RealImageType = itk::Image<double, D>;
  using MaskImageType = itk::Image<unsigned char, D>;
  auto reader = itk::ImageFileReader<RealImageType>::New();
  reader->SetFileName(fileName);
  auto binary = itk::BinaryThresholdImageFilter<RealImageType, MaskImageType>::New();
  binary->SetInput(reader->GetOutput());
  binary->SetLowerThreshold(0.0);
  binary->SetUpperThreshold(0.0);
  binary->SetInsideValue(0);
  binary->SetOutsideValue(1);
  bar.Start("mask");
  bar.Watch(reader, 0.0, 0.8);
  bar.Watch(binary, 0.8, 1.0);
  try
  {
    binary->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw ToolError(ExitCannotRead, "cannot read the mask " + fileName + ": " + e.GetDescription());
  }
  bar.Finish();
  typename MaskImageType::Pointer mask = binary->GetOutput();
  mask->DisconnectPipeline();
  return mask;
}

/** The --intensity image, read as double (ProbeIntensity() has checked that it is scalar and of dimension D). */
template <unsigned int D>
typename itk::Image<double, D>::Pointer
ReadIntensity(const std::string & fileName, ProgressBar & bar)
{
  using RealImageType = itk::Image<double, D>;
  auto reader = itk::ImageFileReader<RealImageType>::New();
  reader->SetFileName(fileName);
  bar.Start("intensity");
  bar.Watch(reader, 0.0, 1.0);
  try
  {
    reader->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    throw ToolError(ExitCannotRead, "cannot read the intensity image " + fileName + ": " + e.GetDescription());
  }
  bar.Finish();
  typename RealImageType::Pointer image = reader->GetOutput();
  image->DisconnectPipeline();
  return image;
}

/** What differs between the grids of `a` and `b` ("" where nothing does): the size, else the origin, spacing or
 * direction beyond ImageToImageFilter's tolerances (the coordinates' relative to b's first spacing), as its
 * VerifyInputInformation() compares them; each said as "a's value, b's value". */
template <unsigned int D>
std::string
SpaceDifference(const itk::ImageBase<D> * a, const itk::ImageBase<D> * b, double coordinateTolerance,
                double directionTolerance)
{
  std::ostringstream said;
  const auto         sizeA = a->GetLargestPossibleRegion().GetSize();
  const auto         sizeB = b->GetLargestPossibleRegion().GetSize();
  const double       tolerance = coordinateTolerance * std::abs(b->GetSpacing()[0]);
  if (sizeA != sizeB)
  {
    said << "size " << sizeA << " against " << sizeB;
  }
  else if (!a->GetOrigin().GetVnlVector().is_equal(b->GetOrigin().GetVnlVector(), tolerance))
  {
    said << "origin " << a->GetOrigin() << " against " << b->GetOrigin();
  }
  else if (!a->GetSpacing().GetVnlVector().is_equal(b->GetSpacing().GetVnlVector(), tolerance))
  {
    said << "spacing " << a->GetSpacing() << " against " << b->GetSpacing();
  }
  else if (!a->GetDirection().GetVnlMatrix().is_equal(b->GetDirection().GetVnlMatrix(), directionTolerance))
  {
    // row by row on one line (the matrices' own printing spans lines)
    const auto rows = [](const itk::Matrix<double, D, D> & m) {
      std::ostringstream text;
      for (unsigned int r = 0; r < D; ++r)
      {
        for (unsigned int c = 0; c < D; ++c)
        {
          text << (r + c == 0 ? "[" : c == 0 ? "; " : ", ") << m(r, c);
        }
      }
      text << ']';
      return text.str();
    };
    said << "direction " << rows(a->GetDirection()) << " against " << rows(b->GetDirection());
  }
  return said.str();
}

template <unsigned int D>
bool
SameSpace(const itk::ImageBase<D> * a, const itk::ImageBase<D> * b, double coordinateTolerance,
          double directionTolerance)
{
  return SpaceDifference(a, b, coordinateTolerance, directionTolerance).empty();
}

/** An image file read whole, the reader's progress on `bar`, detached from the reader. */
template <typename TImage>
typename TImage::Pointer
ReadImageFile(const std::string & path, ProgressBar & bar)
{
  auto reader = itk::ImageFileReader<TImage>::New();
  reader->SetFileName(path);
  bar.Watch(reader, 0.0, 1.0);
  reader->Update();
  typename TImage::Pointer image = reader->GetOutput();
  image->DisconnectPipeline();
  return image;
}

/** An image file whose pixels `into` decompresses straight into the image's buffer (InflatingCheck::into): the
 * header read by ITK (geometry and dictionary as ITK's reader gives them), the buffer allocated here and filled
 * there; `threads` says by how many threads. nullptr where ITK's reader would give other pixels (another type,
 * several components) or the stream did not yield them whole: the caller then reads the file the usual way. */
template <typename TImage>
typename TImage::Pointer
ReadInflatedImage(const std::string & path, const std::function<unsigned int(void *, std::uint64_t)> & into,
                  unsigned int & threads)
{
  auto reader = itk::ImageFileReader<TImage>::New();
  reader->SetFileName(path);
  reader->UpdateOutputInformation();
  const itk::ImageIOBase * io = reader->GetImageIO();
  using PixelType = typename TImage::PixelType;
  const auto & information = reader->GetOutput();
  if (io == nullptr || io->GetNumberOfComponents() != 1 ||
      io->GetComponentType() != itk::ImageIOBase::MapPixelType<PixelType>::CType)
  {
    return nullptr;
  }
  auto image = TImage::New();
  image->CopyInformation(information);
  image->SetRegions(information->GetLargestPossibleRegion());
  image->SetMetaDataDictionary(information->GetMetaDataDictionary());
  image->Allocate();
  const std::uint64_t bytes =
    std::uint64_t{ image->GetLargestPossibleRegion().GetNumberOfPixels() } * sizeof(PixelType);
  threads = into(image->GetBufferPointer(), bytes);
  if (threads == 0)
  {
    return nullptr;
  }
  if constexpr (std::is_floating_point<PixelType>::value)
  {
    // niftilib's read (nifti_read_buffer) makes every NaN and infinity 0: so must this one (in blocks of pixels, a
    // call per block).
    PixelType * const   pixels = image->GetBufferPointer();
    const std::uint64_t count = image->GetLargestPossibleRegion().GetNumberOfPixels();
    constexpr std::uint64_t block = std::uint64_t{ 1 } << 16;
    itk::MultiThreaderBase::New()->ParallelizeArray(
      0,
      (count + block - 1) / block,
      [pixels, count](itk::SizeValueType b) {
        for (std::uint64_t i = b * block; i < std::min(count, (b + 1) * block); ++i)
        {
          if (!std::isfinite(pixels[i]))
          {
            pixels[i] = 0;
          }
        }
      },
      nullptr);
  }
  return image;
}

/** Case `input.stackCase` of a file of cases (--batch FILE): its slice or volume along the file's last axis, with
 * the file's geometry in the remaining axes. The file is read by its first case and kept for the others (a
 * batch labels its cases in order, in one process), so it is read once. */
template <typename TPixel, unsigned int D>
typename itk::Image<TPixel, D>::Pointer
ReadCaseOfFile(const InputDescription & input, ProgressBar & bar)
{
  using FileImageType = itk::Image<TPixel, D + 1>;
  static typename FileImageType::Pointer file;
  static std::string                     filePath;
  if (!file || filePath != input.path || input.stackCase == 0)
  {
    file = nullptr;
    file = ReadImageFile<FileImageType>(input.path, bar);
    filePath = input.path;
  }
  auto region = file->GetLargestPossibleRegion();
  region.SetIndex(D, region.GetIndex(D) + input.stackCase);
  region.SetSize(D, 0); // collapsed: a D-dimensional case
  auto extract = itk::ExtractImageFilter<FileImageType, itk::Image<TPixel, D>>::New();
  extract->SetInput(file);
  extract->SetExtractionRegion(region);
  extract->SetDirectionCollapseToSubmatrix();
  extract->Update();
  typename itk::Image<TPixel, D>::Pointer image = extract->GetOutput();
  image->DisconnectPipeline();
  return image;
}

} // namespace cca_tool

#endif
