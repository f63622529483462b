// Compaction: the pieces Dataset::Optimize and Dataset::MergeOverlays commit. Each
// builds new files and the fragment messages that use them; nothing is visible until the
// caller commits. Which transaction each one commits, and why: docs/compaction.md.
//
// Invariants:
// - A fold or a merge never changes which rows a fragment has or their offsets, so row
//   addresses, row ids, deletions and lineage stay as they are.
// - A fold writes every physical row (deleted ones too) of the folded columns with
//   overlays applied; a merge writes, per column, exactly the cells its overlays cover,
//   each with the value of the newest overlay covering it (a NULL one included).
// - A rewrite writes only live rows, values resolved, and carries their row ids and
//   lineage when the dataset has stable row ids.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "table.pb.h"
#include "transaction.pb.h"
#include "table/commit.h"
#include "table/dataset_state.h"
#include "table/overlay_file.h"

namespace lancelet::table {

// Per fragment, what Optimize would do (in manifest order).
std::vector<FragmentOptimization> PlanCompaction(const DatasetState& state, const OptimizeOptions& options);

struct FoldedFragment {
  lance::table::DataFragment fragment;  // overlays gone, folded fields tombstoned in old files
  std::vector<int32_t> field_ids;       // every id the new base file holds
  uint64_t bytes_written = 0;
  uint64_t overlays_removed = 0;
};
// Folds every overlay of `fragment` into one new base data file. `new_values` (an
// UPDATE's column rewrite) are applied over the result, and their columns are written
// too.
FoldedFragment FoldOverlays(const DatasetState& state, const lance::table::DataFragment& fragment,
                            AttemptFiles& attempt, const std::vector<OverlayColumn>& new_values = {});

struct MergedOverlays {
  lance::table::DataFragment fragment;  // the picked overlays replaced by one
  uint64_t bytes_written = 0;
  uint64_t overlays_removed = 0;        // picked minus the one written
};
// Merges the overlays of `fragment` whose committed_version is in `versions` (empty:
// all). Throws InvalidArgument when they are not contiguous in committed_version or a
// version names no overlay.
MergedOverlays MergeOverlayRun(const DatasetState& state, const lance::table::DataFragment& fragment,
                               const std::set<uint64_t>& versions, AttemptFiles& attempt);

// Assembles the Update a fold or a merge of overlays commits, REWRITE_COLUMNS (the
// reference's column rewrite): the fragments it changed and, as fields_modified, every
// field id a fold's new base file holds, so indexes on them stop covering the folded
// fragments in the same commit (CarryIndexes). A merge of overlays modifies no field:
// the merged overlay keeps the newest committed_version and so still marks its cells
// stale for every index.
class FoldCommit {
 public:
  explicit FoldCommit(lance::table::Transaction& t);
  void AddFolded(FoldedFragment folded);
  void AddMerged(lance::table::DataFragment fragment);
  // Records the modified fields. False when no fragment was added: nothing to commit.
  bool Finish();

 private:
  lance::table::Transaction::Update* update_;
  std::set<int32_t> modified_;
};

struct RewrittenGroup {
  lance::table::Transaction::Rewrite::RewriteGroup group;  // new fragments have id 0
  uint64_t bytes_written = 0;
  uint64_t deleted_rows = 0;  // materialized
};
// Writes the live rows of `fragments`, in order, into new fragments of at most
// `target_rows` rows.
RewrittenGroup RewriteFragments(const DatasetState& state, const std::vector<const lance::table::DataFragment*>& fragments,
                                uint64_t target_rows, AttemptFiles& attempt);

// Optimize's last step, as the reference's optimize(): a segment of each index over the
// fragments none covers (folded, rewritten or appended ones). Returns the dataset after it
// and records its version in `stats`.
DatasetPtr IndexUncovered(const DatasetPtr& dataset, OptimizeStats& stats);

// The overlay-layer bound: table config lance.compaction.max_overlays_per_fragment (the
// reference's key and default, 10; "none": unbounded). InvalidArgument for other text.
inline constexpr const char* kMaxOverlaysPerFragmentKey = "lance.compaction.max_overlays_per_fragment";
inline constexpr uint64_t kDefaultMaxOverlaysPerFragment = 10;
std::optional<uint64_t> MaxOverlaysPerFragment(const lance::table::Manifest& manifest);
// Called after a write that added overlays: merges the overlays of every fragment over
// the bound into one, in the next commit. Returns the dataset it committed, or `dataset`
// when it committed nothing. The write has landed, so this never throws: when the merge
// fails (concurrent commits keep winning, a full disk), the next write bounds the layers
// again, and `outcome` (when given) says why. A fragment a concurrent compaction
// rewrote meanwhile needs no merge.
DatasetPtr BoundOverlayLayers(const DatasetPtr& dataset, WriteOutcome* outcome = nullptr);

}  // namespace lancelet::table
