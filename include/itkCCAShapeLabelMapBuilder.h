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
#ifndef itkCCAShapeLabelMapBuilder_h
#define itkCCAShapeLabelMapBuilder_h

#include "itkCudaConnectedComponentAnalysisEngine.h"
#include "itkLabelMap.h"
#include "itkMultiThreaderBase.h"
#include "itkShapeLabelObject.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <typeinfo>
#include <vector>

namespace itk
{
/** \class CCAMemoryReserve
 * \brief While alive, an allocation that fails first gets memory back from a reserve (one of 64 pieces of
 * 1 MB per failure) and marks the memory exhausted, instead of throwing at once.
 *
 * ITK 5.4 cannot unwind a label object's constructor that runs out of memory: ~LightObject then writes a
 * warning, which allocates, and std::terminate ends the process. With the reserve, the constructor's
 * allocation succeeds; the LabelMap builder sees Exhausted() after the object and throws std::bad_alloc
 * from its own code, which the filter turns into an itk::MemoryAllocationError. The previous new-handler is
 * restored (and called once the reserve is spent) on destruction. The pieces stay allocated between builds
 * (untouched, so address space rather than resident memory): 64 allocations and frees of 1 MB took 2.3 ms
 * per build here, more than a small image's whole analysis; only pieces given out are allocated again.
 * \ingroup CudaConnectedComponentAnalysis
 */
class CCAMemoryReserve
{
public:
  CCAMemoryReserve()
  {
    // Builds of several filters at once share one reserve and one handler (the first installs them).
    const std::lock_guard<std::mutex> lock(Mutex());
    if (Users()++ == 0)
    {
      for (auto & piece : Pieces())
      {
        if (piece.load() == nullptr)
        {
          piece.store(std::malloc(PieceBytes));
        }
      }
      Exhausted().store(false);
      Previous() = std::set_new_handler(&Handler);
    }
  }
  ~CCAMemoryReserve()
  {
    const std::lock_guard<std::mutex> lock(Mutex());
    if (--Users() == 0)
    {
      std::set_new_handler(Previous());
    }
  }
  CCAMemoryReserve(const CCAMemoryReserve &) = delete;
  CCAMemoryReserve &
  operator=(const CCAMemoryReserve &) = delete;

  static bool
  IsExhausted()
  {
    return Exhausted().load(std::memory_order_relaxed);
  }

private:
  static constexpr std::size_t PieceBytes = std::size_t{ 1 } << 20;

  static std::array<std::atomic<void *>, 64> &
  Pieces()
  {
    static std::array<std::atomic<void *>, 64> pieces{};
    return pieces;
  }
  static std::atomic<bool> &
  Exhausted()
  {
    static std::atomic<bool> exhausted{ false };
    return exhausted;
  }
  static std::mutex &
  Mutex()
  {
    static std::mutex mutex;
    return mutex;
  }
  static unsigned &
  Users()
  {
    static unsigned users = 0;
    return users;
  }
  static std::new_handler &
  Previous()
  {
    static std::new_handler previous = nullptr;
    return previous;
  }
  static void
  Handler()
  {
    Exhausted().store(true);
    for (auto & piece : Pieces())
    {
      if (void * memory = piece.exchange(nullptr))
      {
        std::free(memory);
        return; // operator new tries again
      }
    }
    if (Previous())
    {
      Previous()();
      return;
    }
    throw std::bad_alloc();
  }
};

/** \class CCAShapeLabelMapBuilder
 * \brief Fills the LabelMap of CudaConnectedComponentAnalysisImageFilter: one label object per component,
 * its lines (the component's runs, in raster order, as LabelImageToLabelMapFilter makes them) and the
 * attributes CudaConnectedComponentAnalysisEngine computed (compiled, from the engines' exact sums).
 *
 * A template only because the LabelMap type is the filter's template parameter: it builds lines and
 * copies attributes, nothing else.
 * \ingroup CudaConnectedComponentAnalysis
 */
template <typename TLabelMap>
class CCAShapeLabelMapBuilder
{
public:
  using LabelMapType = TLabelMap;
  using LabelObjectType = typename LabelMapType::LabelObjectType;
  using LabelType = typename LabelObjectType::LabelType;
  static constexpr unsigned int ImageDimension = LabelMapType::ImageDimension;
  using EngineType = CudaConnectedComponentAnalysisEngine;

  /** Fills `labelMap` (whose geometry is already the image's, and which is empty) with one object per
   * component on `threader`'s work units, reporting to `progress`; `labelOf(k)` is the label of the k-th
   * component.
   *
   * The objects (lines and attributes) are built in parallel, in blocks taken in label order, while one
   * work unit inserts the finished blocks into the map in that order: the map's insertion is the one
   * serial step, and it runs at the same time as the rest. Without a table of every component's
   * attributes: each object's are computed as it is built. `beforeFirstInsertion` (if any) is called once,
   * before the first object enters the map, while objects are already being built: the filter waits there
   * for the previous update's map to be emptied. */
  template <typename TLabelOf>
  static void
  Build(LabelMapType * labelMap, const EngineType::Lines & lines,
        const EngineType::ShapeAttributeCalculator & calculator, const EngineType::ShapeOptions & options,
        const TLabelOf & labelOf, MultiThreaderBase * threader, ProcessObject * progress,
        const std::function<void()> & beforeFirstInsertion = {})
  {
    const std::size_t numComponents = lines.firstLine.empty() ? 0 : lines.firstLine.size() - 1;
    const unsigned    units = std::max(1u, threader->GetNumberOfWorkUnits());
    // Slices only to report progress from the calling thread between them; few objects take one slice,
    // and one work unit where a parallel loop would cost more than it saves.
    constexpr std::size_t  blockSize = 512;
    const std::size_t      numSlices = std::min<std::size_t>(16, 1 + numComponents / (1u << 16));
    const unsigned         workUnits = numComponents < 4 * blockSize ? 1u : units;
    const CCAMemoryReserve reserve;
    const bool             factoryless = numComponents > 0 && !HasFactoryOverride();
    std::vector<typename LabelObjectType::Pointer> objects;
    bool                                           inserting = false;
    for (std::size_t slice = 0; slice < numSlices; ++slice)
    {
      const std::size_t first = numComponents * slice / numSlices;
      const std::size_t last = numComponents * (slice + 1) / numSlices;
      const std::size_t numBlocks = (last - first + blockSize - 1) / blockSize;
      objects.resize(last - first);
      std::unique_ptr<std::atomic<bool>[]> done(new std::atomic<bool>[numBlocks]);
      for (std::size_t b = 0; b < numBlocks; ++b)
      {
        done[b].store(false, std::memory_order_relaxed);
      }
      std::atomic<std::size_t> nextBlock{ 0 };
      std::atomic<bool>        failed{ false };
      std::exception_ptr       error;
      std::mutex               errorMutex;
      auto                     fail = [&]() {
        const std::lock_guard<std::mutex> lock(errorMutex);
        if (!error)
        {
          error = std::current_exception();
        }
        failed.store(true);
      };
      auto buildBlock = [&](std::size_t b) {
        try
        {
          EngineType::ShapeAttributes attributes;
          const std::size_t           end = std::min(last, first + (b + 1) * blockSize);
          for (std::size_t k = first + b * blockSize; k < end && !failed.load(std::memory_order_relaxed); ++k)
          {
            objects[k - first] = MakeObject(k, lines, calculator, options, labelOf, factoryless, attributes);
          }
        }
        catch (...)
        {
          fail();
        }
        done[b].store(true, std::memory_order_release);
      };
      auto buildBlocks = [&]() {
        for (std::size_t b = nextBlock++; b < numBlocks; b = nextBlock++)
        {
          buildBlock(b);
        }
      };
      auto insertBlocks = [&]() {
        try
        {
          for (std::size_t b = 0; b < numBlocks && !failed.load(); ++b)
          {
            // While block b is being built elsewhere, build the next free one rather than wait.
            while (!done[b].load(std::memory_order_acquire))
            {
              const std::size_t mine = nextBlock++;
              if (mine < numBlocks)
              {
                buildBlock(mine);
              }
              else
              {
                std::this_thread::yield();
              }
            }
            if (!inserting)
            {
              inserting = true;
              if (beforeFirstInsertion)
              {
                beforeFirstInsertion();
              }
            }
            const std::size_t end = std::min(last, first + (b + 1) * blockSize);
            for (std::size_t k = first + b * blockSize; k < end && !failed.load(std::memory_order_relaxed); ++k)
            {
              labelMap->AddLabelObject(objects[k - first]);
              objects[k - first] = nullptr;
            }
          }
        }
        catch (...)
        {
          fail();
        }
      };
      if (workUnits == 1)
      {
        buildBlocks();
        insertBlocks();
      }
      else
      {
        threader->ParallelizeArray(
          0,
          workUnits,
          [&](SizeValueType unit) {
            if (unit == 0)
            {
              insertBlocks();
            }
            else
            {
              buildBlocks();
            }
          },
          nullptr);
      }
      if (error)
      {
        std::rethrow_exception(error);
      }
      if (progress)
      {
        progress->UpdateProgress(static_cast<float>(slice + 1) / numSlices);
      }
    }
  }

  /** Empties `labelMap`, the objects' destruction (their lines) spread over `numberOfThreads` threads of its
   * own: for millions of objects, freeing them one by one in ClearLabels() is a second of the next update.
   * It runs beside the filter's work (on a thread of the filter's), so it does not use the filter's
   * MultiThreader, which the update is using at the same time. */
  static void
  Clear(LabelMapType * labelMap, unsigned numberOfThreads) noexcept
  {
    std::vector<typename LabelObjectType::Pointer> old;
    std::vector<std::thread>                       workers;
    std::size_t                                    pieces = 1;
    auto                                           release = [&old, &pieces](std::size_t p) {
      for (std::size_t i = old.size() * p / pieces; i < old.size() * (p + 1) / pieces; ++i)
      {
        old[i] = nullptr;
      }
    };
    try
    {
      old.reserve(labelMap->GetNumberOfLabelObjects());
      for (typename LabelMapType::Iterator it(labelMap); !it.IsAtEnd(); ++it)
      {
        old.emplace_back(it.GetLabelObject());
      }
      labelMap->ClearLabels();
      pieces = std::max<std::size_t>(1, std::min<std::size_t>(numberOfThreads, old.size() / 4096));
      workers.reserve(pieces);
      for (std::size_t p = 1; p < pieces; ++p)
      {
        workers.emplace_back(release, p); // piece p on worker p - 1
      }
    }
    catch (...)
    {
      // Short of memory or threads (after a failed update, say): what no worker took is freed here.
    }
    release(0);
    for (std::size_t p = workers.size() + 1; p < pieces; ++p)
    {
      release(p);
    }
    for (auto & worker : workers)
    {
      worker.join();
    }
    labelMap->ClearLabels(); // allocates nothing; empties the map where the list could not be made
  }

private:
  /** The LabelMap's label object type, constructible without the object factory. New() asks every
   * registered factory for an override, by class name, for each object: one std::string and one map lookup
   * per factory (an ITK program with the IO factories registered has ten or more), several times the cost
   * of the object itself for millions of objects. The objects are label objects of the LabelMap's type in
   * every other respect (the class adds nothing; GetNameOfClass() is the base's). */
  class FactorylessLabelObject final : public LabelObjectType
  {
  public:
    FactorylessLabelObject() = default;
  };

  /** Whether a registered factory makes something else than LabelObjectType for New(): then every object
   * is made through New(), as ITK's own filters make them. */
  static bool
  HasFactoryOverride()
  {
    const typename LabelObjectType::Pointer probe = LabelObjectType::New();
    return typeid(*probe) != typeid(LabelObjectType);
  }

  static typename LabelObjectType::Pointer
  NewLabelObject(bool factoryless)
  {
    if (!factoryless)
    {
      return LabelObjectType::New();
    }
    typename LabelObjectType::Pointer object = new FactorylessLabelObject;
    object->UnRegister(); // as itkSimpleNewMacro: the smart pointer holds the only reference
    return object;
  }

  template <typename TLabelOf>
  static typename LabelObjectType::Pointer
  MakeObject(std::size_t k, const EngineType::Lines & lines, const EngineType::ShapeAttributeCalculator & calculator,
             const EngineType::ShapeOptions & options, const TLabelOf & labelOf, bool factoryless,
             EngineType::ShapeAttributes & attributes)
  {
    auto object = NewLabelObject(factoryless);
    object->SetLabel(static_cast<LabelType>(labelOf(k)));
    for (std::uint64_t l = lines.firstLine[k]; l < lines.firstLine[k + 1]; ++l)
    {
      typename LabelObjectType::IndexType idx;
      for (unsigned int i = 0; i < ImageDimension; ++i)
      {
        idx[i] = static_cast<IndexValueType>(lines.index[l][i]);
      }
      object->AddLine(idx, static_cast<typename LabelObjectType::LengthType>(lines.length[l]));
    }
    calculator.Compute(k, attributes);
    CopyAttributes(attributes, options, object);
    if (CCAMemoryReserve::IsExhausted())
    {
      throw std::bad_alloc(); // here, not inside the next label object's constructor
    }
    return object;
  }

  static void
  CopyAttributes(const EngineType::ShapeAttributes & a, const EngineType::ShapeOptions & options,
                 LabelObjectType * object)
  {
    typename LabelObjectType::RegionType::IndexType boxIndex;
    typename LabelObjectType::RegionType::SizeType  boxSize;
    typename LabelObjectType::CentroidType          centroid;
    typename LabelObjectType::VectorType            principalMoments;
    typename LabelObjectType::VectorType            ellipsoidDiameter;
    typename LabelObjectType::MatrixType            principalAxes;
    for (unsigned int i = 0; i < ImageDimension; ++i)
    {
      boxIndex[i] = static_cast<IndexValueType>(a.boundingBoxIndex[i]);
      boxSize[i] = static_cast<SizeValueType>(a.boundingBoxSize[i]);
      centroid[i] = a.centroid[i];
      principalMoments[i] = a.principalMoments[i];
      ellipsoidDiameter[i] = a.equivalentEllipsoidDiameter[i];
      for (unsigned int j = 0; j < ImageDimension; ++j)
      {
        principalAxes[i][j] = a.principalAxes[i][j];
      }
    }
    object->SetNumberOfPixels(static_cast<SizeValueType>(a.numberOfPixels));
    object->SetPhysicalSize(a.physicalSize);
    object->SetBoundingBox(typename LabelObjectType::RegionType(boxIndex, boxSize));
    object->SetCentroid(centroid);
    object->SetNumberOfPixelsOnBorder(static_cast<SizeValueType>(a.numberOfPixelsOnBorder));
    object->SetPerimeterOnBorder(a.perimeterOnBorder);
    object->SetPrincipalMoments(principalMoments);
    object->SetPrincipalAxes(principalAxes);
    object->SetElongation(a.elongation);
    object->SetEquivalentSphericalRadius(a.equivalentSphericalRadius);
    object->SetEquivalentSphericalPerimeter(a.equivalentSphericalPerimeter);
    object->SetEquivalentEllipsoidDiameter(ellipsoidDiameter);
    object->SetFlatness(a.flatness);
    if (options.computePerimeter)
    {
      object->SetPerimeter(a.perimeter);
      object->SetRoundness(a.roundness);
      object->SetPerimeterOnBorderRatio(a.perimeterOnBorderRatio);
    }
    if (options.computeFeretDiameter)
    {
      object->SetFeretDiameter(a.feretDiameter);
    }
    if (options.computeOrientedBoundingBox)
    {
      typename LabelObjectType::OrientedBoundingBoxSizeType  obbSize;
      typename LabelObjectType::OrientedBoundingBoxPointType obbOrigin;
      for (unsigned int i = 0; i < ImageDimension; ++i)
      {
        obbSize[i] = a.orientedBoundingBoxSize[i];
        obbOrigin[i] = a.orientedBoundingBoxOrigin[i];
      }
      object->SetOrientedBoundingBoxSize(obbSize);
      object->SetOrientedBoundingBoxOrigin(obbOrigin);
    }
  }
};
} // namespace itk

#endif
