// Dataset::CreateIndex, DropIndex and ListIndices: building index segments and
// committing them as the reference does, in a CreateIndex transaction.
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "table/commit.h"
#include "table/feature_flags.h"
#include "table/index_plan.h"
#include "table/index_section.h"
#include "table/manifest_store.h"
#include "table/scan_plan.h"

namespace lancelet {

namespace {

index::IndexKind KindOf(IndexType type) {
  return type == IndexType::kBTree ? index::IndexKind::kBTree : index::IndexKind::kBitmap;
}

std::shared_ptr<const table::DatasetState> CommitIndexChange(const std::shared_ptr<const table::DatasetState>& state,
                                                      lance::table::Transaction t) {
  return table::Commit(state->store, state->uri, state, std::move(t), table::CommitOptions{});
}

}  // namespace

DatasetPtr Dataset::CreateIndex(const std::string& column, IndexType type, const std::string& name_in,
                                bool replace) const {
  const table::DatasetState& s = *state_;
  const format::LanceField* field = s.schema.FindByName(column);
  if (!field) ThrowNotFound("no column '{}' in dataset '{}' to index (columns: {})", column, s.uri,
                            s.arrow_schema->ToString());
  const index::IndexKind kind = KindOf(type);
  if (!index::CanIndex(*field->type))
    ThrowNotSupported("column '{}' is {}: a {} index holds numbers, strings, binary, booleans, dates and timestamps",
                      column, field->type->ToString(), index::KindName(kind));
  const std::string name = name_in.empty() ? column + "_idx" : name_in;
  lance::table::Transaction t;
  auto* create = t.mutable_create_index();
  for (const auto& existing : s.indices.indices()) {
    if (existing.name() != name) continue;
    if (!replace) ThrowInvalid("dataset '{}' already has an index named '{}' (replace it, or choose another name)",
                               s.uri, name);
    *create->add_removed_indices() = existing;
  }

  // Every live row's current value, with its address (or stable row id).
  const bool row_ids = s.manifest.reader_feature_flags() & table::kFlagStableRowIds;
  const char* id_column = row_ids ? table::kRowIdColumn : table::kRowAddrColumn;
  table::ScanPlan plan(state_, {column, id_column}, true, "", false, false, 65536);
  std::vector<ArrayPtr> values;
  std::vector<uint64_t> ids;
  plan.ForEachBatch([&](const table::FragmentBatch& b) {
    auto out = plan.Project(*b.batch);
    values.push_back(out->column(0));
    const auto* id = out->column(1)->values<uint64_t>();
    ids.insert(ids.end(), id, id + out->num_rows());
    return true;
  });
  ArrayPtr all = values.empty() ? MakeNullArray(field->type, 0) : Concatenate(values);

  const std::string uuid = table::NewUuid();
  lance::table::IndexMetadata meta;
  meta.mutable_uuid()->set_uuid(table::UuidBytes(uuid));
  meta.add_fields(field->id);
  meta.set_name(name);
  meta.set_dataset_version(s.version());
  format::RoaringBitmap covered;
  for (const auto& f : s.manifest.fragments()) covered.Add(uint32_t(f.id()));
  meta.set_fragment_bitmap(covered.SerializePortable(format::RoaringBitmap::RunContainers::kNone));
  meta.mutable_index_details()->set_type_url(index::TypeUrl(kind));
  meta.set_index_version(0);
  meta.set_created_at(uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count()));
  const std::string indices_dir = io::JoinPath(s.uri, table::kIndicesDir);
  const std::string dir = io::JoinPath(indices_dir, uuid);
  const bool had_indices_dir = s.store->Exists(indices_dir);
  std::vector<std::string> written;
  try {
    s.store->CreateDir(indices_dir);
    s.store->CreateDir(dir);
    for (const auto& file : index::WriteIndex(*s.store, dir, kind, s.file_version, *all, ids)) {
      written.push_back(io::JoinPath(dir, file.name));
      auto* f = meta.add_files();
      f->set_path(file.name);
      f->set_size_bytes(file.size);
    }
    *create->add_new_indices() = meta;
    return std::make_shared<Dataset>(CommitIndexChange(state_, std::move(t)));
  } catch (...) {
    // Leave the dataset as it was: no files, no new directories.
    io::RemoveQuietly(*s.store, written);
    s.store->DeleteDirIfEmpty(dir);
    if (!had_indices_dir) s.store->DeleteDirIfEmpty(indices_dir);
    throw;
  }
}

DatasetPtr Dataset::DropIndex(const std::string& name) const {
  lance::table::Transaction t;
  for (const auto& existing : state_->indices.indices())
    if (existing.name() == name) *t.mutable_create_index()->add_removed_indices() = existing;
  if (!t.has_create_index()) ThrowNotFound("dataset '{}' has no index named '{}'", state_->uri, name);
  return std::make_shared<Dataset>(CommitIndexChange(state_, std::move(t)));
}

std::vector<IndexInfo> Dataset::ListIndices() const {
  const table::DatasetState& s = *state_;
  std::vector<IndexInfo> out;
  std::map<std::string, size_t> by_name;
  std::map<std::string, std::set<uint64_t>> covered;
  for (const auto& meta : s.indices.indices()) {
    if (meta.name().rfind("__", 0) == 0) continue;  // system indexes (__lance_frag_reuse, ...)
    auto [it, inserted] = by_name.emplace(meta.name(), out.size());
    if (inserted) {
      IndexInfo info;
      info.name = meta.name();
      auto kind = index::KindOfTypeUrl(meta.index_details().type_url());
      info.type = kind ? index::KindName(*kind) : meta.index_details().type_url();
      for (int32_t id : meta.fields())
        for (const auto& f : s.schema.fields())
          if (f.id == id) info.columns.push_back(f.name);
      info.dataset_version = meta.dataset_version();
      out.push_back(std::move(info));
    }
    IndexInfo& info = out[it->second];
    ++info.segments;
    info.dataset_version = std::min(info.dataset_version, meta.dataset_version());
    std::optional<format::RoaringBitmap> fragments;
    if (!meta.fragment_bitmap().empty())
      fragments = format::RoaringBitmap::DeserializePortable(meta.fragment_bitmap(),
                                                             "fragment_bitmap of index " + meta.name());
    for (const auto& f : s.manifest.fragments()) {
      if (fragments && !fragments->Contains(uint32_t(f.id()))) continue;
      covered[meta.name()].insert(f.id());
      if (f.overlays_size() == 0) continue;
      for (const auto& o : s.OverlaysOf(f)->overlays()) {
        if (o.committed_version <= meta.dataset_version()) continue;
        for (size_t k = 0; k < o.field_ids.size(); ++k)
          for (int32_t id : meta.fields())
            if (o.field_ids[k] == id) info.stale_rows += o.coverage[k]->Cardinality();
      }
    }
  }
  for (auto& info : out) {
    info.indexed_fragments = covered[info.name].size();
    info.unindexed_fragments = uint64_t(s.manifest.fragments_size()) - info.indexed_fragments;
  }
  return out;
}

std::string Dataset::Explain(const std::string& predicate) const {
  const table::DatasetState& s = *state_;
  std::string out = fmt::format("filter: {}\n", predicate.empty() ? "none" : ToString(*ParseExpression(predicate)));
  std::optional<table::IndexedRows> indexed;
  if (!predicate.empty()) indexed = table::PlanIndexedRows(s, *ParseExpression(predicate));
  uint64_t candidates = 0;
  if (indexed) {
    for (const auto& use : indexed->uses)
      out += fmt::format("index {}: {}: {} hits in {} fragments, {} stale rows re-evaluated\n", use.index,
                         use.predicate, use.hits, use.fragments, use.stale);
    for (const auto& [fragment, rows] : indexed->candidates) candidates += rows.size();
  }
  const uint64_t narrowed = indexed ? indexed->candidates.size() : 0;
  out += fmt::format("read: {} candidate rows in {} fragments through indexes, {} fragments scanned whole\n",
                     candidates, narrowed, uint64_t(s.manifest.fragments_size()) - narrowed);
  return out;
}

}  // namespace lancelet
