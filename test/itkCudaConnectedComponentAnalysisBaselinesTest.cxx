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
// The regression baselines' provenance, run as a test: the synthetic input and the baselines of
// test/Baseline/ are ITK's own itk::ConnectedComponentImageFilter answer (test/Baseline/README.md). This
// test writes them again with the ITK it is built against, and CTest's --compare holds the result against
// the committed files: a baseline that is not ITK's answer (or an ITK whose answer changed) fails here.
// Arguments: CTSlice.mha lowerThreshold Synthetic.png(out) outputFolder
// To regenerate the committed files: run it with test/Data/Input/Synthetic.png and test/Baseline as outputs.
#include "itkBinaryThresholdImageFilter.h"
#include "itkConnectedComponentImageFilter.h"
#include "itkImage.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkNumericTraits.h"
#include "itksys/SystemTools.hxx"

#include <cstdlib>
#include <iostream>
#include <string>

namespace
{

constexpr unsigned int Dimension = 2;

using CTPixelType = short;
using BinaryPixelType = unsigned char;
using LabelPixelType = unsigned short;

using CTImageType = itk::Image<CTPixelType, Dimension>;
using BinaryImageType = itk::Image<BinaryPixelType, Dimension>;
using LabelImageType = itk::Image<LabelPixelType, Dimension>;

/** Synthetic image size: odd in both directions on purpose. */
constexpr itk::SizeValueType SyntheticWidth = 157;
constexpr itk::SizeValueType SyntheticHeight = 93;


void
SetPixel(BinaryImageType * image, itk::IndexValueType x, itk::IndexValueType y, BinaryPixelType value)
{
  const BinaryImageType::IndexType index = { { x, y } };
  if (!image->GetLargestPossibleRegion().IsInside(index))
  {
    itkGenericExceptionMacro("Synthetic drawing out of bounds: " << index);
  }
  image->SetPixel(index, value);
}


/** Fill the rectangle [x0, x1] x [y0, y1] (inclusive bounds). */
void
FillRectangle(BinaryImageType * image, itk::IndexValueType x0, itk::IndexValueType y0, itk::IndexValueType x1,
              itk::IndexValueType y1, BinaryPixelType value)
{
  for (itk::IndexValueType y = y0; y <= y1; ++y)
  {
    for (itk::IndexValueType x = x0; x <= x1; ++x)
    {
      SetPixel(image, x, y, value);
    }
  }
}


/** One-pixel-wide square spiral with a one-pixel gap between its turns,
 * walked inwards from the top-left corner (x0, y0) with an outer side of
 * length + 1 pixels. In raster order its inner turns are seen as separate
 * runs long before they meet the outer turns: they merge late. */
void
DrawSpiral(BinaryImageType * image, itk::IndexValueType x0, itk::IndexValueType y0, int length, BinaryPixelType value)
{
  const int dx[4] = { 1, 0, -1, 0 };
  const int dy[4] = { 0, 1, 0, -1 };

  itk::IndexValueType x = x0;
  itk::IndexValueType y = y0;
  SetPixel(image, x, y, value);

  // Segment lengths: n, n, n, n-2, n-2, n-4, n-4, ...
  int segment = 0;
  int segmentLength = length;
  while (segmentLength > 0)
  {
    const int direction = segment % 4;
    for (int step = 0; step < segmentLength; ++step)
    {
      x += dx[direction];
      y += dy[direction];
      SetPixel(image, x, y, value);
    }
    ++segment;
    if (segment >= 3 && (segment % 2) == 1)
    {
      segmentLength -= 2;
    }
  }
}


/** Deterministic drawing of the synthetic test input. Any non-zero value is
 * foreground; several values other than 255 are used on purpose. */
BinaryImageType::Pointer
MakeSyntheticImage()
{
  const BinaryImageType::SizeType size = { { SyntheticWidth, SyntheticHeight } };

  auto image = BinaryImageType::New();
  image->SetRegions(size);
  image->Allocate();
  image->FillBuffer(0);

  // Objects touching the image border.
  FillRectangle(image, 0, 0, 30, 1, 255);      // top-left corner bar
  SetPixel(image, SyntheticWidth - 1, 0, 1);   // top-right corner pixel
  FillRectangle(image, 156, 10, 156, 40, 7);   // one-pixel-wide, right border
  FillRectangle(image, 0, 20, 0, 40, 7);       // one-pixel-wide, left border
  FillRectangle(image, 146, 85, 156, 92, 200); // bottom-right corner block
  SetPixel(image, 0, SyntheticHeight - 1, 1);  // bottom-left corner pixel
  for (itk::IndexValueType i = 0; i < 3; ++i)  // diagonal chain to the right border
  {
    SetPixel(image, 154 + i, 44 + i, 255);
  }

  // Diagonal-only contacts: an X of single pixels (both diagonal directions,
  // one pixel shared at the crossing).
  for (itk::IndexValueType i = 0; i <= 10; ++i)
  {
    SetPixel(image, 40 + i, 5 + i, 255);
    SetPixel(image, 50 - i, 5 + i, 200);
  }

  // Diagonal-only contacts: two pairs of squares touching at one corner,
  // one pair along each diagonal direction.
  FillRectangle(image, 60, 5, 65, 10, 255);
  FillRectangle(image, 66, 11, 71, 16, 1);
  FillRectangle(image, 86, 5, 91, 10, 7);
  FillRectangle(image, 80, 11, 85, 16, 255);

  // Diagonal-only contacts: an 8x8 checkerboard with mixed values.
  for (itk::IndexValueType y = 4; y < 12; ++y)
  {
    for (itk::IndexValueType x = 100; x < 108; ++x)
    {
      if (((x + y) % 2) == 0)
      {
        SetPixel(image, x, y, (x % 4 == 0) ? 1 : 255);
      }
    }
  }

  // A U shape open at the top: its arms merge on the last rows.
  FillRectangle(image, 115, 4, 117, 20, 200);
  FillRectangle(image, 125, 4, 127, 20, 200);
  FillRectangle(image, 115, 18, 127, 20, 200);

  // A comb with one-pixel-wide teeth pointing up: eight runs per row that
  // merge only at its base.
  for (itk::IndexValueType tooth = 0; tooth < 8; ++tooth)
  {
    FillRectangle(image, 132 + 3 * tooth, 4, 132 + 3 * tooth, 16, (tooth % 3 == 0) ? 1 : 255);
  }
  FillRectangle(image, 132, 17, 153, 18, 255);

  // A spiral (one component with both connectivities).
  DrawSpiral(image, 5, 25, 40, 7);

  // A second spiral, cut at its outer bottom-right corner: the two parts touch
  // only diagonally there (two components with 4-connectivity, one with 8).
  DrawSpiral(image, 50, 25, 30, 255);
  SetPixel(image, 80, 55, 0);

  // A filled rectangle with mixed values and a hole; inside the hole an
  // island and a single pixel.
  FillRectangle(image, 90, 25, 120, 50, 255);
  FillRectangle(image, 90, 28, 120, 29, 1);
  FillRectangle(image, 90, 46, 120, 46, 7);
  FillRectangle(image, 98, 32, 112, 43, 0);
  FillRectangle(image, 103, 36, 107, 39, 1);
  SetPixel(image, 110, 41, 200);

  // A one-pixel-wide vertical line.
  FillRectangle(image, 130, 25, 130, 60, 255);

  // A one-pixel-wide horizontal line across the whole image (touches the
  // left and right borders) with a diagonal of single pixels hanging from it
  // down to the bottom border.
  FillRectangle(image, 0, 70, SyntheticWidth - 1, 70, 1);
  for (itk::IndexValueType i = 0; i <= 21; ++i)
  {
    SetPixel(image, 30 + i, 71 + i, 255);
  }

  // A two-pixel-thick staircase: 4-connected, one component either way.
  for (itk::IndexValueType i = 0; i <= 8; ++i)
  {
    SetPixel(image, 10 + i, 75 + i, 200);
    SetPixel(image, 11 + i, 75 + i, 200);
  }

  // Isolated single pixels on a grid.
  for (itk::IndexValueType j = 0; j < 4; ++j)
  {
    for (itk::IndexValueType i = 0; i < 6; ++i)
    {
      SetPixel(image, 60 + 2 * i, 76 + 2 * j, static_cast<BinaryPixelType>(1 + 50 * ((i + j) % 5)));
    }
  }

  // A one-pixel-thick diamond outline |dx| + |dy| == 8: 8-connected only.
  for (itk::IndexValueType dy = -8; dy <= 8; ++dy)
  {
    const itk::IndexValueType dx = 8 - std::abs(dy);
    SetPixel(image, 110 - dx, 80 + dy, 7);
    SetPixel(image, 110 + dx, 80 + dy, 7);
  }

  // A filled disk.
  for (itk::IndexValueType dy = -6; dy <= 6; ++dy)
  {
    for (itk::IndexValueType dx = -6; dx <= 6; ++dx)
    {
      if (dx * dx + dy * dy <= 36)
      {
        SetPixel(image, 135 + dx, 80 + dy, 200);
      }
    }
  }

  return image;
}


template <typename TInputImage>
LabelImageType::Pointer
Label(const TInputImage * input, bool fullyConnected, itk::SizeValueType & objectCount)
{
  using FilterType = itk::ConnectedComponentImageFilter<TInputImage, LabelImageType>;
  auto filter = FilterType::New();
  filter->SetInput(input);
  filter->SetFullyConnected(fullyConnected);
  filter->SetBackgroundValue(0);
  filter->Update();
  objectCount = filter->GetObjectCount();

  LabelImageType::Pointer output = filter->GetOutput();
  output->DisconnectPipeline();
  return output;
}


template <typename TImage>
void
Write(const TImage * image, const std::string & fileName)
{
  using WriterType = itk::ImageFileWriter<TImage>;
  auto writer = WriterType::New();
  writer->SetInput(image);
  writer->SetFileName(fileName);
  writer->UseCompressionOn();
  writer->Update();
}

} // namespace


int
itkCudaConnectedComponentAnalysisBaselinesTest(int argc, char * argv[])
{
  if (argc < 5)
  {
    std::cerr << "Usage: " << argv[0] << " <CTSlice.mha> <lowerThreshold> <Synthetic.png> <baselineDirectory>"
              << std::endl;
    return EXIT_FAILURE;
  }
  const std::string ctFileName = argv[1];
  const auto        lowerThreshold = static_cast<CTPixelType>(std::stoi(argv[2]));
  const std::string syntheticFileName = argv[3];
  const std::string baselineDirectory = argv[4];
  itksys::SystemTools::MakeDirectory(baselineDirectory);

  try
  {
    // CT slice: threshold, then label with both connectivities.
    using ReaderType = itk::ImageFileReader<CTImageType>;
    auto reader = ReaderType::New();
    reader->SetFileName(ctFileName);

    using ThresholdFilterType = itk::BinaryThresholdImageFilter<CTImageType, BinaryImageType>;
    auto threshold = ThresholdFilterType::New();
    threshold->SetInput(reader->GetOutput());
    threshold->SetLowerThreshold(lowerThreshold);
    threshold->SetUpperThreshold(itk::NumericTraits<CTPixelType>::max());
    threshold->SetInsideValue(1);
    threshold->SetOutsideValue(0);
    threshold->Update();

    itk::SizeValueType count4 = 0;
    itk::SizeValueType count8 = 0;
    Write(Label(threshold->GetOutput(), false, count4).GetPointer(), baselineDirectory + "/CTSliceLabels4.mha");
    Write(Label(threshold->GetOutput(), true, count8).GetPointer(), baselineDirectory + "/CTSliceLabels8.mha");
    std::cout << "CTSlice (lower threshold " << lowerThreshold << "): " << count4 << " components (4-connected), "
              << count8 << " components (8-connected)" << std::endl;

    // Synthetic image: any non-zero pixel is foreground.
    BinaryImageType::Pointer synthetic = MakeSyntheticImage();
    Write(synthetic.GetPointer(), syntheticFileName);
    Write(Label(synthetic.GetPointer(), false, count4).GetPointer(), baselineDirectory + "/SyntheticLabels4.png");
    Write(Label(synthetic.GetPointer(), true, count8).GetPointer(), baselineDirectory + "/SyntheticLabels8.png");
    std::cout << "Synthetic: " << count4 << " components (4-connected), " << count8 << " components (8-connected)"
              << std::endl;
  }
  catch (const itk::ExceptionObject & error)
  {
    std::cerr << "Error: " << error << std::endl;
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
