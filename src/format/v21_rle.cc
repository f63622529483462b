// Run-length encoding (Rle): the run values (the data's width) and the run lengths (u8, or
// u16 in newer writers), one per run, little-endian. A run longer than the largest length
// is stored as several runs of the same value.
#include <bit>
#include <cstring>

#include "format/v21_compression.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

// Writes `length` copies of the sizeof(T) bytes at `value` to `out`.
template <typename T>
void FillRun(char* out, const char* value, uint64_t length) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  for (uint64_t k = 0; k < length; ++k) std::memcpy(out + k * sizeof(T), &v, sizeof(T));
}

}  // namespace

std::string DecodeRle(uint32_t value_bits, uint32_t length_bits, std::string_view values, std::string_view lengths,
                      uint64_t n, const std::string& where) {
  if (value_bits == 0 || value_bits % 8 || value_bits > 128)
    ThrowCorrupt("{}: run-length values of {} bits", where, value_bits);
  if (length_bits != 8 && length_bits != 16 && length_bits != 32)
    ThrowCorrupt("{}: run lengths of {} bits", where, length_bits);
  const uint64_t value_bytes = value_bits / 8, length_bytes = length_bits / 8;
  if (values.size() % value_bytes || lengths.size() % length_bytes ||
      values.size() / value_bytes != lengths.size() / length_bytes)
    ThrowCorrupt("{}: {} bytes of run values and {} bytes of run lengths do not pair up", where, values.size(),
                 lengths.size());
  const uint64_t runs = lengths.size() / length_bytes;
  std::string out(n * value_bytes, '\0');
  char* dst = out.data();
  uint64_t produced = 0;
  for (uint64_t r = 0; r < runs; ++r) {
    uint64_t length = 0;
    std::memcpy(&length, lengths.data() + r * length_bytes, length_bytes);  // little-endian
    if (length == 0) ThrowCorrupt("{}: run {} has length 0", where, r);
    // Older writers may describe more values than the chunk holds; the rest is dropped.
    length = std::min(length, n - produced);
    const char* value = values.data() + r * value_bytes;
    char* run = dst + produced * value_bytes;
    switch (value_bytes) {
      case 1: std::memset(run, *value, length); break;
      case 2: FillRun<uint16_t>(run, value, length); break;
      case 4: FillRun<uint32_t>(run, value, length); break;
      case 8: FillRun<uint64_t>(run, value, length); break;
      default:
        for (uint64_t k = 0; k < length; ++k) std::memcpy(run + k * value_bytes, value, value_bytes);
    }
    produced += length;
  }
  if (produced != n) ThrowCorrupt("{}: runs describe {} values, expected {}", where, produced, n);
  return out;
}

std::string DecodeRleBlock(uint32_t value_bits, uint32_t length_bits, std::string_view data, uint64_t n,
                           const std::string& where) {
  if (data.size() < 8) ThrowCorrupt("{}: run-length block of {} bytes has no header", where, data.size());
  uint64_t values_size = 0;
  for (int b = 0; b < 8; ++b) values_size |= uint64_t(uint8_t(data[b])) << (8 * b);
  if (values_size > data.size() - 8)
    ThrowCorrupt("{}: run-length block claims {} bytes of run values but has {}", where, values_size, data.size() - 8);
  return DecodeRle(value_bits, length_bits, data.substr(8, values_size), data.substr(8 + values_size), n, where);
}

namespace {

// Calls emit(first, length) for each stored run: at most 255 equal values of value_bits,
// starting at value `first`.
template <typename Emit>
void ForEachStoredRun(uint32_t value_bits, const uint8_t* values, uint64_t n, const Emit& emit) {
  const uint64_t bytes = value_bits / 8;
  for (uint64_t k = 0; k < n;) {
    uint64_t end = k + 1;
    while (end < n && end - k < 255 && std::memcmp(values + end * bytes, values + k * bytes, bytes) == 0) ++end;
    emit(k, end - k);
    k = end;
  }
}

}  // namespace

uint64_t RunCount(uint32_t value_bits, const uint8_t* values, uint64_t n) {
  const uint64_t bytes = value_bits / 8;
  uint64_t runs = n > 0;
  for (uint64_t k = 1; k < n; ++k) runs += std::memcmp(values + k * bytes, values + (k - 1) * bytes, bytes) != 0;
  return runs;
}

uint64_t StoredRunCount(uint32_t value_bits, const uint8_t* values, uint64_t n) {
  uint64_t runs = 0;
  ForEachStoredRun(value_bits, values, n, [&](uint64_t, uint64_t) { ++runs; });
  return runs;
}

std::pair<std::string, std::string> EncodeRle(uint32_t value_bits, const uint8_t* values, uint64_t n) {
  const uint64_t bytes = value_bits / 8;
  std::pair<std::string, std::string> out;
  ForEachStoredRun(value_bits, values, n, [&](uint64_t first, uint64_t length) {
    out.first.append(reinterpret_cast<const char*>(values + first * bytes), bytes);
    out.second.push_back(char(uint8_t(length)));
  });
  return out;
}

uint64_t RleBlockBytes16(const uint16_t* values, uint64_t n) {
  return 8 + 3 * StoredRunCount(16, reinterpret_cast<const uint8_t*>(values), n);
}

std::string EncodeRleBlock16(const uint16_t* values, uint64_t n) {
  static_assert(std::endian::native == std::endian::little, "levels are stored as native 16-bit words");
  const auto [run_values, lengths] = EncodeRle(16, reinterpret_cast<const uint8_t*>(values), n);
  std::string out;
  for (int b = 0; b < 8; ++b) out.push_back(char(uint8_t(uint64_t(run_values.size()) >> (8 * b))));
  return out + run_values + lengths;
}

}  // namespace lancelet::format::v21
