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
// Slabbed analyses: the slab engine over the CPU or the CUDA engine against the same engine on the
// whole image -- component count, every sum (shape sums and perimeter intercepts included), the label image,
// with and without a post-processing table, the LabelMap's lines and the basic columns -- on random images at
// 1, 2, 3 and more planes per slab; then through the filter with a small memory budget against ITK's
// ConnectedComponentImageFilter, and with post-processing against the filter on the whole image.
#include "itkCCASlabEngine.h"
#include "itkCCATestUtilities.h"
#include "itkConnectedComponentImageFilter.h"
#include "itkCudaConnectedComponentAnalysisImageFilter.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace
{
namespace cca = itk::cca;
using itk::ccatest::Backend;

/** One image: pixels (0 background), an optional mask, its size. */
struct Image
{
  unsigned                     dimension = 2;
  std::array<std::uint64_t, 3> size{ { 1, 1, 1 } };
  std::vector<std::uint8_t>    pixels;
  std::vector<std::uint8_t>    mask;
};

/** Blocks of g pixels on with probability `density`; with `withMask`, a random mask hiding a tenth. */
Image
RandomImage(unsigned dimension, std::array<std::uint64_t, 3> size, double density, unsigned g, bool withMask,
            std::uint32_t seed)
{
  Image image;
  image.dimension = dimension;
  image.size = size;
  const std::uint64_t n = size[0] * size[1] * size[2];
  image.pixels.resize(n);
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const std::uint64_t       bx = (size[0] + g - 1) / g, by = (size[1] + g - 1) / g, bz = (size[2] + g - 1) / g;
  std::vector<std::uint8_t> on(bx * by * bz);
  for (auto & b : on)
  {
    b = uniform(rng) < density ? 1 : 0;
  }
  for (std::uint64_t i = 0; i < n; ++i)
  {
    const std::uint64_t x = i % size[0], y = i / size[0] % size[1], z = i / (size[0] * size[1]);
    image.pixels[i] = on[(z / g * by + y / g) * bx + x / g] ? static_cast<std::uint8_t>(1 + rng() % 200) : 0;
  }
  if (withMask)
  {
    image.mask.resize(n);
    for (auto & m : image.mask)
    {
      m = uniform(rng) < 0.1 ? 0 : 1;
    }
  }
  return image;
}

/** A comb: the teeth (every other column) run through all planes, the spine is the first or the last plane, so
 * that each slab holds many pieces of one component, joined only in the first or in the last slab. */
Image
Comb(unsigned dimension, std::array<std::uint64_t, 3> size, bool spineLast)
{
  Image image;
  image.dimension = dimension;
  image.size = size;
  const unsigned      axis = dimension - 1;
  const std::uint64_t n = size[0] * size[1] * size[2];
  image.pixels.resize(n);
  for (std::uint64_t i = 0; i < n; ++i)
  {
    const std::uint64_t x = i % size[0];
    const std::uint64_t index[3] = { x, i / size[0] % size[1], i / (size[0] * size[1]) };
    const bool          spine = index[axis] == (spineLast ? size[axis] - 1 : 0);
    image.pixels[i] = (x % 2 == 0 || spine) ? 1 : 0;
  }
  return image;
}

cca::Request
MakeRequest(const Image & image, unsigned maxNonZero)
{
  cca::Request r;
  r.dimension = image.dimension;
  r.size = image.size;
  r.connectivity = itk::cca::Connectivity{ maxNonZero };
  r.input = image.pixels.data();
  r.mask = image.mask.empty() ? nullptr : image.mask.data();
  r.computeShapeSums = true;
  r.computePerimeter = true;
  return r;
}

/** Everything an engine gives for one analysis. */
struct Outcome
{
  std::uint64_t                   count = 0;
  std::vector<cca::ComponentSums> sums;
  std::vector<std::uint32_t>      labels, selectedLabels;
  cca::Lines                      lines, selectedLines;
  std::vector<std::uint64_t>      columnPixels;
  std::vector<double>             columnCentroid;
};

/** A post-processing table for `count` components: every third removed, the others numbered backwards. */
std::vector<std::uint64_t>
SomeSelection(std::uint64_t count, std::uint64_t & kept)
{
  std::vector<std::uint64_t> table(count);
  kept = 0;
  for (std::uint64_t k = 0; k < count; ++k)
  {
    kept += k % 3 != 1 ? 1 : 0;
  }
  std::uint64_t next = kept;
  for (std::uint64_t k = 0; k < count; ++k)
  {
    table[k] = k % 3 != 1 ? --next : UINT64_MAX;
  }
  return table;
}

Outcome
Run(cca::Engine & engine, const Image & image)
{
  Outcome             o;
  const std::uint64_t n = image.size[0] * image.size[1] * image.size[2];
  o.sums = engine.GetFeatures();
  o.count = o.sums.size();
  cca::LabelOutput out;
  out.kind = cca::ScalarKind::UInt32;
  out.skipValue = 0;
  o.labels.assign(n, 7);
  out.data = o.labels.data();
  engine.WriteLabels(out);
  std::uint64_t kept = 0;
  const auto    table = SomeSelection(o.count, kept);
  o.selectedLabels.assign(n, 7);
  out.data = o.selectedLabels.data();
  out.newIndex = table.data();
  engine.WriteLabels(out);
  cca::LineLayout layout;
  layout.dimension = image.dimension;
  layout.sizeY = image.size[1];
  layout.start = { { 3, -2, 5 } };
  engine.ExportLines(layout, cca::RunSelection(), 0, o.lines);
  cca::RunSelection selection;
  selection.newIndex = table.data();
  selection.numKept = kept;
  engine.ExportLines(layout, selection, 0, o.selectedLines);
  o.columnPixels.assign(kept, 0);
  o.columnCentroid.assign(kept * 3, 0);
  cca::BasicColumns columns;
  columns.numberOfPixels = o.columnPixels.data();
  for (unsigned d = 0; d < image.dimension; ++d)
  {
    columns.centroid[d] = o.columnCentroid.data() + d * kept;
  }
  cca::BasicGeometry geometry;
  geometry.dimension = image.dimension;
  engine.WriteBasicColumns(geometry, columns, table.data());
  return o;
}

bool
SameLines(const cca::Lines & a, const cca::Lines & b)
{
  return std::equal(a.firstLine.begin(), a.firstLine.end(), b.firstLine.begin(), b.firstLine.end()) &&
         std::equal(a.index.begin(), a.index.end(), b.index.begin(), b.index.end()) &&
         std::equal(a.length.begin(), a.length.end(), b.length.begin(), b.length.end());
}

bool
Same(const Outcome & slabbed, const Outcome & whole, const std::string & what)
{
  std::string differs;
  if (slabbed.count != whole.count)
  {
    differs = "count " + std::to_string(slabbed.count) + " vs " + std::to_string(whole.count);
  }
  else if (slabbed.sums != whole.sums)
  {
    for (std::size_t k = 0; k < whole.sums.size() && differs.empty(); ++k)
    {
      const cca::ComponentSums & a = slabbed.sums[k];
      const cca::ComponentSums & b = whole.sums[k];
      if (a != b)
      {
        const char * field = a.numberOfPixels != b.numberOfPixels                   ? "pixels"
                             : a.boundingBoxMin != b.boundingBoxMin                 ? "box"
                             : a.boundingBoxMax != b.boundingBoxMax                 ? "box"
                             : a.indexSum != b.indexSum                             ? "index sums"
                             : a.indexProductSum != b.indexProductSum               ? "index products"
                             : a.numberOfPixelsOnBorder != b.numberOfPixelsOnBorder ? "pixels on the border"
                             : a.borderFaces != b.borderFaces                       ? "border faces"
                                                                                    : "intercepts";
        differs = std::string("the ") + field + " of component " + std::to_string(k);
        for (int i = 0; i < 7; ++i)
          differs += " " + std::to_string(a.intercepts[i]) + "/" + std::to_string(b.intercepts[i]);
      }
    }
  }
  else if (slabbed.labels != whole.labels)
  {
    differs = "labels";
  }
  else if (slabbed.selectedLabels != whole.selectedLabels)
  {
    differs = "labels through a post-processing table";
  }
  else if (!SameLines(slabbed.lines, whole.lines))
  {
    differs = "lines";
  }
  else if (!SameLines(slabbed.selectedLines, whole.selectedLines))
  {
    differs = "lines of the kept components";
  }
  else if (slabbed.columnPixels != whole.columnPixels || slabbed.columnCentroid != whole.columnCentroid)
  {
    differs = "basic columns";
  }
  if (!differs.empty())
  {
    std::cerr << what << ": " << differs << " differ from the whole image's" << std::endl;
    return false;
  }
  return true;
}

std::unique_ptr<cca::Engine>
MakeEngine(Backend backend)
{
  return backend == Backend::CUDA ? cca::CreateCudaEngine(0) : cca::CreateCPUEngine(2, 3);
}

/** The slab engine at several slab heights against the inner engine on the whole image. */
bool
EngineCases(Backend backend)
{
  auto            inner = MakeEngine(backend);
  auto            wholeEngine = MakeEngine(backend);
  cca::SlabEngine slabs(*inner, 2);
  // With a partner: the slabs alternating between two more engines, whose label images are written at once.
  auto               pairedInner = MakeEngine(backend);
  auto               partner = MakeEngine(backend);
  cca::SlabEngine    paired(*pairedInner, 2, nullptr, partner.get());
  std::vector<Image> images;
  std::uint32_t      seed = 2022;
  using Size = std::array<std::uint64_t, 3>;
  const std::vector<std::pair<unsigned, Size>> shapes{ { 2, Size{ { 1, 1, 1 } } },
                                                       { 2, Size{ { 1, 40, 1 } } },
                                                       { 2, Size{ { 40, 1, 1 } } },
                                                       { 2, Size{ { 31, 33, 1 } } },
                                                       { 2, Size{ { 157, 93, 1 } } },
                                                       { 3, Size{ { 1, 1, 1 } } },
                                                       { 3, Size{ { 1, 1, 30 } } },
                                                       { 3, Size{ { 30, 1, 1 } } },
                                                       { 3, Size{ { 17, 1, 23 } } },
                                                       { 3, Size{ { 17, 19, 23 } } },
                                                       { 3, Size{ { 40, 33, 29 } } },
                                                       // Planes of more than 2^16 pixels: the merge takes each face in
                                                       // several bands of rows.
                                                       { 3, Size{ { 2050, 37, 5 } } } };
  for (const auto & shape : shapes)
  {
    for (const double density : { 0.2, 0.5, 0.8, 1.0 })
    {
      for (const unsigned g : { 1u, 2u, 4u })
      {
        images.push_back(RandomImage(shape.first, shape.second, density, g, seed % 5 == 0, seed));
        ++seed;
      }
    }
  }
  for (const bool spineLast : { false, true })
  {
    images.push_back(Comb(2, Size{ { 41, 37, 1 } }, spineLast));
    images.push_back(Comb(3, Size{ { 13, 7, 11 } }, spineLast));
  }
  bool ok = true;
  int  compared = 0;
  for (const Image & image : images)
  {
    // Every connectivity of the image's dimension: face, face and edge (18 in 3-D), full.
    for (unsigned connectivity = 1; connectivity <= image.dimension; ++connectivity)
    {
      const cca::Request  request = MakeRequest(image, connectivity);
      const std::uint64_t planes = image.size[image.dimension - 1];
      wholeEngine->Analyze(request);
      const Outcome whole = Run(*wholeEngine, image);
      for (const std::uint64_t perSlab :
           { std::uint64_t{ 1 }, std::uint64_t{ 2 }, std::uint64_t{ 3 }, (planes + 1) / 2, (planes + 2) / 3, planes })
      {
        std::ostringstream what;
        what << image.dimension << "-D " << image.size[0] << "x" << image.size[1] << "x" << image.size[2]
             << (image.mask.empty() ? "" : " masked") << " connectivity=" << connectivity << " slabs of " << perSlab;
        slabs.AnalyzeInSlabs(request, perSlab);
        ok = Same(Run(slabs, image), whole, what.str()) && ok;
        paired.AnalyzeInSlabs(request, perSlab);
        const bool twoEngines = paired.GetDescription().find("on two engines") != std::string::npos;
        if (twoEngines != (paired.GetNumberOfSlabs() > 1))
        {
          std::cerr << what.str() << ": " << paired.GetNumberOfSlabs() << " slabs, described as \""
                    << paired.GetDescription() << '"' << std::endl;
          ok = false;
        }
        ok = Same(Run(paired, image), whole, what.str() + ", on two engines") && ok;
        compared += 2;
      }
    }
  }
  std::cout << compared << " slabbed analyses compared with whole ones" << std::endl;
  return ok;
}

/** Through the filter: a budget that forces slabs, against ITK and against the filter on the whole image. */
template <unsigned D>
bool
FilterCasesOfDimension(Backend backend, std::uint32_t & seed)
{
  using InputImageType = itk::Image<short, D>;
  using LabelImageType = itk::Image<unsigned int, D>;
  using FilterType = itk::CudaConnectedComponentAnalysisImageFilter<InputImageType, LabelImageType>;
  typename InputImageType::SizeType size;
  for (unsigned d = 0; d < D; ++d)
  {
    size[d] = D == 2 ? 129 + 4 * d : 37 + 2 * d;
  }
  bool ok = true;
  for (const double density : { 0.3, 0.6 })
  {
    for (const bool fully : { false, true })
    {
      auto image = itk::ccatest::MakeRandomImage<InputImageType>(
        size, density, 2, ++seed, [](std::mt19937 & rng) { return static_cast<short>(rng() % 100) - 50; });
      std::ostringstream what;
      what << D << "-D d=" << density << " fully=" << fully;
      auto reference = itk::ConnectedComponentImageFilter<InputImageType, LabelImageType>::New();
      reference->SetInput(image);
      reference->SetFullyConnected(fully);
      reference->Update();
      for (const itk::SizeValueType budget : { itk::SizeValueType{ 1 }, itk::SizeValueType{ 600000 } })
      {
        auto ours = FilterType::New();
        ours->SetInput(image);
        ours->SetBackend(backend);
        ours->SetFullyConnected(fully);
        ours->SetMemoryBudget(budget);
        ours->Update();
        const std::string w = what.str() + " budget " + std::to_string(budget);
        if (ours->GetNumberOfSlabs() < 2)
        {
          std::cerr << w << ": " << ours->GetNumberOfSlabs() << " slab(s), several expected" << std::endl;
          ok = false;
        }
        ok = ours->GetObjectCount() == reference->GetObjectCount() &&
             itk::ccatest::SameImage(ours->GetOutput(), reference->GetOutput(), w) &&
             itk::ccatest::FeaturesMatchBruteForce(ours.GetPointer(), w) && ok;
        // Post-processing decided on the merged components: the same image as on the whole one.
        auto whole = FilterType::New();
        for (auto * f : { ours.GetPointer(), whole.GetPointer() })
        {
          f->SetInput(image);
          f->SetBackend(backend);
          f->SetFullyConnected(fully);
          f->SetMinimumObjectSize(3);
          f->SetNumberOfObjectsToKeep(40);
          f->SetSortByObjectSize(true);
          f->SetBackgroundValue(5);
        }
        ours->SetMemoryBudget(budget);
        ours->Update();
        whole->Update();
        ok = ours->GetNumberOfSlabs() > 1 && whole->GetNumberOfSlabs() == 1 &&
             ours->GetObjectCount() == whole->GetObjectCount() &&
             itk::ccatest::SameImage(ours->GetOutput(), whole->GetOutput(), w + " post-processed") && ok;
        std::cout << w << ": " << ours->GetNumberOfSlabs() << " slabs, " << reference->GetObjectCount() << " objects"
                  << std::endl;
      }
    }
  }
  return ok;
}

bool
FilterCases(Backend backend)
{
  std::uint32_t seed = 515;
  return FilterCasesOfDimension<2>(backend, seed) && FilterCasesOfDimension<3>(backend, seed);
}

} // namespace

int
itkCudaConnectedComponentAnalysisSlabTest(int argc, char * argv[])
{
  return itk::ccatest::RunNamedCase(argc, argv, { { "engine", EngineCases }, { "filter", FilterCases } });
}
