// What one commit changed, as rows to read (the change feed's first half; changes.cc
// reads them): the version is compared with the one before it, guided by its
// transaction, and what the commit added (fragments, deletion-file bits, overlays, column
// rewrites with their offsets, the rows it moved) names the rows it changed.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "format/roaring_bitmap.h"
#include "lancelet/dataset.h"

namespace lancelet::table {

using Offsets = std::map<uint64_t, std::vector<uint64_t>>;  // fragment id -> physical offsets, ascending

// Rows changed in place (same address before and after): per fragment, the offsets, and
// per top-level column the offsets whose cell the commit wrote. No column list: the
// changed columns are found by comparing the two images among `compare`.
struct InPlace {
  std::vector<uint64_t> offsets;
  std::vector<std::pair<size_t, format::RoaringBitmap>> columns;  // column of the version after
};

// What one commit changed, as rows to read.
struct CommitRows {
  uint64_t version = 0;
  int64_t timestamp_micros = 0;
  DatasetPtr before;  // null before the first version
  DatasetPtr after;
  Offsets deleted;   // live rows of `before`
  Offsets inserted;  // live rows of `after`
  std::map<uint64_t, InPlace> updated;
  std::set<size_t> compare;  // columns of `after` compared when InPlace lists none
  // How deleted and inserted rows pair up as an update's images: not at all, in order
  // (moved_before's i-th row was copied to moved_after's i-th), or by stable row id.
  enum class Moves { kNone, kInOrder, kByRowId } moves = Moves::kNone;
  Offsets moved_before, moved_after;  // kInOrder: rows of `before`, their copies in `after`
};

uint64_t CountRows(const Offsets& rows);

// What version `after` changed against `before` (null for the first version). Throws
// InvalidArgument for an Overwrite, Restore or Clone whose feed passes 1M rows unless
// `allow_full`, NotSupported for a DataReplacement or a version without a transaction.
CommitRows RowsOfCommit(const DatasetPtr& before, const DatasetPtr& after, bool allow_full);

}  // namespace lancelet::table
