#include "table/scan_plan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <tuple>

#include "lancelet/builder.h"
#include "lancelet/error.h"
#include "io/run_concurrently.h"
#include "table/hit_check.h"

namespace lancelet::table {

ScanPlan::ScanPlan(std::shared_ptr<const PlannedScan> planned) : planned_(std::move(planned)) {}

ScanPlan::ScanPlan(std::shared_ptr<const DatasetState> state, const ScanSpec& spec)
    : ScanPlan(ScanPlanner::Plan(std::move(state), spec)) {}

std::vector<uint64_t> RowSet::ToVector() const {
  if (!is_range) return offsets;
  std::vector<uint64_t> out(count);
  std::iota(out.begin(), out.end(), first);
  return out;
}

void ScanPlan::ReadColumns(const FragmentReader& reader, const RowSet& rows, const std::vector<bool>& want,
                           Access access, std::vector<ArrayPtr>& columns) const {
  const PlannedScan& p = *planned_;
  columns.resize(p.read_schema->num_fields());
  std::vector<size_t> fields, slots;
  for (size_t i = 0; i < p.read_fields.size(); ++i)
    if (want[i]) {
      fields.push_back(p.read_fields[i]);
      slots.push_back(i);
    }
  if (!fields.empty()) {
    auto arrays = rows.is_range           ? reader.ReadRange(fields, rows.first, rows.count)
                  : access == Access::kScan ? reader.ReadRows(fields, rows.offsets)
                                            : reader.Take(fields, rows.offsets);
    for (size_t k = 0; k < slots.size(); ++k) columns[slots[k]] = std::move(arrays[k]);
  }
  size_t next = p.read_fields.size();
  bool row_id = p.read_row_id && want[next];
  bool row_address = p.read_row_address && want[next + (p.read_row_id ? 1 : 0)];
  if (!row_id && !row_address) return;
  std::vector<uint64_t> listed;
  std::span<const uint64_t> offsets = rows.offsets;
  if (rows.is_range) offsets = listed = rows.ToVector();
  if (row_id) columns[next] = reader.RowIds(offsets);
  if (p.read_row_id) ++next;
  if (row_address) columns[next] = reader.RowAddresses(offsets);
}

RecordBatchPtr ScanPlan::ReadBatch(const FragmentReader& reader, const RowSet& rows, Access access) const {
  std::vector<ArrayPtr> columns;
  ReadColumns(reader, rows, std::vector<bool>(planned_->read_schema->num_fields(), true), access, columns);
  return std::make_shared<RecordBatch>(planned_->read_schema, std::move(columns), int64_t(rows.size()));
}

bool ScanPlan::ReadPassing(const FragmentReader& reader, const ScanTask& task, FragmentBatch& out) const {
  const PlannedScan& p = *planned_;
  if (!p.filter) {
    out.batch = ReadBatch(reader, out.rows, Access::kScan);
    return true;
  }
  // Filter on the columns it needs, then read the rest for the passing rows only.
  std::vector<ArrayPtr> columns;
  ReadColumns(reader, out.rows, p.filter_needs, Access::kScan, columns);
  std::vector<ArrayPtr> filter_columns;
  for (size_t i = 0; i < columns.size(); ++i)
    if (p.filter_needs[i]) filter_columns.push_back(columns[i]);
  RecordBatch filter_input(p.filter_schema, filter_columns, int64_t(out.rows.size()));
  const std::vector<int64_t> selected = EvaluateSelection(*p.filter, filter_input);
  // Rows an index named must hold its leaf's value (table/hit_check.h).
  if (task.from_index && p.indexed->answers)
    CheckIndexHits(*p.state, *p.indexed->answers, *task.fragment, out.rows.offsets, filter_input, selected);
  if (selected.empty()) return false;
  if (selected.size() < out.rows.size()) {
    std::vector<uint64_t> kept(selected.size());
    for (size_t k = 0; k < selected.size(); ++k)
      kept[k] = out.rows.is_range ? out.rows.first + uint64_t(selected[k]) : out.rows.offsets[size_t(selected[k])];
    out.rows = RowSet::List(std::move(kept));
    for (auto& column : columns)
      if (column) column = Take(*column, selected);
  }
  std::vector<bool> rest(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) rest[i] = !p.filter_needs[i];
  std::vector<ArrayPtr> late;
  ReadColumns(reader, out.rows, rest, Access::kScan, late);
  for (size_t i = 0; i < columns.size(); ++i)
    if (rest[i]) columns[i] = std::move(late[i]);
  out.batch = std::make_shared<RecordBatch>(p.read_schema, std::move(columns), int64_t(out.rows.size()));
  return true;
}

bool ScanPlan::Cursor::Next(FragmentBatch& out) {
  const PlannedScan& p = *plan_.planned_;
  if (p.limit >= 0 && passed_ >= p.limit) return false;
  const bool got = p.order == ScanOrder::kScoreAscending ? NextInScoreOrder(out) : ParallelNext(out);
  if (!got) return false;
  if (p.limit >= 0 && passed_ + int64_t(out.rows.size()) > p.limit) {
    const int64_t keep = p.limit - passed_;
    if (out.rows.is_range) out.rows.count = uint64_t(keep);
    else out.rows.offsets.resize(size_t(keep));
    out.batch = out.batch->Slice(0, keep);
  }
  passed_ += int64_t(out.rows.size());
  return true;
}

std::unique_ptr<FragmentReader> ScanPlan::Cursor::OpenTaskReader() {
  const PlannedScan& p = *plan_.planned_;
  if (auto it = opened_ahead_.find(task_); it != opened_ahead_.end()) {
    auto reader = std::move(it->second);
    opened_ahead_.erase(it);
    return reader;
  }
  const size_t end = std::min(p.tasks.size(), task_ + kOpenAhead);
  if (!p.state->store->costly_requests() || end - task_ < 2)
    return std::make_unique<FragmentReader>(*p.state, *p.tasks[task_].fragment);
  std::vector<std::unique_ptr<FragmentReader>> readers(end - task_);
  io::RunConcurrently(readers.size(), int(readers.size()), [&](size_t i) {
    const ScanTask& task = p.tasks[task_ + i];
    readers[i] = std::make_unique<FragmentReader>(*p.state, *task.fragment);
    const uint64_t batch = uint64_t(p.batch_size);
    if (!task.candidates) {
      readers[i]->OpenAll(p.read_fields, 0, batch);
    } else if (!task.candidates->empty()) {  // else nothing is read
      const auto& rows = *task.candidates;  // ascending
      readers[i]->OpenAll(p.read_fields, std::span(rows).first(std::min<size_t>(rows.size(), batch)));
    }
  });
  for (size_t i = 1; i < readers.size(); ++i) opened_ahead_[task_ + i] = std::move(readers[i]);
  return std::move(readers[0]);
}

bool ScanPlan::Cursor::NextInDatasetOrder(FragmentBatch& out) {
  const PlannedScan& p = *plan_.planned_;
  while (task_ < p.tasks.size()) {
    const ScanTask& task = p.tasks[task_];
    if (!reader_) {
      reader_ = OpenTaskReader();
      if (p.read_ahead) reader_->ReadAhead();
      start_ = 0;
      ready_until_ = ahead_until_ = window_rows_ = 0;
    }
    const uint64_t rows = ScanPlan::SpanRows(task);
    if (start_ >= rows) {
      if (ahead_.valid()) ahead_.get();
      reader_.reset();
      ++task_;
      continue;
    }
    uint64_t start = start_, end = std::min(rows, start_ + uint64_t(p.batch_size));
    start_ = end;
    if (p.read_ahead && !task.candidates && end > ready_until_ && p.state->store->costly_requests())
      FetchAhead(start, end, rows);
    if (plan_.ReadSpan(*reader_, task, start, end, out)) return true;
  }
  return false;
}

uint64_t ScanPlan::SpanRows(const ScanTask& task) {
  return task.candidates ? task.candidates->size() : task.fragment->physical_rows();
}

bool ScanPlan::ReadSpan(const FragmentReader& reader, const ScanTask& task, uint64_t start, uint64_t end,
                        FragmentBatch& out) const {
  const std::vector<uint64_t>* candidates = task.candidates;
  const auto& deleted = reader.deletions();
  out.fragment = task.fragment;
  if (candidates) {
    // The candidates: only these rows are read and filtered.
    std::vector<uint64_t> live;
    live.reserve(end - start);
    for (uint64_t k = start; k < end; ++k)
      if (!deleted.Contains(uint32_t((*candidates)[k]))) live.push_back((*candidates)[k]);
    if (live.empty()) return false;
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
    if (live.empty()) return false;
    out.rows = live.size() == end - start ? RowSet::Range(start, end - start) : RowSet::List(std::move(live));
  }
  return ReadPassing(reader, task, out);
}

void ScanPlan::Cursor::FetchAhead(uint64_t start, uint64_t end, uint64_t rows) {
  const PlannedScan& p = *plan_.planned_;
  if (window_rows_ == 0) {
    const uint64_t batch = uint64_t(p.batch_size), row_bytes = reader_->StoredRowBytes(p.read_fields);
    // Whole batches: a batch that straddled two windows would be read past the cache.
    const uint64_t batches = row_bytes ? kWindowBytes / (row_bytes * batch) : 1;
    window_rows_ = std::clamp<uint64_t>(batches, 1, kMaxWindowBatches) * batch;
  }
  const uint64_t window = window_rows_;
  if (ahead_.valid()) {
    ahead_.get();
    ready_until_ = ahead_until_;
  }
  if (end > ready_until_) {  // the first window of the fragment, or one skipped past: fetched now
    ready_until_ = ahead_until_ = std::min(rows, start + window);
    reader_->RowsFetch(p.read_fields, start, ready_until_ - start)();
  }
  if (ahead_until_ < rows) {
    const uint64_t next = ahead_until_;
    ahead_until_ = std::min(rows, next + window);
    ahead_ = std::async(std::launch::async, reader_->RowsFetch(p.read_fields, next, ahead_until_ - next));
  }
}

bool ScanPlan::Cursor::NextInScoreOrder(FragmentBatch& out) {
  while (ready_.empty()) {
    if (rank_ >= plan_.planned_->ranked.size()) return false;
    ReadRankedWindow();
  }
  out = std::move(ready_.front());
  ready_.pop_front();
  return true;
}

const FragmentReader& ScanPlan::Cursor::ReaderOf(uint32_t task) {
  auto& reader = readers_[task];
  if (!reader) reader = std::make_unique<FragmentReader>(*plan_.planned_->state, *plan_.planned_->tasks[task].fragment);
  return *reader;
}

void ScanPlan::Cursor::ReadRankedWindow() {
  const PlannedScan& p = *plan_.planned_;
  // No more candidates than rows still wanted: when they all pass, none past the limit
  // is read; when some fail, the next window reads on.
  uint64_t window = uint64_t(p.batch_size);
  if (p.limit >= 0) window = std::min(window, uint64_t(p.limit - passed_));
  const size_t end = std::min(p.ranked.size(), rank_ + size_t(window));
  std::map<uint32_t, std::vector<uint64_t>> offsets;  // task -> its candidates in the window
  for (size_t k = rank_; k < end; ++k) {
    const RankedCandidate& r = p.ranked[k];
    offsets[r.task].push_back((*p.tasks[r.task].candidates)[r.candidate]);
  }
  rank_ = end;
  // Each task's candidates are read and filtered together (offsets ascending), then the
  // rows that passed are put back in score order.
  struct Passed {
    float score;
    uint64_t address;
    size_t part;  // in parts
    int64_t row;  // in its part's batch
  };
  std::vector<FragmentBatch> parts;
  std::vector<Passed> passed;
  for (auto& [t, offs] : offsets) {
    const ScanTask& task = p.tasks[t];
    const FragmentReader& reader = ReaderOf(t);
    std::sort(offs.begin(), offs.end());
    std::vector<uint64_t> live;
    for (uint64_t o : offs)
      if (!reader.deletions().Contains(uint32_t(o))) live.push_back(o);
    if (live.empty()) continue;
    FragmentBatch part{task.fragment, RowSet::List(std::move(live)), nullptr};
    if (!plan_.ReadPassing(reader, task, part)) continue;
    for (size_t r = 0; r < part.rows.offsets.size(); ++r) {
      const uint64_t o = part.rows.offsets[r];
      const size_t c = size_t(std::lower_bound(task.candidates->begin(), task.candidates->end(), o) -
                              task.candidates->begin());
      passed.push_back({(*task.scores)[c], task.fragment->id() << 32 | o, parts.size(), int64_t(r)});
    }
    parts.push_back(std::move(part));
  }
  std::sort(passed.begin(), passed.end(), [](const Passed& a, const Passed& b) {
    return std::tie(a.score, a.address) < std::tie(b.score, b.address);
  });
  // Each run of rows of one part is a batch, with its scores as the score column.
  for (size_t begin = 0, run_end = 0; begin < passed.size(); begin = run_end) {
    for (run_end = begin; run_end < passed.size() && passed[run_end].part == passed[begin].part;) ++run_end;
    const FragmentBatch& part = parts[passed[begin].part];
    std::vector<int64_t> rows;
    std::vector<uint64_t> run_offsets;
    FixedWidthBuilder<float> scores(DataType::Float32());
    for (size_t k = begin; k < run_end; ++k) {
      rows.push_back(passed[k].row);
      run_offsets.push_back(part.rows.offsets[size_t(passed[k].row)]);
      scores.Append(passed[k].score);
    }
    std::vector<ArrayPtr> columns;
    for (const auto& column : part.batch->columns()) columns.push_back(Take(*column, rows));
    if (!p.score_column.empty()) columns.push_back(scores.Finish());
    ready_.push_back({part.fragment, RowSet::List(std::move(run_offsets)),
                      std::make_shared<RecordBatch>(p.batch_schema, std::move(columns), int64_t(rows.size()))});
  }
}

void ScanPlan::ForEachBatch(const std::function<bool(const FragmentBatch&)>& fn) const {
  Cursor cursor(*this);
  FragmentBatch batch;
  while (cursor.Next(batch))
    if (!fn(batch)) return;
}

RecordBatchPtr ScanPlan::Project(const RecordBatch& batch) const {
  std::vector<ArrayPtr> columns;
  for (int i : planned_->output_columns) columns.push_back(batch.column(size_t(i)));
  return std::make_shared<RecordBatch>(planned_->output_schema, std::move(columns), batch.num_rows());
}

}  // namespace lancelet::table
