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
// The slab engine: an image too large for one analysis of an engine -- past the CUDA engine's 32-bit
// indices or past the memory budget (Request::memoryBudget) -- labeled as slabs of whole planes along its
// slowest axis (z in 3-D, y in 2-D) by that engine, one after the other, and merged on the host: the
// components touching across each face between two slabs are united, numbered in raster order of their first
// pixel (ITK's numbering), and their sums added, with the sums that the cut falsified (border pixels and faces
// on the cut, perimeter intercepts across it) corrected from the two planes of each face. The result is the one
// unsliced analysis would give, bit for bit. The label image and the LabelMap's lines come from the inner engine
// (and a partner engine, where one is given) again, slab by slab (analyzed again where neither holds the slab),
// through a table from each slab's components to the merged ones: labels in the output type, on the device for
// the CUDA engine, straight into the output.
#ifndef itkCCASlabEngine_h
#define itkCCASlabEngine_h

#include "itkCCAComponentSums.h"
#include "itkCCAEngine.h"
#include "itkCCAPairsAcross.h"

#include <array>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace itk
{
namespace cca
{

/** How a request is cut: slab s holds the planes [firstPlane[s], firstPlane[s + 1]) of the slowest axis. */
struct SlabPlan
{
  unsigned                   axis = 1;        ///< the slowest axis (dimension - 1)
  std::uint64_t              planePixels = 0; ///< pixels of one plane
  std::vector<std::uint64_t> firstPlane;      ///< one more than the slabs

  std::size_t
  NumberOfSlabs() const
  {
    return firstPlane.empty() ? 0 : firstPlane.size() - 1;
  }
};

/** Whether the request's image can be cut into slabs: a host image of 2 or 3 dimensions, not a batch. */
bool
CanCutIntoSlabs(const Request & request);

/** The planes per slab that `engine` should take for `request` first, or 0 where it takes the image whole (or
 * cannot be cut, or a plane is past the engine's limits): within the engine's pixel limit and, under an
 * explicit Request::memoryBudget, within that budget at the engine's worst case per pixel. Under the default
 * budget the engine tries; the facade halves the slabs where it runs out of memory. */
std::uint64_t
PlanesPerSlab(const Engine & engine, const Request & request);

/** The equivalences and corrections across the faces of a slabbed analysis (itkCCASlabFaces.cxx). Component
 * ids are global: slab s's local component l (1-based in its labels) is firstComponent[s] + l - 1. */
struct SlabFaces
{
  SlabPlan                                plan;
  std::array<std::uint64_t, MaxDimension> size{ { 1, 1, 1 } };
  Connectivity                            connectivity;
  std::vector<std::uint64_t>              firstComponent; ///< one more than the slabs
  /** Per slab, the labels (uint32, 1-based, 0 background) of its first and of its last plane, where they
   * touch another slab (empty otherwise). */
  std::vector<std::vector<std::uint32_t>> firstPlaneLabels, lastPlaneLabels;
  /** Multi-label input: the class of every global component id (pieces touching across a face join only where
   * their classes are equal); empty otherwise. */
  std::vector<std::int64_t> classOf;

  /** Periodic boundaries (Connectivity::periodicAxes): per wrapped axis, the global ids + 1 (0: background) of
   * the pixels on the image's first and on its last index along it, as a plane over the two other axes (the
   * lower one as the plane's x). */
  struct WrappedFace
  {
    unsigned                   axis = 0;
    PlaneShape                 shape;
    std::vector<std::uint64_t> first, last;
  };
  std::vector<WrappedFace> wrapped;

  /** Sets up `wrapped` for the request's periodic axes (empty planes). */
  void
  PrepareWrappedFaces(const Request & request);

  /** Copies into `wrapped` the pixels of slab s that lie on a wrapped face, from the slab's whole label image
   * (uint32, 1-based); firstComponent[s] must be set. */
  void
  TakeWrappedFaces(std::size_t s, const std::vector<std::uint32_t> & slabLabels);

  /** The merged component of every global component id (raster order of first pixels: ITK's numbering), and
   * how many there are; on `numberOfThreads` threads. */
  std::uint64_t
  Merge(std::vector<std::uint64_t> & mergedOf, unsigned numberOfThreads) const;

  /** Undoes in `sums` (per global component id, the cut axis already shifted) what the cut falsified: the
   * pixels and faces of inner cut planes taken as border, and the intercepts across a cut between pixels that
   * end up in one component. */
  void
  CorrectCutSums(const std::vector<std::uint64_t> & mergedOf, bool perimeter, std::vector<ComponentSums> & sums) const;

  /** Connectivities short of full: two pieces of one slab that the merge joins (through other slabs) may touch
   * inside the slab through an offset the connectivity does not join (face: an edge or a corner; face and edge: a
   * corner), which the slab's analysis counted as intercepts (another component) and the whole one does not.
   * `labels` holds the slab's rows [firstRow, firstRow + rows.size()/width) (uint32, 1-based), covering every such
   * piece; `split[l]` marks the slab's local component l + 1 as one of them. */
  void
  CorrectSplitContacts(std::size_t slab, const std::vector<std::uint32_t> & labels, std::uint64_t firstRow,
                       const std::vector<std::uint8_t> & split, const std::vector<std::uint64_t> & mergedOf,
                       std::vector<ComponentSums> & sums) const;
};

/** Moves a slab's sums from its own indices to the image's: `offset` planes along `axis`. */
void
ShiftSums(ComponentSums & sums, unsigned axis, std::uint64_t offset, bool shapeSums);

/** The slab engine's host tables, which can outlive it: with millions of components, fresh memory's page faults
 * cost more than the slabs' labeling, so that the facade keeps them from one analysis to the next. */
struct SlabTables
{
  std::vector<ComponentSums> pieces;     ///< per global component id (the first firstComponent.back() in use)
  std::vector<ComponentSums> sums;       ///< per merged component
  std::vector<std::uint64_t> firstPiece; ///< per merged component, its first piece's global id
  std::vector<std::uint64_t> mergedOf;   ///< per global component id, its merged component
};

/** An Engine over another one, which it drives slab by slab: see the top of this file. */
class SlabEngine final : public Engine
{
public:
  /** `inner` must outlive this engine, and `tables` and `partner` where given; host work runs on `numberOfThreads`
   * threads (0: all). Without `tables` the engine has its own. With `partner`, a second engine of inner's kind
   * (the CUDA engine: its own stream, staging and device buffers), the slabs are analyzed one after the other,
   * alternating between the two engines, so that the last two stay held, one by each; the label image is then
   * written by both at once, each engine on a host thread of its own, its held slab first: with two slabs, none
   * is analyzed twice, and one slab's labels are written while the other's come down. */
  SlabEngine(Engine & inner, unsigned numberOfThreads, SlabTables * tables = nullptr, Engine * partner = nullptr);

  /** Analyzes `request` in slabs of `planesPerSlab` planes (the last one may be thinner). */
  std::uint64_t
  AnalyzeInSlabs(const Request & request, std::uint64_t planesPerSlab);

  std::size_t
  GetNumberOfSlabs() const
  {
    return m_Faces.plan.NumberOfSlabs();
  }

  std::string
  GetName() const override;
  std::string
  GetDescription() const override;
  /** With PlanesPerSlab()'s slabs. */
  std::uint64_t
  Analyze(const Request & request) override;
  const std::vector<ComponentSums> &
  GetFeatures() const override;
  /** Empty: a feature image is not analyzed in slabs (AnalyzeInSlabs() refuses it). */
  const IntensitySums &
  GetIntensitySums() const override
  {
    return m_NoIntensity;
  }
  void
  WriteLabels(const LabelOutput & output) override;
  void
  ExportLines(const LineLayout & layout, const RunSelection & selection, unsigned numberOfThreads,
              Lines & lines) override;
  void
  WriteBasicColumns(const BasicGeometry & geometry, const BasicColumns & columns,
                    const std::uint64_t * newIndex) override;
  std::uint64_t
  GetMaximumPixels() const override;
  double
  GetWorstCaseBytesPerPixel(const Request & request) const override;
  /** The inner engine's. */
  void
  ComputeContacts(const ContactRequest & request, ContactTable & table) override
  {
    m_Inner.ComputeContacts(request, table);
  }

private:
  /** Slab s of the analyzed request, as a request of its own (no post-processing: that is the merged one's). */
  Request
  SlabRequest(std::size_t s) const;
  /** The engines the last analysis alternated between: 2 with a partner and several slabs, else 1. */
  unsigned
  NumberOfEngines() const
  {
    return m_TwoEngines ? 2u : 1u;
  }
  /** The engine that analyzes slab s: 0 (the inner one) or 1 (the partner), counted from the last slab, so that
   * the inner engine ends holding the last one and the partner the one before it. */
  unsigned
  EngineIndexOf(std::size_t s) const
  {
    return static_cast<unsigned>((m_Faces.plan.NumberOfSlabs() - 1 - s) % NumberOfEngines());
  }
  Engine &
  EngineOf(std::size_t s)
  {
    return EngineIndexOf(s) == 0 ? m_Inner : *m_Partner;
  }
  /** Calls work(e) for each engine e, on a host thread of its own where there are two. */
  template <typename TWork>
  void
  ForEachEngine(const TWork & work);
  /** Slab s analyzed by its engine, the labels of its face planes kept; returns its component count. */
  std::uint64_t
  AnalyzeSlab(std::size_t s);
  /** Slab s's `count` sums as the next global component ids, moved to the image's indices. */
  void
  PlacePieces(std::size_t s, const ComponentSums * sums, std::uint64_t count);
  /** CorrectSplitContacts() for each slab holding several pieces of one merged component. */
  void
  CorrectSplitPieces(std::vector<ComponentSums> & pieces);
  /** Has slab s's engine hold its analysis, analyzing it again where it holds another. */
  void
  HoldSlab(std::size_t s);
  /** The slabs in the order that analyzes least: the held ones first. With `engine`, that engine's slabs only. */
  std::vector<std::size_t>
  SlabOrder(unsigned engine = UINT_MAX) const;
  /** For slab s's components, their merged one's index, or with `newIndex` (the post-processing) that index's. */
  void
  SlabTable(std::size_t s, const std::uint64_t * newIndex, std::vector<std::uint64_t> & table) const;
  unsigned
  Threads(unsigned numberOfThreads) const;

  Engine &                   m_Inner;
  Engine *                   m_Partner;
  bool                       m_TwoEngines = false; ///< the last analysis alternated between inner and partner
  unsigned                   m_NumberOfThreads;
  Request                    m_Request;
  IntensitySums              m_NoIntensity;
  SlabFaces                  m_Faces;
  SlabTables                 m_OwnTables;
  SlabTables &               m_Tables;
  std::array<std::size_t, 2> m_HeldSlab{ { SIZE_MAX, SIZE_MAX } }; ///< per engine, the slab it holds
  bool                       m_Analyzed = false;
};

} // namespace cca
} // namespace itk

#endif
