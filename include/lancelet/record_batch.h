// A record batch: equal-length columns under one schema.
#pragma once

#include <memory>
#include <vector>

#include "lancelet/array.h"

namespace lancelet {

class RecordBatch {
 public:
  RecordBatch(SchemaPtr schema, std::vector<ArrayPtr> columns, int64_t num_rows);
  static std::shared_ptr<RecordBatch> Make(SchemaPtr schema, std::vector<ArrayPtr> columns);

  const SchemaPtr& schema() const { return schema_; }
  const std::vector<ArrayPtr>& columns() const { return columns_; }
  const ArrayPtr& column(size_t i) const { return columns_.at(i); }
  // The column with this name; throws NotFound.
  const ArrayPtr& column(const std::string& name) const;
  int64_t num_rows() const { return num_rows_; }
  size_t num_columns() const { return columns_.size(); }

  std::shared_ptr<RecordBatch> Slice(int64_t start, int64_t length) const;
  std::shared_ptr<RecordBatch> Filter(const std::vector<bool>& keep) const;
  // Row i of the result is row rows[i] of this batch.
  std::shared_ptr<RecordBatch> Take(const std::vector<int64_t>& rows) const;
  static std::shared_ptr<RecordBatch> Concatenate(const SchemaPtr& schema,
                                                  const std::vector<std::shared_ptr<RecordBatch>>& batches);
  bool Equals(const RecordBatch& other) const;

 private:
  SchemaPtr schema_;
  std::vector<ArrayPtr> columns_;
  int64_t num_rows_;
};
using RecordBatchPtr = std::shared_ptr<RecordBatch>;

// The bytes the batch's columns hold (BufferBytes of each column).
uint64_t BufferBytes(const RecordBatch& batch);

// A pull-based stream of batches (scans, file readers, format readers).
class RecordBatchReader {
 public:
  virtual ~RecordBatchReader() = default;
  virtual SchemaPtr schema() const = 0;
  // The next batch, or null at the end.
  virtual RecordBatchPtr Next() = 0;
};

// A reader over batches the caller holds (and keeps alive while it reads); its schema is
// the first batch's (InvalidArgument "no input batches" when there is none).
class BatchListReader final : public RecordBatchReader {
 public:
  explicit BatchListReader(const std::vector<RecordBatchPtr>& batches) : batches_(batches) {}
  SchemaPtr schema() const override;
  RecordBatchPtr Next() override { return next_ < batches_.size() ? batches_[next_++] : nullptr; }

 private:
  const std::vector<RecordBatchPtr>& batches_;
  size_t next_ = 0;
};

// `source` read on a thread of its own, up to `depth` batches ahead of the caller, so
// that producing batches (decoding, filtering) overlaps the caller's work on them. The
// batches, the end and any error arrive in the source's order. The thread starts once
// the caller spends longer on three batches in a row than a handoff between threads
// costs; until then the source is read inline. Returns `source` itself when ReadAheadThreads() is 1.
std::unique_ptr<RecordBatchReader> ReadAhead(std::unique_ptr<RecordBatchReader> source, size_t depth = 2);
// The threads a command may use: SetReadAheadThreads's, else LANCELET_THREADS when set,
// else the cores the process may run on (its CPU affinity: taskset and cpusets count).
// Scans of whole fragments read morsels on that many threads; read-ahead, exact vector
// search and index training use them too.
int ReadAheadThreads();
// Sets the threads for the whole process from now on (the CLI's --threads, SQL's SET
// threads); 0 restores the default above.
void SetReadAheadThreads(int threads);

}  // namespace lancelet
