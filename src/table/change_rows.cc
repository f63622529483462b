// What one commit changed (change_rows.h).
#include "table/change_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "lancelet/error.h"
#include "table/commit.h"
#include "table/dataset_state.h"
#include "table/deletions.h"
#include "table/feature_flags.h"
#include "table/fragment_reader.h"
#include "table/merge_commit.h"

namespace lancelet::table {

uint64_t CountRows(const Offsets& rows) {
  uint64_t n = 0;
  for (const auto& [id, offsets] : rows) n += offsets.size();
  return n;
}

namespace {

using lance::table::DataFragment;
using lance::table::Transaction;

// An Overwrite or Restore feeds every row of the table twice over (the old ones deleted,
// the new ones inserted); past this many rows it needs ChangesOptions::allow_full.
constexpr uint64_t kFullFeedRows = 1'000'000;

// Moves the first `n` rows of `from` (fragment by fragment, offsets ascending) to `to`.
void TakeFirstRows(Offsets& from, uint64_t n, Offsets& to) {
  for (auto it = from.begin(); it != from.end() && n > 0;) {
    auto& offsets = it->second;
    const uint64_t k = std::min<uint64_t>(n, offsets.size());
    to[it->first].assign(offsets.begin(), offsets.begin() + int64_t(k));
    offsets.erase(offsets.begin(), offsets.begin() + int64_t(k));
    n -= k;
    it = offsets.empty() ? from.erase(it) : std::next(it);
  }
}

// A MERGE's or an UPDATE's moved rows: which deleted rows were copied to which new ones.
// lancelet records the rows it moved (kMovedRowsProperty, their offsets among
// updated_fragment_offset_bitmaps; their copies lead the new fragments). Otherwise, as
// the reference's UPDATE, every deleted row moved when nothing else was overlaid or
// inserted and the counts match.
void PairMovedRows(const DatasetState* before, const Transaction& t, CommitRows& rows) {
  if (before && (before->manifest.reader_feature_flags() & kFlagStableRowIds)) {
    rows.moves = CommitRows::Moves::kByRowId;
    return;
  }
  const auto& u = t.update();
  auto recorded = t.transaction_properties().find(kMovedRowsProperty);
  if (recorded == t.transaction_properties().end()) {
    if (rows.updated.empty() && !u.has_inserted_rows() && CountRows(rows.deleted) == CountRows(rows.inserted)) {
      rows.moves = CommitRows::Moves::kInOrder;
      rows.moved_before = std::move(rows.deleted);
      rows.moved_after = std::move(rows.inserted);
      rows.deleted.clear();
      rows.inserted.clear();
    }
    return;
  }
  uint64_t n = 0;
  for (auto& [id, offsets] : rows.deleted) {
    auto bytes = u.updated_fragment_offset_bitmaps().find(id);
    if (bytes == u.updated_fragment_offset_bitmaps().end()) continue;
    auto moved = format::RoaringBitmap::DeserializePortable(bytes->second, "the update's offsets");
    std::vector<uint64_t> kept;
    for (uint64_t o : offsets) {
      if (moved.Contains(uint32_t(o))) {
        rows.moved_before[id].push_back(o);
        ++n;
      } else {
        kept.push_back(o);
      }
    }
    offsets = std::move(kept);
  }
  std::erase_if(rows.deleted, [](const auto& entry) { return entry.second.empty(); });
  if (n != std::stoull(recorded->second) || n > CountRows(rows.inserted))
    ThrowCorrupt("'{}' version {}: the update records {} moved rows, and {} of its deleted rows are named moved",
                 StateOf(rows.after).uri, rows.version, recorded->second, n);
  TakeFirstRows(rows.inserted, n, rows.moved_after);
  if (n > 0) rows.moves = CommitRows::Moves::kInOrder;
}

std::map<uint64_t, const DataFragment*> FragmentsById(const DatasetState& state) {
  std::map<uint64_t, const DataFragment*> out;
  for (const auto& f : state.manifest.fragments()) out[f.id()] = &f;
  return out;
}

// The live rows of `fragment` as `state` has it.
std::vector<uint64_t> LiveOffsets(const DatasetState& state, const DataFragment& fragment) {
  FragmentReader reader(state, fragment);
  const format::RoaringBitmap& deleted = reader.deletions();
  std::vector<uint64_t> out;
  out.reserve(fragment.physical_rows() - deleted.Cardinality());
  for (uint64_t i = 0; i < fragment.physical_rows(); ++i)
    if (!deleted.Contains(uint32_t(i))) out.push_back(i);
  return out;
}

// Every fragment of `before` the commit removed (all its live rows), and the rows its
// kept fragments newly deleted, into `rows.deleted`; every fragment new in `after` into
// `rows.inserted`.
void DiffRows(const DatasetState* before, const DatasetState& after, CommitRows& rows) {
  const auto now = FragmentsById(after);
  std::map<uint64_t, const DataFragment*> then;
  if (before) then = FragmentsById(*before);
  for (const auto& [id, fragment] : then) {
    auto it = now.find(id);
    if (it == now.end()) {
      if (auto live = LiveOffsets(*before, *fragment); !live.empty()) rows.deleted[id] = std::move(live);
      continue;
    }
    const format::RoaringBitmap gone = NewlyDeleted(*before, *fragment, after, *it->second);
    if (!gone.IsEmpty()) {
      auto& offsets = rows.deleted[id];
      for (uint32_t o : gone.ToVector()) offsets.push_back(o);
    }
  }
  for (const auto& [id, fragment] : now)
    if (!then.count(id) && fragment->physical_rows() > 0) rows.inserted[id] = LiveOffsets(after, *fragment);
}

// The top-level column of `after`'s schema each field id lies under.
std::unordered_map<int32_t, size_t> TopColumns(const DatasetState& state) {
  std::unordered_map<int32_t, size_t> out;
  const auto& fields = state.schema.fields();
  for (size_t i = 0; i < fields.size(); ++i)
    fields[i].ForEach([&](const format::LanceField& f) { out[f.id] = i; });
  return out;
}

// The overlays `after` has on each fragment that `before` did not: the cells they cover,
// per top-level column, as rows changed in place.
void NewOverlays(const DatasetState* before, const DatasetState& after, CommitRows& rows) {
  std::map<uint64_t, const DataFragment*> then;
  if (before) then = FragmentsById(*before);
  const auto top = TopColumns(after);
  for (const auto& fragment : after.manifest.fragments()) {
    std::set<std::string> old_paths;
    if (auto it = then.find(fragment.id()); it != then.end())
      for (const auto& o : it->second->overlays()) old_paths.insert(o.data_file().path());
    else
      continue;  // a new fragment's rows are inserts
    std::map<size_t, format::RoaringBitmap> columns;
    for (const auto& o : fragment.overlays()) {
      if (old_paths.count(o.data_file().path())) continue;
      const auto& fields = o.data_file().fields();
      for (int i = 0; i < fields.size(); ++i) {
        auto column = top.find(fields[i]);
        if (column == top.end()) continue;  // a field the schema dropped since
        const std::string& bytes = o.has_field_coverage() ? o.field_coverage().offset_bitmaps(i) : o.shared_offset_bitmap();
        columns[column->second] |= format::RoaringBitmap::DeserializePortable(
            bytes, fmt::format("'{}' fragment {} overlay '{}'", after.uri, fragment.id(), o.data_file().path()));
      }
    }
    if (columns.empty()) continue;
    InPlace& in_place = rows.updated[fragment.id()];
    format::RoaringBitmap all;
    for (auto& [column, bitmap] : columns) {
      all |= bitmap;
      in_place.columns.emplace_back(column, std::move(bitmap));
    }
    for (uint32_t o : all.ToVector()) in_place.offsets.push_back(o);
  }
}

// A column rewrite that names its rows (an UPDATE in columns mode; a fold names none and
// changes no value): those rows, changed among the rewritten fields' columns.
void RewrittenColumns(const DatasetState& after, const Transaction::Update& update, CommitRows& rows) {
  const auto top = TopColumns(after);
  for (uint32_t field : update.fields_modified())
    if (auto it = top.find(int32_t(field)); it != top.end()) rows.compare.insert(it->second);
  for (const auto& [id, bytes] : update.updated_fragment_offset_bitmaps()) {
    auto bitmap = format::RoaringBitmap::DeserializePortable(bytes, fmt::format("'{}' version {} update of fragment {}",
                                                                                after.uri, after.version(), id));
    auto& offsets = rows.updated[id].offsets;
    for (uint32_t o : bitmap.ToVector()) offsets.push_back(o);
  }
}

}  // namespace

// What version `after` changed against `before` (null for the first version).
CommitRows RowsOfCommit(const DatasetPtr& before, const DatasetPtr& after, bool allow_full) {
  const DatasetState& now = StateOf(after);
  const DatasetState* then = before ? &StateOf(before) : nullptr;
  CommitRows rows;
  rows.version = now.version();
  rows.timestamp_micros = now.manifest.timestamp().seconds() * 1000000 + now.manifest.timestamp().nanos() / 1000;
  rows.before = before;
  rows.after = after;
  if (now.manifest.transaction_file().empty() && !now.manifest.has_transaction_section())
    ThrowNotSupported("changes of '{}': version {} records no transaction (an old writer's), so the feed cannot "
                      "tell what it changed; start after version {}", now.uri, now.version(), now.version());
  const Transaction t = ReadCommittedTransaction(*now.store, now.uri, now.manifest, now.manifest_path);
  switch (t.operation_case()) {
    case Transaction::kAppend:
    case Transaction::kDelete:
      DiffRows(then, now, rows);
      break;
    case Transaction::kOverwrite:
    case Transaction::kRestore:
    case Transaction::kClone: {
      // Every row of the version before goes, even where a fragment id comes back.
      if (then)
        for (const auto& f : then->manifest.fragments()) rows.deleted[f.id()] = LiveOffsets(*then, f);
      for (const auto& f : now.manifest.fragments()) rows.inserted[f.id()] = LiveOffsets(now, f);
      const uint64_t n = CountRows(rows.deleted) + CountRows(rows.inserted);
      if (n > kFullFeedRows && !allow_full)
        ThrowInvalid("changes of '{}': version {} replaced the whole table ({}), {} rows in the feed; allow the "
                     "full feed (--allow-full) or start after version {}",
                     now.uri, rows.version, OperationName(t), n, rows.version);
      break;
    }
    case Transaction::kDataOverlay:
      NewOverlays(then, now, rows);
      break;
    case Transaction::kUpdate: {
      const auto& u = t.update();
      if (u.update_mode() == Transaction::REWRITE_COLUMNS) {
        RewrittenColumns(now, u, rows);
        break;
      }
      // A MERGE or an UPDATE that moved rows: overlays are rows changed in place, deletion
      // bits and removed fragments the rows that went, new fragments the rows that came.
      NewOverlays(then, now, rows);
      DiffRows(then, now, rows);
      PairMovedRows(then, t, rows);
      break;
    }
    case Transaction::kDataReplacement:
      ThrowNotSupported("changes of '{}': version {} replaced data files (DataReplacement), which does not say "
                        "which cells changed", now.uri, rows.version);
    default:
      break;  // compaction, index builds, schema and config changes: no value changed
  }
  return rows;
}

}  // namespace lancelet::table
