#include "index/btree_pages.h"

#include <type_traits>

#include <fmt/format.h>

#include "index/index_builder.h"
#include "index/value_order.h"
#include "lancelet/error.h"

namespace lancelet::index {

namespace {

// SortKey bytes of row `i`, nullopt when it is null.
std::optional<std::string> KeyOf(const ArrayData& values, int64_t i) {
  if (values.IsNull(i)) return std::nullopt;
  return SortKey(values, i);
}

}  // namespace

BTreePages::BTreePages(std::string label, std::shared_ptr<const format::LanceFileReader> data,
                       std::string lookup_path, RecordBatchPtr lookup, int64_t page_rows, bool ordered)
    : label_(std::move(label)), data_(std::move(data)), lookup_path_(std::move(lookup_path)),
      page_rows_(page_rows), rows_(data_->num_rows(0)), ordered_(ordered) {
  const uint32_t n = uint32_t(lookup->num_rows());
  const uint64_t expected = (rows_ + uint64_t(page_rows_) - 1) / uint64_t(page_rows_);
  if (rows_ > 0 && n != expected)
    ThrowCorrupt("{}: '{}' lists {} pages, but '{}' holds {} rows: {} pages of {} (the index file is damaged: "
                 "rebuild the index)",
                 label_, lookup_path_, n, data_->path(), rows_, expected, page_rows_);
  // Per page, in page order (the lookup's row order, unless it is range-partitioned).
  std::vector<int64_t> row_of(n);
  std::vector<bool> seen(n);
  const auto* page_idx = lookup->column(3)->values<uint32_t>();
  for (uint32_t p = 0; p < n; ++p) {
    const uint32_t page = page_idx[p];
    if (page >= n || seen[page] || (ordered_ && page != p))
      ThrowCorrupt("{}: '{}' row {}: page_idx is {}, expected {} (the index file is damaged: rebuild the index)",
                   label_, lookup_path_, p, page, ordered_ ? fmt::format("{}", p) : "a page not listed before");
    seen[page] = true;
    row_of[page] = p;
  }
  auto in_page_order = [&](const ArrayPtr& column) { return ordered_ ? column : Take(*column, row_of); };
  bounds_ = Concatenate({in_page_order(lookup->column(0)), in_page_order(lookup->column(1))});
  null_count_ = in_page_order(lookup->column(2));
  CheckLookup();
  page_checked_ = std::make_unique<std::atomic<bool>[]>(size_t(n));
  boundary_checked_ = std::make_unique<std::atomic<bool>[]>(size_t(n) + 1);
}

uint64_t BTreePages::RowsOf(uint32_t page) const {
  const uint64_t first = FirstRow(page);
  return first >= rows_ ? 0 : std::min<uint64_t>(uint64_t(page_rows_), rows_ - first);
}

std::string BTreePages::Where(uint32_t page, int64_t row) const {
  return fmt::format("page {} (file row {}), row {}", page, FirstRow(page) + uint64_t(row), row);
}

void BTreePages::ThrowDamaged(const std::string& where, const std::string& what) const {
  ThrowCorrupt("{}: '{}' {}: {} (the index file is damaged: rebuild the index)", label_, data_->path(), where, what);
}

void BTreePages::CheckLookup() const {
  auto refuse = [&](uint32_t page, const std::string& what) {
    ThrowCorrupt("{}: '{}' page {}: {} (the index file is damaged: rebuild the index)", label_, lookup_path_, page,
                 what);
  };
  const int64_t n = pages();
  const auto& b = *bounds_;  // min of page p at row p, max at row n + p
  WithValueKey(b, [&](auto key) {
    auto before = [&](int64_t x, int64_t y) { return IsNanKey(key(x)) || IsNanKey(key(y)) || !(key(y) < key(x)); };
    for (uint32_t p = 0; p < n; ++p) {
      const uint64_t rows = RowsOf(p), nulls = NullCount(p);
      if (rows == 0) continue;  // an empty index's lookup: nothing to read, nothing to check
      const bool min_null = b.IsNull(p), max_null = b.IsNull(n + p);
      if (nulls > rows) refuse(p, fmt::format("null_count {} is more than the page's {} rows", nulls, rows));
      if (min_null != (nulls > 0))
        refuse(p, fmt::format("min is {} but null_count is {} (nulls sort first)", min_null ? "null" : "a value", nulls));
      if (max_null != (nulls == rows))
        refuse(p, fmt::format("max is {} but null_count is {} of {} rows", max_null ? "null" : "a value", nulls, rows));
      if (!min_null && !max_null && !before(p, n + p)) refuse(p, "min is above max");
      if (!ordered_ || p == 0 || b.IsNull(n + p - 1)) continue;
      if (min_null) refuse(p, "the page starts with nulls after a page with values (nulls sort first)");
      if (!before(n + p - 1, p)) refuse(p, "min is below the max of the page before");
    }
    return 0;
  });
}

ArrayPtr BTreePages::Read(int column, uint32_t page) const {
  const uint64_t first = FirstRow(page), count = RowsOf(page);
  if (page >= pages() || count == 0) ThrowDamaged(fmt::format("page {}", page), fmt::format("the file has {} rows", rows_));
  // The page's chunks in one request from a remote store, not one, then a widening window.
  const size_t field = size_t(column);
  data_->PrefetchRows(std::span(&field, 1), first, count);
  ArrayPtr out = data_->ReadField(field, first, count);
  if (column == 0 && !page_checked_[page].load(std::memory_order_acquire)) {
    CheckPage(page, *out);
    page_checked_[page].store(true, std::memory_order_release);
  }
  return out;
}

void BTreePages::ExpectBound(const ArrayData& values, int64_t row, uint64_t file_row, uint32_t page,
                             Bound bound) const {
  const std::optional<std::string> key = KeyOf(values, row), expected = KeyOf(*bounds_, BoundRow(page, bound));
  if (key == expected) return;
  const uint32_t own = uint32_t(file_row / uint64_t(page_rows_));
  const std::string differs = !key       ? "the value is null, but page {}'s {} in '{}' is not"
                              : !expected ? "the value is not null, but page {}'s {} in '{}' is null"
                                          : "the value differs from page {}'s {} in '{}'";
  ThrowDamaged(Where(own, int64_t(file_row - FirstRow(own))),
               fmt::format(fmt::runtime(differs), page, bound == Bound::kMin ? "min" : "max", lookup_path_));
}

void BTreePages::CheckPage(uint32_t page, const ArrayData& values) const {
  const int64_t n = values.length;
  int64_t nulls = 0;
  while (nulls < n && values.IsNull(nulls)) ++nulls;
  if (CountNulls(values.validity(), n) != nulls)
    for (int64_t r = nulls; r < n; ++r)
      if (values.IsNull(r)) ThrowDamaged(Where(page, r), "a null after values (nulls sort first)");
  if (uint64_t(nulls) != NullCount(page))
    ThrowDamaged(Where(page, 0), fmt::format("the page starts with {} nulls, but its null_count in '{}' is {}", nulls,
                                             lookup_path_, NullCount(page)));
  // Ascending from the first value after the nulls, skipping NaN: numbers in one pass the
  // compiler vectorizes, then, only when that finds a descent, the row.
  WithValueKey(values, [&](auto key) {
    if constexpr (std::is_arithmetic_v<decltype(key(0))>) {
      bool ascending = true;
      for (int64_t r = nulls + 1; r < n; ++r) ascending &= !(key(r) < key(r - 1));
      if (ascending) return 0;
    }
    bool have = false;
    decltype(key(0)) last{};
    int64_t last_row = 0;
    for (int64_t r = nulls; r < n; ++r) {
      const auto k = key(r);
      if (IsNanKey(k)) continue;
      if (have && k < last)
        ThrowDamaged(Where(page, r), fmt::format("the values are not ascending (row {} holds a larger value)", last_row));
      last = k;
      last_row = r;
      have = true;
    }
    return 0;
  });
  ExpectBound(values, 0, FirstRow(page), page, Bound::kMin);
  ExpectBound(values, n - 1, FirstRow(page) + uint64_t(n) - 1, page, Bound::kMax);
}

void BTreePages::CheckBoundary(uint32_t b) const {
  if (!ordered_ || b > pages() || boundary_checked_[b].load(std::memory_order_acquire)) return;
  const uint64_t at = std::min<uint64_t>(FirstRow(b), rows_);
  const uint64_t from = b > 0 ? at - 1 : at, to = b < pages() && at < rows_ ? at + 1 : at;
  if (to > from) {
    ArrayPtr values = data_->ReadField(0, from, to - from);
    if (b > 0) ExpectBound(*values, 0, from, b - 1, Bound::kMax);
    if (to > at) ExpectBound(*values, int64_t(at - from), at, b, Bound::kMin);
  }
  boundary_checked_[b].store(true, std::memory_order_release);
}

}  // namespace lancelet::index
