// The value buffer of a ConstantLayout page (2.2), used when the constant does not fit
// the inline value (strings, binary, wide fixed-size values): a one-element Arrow array's
// buffers, without validity or children:
//   u32 number of buffers n, n x u32 buffer lengths, then the buffers back to back.
// Fixed width: one buffer, the value. Binary / utf8: an offsets buffer {start, end} of
// 32-bit (8 bytes) or 64-bit (16 bytes) offsets, then the bytes.
#include "format/little_endian.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

std::string ParseConstantScalar(const std::string& buffer, bool variable, const std::string& where) {
  if (buffer.size() < 4) ThrowCorrupt("{}: constant value buffer of {} bytes", where, buffer.size());
  const uint64_t n = LoadLE(buffer.data(), 4);
  if (n == 0 || n > 16 || buffer.size() < 4 + 4 * n)
    ThrowCorrupt("{}: constant value buffer claims {} buffers in {} bytes", where, n, buffer.size());
  std::vector<std::string> parts;
  uint64_t pos = 4 + 4 * n;
  for (uint64_t k = 0; k < n; ++k) {
    const uint64_t len = LoadLE(buffer.data() + 4 + 4 * k, 4);
    if (pos + len > buffer.size()) ThrowCorrupt("{}: constant value buffer {} runs past the end", where, k);
    parts.push_back(buffer.substr(pos, len));
    pos += len;
  }
  if (!variable) {
    if (n != 1) ThrowNotSupported("{}: constant fixed-width value with {} buffers", where, n);
    return parts[0];
  }
  if (n != 2) ThrowCorrupt("{}: constant binary value with {} buffers, expected 2", where, n);
  const std::string& offsets = parts[0];
  if (offsets.size() != 8 && offsets.size() != 16)
    ThrowCorrupt("{}: constant binary value with {} offset bytes", where, offsets.size());
  const size_t width = offsets.size() / 2;
  const uint64_t begin = LoadLE(offsets.data(), width), end = LoadLE(offsets.data() + width, width);
  if (begin > end || end > parts[1].size())
    ThrowCorrupt("{}: constant binary value offsets {}..{} outside {} bytes", where, begin, end, parts[1].size());
  return parts[1].substr(begin, end - begin);
}

}  // namespace lancelet::format::v21
