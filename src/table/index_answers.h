// What a filtered scan's index plan found (table/index_plan.cc): the segments it could
// search, the filter's answerable part, and each leaf's answer per segment. Kept with the
// plan (IndexedRows) so that the scan can check the rows an answer named against their
// values (table/hit_check.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "format/lance_schema.h"
#include "format/roaring_bitmap.h"
#include "index/index_query.h"
#include "index/scalar_index.h"
#include "table/dataset_state.h"

namespace lancelet::table {

struct IndexSegment {
  const lance::table::IndexMetadata* meta;
  index::IndexKind kind;
  std::optional<format::RoaringBitmap> fragments;  // nullopt: every fragment
  format::StructPath path;                         // the indexed field

  bool Covers(uint64_t fragment_id) const { return !fragments || fragments->Contains(uint32_t(fragment_id)); }
};

// One leaf's answer: per segment, its hits (the changed cells' whose new value may
// match included), by fragment, as row addresses.
struct LeafAnswer {
  std::vector<const IndexSegment*> segments;
  std::vector<index::RowAddrMap> hits;
  std::vector<std::shared_ptr<const DatasetState::StaleCells>> stale;

  // The segment answering for `fragment_id` (the first listed covering it), or -1.
  int SegmentFor(uint64_t fragment_id) const {
    for (size_t s = 0; s < segments.size(); ++s)
      if (segments[s]->Covers(fragment_id)) return int(s);
    return -1;
  }
};

struct IndexAnswers {
  // The segments lancelet can query, by column (a struct path joined with '.').
  std::map<std::string, std::vector<IndexSegment>> segments;
  index::IndexQuery query;
  std::map<const index::IndexLeaf*, LeafAnswer> answers;  // keyed by the leaves of `query`
};

}  // namespace lancelet::table
