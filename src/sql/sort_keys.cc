#include "sql/sort_keys.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <type_traits>

#include "expr/numeric.h"
#include "io/run_concurrently.h"
#include "lancelet/record_batch.h"

namespace lancelet::sql {

namespace {

constexpr uint8_t kValueMarker = 0x01;

bool NormalizedType(const DataType& type) {
  if (type.is_variable_binary() || type.id() == TypeId::kBool) return true;
  if (type.is_decimal() || type.id() == TypeId::kFloat16) return false;
  return type.is_numeric() || type.id() == TypeId::kDate32 || type.id() == TypeId::kDate64 ||
         type.id() == TypeId::kTimestamp;
}

uint64_t ToBigEndian(uint64_t v) { return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v; }
uint32_t ToBigEndian(uint32_t v) { return std::endian::native == std::endian::little ? __builtin_bswap32(v) : v; }
uint16_t ToBigEndian(uint16_t v) {
  return std::endian::native == std::endian::little ? uint16_t(__builtin_bswap16(v)) : v;
}
uint8_t ToBigEndian(uint8_t v) { return v; }

// The unsigned image of a stored value whose unsigned order is the value's order.
template <typename T>
auto OrderedBits(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    constexpr U kSign = U(1) << (sizeof(T) * 8 - 1);
    if (std::isnan(v)) return U(~U(0));  // above +inf, whose image is kSign | exponent bits
    if (v == T(0)) v = T(0);              // -0.0 sorts with 0.0
    const U bits = std::bit_cast<U>(v);
    return (bits & kSign) ? U(~bits) : U(bits | kSign);
  } else {
    using U = std::make_unsigned_t<T>;
    if constexpr (std::is_signed_v<T>) return U(U(v) ^ (U(1) << (sizeof(T) * 8 - 1)));
    else return U(v);
  }
}

// Writes one key's bytes for every row at `cursor[row]`, moving the cursors past them.
class KeyWriter {
 public:
  KeyWriter(const ArrayData& key, const OrderItem& item)
      : key_(key), marker_(key.buffers[0] != nullptr), invert_(item.descending ? 0xFF : 0x00),
        null_marker_(item.nulls_first.value_or(false) ? 0x00 : 0x02) {}

  // The bytes row `r` takes.
  size_t Size(int64_t r) const {
    const size_t marker = marker_ ? 1 : 0;
    if (marker_ && key_.IsNull(r)) return marker;
    if (!key_.type->is_variable_binary()) return marker + Width();
    const std::string_view v = key_.GetView(r);
    return marker + v.size() + size_t(std::count(v.begin(), v.end(), '\0')) + 2;
  }

  size_t Width() const { return key_.type->id() == TypeId::kBool ? 1 : size_t(key_.type->byte_width()); }

  // Rows [lo, hi).
  void Write(uint8_t* bytes, uint64_t* cursor, int64_t lo, int64_t hi) const {
    if (key_.type->is_variable_binary()) return WriteBytes(bytes, cursor, lo, hi);
    if (key_.type->id() == TypeId::kBool) {
      const uint8_t* bits = key_.buffers[1]->data();
      return Each(bytes, cursor, lo, hi, [&](int64_t r, uint8_t* out) { *out = uint8_t(GetBit(bits, r) ^ (invert_ & 1)); });
    }
    VisitStorage(key_.type->id(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_arithmetic_v<T>) {
        const T* values = key_.values<T>();
        Each(bytes, cursor, lo, hi, [&](int64_t r, uint8_t* out) {
          auto bits = OrderedBits(values[r]);
          if (invert_) bits = decltype(bits)(~bits);
          bits = ToBigEndian(bits);
          std::memcpy(out, &bits, sizeof(bits));
        });
      }
    });
  }

 private:
  // Writes row r's marker, if the key has them, at `out` (moved past it); false for a
  // NULL, whose marker is all its bytes (its cursor moved past it).
  bool Marked(int64_t r, uint8_t*& out, uint64_t& cursor) const {
    if (!marker_) return true;
    if (key_.IsNull(r)) {
      *out = null_marker_;
      ++cursor;
      return false;
    }
    *out++ = kValueMarker;
    return true;
  }

  // Calls write(row, out) for each valid row after its marker, advancing the cursors
  // (row r's next byte is bytes[cursor[r]]).
  template <typename F>
  void Each(uint8_t* bytes, uint64_t* cursor, int64_t lo, int64_t hi, F&& write) const {
    const size_t width = Width();
    for (int64_t r = lo; r < hi; ++r) {
      uint8_t* out = bytes + cursor[r];
      if (!Marked(r, out, cursor[r])) continue;
      write(r, out);
      cursor[r] = uint64_t(out + width - bytes);
    }
  }

  void WriteBytes(uint8_t* bytes, uint64_t* cursor, int64_t lo, int64_t hi) const {
    for (int64_t r = lo; r < hi; ++r) {
      uint8_t* out = bytes + cursor[r];
      if (!Marked(r, out, cursor[r])) continue;
      const std::string_view v = key_.GetView(r);
      uint8_t* const start = out;
      for (size_t at = 0; at < v.size();) {
        const void* zero = std::memchr(v.data() + at, 0, v.size() - at);
        const size_t run = zero ? size_t(static_cast<const char*>(zero) - v.data()) - at : v.size() - at;
        std::memcpy(out, v.data() + at, run);
        out += run;
        at += run;
        if (zero) *out++ = 0x00, *out++ = 0xFF, ++at;
      }
      *out++ = 0x00, *out++ = 0x00;
      if (invert_)
        for (uint8_t* p = start; p < out; ++p) *p = uint8_t(~*p);
      cursor[r] = uint64_t(out - bytes);
    }
  }

  const ArrayData& key_;
  const bool marker_;
  const uint8_t invert_;
  const uint8_t null_marker_;
};

// Rows per part of a sort on several threads: fewer rows are sorted on one.
constexpr size_t kRowsPerPart = 1 << 16;

// A row to sort: the first 8 bytes of its key, big-endian (zero-padded), and its number.
struct Entry {
  uint64_t prefix;
  int64_t row;
};

}  // namespace

bool HasNormalizedKeys(const std::vector<ArrayPtr>& keys) {
  return std::all_of(keys.begin(), keys.end(), [](const ArrayPtr& k) { return NormalizedType(*k->type); });
}

std::vector<int64_t> NormalizedSortOrder(const std::vector<ArrayPtr>& keys, const std::vector<OrderItem>& items,
                                         int64_t rows, std::optional<int64_t> first) {
  std::vector<KeyWriter> writers;
  for (size_t k = 0; k < keys.size(); ++k) writers.emplace_back(*keys[k], items[k]);

  // Long inputs are encoded and sorted in parts on several threads, then merged.
  const size_t n = size_t(rows);
  const size_t parts = std::clamp<size_t>(n / kRowsPerPart, 1, size_t(std::max(1, ReadAheadThreads())));
  auto part_rows = [n, parts](size_t p) { return std::pair{n * p / parts, n * (p + 1) / parts}; };
  auto in_parts = [parts](const std::function<void(size_t)>& fn) { io::RunConcurrently(parts, int(parts), fn); };

  // offsets[r + 1] holds where row r's next byte goes: its start (the bytes of the rows
  // before it), moved on by each key to its end, which is row r + 1's start. Row r's
  // size is first put in offsets[r + 2], and summed from there.
  std::vector<uint64_t> offsets(n + 2, 0);
  in_parts([&](size_t p) {
    const auto [lo, hi] = part_rows(p);
    for (const KeyWriter& w : writers)
      for (size_t r = lo; r < hi; ++r) offsets[r + 2] += w.Size(int64_t(r));
  });
  for (size_t r = 2; r < offsets.size(); ++r) offsets[r] += offsets[r - 1];
  const uint64_t total = offsets[n + 1];
  // 8 spare bytes: prefixes and words past a key's end load 8 bytes.
  const auto bytes = std::make_unique_for_overwrite<uint8_t[]>(total + 8);
  std::memset(bytes.get() + total, 0, 8);
  std::vector<Entry> entries(n);
  in_parts([&](size_t p) {
    const auto [lo, hi] = part_rows(p);
    for (const KeyWriter& w : writers) w.Write(bytes.get(), offsets.data() + 1, int64_t(lo), int64_t(hi));
  });
  // Once every part is written: a part's first row starts where the part before it ends.
  in_parts([&](size_t p) {
    const auto [lo, hi] = part_rows(p);
    for (size_t r = lo; r < hi; ++r) {
      uint64_t prefix = 0;
      std::memcpy(&prefix, bytes.get() + offsets[r], std::min<uint64_t>(8, offsets[r + 1] - offsets[r]));
      entries[r] = {ToBigEndian(prefix), int64_t(r)};
    }
  });
  // Keys are prefix-free, so equal prefixes with either key at most 8 bytes long mean
  // equal keys; past the prefix, the bytes decide 8 at a time, then the row number keeps
  // ties in order.
  const uint8_t* data = bytes.get();
  const uint64_t* at = offsets.data();
  auto before = [data, at](const Entry& a, const Entry& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const uint64_t la = at[a.row + 1] - at[a.row], lb = at[b.row + 1] - at[b.row];
    if (la > 8 && lb > 8) {
      const uint8_t* x = data + at[a.row] + 8;
      const uint8_t* y = data + at[b.row] + 8;
      for (uint64_t left = std::min(la, lb) - 8; left > 0;) {
        uint64_t u, v;
        std::memcpy(&u, x, 8);
        std::memcpy(&v, y, 8);
        u = ToBigEndian(u), v = ToBigEndian(v);
        if (left < 8) {  // the bytes past the shorter key belong to the next row
          u >>= 8 * (8 - left), v >>= 8 * (8 - left);
          left = 8;
        }
        if (u != v) return u < v;
        x += 8, y += 8, left -= 8;
      }
      if (la != lb) return la < lb;
    }
    return a.row < b.row;
  };
  // Each part sorted (its first `keep` rows only, under a limit), then the sorted runs
  // merged pairwise, the pairs of a round side by side.
  const size_t keep = first && *first < rows ? size_t(*first) : n;
  std::vector<std::pair<size_t, size_t>> runs(parts);  // [begin, end) in entries
  in_parts([&](size_t p) {
    const auto [lo, hi] = part_rows(p);
    const size_t kept = std::min(keep, hi - lo);
    if (kept < hi - lo) std::partial_sort(entries.begin() + ptrdiff_t(lo), entries.begin() + ptrdiff_t(lo + kept),
                                          entries.begin() + ptrdiff_t(hi), before);
    else std::sort(entries.begin() + ptrdiff_t(lo), entries.begin() + ptrdiff_t(hi), before);
    runs[p] = {lo, lo + kept};
  });
  std::vector<Entry> merged(parts > 1 ? n : 0);
  while (runs.size() > 1) {
    std::vector<std::pair<size_t, size_t>> next((runs.size() + 1) / 2);
    io::RunConcurrently(next.size(), int(next.size()), [&](size_t m) {
      const auto [a_begin, a_end] = runs[2 * m];
      if (2 * m + 1 == runs.size()) {  // the odd run out moves as it is
        std::copy(entries.begin() + ptrdiff_t(a_begin), entries.begin() + ptrdiff_t(a_end),
                  merged.begin() + ptrdiff_t(a_begin));
        next[m] = {a_begin, a_end};
        return;
      }
      const auto [b_begin, b_end] = runs[2 * m + 1];
      // Runs of earlier rows go first, so equal keys keep their rows' order.
      const auto out = std::merge(entries.begin() + ptrdiff_t(a_begin), entries.begin() + ptrdiff_t(a_end),
                                  entries.begin() + ptrdiff_t(b_begin), entries.begin() + ptrdiff_t(b_end),
                                  merged.begin() + ptrdiff_t(a_begin), before);
      next[m] = {a_begin, std::min<size_t>(size_t(out - merged.begin()), a_begin + keep)};
    });
    entries.swap(merged);
    runs = std::move(next);
  }
  entries.erase(entries.begin() + ptrdiff_t(runs[0].second), entries.end());
  entries.erase(entries.begin(), entries.begin() + ptrdiff_t(runs[0].first));
  std::vector<int64_t> order(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) order[i] = entries[i].row;
  return order;
}

}  // namespace lancelet::sql
