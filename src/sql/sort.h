// ORDER BY over a stream of batches. Rows arrive with their sort keys as their last
// columns. Under a LIMIT only the best OFFSET + LIMIT rows so far are held; without one,
// rows are held up to a memory budget, then sorted runs spill to temporary Arrow IPC files
// (unlinked at once, so nothing outlives the process) and are merged as the result streams.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "lancelet/record_batch.h"
#include "sql/ast.h"
#include "sql/spill.h"

namespace lancelet::sql {

// Whether row a of keys `x` comes before row b of keys `y` under ORDER BY `items` (the
// keys in item order, of the same types on both sides). NULLs go last, for ASC and DESC
// alike (DuckDB's default), unless NULLS FIRST says otherwise; NaN sorts above every number.
class RowOrder {
 public:
  RowOrder(const std::vector<ArrayPtr>& x, const std::vector<ArrayPtr>& y, const std::vector<OrderItem>& items);
  bool Before(int64_t a, int64_t b) const;

 private:
  const std::vector<ArrayPtr>& x_;
  const std::vector<ArrayPtr>& y_;
  const std::vector<OrderItem>& items_;
  std::vector<std::function<int(int64_t, int64_t)>> compare_;
};

class Sorter {
 public:
  // `schema`: the output columns, then one key column per item of `items`.
  // `keep`: OFFSET + LIMIT, when there is a LIMIT. `budget_bytes`: what the held rows may
  // take before a run spills.
  Sorter(SchemaPtr schema, const std::vector<OrderItem>& items, std::optional<int64_t> keep, int64_t budget_bytes);
  ~Sorter();

  void Add(RecordBatchPtr rows);
  // The rows in order, without their key columns.
  std::unique_ptr<RecordBatchReader> Finish();

  // Runs spilled so far (for tests and EXPLAIN-like reporting).
  size_t spilled_runs() const { return runs_.size(); }

 private:
  std::vector<ArrayPtr> KeysOf(const RecordBatch& rows) const;
  // Sorts the held rows into one batch (the best `keep_` of them under a LIMIT).
  void SortHeld();
  bool BeforeBound(const ArrayData& key, std::vector<bool>& keep) const;
  void Spill();

  SchemaPtr schema_;
  const std::vector<OrderItem> items_;
  std::optional<int64_t> keep_;
  int64_t budget_bytes_;
  std::vector<RecordBatchPtr> held_;
  int64_t held_rows_ = 0;
  uint64_t held_bytes_ = 0;
  std::vector<ArrayPtr> last_kept_;  // with keep_: the keys of the last row kept, once full
  std::vector<std::unique_ptr<SpillFile>> runs_;  // the spilled runs
};

}  // namespace lancelet::sql
