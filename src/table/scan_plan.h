// How a scan runs: which fields to read, the filter, and the pseudo-columns, then a
// fragment-by-fragment walk over live rows. Scan, count, delete (and later update)
// share it, so every one of them sees rows exactly the same way.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/expr.h"
#include "table/fragment_reader.h"

namespace lancelet::table {

inline constexpr const char* kRowIdColumn = "_rowid";
inline constexpr const char* kRowAddrColumn = "_rowaddr";

// A batch of live rows from one fragment, with the physical offsets they came from.
struct FragmentBatch {
  const lance::table::DataFragment* fragment = nullptr;
  std::vector<uint64_t> offsets;  // physical offsets of the rows, ascending
  RecordBatchPtr batch;           // columns: the plan's read schema
};

class ScanPlan {
 public:
  // `columns` empty means every schema field. `filter` may be empty.
  ScanPlan(std::shared_ptr<const DatasetState> state, std::vector<std::string> columns, bool columns_set,
           const std::string& filter, bool with_row_id, bool with_row_address, int64_t batch_size);
  explicit ScanPlan(const ScanBuilder& builder);

  const SchemaPtr& output_schema() const { return output_schema_; }
  const std::shared_ptr<const DatasetState>& state() const { return state_; }

  // Calls `fn` for each batch of live rows that pass the filter, in dataset order,
  // with the read columns (not yet projected). Stops when fn returns false.
  void ForEachBatch(const std::function<bool(const FragmentBatch&)>& fn) const;
  // Narrows a read batch to the output columns.
  RecordBatchPtr Project(const RecordBatch& batch) const;

  bool has_filter() const { return filter_ != nullptr; }
  // The read columns at the given physical offsets of one fragment (no filter).
  RecordBatchPtr ReadRows(const FragmentReader& reader, const std::vector<uint64_t>& offsets) const {
    return ReadBatch(reader, offsets, false);
  }

  // Pull-based walk with the same semantics as ForEachBatch (streams bound memory).
  class Cursor {
   public:
    explicit Cursor(const ScanPlan& plan) : plan_(plan) {}
    // The next non-empty batch, or false at the end.
    bool Next(FragmentBatch& out);

   private:
    const ScanPlan& plan_;
    int fragment_ = 0;
    uint64_t start_ = 0;
    std::unique_ptr<FragmentReader> reader_;
  };

 private:
  void Prepare(std::vector<std::string> columns, bool columns_set, const std::string& filter);
  friend class Cursor;
  RecordBatchPtr ReadBatch(const FragmentReader& reader, const std::vector<uint64_t>& offsets, bool contiguous) const;

  std::shared_ptr<const DatasetState> state_;
  bool with_row_id_;
  bool with_row_address_;
  int64_t batch_size_;
  std::vector<size_t> read_fields_;  // dataset schema indices
  // Late materialisation: the filter is evaluated on the columns it needs first, and the
  // other columns are read only for the rows that pass.
  std::vector<bool> filter_needs_;   // per read_schema_ column
  SchemaPtr filter_schema_;          // the read columns the filter needs
  // Reads read_schema_ columns i where want[i], at `offsets` (one range when contiguous);
  // the others are left null.
  void ReadColumns(const FragmentReader& reader, const std::vector<uint64_t>& offsets, bool contiguous,
                   const std::vector<bool>& want, std::vector<ArrayPtr>& columns) const;
  bool read_row_id_ = false, read_row_address_ = false;
  SchemaPtr read_schema_;            // read fields, then _rowid, _rowaddr when read
  BoundExprPtr filter_;
  std::vector<int> output_columns_;  // indices into read_schema_
  SchemaPtr output_schema_;
};

}  // namespace lancelet::table
