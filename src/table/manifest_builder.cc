#include "table/manifest_builder.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "format/roaring_bitmap.h"
#include "format/row_id_sequence.h"
#include "lancelet/error.h"
#include "lancelet/version.h"
#include "overlay/fragment_overlays.h"
#include "table/commit.h"
#include "table/feature_flags.h"

namespace lancelet::table {

using lance::table::DataFragment;
using lance::table::Manifest;
using lance::table::Transaction;

uint64_t NextFragmentId(const Manifest& base) {
  if (base.has_max_fragment_id()) return uint64_t(base.max_fragment_id()) + 1;
  uint64_t next = 0;
  for (const auto& f : base.fragments()) next = std::max<uint64_t>(next, f.id() + 1);
  return next;
}

namespace {

void AssignNewFragments(Manifest& m, google::protobuf::RepeatedPtrField<DataFragment> fragments, bool stable_row_ids,
                        uint64_t version) {
  uint64_t next_id = NextFragmentId(m);
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

// What every operation's builder starts from: `base` (its transaction, index section,
// tag and top-level fields lancelet does not know cleared) or, when creating, an empty
// manifest of the options' storage version; numbered, stamped with the writer and the time.
// Unknown top-level fields are dropped, not carried: newer writers keep file positions
// there (pylance 14.0.2 writes the transaction section's offset in field 23, not 21), and
// a position copied into another manifest file points at other bytes (pylance 14 panicked
// opening such a manifest). The reference does the same: its protobuf code (prost) keeps
// no unknown fields, so lance 12.0.0 committing on a newer writer's dataset drops them,
// and newer readers must do without them. Features a reader must understand are guarded
// by feature flags, which lancelet refuses when it does not know them.
Manifest NextManifest(const Manifest* base, const CommitOptions& options) {
  Manifest m;
  if (base) {
    m = *base;
    m.clear_transaction_file();
    m.clear_transaction_section();
    m.clear_index_section();
    m.clear_tag();
    m.GetReflection()->MutableUnknownFields(&m)->Clear();
  } else {
    m.mutable_data_format()->set_file_format("lance");
    m.mutable_data_format()->set_version(options.file_version);
    if (options.enable_stable_row_ids) m.set_reader_feature_flags(kFlagStableRowIds);
  }
  m.set_version(base ? base->version() + 1 : 1);
  m.mutable_writer_version()->set_library("lancelet");
  m.mutable_writer_version()->set_version(LANCELET_VERSION_STRING);
  auto now = std::chrono::system_clock::now().time_since_epoch();
  int64_t nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  m.mutable_timestamp()->set_seconds(nanos / 1000000000);
  m.mutable_timestamp()->set_nanos(int32_t(nanos % 1000000000));
  return m;
}

// What the builders below share: the manifest being built (its version the new one) and
// whether rows carry stable ids.
struct Next {
  Manifest& m;
  uint64_t version;
  bool stable_row_ids;
};

void ApplyOverwrite(Next& n, const Transaction::Overwrite& o) {
  Manifest& m = n.m;
  m.clear_fields();
  *m.mutable_fields() = o.schema();
  m.clear_schema_metadata();
  for (const auto& [k, v] : o.schema_metadata()) (*m.mutable_schema_metadata())[k] = v;
  m.clear_fragments();
  // Fragment ids restart; row ids continue so that an id never names two rows.
  m.clear_max_fragment_id();
  AssignNewFragments(m, o.fragments(), n.stable_row_ids, n.version);
  for (const auto& [k, v] : o.config_upsert_values()) (*m.mutable_config())[k] = v;
}

void ApplyDelete(Next& n, const Transaction::Delete& d) {
  std::set<uint64_t> removed(d.deleted_fragment_ids().begin(), d.deleted_fragment_ids().end());
  std::map<uint64_t, const DataFragment*> updated;
  for (const auto& f : d.updated_fragments()) updated[f.id()] = &f;
  google::protobuf::RepeatedPtrField<DataFragment> kept;
  for (const auto& f : n.m.fragments()) {
    if (removed.count(f.id())) continue;
    auto it = updated.find(f.id());
    *kept.Add() = it != updated.end() ? *it->second : f;
  }
  *n.m.mutable_fragments() = std::move(kept);
}

void ApplyDataOverlay(Next& n, const Transaction::DataOverlay& overlay) {
  std::map<uint64_t, DataFragment*> by_id;
  for (auto& f : *n.m.mutable_fragments()) by_id[f.id()] = &f;
  for (const auto& group : overlay.groups()) {
    auto it = by_id.find(group.fragment_id());
    if (it == by_id.end())
      throw RetryableConflict(fmt::format("DataOverlay targets fragment {}, which does not exist in version {}",
                                          group.fragment_id(), n.version - 1));
    DataFragment& fragment = *it->second;
    for (const auto& o : group.overlays()) {
      // Appended, never replacing: concurrent overlay commits both survive. The
      // committed version is this commit's, re-stamped on every retry.
      auto* added = fragment.add_overlays();
      *added = o;
      added->set_committed_version(n.version);
      if (n.stable_row_ids) StampLastUpdated(fragment, *added, n.version);
    }
    overlay::CheckNewestLast(fragment.overlays());
  }
}

// Written by table/merge_commit.cc: overlays, deletions and appended rows in one version.
// Updated fragments replace theirs by id (CheckConflict made sure nobody changed them
// since our read); overlays still at committed_version 0 are the new ones and take this
// version, as a DataOverlay commit would stamp them.
void ApplyUpdate(Next& n, const Transaction::Update& u) {
  std::set<uint64_t> removed(u.removed_fragment_ids().begin(), u.removed_fragment_ids().end());
  std::map<uint64_t, const DataFragment*> updated;
  for (const auto& f : u.updated_fragments()) updated[f.id()] = &f;
  google::protobuf::RepeatedPtrField<DataFragment> kept;
  for (const auto& f : n.m.fragments()) {
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
      o.set_committed_version(n.version);
      if (n.stable_row_ids) StampLastUpdated(next, o, n.version);
    }
    overlay::CheckNewestLast(next.overlays());
    *kept.Add() = std::move(next);
    updated.erase(it);
  }
  if (!removed.empty() || !updated.empty())
    throw RetryableConflict(fmt::format("Update targets fragment {}, which does not exist in version {}",
                                        !removed.empty() ? *removed.begin() : updated.begin()->first, n.version - 1));
  *n.m.mutable_fragments() = std::move(kept);
  AssignNewFragments(n.m, u.new_fragments(), n.stable_row_ids, n.version);
}

// The old fragments go; each group's new fragments follow the kept ones, with ids
// assigned group by group from max_fragment_id + 1 (CarryIndexes relies on it), so
// fragments stay in id order (lance 12.0.0's rewrite indexes past the end of the
// fragment list when a group's old fragments are out of order). Row ids and lineage come
// with the rows (table/compaction.cc), so none are assigned.
void ApplyRewrite(Next& n, const Transaction::Rewrite& rewrite) {
  Manifest& m = n.m;
  std::set<uint64_t> old_ids;
  for (const auto& g : rewrite.groups())
    for (const auto& f : g.old_fragments()) old_ids.insert(f.id());
  std::set<uint64_t> missing = old_ids;
  google::protobuf::RepeatedPtrField<DataFragment> kept;
  for (const auto& f : m.fragments()) {
    if (old_ids.count(f.id())) missing.erase(f.id());
    else *kept.Add() = f;
  }
  if (!missing.empty())
    throw RetryableConflict(fmt::format("Rewrite of fragment {}, which does not exist in version {}",
                                        *missing.begin(), n.version - 1));
  uint64_t next_id = NextFragmentId(m);
  for (const auto& g : rewrite.groups())
    for (const auto& f : g.new_fragments()) {
      auto* added = kept.Add();
      *added = f;
      added->set_id(next_id++);
    }
  *m.mutable_fragments() = std::move(kept);
  if (next_id > 0) m.set_max_fragment_id(uint32_t(next_id - 1));
}

void ApplyUpdateConfig(Next& n, const Transaction::UpdateConfig& u) {
  auto& config = *n.m.mutable_config();
  if (u.config_updates().replace()) config.clear();
  for (const auto& e : u.config_updates().update_entries()) {
    if (e.has_value()) config[e.key()] = e.value();
    else config.erase(e.key());
  }
  for (const auto& [k, v] : u.upsert_values()) config[k] = v;  // legacy form
  for (const auto& k : u.delete_keys()) config.erase(k);
}

// A schema change that rewrites no data: the new fields (ids kept; renames, drops and
// nullability changes), and each fragment's data files of dropped fields only removed,
// as the reference does (their bytes stay until compaction or cleanup).
void ApplyProject(Next& n, const Transaction::Project& p) {
  *n.m.mutable_fields() = p.schema();
  std::set<int32_t> kept;
  for (const auto& f : p.schema()) kept.insert(f.id());
  for (auto& fragment : *n.m.mutable_fragments()) {
    auto* files = fragment.mutable_files();
    for (int i = files->size(); i-- > 0;) {
      const auto& fields = (*files)[i].fields();
      if (std::none_of(fields.begin(), fields.end(), [&](int32_t id) { return kept.count(id) > 0; }))
        files->DeleteSubrange(i, 1);
    }
  }
}

// New columns: the whole schema, and every fragment with its new data file.
void ApplyMerge(Next& n, const Transaction::Merge& merge) {
  *n.m.mutable_fields() = merge.schema();
  if (!merge.schema_metadata().empty()) {
    n.m.clear_schema_metadata();
    for (const auto& [k, v] : merge.schema_metadata()) (*n.m.mutable_schema_metadata())[k] = v;
  }
  *n.m.mutable_fragments() = merge.fragments();
}

// Every operation but Overwrite changes a dataset that exists.
void RequireBase(const Manifest* base, const char* cannot) {
  if (!base) ThrowInvalid("cannot {}: the dataset does not exist yet", cannot);
}

}  // namespace

Manifest BuildManifest(const Manifest* base, const Transaction& t, const CommitOptions& options) {
  Manifest m = NextManifest(base, options);
  const bool stable_row_ids =
      base ? (base->reader_feature_flags() & kFlagStableRowIds) != 0 : options.enable_stable_row_ids;
  Next next{m, m.version(), stable_row_ids};
  switch (t.operation_case()) {
    case Transaction::kAppend:
      RequireBase(base, "append");
      AssignNewFragments(m, t.append().fragments(), stable_row_ids, next.version);
      break;
    case Transaction::kOverwrite:
      ApplyOverwrite(next, t.overwrite());
      break;
    case Transaction::kDelete:
      RequireBase(base, "delete");
      ApplyDelete(next, t.delete_());
      break;
    case Transaction::kDataOverlay:
      RequireBase(base, "add overlays");
      ApplyDataOverlay(next, t.data_overlay());
      break;
    case Transaction::kUpdate:
      RequireBase(base, "update");
      ApplyUpdate(next, t.update());
      break;
    case Transaction::kRewrite:
      RequireBase(base, "rewrite fragments");
      ApplyRewrite(next, t.rewrite());
      break;
    case Transaction::kUpdateConfig:
      RequireBase(base, "change the table config");
      ApplyUpdateConfig(next, t.update_config());
      break;
    case Transaction::kCreateIndex:
      RequireBase(base, "create an index");  // only the index section changes (CarryIndexes)
      break;
    case Transaction::kProject:
      RequireBase(base, "change the schema");
      ApplyProject(next, t.project());
      break;
    case Transaction::kMerge:
      RequireBase(base, "add columns");
      ApplyMerge(next, t.merge());
      break;
    default:
      ThrowNotSupported("committing a {} transaction", OperationName(t));
  }
  ApplyFeatureFlags(m);
  return m;
}

Manifest RestoredManifest(const Manifest& latest, const Manifest& old, const CommitOptions& options) {
  Manifest m = NextManifest(&old, options);
  m.set_version(latest.version() + 1);
  const uint64_t next_fragment = std::max(NextFragmentId(latest), NextFragmentId(old));
  if (next_fragment > 0) m.set_max_fragment_id(uint32_t(next_fragment - 1));
  m.set_next_row_id(std::max(latest.next_row_id(), old.next_row_id()));
  ApplyFeatureFlags(m);
  return m;
}

}  // namespace lancelet::table
