// One atomic commit that combines overlay updates, deletions and appended rows: the write
// side of SQL MERGE INTO.
//
// Design. The Lance transaction proto has no operation that carries overlays, deletion
// files and new fragments together, so the commit is recorded as an `Update` operation:
//   - updated_fragments: every touched fragment as it will appear in the new manifest
//     (its new deletion file and its overlay list with the new overlays appended, those
//     left at committed_version 0);
//   - removed_fragment_ids: fragments whose every row is now deleted;
//   - new_fragments: the inserted rows;
//   - fields_modified and updated_fragment_offset_bitmaps: the overlay-covered fields and
//     row offsets, so that another writer's conflict check can see what changed.
// BuildManifest applies it in one step (one manifest version): removed fragments go,
// updated fragments replace theirs by id with the new overlays stamped with this
// version (and row lineage updated), new fragments get ids and row ids. Readers (the
// reference included) only look at the manifest, which is ordinary Lance: fragments
// with deletion files and overlays. Because updated fragments replace whole fragment
// messages, a concurrent change to any of them (overlay, delete, update, rewrite) makes
// the commit a RetryableConflict and the caller recomputes; so does a concurrent change
// to any target cell, since a MERGE reads the whole target (table/read_set.h); appends,
// index and config changes rebase cleanly.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "table/read_set.h"

namespace lancelet::table {

// The transaction property of lancelet's Update transactions that holds how many rows
// the update moved (whose copies lead its new fragments).
inline constexpr const char* kMovedRowsProperty = "lancelet.moved_rows";

struct MergeChanges {
  struct ColumnCells {
    std::string column;
    std::vector<uint32_t> offsets;  // physical offsets, strictly increasing
    ArrayPtr values;                // the column's type, one value per offset
  };
  // Fragment id -> changed cells; columns of one fragment may cover different offsets
  // (one sparse overlay per fragment) or the same (one dense overlay).
  std::map<uint64_t, std::vector<ColumnCells>> updates;
  // Fragment id -> newly deleted physical offsets (any order, duplicates allowed).
  std::map<uint64_t, std::vector<uint32_t>> deletes;
  // Rows to append, in the dataset's schema (by name).
  std::vector<RecordBatchPtr> inserts;
  // With stable row ids: the ids the inserted rows keep, in order (rows an UPDATE moves);
  // empty: they get new ids.
  std::vector<uint64_t> insert_row_ids;
  // Rows an UPDATE moved (WithoutOverlays): fragment id -> offsets, also in `deletes`, whose
  // copies lead `inserts` in this order (fragment by fragment, offsets ascending). The
  // transaction records them (updated_fragment_offset_bitmaps, and their count in the
  // property kMovedRowsProperty) so that the change feed pairs each with its copy.
  std::map<uint64_t, std::vector<uint32_t>> moved;

  bool empty() const { return updates.empty() && deletes.empty() && inserts.empty(); }
};

// Writes the files and commits them as one version on top of `dataset`. Returns the new
// version (or `dataset` when there is nothing to do). On any failure nothing is
// published and the written files are removed; a concurrent change to a touched
// fragment throws RetryableConflict.
// `read_set`: what the caller read (default: every column of every row, as a MERGE).
DatasetPtr CommitMerge(const DatasetPtr& dataset, const MergeChanges& changes,
                       std::shared_ptr<const ReadSet> read_set = nullptr);

}  // namespace lancelet::table
