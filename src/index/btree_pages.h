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
//   the others ascending, its first and last value equal to min and max; and, read with
//   it, the last value of the page before and the first of the page after, equal to
//   their max and min ("the boundaries" on either side of the page).
// - a boundary on its own (CheckBoundary), for a search that reads no page: it is the
//   lookup alone that then says no page holds a match, so the two values at the place
//   the lookup puts the searched value are read and compared with it.
// Together these make the pages a search skips the pages the undamaged lookup would
// skip. Ids are not checked here: a search checks the ids it returns (scalar_index.cc).
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

  uint32_t pages() const { return uint32_t(min_.size()); }
  uint64_t rows() const { return rows_; }
  // Column 0 (values, checked on first read) or 1 (ids) of page `page`.
  ArrayPtr Read(int column, uint32_t page) const;
  // Checks boundary `b` (0 <= b <= pages()): the values just before and at row b *
  // page_rows against the lookup's max of page b - 1 and min of page b.
  void CheckBoundary(uint32_t b) const;
  // Where row `row` of page `page` lies, for messages: "page 3 (file row 12290), row 2".
  std::string Where(uint32_t page, int64_t row) const;
  [[noreturn]] void ThrowDamaged(const std::string& where, const std::string& what) const;
  const std::string& label() const { return label_; }
  const std::string& data_path() const { return data_->path(); }

 private:
  uint64_t FirstRow(uint32_t page) const { return uint64_t(page) * uint64_t(page_rows_); }
  uint64_t RowsOf(uint32_t page) const;
  void CheckLookup(const DataType& type) const;
  // Checks page `page` in `values`, which holds the rows from `first` (one before the
  // page when it has a page before it, and one after when it has one after).
  void CheckPage(uint32_t page, const ArrayData& values, uint64_t first) const;
  // Row `row` of `values` (file row `file_row`) equals the lookup's `bound` (min_ or
  // max_) of page `page`; `what` names the bound in messages.
  void ExpectBound(const ArrayData& values, int64_t row, uint64_t file_row, uint32_t page,
                   const std::vector<std::optional<std::string>>& bound, const char* what) const;

  std::string label_;
  std::shared_ptr<const format::LanceFileReader> data_;
  std::string lookup_path_;
  int64_t page_rows_;
  uint64_t rows_;
  bool ordered_;
  // Per page: min and max as SortKey bytes (nullopt: null), and null_count.
  std::vector<std::optional<std::string>> min_, max_;
  std::vector<uint32_t> null_count_;
  mutable std::unique_ptr<std::atomic<bool>[]> page_checked_, boundary_checked_;
};

}  // namespace lancelet::index
