#include "table/commit.h"

#include <chrono>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <google/protobuf/util/message_differencer.h>

#include "format/row_id_sequence.h"
#include "format/roaring_bitmap.h"
#include "lancelet/version.h"
#include "overlay/fragment_overlays.h"
#include "table/attempt_files.h"
#include "table/feature_flags.h"
#include "table/index_section.h"
#include "table/manifest_store.h"

namespace lancelet::table {

using lance::table::DataFragment;
using lance::table::Manifest;
using lance::table::Transaction;

std::string NewUuid() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~0xF000ull) | 0x4000ull;                       // version 4
  lo = (lo & ~(0xC000ull << 48)) | (0x8000ull << 48);       // RFC 4122 variant
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48,
                     lo & 0xFFFFFFFFFFFFull);
}

void BackOffOrGiveUp(int attempt, const std::string& uri, const char* operation, const RetryableConflict& last) {
  if (attempt >= kMaxRecomputes)
    ThrowConflict("{} on '{}' failed with a conflict after {} attempts: concurrent commits kept changing what it "
                  "read (last: {}); run it again",
                  operation, uri, attempt + 1, last.what());
  // A diagnostic for "why is my update slow": each recomputation, one line on stderr.
  static const bool trace = std::getenv("LANCELET_TRACE_CONFLICTS") != nullptr;
  if (trace) std::fprintf(stderr, "lancelet: %s recomputes: %s\n", operation, last.what());
  thread_local std::mt19937 jitter{std::random_device{}()};
  std::this_thread::sleep_for(std::chrono::microseconds(jitter() % (2000u << std::min(attempt, 6))));
}

const char* OperationName(const Transaction& t) {
  switch (t.operation_case()) {
    case Transaction::kAppend: return "Append";
    case Transaction::kDelete: return "Delete";
    case Transaction::kOverwrite: return "Overwrite";
    case Transaction::kCreateIndex: return "CreateIndex";
    case Transaction::kRewrite: return "Rewrite";
    case Transaction::kMerge: return "Merge";
    case Transaction::kRestore: return "Restore";
    case Transaction::kReserveFragments: return "ReserveFragments";
    case Transaction::kUpdate: return "Update";
    case Transaction::kProject: return "Project";
    case Transaction::kUpdateConfig: return "UpdateConfig";
    case Transaction::kDataReplacement: return "DataReplacement";
    case Transaction::kUpdateMemWalState: return "UpdateMemWalState";
    case Transaction::kClone: return "Clone";
    case Transaction::kUpdateBases: return "UpdateBases";
    case Transaction::kDataOverlay: return "DataOverlay";
    case Transaction::OPERATION_NOT_SET: return "Unknown";
  }
  return "Unknown";
}

namespace {

// Fragment ids a transaction rewrites or removes (so others' changes to them collide).
std::set<uint64_t> TouchedFragments(const Transaction& t) {
  std::set<uint64_t> ids;
  auto add = [&](const auto& fragments) { for (const auto& f : fragments) ids.insert(f.id()); };
  switch (t.operation_case()) {
    case Transaction::kDelete:
      add(t.delete_().updated_fragments());
      ids.insert(t.delete_().deleted_fragment_ids().begin(), t.delete_().deleted_fragment_ids().end());
      break;
    case Transaction::kUpdate:
      add(t.update().updated_fragments());
      ids.insert(t.update().removed_fragment_ids().begin(), t.update().removed_fragment_ids().end());
      break;
    case Transaction::kRewrite:
      add(t.rewrite().old_fragments());
      for (const auto& g : t.rewrite().groups()) add(g.old_fragments());
      break;
    case Transaction::kDataReplacement:
      for (const auto& r : t.data_replacement().replacements()) ids.insert(r.fragment_id());
      break;
    case Transaction::kDataOverlay:
      for (const auto& g : t.data_overlay().groups()) ids.insert(g.fragment_id());
      break;
    default: break;
  }
  return ids;
}

bool Intersects(const std::set<uint64_t>& a, const std::set<uint64_t>& b) {
  for (uint64_t x : a)
    if (b.count(x)) return true;
  return false;
}

}  // namespace

ConflictResult CheckConflict(const Transaction& ours, const Transaction& theirs) {
  using R = ConflictResult;
  auto their_op = theirs.operation_case();
  // An operation we cannot parse could have changed anything.
  if (their_op == Transaction::OPERATION_NOT_SET) return R::kIncompatible;
  switch (ours.operation_case()) {
    case Transaction::kOverwrite:
      // Replaces whatever is there; nothing it read can be stale.
      return R::kCompatible;
    case Transaction::kAppend:
      if (their_op == Transaction::kOverwrite || their_op == Transaction::kRestore) return R::kIncompatible;
      return R::kCompatible;
    case Transaction::kDelete:
      switch (their_op) {
        case Transaction::kOverwrite: case Transaction::kRestore: return R::kIncompatible;
        case Transaction::kAppend: case Transaction::kCreateIndex: case Transaction::kReserveFragments:
        case Transaction::kUpdateConfig: case Transaction::kProject:
          return R::kCompatible;
        case Transaction::kMerge:
          return R::kRetry;  // new columns: our rewritten fragments would drop them
        default:
          return Intersects(TouchedFragments(ours), TouchedFragments(theirs)) ? R::kRetry : R::kCompatible;
      }
    case Transaction::kDataOverlay: {
      std::set<uint64_t> ours_ids = TouchedFragments(ours);
      switch (their_op) {
        case Transaction::kOverwrite: case Transaction::kRestore: case Transaction::kUpdateMemWalState:
          return R::kIncompatible;
        case Transaction::kAppend: case Transaction::kCreateIndex: case Transaction::kReserveFragments:
        case Transaction::kProject: case Transaction::kUpdateConfig: case Transaction::kUpdateBases:
        case Transaction::kClone: case Transaction::kDataOverlay:
          return R::kCompatible;
        case Transaction::kDelete: {
          // Deletion vectors alone leave our offsets meaningful; a removed fragment does not.
          for (uint64_t id : theirs.delete_().deleted_fragment_ids())
            if (ours_ids.count(id)) return R::kRetry;
          return R::kCompatible;
        }
        case Transaction::kMerge:
          return R::kRetry;
        case Transaction::kDataReplacement: {
          // A new base for a field we cover must not be shadowed by our older values: the
          // reference once called this compatible and lost updates.
          std::set<int32_t> our_fields;
          for (const auto& g : ours.data_overlay().groups())
            for (const auto& o : g.overlays())
              for (int32_t f : o.data_file().fields()) our_fields.insert(f);
          for (const auto& r : theirs.data_replacement().replacements()) {
            if (!ours_ids.count(r.fragment_id())) continue;
            for (const auto& file : r.new_file().fields())
              if (our_fields.count(file)) return R::kRetry;
          }
          return R::kCompatible;
        }
        default:  // Update, Rewrite: rows of our fragments may have moved
          return Intersects(ours_ids, TouchedFragments(theirs)) ? R::kRetry : R::kCompatible;
      }
    }
    case Transaction::kUpdate:
    case Transaction::kRewrite:
      // Update: a combined MERGE commit (table/merge_commit.h), or a compaction folding or
      // merging overlays; Rewrite: a compaction moving rows (table/compaction.h). Their
      // fragments replace the manifest's whole fragment messages, so any concurrent change
      // to one of them must be recomputed; new columns (Merge) would be dropped too.
      switch (their_op) {
        case Transaction::kOverwrite: case Transaction::kRestore: case Transaction::kUpdateMemWalState:
          return R::kIncompatible;
        case Transaction::kAppend: case Transaction::kCreateIndex: case Transaction::kReserveFragments:
        case Transaction::kUpdateConfig: case Transaction::kUpdateBases: case Transaction::kClone:
          return R::kCompatible;
        case Transaction::kMerge: case Transaction::kProject:
          return R::kRetry;
        default:
          return Intersects(TouchedFragments(ours), TouchedFragments(theirs)) ? R::kRetry : R::kCompatible;
      }
    case Transaction::kUpdateConfig: {
      // Config keys are independent: only a concurrent change of one of ours collides.
      if (their_op == Transaction::kOverwrite || their_op == Transaction::kRestore) return R::kIncompatible;
      if (their_op != Transaction::kUpdateConfig) return R::kCompatible;
      auto keys = [](const Transaction::UpdateConfig& u) {
        std::set<std::string> out;
        for (const auto& e : u.config_updates().update_entries()) out.insert(e.key());
        for (const auto& [k, v] : u.upsert_values()) out.insert(k);
        out.insert(u.delete_keys().begin(), u.delete_keys().end());
        if (u.config_updates().replace()) out.insert("");  // everything
        return out;
      };
      auto a = keys(ours.update_config()), b = keys(theirs.update_config());
      if (a.count("") || b.count("")) return R::kIncompatible;
      for (const auto& k : a)
        if (b.count(k)) return R::kIncompatible;
      return R::kCompatible;
    }
    case Transaction::kCreateIndex:
      // An index is built from our read version and records it as dataset_version:
      // rows appended later are scanned flat, overlays committed later are excluded as
      // stale, deleted rows are dropped at query time. Changes that move rows or columns
      // under it, or another index of the same name, make it wrong.
      switch (their_op) {
        case Transaction::kAppend: case Transaction::kDelete: case Transaction::kDataOverlay:
        case Transaction::kReserveFragments: case Transaction::kUpdateConfig: case Transaction::kUpdateBases:
        case Transaction::kClone:
          return R::kCompatible;
        case Transaction::kUpdate: {
          // Rows rewritten into new fragments are scanned flat; a column rewritten in
          // place under the index is not marked stale by any overlay.
          // (lancelet's own Update lists the fields its overlays cover, which are fine.)
          if (theirs.update().update_mode() != lance::table::Transaction::REWRITE_COLUMNS)
            return R::kCompatible;
          std::set<int32_t> indexed;
          for (const auto& i : ours.create_index().new_indices()) indexed.insert(i.fields().begin(), i.fields().end());
          for (uint32_t f : theirs.update().fields_modified())
            if (indexed.count(int32_t(f))) return R::kIncompatible;
          return R::kCompatible;
        }
        case Transaction::kCreateIndex: {
          std::set<std::string> names;
          for (const auto& i : ours.create_index().new_indices()) names.insert(i.name());
          for (const auto& i : ours.create_index().removed_indices()) names.insert(i.name());
          for (const auto& i : theirs.create_index().new_indices())
            if (names.count(i.name())) return R::kIncompatible;
          for (const auto& i : theirs.create_index().removed_indices())
            if (names.count(i.name())) return R::kIncompatible;
          return R::kCompatible;
        }
        default:
          return R::kIncompatible;
      }
    default:
      return R::kIncompatible;
  }
}

namespace {

void AssignNewFragments(Manifest& m, google::protobuf::RepeatedPtrField<DataFragment> fragments, bool stable_row_ids,
                        uint64_t version) {
  uint64_t next_id = m.has_max_fragment_id() ? uint64_t(m.max_fragment_id()) + 1 : 0;
  for (auto& f : fragments) {
    f.set_id(next_id++);
    if (stable_row_ids) {
      // Rows an UPDATE moved keep their ids (table/update_modes.h); new rows get new ones.
      if (!f.has_inline_row_ids()) {
        uint64_t start = m.next_row_id();
        f.set_inline_row_ids(format::RowIdSequence::FromRange(start, start + f.physical_rows()).Encode());
        m.set_next_row_id(start + f.physical_rows());
      }
      // Row lineage: every new row was created and last updated by this version.
      std::string versions = format::VersionSequence::Uniform(f.physical_rows(), version).Encode();
      f.set_inline_created_at_versions(versions);
      f.set_inline_last_updated_at_versions(versions);
    }
    *m.add_fragments() = std::move(f);
  }
  if (next_id > 0) m.set_max_fragment_id(uint32_t(next_id - 1));
}

// Sets last_updated_at_version of every row an overlay covers to `version`.
void StampLastUpdated(DataFragment& fragment, const lance::table::DataOverlayFile& overlay, uint64_t version) {
  std::string context = fmt::format("last_updated_at versions of fragment {}", fragment.id());
  std::optional<format::VersionSequence> sequence;
  if (fragment.has_inline_last_updated_at_versions()) {
    sequence = format::VersionSequence::Decode(fragment.inline_last_updated_at_versions(), context);
  } else if (fragment.has_inline_created_at_versions()) {
    context = fmt::format("created_at versions of fragment {}", fragment.id());
    sequence = format::VersionSequence::Decode(fragment.inline_created_at_versions(), context);
  } else if (fragment.last_updated_at_version_sequence_case() == DataFragment::kExternalLastUpdatedAtVersions) {
    ThrowNotSupported("{} are stored in an external file, which lancelet does not update yet", context);
  } else {
    return;  // no lineage recorded for this fragment (as the reference, leave it so)
  }
  // One version per physical row (deletions do not rewrite it). Checked before
  // ToVector, so a corrupt run length cannot make us allocate it.
  if (sequence->size() != fragment.physical_rows())
    ThrowCorrupt("{}: the sequence has {} rows but the fragment has {}", context, sequence->size(),
                 fragment.physical_rows());
  std::vector<uint64_t> versions = sequence->ToVector();
  std::vector<std::string_view> bitmaps;
  if (overlay.has_field_coverage()) {
    for (const auto& b : overlay.field_coverage().offset_bitmaps()) bitmaps.push_back(b);
  } else {
    bitmaps.push_back(overlay.shared_offset_bitmap());
  }
  for (auto bytes : bitmaps)
    format::RoaringBitmap::DeserializePortable(bytes, context).ForEach([&](uint32_t offset) {
      if (offset < versions.size()) versions[offset] = version;
    });
  fragment.set_inline_last_updated_at_versions(format::VersionSequence::FromVersions(versions).Encode());
}

}  // namespace

Manifest BuildManifest(const Manifest* base, const Transaction& t, const CommitOptions& options) {
  Manifest m;
  uint64_t version = base ? base->version() + 1 : 1;
  bool stable_row_ids =
      base ? (base->reader_feature_flags() & kFlagStableRowIds) != 0 : options.enable_stable_row_ids;
  if (base) {
    m = *base;
    m.clear_transaction_file();
    m.clear_transaction_section();
    m.clear_index_section();
    m.clear_tag();
  } else {
    m.mutable_data_format()->set_file_format("lance");
    m.mutable_data_format()->set_version(options.file_version);
    if (options.enable_stable_row_ids) m.set_reader_feature_flags(kFlagStableRowIds);
  }
  m.set_version(version);
  m.mutable_writer_version()->set_library("lancelet");
  m.mutable_writer_version()->set_version(LANCELET_VERSION_STRING);
  auto now = std::chrono::system_clock::now().time_since_epoch();
  int64_t nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  m.mutable_timestamp()->set_seconds(nanos / 1000000000);
  m.mutable_timestamp()->set_nanos(int32_t(nanos % 1000000000));

  switch (t.operation_case()) {
    case Transaction::kAppend:
      if (!base) ThrowInvalid("cannot append: the dataset does not exist yet");
      AssignNewFragments(m, t.append().fragments(), stable_row_ids, version);
      break;
    case Transaction::kOverwrite: {
      const auto& o = t.overwrite();
      m.clear_fields();
      *m.mutable_fields() = o.schema();
      m.clear_schema_metadata();
      for (const auto& [k, v] : o.schema_metadata()) (*m.mutable_schema_metadata())[k] = v;
      m.clear_fragments();
      // Fragment ids restart; row ids continue so that an id never names two rows.
      m.clear_max_fragment_id();
      AssignNewFragments(m, o.fragments(), stable_row_ids, version);
      for (const auto& [k, v] : o.config_upsert_values()) (*m.mutable_config())[k] = v;
      break;
    }
    case Transaction::kDelete: {
      if (!base) ThrowInvalid("cannot delete: the dataset does not exist yet");
      const auto& d = t.delete_();
      std::set<uint64_t> removed(d.deleted_fragment_ids().begin(), d.deleted_fragment_ids().end());
      std::map<uint64_t, const DataFragment*> updated;
      for (const auto& f : d.updated_fragments()) updated[f.id()] = &f;
      google::protobuf::RepeatedPtrField<DataFragment> kept;
      for (const auto& f : m.fragments()) {
        if (removed.count(f.id())) continue;
        auto it = updated.find(f.id());
        *kept.Add() = it != updated.end() ? *it->second : f;
      }
      *m.mutable_fragments() = std::move(kept);
      break;
    }
    case Transaction::kDataOverlay: {
      if (!base) ThrowInvalid("cannot add overlays: the dataset does not exist yet");
      std::map<uint64_t, DataFragment*> by_id;
      for (auto& f : *m.mutable_fragments()) by_id[f.id()] = &f;
      for (const auto& group : t.data_overlay().groups()) {
        auto it = by_id.find(group.fragment_id());
        if (it == by_id.end())
          throw RetryableConflict(fmt::format("DataOverlay targets fragment {}, which does not exist in version {}",
                                              group.fragment_id(), base->version()));
        DataFragment& fragment = *it->second;
        for (const auto& o : group.overlays()) {
          // Appended, never replacing: concurrent overlay commits both survive. The
          // committed version is this commit's, re-stamped on every retry.
          auto* added = fragment.add_overlays();
          *added = o;
          added->set_committed_version(version);
          if (stable_row_ids) StampLastUpdated(fragment, *added, version);
        }
        overlay::CheckNewestLast(fragment.overlays());
      }
      break;
    }
    case Transaction::kUpdate: {
      // Written by table/merge_commit.cc: overlays, deletions and appended rows in one
      // version. Updated fragments replace theirs by id (CheckConflict made sure nobody
      // changed them since our read); overlays still at committed_version 0 are the new
      // ones and take this version, as a DataOverlay commit would stamp them.
      if (!base) ThrowInvalid("cannot update: the dataset does not exist yet");
      const auto& u = t.update();
      std::set<uint64_t> removed(u.removed_fragment_ids().begin(), u.removed_fragment_ids().end());
      std::map<uint64_t, const DataFragment*> updated;
      for (const auto& f : u.updated_fragments()) updated[f.id()] = &f;
      google::protobuf::RepeatedPtrField<DataFragment> kept;
      for (const auto& f : m.fragments()) {
        if (removed.count(f.id())) {
          removed.erase(f.id());
          continue;
        }
        auto it = updated.find(f.id());
        if (it == updated.end()) {
          *kept.Add() = f;
          continue;
        }
        DataFragment next = *it->second;
        for (auto& o : *next.mutable_overlays()) {
          if (o.committed_version() != 0) continue;
          o.set_committed_version(version);
          if (stable_row_ids) StampLastUpdated(next, o, version);
        }
        overlay::CheckNewestLast(next.overlays());
        *kept.Add() = std::move(next);
        updated.erase(it);
      }
      if (!removed.empty() || !updated.empty())
        throw RetryableConflict(fmt::format("Update targets fragment {}, which does not exist in version {}",
                                            !removed.empty() ? *removed.begin() : updated.begin()->first,
                                            base->version()));
      *m.mutable_fragments() = std::move(kept);
      AssignNewFragments(m, u.new_fragments(), stable_row_ids, version);
      break;
    }
    case Transaction::kRewrite: {
      // The old fragments go; each group's new fragments follow the kept ones, with ids
      // assigned group by group from max_fragment_id + 1 (CarryIndexes relies on it), so
      // fragments stay in id order (lance 12.0.0's rewrite indexes past the end of the
      // fragment list when a group's old fragments are out of order). Row ids and lineage
      // come with the rows (table/compaction.cc), so none are assigned.
      if (!base) ThrowInvalid("cannot rewrite fragments: the dataset does not exist yet");
      std::set<uint64_t> old_ids;
      for (const auto& g : t.rewrite().groups())
        for (const auto& f : g.old_fragments()) old_ids.insert(f.id());
      std::set<uint64_t> missing = old_ids;
      google::protobuf::RepeatedPtrField<DataFragment> kept;
      for (const auto& f : m.fragments()) {
        if (old_ids.count(f.id())) missing.erase(f.id());
        else *kept.Add() = f;
      }
      if (!missing.empty())
        throw RetryableConflict(fmt::format("Rewrite of fragment {}, which does not exist in version {}",
                                            *missing.begin(), base->version()));
      uint64_t next_id = m.has_max_fragment_id() ? uint64_t(m.max_fragment_id()) + 1 : 0;
      for (const auto& g : t.rewrite().groups())
        for (const auto& f : g.new_fragments()) {
          auto* added = kept.Add();
          *added = f;
          added->set_id(next_id++);
        }
      *m.mutable_fragments() = std::move(kept);
      if (next_id > 0) m.set_max_fragment_id(uint32_t(next_id - 1));
      break;
    }
    case Transaction::kUpdateConfig: {
      if (!base) ThrowInvalid("cannot change the table config: the dataset does not exist yet");
      const auto& u = t.update_config();
      auto& config = *m.mutable_config();
      if (u.config_updates().replace()) config.clear();
      for (const auto& e : u.config_updates().update_entries()) {
        if (e.has_value()) config[e.key()] = e.value();
        else config.erase(e.key());
      }
      for (const auto& [k, v] : u.upsert_values()) config[k] = v;  // legacy form
      for (const auto& k : u.delete_keys()) config.erase(k);
      break;
    }
    case Transaction::kCreateIndex:
      // Only the index section changes (CarryIndexes).
      if (!base) ThrowInvalid("cannot create an index: the dataset does not exist yet");
      break;
    default:
      ThrowNotSupported("committing a {} transaction", OperationName(t));
  }
  ApplyFeatureFlags(m);
  return m;
}

namespace {

// The transaction that produced a committed version: from its transaction file, or the
// copy embedded in the manifest.
Transaction ReadCommittedTransaction(const io::ObjectStore& store, const std::string& uri, const Manifest& m,
                                     const std::string& manifest_path) {
  Transaction t;
  if (!m.transaction_file().empty()) {
    std::string path = io::JoinPath(io::JoinPath(uri, kTransactionsDir), m.transaction_file());
    std::string bytes = store.OpenRead(path)->ReadAll();
    if (!t.ParseFromString(bytes)) ThrowCorrupt("transaction file '{}' does not parse", path);
    return t;
  }
  if (m.has_transaction_section()) {
    auto file = store.OpenRead(manifest_path);
    std::string len = file->Read(m.transaction_section(), 4);
    uint32_t n;
    std::memcpy(&n, len.data(), 4);
    std::string bytes = file->Read(m.transaction_section() + 4, n);
    if (!t.ParseFromString(bytes))
      ThrowCorrupt("manifest '{}': embedded transaction at offset {} does not parse", manifest_path,
                   m.transaction_section());
    return t;
  }
  ThrowConflict("version {} of '{}' records no transaction, so a concurrent commit cannot be checked against it",
                m.version(), uri);
}

}  // namespace

namespace {
std::shared_ptr<const DatasetState> PublishWithRetries(std::shared_ptr<io::ObjectStore> store, const std::string& uri,
                                                       std::shared_ptr<const DatasetState> read,
                                                       const Transaction& transaction, const std::string& txn_name,
                                                       const CommitOptions& options);
}  // namespace

std::shared_ptr<const DatasetState> Commit(std::shared_ptr<io::ObjectStore> store, const std::string& uri,
                                           std::shared_ptr<const DatasetState> read, Transaction transaction,
                                           const CommitOptions& options) {
  if (read) CheckWriterFlags(read->manifest, uri);
  transaction.set_read_version(read ? read->version() : 0);
  if (transaction.uuid().empty()) transaction.set_uuid(NewUuid());
  std::string txn_name = fmt::format("{}-{}.txn", transaction.read_version(), transaction.uuid());
  std::string txn_dir = io::JoinPath(uri, kTransactionsDir);
  store->CreateDir(txn_dir);
  const std::string txn_path = io::JoinPath(txn_dir, txn_name);
  AttemptFiles attempt(*store);
  attempt.Add(txn_path);
  store->Put(txn_path, transaction.SerializeAsString());
  // Everything the new manifest will refer to must be durable before it is visible.
  store->Sync(uri);
  auto committed = PublishWithRetries(store, uri, std::move(read), transaction, txn_name, options);
  attempt.Published();
  return committed;
}

std::shared_ptr<const DatasetState> UntilCommitted(std::shared_ptr<const DatasetState>& state, const char* operation,
                                                   const CommitStep& step) {
  for (int attempt = 0;; ++attempt) {
    try {
      try {
        return step(state);
      } catch (const Error& e) {
        if (state->manifest_path.empty() || !RemovedMeanwhile(e, *state->store, state->manifest_path)) throw;
        throw RetryableConflict(fmt::format("{} on '{}' was reading version {}, which a concurrent cleanup removed ({})",
                                            operation, state->uri, state->version(), e.what()));
      }
    } catch (const RetryableConflict& e) {
      BackOffOrGiveUp(attempt, state->uri, operation, e);
      state = LoadState(state->store, state->uri, std::nullopt);
    }
  }
}

std::shared_ptr<const DatasetState> BuildAndCommit(const std::shared_ptr<const DatasetState>& state,
                                                   const CommitOptions& options, const BuildStep& build) {
  AttemptFiles attempt(*state->store);
  Transaction t;
  if (!build(t, attempt)) return nullptr;
  auto committed = Commit(state->store, state->uri, state, std::move(t), options);
  attempt.Published();
  return committed;
}

namespace {

// A committed version as a loser of the publish race reads it: its manifest and its
// transaction, or nullopt when the version is gone (a concurrent cleanup removed it).
struct CommittedVersion {
  Manifest manifest;
  Transaction transaction;
};
std::optional<CommittedVersion> ReadCommittedVersion(const io::ObjectStore& store, const std::string& uri,
                                                     const ManifestLocation& location) {
  try {
    CommittedVersion v;
    v.manifest = ReadManifest(store, location.path);
    v.transaction = ReadCommittedTransaction(store, uri, v.manifest, location.path);
    return v;
  } catch (const Error& e) {
    if (RemovedMeanwhile(e, store, location.path)) return std::nullopt;
    throw;
  }
}

// Whether `ours` may be applied on top of `latest` although versions between our read
// version `base` and it are gone, their transactions unread. An Overwrite replaces
// whatever is there. An Append depends on nothing it read: in any serial order after
// the missing versions it adds the same rows, provided its files still fit the schema
// and storage version. Anything else may have read or replaced what a missing version
// changed.
bool SurvivesRemovedVersions(const Transaction& ours, const Manifest& base, const Manifest& latest) {
  if (ours.operation_case() == Transaction::kOverwrite) return true;
  if (ours.operation_case() != Transaction::kAppend) return false;
  if (base.fields_size() != latest.fields_size()) return false;
  for (int i = 0; i < base.fields_size(); ++i)
    if (!google::protobuf::util::MessageDifferencer::Equals(base.fields(i), latest.fields(i))) return false;
  return google::protobuf::util::MessageDifferencer::Equals(base.data_format(), latest.data_format());
}

// Checks `transaction` against every version committed after `base` (read version; null
// when creating) up to the newest in `listed` (oldest first): throws Conflict when one is
// incompatible and RetryableConflict when ours must be recomputed. Versions a concurrent
// cleanup removed cannot be checked: only an operation that survives any of them
// (SurvivesRemovedVersions) goes on, the others recompute or fail in one line. Returns
// false when the newest listed version itself went missing: list again.
bool CatchUp(const std::shared_ptr<io::ObjectStore>& store, const std::string& uri,
             const std::shared_ptr<const DatasetState>& base, const std::vector<ManifestLocation>& listed,
             const Transaction& transaction, const CommitOptions& options,
             std::shared_ptr<const DatasetState>& latest_state) {
  const uint64_t from = base ? base->version() : 0;
  const uint64_t latest = listed.back().version;
  const char* ours = OperationName(transaction);
  auto removed = [&](uint64_t first, uint64_t last) {
    if (base && SurvivesRemovedVersions(transaction, base->manifest, latest_state->manifest)) return;
    if (!base && transaction.operation_case() == Transaction::kOverwrite) return;
    std::string which = first == last ? fmt::format("version {}", first) : fmt::format("versions {}-{}", first, last);
    throw RetryableConflict(fmt::format(
        "{} on '{}' read version {}, but {} after it {} removed by a concurrent cleanup before it committed and "
        "cannot be checked for conflicts; nothing was committed: run it again (cleanup keeps versions superseded "
        "within the last hour unless --force)",
        ours, uri, from, which, first == last ? "was" : "were"));
  };
  // The newest version is the one to build on; it must be whole before anything else.
  try {
    latest_state = LoadState(store, uri, latest);
  } catch (const Error& e) {
    if (RemovedMeanwhile(e, *store, listed.back().path)) return false;
    throw;
  }
  if (transaction.operation_case() == Transaction::kOverwrite) return true;  // compatible with anything
  std::shared_ptr<const DatasetState> before = base;
  uint64_t expected = from + 1;
  for (const auto& loc : listed) {
    if (loc.version <= from) continue;
    if (loc.version > expected) removed(expected, loc.version - 1);
    expected = loc.version + 1;
    auto theirs = ReadCommittedVersion(*store, uri, loc);
    if (!theirs) {
      removed(loc.version, loc.version);
      continue;
    }
    auto conflict = CheckConflict(transaction, theirs->transaction);
    if (conflict == ConflictResult::kIncompatible)
      ThrowConflict("{} on '{}' read version {}, but version {} committed a conflicting {}; retry the operation", ours,
                    uri, from, loc.version, OperationName(theirs->transaction));
    if (conflict == ConflictResult::kRetry)
      throw RetryableConflict(fmt::format("{} on '{}' read version {}, but version {} ({}) changed the same fragments",
                                          ours, uri, from, loc.version, OperationName(theirs->transaction)));
    if (options.read_set) {
      // (A read-modify-write never survives a removed version, so `before` is the
      // version just before this one.)
      auto after = MakeState(store, uri, loc.path, std::move(theirs->manifest));
      if (auto stale = FindStaleRead(*options.read_set, *before, *after))
        throw RetryableConflict(fmt::format("{} on '{}' read version {}, but version {} ({}) {}", ours, uri, from,
                                            loc.version, OperationName(theirs->transaction), *stale));
      before = std::move(after);
    }
  }
  return true;
}

std::shared_ptr<const DatasetState> PublishWithRetries(std::shared_ptr<io::ObjectStore> store, const std::string& uri,
                                                       std::shared_ptr<const DatasetState> read,
                                                       const Transaction& transaction, const std::string& txn_name,
                                                       const CommitOptions& options) {
  std::shared_ptr<const DatasetState> base = read;
  std::mt19937 jitter{std::random_device{}()};
  for (int attempt = 0;; ++attempt) {
    // Put-if-absent alone would publish into a version number that a concurrent cleanup
    // freed, where no reader ever looks: a version is published only right after the
    // newest one listed, once every version after our base has been checked.
    const auto listed = ListManifests(*store, uri);
    const uint64_t from = base ? base->version() : 0;
    if (!listed.empty() && listed.back().version > from) {
      if (!base && options.create_only) ThrowConflict("dataset '{}' was created concurrently by another writer", uri);
      std::shared_ptr<const DatasetState> latest;
      if (!CatchUp(store, uri, base, listed, transaction, options, latest)) continue;
      base = std::move(latest);
    } else if (base && (listed.empty() || listed.back().version < from)) {
      ThrowConflict("{} on '{}' read version {}, but the dataset's versions were removed meanwhile (the newest is "
                    "now {}); nothing was committed",
                    OperationName(transaction), uri, from, listed.empty() ? "none" : std::to_string(listed.back().version));
    }
    Manifest next = BuildManifest(base ? &base->manifest : nullptr, transaction, options);
    next.set_transaction_file(txn_name);
    lance::table::IndexSection indices = CarryIndexes(base ? base->indices : lance::table::IndexSection(),
                                                      base ? &base->manifest : nullptr, next,
                                                      transaction);
    const ManifestNaming naming = base ? NamingOf(base->manifest_path) : ManifestNaming::kV2;
    // The state of the new version is made before the version is visible: once it is, a
    // failure would make the caller remove files that the version refers to. Only the
    // best-effort version hint follows the publication.
    Manifest as_written = next;
    if (indices.indices_size() > 0) as_written.set_index_section(0);  // MakeState keeps `indices`
    const format::LanceSchema no_dictionaries;
    auto state = MakeState(store, uri,
                           io::JoinPath(io::JoinPath(uri, kVersionsDir), ManifestFileName(next.version(), naming)),
                           std::move(as_written), indices, base ? &base->schema : &no_dictionaries);
    if (PublishManifest(*store, uri, next, indices, &transaction, naming, base ? &base->schema : nullptr)) {
      WriteVersionHint(*store, uri, next.version());
      return state;
    }
    if (attempt >= options.max_retries)
      ThrowConflict("commit to '{}' lost the race {} times; giving up", uri, attempt + 1);
    std::this_thread::sleep_for(std::chrono::microseconds(jitter() % (1000u << std::min(attempt, 6))));
  }
}

}  // namespace

}  // namespace lancelet::table
