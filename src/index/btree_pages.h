// The pages of a BTree segment (scalar_index.h has the layout), read from page_data.lance
// and checked against page_lookup.lance, so that a damaged file is refused rather than
// searched.
//
// What the layout promises, and is checked:
// - the lookup on its own, when the segment is opened: one row per page, page_idx the
//   row number; per page, null_count within the page's rows, min null exactly when the
//   page has nulls (they sort first), max null exactly when it has nothing else, min <=
//   max; across pages, each page's max <= the next page's min, and no page with values
//   before a page starting with nulls. (A range-partitioned lookup, whose page order is
//   not the value order, is checked per page only.)
// - a page's values, the first time it is read: nulls first and as many as null_count,
//   the others ascending, its first and last value equal to min and max.
// - a boundary (CheckBoundary): the last value of the page before it and the first of the
//   page after, equal to their max and min. A search checks the boundaries its answer
//   relies on (scalar_index.cc): beside a page it reads whose neighbour it skips, when
//   the leaf may match across them, and, when it reads no page, where the lookup puts the
//   searched value. Together these make the pages a search skips the pages the
//   undamaged lookup would skip. Ids are not checked here: a search checks the ids it
//   returns (scalar_index.cc).
//
// Floats: NaN is ordered nowhere (the reference orders -NaN first and NaN last, lancelet
// every NaN last), so order checks skip NaN values. Each page and boundary is checked
// once per BTreePages (a segment opened by one dataset version): files are immutable.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "format/lance_file.h"
#include "lancelet/record_batch.h"

namespace lancelet::index {

class BTreePages {
 public:
  // `label` names the index in messages ("index 'val_idx'"). `ordered`: false for a
  // range-partitioned lookup. Throws Corrupt when the lookup breaks a promise above.
  BTreePages(std::string label, std::shared_ptr<const format::LanceFileReader> data, std::string lookup_path,
             RecordBatchPtr lookup, int64_t page_rows, bool ordered);

  uint32_t pages() const { return uint32_t(null_count_->length); }
  uint64_t rows() const { return rows_; }
  bool ordered() const { return ordered_; }
  // Column 0 (values, checked on first read) or 1 (ids) of page `page`.
  ArrayPtr Read(int column, uint32_t page) const;
  // Checks boundary `b` (0 <= b <= pages()), once: the values just before and at row
  // b * page_rows against the lookup's max of page b - 1 and min of page b. Nothing for
  // a range-partitioned lookup, whose pages are not in value order.
  void CheckBoundary(uint32_t b) const;
  // Where row `row` of page `page` lies, for messages: "page 3 (file row 12290), row 2".
  std::string Where(uint32_t page, int64_t row) const;
  [[noreturn]] void ThrowDamaged(const std::string& where, const std::string& what) const;
  const std::string& label() const { return label_; }
  const std::string& data_path() const { return data_->path(); }

 private:
  uint64_t FirstRow(uint32_t page) const { return uint64_t(page) * uint64_t(page_rows_); }
  uint64_t RowsOf(uint32_t page) const;
  enum class Bound { kMin, kMax };
  int64_t BoundRow(uint32_t page, Bound bound) const { return int64_t(page) + (bound == Bound::kMax ? pages() : 0); }
  uint32_t NullCount(uint32_t page) const { return null_count_->values<uint32_t>()[page]; }
  void CheckLookup() const;
  void CheckPage(uint32_t page, const ArrayData& values) const;
  // Row `row` of `values` (file row `file_row`) equals the lookup's `bound` of `page`.
  void ExpectBound(const ArrayData& values, int64_t row, uint64_t file_row, uint32_t page, Bound bound) const;

  std::string label_;
  std::shared_ptr<const format::LanceFileReader> data_;
  std::string lookup_path_;
  int64_t page_rows_;
  uint64_t rows_;
  bool ordered_;
  // In page order: every page's min, then every page's max (one array, so that one typed
  // pass compares them), and the pages' null_count.
  ArrayPtr bounds_, null_count_;
  mutable std::unique_ptr<std::atomic<bool>[]> page_checked_, boundary_checked_;
};

}  // namespace lancelet::index
