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
// Batches through the engine facade (Request::batchExtent): a stack of images labeled in one call equals the
// images labeled one by one -- labels (restarting per image, and running over the batch), the basic columns
// within each image, the image column -- and each image's labels equal ConnectedComponentImageFilter's, for
// random 2-D and 3-D images (density x granularity, odd sizes, 1-row images, 1-D images), both
// connectivities, with and without a minimum size; bad batches are refused before any work.
#include "itkCCATestUtilities.h"
#include "itkConnectedComponentImageFilter.h"
#include "itkCudaConnectedComponentAnalysisEngine.h"

#include <array>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace
{
using Engine = itk::CudaConnectedComponentAnalysisEngine;
using itk::ccatest::Backend;

struct Table
{
  std::vector<std::uint64_t>             pixels;
  std::vector<std::int64_t>              image;
  std::vector<std::vector<std::int64_t>> begin, end;
  std::vector<std::vector<double>>       centroid;
};

Table
ReadTable(Engine & engine, unsigned dimension, std::uint64_t count, std::uint64_t batchStride)
{
  Table t;
  t.pixels.resize(count);
  t.image.resize(count);
  t.begin.assign(dimension, std::vector<std::int64_t>(count));
  t.end.assign(dimension, std::vector<std::int64_t>(count));
  t.centroid.assign(dimension, std::vector<double>(count));
  itk::cca::BasicColumns c;
  c.numberOfPixels = t.pixels.data();
  c.batchStride = batchStride;
  c.image = batchStride ? t.image.data() : nullptr;
  for (unsigned d = 0; d < dimension; ++d)
  {
    c.boundingBoxBegin[d] = t.begin[d].data();
    c.boundingBoxEnd[d] = t.end[d].data();
    c.centroid[d] = t.centroid[d].data();
  }
  Engine::Geometry g;
  g.dimension = dimension;
  engine.WriteBasicColumns(g, c);
  return t;
}

struct Case
{
  unsigned                     dimension; ///< of the request (a batch of 1-D images: 2)
  std::array<std::uint64_t, 3> imageSize; ///< one image's, the slowest axis' extent included
  unsigned                     images;
  double                       density;
  unsigned                     granularity;
  bool                         fully;
  std::uint64_t                minimumSize;
  std::uint64_t                keep; ///< the N largest of each image (0: all)
  bool                         sort; ///< each image's components numbered by decreasing size
};

/** Labels `pixels` of one image as ITK does (the reference for every image of the batch). */
template <unsigned D>
std::vector<std::uint32_t>
ITKLabels(const std::uint8_t * pixels, const std::array<std::uint64_t, 3> & size, bool fully)
{
  using ImageType = itk::Image<std::uint8_t, D>;
  using LabelType = itk::Image<std::uint32_t, D>;
  auto                         image = ImageType::New();
  typename ImageType::SizeType s;
  for (unsigned d = 0; d < D; ++d)
  {
    s[d] = size[d];
  }
  image->SetRegions(s);
  image->Allocate();
  std::memcpy(image->GetBufferPointer(), pixels, image->GetBufferedRegion().GetNumberOfPixels());
  auto cc = itk::ConnectedComponentImageFilter<ImageType, LabelType>::New();
  cc->SetInput(image);
  cc->SetFullyConnected(fully);
  cc->Update();
  const std::uint32_t * out = cc->GetOutput()->GetBufferPointer();
  return std::vector<std::uint32_t>(out, out + image->GetBufferedRegion().GetNumberOfPixels());
}

bool
RunCase(const Case & k, Backend backend, std::uint32_t seed)
{
  const unsigned      D = k.dimension;
  const unsigned      slowest = D - 1;
  const std::uint64_t extent = k.imageSize[slowest];
  std::uint64_t       perImage = 1;
  for (unsigned d = 0; d < D; ++d)
  {
    perImage *= k.imageSize[d];
  }
  // The stack: random blocks of granularity g, with the seed's MT19937.
  std::vector<std::uint8_t>              stack(perImage * k.images);
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  {
    std::vector<std::uint8_t> on;
    const std::uint64_t       bx = (k.imageSize[0] + k.granularity - 1) / k.granularity;
    const std::uint64_t       by = (k.imageSize[1] + k.granularity - 1) / k.granularity;
    const std::uint64_t       bz = (k.imageSize[2] + k.granularity - 1) / k.granularity;
    for (unsigned i = 0; i < k.images; ++i)
    {
      on.resize(bx * by * bz);
      for (auto & b : on)
      {
        b = uniform(rng) < k.density;
      }
      std::uint8_t * p = stack.data() + i * perImage;
      for (std::uint64_t z = 0; z < k.imageSize[2]; ++z)
        for (std::uint64_t y = 0; y < k.imageSize[1]; ++y)
          for (std::uint64_t x = 0; x < k.imageSize[0]; ++x)
          {
            const std::uint64_t b = ((z / k.granularity) * by + y / k.granularity) * bx + x / k.granularity;
            *p++ = on[b] ? static_cast<std::uint8_t>(1 + (x + y) % 200) : 0;
          }
    }
  }
  Engine::Request r;
  r.dimension = D;
  r.size = k.imageSize;
  r.size[slowest] *= k.images;
  r.connectivity = itk::cca::Connectivity::FromFullyConnected(k.fully);
  r.input = stack.data();
  r.keepSumsOnDevice = true;
  r.batchExtent = extent;
  r.postProcessing.minimumObjectSize = k.minimumSize;
  r.postProcessing.numberOfObjectsToKeep = k.keep;
  r.postProcessing.sortByObjectSize = k.sort;
  Engine                     batch;
  const std::uint64_t        count = batch.Analyze(r, backend, 0, 0);
  std::vector<std::uint32_t> restart(stack.size()), running(stack.size());
  batch.WriteLabels(restart.data(), itk::cca::ScalarKind::UInt32, 0, 0, false, true);
  batch.WriteLabels(running.data(), itk::cca::ScalarKind::UInt32, 0, 0, false, false);
  const Table table = ReadTable(batch, D, count, extent);

  std::ostringstream what;
  what << D << "-D image " << k.imageSize[0] << 'x' << k.imageSize[1] << 'x' << k.imageSize[2] << " x " << k.images
       << ", d " << k.density << ", g " << k.granularity << ", fully " << k.fully << ", min size " << k.minimumSize
       << ", keep " << k.keep << ", sort " << k.sort;
  // One by one: the same engine kind, and ITK.
  std::uint64_t before = 0; // components of the images before
  for (unsigned i = 0; i < k.images; ++i)
  {
    Engine::Request one = r;
    one.size = k.imageSize;
    one.input = stack.data() + i * perImage;
    one.batchExtent = 0;
    Engine                     single;
    const std::uint64_t        n = single.Analyze(one, backend, 0, 0);
    std::vector<std::uint32_t> labels(perImage);
    single.WriteLabels(labels.data(), itk::cca::ScalarKind::UInt32, 0, 0);
    const Table expected = ReadTable(single, D, n, 0);
    if (std::memcmp(labels.data(), restart.data() + i * perImage, perImage * 4) != 0)
    {
      std::cerr << what.str() << ": image " << i << "'s labels (restarting) differ from its own call's\n";
      return false;
    }
    for (std::uint64_t p = 0; p < perImage; ++p)
    {
      const std::uint32_t run = running[i * perImage + p];
      if (run != (labels[p] ? labels[p] + before : 0u))
      {
        std::cerr << what.str() << ": image " << i << "'s running labels differ at " << p << '\n';
        return false;
      }
    }
    if (k.minimumSize == 0 && k.keep == 0 && !k.sort)
    {
      const std::vector<std::uint32_t> itkLabels = D == 2
                                                     ? ITKLabels<2>(stack.data() + i * perImage, k.imageSize, k.fully)
                                                     : ITKLabels<3>(stack.data() + i * perImage, k.imageSize, k.fully);
      if (itkLabels != labels)
      {
        std::cerr << what.str() << ": image " << i << "'s labels differ from ConnectedComponentImageFilter's\n";
        return false;
      }
    }
    for (std::uint64_t j = 0; j < n; ++j)
    {
      const std::uint64_t b = before + j;
      bool                same = b < count && table.pixels[b] == expected.pixels[j] && table.image[b] == i;
      for (unsigned d = 0; d < D && same; ++d)
      {
        same = table.begin[d][b] == expected.begin[d][j] && table.end[d][b] == expected.end[d][j] &&
               std::memcmp(&table.centroid[d][b], &expected.centroid[d][j], sizeof(double)) == 0;
      }
      if (!same)
      {
        std::cerr << what.str() << ": image " << i << ", component " << j << ": the batch's row differs\n";
        return false;
      }
    }
    before += n;
  }
  if (before != count)
  {
    std::cerr << what.str() << ": " << count << " components in the batch, " << before << " one by one\n";
    return false;
  }
  return true;
}

/** Bad batches: refused with a message, before any work. */
bool
BadBatches(Backend backend)
{
  std::vector<std::uint8_t> pixels(6 * 7, 1);
  auto                      refused = [&](Engine::Request r, const char * what, const char * expected) {
    Engine engine;
    try
    {
      engine.Analyze(r, backend, 0, 0);
    }
    catch (const Engine::Error & e)
    {
      if (std::string(e.what()).find(expected) != std::string::npos)
      {
        return true;
      }
      std::cerr << what << ": unexpected message: " << e.what() << '\n';
      return false;
    }
    std::cerr << what << ": not refused\n";
    return false;
  };
  Engine::Request r;
  r.dimension = 2;
  r.size = { 6, 7, 1 };
  r.input = pixels.data();
  r.batchExtent = 2; // 7 rows
  bool ok = refused(r, "an extent that does not divide", "equal parts of 2");
  r.batchExtent = 7;
  r.computeShapeSums = true;
  ok = refused(r, "a batch with the LabelMap's sums", "basic features only") && ok;
  r.computeShapeSums = false;
  r.dimension = 1;
  r.size = { 42, 1, 1 };
  r.batchExtent = 1;
  ok = refused(r, "a 1-D batch", "2-D or 3-D image") && ok;
  // Labels restarting per image without a batch.
  Engine          engine;
  Engine::Request one;
  one.dimension = 2;
  one.size = { 6, 7, 1 };
  one.input = pixels.data();
  engine.Analyze(one, backend, 0, 0);
  std::vector<std::uint32_t> labels(42);
  try
  {
    engine.WriteLabels(labels.data(), itk::cca::ScalarKind::UInt32, 0, 0, false, true);
    std::cerr << "restarting labels without a batch: not refused\n";
    ok = false;
  }
  catch (const Engine::Error & e)
  {
    std::cout << "refused as expected: " << e.what() << '\n';
  }
  return ok;
}
} // namespace

int
itkCudaConnectedComponentAnalysisBatchTest(int argc, char * argv[])
{
  if (argc < 2)
  {
    std::cerr << "Usage: " << argv[0] << " cpu|cuda" << std::endl;
    return EXIT_FAILURE;
  }
  const Backend backend = itk::ccatest::ParseBackend(argv[1]);
  if (itk::ccatest::CudaUnavailable(backend))
  {
    return itk::ccatest::SkipReturnCode;
  }
  bool          ok = BadBatches(backend);
  std::uint32_t seed = 29;
  int           cases = 0;
  for (const bool fully : { false, true })
  {
    for (const double density : { 0.2, 0.5, 0.8, 1.0 })
    {
      for (const unsigned g : { 1u, 3u })
      {
        // Post-processing per image: none, a minimum size, the 2 largest, sorted by size.
        const std::uint64_t minimumSize = (seed % 3 == 0) ? 3 : 0;
        const std::uint64_t keep = (seed % 4 == 1) ? 2 : 0;
        const bool          sort = seed % 5 < 2;
        const Case          list[] = {
                   { 2, { 37, 23, 1 }, 7, density, g, fully, minimumSize, keep, sort }, // 2-D images
                   { 2, { 33, 1, 1 }, 9, density, g, fully, minimumSize, keep, sort },  // 1-row images
                   { 2, { 1, 19, 1 }, 5, density, g, fully, minimumSize, keep, sort },  // 1-column images
                   { 3, { 13, 11, 9 }, 5, density, g, fully, minimumSize, keep, sort }, // 3-D patches
                   { 3, { 17, 5, 1 }, 6, density, g, fully, minimumSize, keep, sort },  // 1-slice patches
                   { 2, { 1, 1, 1 }, 11, density, g, fully, minimumSize, keep, sort },  // 1x1 images
        };
        for (const Case & k : list)
        {
          ok = RunCase(k, backend, seed++) && ok;
          ++cases;
        }
      }
    }
  }
  std::cout << cases << " batches compared with their images one by one (" << argv[1] << ")" << std::endl;
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
