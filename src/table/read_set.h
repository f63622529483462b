// What a read-modify-write (UPDATE, DELETE or MERGE with a predicate) read to compute its
// changes. A commit that loses the race rebases onto the versions committed since its
// read only if none of them changed what it read; otherwise its values or its matches
// are stale (a lost update) and it must re-read and recompute.
//
// Blind writes (OverlayWriter with given values) carry no read set: they stay compatible
// with every concurrent overlay, as the data overlay spec says.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "format/lance_schema.h"
#include "format/roaring_bitmap.h"
#include "table/dataset_state.h"

namespace lancelet::table {

struct ReadSet {
  // Field ids (whole subtrees) read on every row of every fragment: the predicate's.
  std::set<int32_t> all_rows_fields;
  // Field ids read only on the rows the operation changes: the SET expressions'.
  std::set<int32_t> changed_rows_fields;
  // Every fragment the operation scanned (all fragments of its read version).
  std::set<uint64_t> fragments;
  // Per fragment, the physical offsets the operation changes.
  std::map<uint64_t, format::RoaringBitmap> changed_rows;

  // Adds the subtree ids of each named top-level column of `schema` (pseudo-columns
  // such as _rowid name no field and are skipped: row ids never change).
  static void AddFields(const format::LanceSchema& schema, const std::vector<std::string>& columns,
                        std::set<int32_t>& into);

  // What an UPDATE or DELETE on `state`'s version reads: the columns its predicate names
  // (`predicate_columns`) on every row of every fragment, and those its SET expressions
  // name (`set_columns`) on the rows it changes, which the caller puts in changed_rows.
  static std::shared_ptr<ReadSet> OfStatement(const DatasetState& state, const std::vector<std::string>& predicate_columns,
                                              const std::vector<std::string>& set_columns);
};

// Compares two consecutive committed versions. Returns what `after` changed that `read`
// depends on, as the end of a sentence ("changed field 'val' of fragment 0"), or nothing.
// Changes it detects: a removed or rewritten fragment, new data files or a changed row
// count, a read field dropped from the schema, a new overlay covering a read cell, a
// deletion of a row the operation changes, and an appended fragment (its rows may match
// the predicate: in version order they exist before the operation, so it must see them).
std::optional<std::string> FindStaleRead(const ReadSet& read, const DatasetState& before, const DatasetState& after);

}  // namespace lancelet::table
