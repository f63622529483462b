// Dataset: opening versions, and the write operations (create/append/overwrite/delete).
#include "lancelet/dataset.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "table/deletions.h"
#include "lancelet/error.h"
#include "table/attempt_files.h"
#include "table/commit.h"
#include "table/compaction.h"
#include "table/update_modes.h"
#include "table/fragment_writer.h"
#include "table/manifest_store.h"
#include "table/scan_plan.h"
#include "table/tags.h"

namespace lancelet {

using table::DatasetState;

namespace {

// Writes all of `data` into new fragments, each file recorded in `attempt`.
std::vector<lance::table::DataFragment> WriteFragments(io::ObjectStore& store, table::AttemptFiles& attempt,
                                                       const std::string& uri, const format::LanceSchema& schema,
                                                       format::FileVersion version, RecordBatchReader& data,
                                                       int64_t max_rows_per_file) {
  table::FragmentWriter writer(store, attempt, uri, schema, version, max_rows_per_file);
  while (auto batch = data.Next()) writer.Write(*batch);
  return writer.Finish();
}

}  // namespace

DatasetPtr Dataset::Open(const std::string& uri, std::optional<uint64_t> version, const OpenOptions& options) {
  auto [store, path] = io::OpenStore(uri, options.storage_options);
  return table::MakeDataset(
      table::LoadState(std::move(store), (options.session ? options.session : Session::Default())->caches(), path, version));
}

DatasetPtr Dataset::Write(const std::string& raw_uri, RecordBatchReader& data, const WriteOptions& options) {
  auto [store, uri] = io::OpenStore(raw_uri, options.storage_options);
  const std::shared_ptr<Session> session = options.session ? options.session : Session::Default();
  auto latest = table::LatestManifest(*store, uri);
  if (options.mode == WriteMode::kAppend) {
    if (!latest) ThrowNotFound("cannot append: dataset '{}' does not exist", uri);
    return Open(raw_uri, std::nullopt, {options.storage_options, session})->Append(data, options);
  }
  if (options.mode == WriteMode::kCreate && latest)
    ThrowInvalid("dataset '{}' already exists (version {}); append to it or overwrite it", uri, latest->version);
  format::FileVersion version = format::FileVersion::Parse(options.file_version);
  SchemaPtr input_schema = data.schema();
  format::LanceSchema schema = format::LanceSchema::FromArrow(*input_schema);
  std::shared_ptr<const DatasetState> base;
  if (latest) base = table::LoadState(store, session->caches(), uri, latest->version);

  // A failed write leaves nothing behind: the files it wrote go, and so do the dataset
  // directories a create made once they are empty again (anything else there, e.g. files
  // another process put in meanwhile, keeps them).
  table::AttemptFiles attempt(*store);
  if (!store->Exists(uri)) {
    attempt.AddDirectory(uri);
    for (const char* sub : {table::kDataDir, table::kVersionsDir, table::kTransactionsDir, table::kDeletionsDir})
      attempt.AddDirectory(io::JoinPath(uri, sub));
  }
  auto fragments = WriteFragments(*store, attempt, uri, schema, version, data, options.max_rows_per_file);
  lance::table::Transaction t;
  auto* overwrite = t.mutable_overwrite();
  schema.ToProto(overwrite->mutable_schema());
  for (const auto& [k, v] : schema.metadata()) (*overwrite->mutable_schema_metadata())[k] = v;
  for (auto& f : fragments) *overwrite->add_fragments() = std::move(f);
  // A dataset lancelet makes permits overlays; one it overwrites keeps its owner's choice.
  if (!latest) (*overwrite->mutable_config_upsert_values())[table::kOverlaysEnabledKey] = "true";
  table::CommitOptions commit;
  commit.max_retries = options.max_commit_retries;
  commit.enable_stable_row_ids = options.enable_stable_row_ids;
  commit.file_version = version.ToString();
  commit.create_only = options.mode == WriteMode::kCreate;
  commit.session = session->caches();
  auto committed = table::Commit(store, uri, base, std::move(t), commit);
  attempt.Published();
  return table::MakeDataset(std::move(committed));
}

DatasetPtr Dataset::Write(const std::string& uri, const std::vector<RecordBatchPtr>& batches,
                          const WriteOptions& options) {
  BatchListReader reader(batches);
  return Write(uri, reader, options);
}

DatasetPtr Dataset::Append(RecordBatchReader& data, const WriteOptions& options) const {
  const DatasetState& s = *state_;
  table::AttemptFiles attempt(*s.store);
  auto fragments = WriteFragments(*s.store, attempt, s.uri, s.schema, s.WriteVersion(), data, options.max_rows_per_file);
  lance::table::Transaction t;
  for (auto& f : fragments) *t.mutable_append()->add_fragments() = std::move(f);
  table::CommitOptions commit;
  commit.max_retries = options.max_commit_retries;
  auto committed = table::Commit(s.store, s.uri, state_, std::move(t), commit);
  attempt.Published();
  return table::MakeDataset(std::move(committed));
}

DatasetPtr Dataset::Append(const std::vector<RecordBatchPtr>& batches, const WriteOptions& options) const {
  BatchListReader reader(batches);
  return Append(reader, options);
}

namespace {

// Deletes the rows where `predicate` is TRUE (`text`, the predicate as the transaction
// records it); null when none matched. Each attempt evaluates the expression again.
std::shared_ptr<const DatasetState> DeleteWhere(std::shared_ptr<const DatasetState> current, const ExprPtr& predicate,
                                                const std::string& text, uint64_t* rows_changed) {
  return table::UntilCommitted(current, "delete", [&](const std::shared_ptr<const DatasetState>& state)
                                                      -> std::shared_ptr<const DatasetState> {
    // Find the newly deleted offsets of every fragment.
    const auto matched = table::OffsetsWhere(state, predicate);
    uint64_t count = 0;
    for (const auto& [fragment, offsets] : matched) count += offsets.size();
    if (rows_changed) *rows_changed = count;
    if (matched.empty()) return nullptr;
    // What the predicate read decides which rows go: a concurrent change to it must
    // make us look again (table/read_set.h).
    auto read_set = table::ReadSet::OfStatement(*state, ReferencedColumns(*predicate), {});
    for (const auto& [fragment, offsets] : matched)
      read_set->changed_rows[fragment] = format::RoaringBitmap::FromValues(offsets);

    table::CommitOptions commit;
    commit.read_set = std::move(read_set);
    return table::BuildAndCommit(state, commit, [&](lance::table::Transaction& t, table::AttemptFiles& attempt) {
      auto* d = t.mutable_delete_();
      d->set_predicate(text);
      for (const auto& fragment : state->manifest.fragments()) {
        auto it = matched.find(fragment.id());
        if (it == matched.end()) continue;
        auto file = table::DeletionFileWith(*state, fragment, it->second, attempt);
        if (!file) {
          d->add_deleted_fragment_ids(fragment.id());
          continue;
        }
        auto* updated = d->add_updated_fragments();
        *updated = fragment;
        *updated->mutable_deletion_file() = std::move(*file);
      }
      return true;
    });
  });
}

}  // namespace

DatasetPtr Dataset::Delete(const std::string& predicate, uint64_t* rows_changed) const {
  if (predicate.empty()) ThrowInvalid("delete needs a predicate (use 'true' to delete every row)");
  auto committed = DeleteWhere(state_, ParseExpression(predicate), predicate, rows_changed);
  return committed ? table::MakeDataset(committed) : shared_from_this();
}

DatasetPtr Dataset::Delete(const ExprPtr& predicate, uint64_t* rows_changed) const {
  if (!predicate) ThrowInvalid("delete needs a predicate (use 'true' to delete every row)");
  auto committed = DeleteWhere(state_, predicate, ToString(*predicate), rows_changed);
  return committed ? table::MakeDataset(committed) : shared_from_this();
}

const std::string& Dataset::uri() const { return state_->uri; }
uint64_t Dataset::version() const { return state_->version(); }
SchemaPtr Dataset::schema() const { return state_->arrow_schema; }

std::vector<VersionInfo> Dataset::ListVersions() const {
  std::vector<VersionInfo> out;
  for (const auto& loc : table::ListManifests(*state_->store, state_->uri)) {
    lance::table::Manifest m;
    try {
      m = table::ReadManifest(*state_->store, loc.path);
    } catch (const Error& e) {
      if (table::RemovedMeanwhile(e, *state_->store, loc.path)) continue;
      throw;
    }
    VersionInfo info;
    info.version = loc.version;
    info.timestamp_nanos = m.timestamp().seconds() * 1000000000 + m.timestamp().nanos();
    if (!m.transaction_file().empty()) {
      try {
        lance::table::Transaction t;
        auto file = state_->store->OpenRead(
            io::JoinPath(io::JoinPath(state_->uri, table::kTransactionsDir), m.transaction_file()));
        if (t.ParseFromString(file->ReadAll())) info.operation = table::OperationName(t);
      } catch (const Error&) {
        info.operation = "?";
      }
    }
    out.push_back(info);
  }
  return out;
}

std::map<std::string, std::string> Dataset::Config() const {
  return {state_->manifest.config().begin(), state_->manifest.config().end()};
}

DatasetPtr Dataset::UpdateConfig(const std::map<std::string, std::optional<std::string>>& changes) const {
  if (changes.empty()) return shared_from_this();
  lance::table::Transaction t;
  lance::table::Manifest check = state_->manifest;
  for (const auto& [key, value] : changes) {
    if (key.empty()) ThrowInvalid("table config of '{}': a key must not be empty", state_->uri);
    auto* entry = t.mutable_update_config()->mutable_config_updates()->add_update_entries();
    entry->set_key(key);
    if (value) {
      entry->set_value(*value);
      (*check.mutable_config())[key] = *value;
    } else {
      check.mutable_config()->erase(key);
    }
  }
  // Keys lancelet reads are checked before they are committed.
  table::MaxOverlaysPerFragment(check);
  table::OverlaysEnabled(check);
  auto mode = check.config().find(table::kUpdateModeKey);
  if (mode != check.config().end()) ParseUpdateMode(mode->second, fmt::format("table config {}", table::kUpdateModeKey));
  // Keys are independent, so the change recomputes trivially when its read version cannot
  // be checked against what came after it (a concurrent cleanup removed versions).
  std::shared_ptr<const DatasetState> state = state_;
  return table::MakeDataset(table::UntilCommitted(state, "config", [&](const std::shared_ptr<const DatasetState>& s) {
    return table::Commit(s->store, s->uri, s, t, table::CommitOptions{});
  }));
}

DatasetPtr Dataset::Checkout(uint64_t version) const {
  return table::MakeDataset(table::LoadState(state_->store, state_->session, state_->uri, version));
}

DatasetPtr Dataset::Latest() const {
  return table::MakeDataset(table::LoadState(state_->store, state_->session, state_->uri, std::nullopt));
}

DatasetPtr Dataset::Restore() const {
  lance::table::Transaction t;
  t.mutable_restore()->set_version(state_->version());
  table::CommitOptions options;
  options.restore_from = state_;
  auto latest = table::LoadState(state_->store, state_->session, state_->uri, std::nullopt);
  return table::MakeDataset(table::Commit(latest->store, latest->uri, latest, std::move(t), options));
}

std::vector<TagInfo> Dataset::ListTags() const { return table::ListTags(*state_->store, state_->uri); }

void Dataset::CreateTag(const std::string& name, uint64_t version) const {
  table::CreateTag(*state_->store, state_->uri, name, version);
}

void Dataset::UpdateTag(const std::string& name, uint64_t version) const {
  table::UpdateTag(*state_->store, state_->uri, name, version);
}

void Dataset::DeleteTag(const std::string& name) const { table::DeleteTag(*state_->store, state_->uri, name); }

DatasetPtr Dataset::CheckoutTag(const std::string& name) const {
  return Checkout(table::GetTag(*state_->store, state_->uri, name).version);
}

DatasetPtr Dataset::OpenTag(const std::string& uri, const std::string& tag, const OpenOptions& options) {
  auto [store, path] = io::OpenStore(uri, options.storage_options);
  uint64_t version = table::GetTag(*store, path, tag).version;
  return table::MakeDataset(
      table::LoadState(std::move(store), (options.session ? options.session : Session::Default())->caches(), path, version));
}

uint64_t Dataset::CountFragments() const { return uint64_t(state_->manifest.fragments_size()); }

uint64_t Dataset::PhysicalRows() const {
  uint64_t rows = 0;
  for (const auto& f : state_->manifest.fragments()) rows += f.physical_rows();
  return rows;
}

uint64_t Dataset::CountRows(const std::string& predicate) const {
  uint64_t count = 0;
  if (predicate.empty()) {
    // Deletion files are read (and checked) rather than trusting num_deleted_rows: they
    // are small, and a corrupt one must fail a count as it fails a scan.
    for (const auto& f : state_->manifest.fragments())
      count += f.physical_rows() - (f.has_deletion_file() ? table::FragmentReader(*state_, f).num_deleted() : 0);
    return count;
  }
  table::ScanPlan plan(state_, table::RowsWhere(std::vector<std::string>{}, predicate));
  plan.ForEachBatch([&](const table::FragmentBatch& b) {
    count += b.rows.size();
    return true;
  });
  return count;
}

}  // namespace lancelet
