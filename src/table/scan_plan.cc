#include "table/scan_plan.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "lancelet/error.h"
#include "table/hit_check.h"

namespace lancelet::table {

ScanSpec RowsWhere(std::optional<std::vector<std::string>> columns, const std::string& predicate,
                   int64_t batch_size) {
  ScanSpec spec;
  spec.columns = std::move(columns);
  spec.filter = predicate.empty() ? nullptr : ParseExpression(predicate);
  spec.batch_size = batch_size;
  return spec;
}

ScanPlan::ScanPlan(std::shared_ptr<const DatasetState> state, const ScanSpec& spec)
    : state_(std::move(state)),
      with_row_id_(spec.with_row_id),
      with_row_address_(spec.with_row_address),
      batch_size_(spec.batch_size),
      read_ahead_(spec.limit < 0) {
  if (batch_size_ <= 0) ThrowInvalid("batch size must be positive, got {}", batch_size_);
  std::vector<std::string> columns;
  if (spec.columns) columns = *spec.columns;
  else
    for (const auto& f : state_->schema.fields()) columns.push_back(f.name);
  Prepare(std::move(columns), spec.filter, spec.use_index && !spec.rows);
  PlanTasks(spec);
}

void ScanPlan::PlanTasks(const ScanSpec& spec) {
  rows_ = spec.rows;  // the tasks point into it
  for (const auto& fragment : state_->manifest.fragments()) {
    if (spec.fragments && !spec.fragments->count(fragment.id())) continue;
    ScanTask task{&fragment};
    if (spec.rows) {
      auto given = spec.rows->find(fragment.id());
      if (given == spec.rows->end()) continue;
      const auto& offsets = given->second;
      if (std::adjacent_find(offsets.begin(), offsets.end(), std::greater_equal<>()) != offsets.end() ||
          (!offsets.empty() && offsets.back() >= fragment.physical_rows()))
        ThrowInvalid("scan of dataset '{}': the rows given for fragment {} must be ascending, distinct offsets "
                     "below its {} rows",
                     state_->uri, fragment.id(), fragment.physical_rows());
      task.candidates = &offsets;
    } else if (indexed_) {
      auto found = indexed_->candidates.find(fragment.id());
      if (found != indexed_->candidates.end()) task = {&fragment, &found->second, true};
    }
    tasks_.push_back(task);
  }
}

void ScanPlan::Prepare(std::vector<std::string> columns, const ExprPtr& filter_expr, bool use_index) {
  const auto& fields = state_->schema.fields();
  if (with_row_id_ && std::find(columns.begin(), columns.end(), kRowIdColumn) == columns.end())
    columns.push_back(kRowIdColumn);
  if (with_row_address_ && std::find(columns.begin(), columns.end(), kRowAddrColumn) == columns.end())
    columns.push_back(kRowAddrColumn);

  std::vector<std::string> needed = columns;
  if (filter_expr)
    for (auto& c : ReferencedColumns(*filter_expr)) needed.push_back(c);

  // Which dataset fields and pseudo-columns must be read.
  std::vector<bool> read(fields.size(), false);
  for (const auto& name : needed) {
    if (name == kRowIdColumn) { read_row_id_ = true; continue; }
    if (name == kRowAddrColumn) { read_row_address_ = true; continue; }
    if (const auto* field = state_->schema.FindByName(name)) {
      read[size_t(field - fields.data())] = true;
      continue;
    }
    // Only the user's own column list gets this message; filter names fail in Bind.
    if (std::find(columns.begin(), columns.end(), name) != columns.end())
      ThrowNotFound("no column '{}' in dataset '{}' (columns: {})", name, state_->uri,
                    state_->arrow_schema->ToString());
    // A filter names a struct field as "a.b": its top-level column is read.
    if (const auto path = state_->schema.StructPathNamed(name)) read[path->top] = true;
  }
  std::vector<FieldPtr> read_fields;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!read[i]) continue;
    read_fields_.push_back(i);
    read_fields.push_back(state_->arrow_schema->field(i));
  }
  if (read_row_id_) read_fields.push_back(Field::Make(kRowIdColumn, DataType::UInt64(), false));
  if (read_row_address_) read_fields.push_back(Field::Make(kRowAddrColumn, DataType::UInt64(), false));
  read_schema_ = std::make_shared<Schema>(read_fields);
  if (filter_expr) {
    // The filter binds to the columns read, but an unknown name is reported with the
    // dataset's columns: read_schema_ holds only the (known) ones the filter named.
    filter_ = Bind(*filter_expr, *read_schema_, *state_->arrow_schema);
    auto referenced = ReferencedColumns(*filter_expr);
    std::vector<FieldPtr> filter_fields;
    for (const auto& f : read_schema_->fields()) {
      bool needs = false;
      for (const auto& r : referenced) needs |= r == f->name || r.rfind(f->name + ".", 0) == 0;
      filter_needs_.push_back(needs);
      if (needs) filter_fields.push_back(f);
    }
    filter_schema_ = std::make_shared<Schema>(filter_fields);
    if (use_index) indexed_ = PlanIndexedRows(*state_, *filter_expr);
  }

  std::vector<FieldPtr> out_fields;
  for (const auto& name : columns) {
    int i = read_schema_->FieldIndex(name);
    if (i < 0) ThrowNotFound("no column '{}' in dataset '{}'", name, state_->uri);
    output_columns_.push_back(i);
    out_fields.push_back(read_schema_->field(size_t(i)));
  }
  output_schema_ = std::make_shared<Schema>(out_fields, state_->arrow_schema->metadata());
}

std::vector<uint64_t> RowSet::ToVector() const {
  if (!is_range) return offsets;
  std::vector<uint64_t> out(count);
  std::iota(out.begin(), out.end(), first);
  return out;
}

void ScanPlan::ReadColumns(const FragmentReader& reader, const RowSet& rows, const std::vector<bool>& want,
                           Access access, std::vector<ArrayPtr>& columns) const {
  columns.resize(read_schema_->num_fields());
  std::vector<size_t> fields, slots;
  for (size_t i = 0; i < read_fields_.size(); ++i)
    if (want[i]) {
      fields.push_back(read_fields_[i]);
      slots.push_back(i);
    }
  if (!fields.empty()) {
    auto arrays = rows.is_range           ? reader.ReadRange(fields, rows.first, rows.count)
                  : access == Access::kScan ? reader.ReadRows(fields, rows.offsets)
                                            : reader.Take(fields, rows.offsets);
    for (size_t k = 0; k < slots.size(); ++k) columns[slots[k]] = std::move(arrays[k]);
  }
  size_t next = read_fields_.size();
  bool row_id = read_row_id_ && want[next];
  bool row_address = read_row_address_ && want[next + (read_row_id_ ? 1 : 0)];
  if (!row_id && !row_address) return;
  std::vector<uint64_t> listed;
  std::span<const uint64_t> offsets = rows.offsets;
  if (rows.is_range) offsets = listed = rows.ToVector();
  if (row_id) columns[next] = reader.RowIds(offsets);
  if (read_row_id_) ++next;
  if (row_address) columns[next] = reader.RowAddresses(offsets);
}

RecordBatchPtr ScanPlan::ReadBatch(const FragmentReader& reader, const RowSet& rows, Access access) const {
  std::vector<ArrayPtr> columns;
  ReadColumns(reader, rows, std::vector<bool>(read_schema_->num_fields(), true), access, columns);
  return std::make_shared<RecordBatch>(read_schema_, std::move(columns), int64_t(rows.size()));
}

bool ScanPlan::Cursor::Next(FragmentBatch& out) {
  while (task_ < plan_.tasks_.size()) {
    const ScanTask& task = plan_.tasks_[task_];
    const auto& fragment = *task.fragment;
    const std::vector<uint64_t>* candidates = task.candidates;
    if (!reader_) {
      reader_ = std::make_unique<FragmentReader>(*plan_.state_, fragment);
      if (plan_.read_ahead_) reader_->ReadAhead();
      start_ = 0;
    }
    uint64_t rows = candidates ? candidates->size() : reader_->physical_rows();
    if (start_ >= rows) {
      reader_.reset();
      ++task_;
      continue;
    }
    uint64_t start = start_, end = std::min(rows, start_ + uint64_t(plan_.batch_size_));
    start_ = end;
    const auto& deleted = reader_->deletions();
    out.fragment = &fragment;
    if (candidates) {
      // The candidates: only these rows are read and filtered.
      std::vector<uint64_t> live;
      live.reserve(end - start);
      for (uint64_t k = start; k < end; ++k)
        if (!deleted.Contains(uint32_t((*candidates)[k]))) live.push_back((*candidates)[k]);
      if (live.empty()) continue;
      out.rows = RowSet::List(std::move(live));
    } else if (deleted.IsEmpty()) {
      out.rows = RowSet::Range(start, end - start);
    } else {
      // The offsets between deleted ones, walking the deletions in the batch once.
      std::vector<uint64_t> live;
      live.reserve(end - start);
      uint64_t next = start;
      deleted.ForEachInRange(start, end, [&](uint32_t gone) {
        for (; next < gone; ++next) live.push_back(next);
        next = uint64_t(gone) + 1;
      });
      for (; next < end; ++next) live.push_back(next);
      if (live.empty()) continue;
      out.rows = live.size() == end - start ? RowSet::Range(start, end - start) : RowSet::List(std::move(live));
    }
    if (!plan_.filter_) {
      out.batch = plan_.ReadBatch(*reader_, out.rows, Access::kScan);
      return true;
    }
    // Filter on the columns it needs, then read the rest for the passing rows only.
    std::vector<ArrayPtr> columns;
    plan_.ReadColumns(*reader_, out.rows, plan_.filter_needs_, Access::kScan, columns);
    std::vector<ArrayPtr> filter_columns;
    for (size_t i = 0; i < columns.size(); ++i)
      if (plan_.filter_needs_[i]) filter_columns.push_back(columns[i]);
    RecordBatch filter_input(plan_.filter_schema_, filter_columns, int64_t(out.rows.size()));
    const std::vector<int64_t> selected = EvaluateSelection(*plan_.filter_, filter_input);
    // Rows an index named must hold its leaf's value (table/hit_check.h).
    if (task.from_index && plan_.indexed_->answers)
      CheckIndexHits(*plan_.state_, *plan_.indexed_->answers, fragment, out.rows.offsets, filter_input, selected);
    if (selected.empty()) continue;
    if (selected.size() < out.rows.size()) {
      std::vector<uint64_t> kept(selected.size());
      for (size_t k = 0; k < selected.size(); ++k)
        kept[k] = out.rows.is_range ? out.rows.first + uint64_t(selected[k]) : out.rows.offsets[size_t(selected[k])];
      out.rows = RowSet::List(std::move(kept));
      for (auto& column : columns)
        if (column) column = Take(*column, selected);
    }
    std::vector<bool> rest(columns.size());
    for (size_t i = 0; i < columns.size(); ++i) rest[i] = !plan_.filter_needs_[i];
    std::vector<ArrayPtr> late;
    plan_.ReadColumns(*reader_, out.rows, rest, Access::kScan, late);
    for (size_t i = 0; i < columns.size(); ++i)
      if (rest[i]) columns[i] = std::move(late[i]);
    out.batch = std::make_shared<RecordBatch>(plan_.read_schema_, std::move(columns), int64_t(out.rows.size()));
    return true;
  }
  return false;
}

void ScanPlan::ForEachBatch(const std::function<bool(const FragmentBatch&)>& fn) const {
  Cursor cursor(*this);
  FragmentBatch batch;
  while (cursor.Next(batch))
    if (!fn(batch)) return;
}

RecordBatchPtr ScanPlan::Project(const RecordBatch& batch) const {
  std::vector<ArrayPtr> columns;
  for (int i : output_columns_) columns.push_back(batch.column(size_t(i)));
  return std::make_shared<RecordBatch>(output_schema_, std::move(columns), batch.num_rows());
}

}  // namespace lancelet::table
