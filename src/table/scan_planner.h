// Planning a scan, a step before it reads any row: ScanPlanner turns a ScanSpec into a
// PlannedScan, which says what is read (the fields, the pseudo-columns, the bound
// filter and which columns it needs) and which rows, in which order: per fragment a
// task (every row, or candidate offsets from indexes or from the caller, each maybe
// with a score), the order they come out in, and a limit the scan may stop at.
// ScanPlan (table/scan_plan.h) executes a PlannedScan.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/expr.h"
#include "table/dataset_state.h"
#include "table/index_plan.h"

namespace lancelet::table {

inline constexpr const char* kRowIdColumn = "_rowid";
inline constexpr const char* kRowAddrColumn = "_rowaddr";

// One fragment's share of a scan: every row, or the offsets (ascending, distinct) to
// evaluate the filter at, from indexes (their hits are checked against their values,
// table/hit_check.h), from the caller (ScanSpec::rows) or the caller's scored rows
// (ScanSpec::scored_rows, `scores` then parallel to `candidates`).
struct ScanTask {
  const lance::table::DataFragment* fragment = nullptr;
  const std::vector<uint64_t>* candidates = nullptr;  // null: every row
  const std::vector<float>* scores = nullptr;         // null: unscored
  bool from_index = false;
};

enum class ScanOrder {
  kDataset,         // task by task, offsets ascending
  kScoreAscending,  // the scored candidates of every task by score, ties by row address
};

// A candidate of a scored scan: tasks[task].candidates[candidate].
struct RankedCandidate {
  uint32_t task = 0;
  uint32_t candidate = 0;
};

// A planned scan. Immutable once planned and shared (the tasks point into it).
struct PlannedScan {
  PlannedScan() = default;
  PlannedScan(const PlannedScan&) = delete;
  PlannedScan& operator=(const PlannedScan&) = delete;

  std::shared_ptr<const DatasetState> state;
  int64_t batch_size = 0;

  // What is read: dataset fields (schema indices) and pseudo-columns, as read_schema.
  std::vector<size_t> read_fields;
  bool read_row_id = false, read_row_address = false;
  SchemaPtr read_schema;  // read fields, then _rowid, _rowaddr when read
  // Late materialisation: the filter is evaluated on the columns it needs first, and the
  // other columns are read only for the rows that pass.
  BoundExprPtr filter;             // bound to read_schema; null: every row passes
  std::vector<bool> filter_needs;  // per read_schema column
  SchemaPtr filter_schema;         // the read columns the filter needs
  // A batch of the scan: read_schema, then the score column (float32) when asked for.
  SchemaPtr batch_schema;
  std::string score_column;        // empty: none
  std::vector<int> output_columns;  // indices into batch_schema
  SchemaPtr output_schema;

  // Which rows, in which order.
  std::optional<IndexedRows> indexed;  // where indexes narrowed the filter
  std::shared_ptr<const std::map<uint64_t, std::vector<uint64_t>>> rows;  // ScanSpec::rows
  std::map<uint64_t, std::vector<uint64_t>> scored_offsets;  // fragment id -> ascending offsets
  std::map<uint64_t, std::vector<float>> scores;              // parallel to scored_offsets
  std::vector<ScanTask> tasks;  // in dataset order
  ScanOrder order = ScanOrder::kDataset;
  std::vector<RankedCandidate> ranked;  // kScoreAscending: every candidate, in output order
  // The scan stops once this many rows passed the filter (a reader's offset plus its
  // limit); -1: it reads every task.
  int64_t limit = -1;
  // The scan reads each fragment to its end (no limit, dataset order): readers may read ahead.
  bool read_ahead = false;
};

class ScanPlanner {
 public:
  // The plan of `spec` over `state`. Throws what a scan of the spec would (unknown
  // columns, a filter that does not bind, bad candidate rows) before reading any row.
  static std::shared_ptr<const PlannedScan> Plan(std::shared_ptr<const DatasetState> state, const ScanSpec& spec);
};

// The spec of an internal scan: `columns` (every field when nullopt) of the rows where
// `predicate` (SQL text; empty: every row) is TRUE, in batches of `batch_size`.
ScanSpec RowsWhere(std::optional<std::vector<std::string>> columns, const std::string& predicate,
                   int64_t batch_size = 65536);
// The same with a predicate expression (null: every row).
ScanSpec RowsWhere(std::optional<std::vector<std::string>> columns, ExprPtr predicate, int64_t batch_size = 65536);

}  // namespace lancelet::table
