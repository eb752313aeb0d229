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
// The filter under ITK's pipeline conventions, one case per argument:
//   progress   ProgressEvents from 0 to 1, never decreasing, over the whole update (LabelMap included)
//   abort      AbortGenerateData from a progress observer throws ProcessAborted; the filter runs again after
//   workunits  1, 2 and 64 work units give identical label images, features and LabelMaps
//   skipped    GenerateLabelImageOff(): repeated updates run the analysis once; a downstream filter on the
//              skipped label image throws an exception naming GenerateLabelImageOff(); the LabelMap's
//              LabelMapToLabelImageFilter gives ITK's labels; GenerateLabelImageOn() makes output 0 usable again
//   repeat     one filter, updated on changing images (many objects, then few, then many again) with each
//              combination of outputs (label image only, LabelMap only, both): every update's label image
//              and LabelMap equal ITK's for that image, nothing left over from the previous update
//   factory    the LabelMap's objects are ShapeLabelObjects made without the object factory (GetNameOfClass(),
//              CopyAllFrom() into one from New()), unless a registered factory overrides ShapeLabelObject:
//              then every object is the factory's, as ITK's filters make them
//   memory     (Linux) an update under a lowered address-space limit, in a child process: running out of
//              memory is an itk::MemoryAllocationError, and the filter works again once memory is back
#include "itkCCATestUtilities.h"
#include "itkCommand.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkLabelMapToLabelImageFilter.h"
#include "itkObjectFactoryBase.h"
#include "itkVersion.h"

#include <cstdlib>
#include <vector>

#if defined(__linux__)
#  include <unistd.h>
#endif

namespace
{
using namespace itk;
using namespace itk::ccatest;

using UCharImage = Image<unsigned char, 2>;
using LabelImage = Image<unsigned int, 2>;
using FilterType = CudaConnectedComponentAnalysisImageFilter<UCharImage, LabelImage>;

UCharImage::Pointer
RandomImage(SizeValueType width, SizeValueType height, double density, std::uint32_t seed)
{
  return MakeRandomImage<UCharImage>(
    UCharImage::SizeType{ { width, height } }, density, 1, seed, [](std::mt19937 &) { return 1; });
}

bool
ProgressCase(Backend backend)
{
  auto filter = FilterType::New();
  filter->SetInput(RandomImage(300, 211, 0.45, 3));
  filter->SetBackend(backend);
  std::vector<float> events;
  auto               observer = CStyleCommand::New();
  observer->SetClientData(&events);
  observer->SetCallback([](Object * caller, const EventObject &, void * data) {
    static_cast<std::vector<float> *>(data)->push_back(static_cast<ProcessObject *>(caller)->GetProgress());
  });
  filter->AddObserver(ProgressEvent(), observer);
  filter->Update();
  bool ok = events.size() >= 5 && events.front() == 0.0f && events.back() == 1.0f;
  for (std::size_t i = 1; i < events.size(); ++i)
  {
    ok = ok && events[i] >= events[i - 1];
  }
  std::cout << events.size() << " progress events:";
  for (float e : events)
  {
    std::cout << ' ' << e;
  }
  std::cout << std::endl;
  if (!ok)
  {
    std::cerr << "progress events are not 0 .. 1, non-decreasing, at least 5" << std::endl;
  }
  return ok;
}

bool
AbortCase(Backend backend)
{
  auto filter = FilterType::New();
  filter->SetInput(RandomImage(200, 190, 0.5, 4));
  filter->SetBackend(backend);
  auto observer = CStyleCommand::New();
  observer->SetCallback([](Object * caller, const EventObject &, void *) {
    auto * process = static_cast<ProcessObject *>(caller);
    if (process->GetProgress() > 0.0f)
    {
      process->AbortGenerateDataOn();
    }
  });
  const unsigned long tag = filter->AddObserver(ProgressEvent(), observer);
  bool                aborted = false;
  try
  {
    filter->Update();
  }
  catch (const ProcessAborted & e)
  {
    aborted = true;
    std::cout << "expected ProcessAborted: " << e.GetDescription() << std::endl;
  }
  filter->RemoveObserver(tag);
  filter->AbortGenerateDataOff();
  filter->Modified();
  ITK_TRY_EXPECT_NO_EXCEPTION(filter->Update());
  auto reference = ConnectedComponentImageFilter<UCharImage, LabelImage>::New();
  reference->SetInput(filter->GetInput());
  reference->Update();
  const bool again = SameImage(filter->GetOutput(), reference->GetOutput(), "update after abort");
  if (!aborted)
  {
    std::cerr << "AbortGenerateData did not abort the update" << std::endl;
  }
  return aborted && again;
}

bool
WorkUnitsCase(Backend backend)
{
  auto                image = RandomImage(517, 389, 0.5, 5);
  LabelImage::Pointer first;
  FilterType::Pointer firstFilter;
  bool                ok = true;
  for (unsigned units : { 1u, 2u, 64u })
  {
    auto filter = FilterType::New();
    filter->SetInput(image);
    filter->SetBackend(backend);
    filter->SetNumberOfWorkUnits(units);
    filter->SetComputeFeretDiameter(true);
    filter->Update();
    std::cout << units << " work units: " << filter->GetObjectCount() << " objects, " << filter->GetBackendDescription()
              << std::endl;
    if (!first)
    {
      first = filter->GetOutput();
      firstFilter = filter;
      continue;
    }
    ok = SameImage(filter->GetOutput(), first.GetPointer(), "work units " + std::to_string(units)) && ok;
    const auto * a = filter->GetLabelMap();
    const auto * b = firstFilter->GetLabelMap();
    ok = ok && a->GetNumberOfLabelObjects() == b->GetNumberOfLabelObjects();
    // Walk both maps in label order (GetNthLabelObject would walk the map from its start each time).
    FilterType::LabelMapType::ConstIterator ia(a), ib(b);
    for (SizeValueType i = 0; ok && !ia.IsAtEnd(); ++i, ++ia, ++ib)
    {
      const auto * x = ia.GetLabelObject();
      const auto * y = ib.GetLabelObject();
      // bit-identical: the same sums give the same doubles whatever the threads
      ok = x->GetLabel() == y->GetLabel() && x->GetNumberOfLines() == y->GetNumberOfLines() &&
           x->GetCentroid() == y->GetCentroid() && x->GetPrincipalMoments() == y->GetPrincipalMoments() &&
           x->GetPerimeter() == y->GetPerimeter() && x->GetFeretDiameter() == y->GetFeretDiameter();
      if (!ok)
      {
        std::cerr << "LabelMap object " << i << " differs with " << units << " work units" << std::endl;
      }
    }
  }
  return ok;
}

bool
SkippedOutputCase(Backend backend)
{
  auto filter = FilterType::New();
  filter->SetInput(RandomImage(251, 199, 0.5, 9));
  filter->SetBackend(backend);
  filter->GenerateLabelImageOff();
  unsigned runs = 0;
  auto     counter = CStyleCommand::New();
  counter->SetClientData(&runs);
  counter->SetCallback([](Object *, const EventObject &, void * data) { ++*static_cast<unsigned *>(data); });
  filter->AddObserver(StartEvent(), counter);

  filter->Update();
  filter->Update();
  filter->UpdateLargestPossibleRegion();
  filter->GetLabelMap()->Update();
  bool ok = runs == 1;
  std::cout << "GenerateLabelImageOff: " << runs << " run(s) for four updates, " << filter->GetObjectCount()
            << " objects, label image buffer " << filter->GetOutput()->GetBufferedRegion().GetNumberOfPixels()
            << " pixels" << std::endl;
  ok = ok && filter->GetOutput()->GetBufferedRegion().GetNumberOfPixels() == 0;

  // A downstream filter on the skipped output: a clear exception, not a crash or a pipeline error.
  auto threshold = BinaryThresholdImageFilter<LabelImage, UCharImage>::New();
  threshold->SetInput(filter->GetOutput());
  threshold->SetLowerThreshold(1);
  bool named = false;
  try
  {
    threshold->Update();
    std::cerr << "a downstream filter ran on the skipped label image" << std::endl;
  }
  catch (const ExceptionObject & e)
  {
    named = std::string(e.GetDescription()).find("GenerateLabelImageOff()") != std::string::npos;
    std::cout << "expected exception: " << e.GetDescription() << std::endl;
  }
  ok = ok && named && runs == 1;

  // The LabelMap downstream works, and gives ITK's labels.
  auto toImage = LabelMapToLabelImageFilter<FilterType::LabelMapType, LabelImage>::New();
  toImage->SetInput(filter->GetLabelMap());
  toImage->Update();
  auto reference = ConnectedComponentImageFilter<UCharImage, LabelImage>::New();
  reference->SetInput(filter->GetInput());
  reference->Update();
  ok = SameImage(toImage->GetOutput(), reference->GetOutput(), "LabelMap of a GenerateLabelImageOff() update") && ok;
  ok = ok && runs == 1;

  // Switched back on, the label image is produced (one more run) and the downstream filter works
  // (after ResetPipeline(), which ITK asks for after any exception in an update).
  filter->GenerateLabelImageOn();
  threshold->ResetPipeline();
  ITK_TRY_EXPECT_NO_EXCEPTION(threshold->Update());
  ok = SameImage(filter->GetOutput(), reference->GetOutput(), "label image after GenerateLabelImageOn()") && ok;
  std::cout << "after GenerateLabelImageOn(): " << runs << " run(s) in all" << std::endl;
  ok = ok && runs == 2;
  if (!ok)
  {
    std::cerr << "skipped-output case failed" << std::endl;
  }
  return ok;
}

bool
RepeatCase(Backend backend)
{
  auto filter = FilterType::New();
  filter->SetBackend(backend);
  struct Step
  {
    double   density;
    unsigned granularity;
    bool     labelImage;
    bool     labelMap;
  };
  const Step steps[] = { { 0.45, 1, true, true }, { 0.2, 8, true, true },  { 0.5, 1, false, true },
                         { 0.3, 4, true, false }, { 0.45, 1, true, true }, { 0.6, 2, false, true } };
  bool       ok = true;
  unsigned   seed = 20;
  for (const Step & step : steps)
  {
    auto image = MakeRandomImage<UCharImage>(
      UCharImage::SizeType{ { 307, 253 } }, step.density, step.granularity, ++seed, [](std::mt19937 &) { return 1; });
    filter->SetInput(image);
    filter->SetGenerateLabelImage(step.labelImage);
    filter->SetGenerateLabelMap(step.labelMap);
    filter->Update();
    auto reference = ConnectedComponentImageFilter<UCharImage, LabelImage>::New();
    reference->SetInput(image);
    reference->Update();
    const std::string what = "d=" + std::to_string(step.density) + " g=" + std::to_string(step.granularity) +
                             " labels " + std::to_string(step.labelImage) + " map " + std::to_string(step.labelMap);
    const auto * map = filter->GetLabelMap();
    std::cout << what << ": " << filter->GetObjectCount() << " objects, LabelMap " << map->GetNumberOfLabelObjects()
              << " objects" << std::endl;
    ok = filter->GetObjectCount() == reference->GetObjectCount() && ok;
    if (step.labelImage)
    {
      ok = SameImage(filter->GetOutput(), reference->GetOutput(), what + ": label image") && ok;
    }
    if (step.labelMap)
    {
      ok = map->GetNumberOfLabelObjects() == reference->GetObjectCount() && ok;
      auto toImage = LabelMapToLabelImageFilter<FilterType::LabelMapType, LabelImage>::New();
      toImage->SetInput(map);
      toImage->Update();
      ok = SameImage(toImage->GetOutput(), reference->GetOutput(), what + ": LabelMap") && ok;
    }
    else
    {
      // No LabelMap asked for: the previous update's objects must not stay behind in it.
      ok = map->GetNumberOfLabelObjects() == 0 && ok;
    }
  }
  if (!ok)
  {
    std::cerr << "repeated updates: an output differs from ITK's" << std::endl;
  }
  return ok;
}

using LabelObjectType = FilterType::LabelMapType::LabelObjectType;

/** A ShapeLabelObject that a factory hands out in place of the plain one. */
class OverriddenLabelObject : public LabelObjectType
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(OverriddenLabelObject);
  using Self = OverriddenLabelObject;
  using Pointer = SmartPointer<Self>;
  itkNewMacro(Self);

protected:
  OverriddenLabelObject() = default;
};

class OverridingFactory : public ObjectFactoryBase
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(OverridingFactory);
  using Self = OverridingFactory;
  using Pointer = SmartPointer<Self>;
  itkFactorylessNewMacro(Self);
  const char *
  GetITKSourceVersion() const override
  {
    return ITK_SOURCE_VERSION;
  }
  const char *
  GetDescription() const override
  {
    return "test factory overriding ShapeLabelObject";
  }

protected:
  OverridingFactory()
  {
    this->RegisterOverride(typeid(LabelObjectType).name(),
                           typeid(OverriddenLabelObject).name(),
                           "OverriddenLabelObject",
                           true,
                           CreateObjectFunction<OverriddenLabelObject>::New());
  }
};

/** How many of the LabelMap's objects have the dynamic type T, and whether all of them are ShapeLabelObjects. */
template <typename T>
std::size_t
CountObjectsOfType(const FilterType::LabelMapType * map, bool & allShapeLabelObjects)
{
  std::size_t count = 0;
  for (FilterType::LabelMapType::ConstIterator it(map); !it.IsAtEnd(); ++it)
  {
    const LabelObjectType * object = it.GetLabelObject();
    count += typeid(*object) == typeid(T) ? 1 : 0;
    allShapeLabelObjects = allShapeLabelObjects && std::string(object->GetNameOfClass()) == "ShapeLabelObject";
  }
  return count;
}

bool
FactoryCase(Backend backend)
{
  auto filter = FilterType::New();
  filter->SetBackend(backend);
  filter->SetInput(RandomImage(301, 203, 0.45, 31));
  filter->Update();
  const auto * map = filter->GetLabelMap();
  bool         shapeObjects = true;
  const auto   overridden = CountObjectsOfType<OverriddenLabelObject>(map, shapeObjects);
  bool         ok = map->GetNumberOfLabelObjects() > 100 && overridden == 0 && shapeObjects;
  // An object of the map copied into one made by New(): every attribute comes along.
  const LabelObjectType * first = map->GetNthLabelObject(0);
  auto                    copy = LabelObjectType::New();
  copy->CopyAllFrom(first);
  ok = ok && copy->GetLabel() == first->GetLabel() && copy->GetNumberOfLines() == first->GetNumberOfLines() &&
       copy->GetNumberOfPixels() == first->GetNumberOfPixels() && copy->GetPerimeter() == first->GetPerimeter() &&
       copy->GetCentroid() == first->GetCentroid() && copy->GetPrincipalMoments() == first->GetPrincipalMoments();
  std::cout << "without an override: " << map->GetNumberOfLabelObjects() << " objects, " << overridden
            << " of the override's type, all ShapeLabelObject: " << shapeObjects << std::endl;

  auto factory = OverridingFactory::New();
  ObjectFactoryBase::RegisterFactory(factory);
  filter->SetInput(RandomImage(301, 203, 0.45, 32));
  filter->Update();
  shapeObjects = true;
  const auto numObjects = map->GetNumberOfLabelObjects();
  const auto withFactory = CountObjectsOfType<OverriddenLabelObject>(map, shapeObjects);
  ObjectFactoryBase::UnRegisterFactory(factory);
  std::cout << "with an override: " << numObjects << " objects, " << withFactory << " of the override's type"
            << std::endl;
  ok = ok && numObjects > 100 && withFactory == numObjects && shapeObjects;
  if (!ok)
  {
    std::cerr << "the LabelMap's objects are not what ITK's object factory would make" << std::endl;
  }
  return ok;
}

/** In the child (address space limited by the parent): a LabelMap of ~1.2 M objects does not fit; the
 * error must be ITK's MemoryAllocationError, and a small update afterwards must work. */
int
MemoryChild(Backend backend)
{
  auto filter = FilterType::New();
  filter->SetBackend(backend);
  filter->SetInput(RandomImage(3072, 3072, 0.3, 7));
  bool caught = false;
  try
  {
    filter->Update();
    std::cerr << "no exception: " << filter->GetObjectCount() << " objects fitted" << std::endl;
  }
  catch (const MemoryAllocationError & e)
  {
    caught = true;
    std::cout << "expected MemoryAllocationError: " << e.GetDescription() << std::endl;
  }
  catch (const std::bad_alloc &)
  {
    std::cerr << "raw std::bad_alloc escaped" << std::endl;
    return EXIT_FAILURE;
  }
  // Memory is back once the large buffers are gone: the same filter labels a small image.
  filter->SetInput(RandomImage(64, 64, 0.5, 8));
  filter->Update();
  std::cout << "after the failure: " << filter->GetObjectCount() << " objects" << std::endl;
  return caught && filter->GetObjectCount() > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

bool
MemoryCase(Backend backend, const char * backendName)
{
#if defined(__linux__)
  char       exe[4096];
  const auto n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0)
  {
    std::cerr << "cannot find the test driver" << std::endl;
    return false;
  }
  exe[n] = '\0';
  (void)backend;
  // 1.2 GB of address space: the program, ITK and the engine fit, ~1.2 M heap label objects do not.
  const std::string command = std::string("ulimit -v 1200000 && exec '") + exe +
                              "' itkCudaConnectedComponentAnalysisPipelineTest memorychild " + backendName;
  const int status = std::system(command.c_str());
  std::cout << "child exit status " << status << std::endl;
  return status == 0;
#else
  (void)backend;
  (void)backendName;
  std::cout << "memory case: Linux only" << std::endl;
  return true;
#endif
}
} // namespace

int
itkCudaConnectedComponentAnalysisPipelineTest(int argc, char * argv[])
{
  if (argc >= 3 && std::string(argv[1]) == "memorychild")
  {
    // the child of the memory case, under its address-space limit
    const Backend backend = ParseBackend(argv[2]);
    return CudaUnavailable(backend) ? SkipReturnCode : MemoryChild(backend);
  }
  const std::string backendName = argc >= 3 ? argv[2] : "";
  return RunNamedCase(argc,
                      argv,
                      { { "progress", ProgressCase },
                        { "abort", AbortCase },
                        { "workunits", WorkUnitsCase },
                        { "skipped", SkippedOutputCase },
                        { "repeat", RepeatCase },
                        { "factory", FactoryCase },
                        { "memory", [&backendName](Backend b) { return MemoryCase(b, backendName.c_str()); } } });
}
