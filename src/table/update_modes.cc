#include "table/update_modes.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "format/roaring_bitmap.h"
#include "format/value_bytes.h"
#include "io/run_concurrently.h"
#include "lancelet/error.h"
#include "table/commit.h"
#include "table/compaction.h"
#include "table/feature_flags.h"
#include "table/fragment_reader.h"
#include "table/index_section.h"
#include "overlay/patch.h"
#include "table/overlay_file.h"

namespace lancelet {

const char* UpdateModeName(UpdateMode mode) {
  switch (mode) {
    case UpdateMode::kAuto: return "auto";
    case UpdateMode::kOverlay: return "overlay";
    case UpdateMode::kColumns: return "columns";
    case UpdateMode::kRows: return "rows";
  }
  return "?";
}

UpdateMode ParseUpdateMode(const std::string& text, const std::string& what) {
  for (UpdateMode m : {UpdateMode::kAuto, UpdateMode::kOverlay, UpdateMode::kColumns, UpdateMode::kRows})
    if (text == UpdateModeName(m)) return m;
  ThrowInvalid("{} is '{}': expected overlay, columns, rows or auto", what, text);
}

std::string OverlaysOffNotice(const Dataset& before, UpdateMode asked, UpdateMode chosen, const std::string& name) {
  const auto& manifest = table::StateOf(before).manifest;
  if (asked != UpdateMode::kAuto || chosen == UpdateMode::kOverlay || manifest.config().count(table::kUpdateModeKey) ||
      table::OverlaysEnabled(manifest))
    return "";
  return fmt::format("note: {} was {} without data overlay files, which {} is not true for (so that readers without "
                     "overlay support still read it); `lancelet config {} --set {}=true` lets UPDATE and MERGE write them",
                     name, chosen == UpdateMode::kRows ? "updated by moving rows" : "updated by rewriting columns",
                     table::kOverlaysEnabledKey, name, table::kOverlaysEnabledKey);
}

namespace table {

namespace {

const lance::table::DataFragment& Find(const DatasetState& state, uint64_t id) {
  if (const auto* f = state.FindFragment(id)) return *f;
  throw RetryableConflict(fmt::format("update of fragment {}, which no longer exists", id));
}

size_t FieldOf(const DatasetState& state, const std::string& column) {
  const auto& fields = state.schema.fields();
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == column) return i;
  ThrowInvalid("update of '{}': no column '{}'", state.uri, column);
}

}  // namespace

bool OverlaysEnabled(const lance::table::Manifest& manifest) {
  auto set = manifest.config().find(kOverlaysEnabledKey);
  if (set != manifest.config().end()) {
    if (set->second == "true") return true;
    if (set->second == "false") return false;
    ThrowInvalid("table config {} is '{}': expected true or false", kOverlaysEnabledKey, set->second);
  }
  return (manifest.reader_feature_flags() & kFlagDataOverlays) != 0;
}

UpdateMode ChooseUpdateMode(const DatasetState& state, const std::vector<size_t>& set_fields,
                            const std::map<uint64_t, std::vector<uint32_t>>& offsets, std::string* why) {
  auto say = [&](std::string text) {
    if (why) *why = std::move(text);
  };
  auto configured = state.manifest.config().find(kUpdateModeKey);
  if (configured != state.manifest.config().end()) {
    UpdateMode mode = ParseUpdateMode(configured->second, fmt::format("table config {}", kUpdateModeKey));
    if (mode != UpdateMode::kAuto) {
      say(fmt::format("table config {}", kUpdateModeKey));
      return mode;
    }
  }
  uint64_t changed = 0, rows = 0;
  int layers = 0;  // the most overlays a touched fragment already has
  for (const auto& [id, offs] : offsets) {
    const auto& fragment = Find(state, id);
    layers = std::max(layers, fragment.overlays_size());
    if (std::any_of(fragment.files().begin(), fragment.files().end(), IsLegacyDataFile)) {
      say("legacy data files");  // only overlays are refused by name for them
      return UpdateMode::kOverlay;
    }
    changed += offs.size();
    rows += fragment.physical_rows();
  }
  const double fraction = rows ? double(changed) / double(rows) : 0;
  uint64_t set_bytes = 0, row_bytes = 0;
  std::set<int32_t> set_ids;
  for (size_t f : set_fields) {
    set_bytes += format::EstimatedValueBytes(*state.schema.fields()[f].type);
    state.schema.fields()[f].ForEach([&](const format::LanceField& n) { set_ids.insert(n.id); });
  }
  for (const auto& f : state.schema.fields()) row_bytes += format::EstimatedValueBytes(*f.type);
  bool indexed = false;
  for (const auto& index : state.indices.indices())
    for (int32_t id : index.fields()) indexed |= set_ids.count(id) > 0;
  bool blobs = std::any_of(state.schema.fields().begin(), state.schema.fields().end(),
                           [](const format::LanceField& f) { return f.IsBlob(); });
  const double share = row_bytes ? double(set_bytes) / double(row_bytes) : 0;
  if (!blobs && !indexed && share >= kRowsColumnShare && fraction >= kRowsMinFraction && fraction < kRowsMaxFraction) {
    say(fmt::format("the SET columns are {:.0f}% of a row's bytes and {:.0f}% of the rows change", 100 * share,
                    100 * fraction));
    return UpdateMode::kRows;
  }
  // Layers already there make a rewrite (which folds them too) pay off sooner.
  const double threshold =
      std::max(kColumnsFractionFloor, (indexed ? kColumnsFractionIndexed : kColumnsFraction) - kColumnsPerLayer * layers);
  if (fraction >= threshold) {
    say(fmt::format("{:.0f}% of the touched fragments' rows change (>= {:.0f}%{}{})", 100 * fraction, 100 * threshold,
                    indexed ? ", an index on a SET column" : "",
                    layers ? fmt::format(", {} overlay layers", layers) : ""));
    return UpdateMode::kColumns;
  }
  if (!OverlaysEnabled(state.manifest)) {
    // Moving the changed rows writes fraction x a row's bytes; rewriting the SET columns
    // writes all their bytes: the smaller wins (moved rows cannot carry blobs).
    say(fmt::format("{} is not true on this dataset", kOverlaysEnabledKey));
    return !blobs && fraction * double(row_bytes) < double(set_bytes) ? UpdateMode::kRows : UpdateMode::kColumns;
  }
  say(fmt::format("{:.1f}% of the touched fragments' rows change", 100 * fraction));
  return UpdateMode::kOverlay;
}

DatasetPtr CommitColumnRewrite(const DatasetPtr& dataset, const MergeChanges& changes,
                               std::shared_ptr<const ReadSet> read_set) {
  const DatasetState& state = table::StateOf(dataset);
  CommitOptions options;
  options.read_set = std::move(read_set);
  return table::MakeDataset(BuildAndCommit(
      table::StatePtrOf(dataset), options, [&](lance::table::Transaction& t, AttemptFiles& attempt) {
        FoldCommit fold(t);
        for (const auto& [id, cells] : changes.updates) {
          std::vector<OverlayColumn> columns;
          format::RoaringBitmap rows;  // the rows the UPDATE changed, as the reference records them
          for (const auto& c : cells) {
            columns.push_back({FieldOf(state, c.column), &c.offsets, c.values});
            rows.AddMany(c.offsets);
          }
          fold.AddFolded(FoldOverlays(state, Find(state, id), attempt, columns));
          (*t.mutable_update()->mutable_updated_fragment_offset_bitmaps())[id] = rows.SerializePortable();
        }
        fold.Finish();
        return true;
      }));
}

MergeChanges WithoutOverlays(const DatasetState& state, const MergeChanges& changes) {
  std::vector<size_t> all(state.schema.fields().size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  MergeChanges out;
  out.deletes = changes.deletes;
  // Each changed fragment's rows, read whole: on an object store the fragments are read
  // concurrently, their requests overlapping.
  struct Moved {
    std::vector<uint32_t> offsets;  // every row a column of the fragment changes
    std::vector<ArrayPtr> columns;
    ArrayPtr row_ids;  // with stable row ids
  };
  std::vector<std::pair<uint64_t, const std::vector<MergeChanges::ColumnCells>*>> fragments;
  for (const auto& [id, cells] : changes.updates) fragments.emplace_back(id, &cells);
  std::vector<Moved> moved(fragments.size());
  const bool stable_ids = state.manifest.reader_feature_flags() & kFlagStableRowIds;
  io::RunConcurrently(fragments.size(), state.store->costly_requests() ? kConcurrentFragmentReads : 1, [&](size_t i) {
    Moved& m = moved[i];
    for (const auto& c : *fragments[i].second) m.offsets.insert(m.offsets.end(), c.offsets.begin(), c.offsets.end());
    std::sort(m.offsets.begin(), m.offsets.end());
    m.offsets.erase(std::unique(m.offsets.begin(), m.offsets.end()), m.offsets.end());
    if (m.offsets.empty()) return;
    FragmentReader reader(state, Find(state, fragments[i].first));
    std::vector<uint64_t> wide(m.offsets.begin(), m.offsets.end());
    m.columns = reader.ReadRows(all, wide);
    // The rows keep their ids, as in the reference's UPDATE: an id names the row, not
    // where it is stored.
    if (stable_ids) m.row_ids = reader.RowIds(wide);
  });
  for (size_t i = 0; i < fragments.size(); ++i) {
    const uint64_t id = fragments[i].first;
    const auto& cells = *fragments[i].second;
    auto& [offsets, columns, row_ids] = moved[i];
    if (offsets.empty()) continue;
    for (const auto& c : cells) {  // each column's values replace its rows among `offsets`
      std::vector<uint32_t> at;
      for (uint32_t o : c.offsets) at.push_back(uint32_t(std::lower_bound(offsets.begin(), offsets.end(), o) - offsets.begin()));
      overlay::Replacement r;
      r.cells = at;
      r.values = c.values;
      ArrayPtr& column = columns[FieldOf(state, c.column)];
      column = overlay::ApplyReplacements(std::move(column), {r});
    }
    auto& deleted = out.deletes[id];
    deleted.insert(deleted.end(), offsets.begin(), offsets.end());
    out.moved[id] = offsets;
    out.inserts.push_back(std::make_shared<RecordBatch>(state.arrow_schema, std::move(columns), int64_t(offsets.size())));
    if (row_ids)
      out.insert_row_ids.insert(out.insert_row_ids.end(), row_ids->values<uint64_t>(),
                                row_ids->values<uint64_t>() + row_ids->length);
  }
  // The moved rows come first, so that insert_row_ids names them; new rows get new ids.
  out.inserts.insert(out.inserts.end(), changes.inserts.begin(), changes.inserts.end());
  return out;
}

DatasetPtr CommitRowMove(const DatasetPtr& dataset, const MergeChanges& changes,
                         std::shared_ptr<const ReadSet> read_set) {
  // Moving rows reads every column of the changed rows.
  auto read = std::make_shared<ReadSet>(*read_set);
  for (const auto& field : table::StateOf(dataset).schema.fields())
    field.ForEach([&](const format::LanceField& node) { read->changed_rows_fields.insert(node.id); });
  return CommitMerge(dataset, WithoutOverlays(table::StateOf(dataset), changes), std::move(read));
}

}  // namespace table
}  // namespace lancelet
