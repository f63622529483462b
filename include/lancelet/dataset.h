// A Lance dataset: a directory of versions, each a list of fragments.
//
//   auto ds = lancelet::Dataset::Open("/data/users.lance");
//   auto reader = ds->NewScan().Columns({"id", "name"}).Filter("age > 30").Limit(10).Open();
//   while (auto batch = reader->Next()) { ... }
//
// Every write (Create, Append, Delete, Overwrite) is one atomic commit that produces a new
// version; a Dataset object itself is an immutable snapshot of one version.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lancelet/expr.h"
#include "lancelet/record_batch.h"
#include "lancelet/session.h"
#include "lancelet/storage_options.h"

namespace lancelet {


enum class WriteMode { kCreate, kAppend, kOverwrite };

// A fragment's rows are addressed by 32-bit offsets (row address = fragment << 32 | offset).
inline constexpr uint64_t kMaxRowsPerFile = (uint64_t{1} << 32) - 1;

// Where a dataset is opened: the store's options and the session that keeps what its
// versions decode (lancelet/session.h; null: Session::Default()).
struct OpenOptions {
  StorageOptions storage_options = {};
  std::shared_ptr<Session> session = nullptr;
};

struct WriteOptions {
  WriteMode mode = WriteMode::kCreate;
  // Lance file version of new data files: "2.0", "2.1" or "2.2" (the default, as the
  // reference's). For append the dataset's own version is used.
  std::string file_version = "2.2";
  // Rows per data file (= per fragment) before a new fragment is started: 1 to
  // kMaxRowsPerFile.
  int64_t max_rows_per_file = 1024 * 1024;
  // Give rows stable ids (reader feature flag 2).
  bool enable_stable_row_ids = false;
  // How many times a commit that lost a race is rebased and retried.
  int max_commit_retries = 20;
  // The store's options and the session of the dataset written (see OpenOptions).
  StorageOptions storage_options = {};
  std::shared_ptr<Session> session = nullptr;
};

struct VersionInfo {
  uint64_t version = 0;
  int64_t timestamp_nanos = 0;  // commit time, UTC
  std::string operation;        // "Append", "Delete", ... (from the transaction file)
};

// A tag: a name for a version, stored as the reference stores it (table/tags.h).
struct TagInfo {
  std::string name;
  uint64_t version = 0;
  uint64_t manifest_size = 0;  // bytes of that version's manifest file
};

// Indexes in the reference's formats. Scalar (table/index_plan.h tells where they are
// used): BTree (sorted values in pages, any selectivity) and Bitmap (one row set per
// distinct value, for columns with few of them). Vector (on a fixed_size_list<float32>
// column, used by Dataset::Search): IVF_FLAT (rows grouped by their nearest partition
// centroid, vectors kept whole) and IVF_PQ (the same, vectors product-quantized).
enum class IndexType { kBTree, kBitmap, kIvfFlat, kIvfPq };
// An IndexType's name as pylance spells it ("BTREE", "BITMAP", "IVF_FLAT", "IVF_PQ"), and
// the type a name gives, in any ASCII case (nullopt for another name).
const char* IndexTypeName(IndexType type);
std::optional<IndexType> IndexTypeNamed(std::string_view name);

// How a vector index is built (pylance's names in the comments); a distributed build's
// tasks carry these (lancelet/fragments.h).
struct VectorIndexParameters {
  uint32_t num_partitions = 0;   // num_partitions; 0: the square root of the rows, at least 1
  uint32_t num_sub_vectors = 0;  // num_sub_vectors (IVF_PQ; must divide the dimension); 0: dim / 16, or 1
  uint32_t num_bits = 8;         // num_bits (IVF_PQ): 8, or 4 (16 codes a sub-vector; sub-vectors even)
  std::string distance = "l2";   // metric: l2, cosine or dot
  uint32_t sample_rate = 256;    // k-means trains on at most sample_rate x k sampled rows
  uint32_t max_iterations = 50;
  uint64_t seed = 42;            // of the training sample and k-means' initial centroids
  bool operator==(const VectorIndexParameters&) const = default;
};

struct VectorIndexOptions : VectorIndexParameters {
  // Called with the rows read so far of each pass over the column (2 passes: the sample,
  // then the assignment), e.g. to draw a progress line; null: not called.
  std::function<void(const char* pass, uint64_t rows, uint64_t total)> progress;
};

struct IndexInfo {
  std::string name;
  std::string type;                  // "BTree", "Bitmap", or the type URL of a kind lancelet cannot use
  std::vector<std::string> columns;
  uint64_t dataset_version = 0;      // of the oldest segment: the version it was built from
  size_t segments = 0;
  uint64_t indexed_fragments = 0;    // live fragments some segment covers
  uint64_t unindexed_fragments = 0;  // live fragments scanned flat
  uint64_t stale_rows = 0;           // rows overlays changed after the index was built
  // Vector indexes ("IVF_FLAT", "IVF_PQ"): their parameters (0 / empty when unknown or n/a).
  uint32_t partitions = 0, sub_vectors = 0, bits = 0;
  std::string distance;
};

// The vector index Dataset::Search goes through for a column (Dataset::VectorIndexOn).
struct VectorIndexUse {
  std::string name;
  std::string type;      // "IVF_FLAT", "IVF_PQ"
  std::string distance;  // the metric it ranks by: "l2", "cosine", "dot"
};

// One segment of an index, for Dataset::IndexStats.
struct IndexSegmentInfo {
  std::string uuid;                 // its directory under _indices/
  uint64_t dataset_version = 0;     // the version it was built from
  std::vector<uint64_t> fragments;  // fragment_bitmap (empty with covers_every_fragment)
  bool covers_every_fragment = false;
  uint64_t rows = 0;                // rows it holds (0 for a kind lancelet cannot open)
  uint64_t bytes = 0;               // its files
  uint64_t stale_rows = 0;
};

// Compaction (Dataset::Optimize). Overlays cost reads; deletions cost space; small
// fragments cost planning and file opens. Per fragment one action removes them:
//   kFoldOverlays  the overlaid columns get a new base data file holding their current
//                  values (all rows, so offsets and row ids stay); the old files' copies
//                  are tombstoned and the overlays dropped. Indexes on those columns
//                  stop covering the fragment until they are optimized.
//   kMergeOverlays the overlays become one overlay holding their newest values, stamped
//                  with their newest committed_version (indexes stay valid).
//   kRewriteRows   the fragment's live rows, values resolved, move into new fragments
//                  together with small neighbours (row addresses change).
enum class CompactionAction { kNone, kMergeOverlays, kFoldOverlays, kRewriteRows };

struct OptimizeOptions {
  // Fragments with fewer physical rows are merged with their neighbours (the reference's
  // compact_files default); a lone one is left alone unless it has deletions to drop.
  // 1 to kMaxRowsPerFile.
  uint64_t target_rows_per_fragment = 1024 * 1024;
  // Rewrite a fragment whose deleted fraction exceeds the threshold, 0 to 1 (1: never).
  bool materialize_deletions = true;
  double materialize_deletions_threshold = 0.1;
  // false: only overlays are compacted, rows never move.
  bool rewrite_rows = true;
  // What happens to the overlays of fragments whose rows stay: folded into base columns
  // (reads at full speed; the reader flag 64 goes once no overlay is left) or merged
  // into one overlay per fragment (writes only the overlaid cells).
  bool merge_overlays_instead_of_fold = false;
  // Afterwards, index the fragments that indexes stopped covering (OptimizeIndices).
  bool optimize_indices = true;
};

// What Optimize does or would do to one fragment, and why.
struct FragmentOptimization {
  uint64_t fragment_id = 0;
  CompactionAction action = CompactionAction::kNone;
  std::string reason;
  int rewrite_group = -1;             // kRewriteRows: fragments of one group become new fragments together
  uint64_t physical_rows = 0;
  uint64_t deleted_rows = 0;
  uint64_t overlays = 0;              // layers
  uint64_t covered_cells = 0;         // (row, column) cells the overlays cover, counted once
  uint64_t overlay_bytes = 0;         // their files
  uint64_t versions_since_oldest_overlay = 0;
  uint64_t stale_index_rows = 0;      // rows an index must re-evaluate because of them
  double read_amplification = 1.0;   // est. bytes read for the overlaid columns / bytes once compacted
};

struct OptimizeStats {
  uint64_t fragments_removed = 0;    // rewritten into new ones
  uint64_t fragments_added = 0;
  uint64_t fragments_folded = 0;
  uint64_t fragments_merged = 0;
  uint64_t overlays_removed = 0;
  uint64_t rows_deleted_materialized = 0;
  uint64_t bytes_written = 0;         // data and overlay files (not indexes)
  bool indexes_optimized = false;     // a segment was added for fragments no index covered
  std::vector<uint64_t> versions;     // the versions committed, in order
};

// The versions a write committed. A write that leaves a fragment with more overlays than
// lance.compaction.max_overlays_per_fragment is followed by a commit merging them; the
// write stays committed whatever happens to that merge.
struct WriteOutcome {
  uint64_t change_version = 0;       // the version holding the change
  uint64_t layer_merge_version = 0;  // the merge that followed it, or 0
  std::string layer_merge_error;     // why the merge did not happen, when it failed
};

// Cleanup (Dataset::Cleanup): old versions go, with every file only they used.
//
// A version superseded less than this long ago stays unless forced: a running scan may
// still read it, and a running writer may have read it (docs/compaction.md).
inline constexpr int64_t kCleanupSafetySeconds = 3600;
struct CleanupOptions {
  // Versions committed more than this long ago go (the latest and tagged ones never).
  std::optional<int64_t> older_than_seconds;
  // Keep the newest N versions (N >= 1); older ones go. Combined with older_than_seconds
  // a version goes only when both say so.
  std::optional<uint64_t> keep_versions;
  bool dry_run = false;
  // Unreferenced files no removed version names (left by a killed writer) go only when
  // older than 7 days, as in the reference; this removes them whatever their age. Only
  // safe when no writer is running.
  bool delete_unverified = false;
  // Also remove versions superseded within kCleanupSafetySeconds: a scan still reading
  // one then fails, and a writer that read one recomputes, or fails if it cannot.
  bool force = false;
};

struct CleanupStats {
  uint64_t versions_removed = 0;
  uint64_t versions_kept_recent = 0;  // selected, but kept by the safety window
  uint64_t files_removed = 0;
  uint64_t bytes_freed = 0;
  // Unfinished multipart uploads aborted (on an object store: a writer killed mid-file
  // leaves one), by the age rule of unreferenced files.
  uint64_t uploads_aborted = 0;
  std::vector<std::string> removed;  // paths relative to the dataset, manifests first
};

// One line per fragment: what Optimize would do and why, with the fragment's overlay
// layers, covered cells, bytes, versions since its oldest overlay, stale index rows and
// estimated read amplification.
std::string FormatOptimizePlan(const std::vector<FragmentOptimization>& plan);
// What an Optimize did, ending with the version it left.
std::string FormatOptimizeStats(const OptimizeStats& stats, const std::string& dataset, uint64_t version);

// How UPDATE writes its changes (docs/compaction.md, "How UPDATE writes"):
//   kOverlay  one dense overlay per fragment: only the changed cells are written.
//   kColumns  the SET columns of each touched fragment rewritten in place, all rows,
//             with any overlays on the fragment folded in (Update REWRITE_COLUMNS): later
//             reads cost nothing extra; indexes on those columns stop covering the
//             fragment until they are optimized.
//   kRows     the changed rows deleted and written whole, new values in, to a new
//             fragment: what every Lance reader reads (no overlay, no flag 64).
//   kAuto     the table config key lancelet.update.mode (overlay, columns, rows or
//             auto) when set, else the cost model (ChooseUpdateMode).
enum class UpdateMode { kAuto, kOverlay, kColumns, kRows };
const char* UpdateModeName(UpdateMode mode);
// "overlay", "columns", "rows" or "auto"; InvalidArgument naming `what` otherwise.
UpdateMode ParseUpdateMode(const std::string& text, const std::string& what);

class Dataset;
struct VectorQuery;  // lancelet/vector_search.h
// When a write gave `after` its first overlay (reader feature flag 64, which readers
// without overlay support refuse): one line saying so, how to read it with the
// reference, and that optimize folds it away. Empty otherwise.
std::string FirstOverlayNotice(const Dataset& before, const Dataset& after, const std::string& name);
// When an UPDATE left to the cost model (`asked` kAuto, no lancelet.update.mode key)
// wrote no overlay on `before` because its overlays are not enabled (table config
// lance.overlays.enabled, which datasets other writers made lack): one line saying so
// and how to enable them. Empty otherwise.
std::string OverlaysOffNotice(const Dataset& before, UpdateMode asked, UpdateMode chosen, const std::string& name);
// For the line reporting a write's version: " (version V holds the change; version W
// merged ...)" when a layer merge followed it, " (merging ... failed: ...)" when one
// failed, else empty.
std::string LayerMergeNote(const WriteOutcome& outcome);

using DatasetPtr = std::shared_ptr<const Dataset>;

// What Dataset::Changes reads (docs/changes.md).
struct ChangesOptions {
  std::optional<uint64_t> to_version = std::nullopt;  // the last version whose changes are read; default latest
  // Data columns after the feed's own, in this order; nullopt: every column of to_version.
  std::optional<std::vector<std::string>> columns = std::nullopt;
  // Kinds of rows kept: "insert", "delete", "update_preimage", "update_postimage", and
  // "update" for both images; empty: all.
  std::vector<std::string> change_types = {};
  // An Overwrite or Restore puts every old row (deleted) and every new one (inserted) in
  // the feed; past 1M such rows that is refused unless allowed here.
  bool allow_full = false;
  int64_t batch_size = 8192;
};

// What a scan reads, typed: ScanBuilder fills one, SQL hands its own bound filter in
// without a trip through text, and Dataset::Scan runs one.
struct ScanSpec {
  // Top-level columns to return, in this order; nullopt: every field. "_rowid" and
  // "_rowaddr" may be listed like columns.
  std::optional<std::vector<std::string>> columns = std::nullopt;
  ExprPtr filter = nullptr;  // rows where it is not TRUE are dropped; null: every row
  int64_t limit = -1;  // -1: no limit
  int64_t offset = 0;
  int64_t batch_size = 8192;
  bool with_row_id = false;
  bool with_row_address = false;
  // Whether the filter may be answered through scalar indexes; off, every row is read and
  // filtered, which gives the same rows.
  bool use_index = true;
  std::optional<std::set<uint64_t>> fragments = std::nullopt;  // visit only these fragment ids
  // Candidate rows a caller found (e.g. nearest neighbours): fragment id -> physical
  // offsets, ascending. Only these rows are read (deleted ones skipped) and the filter is
  // evaluated at them; fragments not listed yield nothing and indexes are not consulted.
  // Null: every row.
  std::shared_ptr<const std::map<uint64_t, std::vector<uint64_t>>> rows = nullptr;
  // Candidate rows with a score each (e.g. nearest neighbours and their distance to the
  // query), in any order; not together with `rows`. Only these rows are read (deleted
  // ones, and those of fragments no longer in the version, skipped) and they come out
  // by score ascending, ties by row address (fragment << 32 | offset). The filter is
  // evaluated at them (a postfilter: `limit` counts the rows that pass it, and the scan
  // stops reading once it has them). Indexes are not consulted. Offsets must lie below
  // their fragment's physical rows, each row listed once, and no score be NaN.
  struct ScoredRow {
    uint64_t fragment_id = 0;
    uint64_t offset = 0;
    float score = 0;
  };
  std::shared_ptr<const std::vector<ScoredRow>> scored_rows = nullptr;
  // With scored_rows: the name of a float32 column holding each row's score (e.g.
  // "_distance"), at its place in `columns` when listed there, else last. Empty: none.
  std::string score_column = "";
};

// Builds a scan: which columns, which rows, how many.
class ScanBuilder {
 public:
  explicit ScanBuilder(DatasetPtr dataset) : dataset_(std::move(dataset)) {}
  // Top-level columns to return, in this order (default: all). "_rowid" and "_rowaddr"
  // may be listed like columns.
  ScanBuilder& Columns(std::vector<std::string> columns);
  // A SQL predicate, parsed here (an empty one keeps every row); rows where it is not
  // TRUE are dropped.
  ScanBuilder& Filter(const std::string& predicate);
  ScanBuilder& Filter(ExprPtr predicate);
  ScanBuilder& Limit(int64_t limit);
  ScanBuilder& Offset(int64_t offset);
  ScanBuilder& WithRowId(bool on = true);
  ScanBuilder& WithRowAddress(bool on = true);
  ScanBuilder& BatchSize(int64_t rows);
  // Whether the filter may be answered through scalar indexes (default true); off, every
  // row is read and filtered, which gives the same rows.
  ScanBuilder& UseIndex(bool on);

  std::unique_ptr<RecordBatchReader> Open() const;
  // Reads everything into one batch.
  RecordBatchPtr ToBatch() const;
  const ScanSpec& spec() const { return spec_; }

 private:
  DatasetPtr dataset_;
  ScanSpec spec_;
};

class Dataset : public std::enable_shared_from_this<Dataset> {
 public:
  // Opens the latest version, or `version`. Throws lancelet::Error (error.h) of kind
  // kNotFound, its message naming `uri`, when there is no dataset there (the path does
  // not exist, holds no _versions/*.manifest, or lacks `version`); kCorrupt when its
  // manifest does not decode.
  // Store options are checked against the reference's keys (lancelet/storage_options.h).
  static DatasetPtr Open(const std::string& uri, std::optional<uint64_t> version = std::nullopt,
                         const OpenOptions& options = {});
  // Creates (or, with kOverwrite, replaces; with kAppend, appends to) a dataset from `data`.
  static DatasetPtr Write(const std::string& uri, RecordBatchReader& data, const WriteOptions& options = {});
  static DatasetPtr Write(const std::string& uri, const std::vector<RecordBatchPtr>& batches,
                          const WriteOptions& options = {});

  // Each write returns the dataset at the version it committed.
  DatasetPtr Append(RecordBatchReader& data, const WriteOptions& options = {}) const;
  DatasetPtr Append(const std::vector<RecordBatchPtr>& batches, const WriteOptions& options = {}) const;
  // Delete and Update are read-modify-writes: when a commit that landed after their read
  // version changed what they read (a predicate column on any row, a SET expression's
  // column on a changed row, or deleted a changed row), they re-read the latest version
  // and recompute, up to 20 times, then throw a Conflict error. So concurrent updates
  // never lose each other's changes (docs/conflicts.md). `rows_changed`, when given,
  // receives the rows deleted or updated by the attempt that committed (0: no row
  // matched, and this dataset is returned).
  DatasetPtr Delete(const std::string& predicate, uint64_t* rows_changed = nullptr) const;
  // The same with the predicate as an expression (lancelet/expr.h, unbound, as
  // ScanSpec::filter; SQL hands its WHERE in so): it is never printed and parsed again,
  // and each retry evaluates this expression. The text overloads parse, then do this.
  DatasetPtr Delete(const ExprPtr& predicate, uint64_t* rows_changed = nullptr) const;
  // UPDATE ... SET column = expression, ... [WHERE predicate]: evaluates the predicate and
  // the expressions on current (overlay-resolved) values and writes the new values of
  // the matching rows: as one dense overlay per affected fragment holding only the SET
  // columns and those rows, or as the cost model or `mode` says (UpdateMode). An empty
  // predicate updates every row. Returns this dataset when no row matches.
  struct SetClause {
    std::string column;
    std::string expression;
  };
  // `mode` picks how the changes are written (UpdateMode); `chosen`, when given,
  // receives the mode used, and `outcome` which versions were committed.
  DatasetPtr Update(const std::vector<SetClause>& set, const std::string& predicate = "",
                    uint64_t* rows_changed = nullptr, UpdateMode mode = UpdateMode::kAuto,
                    UpdateMode* chosen = nullptr, WriteOutcome* outcome = nullptr) const;
  // The same with expressions (as Delete's): a null predicate updates every row.
  struct SetExpression {
    std::string column;
    ExprPtr expression;
  };
  DatasetPtr Update(const std::vector<SetExpression>& set, const ExprPtr& predicate, uint64_t* rows_changed = nullptr,
                    UpdateMode mode = UpdateMode::kAuto, UpdateMode* chosen = nullptr,
                    WriteOutcome* outcome = nullptr) const;

  // Builds an index on a column (a struct field as "a.b") over the rows of this version (overlay values
  // resolved, deleted rows skipped) and commits it. `name` defaults to "<column>_idx";
  // an index of that name already there is an error unless `replace`.
  DatasetPtr CreateIndex(const std::string& column, IndexType type, const std::string& name = "",
                         bool replace = false) const;
  // The same with a vector index's options (ignored by scalar types). A vector index is
  // trained on a seeded sample of the column, then the column is streamed once more to
  // group its rows by partition (memory bounded, not the column's size); NULL vectors are
  // not indexed (as the reference), nor rows no partition can hold (NaN values; zero
  // vectors under cosine). Refused, dataset unchanged: a column that is not a
  // fixed_size_list<float32>, more partitions than indexable rows, sub-vectors that do
  // not divide the dimension.
  DatasetPtr CreateIndex(const std::string& column, IndexType type, const VectorIndexOptions& options,
                         const std::string& name = "", bool replace = false) const;
  // Adds, for each index lancelet can build, a segment over the live fragments none of its
  // segments covers (rows appended since), read at this version. Returns this dataset
  // when every index covers every fragment.
  DatasetPtr OptimizeIndices() const;
  // Removes every segment of the index `name` (NotFound when there is none).
  DatasetPtr DropIndex(const std::string& name) const;
  std::vector<IndexInfo> ListIndices() const;
  // The segments of index `name` (NotFound when there is none).
  std::vector<IndexSegmentInfo> IndexStats(const std::string& name) const;
  // Compacts overlays, deletions and small fragments (see CompactionAction), each kind in
  // its own atomic commit; a concurrent write to a fragment being compacted makes the
  // compaction re-plan, never lose the write. Then, unless options say otherwise, indexes
  // cover the fragments they do not (OptimizeIndices). Returns the dataset at the last
  // version it committed, or the version it last planned on when it had nothing to do.
  DatasetPtr Optimize(const OptimizeOptions& options = {}, OptimizeStats* stats = nullptr) const;
  // What Optimize would do, per fragment, without writing.
  std::vector<FragmentOptimization> PlanOptimize(const OptimizeOptions& options = {}) const;
  // Merges overlays of one fragment into one. `committed_versions` picks them (empty:
  // all); they must be contiguous in committed_version: no other overlay of the fragment
  // may lie between the oldest and newest picked (InvalidArgument otherwise).
  DatasetPtr MergeOverlays(uint64_t fragment_id, const std::vector<uint64_t>& committed_versions = {}) const;
  // Deletes the versions `options` selects and the files no kept version references.
  // Never deletes a file a kept version uses; overlay files count as data files.
  CleanupStats Cleanup(const CleanupOptions& options) const;

  // How a scan with `predicate` would run: per index segment searched, the leaf it
  // answered, its hits, and the stale rows re-evaluated; then how many fragments are
  // read whole. One line each.
  std::string Explain(const std::string& predicate) const;
  // The same with the predicate as an expression (null: none), as SQL's EXPLAIN gives it.
  std::string Explain(const ExprPtr& predicate) const;

  // The table config (manifest config): key -> value.
  std::map<std::string, std::string> Config() const;
  // Sets (a value) or removes (nullopt) config keys in one UpdateConfig commit. Keys
  // lancelet reads are checked first (lance.compaction.max_overlays_per_fragment: a
  // positive number or "none").
  DatasetPtr UpdateConfig(const std::map<std::string, std::optional<std::string>>& changes) const;

  // Schema changes that rewrite no data, committed as the reference's Project: columns
  // dropped (top-level or nested "s.a", with their children; data files left holding
  // only dropped columns leave the fragments, their bytes stay until cleanup; indexes on
  // them are dropped), renamed, or their nullability changed (to NOT NULL only when the
  // column holds no NULL). Unknown columns, name clashes and dropping every column are
  // refused in one line naming the column.
  DatasetPtr DropColumns(const std::vector<std::string>& columns) const;
  struct ColumnAlteration {
    std::string column;                  // its name, "s.a" for a nested one
    std::optional<std::string> rename;   // the new name (of the last part)
    std::optional<bool> nullable;
  };
  DatasetPtr AlterColumns(const std::vector<ColumnAlteration>& alterations) const;
  // New columns computed from SQL expressions over the existing ones (`c = a * 2`), as the
  // reference's add_columns: each fragment gets a data file holding the new columns for
  // all its physical rows (deleted ones included), committed as a Merge; no existing file
  // is rewritten. A name that exists, or an expression that does not bind, is refused.
  struct NewColumn {
    std::string name;
    std::string expression;
    ExprPtr expr = nullptr;  // the same, parsed; wins over `expression` when set
  };
  DatasetPtr AddColumns(const std::vector<NewColumn>& columns) const;

  const std::string& uri() const;
  uint64_t version() const;
  SchemaPtr schema() const;
  // Versions present on disk, oldest first.
  std::vector<VersionInfo> ListVersions() const;
  DatasetPtr Checkout(uint64_t version) const;
  DatasetPtr Latest() const;
  // Makes this (usually older) version the latest again, as the reference's restore: a
  // Restore commit whose version holds this version's schema, fragments (deletions and
  // overlays as they were), config and indexes. Versions in between stay readable. A
  // concurrent commit after the latest version read here is overridden, as by an
  // Overwrite; writers that read before the restore fail with a conflict.
  DatasetPtr Restore() const;

  // Tags (the reference's names for versions). Names follow the reference's rule
  // (letters, digits, '.', '-', '_'; no leading/trailing '.', no "..", no ".lock" end).
  // Creating an existing tag is refused; updating, deleting or checking out a missing one
  // is NotFound; so is tagging a version that does not exist. Cleanup never removes a
  // tagged version.
  std::vector<TagInfo> ListTags() const;  // by name
  void CreateTag(const std::string& name, uint64_t version) const;
  void UpdateTag(const std::string& name, uint64_t version) const;
  void DeleteTag(const std::string& name) const;
  DatasetPtr CheckoutTag(const std::string& name) const;
  // Opens the version a tag names.
  static DatasetPtr OpenTag(const std::string& uri, const std::string& tag, const OpenOptions& options = {});

  uint64_t CountRows(const std::string& predicate = "") const;
  uint64_t CountFragments() const;
  // The rows the fragments hold, deleted ones included: the manifest alone, no file read
  // (CountRows reads the deletion files), for plans that need a size, not a count.
  uint64_t PhysicalRows() const;
  // What `lancelet inspect` prints: the version's storage, writer, feature flags, schema
  // with field ids, fragments with their files, deletions and overlays, and indexes.
  std::string Inspect() const;
  ScanBuilder NewScan() const { return ScanBuilder(shared_from_this()); }
  // Runs a scan (ScanBuilder::Open is NewScan()'s spec through this). Throws
  // InvalidArgument for a negative limit, offset or a batch size below 1, and for a
  // filter or column the schema does not have.
  std::unique_ptr<RecordBatchReader> Scan(const ScanSpec& spec) const;
  // Rows by offset among the live (non-deleted) rows of the whole dataset.
  RecordBatchPtr Take(std::span<const uint64_t> row_offsets, const std::vector<std::string>& columns = {}) const;
  // Rows by address: (fragment id << 32) | physical offset in the fragment.
  RecordBatchPtr TakeRowAddresses(std::span<const uint64_t> addresses,
                                  const std::vector<std::string>& columns = {}) const;
  // The change feed: the rows the commits after `from_version` up to and including
  // options.to_version changed, in commit order. Each row is led by _change_type
  // ("insert", "delete", "update_preimage", "update_postimage"; an update gives its two
  // images side by side), _commit_version, _commit_timestamp (timestamp[us, UTC]), _rowid
  // (the stable row id where the dataset has them, else the row's address in that
  // version) and _changed_columns (list<utf8>: for update rows, the top-level columns
  // whose cells the commit wrote; NULL otherwise), then the data columns as the row was
  // (delete, pre-image) or became (insert, post-image). Compaction, index builds and
  // schema or config changes give no rows. Only the rows a commit names are read: the
  // manifests and transactions of the range, and the overlays, deletion files and new
  // fragments the commits added. NotFound for a version that does not exist or was
  // removed by cleanup (naming the oldest readable one), InvalidArgument for from after to.
  std::unique_ptr<RecordBatchReader> Changes(uint64_t from_version, const ChangesOptions& options = {}) const;
  // The k rows nearest the query vector (lancelet/vector_search.h), nearest first, ties
  // by row address, with their distance in "_distance" (float32): through the column's
  // vector index when it can answer, else exactly (every live row the prefilter keeps
  // scored, on ReadAheadThreads() threads). InvalidArgument for a column that is not a
  // vector column, a query of another dimension or holding NaN or infinity, k < 1, and a
  // metric the column's element type does not take.
  std::unique_ptr<RecordBatchReader> Search(const VectorQuery& query) const;
  // How Search answers `query`, found by running it: the index, nprobes and partitions,
  // how many rows the probed partitions held and how many candidates remained, the rows
  // re-ranked, the stale rows re-scored exactly and the fragments searched flat; or why
  // every row was scored.
  std::string ExplainSearch(const VectorQuery& query) const;
  // The vector index a Search of `column` goes through when the query asks neither for
  // exact search nor for another metric than the index's; nullopt when the column has
  // none lancelet can search through (none, or its vectors are not float32).
  std::optional<VectorIndexUse> VectorIndexOn(const std::string& column) const;


 private:
  friend class LibraryAccess;  // the library's own layers reach the state through it
  struct State;  // one version's manifest, store and session, defined inside the library
  explicit Dataset(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

}  // namespace lancelet
