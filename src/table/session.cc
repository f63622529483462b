#include "table/session.h"

#include "table/dataset_state.h"

// xxHash from its header alone (libxxhash-dev): nothing to link, and the hash inlined.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace lancelet {

namespace {
constexpr uint64_t kEntryBytes = 128;  // what a kept entry costs beside its value: key, list node, control block
}  // namespace

Session::Session(const SessionOptions& options) : caches_(std::make_shared<Caches>(options)) {}
Session::~Session() { caches_->Detach(); }

const std::shared_ptr<Session>& Session::Default() {
  static const std::shared_ptr<Session> session = std::make_shared<Session>();
  return session;
}

SessionStats Session::Stats() const {
  return {caches_->Versions(), caches_->DataFiles(), caches_->OverlayColumns()};
}

void Session::Clear() { caches_->Clear(); }

std::shared_ptr<const table::DatasetState> Session::Caches::Version(
    const std::shared_ptr<io::ObjectStore>& store, const std::string& manifest_path, std::string_view manifest_bytes,
    const std::function<std::shared_ptr<const table::DatasetState>()>& make) {
  if (detached_.load(std::memory_order_acquire)) return make();
  // A 64-bit hash of the whole file, seeded with its size: two manifests under one name
  // that differ (a table made again) differ here, short of a hash collision. XXH3 runs
  // at memory speed; std::hash took as long as decoding a 320 KB manifest.
  const uint64_t fingerprint = XXH3_64bits_withSeed(manifest_bytes.data(), manifest_bytes.size(), manifest_bytes.size());
  auto state = versions_
                   .GetOrLoad(Key{store.get(), manifest_path, fingerprint},
                              [&] {
                                return std::make_pair(Kept<std::shared_ptr<const table::DatasetState>>{store, make()},
                                                      uint64_t{1});
                              })
                   .value;
  if (detached_.load(std::memory_order_acquire)) versions_.Clear();  // detached meanwhile
  return state;
}

std::shared_ptr<const format::LanceFileReader> Session::Caches::DataFile(
    const std::shared_ptr<io::ObjectStore>& store, const std::string& path, uint64_t size,
    const std::function<std::shared_ptr<const format::LanceFileReader>()>& open) {
  return files_
      .GetOrLoad(Key{store.get(), path, size},
                 [&] { return std::make_pair(Kept<std::shared_ptr<const format::LanceFileReader>>{store, open()}, uint64_t{1}); })
      .value;
}

ArrayPtr Session::Caches::OverlayColumn(const std::shared_ptr<io::ObjectStore>& store, const std::string& path,
                                int32_t field_id, const std::function<ArrayPtr()>& decode) {
  return overlay_columns_
      .GetOrLoad(Key{store.get(), path, uint64_t(uint32_t(field_id))},
                 [&] {
                   ArrayPtr column = decode();
                   return std::make_pair(Kept<ArrayPtr>{store, column}, kEntryBytes + BufferBytes(*column));
                 })
      .value;
}

std::shared_ptr<const Session::Caches::FieldRows> Session::Caches::OverlayFieldRows(
    const std::shared_ptr<io::ObjectStore>& store, const std::string& path,
    const std::function<std::shared_ptr<const FieldRows>()>& build) {
  return overlay_field_rows_
      .GetOrLoad(Key{store.get(), path, 0},
                 [&] {
                   auto rows = build();
                   return std::make_pair(Kept<std::shared_ptr<const FieldRows>>{store, rows},
                                         kEntryBytes + rows->size() * sizeof(FieldRows::value_type));
                 })
      .value;
}

void Session::Caches::Clear() {
  versions_.Clear();
  files_.Clear();
  overlay_columns_.Clear();
  overlay_field_rows_.Clear();
}

void Session::Caches::Detach() {
  detached_.store(true, std::memory_order_release);
  versions_.Clear();
}

}  // namespace lancelet
