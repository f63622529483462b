// Where a filtered scan uses the dataset's scalar indexes (BTree, Bitmap).
//
// The filter's answerable part (index::IndexQuery) is searched in every index segment on
// its columns. Per fragment a segment covers (its fragment_bitmap; none: every
// fragment), a leaf's rows are the segment's hits plus the fragment's *stale* rows whose
// new value may match: the coverage, on the indexed field, an ancestor or a descendant
// of it, of every overlay committed after the segment's dataset_version (those cells may
// hold values the index never saw). They are searched together with the segment, their
// new values in an in-memory BTree sharing its page lookup.
// AND intersects, OR unites; a leaf no segment covers in a fragment means "every row",
// so such a fragment is scanned whole. The scan then evaluates the whole filter at the
// candidate offsets only, so stale rows are re-evaluated against their current values
// and a stale hit that no longer matches is dropped. A fragment whose candidates are
// dense (more than 256 and more than 1/256 of its rows) is scanned whole, which is then
// cheaper than reading them by offset.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lancelet/expr.h"
#include "table/dataset_state.h"

namespace lancelet::table {

struct IndexAnswers;  // table/index_answers.h

struct IndexedRows {
  // Fragment id -> the offsets to evaluate the filter at, ascending. A fragment not
  // listed is scanned whole.
  std::map<uint64_t, std::vector<uint64_t>> candidates;
  // One per index segment searched, for EXPLAIN.
  struct Use {
    std::string index;      // name
    std::string predicate;  // the leaf it answered
    uint64_t fragments = 0; // live fragments it covers
    // Counted only when PlanIndexedRows is asked to (EXPLAIN), as they take a search of
    // their own: rows its files returned, and the changed cells whose new value may match.
    uint64_t hits = 0;
    uint64_t stale = 0;           // cells of its field that overlays newer than it changed
    uint64_t stale_matching = 0;  // of those, the ones re-evaluated (their new value may match)
  };
  std::vector<Use> uses;
  // The segments and answers behind `candidates`, for checking the rows they name
  // against their values (table/hit_check.h).
  std::shared_ptr<const IndexAnswers> answers;
};

// Empty when no index can narrow `filter` (no index on its columns, or an unanswerable
// part in an OR), so the scan is flat.
std::optional<IndexedRows> PlanIndexedRows(const DatasetState& state, const Expr& filter,
                                           bool count_stale_matches = false);

// Under stable row ids: every live row's (row id, row address), sorted by row id, made
// once per version (indexes store row ids; queries map them back to addresses).
std::shared_ptr<const DatasetState::RowIdAddresses> RowIdAddresses(const DatasetState& state);

}  // namespace lancelet::table
