// OverlayWriter and Dataset::Update: writing data overlay files and committing them.
#include "lancelet/overlay_writer.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "format/lance_file.h"
#include "format/roaring_bitmap.h"
#include "lancelet/error.h"
#include "lancelet/expr.h"
#include "table/cell_checks.h"
#include "table/commit.h"
#include "table/compaction.h"
#include "table/update_modes.h"
#include "table/fragment_writer.h"
#include "table/manifest_store.h"
#include "table/overlay_file.h"
#include "table/scan_plan.h"

namespace lancelet {

namespace {

// The pre-order ids of a field's subtree: the entries of data_file.fields for it.
void SubtreeIds(const format::LanceField& field, std::vector<int32_t>& out) {
  field.ForEach([&](const format::LanceField& node) { out.push_back(node.id); });
}

}  // namespace

OverlayWriter& OverlayWriter::Set(uint64_t fragment_id, const std::string& column, std::vector<uint32_t> offsets,
                                  ArrayPtr values) {
  const auto& state = table::StateOf(dataset_);
  const auto* fragment = state.FindFragment(fragment_id);
  if (!fragment) ThrowInvalid("overlay on '{}': fragment {} does not exist in version {}", state.uri, fragment_id,
                              state.version());
  const size_t field = table::CheckCells(state, "overlay on", fragment_id, *fragment, column, offsets, values);
  auto& updates = updates_[fragment_id];
  for (const auto& u : updates)
    if (u.field == field)
      ThrowInvalid("overlay on '{}' fragment {}: column '{}' is set twice", state.uri, fragment_id, column);
  updates.push_back({field, std::move(offsets), std::move(values)});
  return *this;
}

namespace table {

lance::table::DataOverlayFile WriteOverlay(const DatasetState& state, const std::vector<OverlayColumn>& columns,
                                           AttemptFiles& attempt) {
  std::vector<format::LanceField> fields;
  for (const auto& c : columns) fields.push_back(state.schema.fields()[c.field]);
  format::LanceSchema schema(fields, {});
  std::string dir = io::JoinPath(state.uri, kDataDir);
  state.store->CreateDir(dir);
  std::string name = "overlay-" + NewDataFileName();
  std::string path = io::JoinPath(dir, name);
  attempt.Add(path);
  format::LanceFileWriter writer(*state.store, path, schema, format::FileWriterOptions{state.WriteVersion()});
  for (size_t i = 0; i < columns.size(); ++i) writer.WriteField(i, *columns[i].values);
  uint64_t size = writer.Finish();

  lance::table::DataOverlayFile overlay;
  *overlay.mutable_data_file() = DescribeDataFile(name, writer, state.WriteVersion(), size);

  bool dense = std::all_of(columns.begin(), columns.end(),
                           [&](const OverlayColumn& c) { return *c.offsets == *columns[0].offsets; });
  if (dense) {
    overlay.set_shared_offset_bitmap(format::RoaringBitmap::FromValues(*columns[0].offsets).SerializePortable());
  } else {
    // One bitmap per entry of data_file.fields: a nested field repeats its bitmap for
    // every id of its subtree.
    auto* coverage = overlay.mutable_field_coverage();
    for (const auto& c : columns) {
      std::vector<int32_t> ids;
      SubtreeIds(state.schema.fields()[c.field], ids);
      std::string bitmap = format::RoaringBitmap::FromValues(*c.offsets).SerializePortable();
      for (size_t k = 0; k < ids.size(); ++k) coverage->add_offset_bitmaps(bitmap);
    }
  }
  return overlay;
}

}  // namespace table

DatasetPtr OverlayWriter::Commit(const Options& options) const {
  return LibraryAccess::CommitOverlays(*this, options, nullptr);
}

DatasetPtr LibraryAccess::CommitOverlays(const OverlayWriter& writer, const OverlayWriter::Options& options,
                                         std::shared_ptr<const table::ReadSet> read_set) {
  const auto& state = table::StateOf(writer.dataset_);
  if (writer.updates_.empty()) return writer.dataset_;
  for (const auto& f : state.manifest.fragments()) table::CheckTakesOverlays(state, "overlay on", f);
  table::CommitOptions commit;
  commit.max_retries = options.max_commit_retries;
  commit.read_set = std::move(read_set);
  return table::MakeDataset(table::BuildAndCommit(
      table::StatePtrOf(writer.dataset_), commit, [&](lance::table::Transaction& t, table::AttemptFiles& attempt) {
        for (const auto& [fragment_id, updates] : writer.updates_) {
          auto* group = t.mutable_data_overlay()->add_groups();
          group->set_fragment_id(fragment_id);
          std::vector<table::OverlayColumn> columns;
          for (const auto& u : updates) columns.push_back({u.field, &u.offsets, u.values});
          if (!options.split_into_dense) {
            *group->add_overlays() = table::WriteOverlay(state, columns, attempt);
            continue;
          }
          // Group columns by identical offsets: each group is one dense overlay.
          std::vector<bool> used(columns.size(), false);
          for (size_t i = 0; i < columns.size(); ++i) {
            if (used[i]) continue;
            std::vector<table::OverlayColumn> same;
            for (size_t j = i; j < columns.size(); ++j)
              if (!used[j] && *columns[j].offsets == *columns[i].offsets) {
                same.push_back(columns[j]);
                used[j] = true;
              }
            *group->add_overlays() = table::WriteOverlay(state, same, attempt);
          }
        }
        return true;
      }));
}

namespace table {

uint64_t UpdateValues::rows() const {
  uint64_t count = 0;
  for (const auto& [fragment, offs] : offsets) count += offs.size();
  return count;
}

UpdateValues EvaluateUpdate(const std::shared_ptr<const DatasetState>& state,
                            const std::vector<Dataset::SetExpression>& set, const ExprPtr& predicate,
                            const std::optional<std::set<uint64_t>>& fragments) {
  UpdateValues out;
  // Read only what the SET expressions need; the filter adds its own columns.
  std::vector<ExprPtr> exprs;
  std::vector<std::string> needed;
  for (const auto& s : set) {
    const auto* field = state->schema.FindByName(s.column);
    if (!field) ThrowInvalid("update: no column '{}' in '{}' (columns: {})", s.column, state->uri,
                             state->arrow_schema->ToString());
    const ExprPtr& e = s.expression;
    for (auto& c : ReferencedColumns(*e))
      if (std::find(needed.begin(), needed.end(), c) == needed.end()) needed.push_back(c);
    exprs.push_back(Expr::Assign(e, field->type, s.column));  // exact conversions only
    out.set_fields.push_back(size_t(field - &state->schema.fields()[0]));
  }
  out.read_set = ReadSet::OfStatement(*state, predicate ? ReferencedColumns(*predicate) : std::vector<std::string>{},
                                      needed);
  ScanSpec spec = RowsWhere(needed, predicate);
  spec.fragments = fragments;
  ScanPlan plan(state, spec);
  std::vector<BoundExprPtr> bound;
  for (auto& e : exprs) bound.push_back(Bind(*e, *plan.output_schema()));

  std::map<uint64_t, std::vector<std::vector<ArrayPtr>>> parts;  // fragment -> set index -> parts
  plan.ForEachBatch([&](const FragmentBatch& b) {
    auto projected = plan.Project(*b.batch);
    auto& offs = out.offsets[b.fragment->id()];
    b.rows.ForEach([&](uint64_t o) { offs.push_back(uint32_t(o)); });
    auto& p = parts[b.fragment->id()];
    p.resize(set.size());
    for (size_t i = 0; i < set.size(); ++i) p[i].push_back(Evaluate(*bound[i], *projected));
    return true;
  });
  for (auto& [fragment, p] : parts)
    for (auto& column : p) out.values[fragment].push_back(Concatenate(column));
  for (auto& [fragment, offs] : out.offsets) out.read_set->changed_rows[fragment] = format::RoaringBitmap::FromValues(offs);
  return out;
}

}  // namespace table

namespace {

template <typename Clause>
void CheckSetColumns(const std::vector<Clause>& set) {
  if (set.empty()) ThrowInvalid("update needs at least one SET column");
  for (size_t i = 0; i < set.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (set[i].column == set[j].column) ThrowInvalid("update sets column '{}' twice", set[i].column);
}

}  // namespace

DatasetPtr Dataset::Update(const std::vector<SetClause>& set, const std::string& predicate, uint64_t* rows_changed,
                           UpdateMode mode, UpdateMode* chosen, WriteOutcome* outcome) const {
  CheckSetColumns(set);
  ExprPtr where = predicate.empty() ? nullptr : ParseExpression(predicate);
  std::vector<SetExpression> typed;
  for (const auto& s : set) typed.push_back({s.column, ParseExpression(s.expression)});
  return Update(typed, where, rows_changed, mode, chosen, outcome);
}

DatasetPtr Dataset::Update(const std::vector<SetExpression>& set, const ExprPtr& predicate, uint64_t* rows_changed,
                           UpdateMode mode, UpdateMode* chosen, WriteOutcome* outcome) const {
  CheckSetColumns(set);
  for (const auto& s : set)
    if (!s.expression) ThrowInvalid("update: the SET expression of column '{}' is missing", s.column);
  std::shared_ptr<const table::DatasetState> current = state_;
  auto committed = table::UntilCommitted(current, "update", [&](const std::shared_ptr<const table::DatasetState>& state)
                                                                -> std::shared_ptr<const table::DatasetState> {
    auto snapshot = table::MakeDataset(state);
    table::UpdateValues found = table::EvaluateUpdate(state, set, predicate);
    if (rows_changed) *rows_changed = found.rows();
    if (found.offsets.empty()) return nullptr;
    auto& [offsets, values, set_fields, read_set] = found;
    UpdateMode how = mode == UpdateMode::kAuto ? table::ChooseUpdateMode(*state, set_fields, offsets) : mode;
    if (chosen) *chosen = how;
    if (how == UpdateMode::kOverlay) {
      OverlayWriter writer(snapshot);
      for (auto& [fragment, offs] : offsets)
        for (size_t i = 0; i < set.size(); ++i)
          writer.Set(fragment, set[i].column, offs, values[fragment][i]);
      return table::StatePtrOf(LibraryAccess::CommitOverlays(writer, OverlayWriter::Options{}, std::move(read_set)));
    }
    table::MergeChanges changes;
    for (auto& [fragment, offs] : offsets)
      for (size_t i = 0; i < set.size(); ++i)
        changes.updates[fragment].push_back({set[i].column, offs, values[fragment][i]});
    if (how == UpdateMode::kColumns) return table::StatePtrOf(table::CommitColumnRewrite(snapshot, changes, std::move(read_set)));
    return table::StatePtrOf(table::CommitRowMove(snapshot, changes, std::move(read_set)));
  });
  if (!committed) return shared_from_this();
  // The bound on overlay layers is upkeep after the change has landed (outside the loop:
  // nothing that happens to it may make the change run again).
  return table::BoundOverlayLayers(table::MakeDataset(committed), outcome);
}

}  // namespace lancelet
