#include "loader/sharded_dataset.h"

#include <sys/resource.h>

#include <algorithm>
#include <mutex>

#include "format/blob_bytes.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"
#include "table/dataset_state.h"
#include "table/fragment_reader.h"
#include "table/lru_cache.h"
#include "table/manifest_store.h"

namespace lancelet {

namespace {

std::string Parent(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string Trimmed(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// A quarter of the soft open-file limit: each cached fragment holds its files open.
size_t OpenFileCap() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  return std::max<size_t>(1, size_t(limit.rlim_cur) / 4);
}

// The k-th surviving offset of a fragment whose deleted offsets are `deleted`: the least
// o with o = k + |deleted <= o|, which is never deleted itself.
uint64_t LiveOffset(const format::RoaringBitmap& deleted, uint64_t k) {
  uint64_t o = k;
  while (true) {
    const uint64_t next = k + deleted.Rank(uint32_t(o + 1));
    if (next == o) return o;
    o = next;
  }
}

}  // namespace

struct ShardedDataset::Impl {
  std::shared_ptr<const table::DatasetState> state;
  std::vector<size_t> fields;  // schema indices
  SchemaPtr schema;
  // Shard s is sizes[s] surviving rows of fragment (manifest position) shards[s].fragment
  // from its surviving row shards[s].first on.
  struct Shard {
    size_t fragment = 0;
    uint64_t first = 0;
  };
  std::vector<Shard> shards;
  std::vector<uint64_t> sizes;
  uint64_t total = 0;
  size_t capacity = 0;

  // Opened fragments, least recently used evicted first. A reader serves one read at a
  // time (`busy`).
  struct Opened {
    Opened(const table::DatasetState& state, const lance::table::DataFragment& fragment) : reader(state, fragment) {}
    table::FragmentReader reader;
    std::mutex busy;
  };
  using OpenedCache = table::LruCache<size_t, std::shared_ptr<Opened>>;
  std::unique_ptr<OpenedCache> opened;

  std::shared_ptr<Opened> Open(size_t fragment) const {
    return opened->GetOrLoad(fragment, [&] {
      auto made = std::make_shared<Opened>(*state, state->manifest.fragments(int(fragment)));
      return std::make_pair(made, uint64_t{1});
    });
  }

  // The data file of `fragment` that holds field `id`, as a path.
  std::string FileOf(const lance::table::DataFragment& fragment, int32_t id) const {
    for (const auto& file : fragment.files())
      for (int32_t f : file.fields())
        if (f == id) return state->DataPath(file);
    ThrowCorrupt("'{}' fragment {}: no data file holds blob field {}", state->uri, fragment.id(), id);
  }

  // Blob descriptors replaced by the bytes they point at.
  ArrayPtr BlobBytes(const lance::table::DataFragment& fragment, size_t field, const ArrayData& descriptors) const {
    const auto& schema_field = state->schema.fields()[field];
    const std::string path = FileOf(fragment, schema_field.id);
    BinaryBuilder out(DataType::LargeBinary());
    for (int64_t i = 0; i < descriptors.length; ++i) {
      if (descriptors.IsNull(i)) {
        out.AppendNull();
        continue;
      }
      out.Append(format::ReadBlobBytes(*state->store, path, format::BlobDescriptorAt(descriptors, i)));
    }
    return out.Finish();
  }
};

ShardedDataset::ShardedDataset(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ShardedDataset::~ShardedDataset() = default;

std::shared_ptr<ShardedDataset> ShardedDataset::FromPath(const std::string& path, LoaderOptions options) {
  auto [store, within] = io::OpenStore(path, options.storage_options);
  return loader::OpenShardedDataset(std::move(store), within, std::move(options));
}

std::shared_ptr<ShardedDataset> loader::OpenShardedDataset(std::shared_ptr<io::ObjectStore> store,
                                                           const std::string& given, LoaderOptions options) {
  const std::string path = Trimmed(given);
  std::string root, manifest_path;
  if (path.ends_with(".manifest")) {
    if (!Parent(path).ends_with(std::string("/") + table::kVersionsDir) && Parent(path) != table::kVersionsDir)
      ThrowInvalid("'{}': a manifest must sit in a dataset's {}/ directory", given, table::kVersionsDir);
    manifest_path = path;
    root = Parent(Parent(path));
  } else {
    // Listing the versions is no read; the newest manifest becomes the pinned path.
    auto versions = table::ListManifests(*store, path);
    if (versions.empty()) ThrowNotFound("'{}' holds no Lance dataset (no manifest under {}/)", given, table::kVersionsDir);
    root = path;
    manifest_path = versions.back().path;
  }
  lance::table::Manifest manifest = table::ReadManifest(*store, manifest_path);  // one read, the file whole
  // No index is needed: an empty index section keeps MakeState from reading it.
  auto state = table::MakeState(store, (options.session ? options.session : Session::Default())->caches(), root, manifest_path, std::move(manifest), lance::table::IndexSection());

  // Refusals, every one at discovery. Unknown reader feature flags were refused by
  // MakeState with the flag's name.
  for (const auto& base : state->manifest.base_paths()) state->BaseRoot(base, "a shard's files");

  auto impl = std::make_unique<ShardedDataset::Impl>();
  impl->state = state;
  const auto& fields = state->schema.fields();
  std::vector<FieldPtr> out_fields;
  auto add = [&](size_t i) {
    impl->fields.push_back(i);
    FieldPtr f = state->arrow_schema->field(i);
    if (fields[i].IsBlob()) f = Field::Make(f->name, DataType::LargeBinary(), f->nullable);
    out_fields.push_back(f);
  };
  if (options.columns.empty()) {
    for (size_t i = 0; i < fields.size(); ++i) add(i);
  } else {
    for (const auto& name : options.columns) {
      const auto* f = state->schema.FindByName(name);
      if (!f) ThrowNotFound("no column '{}' in dataset '{}' (columns: {})", name, root, state->arrow_schema->ToString());
      add(size_t(f - fields.data()));
    }
  }
  impl->schema = std::make_shared<Schema>(out_fields);
  std::vector<uint64_t> live;  // per fragment
  for (const auto& fragment : state->manifest.fragments()) {
    uint64_t deleted = 0;
    if (fragment.has_deletion_file()) {
      deleted = fragment.deletion_file().num_deleted_rows();
      // Old writers left the count out: then the deletion file says (one small read).
      if (deleted == 0) deleted = table::FragmentReader(*state, fragment).num_deleted();
    }
    live.push_back(fragment.physical_rows() - deleted);
    impl->total += live.back();
  }
  uint64_t shard_rows = options.shard_rows;
  if (shard_rows == 0 && options.num_shards > 0)
    shard_rows = std::max<uint64_t>({1, options.min_shard_rows,
                                     (impl->total + options.num_shards - 1) / options.num_shards});
  for (size_t f = 0; f < live.size(); ++f) {
    if (shard_rows == 0 || live[f] == 0) {  // an empty fragment stays one (empty) shard
      impl->shards.push_back({f, 0});
      impl->sizes.push_back(live[f]);
      continue;
    }
    for (uint64_t first = 0; first < live[f]; first += shard_rows) {
      impl->shards.push_back({f, first});
      impl->sizes.push_back(std::min(shard_rows, live[f] - first));
    }
  }
  impl->capacity = std::min(options.metadata_cache_entries, OpenFileCap());
  impl->opened = std::make_unique<ShardedDataset::Impl::OpenedCache>(impl->capacity);
  return std::make_shared<ShardedDataset>(std::move(impl));
}

const std::string& ShardedDataset::path() const { return impl_->state->manifest_path; }
uint64_t ShardedDataset::version() const { return impl_->state->version(); }
SchemaPtr ShardedDataset::schema() const { return impl_->schema; }
size_t ShardedDataset::shard_count() const { return impl_->sizes.size(); }
const std::vector<uint64_t>& ShardedDataset::shard_sizes() const { return impl_->sizes; }
uint64_t ShardedDataset::total() const { return impl_->total; }
size_t ShardedDataset::cache_capacity() const { return impl_->capacity; }

size_t ShardedDataset::cached_shards() const { return impl_->opened->size(); }

RecordBatchPtr ShardedDataset::ReadBatch(size_t shard, std::span<const uint64_t> sample_indices) const {
  if (shard >= shard_count())
    ThrowInvalid("shard {} does not exist: '{}' has {} shards", shard, path(), shard_count());
  for (uint64_t k : sample_indices)
    if (k >= impl_->sizes[shard])
      ThrowInvalid("sample {} does not exist: shard {} of '{}' has {} samples", k, shard, path(), impl_->sizes[shard]);
  const Impl::Shard& where = impl_->shards[shard];
  auto opened = impl_->Open(where.fragment);
  std::lock_guard busy(opened->busy);
  const auto& reader = opened->reader;
  std::vector<uint64_t> offsets(sample_indices.begin(), sample_indices.end());
  for (auto& o : offsets) o += where.first;
  if (reader.num_deleted() > 0)
    for (auto& o : offsets) o = LiveOffset(reader.deletions(), o);
  std::vector<ArrayPtr> columns = reader.Take(impl_->fields, offsets);
  const auto& fields = impl_->state->schema.fields();
  for (size_t c = 0; c < columns.size(); ++c)
    if (fields[impl_->fields[c]].IsBlob())
      columns[c] = impl_->BlobBytes(reader.fragment(), impl_->fields[c], *columns[c]);
  return std::make_shared<RecordBatch>(impl_->schema, std::move(columns), int64_t(offsets.size()));
}

}  // namespace lancelet
