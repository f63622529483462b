// ByteStreamSplit: the k-th bytes of all values stored together (stream k), which makes
// floating-point data more compressible by a General wrapper.
#include <algorithm>
#include <cmath>

#include "format/v21_compression.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

std::string DecodeByteStreamSplit(uint32_t value_bits, std::string_view data, uint64_t n, const std::string& where) {
  if (value_bits == 0 || value_bits % 8) ThrowCorrupt("{}: byte stream split of {}-bit values", where, value_bits);
  const uint64_t width = value_bits / 8;
  if (data.size() < n * width)
    ThrowCorrupt("{}: byte streams of {} bytes for {} values of {} bytes", where, data.size(), n, width);
  std::string out(n * width, '\0');
  for (uint64_t stream = 0; stream < width; ++stream)
    for (uint64_t i = 0; i < n; ++i) out[i * width + stream] = data[stream * n + i];
  return out;
}

std::string EncodeByteStreamSplit(uint32_t value_bits, const uint8_t* values, uint64_t n) {
  const uint64_t width = value_bits / 8;
  std::string out(n * width, '\0');
  for (uint64_t i = 0; i < n; ++i)
    for (uint64_t stream = 0; stream < width; ++stream) out[stream * n + i] = char(values[i * width + stream]);
  return out;
}

bool ByteStreamsPay(uint32_t value_bits, const uint8_t* values, uint64_t n) {
  constexpr uint64_t kSample = 64;
  constexpr double kMaxMeanEntropyBits = 4.0;
  if ((value_bits != 32 && value_bits != 64) || n == 0) return false;
  const uint64_t width = value_bits / 8, sample = std::min(n, kSample);
  double total = 0;
  for (uint64_t position = 0; position < width; ++position) {
    uint32_t counts[256] = {};
    for (uint64_t i = 0; i < sample; ++i) ++counts[values[i * width + position]];
    for (uint32_t count : counts)
      if (count) {
        const double p = double(count) / double(sample);
        total -= p * std::log2(p);
      }
  }
  return total / double(width) < kMaxMeanEntropyBits;
}

}  // namespace lancelet::format::v21
