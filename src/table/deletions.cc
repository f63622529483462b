#include "table/deletions.h"

#include <random>

#include <fmt/format.h>

#include "format/deletion_file.h"
#include "lancelet/error.h"
#include "table/dataset_state.h"
#include "table/fragment_reader.h"
#include "table/manifest_store.h"
#include "table/scan_plan.h"
#include "table/scan_planner.h"

namespace lancelet::table {

namespace {
format::DeletionFileType TypeOf(const lance::table::DeletionFile& file) {
  return file.file_type() == lance::table::DeletionFile::BITMAP ? format::DeletionFileType::kBitmap
                                                                  : format::DeletionFileType::kArrowArray;
}
}  // namespace

std::string DeletionFileName(uint64_t fragment_id, const lance::table::DeletionFile& file) {
  return format::DeletionFileName(fragment_id, file.read_version(), file.id(), TypeOf(file));
}

std::string DeletionFilePath(const std::string& uri, uint64_t fragment_id, const lance::table::DeletionFile& file) {
  return io::JoinPath(io::JoinPath(uri, kDeletionsDir), DeletionFileName(fragment_id, file));
}

format::RoaringBitmap ReadDeletionFile(const io::ObjectStore& store, const std::string& path, uint64_t fragment_id,
                                       uint64_t physical_rows, const lance::table::DeletionFile& file) {
  auto vector = format::DeletionVector::Read(store, path, TypeOf(file), fragment_id, physical_rows);
  // num_deleted_rows 0 means "not recorded" (older writers), so it is only checked when set.
  if (file.num_deleted_rows() != 0 && vector.size() != file.num_deleted_rows())
    ThrowCorrupt("deletion file '{}' of fragment {}: it holds {} offsets, but the manifest says {}", path,
                 fragment_id, vector.size(), file.num_deleted_rows());
  return vector.offsets();
}

lance::table::DeletionFile WriteDeletionFile(io::ObjectStore& store, AttemptFiles& attempt, const std::string& uri,
                                             uint64_t fragment_id, uint64_t read_version,
                                             const format::RoaringBitmap& deleted) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  format::DeletionVector vector(deleted);
  auto encoded = vector.Write();
  lance::table::DeletionFile file;
  file.set_file_type(encoded.type == format::DeletionFileType::kBitmap ? lance::table::DeletionFile::BITMAP
                                                                       : lance::table::DeletionFile::ARROW_ARRAY);
  file.set_read_version(read_version);
  file.set_id(rng() >> 1);
  file.set_num_deleted_rows(vector.size());
  store.CreateDir(io::JoinPath(uri, kDeletionsDir));
  const std::string path = DeletionFilePath(uri, fragment_id, file);
  attempt.Put(path, std::move(encoded.bytes));
  return file;
}

std::map<uint64_t, std::vector<uint32_t>> OffsetsWhere(const std::shared_ptr<const DatasetState>& state,
                                                       const ExprPtr& predicate,
                                                       const std::optional<std::set<uint64_t>>& fragments) {
  ScanSpec spec = RowsWhere(std::vector<std::string>{}, predicate);
  spec.fragments = fragments;
  ScanPlan plan(state, spec);
  std::map<uint64_t, std::vector<uint32_t>> matched;
  plan.ForEachBatch([&](const FragmentBatch& b) {
    auto& v = matched[b.fragment->id()];
    b.rows.ForEach([&](uint64_t o) { v.push_back(uint32_t(o)); });
    return true;
  });
  return matched;
}

std::optional<lance::table::DeletionFile> DeletionFileWith(const DatasetState& state,
                                                           const lance::table::DataFragment& fragment,
                                                           std::span<const uint32_t> offsets, AttemptFiles& attempt) {
  format::RoaringBitmap deleted = FragmentReader(state, fragment).deletions();
  deleted.AddMany(offsets);
  if (deleted.Cardinality() == fragment.physical_rows()) return std::nullopt;
  return WriteDeletionFile(*state.store, attempt, state.uri, fragment.id(), state.version(), deleted);
}

format::RoaringBitmap NewlyDeleted(const DatasetState& before, const lance::table::DataFragment& then,
                                   const DatasetState& after, const lance::table::DataFragment& now) {
  if (then.deletion_file().SerializeAsString() == now.deletion_file().SerializeAsString()) return {};
  return FragmentReader(after, now).deletions().AndNot(FragmentReader(before, then).deletions());
}

}  // namespace lancelet::table
