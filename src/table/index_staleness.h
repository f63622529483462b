// Which rows of a fragment an index has not seen: the one rule for index planning (the
// cells a query re-evaluates), ListIndices' stale_rows, compaction planning and explain
// (stale_index_rows), and the commits that decide whether an index still covers a
// fragment (CarryIndexes).
//
// An index records the version its values were read from (dataset_version). An overlay
// committed after that version (committed_version > dataset_version) changed the cells
// it covers behind the index's back when it covers an indexed field, an ancestor of one
// (a struct replaced whole) or a descendant of one (a struct's child). A row is stale
// once, however many such overlays cover it.
#pragma once

#include <cstdint>
#include <vector>

#include "format/lance_schema.h"
#include "format/roaring_bitmap.h"
#include "overlay/fragment_overlays.h"
#include "table.pb.h"

namespace lancelet::table {

class IndexStaleness {
 public:
  // An index on the fields `field_ids` of `schema`, built from `dataset_version`. An id
  // the schema does not have matches itself alone. `schema` must outlive this.
  IndexStaleness(const format::LanceSchema& schema, const std::vector<int32_t>& field_ids, uint64_t dataset_version);
  static IndexStaleness Of(const format::LanceSchema& schema, const lance::table::IndexMetadata& index);

  // Whether a change to field `changed` changes values the index holds.
  bool Affects(int32_t changed) const;
  // Whether an overlay committed at `committed_version` on field `changed` makes the
  // cells it covers stale.
  bool Stales(int32_t changed, uint64_t committed_version) const {
    return committed_version > dataset_version_ && Affects(changed);
  }
  // The cells of `overlay` that are stale (empty when it is not newer than the index).
  format::RoaringBitmap CellsOf(const overlay::Overlay& overlay) const;
  // The stale rows of the fragment `overlays` belong to.
  format::RoaringBitmap RowsOf(const overlay::FragmentOverlays& overlays) const;

 private:
  std::vector<int32_t> unresolved_;         // ids the schema does not have
  std::vector<format::StructPath> paths_;   // the others
  uint64_t dataset_version_;
};

}  // namespace lancelet::table
