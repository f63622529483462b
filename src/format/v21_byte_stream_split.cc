// ByteStreamSplit: the k-th bytes of all values stored together (stream k), which makes
// floating-point data more compressible by a General wrapper.
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

}  // namespace lancelet::format::v21
