#include "sql/sort.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "expr/numeric.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/scalar.h"
#include "sql/exec.h"
#include "sql/sort_keys.h"
#include "sql/spill.h"

namespace lancelet::sql {

namespace {

// A stored number in its comparison domain (int64, uint64 or double).
template <typename T>
auto Widen(T v) {
  if constexpr (std::is_floating_point_v<T>) return double(v);
  else if constexpr (std::is_signed_v<T>) return int64_t(v);
  else return uint64_t(v);
}

bool StoredNumber(const DataType& type) {
  return type.id() != TypeId::kFloat16 && (type.is_numeric() || type.id() == TypeId::kDate32 ||
                                           type.id() == TypeId::kDate64 || type.id() == TypeId::kTimestamp);
}

// Three-way comparison of row a of `x` with row b of `y`, two valid values of one
// ORDER BY key (of one type).
std::function<int(int64_t, int64_t)> KeyComparator(const ArrayData& x, const ArrayData& y) {
  const DataType& type = *x.type;
  if (StoredNumber(type)) {
    return VisitStorage(type.id(), [&](auto tag) -> std::function<int(int64_t, int64_t)> {
      using T = decltype(tag);
      if constexpr (std::is_arithmetic_v<T>) {
        const T* vx = x.values<T>();
        const T* vy = y.values<T>();
        return [vx, vy](int64_t a, int64_t b) { return Cmp3(Widen(vx[a]), Widen(vy[b])); };
      }
      return nullptr;  // excluded by StoredNumber
    });
  }
  if (type.is_variable_binary()) {
    return [&x, &y](int64_t a, int64_t b) {
      const int c = x.GetView(a).compare(y.GetView(b));
      return (c > 0) - (c < 0);
    };
  }
  auto scalars = [](const ArrayData& key) {
    auto values = std::make_shared<std::vector<Scalar>>();
    for (int64_t r = 0; r < key.length; ++r) values->push_back(GetScalar(key, r));
    return values;
  };
  auto sx = scalars(x);
  auto sy = &x == &y ? sx : scalars(y);
  return [sx, sy](int64_t a, int64_t b) { return CompareScalars((*sx)[size_t(a)], (*sy)[size_t(b)]); };
}

// Row order of `keys` under ORDER BY `items`; equal rows keep their order. With `first`,
// only that many rows are ordered and returned.
std::vector<int64_t> SortOrder(const std::vector<ArrayPtr>& keys, const std::vector<OrderItem>& items, int64_t rows,
                               std::optional<int64_t> first) {
  if (HasNormalizedKeys(keys)) return NormalizedSortOrder(keys, items, rows, first);
  const RowOrder order_of(keys, keys, items);
  auto before = [&](int64_t a, int64_t b) { return order_of.Before(a, b); };
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  if (first && *first < rows) {
    // The row number breaks ties, which keeps equal rows in order.
    auto middle = order.begin() + ptrdiff_t(*first);
    std::partial_sort(order.begin(), middle, order.end(),
                      [&](int64_t a, int64_t b) { return before(a, b) || (!before(b, a) && a < b); });
    order.erase(middle, order.end());
    return order;
  }
  std::stable_sort(order.begin(), order.end(), before);
  return order;
}

// Rows per batch of a spilled run: what the merge holds of each run at a time.
constexpr int64_t kRunBatchRows = 4096;

// The k-way merge of sorted runs. Of equal rows, the earlier run's come first: runs are
// in input order, so the sort stays stable.
class MergeReader final : public RecordBatchReader {
 public:
  MergeReader(SchemaPtr schema, size_t outputs, const std::vector<OrderItem>& items,
              std::vector<std::unique_ptr<RecordBatchReader>> runs)
      : schema_(std::move(schema)), outputs_(outputs), items_(items) {
    std::vector<FieldPtr> fields(schema_->fields().begin(), schema_->fields().begin() + ptrdiff_t(outputs));
    output_schema_ = std::make_shared<Schema>(fields);
    for (auto& reader : runs) {
      Run run;
      run.reader = std::move(reader);  // mapped: a run costs the merge one batch
      runs_.push_back(std::move(run));
    }
    orders_.resize(runs_.size() * runs_.size());
    for (size_t r = 0; r < runs_.size(); ++r) Refill(r);
  }

  SchemaPtr schema() const override { return output_schema_; }

  RecordBatchPtr Next() override {
    std::vector<std::pair<size_t, int64_t>> picks;  // (run, row)
    // A heap of the runs with rows, the run whose head sorts first on top.
    auto after = [this](size_t a, size_t b) {
      const bool b_first = Order(b, a).Before(runs_[b].row, runs_[a].row);
      return b_first || (!Order(a, b).Before(runs_[a].row, runs_[b].row) && b < a);
    };
    std::vector<size_t> heap;
    for (size_t r = 0; r < runs_.size(); ++r)
      if (runs_[r].batch) heap.push_back(r);
    std::make_heap(heap.begin(), heap.end(), after);
    while (!heap.empty() && int64_t(picks.size()) < kRunBatchRows) {
      std::pop_heap(heap.begin(), heap.end(), after);
      const size_t best = heap.back();
      heap.pop_back();
      Run& run = runs_[best];
      picks.push_back({best, run.row++});
      if (run.row == run.batch->num_rows()) break;  // its next batch replaces the one picks point into
      heap.push_back(best);
      std::push_heap(heap.begin(), heap.end(), after);
    }
    if (picks.empty()) return nullptr;
    // Each run's picked rows, then those pieces interleaved back into pick order.
    std::vector<std::vector<int64_t>> rows(runs_.size());
    std::vector<int64_t> order;
    for (const auto& [r, row] : picks) rows[r].push_back(row);
    std::vector<int64_t> base(runs_.size(), 0);
    for (size_t r = 1; r < runs_.size(); ++r) base[r] = base[r - 1] + int64_t(rows[r - 1].size());
    std::vector<int64_t> taken(runs_.size(), 0);
    for (const auto& [r, row] : picks) order.push_back(base[r] + taken[r]++);
    std::vector<ArrayPtr> columns;
    for (size_t c = 0; c < outputs_; ++c) {
      std::vector<ArrayPtr> pieces;
      for (size_t r = 0; r < runs_.size(); ++r)
        if (!rows[r].empty()) pieces.push_back(Take(*runs_[r].batch->columns()[c], rows[r]));
      const ArrayPtr joined = pieces.size() == 1 ? pieces[0] : Concatenate(pieces);
      columns.push_back(Take(*joined, order));
    }
    for (size_t r = 0; r < runs_.size(); ++r)
      if (runs_[r].batch && runs_[r].row == runs_[r].batch->num_rows()) Refill(r);
    return std::make_shared<RecordBatch>(output_schema_, std::move(columns), int64_t(picks.size()));
  }

 private:
  struct Run {
    std::unique_ptr<RecordBatchReader> reader;
    RecordBatchPtr batch;       // null once the run is done
    std::vector<ArrayPtr> keys;  // the batch's key columns
    int64_t row = 0;
  };

  void Refill(size_t r) {
    Run& run = runs_[r];
    do run.batch = run.reader->Next();
    while (run.batch && run.batch->num_rows() == 0);
    run.row = 0;
    run.keys.clear();
    if (run.batch) run.keys.assign(run.batch->columns().begin() + ptrdiff_t(outputs_), run.batch->columns().end());
    for (size_t other = 0; other < runs_.size(); ++other) {  // comparators that held the old keys
      orders_[r * runs_.size() + other].reset();
      orders_[other * runs_.size() + r].reset();
    }
  }

  // Compares run a's rows with run b's, over their current batches.
  const RowOrder& Order(size_t a, size_t b) {
    auto& order = orders_[a * runs_.size() + b];
    if (!order) order = std::make_unique<RowOrder>(runs_[a].keys, runs_[b].keys, items_);
    return *order;
  }

  SchemaPtr schema_, output_schema_;
  size_t outputs_;
  const std::vector<OrderItem> items_;  // a copy: the merge outlives the statement's plan
  std::vector<Run> runs_;
  std::vector<std::unique_ptr<RowOrder>> orders_;  // [a * runs + b]
};

}  // namespace

RowOrder::RowOrder(const std::vector<ArrayPtr>& x, const std::vector<ArrayPtr>& y, const std::vector<OrderItem>& items)
    : x_(x), y_(y), items_(items) {
  for (size_t k = 0; k < x.size(); ++k) compare_.push_back(KeyComparator(*x[k], *y[k]));
}

bool RowOrder::Before(int64_t a, int64_t b) const {
  for (size_t k = 0; k < x_.size(); ++k) {
    const bool x_null = x_[k]->IsNull(a), y_null = y_[k]->IsNull(b);
    const bool nulls_first = items_[k].nulls_first.value_or(false);
    if (x_null || y_null) {
      if (x_null && y_null) continue;
      return x_null == nulls_first;
    }
    const int c = compare_[k](a, b);
    if (c != 0) return items_[k].descending ? c > 0 : c < 0;
  }
  return false;
}

Sorter::Sorter(SchemaPtr schema, const std::vector<OrderItem>& items, std::optional<int64_t> keep,
               int64_t budget_bytes)
    : schema_(std::move(schema)), items_(items), keep_(keep), budget_bytes_(budget_bytes) {}

Sorter::~Sorter() = default;

std::vector<ArrayPtr> Sorter::KeysOf(const RecordBatch& rows) const {
  const size_t first_key = rows.columns().size() - items_.size();
  return std::vector<ArrayPtr>(rows.columns().begin() + ptrdiff_t(first_key), rows.columns().end());
}

void Sorter::Add(RecordBatchPtr rows) {
  if (!last_kept_.empty()) {
    // Once OFFSET + LIMIT rows are kept, a row that does not sort before the last of
    // them (a tie arrives later, so it sorts after) cannot be in the result.
    const std::vector<ArrayPtr> keys = KeysOf(*rows);
    std::vector<bool> keep(size_t(rows->num_rows()));
    if (!BeforeBound(*keys[0], keep)) {
      const RowOrder order(keys, last_kept_, items_);
      for (int64_t r = 0; r < rows->num_rows(); ++r) keep[size_t(r)] = order.Before(r, 0);
    }
    if (std::find(keep.begin(), keep.end(), false) != keep.end()) rows = rows->Filter(keep);
  }
  held_rows_ += rows->num_rows();
  held_bytes_ += BufferBytes(*rows);
  held_.push_back(std::move(rows));
  if (keep_ && held_rows_ >= std::max<int64_t>(2 * *keep_, 65536)) SortHeld();
  // Sorting copies the held rows twice (concatenated, then in order): they take a third.
  if (!keep_ && held_bytes_ > uint64_t(budget_bytes_) / 3) Spill();
}

void Sorter::SortHeld() {
  auto all = RecordBatch::Concatenate(schema_, held_);
  auto order = SortOrder(KeysOf(*all), items_, all->num_rows(), keep_);
  held_ = {all->Take(order)};
  held_rows_ = held_[0]->num_rows();
  held_bytes_ = BufferBytes(*held_[0]);
  if (keep_ && held_rows_ == *keep_ && held_rows_ > 0) {
    last_kept_.clear();
    for (const auto& key : KeysOf(*held_[0])) last_kept_.push_back(Slice(*key, held_rows_ - 1, 1));
  }
}

void Sorter::Spill() {
  SortHeld();
  runs_.push_back(std::make_unique<SpillFile>(*schema_, "a sort run"));
  const RecordBatch& sorted = *held_[0];
  for (int64_t start = 0; start < sorted.num_rows(); start += kRunBatchRows)
    runs_.back()->Write(*sorted.Slice(start, std::min(kRunBatchRows, sorted.num_rows() - start)));
  held_.clear();
  held_rows_ = 0;
  held_bytes_ = 0;
}

bool Sorter::BeforeBound(const ArrayData& key, std::vector<bool>& keep) const {
  // One numeric key: keep[r] says whether row r sorts before the last row kept, typed
  // (RowOrder calls through a function per key and row). False for other keys.
  const DataType& type = *key.type;
  const ArrayData& bound = *last_kept_[0];
  if (items_.size() != 1 || type.id() == TypeId::kFloat16 || !type.is_numeric() || bound.IsNull(0)) return false;
  const bool descending = items_[0].descending;
  const bool nulls_first = items_[0].nulls_first.value_or(false);
  VisitStorage(type.id(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T>) {
      const T* values = key.values<T>();
      const auto limit = Widen(bound.values<T>()[0]);
      for (int64_t r = 0; r < key.length; ++r) {
        const int c = Cmp3(Widen(values[r]), limit);
        keep[size_t(r)] = key.IsNull(r) ? nulls_first : descending ? c > 0 : c < 0;
      }
    }
  });
  return true;
}

std::unique_ptr<RecordBatchReader> Sorter::Finish() {
  const size_t outputs = schema_->num_fields() - items_.size();
  if (!runs_.empty()) {
    if (held_rows_ > 0) Spill();
    std::vector<std::unique_ptr<RecordBatchReader>> readers;
    for (auto& run : runs_) readers.push_back(run->Read());
    runs_.clear();
    return std::make_unique<MergeReader>(schema_, outputs, items_, std::move(readers));
  }
  if (held_.empty()) held_.push_back(RecordBatch::Concatenate(schema_, {}));
  SortHeld();
  const RecordBatch& all = *held_[0];
  std::vector<FieldPtr> fields(all.schema()->fields().begin(), all.schema()->fields().begin() + ptrdiff_t(outputs));
  std::vector<ArrayPtr> columns(all.columns().begin(), all.columns().begin() + ptrdiff_t(outputs));
  auto sorted = std::make_shared<RecordBatch>(std::make_shared<Schema>(fields), columns, all.num_rows());
  return BatchesReader(sorted->schema(), {sorted});
}

}  // namespace lancelet::sql
