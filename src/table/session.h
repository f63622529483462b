// What a Session (lancelet/session.h) keeps for every dataset version opened through
// it: the decoded forms of immutable files. A Lance writer never rewrites a file (a new
// version writes new names), so a data or overlay file opened or decoded for one version
// serves every version that names it: a second query, or a query after a commit, opens
// and decodes none of the files it read before.
//
// Dataset versions are kept whole (DatasetState: the manifest decoded, and the index
// segments, fragment overlay metadata and layers its reads opened), keyed by their
// manifest's bytes: a manifest's name is reused when a dataset is dropped and created
// again, and an index segment checks its row ids against its own version's fragments, so
// a version is the unit that can be shared. Opening a kept version costs the listing and
// one read of its manifest.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "format/lance_file.h"
#include "io/object_store.h"
#include "lancelet/array.h"
#include "lancelet/session.h"
#include "table/lru_cache.h"

namespace lancelet {

namespace table {
struct DatasetState;
}  // namespace table

class Session::Caches {
 public:
  explicit Caches(const SessionOptions& options)
      : versions_(options.versions), files_(options.data_files), overlay_columns_(options.overlay_column_bytes),
        overlay_field_rows_(options.overlay_column_bytes / 64) {}

  // The version whose manifest at `manifest_path` of `store` has `manifest_bytes` (the
  // whole file), made by make() on a miss. Once the Session is gone (Detach), nothing new
  // is kept: a kept version holds these caches, and would hold them forever.
  std::shared_ptr<const table::DatasetState> Version(
      const std::shared_ptr<io::ObjectStore>& store, const std::string& manifest_path, std::string_view manifest_bytes,
      const std::function<std::shared_ptr<const table::DatasetState>()>& make);

  // A data file of `store` (footer and column metadata decoded; a small one held whole),
  // opened by open() on a miss. Keyed by store, path and the size the manifest records
  // (0: unknown); an entry keeps its store alive, since the file reads through it.
  std::shared_ptr<const format::LanceFileReader> DataFile(
      const std::shared_ptr<io::ObjectStore>& store, const std::string& path, uint64_t size,
      const std::function<std::shared_ptr<const format::LanceFileReader>()>& open);
  // A whole value column of a small overlay file of `store`, for one field, decoded by
  // decode() on a miss.
  ArrayPtr OverlayColumn(const std::shared_ptr<io::ObjectStore>& store, const std::string& path, int32_t field_id,
                         const std::function<ArrayPtr()>& decode);

  // The top-level fields of a small overlay file with how many values each holds, made by
  // build() on a miss: kept beside its decoded columns, so that every version reading them
  // checks them against its own coverage without opening the file.
  using FieldRows = std::vector<std::pair<int32_t, uint64_t>>;  // field id, values
  static constexpr uint64_t kNotCounted = UINT64_MAX;            // a field inside a struct
  std::shared_ptr<const FieldRows> OverlayFieldRows(const std::shared_ptr<io::ObjectStore>& store,
                                                    const std::string& path,
                                                    const std::function<std::shared_ptr<const FieldRows>()>& build);

  size_t Versions() const { return versions_.size(); }  // kept now
  size_t DataFiles() const { return files_.size(); }
  size_t OverlayColumns() const { return overlay_columns_.size(); }

  // Drops everything kept: for tests that change a file in place between two reads, which
  // a real writer never does.
  void Clear();
  // The Session is gone: drops the versions kept and keeps no more.
  void Detach();

 private:
  struct Key {
    const io::ObjectStore* store;  // alive while the entry is: see Kept
    std::string path;
    uint64_t detail;  // a data file's size, an overlay column's field id, a manifest's fingerprint
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return (std::hash<std::string>()(k.path) * 31 + std::hash<uint64_t>()(k.detail)) * 31 +
             std::hash<const void*>()(k.store);
    }
  };
  template <typename Value>
  struct Kept {
    std::shared_ptr<io::ObjectStore> store;  // a dead store's address could be reused by another
    Value value;
  };
  std::atomic<bool> detached_{false};
  table::LruCache<Key, Kept<std::shared_ptr<const table::DatasetState>>, KeyHash> versions_;  // entries
  // Data files: entries, each its metadata (and a small file whole).
  table::LruCache<Key, Kept<std::shared_ptr<const format::LanceFileReader>>, KeyHash> files_;
  table::LruCache<Key, Kept<ArrayPtr>, KeyHash> overlay_columns_;  // bytes
  table::LruCache<Key, Kept<std::shared_ptr<const FieldRows>>, KeyHash> overlay_field_rows_;  // bytes
};

namespace table {
using SessionCaches = Session::Caches;
}  // namespace table

}  // namespace lancelet
