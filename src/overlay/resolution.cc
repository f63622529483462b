#include "overlay/resolution.h"

#include <algorithm>

#include "lancelet/error.h"

namespace lancelet::overlay {

std::vector<OverlayPatch> ResolveRange(const FragmentOverlays& set, int32_t field_id, uint64_t start,
                                       uint64_t count) {
  std::vector<OverlayPatch> patches;
  const auto& overlays = set.overlays();
  const uint64_t end = start + count;
  for (size_t i = overlays.size(); i-- > 0;) {
    const Overlay& o = overlays[i];
    const format::RoaringBitmap* supplies = o.SuppliesOf(field_id);
    if (!supplies) continue;
    // The supplied cells in the range are the members of rank [first, last).
    const std::vector<uint32_t>* list = o.SuppliedListOf(field_id);
    uint64_t first, last;
    if (list) {
      first = uint64_t(std::lower_bound(list->begin(), list->end(), start) - list->begin());
      last = uint64_t(std::lower_bound(list->begin() + int64_t(first), list->end(), end) - list->begin());
    } else {
      first = supplies->Rank(uint32_t(std::min<uint64_t>(start, UINT32_MAX)));
      last = end > UINT32_MAX ? supplies->Cardinality() : supplies->Rank(uint32_t(end));
    }
    const size_t n = size_t(last - first);
    if (n == 0) continue;
    OverlayPatch patch;
    patch.overlay = i;
    patch.field_index = o.FieldIndex(field_id);
    if (list) {
      patch.cells = std::span<const uint32_t>(list->data() + first, n);
    } else {
      patch.owned.resize(n);
      supplies->MembersByRank(first, n, patch.owned.data());
      patch.cells = patch.owned;
    }
    patch.origin = uint32_t(start);
    const format::RoaringBitmap* coverage = o.CoverageOf(field_id);
    if (supplies != coverage) {
      // A rank is the position in the overlay's value column, counted over all it covers.
      patch.ranks.resize(n);
      for (size_t k = 0; k < n; ++k) patch.ranks[k] = coverage->Rank(patch.cells[k]);
    }
    if (supplies == coverage) {
      patch.first_rank = first;  // nothing shadowed: the values are one run of the column
    } else if (patch.ranks.back() - patch.ranks.front() + 1 == n) {
      patch.first_rank = patch.ranks.front();
      patch.ranks.clear();
    }
    patches.push_back(std::move(patch));
  }
  return patches;
}

std::vector<OverlayPatch> ResolveOffsets(const FragmentOverlays& set, int32_t field_id,
                                         std::span<const uint64_t> offsets) {
  const auto& overlays = set.overlays();
  std::vector<OverlayPatch> by_overlay(overlays.size());
  for (size_t i = 0; i < overlays.size(); ++i) {
    by_overlay[i].overlay = i;
    by_overlay[i].field_index = overlays[i].FieldIndex(field_id);
  }
  for (size_t k = 0; k < offsets.size(); ++k) {
    uint64_t offset = offsets[k];
    if (offset > UINT32_MAX) continue;
    for (size_t i = overlays.size(); i-- > 0;) {
      const format::RoaringBitmap* coverage = overlays[i].CoverageOf(field_id);
      if (!coverage || !coverage->Contains(uint32_t(offset))) continue;
      by_overlay[i].owned.push_back(uint32_t(k));
      by_overlay[i].ranks.push_back(coverage->Rank(uint32_t(offset)));
      break;
    }
  }
  std::vector<OverlayPatch> patches;
  for (auto& p : by_overlay)
    if (!p.owned.empty()) {
      p.cells = p.owned;
      patches.push_back(std::move(p));
    }
  return patches;
}

MergedCells MergeSupplied(const FragmentOverlays& set, int32_t field_id) {
  // Each overlay's supplied cells ascend and no two overlays supply the same cell, so
  // sorting (cell << 32 | entry) orders the entries by cell with no ties.
  MergedCells unsorted;
  const auto& overlays = set.overlays();
  for (size_t i = 0; i < overlays.size(); ++i) {
    const format::RoaringBitmap* supplies = overlays[i].SuppliesOf(field_id);
    if (!supplies) continue;
    const format::RoaringBitmap* coverage = overlays[i].CoverageOf(field_id);
    const std::vector<uint32_t> cells = supplies->ToVector();
    for (size_t k = 0; k < cells.size(); ++k) {
      unsorted.cells.push_back(cells[k]);
      unsorted.sources.push_back(uint32_t(i));
      unsorted.ranks.push_back(supplies == coverage ? k : coverage->Rank(cells[k]));
    }
  }
  const size_t n = unsorted.cells.size();
  if (n > UINT32_MAX) ThrowCorrupt("{} overlay cells of field {} in one fragment", n, field_id);
  std::vector<uint64_t> order(n);
  for (size_t e = 0; e < n; ++e) order[e] = uint64_t(unsorted.cells[e]) << 32 | e;
  std::sort(order.begin(), order.end());
  MergedCells merged;
  merged.cells.reserve(n);
  merged.sources.reserve(n);
  merged.ranks.reserve(n);
  for (uint64_t key : order) {
    const size_t e = size_t(key & UINT32_MAX);
    merged.cells.push_back(unsorted.cells[e]);
    merged.sources.push_back(unsorted.sources[e]);
    merged.ranks.push_back(unsorted.ranks[e]);
  }
  return merged;
}

}  // namespace lancelet::overlay
