// Cell resolution: for a field and the physical rows a read wants, which overlay supplies
// each cell and at which rank of its value column.
//
// Rules (spec "Coverage and resolution"): the newest overlay covering (offset, field)
// wins; cells no overlay covers fall through to the base. Deleted offsets are the
// fragment reader's business: it drops them after resolution, so deletions always win.
//
// Cost: no read asks a bitmap for a rank or a membership per cell, however many layers
// there are and whatever the bitmaps' container kinds. A first read of a version works
// from the coverage bitmaps (CoverageLayers): a range counts each layer's members in it
// (a run container costs its runs) and carries the rank of its start from the range
// before (RangeCursor), listing no cells (a patch is its layer's bitmap over the range,
// scattered by ApplyReplacements while it walks the bitmap); offsets
// are looked up in each bitmap in one pass over its containers
// (RoaringBitmap::MembersAmong). A range lets newer layers overwrite older ones (each
// layer's cells there are one run of its values); offsets are claimed newest first, so a
// take reads each value it returns and no other. A field read again has its layers
// listed once (FieldLayers: the rank of a cell is its index in its layer's list) and
// merged into one (MergeCells, MergedLayers): then a batch costs one layer however many
// overlays there are.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "lancelet/array.h"
#include "overlay/fragment_overlays.h"

namespace lancelet::overlay {

// One overlay's part in one field: the offsets it covers, ascending, so that the value
// of the k-th covered offset is at rank k of the overlay's value column. Held in one of
// two forms, whichever is smaller: a list of the cells (scattered coverage), or the
// maximal runs with the rank each starts at (coverage made of runs, such as a
// full-column UPDATE, costs its runs, not its rows).
struct Layer {
  struct Run {
    uint32_t start;
    uint64_t end;   // exclusive
    uint64_t rank;  // rank of `start`
  };
  size_t overlay = 0;  // index into FragmentOverlays::overlays()
  std::vector<uint32_t> cells;  // the list form, or empty
  std::vector<Run> runs;        // the run form, or empty

  bool listed() const { return runs.empty(); }
  // How many cells the layer covers (its value column's ranks in use).
  uint64_t covered() const {
    return listed() ? cells.size() : runs.back().rank + (runs.back().end - runs.back().start);
  }
};

// The `overlay` of a merged layer: its values are FieldLayers::merged_values, not an
// overlay file's column.
inline constexpr size_t kMergedOverlay = SIZE_MAX;

// A field's layers in a fragment, newest first; an overlay that does not cover the field
// has no layer.
struct CoverageLayers;

struct FieldLayers {
  std::vector<Layer> newest_first;
  // Set in a merge of several layers (MergeLayers): the one layer's values, in cell order.
  ArrayPtr merged_values;

  // Lists each of `coverage`'s layers, in its order.
  static std::shared_ptr<const FieldLayers> Build(const CoverageLayers& coverage);
  bool empty() const { return newest_first.empty(); }
  uint64_t MemoryBytes() const;
};

// A field's layers in a fragment as their coverage bitmaps, newest first: made in
// O(layers), with no cell listed. A first read resolves against these, so that a fresh
// process pays for the containers, ranges and offsets it meets, and holds no list of
// every covered cell (which FieldLayers::Build costs in time and memory).
struct CoverageLayers {
  struct Layer {
    size_t overlay = 0;  // index into FragmentOverlays::overlays()
    std::shared_ptr<const format::RoaringBitmap> coverage;
    // n when the coverage is exactly [0, n) (a full-column UPDATE): offset k below it is
    // a member of rank k, with no bitmap search. 0 otherwise.
    uint64_t prefix_end = 0;
  };
  std::vector<Layer> newest_first;
  // How many fragment readers read the field's overlays (scan or take): layers that are
  // read again get merged (a version read once pays no merge; one read often pays one
  // layer).
  mutable std::atomic<uint32_t> reads{0};

  static std::shared_ptr<const CoverageLayers> Of(const FragmentOverlays& overlays, int32_t field_id);
  bool empty() const { return newest_first.empty(); }
  uint64_t MemoryBytes() const { return sizeof(*this) + newest_first.size() * sizeof(Layer); }
};

// The cell each layer supplies once newer layers have taken theirs, ascending: cell
// cells[k] gets its value from layers.newest_first[source[k]] at rank ranks[k]. Costs
// O(covered cells + the span from the first covered cell to the last).
struct MergedCells {
  std::vector<uint32_t> cells;
  std::vector<uint32_t> source;
  std::vector<uint64_t> ranks;
};
MergedCells MergeCells(const FieldLayers& layers);
// One layer (overlay kMergedOverlay) covering `cells` (ascending, unique) whose values
// are `values`, in cell order.
std::shared_ptr<const FieldLayers> MergedLayers(std::vector<uint32_t> cells, ArrayPtr values);

// The cells one overlay supplies to a read: cell k goes to output position
// cells[k] - origin and is read from rank Rank(k) of the overlay's value column.
// Move-only: `cells` may view `owned`, or, for a range of a listed layer, the layer's own
// cell list (valid while the FieldLayers lives), so a batch copies no offsets.
//
// A range resolved from coverage bitmaps leaves its cells unlisted: they are the members
// of `coverage` in [origin, end), `count` of them, and ApplyReplacements scatters
// fixed-width values while walking the bitmap.
struct OverlayPatch {
  size_t overlay = 0;  // index into FragmentOverlays::overlays()
  std::span<const uint32_t> cells;
  uint32_t origin = 0;
  std::vector<uint32_t> owned;
  const format::RoaringBitmap* coverage = nullptr;  // the unlisted form when set
  uint64_t end = 0;
  uint64_t count = 0;
  // The rank of cell k is ranks[k], or first_rank + k when `ranks` is empty: the common
  // case in a range, where no newer overlay took any of this one's cells there, so its
  // values are one run of its column.
  uint64_t first_rank = 0;
  std::vector<uint64_t> ranks;

  OverlayPatch() = default;
  OverlayPatch(OverlayPatch&&) = default;  // a moved vector keeps its buffer: `cells` stays valid
  OverlayPatch& operator=(OverlayPatch&&) = default;
  OverlayPatch(const OverlayPatch&) = delete;
  OverlayPatch& operator=(const OverlayPatch&) = delete;

  size_t size() const { return coverage ? size_t(count) : cells.size(); }
  // Listed form only.
  uint32_t Position(size_t k) const { return cells[k] - origin; }
  // The cells in either form, listed.
  std::vector<uint32_t> ListCells() const;
  bool contiguous() const { return ranks.empty(); }
  uint64_t Rank(size_t k) const { return ranks.empty() ? first_rank + k : ranks[k]; }
};

// The values of one overlay at every position of a read, in order: ranks
// [first_rank, first_rank + count), or `ranks` when not empty.
struct WholeRead {
  size_t overlay = 0;
  uint64_t first_rank = 0;
  uint64_t count = 0;
  std::vector<uint64_t> ranks;
};

// What a read of one field takes from the overlays. Positions ascend within a patch.
struct Resolution {
  // Set when one overlay covers every wanted row: its values are the read's starting
  // point, and no base data file is read. The patches (of newer overlays) apply on top.
  std::optional<WholeRead> base;
  // Applied in order: where two patches name one position, the later one's value stands.
  std::vector<OverlayPatch> patches;
};

// The rows [start, start + count) of a field. Patches come oldest overlay first and may
// overlap; every patch is contiguous (one run of its overlay's values).
Resolution ResolveRange(const FieldLayers& layers, uint64_t start, uint64_t count);
// Where a walk of a layer's coverage stands: `rank` of its members lie below `position`.
struct RangeCursor {
  uint64_t position = 0;
  uint64_t rank = 0;
};
// The same from the coverage bitmaps, listing no cells: a patch is its layer's bitmap
// over the range (the unlisted form), and a layer covering all of it is counted. `cursors` (one per
// layer, from {0, 0}) carry each layer's rank from one range to the next, so a scan
// walking a fragment in order never ranks; a range elsewhere ranks once per layer.
Resolution ResolveRange(const CoverageLayers& layers, uint64_t start, uint64_t count,
                        std::vector<RangeCursor>& cursors);
// The rows at `offsets` (any order, duplicates allowed); output position k is offsets[k].
// Patches come newest overlay first and are disjoint. The two forms give the same answer.
Resolution ResolveOffsets(const FieldLayers& layers, std::span<const uint64_t> offsets);
Resolution ResolveOffsets(const CoverageLayers& layers, std::span<const uint64_t> offsets);

// Process-wide tallies, for tests that hold resolution to its cost.
struct ResolutionCounters {
  std::atomic<uint64_t> cells_listed{0};   // cells (or runs) FieldLayers::Build listed
  std::atomic<uint64_t> cells_visited{0};  // listed cells (or runs) a resolution looked at
  // Offsets looked up in coverage bitmaps, each bitmap in one bulk pass (CoverageLayers).
  std::atomic<uint64_t> offsets_looked_up{0};
  // Overlay values decoded as whole columns (table::FragmentReader keeps small files'
  // columns, and merges read whole ones), rather than just the ranks a read needs.
  std::atomic<uint64_t> values_decoded_whole{0};
};
ResolutionCounters& Counters();

}  // namespace lancelet::overlay
