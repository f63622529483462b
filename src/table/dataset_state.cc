#include "table/dataset_state.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "array/ascii_case.h"
#include "format/protobuf_logging.h"
#include "lancelet/error.h"
#include "table/deletions.h"
#include "table/feature_flags.h"
#include "table/index_section.h"
#include "table/legacy_dictionaries.h"
#include "table/manifest_store.h"

namespace lancelet::table {

std::string DatasetState::BaseRoot(const lance::table::BasePath& base, const std::string& what) const {
  // A local path is read through the dataset's store (which may wrap the local one); a
  // memory:// base only from a dataset in memory.
  const std::string& path = base.path();
  const bool local = path.find("://") == std::string::npos || path.starts_with("file://");
  if (local || (path.starts_with("memory://") && store == io::DefaultMemoryStore())) return io::OpenStore(path).path;
  ThrowNotSupported("'{}': {} lives under base path {}, the object-store URI '{}', which lancelet cannot reach from "
                    "this dataset's store; remedy: copy the dataset with its source files to the dataset's store",
                    uri, what, base.id(), path);
}

std::string DatasetState::Directory(std::optional<uint32_t> base_id, const char* subdir,
                                    const std::string& file) const {
  if (!base_id) return io::JoinPath(uri, subdir);
  for (const auto& base : manifest.base_paths()) {
    if (base.id() != *base_id) continue;
    const std::string root = BaseRoot(base, fmt::format("file '{}'", file));
    return base.is_dataset_root() ? io::JoinPath(root, subdir) : root;
  }
  ThrowCorrupt("'{}' version {}: file '{}' names base path {}, which the manifest does not list", uri, version(),
               file, *base_id);
}

std::string DatasetState::DataPath(const std::string& file, std::optional<uint32_t> base_id) const {
  if (!base_id) return io::JoinPath(uri, kDataDir, file);
  return io::JoinPath(Directory(base_id, kDataDir, file), file);
}

std::string DatasetState::DataPath(const lance::table::DataFile& file) const {
  return DataPath(file.path(), file.has_base_id() ? std::optional<uint32_t>(file.base_id()) : std::nullopt);
}

std::string DatasetState::IndexDirectory(const lance::table::IndexMetadata& index) const {
  std::optional<uint32_t> base_id;
  if (index.has_base_id()) base_id = index.base_id();
  const std::string uuid = UuidText(index.uuid().uuid());
  return io::JoinPath(Directory(base_id, kIndicesDir, uuid), uuid);
}

index::IdBounds DatasetState::IndexIdBounds() const {
  index::IdBounds out;
  out.row_ids = (manifest.reader_feature_flags() & kFlagStableRowIds) != 0;
  out.next_row_id = manifest.next_row_id();
  if (out.row_ids) return out;
  // Fragment ids are never reused: none above the highest ever given (a manifest without
  // max_fragment_id does not say which that is).
  if (manifest.has_max_fragment_id()) out.max_fragment = manifest.max_fragment_id();
  out.fragment_rows.reserve(size_t(manifest.fragments_size()));
  for (const auto& f : manifest.fragments()) {
    out.fragment_rows.emplace_back(uint32_t(f.id()), f.physical_rows());
    if (out.max_fragment) out.max_fragment = std::max<uint32_t>(*out.max_fragment, uint32_t(f.id()));
  }
  std::sort(out.fragment_rows.begin(), out.fragment_rows.end());
  return out;
}

std::shared_ptr<const index::ScalarIndex> DatasetState::OpenIndex(const lance::table::IndexMetadata& index,
                                                                  index::IndexKind kind) const {
  const std::string dir = IndexDirectory(index);
  return indexes_.GetOrLoad(dir, [&] {
    index::IndexSource source{index.name(), {}, IndexIdBounds()};
    for (const auto& file : index.files())
      if (file.size_bytes() > 0) source.file_sizes[file.path()] = file.size_bytes();
    return std::make_pair(std::shared_ptr<const index::ScalarIndex>(index::ScalarIndex::Open(*store, dir, kind, source)),
                          uint64_t{1});
  });
}

std::shared_ptr<const index::IvfIndex> DatasetState::OpenVectorIndex(const lance::table::IndexMetadata& index) const {
  const std::string dir = IndexDirectory(index);
  return vector_indexes_.GetOrLoad(dir, [&] {
    return std::make_pair(std::shared_ptr<const index::IvfIndex>(index::IvfIndex::Open(*store, dir, IndexIdBounds())),
                          uint64_t{1});
  });
}

std::shared_ptr<const DatasetState::StaleCells> DatasetState::CachedStaleCells(
    const std::string& segment_uuid, const std::function<std::shared_ptr<const StaleCells>()>& build) const {
  return stale_cells_.GetOrLoad(segment_uuid, [&] {
    auto cells = build();
    return std::make_pair(cells, cells->bytes + kCacheEntryBytes);
  });
}

std::shared_ptr<const DatasetState::StaleVectors> DatasetState::CachedStaleVectors(
    const std::string& key, const std::function<std::shared_ptr<const StaleVectors>()>& build) const {
  return stale_vectors_.GetOrLoad(key, [&] {
    auto stale = build();
    return std::make_pair(stale, stale->bytes + kCacheEntryBytes);
  });
}

std::shared_ptr<const DatasetState::RowIdAddresses> DatasetState::CachedRowIdAddresses(
    const std::function<std::shared_ptr<const RowIdAddresses>()>& build) const {
  std::lock_guard lock(row_id_addresses_mutex_);
  if (!row_id_addresses_) row_id_addresses_ = build();
  return row_id_addresses_;
}

const lance::table::DataFragment* DatasetState::FindFragment(uint64_t id) const {
  for (const auto& f : manifest.fragments())
    if (f.id() == id) return &f;
  return nullptr;
}

std::string DatasetState::DeletionFilePath(uint64_t fragment_id, const lance::table::DeletionFile& file) const {
  std::string name = DeletionFileName(fragment_id, file);
  std::optional<uint32_t> base_id;
  if (file.has_base_id()) base_id = file.base_id();
  return io::JoinPath(Directory(base_id, kDeletionsDir, name), name);
}

// A legacy file does not describe its columns: they are the dataset's fields whose ids it
// lists, and its page table runs from the lowest of those ids to the highest.
std::shared_ptr<const format::LanceFileReader> DatasetState::OpenLegacyDataFile(const lance::table::DataFile& file,
                                                                               const std::string& path) const {
  std::vector<int32_t> ids;
  for (int32_t id : file.fields())
    if (id >= 0) ids.push_back(id);
  if (ids.empty()) ThrowCorrupt("'{}': legacy data file '{}' lists no fields", uri, file.path());
  std::vector<format::LanceField> held;
  for (const auto& field : schema.fields()) {
    bool listed = false;
    field.ForEach([&](const format::LanceField& node) {
      listed |= std::find(ids.begin(), ids.end(), node.id) != ids.end();
    });
    if (listed) held.push_back(field);
  }
  return format::LanceFileReader::OpenLegacy(*store, path, format::LanceSchema(std::move(held), {}),
                                             *std::min_element(ids.begin(), ids.end()),
                                             *std::max_element(ids.begin(), ids.end()), file.file_size_bytes());
}

std::shared_ptr<const format::LanceFileReader> DatasetState::OpenDataFile(const lance::table::DataFile& file,
                                                                         uint64_t whole_up_to) const {
  const std::string path = DataPath(file);
  if (IsLegacyDataFile(file))
    return files_.GetOrLoad(path, [&] { return std::make_pair(OpenLegacyDataFile(file, path), uint64_t{1}); });
  return session->DataFile(store, path, file.file_size_bytes(), [&] {
    return format::LanceFileReader::Open(*store, path, file.file_size_bytes(), whole_up_to);
  });
}

std::shared_ptr<const format::LanceFileReader> DatasetState::OpenDataFileOnce(const lance::table::DataFile& file,
                                                                              const std::string& path,
                                                                              uint64_t whole_up_to) const {
  if (IsLegacyDataFile(file)) return OpenLegacyDataFile(file, path);
  return format::LanceFileReader::Open(*store, path, file.file_size_bytes(), whole_up_to);
}

namespace {

// A field's layers from `cache`, made by build() on a miss; each entry costs its
// MemoryBytes (a null answer, which is kept too, only the entry).
template <typename Cache, typename Build>
auto CachedLayers(Cache& cache, uint64_t fragment_id, int32_t field_id, const Build& build) {
  return cache.GetOrLoad({fragment_id, field_id, -1}, [&] {
    auto layers = build();
    return std::make_pair(layers, DatasetState::kCacheEntryBytes + (layers ? layers->MemoryBytes() : 0));
  });
}

}  // namespace

std::shared_ptr<const overlay::CoverageLayers> DatasetState::CachedCoverageLayers(
    uint64_t fragment_id, int32_t field_id,
    const std::function<std::shared_ptr<const overlay::CoverageLayers>()>& build) const {
  return CachedLayers(coverage_layers_, fragment_id, field_id, build);
}

std::shared_ptr<const overlay::FieldLayers> DatasetState::CachedFieldLayers(
    uint64_t fragment_id, int32_t field_id,
    const std::function<std::shared_ptr<const overlay::FieldLayers>()>& build) const {
  return CachedLayers(field_layers_, fragment_id, field_id, build);
}

std::shared_ptr<const overlay::FieldLayers> DatasetState::CachedMergedLayers(
    uint64_t fragment_id, int32_t field_id,
    const std::function<std::shared_ptr<const overlay::FieldLayers>()>& build) const {
  return CachedLayers(merged_layers_, fragment_id, field_id, build);
}

std::shared_ptr<const overlay::FragmentOverlays> DatasetState::OverlaysOf(
    const lance::table::DataFragment& fragment) const {
  return overlays_.GetOrLoad(fragment.id(), [&] {
    const std::string context = fmt::format("'{}' fragment {}", uri, fragment.id());
    auto loaded = overlay::FragmentOverlays::Load(fragment, manifest.version(), context);
    return std::make_pair(loaded, loaded->MemoryBytes());
  });
}

namespace {

constexpr uint64_t kDeprecatedUseV2FormatFlag = 1 << 2;

// nullopt: legacy.
std::optional<format::FileVersion> FileVersionOf(const lance::table::DataFile& file, uint64_t fragment_id,
                                                 const std::string& uri) {
  const uint32_t major = file.file_major_version(), minor = file.file_minor_version();
  if (IsLegacyDataFile(file)) return std::nullopt;
  if (auto version = format::FileVersion::FromDisk(major, minor)) return version;
  ThrowNotSupported("dataset '{}' fragment {}: data file '{}' records Lance file version {}.{}, which lancelet does "
                    "not know (it reads 0.3 and 2.0 to 2.2); use a newer lancelet",
                    uri, fragment_id, file.path(), major, minor);
}

std::string VersionName(const std::optional<format::FileVersion>& v) { return v ? v->ToString() : "0.1 (legacy)"; }

}  // namespace

std::optional<format::FileVersion> StorageVersionOf(const lance::table::Manifest& manifest, const std::string& uri) {
  if (manifest.has_data_format()) {
    const auto& format = manifest.data_format();
    if (!format.file_format().empty() && format.file_format() != "lance")
      ThrowNotSupported("dataset '{}' stores data files as '{}'; lancelet reads only 'lance' files", uri,
                        format.file_format());
    const std::string v = AsciiLower(format.version());
    if (v == "0.1" || v == "legacy") return std::nullopt;
    if (v == "2.0" || v == "0.3" || v == "stable") return format::FileVersion{2, 0};
    if (v == "2.1" || v == "next") return format::FileVersion{2, 1};
    if (v == "2.2") return format::FileVersion{2, 2};
    ThrowNotSupported("dataset '{}': unknown data storage version '{}' in its manifest (lancelet knows 0.1, 2.0, 2.1 "
                      "and 2.2); use a newer lancelet",
                      uri, format.version());
  }
  const lance::table::DataFile* sample = nullptr;
  std::optional<format::FileVersion> version;
  for (const auto& fragment : manifest.fragments())
    for (const auto& file : fragment.files()) {
      auto this_version = FileVersionOf(file, fragment.id(), uri);
      if (!sample) {
        sample = &file;
        version = this_version;
      } else if (this_version != version) {
        ThrowCorrupt("dataset '{}': its manifest records no data storage version and its data files disagree: '{}' "
                     "is {} but '{}' (fragment {}) is {}",
                     uri, sample->path(), VersionName(version), file.path(), fragment.id(), VersionName(this_version));
      }
    }
  if (sample) return version;
  if (manifest.writer_feature_flags() & kDeprecatedUseV2FormatFlag) return format::FileVersion{2, 0};
  return std::nullopt;
}

const format::FileVersion& DatasetState::WriteVersion() const {
  if (!storage_version)
    ThrowNotSupported("dataset '{}' uses the legacy Lance storage version (0.1): its new data files would have to "
                      "be legacy files, which lancelet does not write; migrate it by writing a copy with "
                      "data_storage_version 2.0 or newer (lance: write_dataset(..., data_storage_version=\"2.0\"); "
                      "lancelet: scan --format arrow, then create --from)",
                      uri);
  return *storage_version;
}

namespace {

// Releases before 0.8 recorded no writer version and sometimes no or a wrong
// physical_rows (one migration wrote the live row count). Like the reference, trust a
// fragment's physical_rows only when the manifest names its writer, and otherwise count
// the rows of its first data file. A recorded count is kept when that file cannot be
// opened (reading the fragment then fails on it, as in the reference); a fragment with
// neither is refused, since it would read as empty.
void RecountPhysicalRows(DatasetState& state) {
  const bool trusted = state.manifest.has_writer_version();
  for (auto& fragment : *state.manifest.mutable_fragments()) {
    if ((trusted && fragment.physical_rows() > 0) || fragment.files_size() == 0) continue;
    try {
      fragment.set_physical_rows(state.OpenDataFile(fragment.files(0))->num_rows());
    } catch (const Error& e) {
      if (fragment.physical_rows() == 0)
        Throw(e.kind(), "dataset '{}' fragment {}: its manifest records no row count, and counting the rows of its "
              "data file '{}' failed: {}", state.uri, fragment.id(), fragment.files(0).path(), e.what());
    }
  }
}

}  // namespace

std::shared_ptr<const DatasetState> MakeState(std::shared_ptr<io::ObjectStore> store, std::shared_ptr<SessionCaches> session,
                                              const std::string& uri,
                                              std::string manifest_path, lance::table::Manifest manifest,
                                              std::optional<lance::table::IndexSection> indices,
                                              const format::LanceSchema* dictionaries) {
  CheckReaderFlags(manifest, uri);
  auto state = LibraryAccess::NewState();
  state->store = std::move(store);
  state->session = std::move(session);
  state->uri = uri;
  state->manifest_path = std::move(manifest_path);
  Metadata metadata;
  for (const auto& [k, v] : manifest.schema_metadata()) metadata[k] = v;
  state->schema = format::LanceSchema::FromProto(manifest.fields(), metadata);
  if (dictionaries) CopyLegacyDictionaries(*dictionaries, state->schema);
  else LoadLegacyDictionaries(*state->store, state->manifest_path, manifest, state->schema);
  state->arrow_schema = state->schema.ToArrow();
  state->storage_version = StorageVersionOf(manifest, uri);
  state->indices = indices ? std::move(*indices) : ReadIndexSection(*state->store, state->manifest_path, manifest);
  state->manifest = std::move(manifest);
  RecountPhysicalRows(*state);
  return state;
}

std::shared_ptr<const DatasetState> LoadState(std::shared_ptr<io::ObjectStore> store, std::shared_ptr<SessionCaches> session,
                                              const std::string& uri, std::optional<uint64_t> version) {
  format::SilenceProtobufLogging();  // library users open datasets here
  std::optional<ManifestLocation> loc = version ? FindManifest(*store, uri, *version) : LatestManifest(*store, uri);
  if (!loc) {
    if (!store->Exists(uri)) ThrowNotFound("dataset '{}' does not exist", uri);
    if (version) {
      auto all = ListManifests(*store, uri);
      if (!all.empty())
        ThrowNotFound("dataset '{}' has no version {} (versions {} to {} exist)", uri, *version, all.front().version,
                      all.back().version);
    }
    ThrowNotFound("'{}' is not a Lance dataset: it has no {}/*.manifest", uri, kVersionsDir);
  }
  try {
    const std::string bytes = store->ReadObject(loc->path);
    return session->Version(store, loc->path, bytes, [&] {
      auto manifest = ParseManifestFile(loc->path, bytes);
      if (manifest.version() != loc->version)
        ThrowCorrupt("manifest '{}' is named for version {} but records version {}", loc->path, loc->version,
                     manifest.version());
      auto indices = ParseIndexSection(loc->path, bytes, manifest);  // from the bytes read, not read again
      return MakeState(store, session, uri, loc->path, std::move(manifest), std::move(indices));
    });
  } catch (const Error& e) {
    // The newest version listed was removed while it was read (its manifest, index section
    // or dictionaries): a concurrent cleanup does that only once a newer one exists, so
    // list again.
    if (!version && RemovedMeanwhile(e, *store, loc->path)) return LoadState(store, session, uri, version);
    throw;
  }
}

}  // namespace lancelet::table
