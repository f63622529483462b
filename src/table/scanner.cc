// ScanBuilder and take: the read side of the public Dataset API.
#include <algorithm>
#include <numeric>

#include "array/shared_source.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "io/run_concurrently.h"
#include "table/scan_plan.h"

namespace lancelet {

ScanBuilder& ScanBuilder::Columns(std::vector<std::string> columns) {
  spec_.columns = std::move(columns);
  return *this;
}
ScanBuilder& ScanBuilder::Filter(const std::string& predicate) {
  spec_.filter = predicate.empty() ? nullptr : ParseExpression(predicate);
  return *this;
}
ScanBuilder& ScanBuilder::Filter(ExprPtr predicate) { spec_.filter = std::move(predicate); return *this; }
ScanBuilder& ScanBuilder::Limit(int64_t limit) { spec_.limit = limit; return *this; }
ScanBuilder& ScanBuilder::Offset(int64_t offset) {
  if (offset < 0) ThrowInvalid("offset must not be negative, got {}", offset);
  spec_.offset = offset;
  return *this;
}
ScanBuilder& ScanBuilder::WithRowId(bool on) { spec_.with_row_id = on; return *this; }
ScanBuilder& ScanBuilder::WithRowAddress(bool on) { spec_.with_row_address = on; return *this; }
ScanBuilder& ScanBuilder::BatchSize(int64_t rows) { spec_.batch_size = rows; return *this; }
ScanBuilder& ScanBuilder::UseIndex(bool on) { spec_.use_index = on; return *this; }

namespace table {

namespace {

// Streams a scan, applying offset and limit across batches. Without them, threads may
// read its morsels themselves (SharedSource).
class ScanReader final : public RecordBatchReader, public ShareableReader, private SharedSource {
 public:
  ScanReader(DatasetPtr dataset, std::unique_ptr<ScanPlan> plan, int64_t offset, int64_t limit)
      : dataset_(std::move(dataset)), plan_(std::move(plan)), cursor_(*plan_), skip_(offset), remaining_(limit) {}

  SchemaPtr schema() const override { return plan_->output_schema(); }

  SharedSource* Shared() override {
    if (skip_ != 0 || remaining_ >= 0 || !cursor_.Share()) return nullptr;
    return this;
  }

  RecordBatchPtr Next() override {
    FragmentBatch b;
    while (remaining_ != 0 && cursor_.Next(b)) {
      RecordBatchPtr batch = b.batch;
      if (skip_ >= batch->num_rows()) {
        skip_ -= batch->num_rows();
        continue;
      }
      int64_t start = skip_;
      skip_ = 0;
      int64_t n = batch->num_rows() - start;
      if (remaining_ >= 0) n = std::min(n, remaining_);
      if (start != 0 || n != batch->num_rows()) batch = batch->Slice(start, n);
      if (remaining_ > 0) remaining_ -= n;
      return plan_->Project(*batch);
    }
    return nullptr;
  }

 private:
  bool NextPiece(SharedPiece& piece) override {
    std::vector<std::pair<uint64_t, FragmentBatch>> batches;
    piece.positions.clear();
    piece.batches.clear();
    if (!cursor_.NextPiece(piece.first_position, batches)) return false;
    for (auto& [position, b] : batches) {
      piece.positions.push_back(position);
      piece.batches.push_back(plan_->Project(*b.batch));
    }
    return true;
  }

  DatasetPtr dataset_;  // keeps the snapshot alive
  std::unique_ptr<ScanPlan> plan_;
  ScanPlan::Cursor cursor_;
  int64_t skip_;
  int64_t remaining_;  // -1: no limit
};

}  // namespace
}  // namespace table

std::unique_ptr<RecordBatchReader> ScanBuilder::Open() const { return dataset_->Scan(spec_); }

std::unique_ptr<RecordBatchReader> Dataset::Scan(const ScanSpec& spec) const {
  if (spec.limit < -1) ThrowInvalid("limit must not be negative, got {}", spec.limit);
  if (spec.offset < 0) ThrowInvalid("offset must not be negative, got {}", spec.offset);
  auto plan = std::make_unique<table::ScanPlan>(state_, spec);
  return std::make_unique<table::ScanReader>(shared_from_this(), std::move(plan), spec.offset, spec.limit);
}

RecordBatchPtr ScanBuilder::ToBatch() const {
  auto reader = Open();
  std::vector<RecordBatchPtr> batches;
  while (auto b = reader->Next()) batches.push_back(b);
  return RecordBatch::Concatenate(reader->schema(), batches);
}

namespace {

// Rows of one fragment, gathered for a take, in the order they were asked for.
RecordBatchPtr TakeFromFragments(const DatasetPtr& dataset, const std::vector<std::string>& columns,
                                 const std::vector<std::pair<const lance::table::DataFragment*, uint64_t>>& rows) {
  ScanSpec spec;
  if (!columns.empty()) spec.columns = columns;
  spec.batch_size = 1;
  table::ScanPlan plan(table::StatePtrOf(dataset), spec);
  // Group by fragment, read each group's offsets in ascending order, then restore order.
  std::map<const lance::table::DataFragment*, std::vector<size_t>> groups;
  for (size_t i = 0; i < rows.size(); ++i) groups[rows[i].first].push_back(i);
  if (groups.size() == 1) {  // a fragment reader takes offsets in any order
    std::vector<uint64_t> offsets;
    for (const auto& row : rows) offsets.push_back(row.second);
    table::FragmentReader reader(table::StateOf(dataset), *rows.front().first);
    return plan.Project(*plan.TakeRows(reader, offsets));
  }
  std::vector<std::pair<const lance::table::DataFragment*, std::vector<size_t>>> work(groups.begin(), groups.end());
  std::vector<RecordBatchPtr> parts(work.size());
  std::vector<int64_t> position(rows.size());
  int64_t base = 0;
  for (auto& [fragment, idx] : work) {
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return rows[a].second < rows[b].second; });
    for (size_t k = 0; k < idx.size(); ++k) position[idx[k]] = base + int64_t(k);
    base += int64_t(idx.size());
  }
  // Fragments are read side by side where a request costs a round trip.
  const table::DatasetState& state = table::StateOf(dataset);
  io::RunConcurrently(work.size(), state.store->costly_requests() ? table::kConcurrentFragmentReads : 1, [&](size_t g) {
    std::vector<uint64_t> offsets;
    for (size_t i : work[g].second) offsets.push_back(rows[i].second);
    table::FragmentReader reader(state, *work[g].first);
    parts[g] = plan.Project(*plan.TakeRows(reader, offsets));
  });
  RecordBatchPtr all = RecordBatch::Concatenate(plan.output_schema(), parts);
  std::vector<ArrayPtr> cols;
  for (const auto& c : all->columns()) cols.push_back(Take(*c, position));
  return std::make_shared<RecordBatch>(plan.output_schema(), std::move(cols), int64_t(rows.size()));
}

}  // namespace

RecordBatchPtr Dataset::Take(std::span<const uint64_t> row_offsets, const std::vector<std::string>& columns) const {
  const auto& fragments = state_->manifest.fragments();
  // Live rows per fragment, and their prefix sums.
  std::vector<uint64_t> live_end;
  std::vector<std::unique_ptr<table::FragmentReader>> readers;
  uint64_t total = 0;
  for (const auto& f : fragments) {
    readers.push_back(std::make_unique<table::FragmentReader>(*state_, f));
    total += f.physical_rows() - readers.back()->num_deleted();
    live_end.push_back(total);
  }
  std::map<size_t, std::vector<uint64_t>> live_offsets;  // built only for fragments with deletions
  std::vector<std::pair<const lance::table::DataFragment*, uint64_t>> rows;
  for (uint64_t r : row_offsets) {
    if (r >= total) ThrowInvalid("row offset {} is out of range: dataset '{}' has {} rows", r, state_->uri, total);
    size_t f = size_t(std::upper_bound(live_end.begin(), live_end.end(), r) - live_end.begin());
    uint64_t k = r - (f ? live_end[f - 1] : 0);
    const auto& deleted = readers[f]->deletions();
    uint64_t physical = k;
    if (!deleted.IsEmpty()) {
      auto& live = live_offsets[f];
      if (live.empty())
        for (uint64_t o = 0; o < fragments[int(f)].physical_rows(); ++o)
          if (!deleted.Contains(uint32_t(o))) live.push_back(o);
      physical = live[k];
    }
    rows.emplace_back(&fragments[int(f)], physical);
  }
  return TakeFromFragments(shared_from_this(), columns, rows);
}

RecordBatchPtr Dataset::TakeRowAddresses(std::span<const uint64_t> addresses,
                                         const std::vector<std::string>& columns) const {
  std::map<uint64_t, const lance::table::DataFragment*> by_id;
  for (const auto& f : state_->manifest.fragments()) by_id[f.id()] = &f;
  std::vector<std::pair<const lance::table::DataFragment*, uint64_t>> rows;
  for (uint64_t a : addresses) {
    auto it = by_id.find(a >> 32);
    uint64_t offset = a & 0xFFFFFFFFu;
    if (it == by_id.end() || offset >= it->second->physical_rows())
      ThrowNotFound("row address {} (fragment {}, offset {}) does not exist in version {} of '{}'", a, a >> 32,
                    offset, version(), state_->uri);
    rows.emplace_back(it->second, offset);
  }
  return TakeFromFragments(shared_from_this(), columns, rows);
}

}  // namespace lancelet
