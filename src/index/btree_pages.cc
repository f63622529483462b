#include "index/btree_pages.h"

#include <fmt/format.h>

#include "index/index_builder.h"
#include "index/value_order.h"
#include "lancelet/error.h"

namespace lancelet::index {

namespace {

bool FloatType(const DataType& type) { return type.id() == TypeId::kFloat32 || type.id() == TypeId::kFloat64; }

// SortKey bytes of row `i`, nullopt when it is null.
std::optional<std::string> KeyOf(const ArrayData& values, int64_t i) {
  if (values.IsNull(i)) return std::nullopt;
  return SortKey(values, i);
}

// Whether SortKey bytes of a float type are NaN's (all ones: no number maps there).
bool NanKey(const DataType& type, const std::string& key) {
  return FloatType(type) && key.find_first_not_of('\xff') == std::string::npos;
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
  min_.resize(n);
  max_.resize(n);
  null_count_.resize(n);
  std::vector<bool> seen(n);
  const auto* page_idx = lookup->column(3)->values<uint32_t>();
  for (uint32_t p = 0; p < n; ++p) {
    const uint32_t page = page_idx[p];
    if (page >= n || seen[page] || (ordered_ && page != p))
      ThrowCorrupt("{}: '{}' row {}: page_idx is {}, expected {} (the index file is damaged: rebuild the index)",
                   label_, lookup_path_, p, page, ordered_ ? fmt::format("{}", p) : "a page not listed before");
    seen[page] = true;
    min_[page] = KeyOf(*lookup->column(0), p);
    max_[page] = KeyOf(*lookup->column(1), p);
    null_count_[page] = lookup->column(2)->values<uint32_t>()[p];
  }
  CheckLookup(*lookup->column(0)->type);
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

void BTreePages::CheckLookup(const DataType& type) const {
  auto refuse = [&](uint32_t page, const std::string& what) {
    ThrowCorrupt("{}: '{}' page {}: {} (the index file is damaged: rebuild the index)", label_, lookup_path_, page,
                 what);
  };
  auto before = [&](const std::string& a, const std::string& b) {
    return a <= b || NanKey(type, a) || NanKey(type, b);
  };
  for (uint32_t p = 0; p < pages(); ++p) {
    const uint64_t rows = RowsOf(p);
    if (rows == 0) continue;  // an empty index's lookup: nothing to read, nothing to check
    if (null_count_[p] > rows)
      refuse(p, fmt::format("null_count {} is more than the page's {} rows", null_count_[p], rows));
    if (!min_[p] != (null_count_[p] > 0))
      refuse(p, fmt::format("min is {} but null_count is {} (nulls sort first)", min_[p] ? "a value" : "null",
                            null_count_[p]));
    if (!max_[p] != (null_count_[p] == rows))
      refuse(p, fmt::format("max is {} but null_count is {} of {} rows", max_[p] ? "a value" : "null",
                            null_count_[p], rows));
    if (min_[p] && max_[p] && !before(*min_[p], *max_[p])) refuse(p, "min is above max");
    if (!ordered_ || p == 0 || !max_[p - 1]) continue;
    if (!min_[p]) refuse(p, "the page starts with nulls after a page with values (nulls sort first)");
    if (!before(*max_[p - 1], *min_[p])) refuse(p, "min is below the max of the page before");
  }
}

ArrayPtr BTreePages::Read(int column, uint32_t page) const {
  const uint64_t first = FirstRow(page), count = RowsOf(page);
  if (page >= pages() || count == 0) ThrowDamaged(fmt::format("page {}", page), fmt::format("the file has {} rows", rows_));
  if (column != 0 || page_checked_[page].load(std::memory_order_acquire)) return data_->ReadField(size_t(column), first, count);
  // First read: with the boundary rows on either side, when the pages are in value order.
  const uint64_t from = ordered_ && page > 0 ? first - 1 : first;
  const uint64_t to = ordered_ && page + 1 < pages() ? first + count + 1 : first + count;
  ArrayPtr values = data_->ReadField(0, from, to - from);
  CheckPage(page, *values, from);
  page_checked_[page].store(true, std::memory_order_release);
  if (ordered_) {
    boundary_checked_[page].store(true, std::memory_order_release);
    boundary_checked_[page + 1].store(true, std::memory_order_release);
  }
  return from == first && to == first + count ? values : Slice(*values, int64_t(first - from), int64_t(count));
}

void BTreePages::ExpectBound(const ArrayData& values, int64_t row, uint64_t file_row, uint32_t page,
                             const std::vector<std::optional<std::string>>& bound, const char* what) const {
  const std::optional<std::string> key = KeyOf(values, row);
  if (key == bound[page]) return;
  const uint32_t own = uint32_t(file_row / uint64_t(page_rows_));
  const std::string differs = !key         ? "the value is null, but page {}'s {} in '{}' is not"
                              : !bound[page] ? "the value is not null, but page {}'s {} in '{}' is null"
                                             : "the value differs from page {}'s {} in '{}'";
  ThrowDamaged(Where(own, int64_t(file_row - FirstRow(own))),
               fmt::format(fmt::runtime(differs), page, what, lookup_path_));
}

void BTreePages::CheckPage(uint32_t page, const ArrayData& values, uint64_t from) const {
  const uint64_t first = FirstRow(page), count = RowsOf(page);
  const int64_t start = int64_t(first - from), end = start + int64_t(count);
  int64_t nulls = 0;
  while (start + nulls < end && values.IsNull(start + nulls)) ++nulls;
  if (CountNulls(values.validity(), end) - CountNulls(values.validity(), start) != nulls)
    for (int64_t r = start + nulls; r < end; ++r)
      if (values.IsNull(r)) ThrowDamaged(Where(page, r - start), "a null after values (nulls sort first)");
  if (uint64_t(nulls) != null_count_[page])
    ThrowDamaged(Where(page, 0), fmt::format("the page starts with {} nulls, but its null_count in '{}' is {}", nulls,
                                             lookup_path_, null_count_[page]));
  // Ascending from the first value after the nulls, skipping NaN.
  WithValueKey(values, [&](auto key) {
    bool have = false;
    decltype(key(0)) last{};
    int64_t last_row = 0;
    for (int64_t r = start + nulls; r < end; ++r) {
      const auto k = key(r);
      if (IsNanKey(k)) continue;
      if (have && k < last)
        ThrowDamaged(Where(page, r - start), fmt::format("the values are not ascending (row {} holds a larger value)",
                                                         last_row - start));
      last = k;
      last_row = r;
      have = true;
    }
    return 0;
  });
  ExpectBound(values, start, first, page, min_, "min");
  ExpectBound(values, end - 1, first + count - 1, page, max_, "max");
  if (start > 0) ExpectBound(values, start - 1, first - 1, page - 1, max_, "max");
  if (end < values.length) ExpectBound(values, end, first + count, page + 1, min_, "min");
}

void BTreePages::CheckBoundary(uint32_t b) const {
  if (!ordered_ || b > pages() || boundary_checked_[b].load(std::memory_order_acquire)) return;
  const uint64_t at = std::min<uint64_t>(FirstRow(b), rows_);
  const uint64_t from = b > 0 ? at - 1 : at, to = b < pages() && at < rows_ ? at + 1 : at;
  if (to > from) {
    ArrayPtr values = data_->ReadField(0, from, to - from);
    if (b > 0) ExpectBound(*values, 0, from, b - 1, max_, "max");
    if (to > at) ExpectBound(*values, int64_t(at - from), at, b, min_, "min");
  }
  boundary_checked_[b].store(true, std::memory_order_release);
}

}  // namespace lancelet::index
