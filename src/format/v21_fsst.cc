// FSST (Fast Static Symbol Table) string decompression, as the 2.1 / 2.2 encodings use it:
// one symbol table per page, kept in the page's encoding description, and each value
// compressed on its own (mini-block: the chunk's Variable values; full-zip: each value).
#include <climits>
#include <cstring>

#include "format/v21_value_codecs.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

constexpr size_t kSymbolTableBytes = 8 + 256 * 8 + 256;
constexpr uint64_t kMagic = uint64_t(0x46535354) << 32;
constexpr uint8_t kEscape = 255;

uint64_t LoadLE64(const char* p) {
  uint64_t v = 0;
  for (size_t k = 0; k < 8; ++k) v |= uint64_t(uint8_t(p[k])) << (8 * k);
  return v;
}

}  // namespace

FsstTable FsstTable::Parse(const std::string& bytes, const std::string& where) {
  if (bytes.size() != kSymbolTableBytes)
    ThrowCorrupt("{}: FSST symbol table of {} bytes, expected {}", where, bytes.size(), kSymbolTableBytes);
  const uint64_t header = LoadLE64(bytes.data());
  if ((header & kMagic) != kMagic) ThrowCorrupt("{}: FSST symbol table lacks its magic number", where);
  FsstTable table;
  table.active_ = (header >> 24) & 1;
  table.num_symbols_ = uint32_t(header & 0xFF);
  // At most 255 symbols (a u8 count): code 255 is always the escape.
  size_t pos = 8;
  for (uint32_t k = 0; k < table.num_symbols_; ++k, pos += 8) table.symbols_[k] = LoadLE64(bytes.data() + pos);
  for (uint32_t k = 0; k < table.num_symbols_; ++k, ++pos) {
    const uint8_t len = uint8_t(bytes[pos]);
    if (len == 0 || len > 8) ThrowCorrupt("{}: FSST symbol {} has length {}", where, k, len);
    table.lengths_[k] = len;
  }
  return table;
}

void FsstTable::Expand(std::string_view in, std::string& out, const std::string& where) const {
  if (!active_) {
    out.append(in);
    return;
  }
  for (size_t k = 0; k < in.size(); ++k) {
    const uint8_t code = uint8_t(in[k]);
    if (code == kEscape) {
      if (++k == in.size()) ThrowCorrupt("{}: FSST value ends inside an escape", where);
      out.push_back(in[k]);
      continue;
    }
    if (code >= num_symbols_) ThrowCorrupt("{}: FSST code {} but the table has {} symbols", where, code, num_symbols_);
    const uint64_t symbol = symbols_[code];
    for (uint8_t b = 0; b < lengths_[code]; ++b) out.push_back(char((symbol >> (8 * b)) & 0xFF));
  }
}

void FsstTable::ExpandBlock(ValueBlock& block, const std::string& where) const {
  if (!block.variable) ThrowCorrupt("{}: FSST applied to fixed-width values", where);
  if (!active_) return;
  std::string data;
  data.reserve(block.data.size() * 3);
  std::vector<uint64_t> offsets{0};
  offsets.reserve(block.count + 1);
  for (uint64_t k = 0; k < block.count; ++k) {
    const uint64_t begin = block.offsets[k], end = block.offsets[k + 1];
    if (end < begin || end > block.data.size()) ThrowCorrupt("{}: FSST value {} is outside its buffer", where, k);
    Expand(std::string_view(block.data).substr(begin, end - begin), data, where);
    offsets.push_back(data.size());
  }
  block.data = std::move(data);
  block.offsets = std::move(offsets);
}

ArrayPtr ExpandFsstArray(const ArrayData& compressed, const std::string& symbol_table, const std::string& where) {
  if (!compressed.type->is_variable_binary()) ThrowCorrupt("{}: FSST applied to {} values", where, compressed.type->ToString());
  const FsstTable table = FsstTable::Parse(symbol_table, where);
  const int64_t n = compressed.length;
  std::string data;
  std::vector<uint64_t> ends;
  ends.reserve(size_t(n));
  for (int64_t k = 0; k < n; ++k) {
    if (compressed.IsValid(k)) table.Expand(compressed.GetView(k), data, where);
    ends.push_back(data.size());
  }
  const bool large = compressed.type->has_large_offsets();
  if (!large && data.size() > uint64_t(INT32_MAX))
    ThrowNotSupported("{}: {} expanded bytes do not fit {} offsets", where, data.size(), compressed.type->ToString());
  auto offsets = Buffer::Allocate(size_t(n + 1) * (large ? 8 : 4));
  for (int64_t k = 0; k <= n; ++k) {
    const uint64_t off = k == 0 ? 0 : ends[size_t(k - 1)];
    if (large) offsets->mutable_as<int64_t>()[k] = int64_t(off);
    else offsets->mutable_as<int32_t>()[k] = int32_t(off);
  }
  auto out = std::make_shared<ArrayData>();
  out->type = compressed.type;
  out->length = n;
  out->null_count = compressed.null_count;
  out->buffers = {compressed.buffers.empty() ? nullptr : compressed.buffers[0], offsets,
                  Buffer::Copy(data.data(), data.size())};
  return out;
}

}  // namespace lancelet::format::v21
