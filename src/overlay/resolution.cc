#include "overlay/resolution.h"

namespace lancelet::overlay {

std::vector<OverlayPatch> ResolveRange(const FragmentOverlays& set, int32_t field_id, uint64_t start,
                                       uint64_t count) {
  std::vector<OverlayPatch> patches;
  const auto& overlays = set.overlays();
  std::vector<bool> claimed;  // sized lazily: most ranges meet no overlay at all
  for (size_t i = overlays.size(); i-- > 0;) {
    const Overlay& o = overlays[i];
    const format::RoaringBitmap* coverage = o.CoverageOf(field_id);
    if (!coverage) continue;
    OverlayPatch patch;
    patch.overlay = i;
    patch.field_index = o.FieldIndex(field_id);
    uint64_t rank = coverage->Rank(uint32_t(std::min<uint64_t>(start, UINT32_MAX)));
    coverage->ForEachInRange(start, start + count, [&](uint32_t offset) {
      int64_t pos = int64_t(offset - start);
      if (claimed.empty() || !claimed[size_t(pos)]) {
        patch.positions.push_back(pos);
        patch.ranks.push_back(rank);
      }
      ++rank;
    });
    if (patch.positions.empty()) continue;
    if (claimed.empty()) claimed.assign(count, false);
    for (int64_t p : patch.positions) claimed[size_t(p)] = true;
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
      by_overlay[i].positions.push_back(int64_t(k));
      by_overlay[i].ranks.push_back(coverage->Rank(uint32_t(offset)));
      break;
    }
  }
  std::vector<OverlayPatch> patches;
  for (auto& p : by_overlay)
    if (!p.positions.empty()) patches.push_back(std::move(p));
  return patches;
}

}  // namespace lancelet::overlay
