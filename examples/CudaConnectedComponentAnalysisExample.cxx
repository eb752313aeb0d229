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
// Labels the components of an image and prints their count, bounding box and centroid, and shape
// attributes from the filter's LabelMap (physical size, perimeter, roundness, elongation).
//
// Usage: CudaConnectedComponentAnalysisExample input [threshold] [--fully] [--backend auto|cuda|cpu]
// Pixels >= threshold are objects (default 1: any positive pixel); the bundled sample is the CT
// slice test/Data/Input/CTSlice.mha in Hounsfield units, where 250 keeps bone.
#include "itkBinaryThresholdImageFilter.h"
#include "itkCudaConnectedComponentAnalysisImageFilter.h"
#include "itkImageFileReader.h"

#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <string>

int
main(int argc, char * argv[])
{
  if (argc < 2)
  {
    std::cerr << "Usage: " << argv[0] << " input [threshold] [--fully] [--backend auto|cuda|cpu]" << std::endl;
    return EXIT_FAILURE;
  }
  using InputImageType = itk::Image<float, 2>;
  using BinaryImageType = itk::Image<unsigned char, 2>;
  using LabelImageType = itk::Image<unsigned int, 2>;
  using FilterType = itk::CudaConnectedComponentAnalysisImageFilter<BinaryImageType, LabelImageType>;

  float                   threshold = 1.0f;
  bool                    fullyConnected = false;
  FilterType::BackendEnum backend = FilterType::BackendEnum::Automatic;
  for (int i = 2; i < argc; ++i)
  {
    const std::string arg = argv[i];
    if (arg == "--fully")
    {
      fullyConnected = true;
    }
    else if (arg == "--backend" && i + 1 < argc)
    {
      const std::string name = argv[++i];
      backend = name == "cuda"  ? FilterType::BackendEnum::CUDA
                : name == "cpu" ? FilterType::BackendEnum::CPU
                                : FilterType::BackendEnum::Automatic;
    }
    else
    {
      threshold = std::stof(arg);
    }
  }

  try
  {
    InputImageType::Pointer input = itk::ReadImage<InputImageType>(argv[1]);
    auto                    binary = itk::BinaryThresholdImageFilter<InputImageType, BinaryImageType>::New();
    binary->SetInput(input);
    binary->SetLowerThreshold(threshold);
    binary->SetInsideValue(1);
    binary->SetOutsideValue(0);

    auto filter = FilterType::New();
    filter->SetInput(binary->GetOutput());
    filter->SetFullyConnected(fullyConnected);
    filter->SetBackend(backend);
    filter->Update();

    std::cout << "Image: " << argv[1] << " (" << input->GetLargestPossibleRegion().GetSize()
              << "), pixels >= " << threshold << ", " << (fullyConnected ? "8" : "4") << "-connectivity" << std::endl;
    std::cout << "CUDA engine compiled: " << (FilterType::IsCudaEngineCompiled() ? "yes" : "no")
              << "; engine used: " << filter->GetBackendDescription() << std::endl;
    std::cout << "Number of components: " << filter->GetObjectCount() << std::endl;
    std::cout << std::setw(6) << "label" << std::setw(10) << "pixels" << std::setw(18) << "bbox index" << std::setw(14)
              << "bbox size" << std::setw(24) << "centroid (index)" << std::setw(28) << "centroid (physical, mm)"
              << std::setw(14) << "size (mm2)" << std::setw(16) << "perimeter (mm)" << std::setw(11) << "roundness"
              << std::setw(11) << "elongation" << std::endl;
    const auto * labelMap = filter->GetLabelMap();
    for (const auto & c : filter->GetComponentFeatures())
    {
      itk::Point<double, 2> physical;
      input->TransformContinuousIndexToPhysicalPoint(c.Centroid, physical);
      std::ostringstream box, size, centroid, point;
      box << c.BoundingBox.GetIndex()[0] << ',' << c.BoundingBox.GetIndex()[1];
      size << c.BoundingBox.GetSize()[0] << 'x' << c.BoundingBox.GetSize()[1];
      centroid << std::fixed << std::setprecision(3) << c.Centroid[0] << ',' << c.Centroid[1];
      point << std::fixed << std::setprecision(3) << physical[0] << ',' << physical[1];
      const auto * object = labelMap->GetLabelObject(c.Label); // the same component in the LabelMap
      std::cout << std::setw(6) << c.Label << std::setw(10) << c.NumberOfPixels << std::setw(18) << box.str()
                << std::setw(14) << size.str() << std::setw(24) << centroid.str() << std::setw(28) << point.str()
                << std::fixed << std::setprecision(3) << std::setw(14) << object->GetPhysicalSize() << std::setw(16)
                << object->GetPerimeter() << std::setw(11) << object->GetRoundness() << std::setw(11)
                << object->GetElongation() << std::defaultfloat << std::endl;
    }
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << "Error: " << e.GetDescription() << std::endl;
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
