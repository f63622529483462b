// The immutable snapshot behind a Dataset: one version's manifest, decoded once.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "format/lance_file.h"
#include "format/lance_schema.h"
#include "index/ivf_index.h"
#include "index/scalar_index.h"
#include "io/object_store.h"
#include "overlay/fragment_overlays.h"
#include "overlay/resolution.h"
#include "lancelet/overlay_writer.h"
#include "table.pb.h"
#include "table/lru_cache.h"
#include "table/session.h"

namespace lancelet::table {

struct ReadSet;

// Made only as the public Dataset's state (LibraryAccess::NewState), so that any state
// may become a Dataset.
struct DatasetState {
  std::shared_ptr<io::ObjectStore> store;
  // Where opened files and decoded overlay columns are kept, for every version.
  std::shared_ptr<SessionCaches> session;
  std::string uri;
  std::string manifest_path;
  lance::table::Manifest manifest;
  lance::table::IndexSection indices;  // the manifest's index section (table/index_section.h)
  format::LanceSchema schema;  // manifest fields, tombstoned/dropped fields excluded
  SchemaPtr arrow_schema;
  // The dataset's storage version (StorageVersionOf); nullopt for the legacy format
  // (0.1), whose datasets lancelet opens but never writes data files into.
  std::optional<format::FileVersion> storage_version;
  // The version new data files are written in; throws NotSupported, with how to migrate,
  // for a legacy dataset.
  const format::FileVersion& WriteVersion() const;

  uint64_t version() const { return manifest.version(); }
  // The fragment with this id, or null.
  const lance::table::DataFragment* FindFragment(uint64_t id) const;
  // A fragment's overlays, decoded the first time any reader asks and shared after
  // (kept up to kOverlayMetadataCacheBytes for all fragments).
  std::shared_ptr<const overlay::FragmentOverlays> OverlaysOf(const lance::table::DataFragment& fragment) const;
  // Where a fragment's files live: the dataset's own data/ and _deletions/, or, for a
  // file with a base_id (a shallow clone sharing its source's files), the manifest's
  // base path of that id. Throws Corrupt for an unknown id, NotSupported for a base path
  // that is not a local directory.
  std::string DataPath(const std::string& file, std::optional<uint32_t> base_id = std::nullopt) const;
  std::string DataPath(const lance::table::DataFile& file) const;
  std::string DeletionFilePath(uint64_t fragment_id, const lance::table::DeletionFile& file) const;
  // Where base path `base` lives within this dataset's store (its URI through io's
  // OpenStore); NotSupported, naming what needs it (`what`), when this store cannot reach
  // it (an object-store URI).
  std::string BaseRoot(const lance::table::BasePath& base, const std::string& what) const;
  // A fragment's data or overlay file, opened once per dataset version: data files are
  // immutable, so their footer and metadata are decoded once.
  // `whole_up_to`: see LanceFileReader::Open (a reader about to decode most of a small
  // file saves one read per page by taking it whole).
  std::shared_ptr<const format::LanceFileReader> OpenDataFile(
      const lance::table::DataFile& file, uint64_t whole_up_to = format::LanceFileReader::kTailBytes) const;
  // The same file (at `path`, its DataPath) opened for one use and not kept: a caller
  // that decodes all it needs at once would otherwise leave the file's bytes cached beside
  // what it decoded.
  std::shared_ptr<const format::LanceFileReader> OpenDataFileOnce(const lance::table::DataFile& file,
                                                                  const std::string& path,
                                                                  uint64_t whole_up_to) const;
  // A field's overlays in a fragment as coverage bitmaps (overlay::CoverageLayers), made
  // by build() on first use and kept: its read count decides merges across readers.
  std::shared_ptr<const overlay::CoverageLayers> CachedCoverageLayers(
      uint64_t fragment_id, int32_t field_id,
      const std::function<std::shared_ptr<const overlay::CoverageLayers>()>& build) const;
  // A field's overlay layers in a fragment (overlay::FieldLayers), made by build() on
  // first use and kept: resolving a batch then costs binary searches in cell lists that
  // every later read of this version shares.
  std::shared_ptr<const overlay::FieldLayers> CachedFieldLayers(
      uint64_t fragment_id, int32_t field_id,
      const std::function<std::shared_ptr<const overlay::FieldLayers>()>& build) const;
  // A field's layers in a fragment merged into one with their values (FragmentReader::
  // MergedLayersOf), made by build() on first use and kept; build() may return null (not
  // mergeable), which is kept too.
  std::shared_ptr<const overlay::FieldLayers> CachedMergedLayers(
      uint64_t fragment_id, int32_t field_id,
      const std::function<std::shared_ptr<const overlay::FieldLayers>()>& build) const;
  // The directory of an index segment: _indices/<uuid>/ under the dataset (or under the
  // base path its base_id names).
  std::string IndexDirectory(const lance::table::IndexMetadata& index) const;
  // What an id in an index may be at this version (index/id_bounds.h).
  index::IdBounds IndexIdBounds() const;
  // An index segment lancelet can query, opened once per dataset version, its files
  // checked against the sizes the manifest records and this version's IdBounds.
  std::shared_ptr<const index::ScalarIndex> OpenIndex(const lance::table::IndexMetadata& index,
                                                      index::IndexKind kind) const;
  // A vector (IVF) index segment, opened once per dataset version: both files read whole
  // and checked against this version's IdBounds.
  std::shared_ptr<const index::IvfIndex> OpenVectorIndex(const lance::table::IndexMetadata& index) const;
  // Under stable row ids: every row's (row id, row address), sorted by row id, made by
  // build() on first use and kept (indexes store row ids; a query maps them back).
  using RowIdAddresses = std::vector<std::pair<uint64_t, uint64_t>>;
  std::shared_ptr<const RowIdAddresses> CachedRowIdAddresses(
      const std::function<std::shared_ptr<const RowIdAddresses>()>& build) const;
  // What an index segment has not seen: per fragment it covers, the cells of its field
  // that overlays committed after its dataset_version changed (table/index_plan.cc).
  struct StaleCells {
    // The changed cells' new values, searchable as the segment is, ids being what the
    // segment's are (row addresses, or stable row ids); null when no value was read.
    std::shared_ptr<const index::ScalarIndex> values;
    // The segment with those cells added (the segment itself when there are none): one
    // search answers both.
    std::shared_ptr<const index::ScalarIndex> with_values;
    std::map<uint64_t, uint64_t> changed;                  // fragment id -> stale rows
    std::map<uint64_t, format::RoaringBitmap> unreadable;  // fragment id -> cells always re-evaluated
    std::map<uint64_t, format::RoaringBitmap> offsets;     // fragment id -> every changed cell
    uint64_t bytes = 0;                                    // held in memory
  };
  // Made by build() on first use per segment (by uuid) and kept.
  std::shared_ptr<const StaleCells> CachedStaleCells(const std::string& segment_uuid,
                                                     const std::function<std::shared_ptr<const StaleCells>()>& build) const;
  // What a vector index has not seen (table/ivf_search.cc): the rows overlays changed
  // after its segments were built, and their current vectors grouped by the partition of
  // their segment nearest each, so that a query re-scores the stale rows of the
  // partitions it probes, as the index would hold them had it been built now.
  struct StaleVectors {
    std::map<uint64_t, std::vector<uint64_t>> rows;  // fragment id -> ascending stale offsets
    // The same as one bit per offset (bit o % 64 of word o / 64): a probe tests every
    // candidate, and a binary search per candidate cost more than scoring it.
    std::map<uint64_t, std::vector<uint64_t>> bits;
    struct Partitioned {
      std::vector<uint64_t> starts;     // partition p's rows: [starts[p], starts[p + 1])
      std::vector<uint64_t> addresses;  // row addresses, grouped by partition
      std::vector<float> vectors;       // their current vectors, [row][dim]; NULL ones left out
      // IVF_PQ: the segment's own rows less the stale ones, partition p's at
      // [kept_starts[p], kept_starts[p + 1]) with their ids and codes (transposed within the
      // partition as the index holds them): a probe scores these, where the index's
      // partition would have it score the stale rows' old codes only to drop them.
      std::vector<uint64_t> kept_starts;
      std::vector<uint64_t> kept_ids;
      std::vector<uint8_t> kept_codes;
    };
    // Per segment of the index, in manifest order; empty when the vectors would pass
    // kStaleVectorsCacheBytes: every stale row is then scored through a scan per query.
    std::vector<Partitioned> segments;
    uint64_t bytes = 0;  // held in memory
  };
  // Made by build() on first use per index (by name and column) and kept.
  std::shared_ptr<const StaleVectors> CachedStaleVectors(
      const std::string& key, const std::function<std::shared_ptr<const StaleVectors>()>& build) const;
  static constexpr uint64_t kStaleVectorsCacheBytes = 256 << 20;
  // Legacy files kept open by OpenDataFile (the session keeps the others).
  size_t OpenLegacyFiles() const { return files_.size(); }
  // The overlay caches together stay under this many bytes per dataset version.
  static constexpr uint64_t kOverlayCacheBytes = 64 << 20;
  static constexpr uint64_t kCacheEntryBytes = 128;  // key, list node and control block

 private:
  std::shared_ptr<const format::LanceFileReader> OpenLegacyDataFile(const lance::table::DataFile& file,
                                                                    const std::string& path) const;
  // The directory `file` lives in under base path `base_id` (with `subdir` when the base
  // is a dataset root), or under the dataset itself.
  std::string Directory(std::optional<uint32_t> base_id, const char* subdir, const std::string& file) const;

  static constexpr uint64_t kOverlayMetadataCacheBytes = 256 << 20;
  mutable LruCache<uint64_t, std::shared_ptr<const overlay::FragmentOverlays>> overlays_{kOverlayMetadataCacheBytes};
  // Legacy files, which are read through this version's schema; each entry holds only
  // metadata and the open file.
  mutable LruCache<std::string, std::shared_ptr<const format::LanceFileReader>> files_{256};
  mutable LruCache<std::string, std::shared_ptr<const index::ScalarIndex>> indexes_{64};
  mutable LruCache<std::string, std::shared_ptr<const index::IvfIndex>> vector_indexes_{8};
  static constexpr uint64_t kStaleCellsCacheBytes = 64 << 20;
  mutable LruCache<std::string, std::shared_ptr<const StaleCells>> stale_cells_{kStaleCellsCacheBytes};
  mutable LruCache<std::string, std::shared_ptr<const StaleVectors>> stale_vectors_{kStaleVectorsCacheBytes};
  mutable std::mutex row_id_addresses_mutex_;
  mutable std::shared_ptr<const RowIdAddresses> row_id_addresses_;
  // A field of a fragment, and for a value column, which overlay (-1: none).
  struct OverlayCacheKey {
    uint64_t fragment_id;
    int32_t field_id;
    int overlay;
    bool operator==(const OverlayCacheKey&) const = default;
  };
  struct OverlayCacheKeyHash {
    size_t operator()(const OverlayCacheKey& k) const {
      return std::hash<uint64_t>()((k.fragment_id * 1000003 + uint32_t(k.field_id)) * 1000003 + uint32_t(k.overlay));
    }
  };
  using LayersCache = LruCache<OverlayCacheKey, std::shared_ptr<const overlay::FieldLayers>, OverlayCacheKeyHash>;
  mutable LruCache<OverlayCacheKey, std::shared_ptr<const overlay::CoverageLayers>, OverlayCacheKeyHash>
      coverage_layers_{kOverlayCacheBytes / 64};
  mutable LayersCache field_layers_{kOverlayCacheBytes / 4 - kOverlayCacheBytes / 64};
  mutable LayersCache merged_layers_{kOverlayCacheBytes / 4};

 protected:
  DatasetState() = default;
};

// A data file in the legacy Lance format (file versions 0.0 to 0.2; 0.3 is 2.0), which
// lancelet reads (format/legacy_file.h) but never writes, rewrites or overlays.
inline bool IsLegacyDataFile(const lance::table::DataFile& file) {
  return file.file_major_version() == 0 && file.file_minor_version() <= 2;
}

// The storage version of a dataset as the reference determines it: the manifest's
// data_format.version when data_format is present; else the version every data file
// records (they must agree); else, with no data files, 2.0 when the deprecated "use v2
// format" writer flag (1 << 2) is set, and legacy otherwise. nullopt stands for legacy.
std::optional<format::FileVersion> StorageVersionOf(const lance::table::Manifest& manifest, const std::string& uri);

// Loads a version (latest when `version` is empty); checks feature flags.
std::shared_ptr<const DatasetState> LoadState(std::shared_ptr<io::ObjectStore> store, std::shared_ptr<SessionCaches> session,
                                              const std::string& uri, std::optional<uint64_t> version);
// `indices` is the manifest's index section when the caller has it; else it is read from
// the manifest file. So are a legacy dataset's dictionary values, unless `dictionaries`
// (a schema of the same dataset, e.g. the version a commit built on) holds them.
std::shared_ptr<const DatasetState> MakeState(std::shared_ptr<io::ObjectStore> store, std::shared_ptr<SessionCaches> session,
                                              const std::string& uri,
                                              std::string manifest_path, lance::table::Manifest manifest,
                                              std::optional<lance::table::IndexSection> indices = std::nullopt,
                                              const format::LanceSchema* dictionaries = nullptr);

}  // namespace lancelet::table

namespace lancelet {

struct Dataset::State : table::DatasetState {};

// The library's way into what its public classes keep private (each names it a friend).
class LibraryAccess {
 public:
  static const table::DatasetState& StateOf(const Dataset& dataset) { return *dataset.state_; }
  static std::shared_ptr<const table::DatasetState> StatePtrOf(const Dataset& dataset) { return dataset.state_; }
  static std::shared_ptr<table::DatasetState> NewState() { return std::make_shared<Dataset::State>(); }
  // `state` must come from NewState (every one does: its constructor is protected).
  static DatasetPtr MakeDataset(std::shared_ptr<const table::DatasetState> state) {
    return DatasetPtr(new Dataset(std::static_pointer_cast<const Dataset::State>(std::move(state))));
  }
  // OverlayWriter::Commit for a read-modify-write (Dataset::Update): a concurrent change
  // to what `read_set` names makes the commit a table::RetryableConflict. Null: a blind
  // write.
  static DatasetPtr CommitOverlays(const OverlayWriter& writer, const OverlayWriter::Options& options,
                                   std::shared_ptr<const table::ReadSet> read_set);
};

namespace table {

inline const DatasetState& StateOf(const Dataset& dataset) { return LibraryAccess::StateOf(dataset); }
inline const DatasetState& StateOf(const DatasetPtr& dataset) { return LibraryAccess::StateOf(*dataset); }
inline std::shared_ptr<const DatasetState> StatePtrOf(const Dataset& dataset) {
  return LibraryAccess::StatePtrOf(dataset);
}
inline std::shared_ptr<const DatasetState> StatePtrOf(const DatasetPtr& dataset) {
  return LibraryAccess::StatePtrOf(*dataset);
}
inline DatasetPtr MakeDataset(std::shared_ptr<const DatasetState> state) {
  return LibraryAccess::MakeDataset(std::move(state));
}

}  // namespace table
}  // namespace lancelet
