// UPDATE's other two ways to write its changes, and the cost model that picks among all
// three (UpdateMode in lancelet/dataset.h; the measurements behind the constants are in
// docs/compaction.md, "How UPDATE writes").
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "table/dataset_state.h"
#include "table/merge_commit.h"
#include "table/read_set.h"

namespace lancelet::table {

// Table config key: overlay, columns, rows or auto (the cost model).
inline constexpr const char* kUpdateModeKey = "lancelet.update.mode";

// Table config key of upstream lance (lance-format/lance PR #8018): whether a writer
// may create data overlay files on its own accord. "true" or "false" when set; unset, a
// dataset already carrying overlays counts as enabled and any other as not, so that a
// table another writer made stays readable by it after an UPDATE. lancelet sets it to
// true on the datasets it creates.
inline constexpr const char* kOverlaysEnabledKey = "lance.overlays.enabled";
bool OverlaysEnabled(const lance::table::Manifest& manifest);

// The cost model's constants (docs/compaction.md measures them, bench/update_modes.sh).
// A column rewrite writes every row of the SET columns of a touched fragment: past this
// fraction of its rows changed it costs about what an overlay does, and later reads
// cost nothing extra.
inline constexpr double kColumnsFraction = 0.6;
// With an index on a SET column a column rewrite also makes queries on it scan the
// fragment flat until the index is optimized, so the bar is higher.
inline constexpr double kColumnsFractionIndexed = 0.9;
// Each overlay layer a touched fragment already has lowers the bar (a rewrite folds
// them all, and each costs every later read), down to the floor.
inline constexpr double kColumnsPerLayer = 0.05;
inline constexpr double kColumnsFractionFloor = 0.2;
// Moving rows writes every column of a changed row; when the SET columns are at least
// this share of a row's bytes that is hardly more than an overlay writes, later reads
// skip the overlay, and the result is what every reader reads. Below the lower fraction
// the new fragment's fixed cost outweighs that; from the upper one a column rewrite
// costs the same and keeps the rows in place.
inline constexpr double kRowsColumnShare = 0.9;
inline constexpr double kRowsMinFraction = 0.1;
inline constexpr double kRowsMaxFraction = 0.9;

// The mode for an UPDATE of `set_fields` (schema field indices) at `offsets` (per
// fragment id): the table config key when set, else the cost model, which writes no
// overlay on a dataset whose overlays are not enabled (OverlaysEnabled). `why`
// (optional) receives the reason in a few words.
UpdateMode ChooseUpdateMode(const DatasetState& state, const std::vector<size_t>& set_fields,
                            const std::map<uint64_t, std::vector<uint32_t>>& offsets, std::string* why = nullptr);

// kColumns: each touched fragment's SET columns and overlaid columns are written to a
// new base file with the new values applied (FoldOverlays); one Update REWRITE_COLUMNS
// commit.
DatasetPtr CommitColumnRewrite(const DatasetPtr& dataset, const MergeChanges& changes,
                               std::shared_ptr<const ReadSet> read_set);

// `changes` with its overlay updates turned into moved rows: per fragment, the rows any
// column changes, every column read and the changed values put in, are deleted and
// inserted ahead of the changes' own inserts (keeping their row ids with stable row ids).
MergeChanges WithoutOverlays(const DatasetState& state, const MergeChanges& changes);

// kRows: the changed rows, every column read and the SET columns replaced, are deleted
// and appended (CommitMerge of WithoutOverlays). The commit's read set is `read_set` plus every field on
// the changed rows.
DatasetPtr CommitRowMove(const DatasetPtr& dataset, const MergeChanges& changes,
                         std::shared_ptr<const ReadSet> read_set);

}  // namespace lancelet::table
