#include "table/scan_planner.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "lancelet/error.h"

namespace lancelet::table {

ScanSpec RowsWhere(std::optional<std::vector<std::string>> columns, ExprPtr predicate, int64_t batch_size) {
  ScanSpec spec;
  spec.columns = std::move(columns);
  spec.filter = std::move(predicate);
  spec.batch_size = batch_size;
  return spec;
}

ScanSpec RowsWhere(std::optional<std::vector<std::string>> columns, const std::string& predicate,
                   int64_t batch_size) {
  return RowsWhere(std::move(columns), predicate.empty() ? nullptr : ParseExpression(predicate), batch_size);
}

namespace {

bool Listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Which fields and pseudo-columns `columns` and the filter need, as p.read_*.
void PlanReads(PlannedScan& p, const std::vector<std::string>& columns, const ExprPtr& filter) {
  const DatasetState& state = *p.state;
  const auto& fields = state.schema.fields();
  std::vector<std::string> needed = columns;
  if (filter)
    for (auto& c : ReferencedColumns(*filter)) needed.push_back(c);
  std::vector<bool> read(fields.size(), false);
  for (const auto& name : needed) {
    if (name == kRowIdColumn) { p.read_row_id = true; continue; }
    if (name == kRowAddrColumn) { p.read_row_address = true; continue; }
    if (const auto* field = state.schema.FindByName(name)) {
      read[size_t(field - fields.data())] = true;
      continue;
    }
    if (!p.score_column.empty() && name == p.score_column && Listed(columns, name)) continue;
    // Only the user's own column list gets this message; filter names fail in Bind.
    if (Listed(columns, name))
      ThrowNotFound("no column '{}' in dataset '{}' (columns: {})", name, state.uri, state.arrow_schema->ToString());
    // A filter names a struct field as "a.b": its top-level column is read.
    if (const auto path = state.schema.StructPathNamed(name)) read[path->top] = true;
  }
  std::vector<FieldPtr> read_fields;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!read[i]) continue;
    p.read_fields.push_back(i);
    read_fields.push_back(state.arrow_schema->field(i));
  }
  if (p.read_row_id) read_fields.push_back(Field::Make(kRowIdColumn, DataType::UInt64(), false));
  if (p.read_row_address) read_fields.push_back(Field::Make(kRowAddrColumn, DataType::UInt64(), false));
  p.read_schema = std::make_shared<Schema>(read_fields);
}

// Binds the filter to the columns read; the indexes may narrow it (unless `use_index`
// is off).
void PlanFilter(PlannedScan& p, const Expr& filter, bool use_index) {
  // The filter binds to the columns read, but an unknown name is reported with the
  // dataset's columns: read_schema holds only the (known) ones the filter named.
  p.filter = Bind(filter, *p.read_schema, *p.state->arrow_schema);
  auto referenced = ReferencedColumns(filter);
  std::vector<FieldPtr> filter_fields;
  for (const auto& f : p.read_schema->fields()) {
    bool needs = false;
    for (const auto& r : referenced) needs |= r == f->name || r.rfind(f->name + ".", 0) == 0;
    p.filter_needs.push_back(needs);
    if (needs) filter_fields.push_back(f);
  }
  p.filter_schema = std::make_shared<Schema>(filter_fields);
  if (use_index) p.indexed = PlanIndexedRows(*p.state, filter);
}

// The output: `columns` from the batch schema (read columns, then the score column).
void PlanOutput(PlannedScan& p, std::vector<std::string> columns) {
  std::vector<FieldPtr> batch_fields = p.read_schema->fields();
  if (!p.score_column.empty()) {
    batch_fields.push_back(Field::Make(p.score_column, DataType::Float32(), false));
    if (!Listed(columns, p.score_column)) columns.push_back(p.score_column);
  }
  p.batch_schema = std::make_shared<Schema>(batch_fields);
  std::vector<FieldPtr> out_fields;
  for (const auto& name : columns) {
    int i = p.batch_schema->FieldIndex(name);
    if (i < 0) ThrowNotFound("no column '{}' in dataset '{}'", name, p.state->uri);
    p.output_columns.push_back(i);
    out_fields.push_back(p.batch_schema->field(size_t(i)));
  }
  p.output_schema = std::make_shared<Schema>(out_fields, p.state->arrow_schema->metadata());
}

[[noreturn]] void ThrowBadRows(const DatasetState& state, const lance::table::DataFragment& fragment,
                               const char* what) {
  ThrowInvalid("scan of dataset '{}': the {} given for fragment {} must be {}distinct offsets below its {} rows",
               state.uri, what, fragment.id(), std::string_view(what) == "rows" ? "ascending, " : "",
               fragment.physical_rows());
}

// One task per fragment the spec visits: its caller's rows, its index candidates, or all.
void PlanTasks(PlannedScan& p, const ScanSpec& spec) {
  p.rows = spec.rows;  // the tasks point into it
  for (const auto& fragment : p.state->manifest.fragments()) {
    if (spec.fragments && !spec.fragments->count(fragment.id())) continue;
    ScanTask task{&fragment};
    if (spec.rows) {
      auto given = spec.rows->find(fragment.id());
      if (given == spec.rows->end()) continue;
      const auto& offsets = given->second;
      if (std::adjacent_find(offsets.begin(), offsets.end(), std::greater_equal<>()) != offsets.end() ||
          (!offsets.empty() && offsets.back() >= fragment.physical_rows()))
        ThrowBadRows(*p.state, fragment, "rows");
      task.candidates = &offsets;
    } else if (p.indexed) {
      auto found = p.indexed->candidates.find(fragment.id());
      if (found != p.indexed->candidates.end()) task = {&fragment, &found->second, nullptr, true};
    }
    p.tasks.push_back(task);
  }
}

// One task per fragment with scored candidates, and every candidate ranked by score,
// ties by row address.
void PlanScoredTasks(PlannedScan& p, const ScanSpec& spec) {
  std::map<uint64_t, std::vector<std::pair<uint64_t, float>>> by_fragment;
  for (const auto& row : *spec.scored_rows) {
    if (std::isnan(row.score))
      ThrowInvalid("scan of dataset '{}': the score of fragment {} offset {} is NaN", p.state->uri, row.fragment_id,
                   row.offset);
    by_fragment[row.fragment_id].emplace_back(row.offset, row.score);
  }
  for (const auto& fragment : p.state->manifest.fragments()) {
    if (spec.fragments && !spec.fragments->count(fragment.id())) continue;
    auto given = by_fragment.find(fragment.id());
    if (given == by_fragment.end()) continue;
    auto& rows = given->second;
    std::sort(rows.begin(), rows.end());
    auto& offsets = p.scored_offsets[fragment.id()];
    auto& scores = p.scores[fragment.id()];
    for (const auto& [offset, score] : rows) {
      if ((!offsets.empty() && offsets.back() == offset) || offset >= fragment.physical_rows())
        ThrowBadRows(*p.state, fragment, "scored rows");
      offsets.push_back(offset);
      scores.push_back(score);
    }
    p.tasks.push_back(ScanTask{&fragment, &offsets, &scores, false});
  }
  for (size_t t = 0; t < p.tasks.size(); ++t)
    for (size_t c = 0; c < p.tasks[t].candidates->size(); ++c) p.ranked.push_back({uint32_t(t), uint32_t(c)});
  auto key = [&](const RankedCandidate& r) {
    const ScanTask& task = p.tasks[r.task];
    return std::make_pair((*task.scores)[r.candidate], task.fragment->id() << 32 | (*task.candidates)[r.candidate]);
  };
  std::sort(p.ranked.begin(), p.ranked.end(),
            [&](const RankedCandidate& a, const RankedCandidate& b) { return key(a) < key(b); });
  p.order = ScanOrder::kScoreAscending;
}

void CheckScoring(const DatasetState& state, const ScanSpec& spec) {
  if (spec.rows && spec.scored_rows)
    ThrowInvalid("scan of dataset '{}': give candidate rows or scored rows, not both", state.uri);
  if (spec.score_column.empty()) return;
  if (!spec.scored_rows)
    ThrowInvalid("scan of dataset '{}': a score column ('{}') needs scored rows", state.uri, spec.score_column);
  if (state.schema.FindByName(spec.score_column) || spec.score_column == kRowIdColumn ||
      spec.score_column == kRowAddrColumn)
    ThrowInvalid("scan of dataset '{}': the score column '{}' would hide a column of that name", state.uri,
                 spec.score_column);
}

}  // namespace

std::shared_ptr<const PlannedScan> ScanPlanner::Plan(std::shared_ptr<const DatasetState> state, const ScanSpec& spec) {
  if (spec.batch_size <= 0) ThrowInvalid("batch size must be positive, got {}", spec.batch_size);
  CheckScoring(*state, spec);
  auto p = std::make_shared<PlannedScan>();
  p->state = std::move(state);
  p->batch_size = spec.batch_size;
  p->score_column = spec.score_column;
  std::vector<std::string> columns;
  if (spec.columns) columns = *spec.columns;
  else
    for (const auto& f : p->state->schema.fields()) columns.push_back(f.name);
  if (spec.with_row_id && !Listed(columns, kRowIdColumn)) columns.push_back(kRowIdColumn);
  if (spec.with_row_address && !Listed(columns, kRowAddrColumn)) columns.push_back(kRowAddrColumn);
  PlanReads(*p, columns, spec.filter);
  if (spec.filter) PlanFilter(*p, *spec.filter, spec.use_index && !spec.rows && !spec.scored_rows);
  PlanOutput(*p, std::move(columns));
  if (spec.scored_rows) PlanScoredTasks(*p, spec);
  else PlanTasks(*p, spec);
  // Past the reader's offset and limit no row is returned, so none need be read.
  if (spec.limit >= 0)
    p->limit = spec.offset > std::numeric_limits<int64_t>::max() - spec.limit ? -1 : spec.offset + spec.limit;
  p->read_ahead = spec.limit < 0 && p->order == ScanOrder::kDataset;
  return p;
}

}  // namespace lancelet::table
