// Cell resolution: for a field and a set of physical offsets, which overlay supplies
// each cell and at which rank of its value column.
//
// Rules (spec "Coverage and resolution"): the newest overlay covering (offset, field)
// wins; cells no overlay covers fall through to the base. Deleted offsets are the
// fragment reader's business: it drops them after resolution, so deletions always win.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "overlay/fragment_overlays.h"

namespace lancelet::overlay {

// The cells one overlay supplies: cell k goes to output position cells[k] - origin and is
// read from rank Rank(k) of the overlay's value column for the field; cells ascend.
// Move-only: `cells` may view `owned`, or, for a range, the overlay's own supplied-cell
// list (valid while the FragmentOverlays lives), so a batch copies no offsets.
struct OverlayPatch {
  size_t overlay = 0;   // index into FragmentOverlays::overlays()
  int field_index = 0;  // index of the field in the overlay's data_file.fields
  std::span<const uint32_t> cells;
  uint32_t origin = 0;
  std::vector<uint32_t> owned;
  // The rank of cell k is ranks[k], or first_rank + k when `ranks` is empty: the common
  // case in a range, where no newer overlay took any of this one's cells, so its values
  // are one run of its column.
  uint64_t first_rank = 0;
  std::vector<uint64_t> ranks;

  OverlayPatch() = default;
  OverlayPatch(OverlayPatch&&) = default;  // a moved vector keeps its buffer: `cells` stays valid
  OverlayPatch& operator=(OverlayPatch&&) = default;
  OverlayPatch(const OverlayPatch&) = delete;
  OverlayPatch& operator=(const OverlayPatch&) = delete;

  size_t size() const { return cells.size(); }
  uint32_t Position(size_t k) const { return cells[k] - origin; }
  bool contiguous() const { return ranks.empty(); }
  uint64_t Rank(size_t k) const { return ranks.empty() ? first_rank + k : ranks[k]; }
};

// Cells of `field_id` over physical rows [start, start + count). Cost: the covered cells
// in the range, extracted in bulk from each overlay's `supplies` bitmap, not the
// fragment size; an overlay shadowed by a newer one also pays a rank lookup per cell.
std::vector<OverlayPatch> ResolveRange(const FragmentOverlays& overlays, int32_t field_id, uint64_t start,
                                       uint64_t count);
// Cells of `field_id` at arbitrary physical offsets (any order, duplicates allowed):
// one membership test per overlay per offset, newest first.
std::vector<OverlayPatch> ResolveOffsets(const FragmentOverlays& overlays, int32_t field_id,
                                         std::span<const uint64_t> offsets);

// Every cell of `field_id` that any overlay supplies, all overlays merged in offset
// order: cells[k] takes rank ranks[k] of overlay sources[k]'s value column. A scan
// builds it once per fragment version, so that each batch then patches its cells in
// one pass, whatever the number of layers (see ResolvedColumn).
struct MergedCells {
  std::vector<uint32_t> cells;
  std::vector<uint32_t> sources;  // indices into FragmentOverlays::overlays()
  std::vector<uint64_t> ranks;
};
MergedCells MergeSupplied(const FragmentOverlays& overlays, int32_t field_id);

}  // namespace lancelet::overlay
