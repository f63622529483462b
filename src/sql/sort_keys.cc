#include "sql/sort_keys.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "expr/numeric.h"

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

  void Write(std::vector<uint8_t*>& cursor) const {
    if (key_.type->is_variable_binary()) return WriteBytes(cursor);
    if (key_.type->id() == TypeId::kBool) {
      const uint8_t* bits = key_.buffers[1]->data();
      return Each(cursor, [&](int64_t r, uint8_t* out) { *out = uint8_t(GetBit(bits, r) ^ (invert_ & 1)); });
    }
    VisitStorage(key_.type->id(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_arithmetic_v<T>) {
        const T* values = key_.values<T>();
        Each(cursor, [&](int64_t r, uint8_t* out) {
          auto bits = OrderedBits(values[r]);
          if (invert_) bits = decltype(bits)(~bits);
          bits = ToBigEndian(bits);
          std::memcpy(out, &bits, sizeof(bits));
        });
      }
    });
  }

 private:
  // Calls write(row, out) for each valid row after its marker, advancing the cursors.
  template <typename F>
  void Each(std::vector<uint8_t*>& cursor, F&& write) const {
    const size_t width = Width();
    for (int64_t r = 0; r < key_.length; ++r) {
      uint8_t*& out = cursor[size_t(r)];
      if (marker_) {
        if (key_.IsNull(r)) {
          *out++ = null_marker_;
          continue;
        }
        *out++ = kValueMarker;
      }
      write(r, out);
      out += width;
    }
  }

  void WriteBytes(std::vector<uint8_t*>& cursor) const {
    for (int64_t r = 0; r < key_.length; ++r) {
      uint8_t*& out = cursor[size_t(r)];
      if (marker_) {
        if (key_.IsNull(r)) {
          *out++ = null_marker_;
          continue;
        }
        *out++ = kValueMarker;
      }
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
    }
  }

  const ArrayData& key_;
  const bool marker_;
  const uint8_t invert_;
  const uint8_t null_marker_;
};

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

  // Offsets of each row's key bytes; fixed-width keys take the same bytes in every row.
  std::vector<uint64_t> offsets(size_t(rows) + 1, 0);
  for (const KeyWriter& w : writers)
    for (int64_t r = 0; r < rows; ++r) offsets[size_t(r) + 1] += w.Size(r);
  for (size_t r = 1; r < offsets.size(); ++r) offsets[r] += offsets[r - 1];
  std::vector<uint8_t> bytes(offsets.back() + 8);  // 8 spare: prefixes load 8 bytes
  std::vector<uint8_t*> cursor(static_cast<size_t>(rows));
  for (size_t r = 0; r < cursor.size(); ++r) cursor[r] = bytes.data() + offsets[r];
  for (const KeyWriter& w : writers) w.Write(cursor);

  std::vector<Entry> entries(static_cast<size_t>(rows));
  for (size_t r = 0; r < entries.size(); ++r) {
    uint64_t prefix = 0;
    std::memcpy(&prefix, bytes.data() + offsets[r], std::min<uint64_t>(8, offsets[r + 1] - offsets[r]));
    entries[r] = {ToBigEndian(prefix), int64_t(r)};
  }
  // Keys are prefix-free, so equal prefixes with either key at most 8 bytes long mean
  // equal keys; past the prefix, memcmp decides, then the row number keeps ties in order.
  const uint8_t* data = bytes.data();
  const uint64_t* at = offsets.data();
  auto before = [data, at](const Entry& a, const Entry& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const uint64_t la = at[a.row + 1] - at[a.row], lb = at[b.row + 1] - at[b.row];
    if (la > 8 && lb > 8) {
      const int c = std::memcmp(data + at[a.row] + 8, data + at[b.row] + 8, std::min(la, lb) - 8);
      if (c != 0) return c < 0;
      if (la != lb) return la < lb;
    }
    return a.row < b.row;
  };
  if (first && *first < rows) {
    std::partial_sort(entries.begin(), entries.begin() + ptrdiff_t(*first), entries.end(), before);
    entries.resize(size_t(*first));
  } else {
    std::sort(entries.begin(), entries.end(), before);
  }
  std::vector<int64_t> order(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) order[i] = entries[i].row;
  return order;
}

}  // namespace lancelet::sql
