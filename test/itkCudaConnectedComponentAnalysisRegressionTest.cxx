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
// Regression on a real or synthetic image: threshold (pixels >= threshold are foreground), label,
// write unsigned short labels for --compare against a baseline made with ITK's own filter.
// Arguments: input threshold output fullyConnected(0|1) backend(cpu|cuda|auto)
#include "itkBinaryThresholdImageFilter.h"
#include "itkCCATestUtilities.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itksys/SystemTools.hxx"

int
itkCudaConnectedComponentAnalysisRegressionTest(int argc, char * argv[])
{
  using namespace itk;
  ccatest::Backend backend = ccatest::Backend::CPU;
  if (const int start = ccatest::StartTest(argc, argv, 6, "input threshold output fullyConnected backend", 5, backend);
      start >= 0)
  {
    return start;
  }
  using InputImageType = Image<short, 2>;
  using BinaryImageType = Image<unsigned char, 2>;
  using LabelImageType = Image<unsigned short, 2>;

  auto threshold = BinaryThresholdImageFilter<InputImageType, BinaryImageType>::New();
  threshold->SetInput(ReadImage<InputImageType>(argv[1]));
  threshold->SetLowerThreshold(static_cast<short>(std::stoi(argv[2])));
  threshold->SetUpperThreshold(NumericTraits<short>::max());
  threshold->SetInsideValue(1);
  threshold->SetOutsideValue(0);

  auto filter = CudaConnectedComponentAnalysisImageFilter<BinaryImageType, LabelImageType>::New();
  filter->SetInput(threshold->GetOutput());
  filter->SetFullyConnected(std::stoi(argv[4]) != 0);
  filter->SetBackend(backend);
  ITK_TRY_EXPECT_NO_EXCEPTION(filter->Update());
  std::cout << filter->GetObjectCount() << " objects, engine: " << filter->GetBackendDescription() << std::endl;
  if (backend != ccatest::Backend::Automatic && filter->GetBackendUsed() != backend)
  {
    std::cerr << "ran on " << filter->GetBackendUsed() << std::endl;
    return EXIT_FAILURE;
  }
  if (!ccatest::FeaturesMatchBruteForce(filter.GetPointer(), argv[1]))
  {
    return EXIT_FAILURE;
  }
  // the output folder may be missing where the build tree was copied (device bundles carry no empty folders)
  itksys::SystemTools::MakeDirectory(itksys::SystemTools::GetFilenamePath(argv[3]));
  ITK_TRY_EXPECT_NO_EXCEPTION(WriteImage(filter->GetOutput(), argv[3]));
  return EXIT_SUCCESS;
}
