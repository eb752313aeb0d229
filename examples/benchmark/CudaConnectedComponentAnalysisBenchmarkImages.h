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
// Helpers shared by the benchmark's modes u and r: the random test images (density d of g×g(×g) blocks on)
// and a wall-clock timer.
#ifndef CudaConnectedComponentAnalysisBenchmarkImages_h
#define CudaConnectedComponentAnalysisBenchmarkImages_h

#include "itkImage.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

/** A side^D image of unsigned char: blocks of g pixels per side, each on (1) with probability `density`. */
template <unsigned D>
typename itk::Image<unsigned char, D>::Pointer
MakeBenchmarkImage(unsigned side, double density, unsigned g, std::uint32_t seed)
{
  using ImageType = itk::Image<unsigned char, D>;
  auto                         image = ImageType::New();
  typename ImageType::SizeType size;
  size.Fill(side);
  image->SetRegions(size);
  image->Allocate();
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const std::size_t                      blocks = (side + g - 1) / g;
  std::size_t                            numBlocks = 1;
  for (unsigned d = 0; d < D; ++d)
  {
    numBlocks *= blocks;
  }
  std::vector<unsigned char> on(numBlocks);
  for (auto & b : on)
  {
    b = density >= 1.0 || uniform(rng) < density ? 1 : 0;
  }
  unsigned char *   p = image->GetBufferPointer();
  const std::size_t rows = image->GetBufferedRegion().GetNumberOfPixels() / side;
  for (std::size_t row = 0; row < rows; ++row)
  {
    const std::size_t y = row % side;
    const std::size_t z = D > 2 ? row / side : 0;
    const std::size_t blockRow = (z / g * blocks + y / g) * blocks;
    for (std::size_t x = 0; x < side; ++x)
    {
      p[row * side + x] = on[blockRow + x / g];
    }
  }
  return image;
}

/** Wall-clock seconds that `f` takes. */
inline double
SecondsOf(const std::function<void()> & f)
{
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

#endif
