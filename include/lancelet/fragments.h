// Distributed writes, as the reference's lance.fragment.write_fragments,
// LanceOperation and LanceDataset.commit: workers write fragments (or an UPDATE's
// overlays for their fragments) without committing and hand their metadata (as JSON) to
// one process, which commits them all as one version through the usual commit path and
// its conflict rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lancelet/dataset.h"

namespace lancelet {

// One data file of a fragment (the manifest's DataFile).
struct DataFileMetadata {
  std::string path;                     // relative to the dataset's data/ directory
  std::vector<int32_t> fields;          // field ids the file holds
  std::vector<int32_t> column_indices;  // the column of each field in the file
  uint32_t file_major_version = 0;
  uint32_t file_minor_version = 0;
  uint64_t file_size_bytes = 0;
  std::optional<uint32_t> base_id;
  bool operator==(const DataFileMetadata&) const = default;
};

// A fragment's deletion file (the manifest's DeletionFile): file_type "array" or "bitmap".
struct DeletionFileMetadata {
  std::string file_type;
  uint64_t read_version = 0;
  uint64_t id = 0;
  uint64_t num_deleted_rows = 0;
  std::optional<uint32_t> base_id;
  bool operator==(const DeletionFileMetadata&) const = default;
};

// One overlay file of a fragment (the reference's DataOverlayFile): the data file of its
// values and the physical offsets it covers: one set for every entry of data_file.fields
// (a dense overlay) or one set per entry, in that order (sparse). committed_version is the
// version that added it (0 while it is not committed).
struct OverlayFileMetadata {
  DataFileMetadata data_file;
  std::vector<std::vector<uint32_t>> offsets;
  uint64_t committed_version = 0;
  bool operator==(const OverlayFileMetadata&) const = default;
};

// A fragment written but not yet committed (its id is a placeholder: the commit gives
// each fragment it adds the next free id), or, with a deletion file, an existing
// fragment's new deletions (WriteDeletions).
struct FragmentMetadata {
  uint64_t id = 0;
  std::vector<DataFileMetadata> files;
  uint64_t physical_rows = 0;
  std::vector<OverlayFileMetadata> overlays;  // an existing fragment's
  std::optional<DeletionFileMetadata> deletion_file;
  bool operator==(const FragmentMetadata&) const = default;

  // The JSON object pylance's FragmentMetadata.to_json() gives: {"id", "files": [{"fields",
  // "column_indices", "file_major_version", "file_minor_version", "file_size_bytes",
  // "base_id", "path"}], "overlays": [{"data_file", "offsets": [...] (dense) or [[...], ...]
  // (sparse), "committed_version"}], "physical_rows", "deletion_file": null or
  // {"read_version", "id", "file_type", "num_deleted_rows", "base_id"}, "row_id_meta": null,
  // "created_at_version_meta": null, "last_updated_at_version_meta": null}.
  std::string ToJson() const;
  // Reads that shape (pylance's or ToJson's). A fragment with row ids or version sequences
  // is refused: only fragments written without a commit, and deletions, are committed
  // this way. Errors name the key and what was expected.
  static FragmentMetadata FromJson(std::string_view json);
};

// Writes `data` into new fragments of the dataset at `uri` without committing them: the
// files are in place (and stay there: a commit publishes them, `cleanup` removes them if
// none does). The fields get the dataset's ids when it exists and `options.mode` is not
// kOverwrite, else ids numbered from the data's schema; the file version is the dataset's,
// else options.file_version. Each fragment holds at most options.max_rows_per_file rows.
std::vector<FragmentMetadata> WriteFragments(const std::string& uri, RecordBatchReader& data,
                                             const WriteOptions& options = {});

// The overlays written for one fragment and not yet committed (the reference's
// DataOverlayGroup).
struct OverlayGroupMetadata {
  uint64_t fragment_id = 0;
  std::vector<OverlayFileMetadata> overlays;
  bool operator==(const OverlayGroupMetadata&) const = default;

  // How ToJson writes a set of offsets: the base64 of its portable Roaring bitmap (the
  // bytes the manifest stores; a 10% update of a 500k-row fragment is 90 KB of JSON
  // instead of 340 KB, and parses in a fraction of the time), or a list of offsets.
  enum class OffsetForm { kCompact, kLists };
  // {"fragment_id", "overlays": [{"data_file": {as in FragmentMetadata's files},
  // "offsets": [set, ...]}]}, one set per field or one for all; FromJson reads either
  // form (and a dense overlay's bare list, pylance's shape), errors naming the key.
  std::string ToJson(OffsetForm form = OffsetForm::kCompact) const;
  static OverlayGroupMetadata FromJson(std::string_view json);
};

// An UPDATE's overlays for some fragments of `dataset`, written and not committed: on
// each fragment in `fragment_ids`, the rows where `predicate` holds (empty: every row)
// get the SET values, computed at the dataset's version, as one overlay file per
// fragment (dense when every column covers the same rows). Fragments with no such rows
// give no group. The files stay for the commit (Operation::DataOverlay) or cleanup.
std::vector<OverlayGroupMetadata> WriteUpdateOverlays(const DatasetPtr& dataset,
                                                      const std::vector<uint64_t>& fragment_ids,
                                                      const std::vector<Dataset::SetClause>& set,
                                                      const std::string& predicate);

// The metadata of fragment `id` of `dataset` (pylance's LanceFragment.metadata): NotFound
// when the version has no such fragment, NotSupported when it has row ids or version
// sequences, which the metadata does not carry.
FragmentMetadata FragmentMetadataOf(const DatasetPtr& dataset, uint64_t id);

// A DELETE's deletion files for some fragments of `dataset`, written and not committed:
// on each fragment in `fragment_ids`, the rows where `predicate` holds join its deletions.
// A fragment left with some rows gives its metadata (overlays included) with the new
// deletion file; one left with none is listed in deleted_fragment_ids; one with no such
// row gives neither. NotSupported on a dataset with stable row ids, whose fragments' row
// ids the metadata cannot carry.
struct Deletions {
  std::vector<FragmentMetadata> updated_fragments;
  std::vector<uint64_t> deleted_fragment_ids;
  uint64_t rows_deleted = 0;
};
Deletions WriteDeletions(const DatasetPtr& dataset, const std::vector<uint64_t>& fragment_ids,
                         const std::string& predicate);

// What a commit publishes (LanceOperation.Append, .Overwrite, .Delete, .Update and
// .DataOverlay).
struct Operation {
  enum class Kind { kAppend, kOverwrite, kDelete, kUpdate, kDataOverlay };
  Kind kind = Kind::kAppend;
  // Append and Overwrite: fragments written by WriteFragments; Delete and Update: the
  // updated fragments, of which the commit takes the id and the deletion file.
  std::vector<FragmentMetadata> fragments;
  std::vector<uint64_t> deleted_fragment_ids;  // Delete; Update: its removed fragments
  std::vector<FragmentMetadata> new_fragments;  // Update: the moved rows, written by WriteFragments
  // Delete: the predicate that chose the rows. The commit refuses with a retryable
  // Conflict when a commit after read_version changed a column it reads, or the rows it
  // deletes.
  std::string predicate;
  SchemaPtr schema;  // the new schema (Overwrite only)
  std::vector<OverlayGroupMetadata> overlay_groups;  // DataOverlay only
  // For an UPDATE's overlays or moved rows, the update itself: the commit then refuses with a
  // retryable Conflict when a commit after read_version changed a cell the update read
  // (its predicate's columns on any row, its SET expressions' on the rows it changed), so
  // the caller computes the overlays again. Without it the overlays are blind writes, which
  // land over concurrent ones (newest wins).
  std::optional<std::pair<std::vector<Dataset::SetClause>, std::string>> update;

  static Operation Append(std::vector<FragmentMetadata> fragments);
  static Operation Overwrite(SchemaPtr schema, std::vector<FragmentMetadata> fragments);
  static Operation Delete(std::vector<FragmentMetadata> updated, std::vector<uint64_t> deleted_fragment_ids,
                          std::string predicate);
  // An UPDATE that moved its rows (the reference's REWRITE_ROWS Update): the old rows
  // deleted in `updated` (deletion files from WriteDeletions) and `removed_fragment_ids`,
  // their new values in `new_fragments`. A concurrent commit that changed one of its
  // fragments refuses it (retryable Conflict); with `set` and `predicate` (the update that
  // computed them) so does one that changed what it read anywhere (its predicate's columns
  // on every row). NotSupported on a dataset with stable row ids (the moved rows would get
  // new ids).
  static Operation Update(std::vector<uint64_t> removed_fragment_ids, std::vector<FragmentMetadata> updated,
                          std::vector<FragmentMetadata> new_fragments,
                          std::optional<std::pair<std::vector<Dataset::SetClause>, std::string>> update = {});
  static Operation DataOverlay(std::vector<OverlayGroupMetadata> groups);
  static Operation UpdateOverlays(std::vector<OverlayGroupMetadata> groups, std::vector<Dataset::SetClause> set,
                                  std::string predicate);
};

// Commits `operation` on the dataset at `uri` as read at `read_version` (the version the
// workers planned against; the latest when absent): a concurrent commit is rebased over
// or refused by the usual conflict rules. Append needs the dataset to exist; Overwrite
// creates it when missing. Every fragment's fields must be fields of the schema it joins.
// Returns the dataset at the version committed.
DatasetPtr CommitOperation(const std::string& uri, const Operation& operation,
                           std::optional<uint64_t> read_version = std::nullopt, const WriteOptions& options = {});

// ---- Compaction and index builds spread over workers (as the reference's
// lance.optimize.Compaction.plan / CompactionTask.execute / Compaction.commit): the client
// plans tasks at one version, workers execute them (writing files, committing nothing)
// and hand back commit parts, and the client commits the parts. A task that fails leaves
// no file; parts never committed leave files that `cleanup` removes.

// One unit of compaction: a group of fragments whose live rows become new fragments
// (kRewriteRows), or one fragment whose overlays are folded (kFoldOverlays) or merged
// (kMergeOverlays), as Optimize would do it at read_version.
struct CompactionTask {
  uint64_t read_version = 0;
  CompactionAction action = CompactionAction::kNone;
  std::vector<uint64_t> fragment_ids;
  uint64_t target_rows_per_fragment = 0;  // kRewriteRows: rows per new fragment
  bool operator==(const CompactionTask&) const = default;

  // {"read_version", "action": "rewrite"|"fold"|"merge", "fragment_ids", "target_rows_per_fragment"}
  std::string ToJson() const;
  static CompactionTask FromJson(std::string_view json);
};

// What Optimize (options.rewrite_rows, .merge_overlays_instead_of_fold, the thresholds)
// would do to `dataset`, as independent tasks: one per rewrite group, one per fragment
// whose overlays are compacted.
std::vector<CompactionTask> PlanCompactionTasks(const DatasetPtr& dataset, const OptimizeOptions& options = {});

// Runs `task` on `dataset`, which must be at the task's read_version: writes the new
// files and returns the task's commit part (opaque bytes for CommitCompaction). Throws
// NotFound when a fragment of the task is not in that version.
std::string ExecuteCompactionTask(const DatasetPtr& dataset, const CompactionTask& task);

// Commits the parts of tasks planned at `read_version` on the dataset at `uri`: the
// rewrites as one Rewrite version, then the folds and merges as one Update version (each
// checked against concurrent commits by the usual rules: a concurrent change to a
// fragment a part rewrote is a retryable Conflict, and the part's files are removed), then,
// with options.optimize_indices, a segment of each index over the fragments no segment
// covers. Returns the dataset at the last version committed; `stats` as Optimize's.
DatasetPtr CommitCompaction(const std::string& uri, uint64_t read_version, const std::vector<std::string>& parts,
                            const OptimizeOptions& options = {}, OptimizeStats* stats = nullptr,
                            const WriteOptions& write_options = {});

// One segment of an index over some fragments, built by a worker. Segments of one name
// over disjoint fragments form one index: every reader (lancelet and the reference)
// searches them all, as after an OptimizeIndices. A vector index's segments share one
// model (centroids, PQ codebook): the task that trains_model trains it on a sample of its
// own fragments, and the others assign their rows with it.
struct IndexTask {
  uint64_t read_version = 0;
  std::string column;  // a top-level column, or a struct field as "a.b"
  IndexType type = IndexType::kBTree;
  std::string name;    // the index's name
  std::vector<uint64_t> fragment_ids;
  // IVF_FLAT / IVF_PQ only: num_partitions resolved from the rows of the whole version.
  VectorIndexParameters vector;
  bool trains_model = false;
  bool operator==(const IndexTask&) const = default;

  // {"read_version", "column", "index_type": "BTREE"|"BITMAP"|"IVF_FLAT"|"IVF_PQ", "name",
  // "fragment_ids"} and, for a vector index, "vector": {"num_partitions", "num_sub_vectors",
  // "num_bits", "distance", "sample_rate", "max_iterations", "seed", "trains_model"}.
  std::string ToJson() const;
  static IndexTask FromJson(std::string_view json);
};

// Splits the fragments of `dataset` into at most `num_tasks` tasks of about equal rows
// (in manifest order), each building one segment of the index `name` (empty:
// "<column>_idx") on `column`; for a vector index with `vector_options` (its progress
// callback unused), the first task trains the model. A 4-bit IVF_PQ is refused
// (NotSupported): lancelet does not read its model back to share it.
std::vector<IndexTask> PlanIndexTasks(const DatasetPtr& dataset, const std::string& column, IndexType type,
                                      size_t num_tasks, const std::string& name = "",
                                      const VectorIndexOptions& vector_options = {});

// Builds the task's segment (files under _indices/<uuid>/) on `dataset`, which must be at
// the task's read_version; returns its commit part. Commits nothing. A vector task that
// does not train the model needs `model`, the part of the one that did.
std::string BuildIndexSegment(const DatasetPtr& dataset, const IndexTask& task, const std::string& model = "");

// One segment holding every row of the scalar (BTree, Bitmap) segments `parts` (of one
// index, built by tasks at `dataset`'s version), written by this process, as the
// reference's distributed build merges its page files: queries then search one segment.
// Returns its part; the parts' own files are removed. Vector segments are refused.
std::string MergeIndexSegments(const DatasetPtr& dataset, const std::vector<std::string>& parts);

// Commits the segments as one CreateIndex version on the dataset at `uri`; `replace`
// removes an existing index of that name in the same commit (without it, one is an
// InvalidArgument). The segments must cover disjoint fragments. A concurrent commit that
// moved rows under them is a Conflict, and their files are removed.
DatasetPtr CommitIndexSegments(const std::string& uri, uint64_t read_version, const std::vector<std::string>& parts,
                               bool replace = false, const WriteOptions& write_options = {});

}  // namespace lancelet
