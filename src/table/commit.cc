#include "table/commit.h"

#include <chrono>
#include <future>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <google/protobuf/util/message_differencer.h>

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

// A Delete: its deletion files replace the fragments' messages.
ConflictResult DeleteAgainst(const Transaction& ours, const Transaction& theirs) {
  using R = ConflictResult;
  const auto their_op = theirs.operation_case();
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
}

// A DataOverlay: its overlays are appended to fragments, naming their offsets.
ConflictResult DataOverlayAgainst(const Transaction& ours, const Transaction& theirs) {
  using R = ConflictResult;
  const auto their_op = theirs.operation_case();
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

// Update: a combined MERGE commit (table/merge_commit.h), or a compaction folding or
// merging overlays; Rewrite: a compaction moving rows (table/compaction.h). Their
// fragments replace the manifest's whole fragment messages, so any concurrent change
// to one of them must be recomputed; new columns (Merge) would be dropped too.
ConflictResult RowsAgainst(const Transaction& ours, const Transaction& theirs) {
  using R = ConflictResult;
  const auto their_op = theirs.operation_case();
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
}

// Config keys are independent: only a concurrent change of one of ours collides.
ConflictResult UpdateConfigAgainst(const Transaction& ours, const Transaction& theirs) {
  using R = ConflictResult;
  const auto their_op = theirs.operation_case();
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

// An index is built from our read version and records it as dataset_version:
// rows appended later are scanned flat, overlays committed later are excluded as
// stale, deleted rows are dropped at query time. Changes that move rows or columns
// under it, or another index of the same name, make it wrong.
ConflictResult CreateIndexAgainst(const Transaction& ours, const Transaction& theirs) {
  using R = ConflictResult;
  const auto their_op = theirs.operation_case();
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
}

// A Project: a new schema over the same fragments. Only another schema change must be
// recomputed (as the reference rules); changes to rows and files keep their meaning.
ConflictResult ProjectAgainst(const Transaction& theirs) {
  using R = ConflictResult;
  switch (theirs.operation_case()) {
    case Transaction::kOverwrite: case Transaction::kRestore: case Transaction::kUpdateMemWalState:
      return R::kIncompatible;
    case Transaction::kMerge: case Transaction::kProject:
      return R::kRetry;
    default:
      return R::kCompatible;
  }
}

// A Merge: every fragment's message replaced, with a new data file each. Anything that
// changed a fragment or added one must be recomputed; so must another schema change.
ConflictResult MergeAgainst(const Transaction& theirs) {
  using R = ConflictResult;
  switch (theirs.operation_case()) {
    case Transaction::kOverwrite: case Transaction::kRestore: case Transaction::kUpdateMemWalState:
      return R::kIncompatible;
    case Transaction::kCreateIndex: case Transaction::kReserveFragments: case Transaction::kUpdateConfig:
      return R::kCompatible;
    default:
      return R::kRetry;
  }
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
    case Transaction::kDelete: return DeleteAgainst(ours, theirs);
    case Transaction::kDataOverlay: return DataOverlayAgainst(ours, theirs);
    case Transaction::kUpdate:
    case Transaction::kRewrite: return RowsAgainst(ours, theirs);
    case Transaction::kUpdateConfig: return UpdateConfigAgainst(ours, theirs);
    case Transaction::kCreateIndex: return CreateIndexAgainst(ours, theirs);
    case Transaction::kProject: return ProjectAgainst(theirs);
    case Transaction::kMerge: return MergeAgainst(theirs);
    case Transaction::kRestore:
      // Like an Overwrite, it replaces whatever came after its read version (the
      // reference's rule); only a MemWAL state it cannot carry stops it.
      return their_op == Transaction::kUpdateMemWalState ? R::kIncompatible : R::kCompatible;
    default:
      return R::kIncompatible;
  }
}

Transaction ReadCommittedTransaction(const io::ObjectStore& store, const std::string& uri, const Manifest& m,
                                     const std::string& manifest_path) {
  Transaction t;
  if (!m.transaction_file().empty()) {
    std::string path = io::JoinPath(io::JoinPath(uri, kTransactionsDir), m.transaction_file());
    std::string bytes = store.ReadObject(path);
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

namespace {
std::shared_ptr<const DatasetState> PublishWithRetries(std::shared_ptr<io::ObjectStore> store, const std::string& uri,
                                                       std::shared_ptr<const DatasetState> read,
                                                       const Transaction& transaction, const std::string& txn_name,
                                                       const CommitOptions& options);
}  // namespace

namespace {
// ObjectStore::PrepareConditionalPut in the background, on a store whose requests are
// costly; no future otherwise. A change starts it as early as it can (UntilCommitted,
// BuildAndCommit, Commit), so that it overlaps the change's reads and writes; once done,
// the store answers at once.
std::future<void> StartConditionalPutCheck(io::ObjectStore& store, const std::string& uri) {
  if (!store.costly_requests()) return {};
  return std::async(std::launch::async,
                    [&store, dir = io::JoinPath(uri, kVersionsDir)] { store.PrepareConditionalPut(dir); });
}
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
  // An object store checks that it honours conditional puts before the first publication;
  // the check runs beside the writes below rather than after them.
  auto probe = StartConditionalPutCheck(*store, uri);
  AttemptFiles own(*store);
  AttemptFiles& attempt = options.attempt ? *options.attempt : own;
  attempt.Put(txn_path, transaction.SerializeAsString());
  attempt.Wait();
  // Everything the new manifest will refer to must be durable before it is visible.
  store->Sync(uri);
  if (probe.valid()) probe.get();
  auto committed = PublishWithRetries(store, uri, std::move(read), transaction, txn_name, options);
  own.Published();
  return committed;
}

std::shared_ptr<const DatasetState> UntilCommitted(std::shared_ptr<const DatasetState>& state, const char* operation,
                                                   const CommitStep& step) {
  auto probe = StartConditionalPutCheck(*state->store, state->uri);  // beside the reads
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
      state = LoadState(state->store, state->session, state->uri, std::nullopt);
    }
  }
}

std::shared_ptr<const DatasetState> BuildAndCommit(const std::shared_ptr<const DatasetState>& state,
                                                   const CommitOptions& options, const BuildStep& build) {
  auto probe = StartConditionalPutCheck(*state->store, state->uri);
  AttemptFiles attempt(*state->store);
  Transaction t;
  if (!build(t, attempt)) return nullptr;
  CommitOptions with_files = options;
  with_files.attempt = &attempt;
  auto committed = Commit(state->store, state->uri, state, std::move(t), with_files);
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
    latest_state = LoadState(store, base ? base->session : options.session, uri, latest);
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
      auto after = MakeState(store, before->session, uri, loc.path, std::move(theirs->manifest));
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
    const bool restore = transaction.operation_case() == Transaction::kRestore;
    if (restore && (!base || !options.restore_from))
      ThrowInvalid("cannot restore '{}': no version to restore was given", uri);
    Manifest next = restore ? RestoredManifest(base->manifest, options.restore_from->manifest, options)
                            : BuildManifest(base ? &base->manifest : nullptr, transaction, options);
    next.set_transaction_file(txn_name);
    lance::table::IndexSection indices =
        restore ? options.restore_from->indices
                : CarryIndexes(base ? base->indices : lance::table::IndexSection(), base ? &base->manifest : nullptr,
                               next, transaction);
    // The schema (and a legacy dataset's dictionaries) of the new version's content.
    const DatasetState* content = restore ? options.restore_from.get() : base.get();
    const ManifestNaming naming = base ? NamingOf(base->manifest_path) : ManifestNaming::kV2;
    // The state of the new version is made before the version is visible: once it is, a
    // failure would make the caller remove files that the version refers to. Only the
    // best-effort version hint follows the publication.
    Manifest as_written = next;
    if (indices.indices_size() > 0) as_written.set_index_section(0);  // MakeState keeps `indices`
    const format::LanceSchema no_dictionaries;
    auto state = MakeState(store, base ? base->session : options.session, uri,
                           io::JoinPath(io::JoinPath(uri, kVersionsDir), ManifestFileName(next.version(), naming)),
                           std::move(as_written), indices, content ? &content->schema : &no_dictionaries);
    const uint64_t newest = listed.empty() ? 0 : listed.back().version;
    if (PublishManifest(*store, uri, next, indices, &transaction, naming, content ? &content->schema : nullptr,
                        newest)) {
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
