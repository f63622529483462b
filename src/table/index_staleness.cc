#include "table/index_staleness.h"

#include <algorithm>

namespace lancelet::table {

IndexStaleness::IndexStaleness(const format::LanceSchema& schema, const std::vector<int32_t>& field_ids,
                               uint64_t dataset_version)
    : dataset_version_(dataset_version) {
  for (int32_t id : field_ids) {
    if (auto path = schema.StructPathOf(id)) paths_.push_back(std::move(*path));
    else unresolved_.push_back(id);
  }
}

IndexStaleness IndexStaleness::Of(const format::LanceSchema& schema, const lance::table::IndexMetadata& index) {
  return IndexStaleness(schema, {index.fields().begin(), index.fields().end()}, index.dataset_version());
}

bool IndexStaleness::Affects(int32_t changed) const {
  return std::find(unresolved_.begin(), unresolved_.end(), changed) != unresolved_.end() ||
         std::any_of(paths_.begin(), paths_.end(), [&](const format::StructPath& p) { return p.AffectedBy(changed); });
}

format::RoaringBitmap IndexStaleness::CellsOf(const overlay::Overlay& overlay) const {
  if (overlay.committed_version <= dataset_version_) return {};
  return overlay.CoverageWhere([&](int32_t id) { return Affects(id); });
}

format::RoaringBitmap IndexStaleness::RowsOf(const overlay::FragmentOverlays& overlays) const {
  format::RoaringBitmap out;
  for (const auto& o : overlays.overlays()) out |= CellsOf(o);
  return out;
}

}  // namespace lancelet::table
