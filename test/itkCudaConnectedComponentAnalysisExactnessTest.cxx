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
// Exactness against itk::ConnectedComponentImageFilter on paper-style random images:
// density 0..100 % in 10 % steps x granularity {1, 2, 4, 16}, odd and degenerate sizes, several
// input pixel types, a mask, a non-zero background value, several output pixel types.
// Arguments: backend (cpu | cuda | auto), fullyConnected (0 | 1), dimension (2 | 3).
#include "itkCCATestUtilities.h"

namespace
{
using namespace itk;
using namespace itk::ccatest;

template <unsigned D>
bool
RunSweep(Backend backend, bool fullyConnected, const std::vector<Size<D>> & sizes)
{
  using UCharImage = Image<unsigned char, D>;
  using ShortImage = Image<short, D>;
  using FloatImage = Image<float, D>;
  using LabelImage = Image<unsigned int, D>;
  using ULongLabelImage = Image<unsigned long, D>;
  using IntLabelImage = Image<int, D>;

  bool          ok = true;
  std::uint32_t seed = 1;
  for (const auto & size : sizes)
  {
    for (unsigned g : { 1u, 2u, 4u, 16u })
    {
      for (int step = 0; step <= 10; ++step)
      {
        const double       density = step / 10.0;
        std::ostringstream what;
        what << "size " << size << " g=" << g << " d=" << density << " fully=" << fullyConnected;
        ++seed;
        // uchar input, any non-zero value is foreground
        auto u8 = MakeRandomImage<UCharImage>(size, density, g, seed, [](std::mt19937 & r) { return 1 + r() % 255; });
        ok = CheckAgainstITK<UCharImage, LabelImage>(u8, backend, fullyConnected, what.str() + " uchar") && ok;

        // the remaining variants at a subset of densities keep the run time of the CPU suite small
        if (step % 3 != 1)
        {
          continue;
        }
        // short input with negative values
        auto s16 = MakeRandomImage<ShortImage>(size, density, g, seed + 7, [](std::mt19937 & r) {
          const int v = 1 + static_cast<int>(r() % 3000);
          return (r() & 1) ? -v : v;
        });
        ok = CheckAgainstITK<ShortImage, ULongLabelImage>(s16, backend, fullyConnected, what.str() + " short") && ok;

        // float input (fractional and negative values), signed labels with a non-zero background
        auto f32 = MakeRandomImage<FloatImage>(
          size, density, g, seed + 11, [](std::mt19937 & r) { return (r() & 1) ? -0.25f * (1 + r() % 8) : 0.5f; });
        ok = CheckAgainstITK<FloatImage, IntLabelImage>(
               f32, backend, fullyConnected, what.str() + " float bg=2", nullptr, 2) &&
             ok;

        // uchar input with a random mask (uchar), background value 3 (labels step over it)
        auto mask = MakeRandomImage<UCharImage>(size, 0.7, 1, seed + 13, [](std::mt19937 &) { return 1; });
        ok = CheckAgainstITK<UCharImage, LabelImage, UCharImage>(
               u8, backend, fullyConnected, what.str() + " masked bg=3", mask, 3u) &&
             ok;
      }
    }
  }
  return ok;
}

} // namespace

int
itkCudaConnectedComponentAnalysisExactnessTest(int argc, char * argv[])
{
  Backend backend = Backend::CPU;
  if (const int start =
        StartTest(argc, argv, 4, "backend(cpu|cuda|auto) fullyConnected(0|1) dimension(2|3)", 1, backend);
      start >= 0)
  {
    return start;
  }
  const bool     fullyConnected = std::stoi(argv[2]) != 0;
  const unsigned dimension = std::stoul(argv[3]);

  bool ok = false;
  if (dimension == 2)
  {
    using S = Size<2>;
    ok = RunSweep<2>(backend,
                     fullyConnected,
                     { S{ { 1, 1 } },
                       S{ { 1, 1000 } },
                       S{ { 1000, 1 } },
                       S{ { 31, 33 } },
                       S{ { 33, 31 } },
                       S{ { 1000, 999 } },
                       S{ { 4097, 3 } },
                       S{ { 64, 64 } },
                       // widths that take the CUDA engine's 16-byte-load path for 1-, 2- and 4-byte pixels
                       S{ { 512, 37 } },
                       S{ { 1024, 3 } } });
  }
  else if (dimension == 3)
  {
    using S = Size<3>;
    ok = RunSweep<3>(backend,
                     fullyConnected,
                     { S{ { 1, 1, 1 } },
                       S{ { 1, 1, 300 } },
                       S{ { 300, 1, 1 } },
                       S{ { 1, 300, 1 } },
                       S{ { 17, 9, 5 } },
                       S{ { 33, 31, 29 } },
                       S{ { 101, 67, 45 } },
                       S{ { 512, 5, 3 } } });
  }
  else
  {
    std::cerr << "dimension must be 2 or 3" << std::endl;
    return EXIT_FAILURE;
  }
  std::cout << (ok ? "all images identical to ITK" : "MISMATCH") << std::endl;
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
