// Building one index segment from rows that arrive in any order, in bounded memory.
//
// Rows are buffered up to a memory budget; a full buffer is sorted (SortedOrder) and
// spilled to a run file in the segment's directory. Finish sorts the last buffer, merges
// the runs by an order-preserving key (ties in arrival order), streams the sorted rows
// into the index writer (BTree pages or Bitmap key rows), and removes the runs. A builder
// destroyed before Finish removes whatever it wrote.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "index/scalar_index.h"
#include "lancelet/record_batch.h"

namespace lancelet::index {

// Receives rows in index order (nulls first, then ascending) and writes the index files.
class SortedSink {
 public:
  virtual ~SortedSink() = default;
  virtual void Write(const ArrayPtr& values, std::span<const uint64_t> ids) = 0;
  virtual std::vector<WrittenFile> Finish() = 0;
};

// The lookup of BTree pages of `page_rows` sorted rows, fed in order: one row per page
// (min, max, null_count, page_idx), min and max the page's first and last value, with
// the schema metadata page_lookup.lance carries (batch_size, range_partitioned).
class PageLookupBuilder {
 public:
  PageLookupBuilder(TypePtr type, int64_t page_rows);
  void Add(const ArrayData& sorted_values);
  RecordBatchPtr Finish();

 private:
  TypePtr type_;
  int64_t page_rows_;
  int64_t rows_ = 0;
  std::vector<ArrayPtr> mins_, maxs_;
  std::vector<uint32_t> nulls_;
  ArrayPtr last_;
};

std::unique_ptr<SortedSink> MakeSortedSink(io::ObjectStore& store, const std::string& dir, IndexKind kind,
                                           format::FileVersion version, TypePtr type);

class IndexBuilder {
 public:
  static constexpr uint64_t kDefaultMemoryBudget = 64 << 20;

  IndexBuilder(io::ObjectStore& store, std::string dir, IndexKind kind, format::FileVersion version, TypePtr type,
               uint64_t memory_budget = kDefaultMemoryBudget);
  ~IndexBuilder();
  IndexBuilder(const IndexBuilder&) = delete;
  IndexBuilder& operator=(const IndexBuilder&) = delete;

  void Add(const ArrayPtr& values, std::span<const uint64_t> ids);
  std::vector<WrittenFile> Finish();
  size_t runs() const { return runs_.size(); }  // spilled so far

 private:
  void Spill();
  // The buffered rows, sorted.
  std::pair<ArrayPtr, std::vector<uint64_t>> SortBuffer();

  io::ObjectStore& store_;
  std::string dir_;
  IndexKind kind_;
  format::FileVersion version_;
  TypePtr type_;
  uint64_t budget_;
  std::vector<ArrayPtr> buffered_;
  std::vector<uint64_t> buffered_ids_;
  uint64_t buffered_bytes_ = 0;
  std::vector<std::string> runs_;  // paths
  bool finished_ = false;
};

// An order-preserving byte key of row i of a non-null value: keys compare (as bytes) as
// SortedOrder orders the values.
std::string SortKey(const ArrayData& values, int64_t i);

}  // namespace lancelet::index
