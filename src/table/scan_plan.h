// How a scan runs: which fields to read, the filter, and the pseudo-columns, then a
// fragment-by-fragment walk over live rows. Scan, count, delete (and later update)
// share it, so every one of them sees rows exactly the same way.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/expr.h"
#include "table/fragment_reader.h"
#include "table/index_plan.h"

namespace lancelet::table {

inline constexpr const char* kRowIdColumn = "_rowid";
inline constexpr const char* kRowAddrColumn = "_rowaddr";

// Physical offsets of rows of one fragment, ascending: the range [first, first + count),
// or a list. A scan of a fragment without deletions is ranges only, so it never spends
// memory or time on one offset per row.
struct RowSet {
  bool is_range = true;
  uint64_t first = 0, count = 0;  // when is_range
  std::vector<uint64_t> offsets;  // when !is_range

  static RowSet Range(uint64_t first, uint64_t count) { return {true, first, count, {}}; }
  static RowSet List(std::vector<uint64_t> offsets) { return {false, 0, 0, std::move(offsets)}; }
  size_t size() const { return is_range ? size_t(count) : offsets.size(); }
  std::vector<uint64_t> ToVector() const;
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    if (is_range) {
      for (uint64_t o = first; o < first + count; ++o) fn(o);
    } else {
      for (uint64_t o : offsets) fn(o);
    }
  }
};

// A batch of live rows from one fragment, with the physical offsets they came from.
struct FragmentBatch {
  const lance::table::DataFragment* fragment = nullptr;
  RowSet rows;
  RecordBatchPtr batch;  // columns: the plan's read schema
};

// One fragment's share of a scan, decided before any row is read: every row, or the
// offsets (ascending) to evaluate the filter at, from indexes (their hits are checked
// against their values, table/hit_check.h) or from the caller (ScanSpec::rows).
struct ScanTask {
  const lance::table::DataFragment* fragment = nullptr;
  const std::vector<uint64_t>* candidates = nullptr;  // null: every row
  bool from_index = false;
};

// The spec of an internal scan: `columns` (every field when nullopt) of the rows where
// `predicate` (SQL text; empty: every row) is TRUE, in batches of `batch_size`.
ScanSpec RowsWhere(std::optional<std::vector<std::string>> columns, const std::string& predicate,
                   int64_t batch_size = 65536);

class ScanPlan {
 public:
  // The plan of `spec` over `state` (its limit and offset are the reader's to apply; a
  // scan without a limit reads every fragment and so reads ahead).
  ScanPlan(std::shared_ptr<const DatasetState> state, const ScanSpec& spec);
  ScanPlan(const ScanPlan&) = delete;  // tasks_ point into indexed_ and rows_
  ScanPlan& operator=(const ScanPlan&) = delete;

  const SchemaPtr& output_schema() const { return output_schema_; }
  const std::shared_ptr<const DatasetState>& state() const { return state_; }

  // Calls `fn` for each batch of live rows that pass the filter, in dataset order,
  // with the read columns (not yet projected). Stops when fn returns false.
  void ForEachBatch(const std::function<bool(const FragmentBatch&)>& fn) const;
  // Narrows a read batch to the output columns.
  RecordBatchPtr Project(const RecordBatch& batch) const;

  bool has_filter() const { return filter_ != nullptr; }
  // Where indexes narrowed the filter (table/index_plan.h); empty for a flat scan.
  const std::optional<IndexedRows>& indexed() const { return indexed_; }
  // The fragments the scan visits, in dataset order, each with its candidates.
  const std::vector<ScanTask>& tasks() const { return tasks_; }
  // The read columns at the given physical offsets of one fragment (no filter), for a
  // take: overlay values are read only at the ranks these rows need.
  RecordBatchPtr TakeRows(const FragmentReader& reader, std::vector<uint64_t> offsets) const {
    return ReadBatch(reader, RowSet::List(std::move(offsets)), Access::kTake);
  }

  // Pull-based walk with the same semantics as ForEachBatch (streams bound memory).
  class Cursor {
   public:
    explicit Cursor(const ScanPlan& plan) : plan_(plan) {}
    // The next non-empty batch, or false at the end.
    bool Next(FragmentBatch& out);

   private:
    const ScanPlan& plan_;
    size_t task_ = 0;
    uint64_t start_ = 0;  // next offset, or next index into the task's candidates
    std::unique_ptr<FragmentReader> reader_;
  };

 private:
  void Prepare(std::vector<std::string> columns, const ExprPtr& filter, bool use_index);
  void PlanTasks(const ScanSpec& spec);
  friend class Cursor;
  // How rows are being read: a scan visits whole fragments, so it may read a fragment's
  // small overlays whole (FragmentReader::ReadRows); a take reads only what it returns.
  enum class Access { kScan, kTake };
  RecordBatchPtr ReadBatch(const FragmentReader& reader, const RowSet& rows, Access access) const;

  std::shared_ptr<const DatasetState> state_;
  bool with_row_id_;
  bool with_row_address_;
  int64_t batch_size_;
  std::vector<size_t> read_fields_;  // dataset schema indices
  // Late materialisation: the filter is evaluated on the columns it needs first, and the
  // other columns are read only for the rows that pass.
  std::vector<bool> filter_needs_;   // per read_schema_ column
  SchemaPtr filter_schema_;          // the read columns the filter needs
  // Reads read_schema_ columns i where want[i] at `rows`; the others are left null.
  void ReadColumns(const FragmentReader& reader, const RowSet& rows, const std::vector<bool>& want, Access access,
                   std::vector<ArrayPtr>& columns) const;
  bool read_row_id_ = false, read_row_address_ = false;
  SchemaPtr read_schema_;            // read fields, then _rowid, _rowaddr when read
  BoundExprPtr filter_;
  std::optional<IndexedRows> indexed_;
  std::shared_ptr<const std::map<uint64_t, std::vector<uint64_t>>> rows_;  // ScanSpec::rows
  std::vector<ScanTask> tasks_;
  // The scan reads each fragment to its end (no limit): readers may read ahead.
  bool read_ahead_ = false;
  std::vector<int> output_columns_;  // indices into read_schema_
  SchemaPtr output_schema_;
};

}  // namespace lancelet::table
