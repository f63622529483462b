// FSST (Fast Static Symbol Table) string decompression, as the 2.1 / 2.2 encodings use it:
// one symbol table per page, kept in the page's encoding description, and each value
// compressed on its own (mini-block: the chunk's Variable values; full-zip: each value).
#include <climits>
#include <cstring>

#include "format/little_endian.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

constexpr size_t kSymbolTableBytes = 8 + 256 * 8 + 256;
constexpr uint64_t kMagic = uint64_t(0x46535354) << 32;
constexpr uint8_t kEscape = 255;

}  // namespace

FsstTable FsstTable::Parse(const std::string& bytes, const std::string& where) {
  if (bytes.size() != kSymbolTableBytes)
    ThrowCorrupt("{}: FSST symbol table of {} bytes, expected {}", where, bytes.size(), kSymbolTableBytes);
  const uint64_t header = LoadLE<uint64_t>(bytes.data());
  if ((header & kMagic) != kMagic) ThrowCorrupt("{}: FSST symbol table lacks its magic number", where);
  FsstTable table;
  table.active_ = (header >> 24) & 1;
  table.num_symbols_ = uint32_t(header & 0xFF);
  // At most 255 symbols (a u8 count): code 255 is always the escape.
  size_t pos = 8;
  for (uint32_t k = 0; k < table.num_symbols_; ++k, pos += 8) table.symbols_[k] = LoadLE<uint64_t>(bytes.data() + pos);
  for (uint32_t k = 0; k < table.num_symbols_; ++k, ++pos) {
    const uint8_t len = uint8_t(bytes[pos]);
    if (len == 0 || len > 8) ThrowCorrupt("{}: FSST symbol {} has length {}", where, k, len);
    table.lengths_[k] = len;
  }
  return table;
}

// Decoding writes each symbol as a whole 8-byte word and then advances by its length, so
// the output needs kSlack writable bytes past the expansion's end. The codes are checked
// in a first pass that also sizes the output.
namespace {
constexpr size_t kSlack = 8;
}  // namespace

uint64_t FsstTable::ExpandedSize(std::string_view in, const std::string& where) const {
  uint64_t size = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const uint8_t code = uint8_t(in[k]);
    if (code == kEscape) {
      if (++k == in.size()) ThrowCorrupt("{}: FSST value ends inside an escape", where);
      ++size;
      continue;
    }
    if (code >= num_symbols_) ThrowCorrupt("{}: FSST code {} but the table has {} symbols", where, code, num_symbols_);
    size += lengths_[code];
  }
  return size;
}

char* FsstTable::ExpandChecked(std::string_view in, char* out) const {
  for (size_t k = 0; k < in.size(); ++k) {
    const uint8_t code = uint8_t(in[k]);
    if (code == kEscape) {
      *out++ = in[++k];
      continue;
    }
    std::memcpy(out, &symbols_[code], 8);  // little-endian: the symbol's bytes in order
    out += lengths_[code];
  }
  return out;
}

void FsstTable::Expand(std::string_view in, std::string& out, const std::string& where) const {
  if (!active_) {
    out.append(in);
    return;
  }
  const size_t old = out.size();
  const uint64_t size = ExpandedSize(in, where);
  out.resize(old + size + kSlack);
  ExpandChecked(in, out.data() + old);
  out.resize(old + size);
}

void FsstTable::ExpandBlock(ValueBlock& block, const std::string& where) const {
  if (!block.variable) ThrowCorrupt("{}: FSST applied to fixed-width values", where);
  if (!active_) return;
  if (block.offsets.size() != block.count + 1)
    ThrowCorrupt("{}: {} offsets for {} FSST values", where, block.offsets.size(), block.count);
  const std::string_view compressed(block.data);
  std::vector<uint64_t> offsets(block.count + 1, 0);
  for (uint64_t k = 0; k < block.count; ++k) {
    const uint64_t begin = block.offsets[k], end = block.offsets[k + 1];
    if (end < begin || end > block.data.size()) ThrowCorrupt("{}: FSST value {} is outside its buffer", where, k);
    offsets[k + 1] = offsets[k] + ExpandedSize(compressed.substr(begin, end - begin), where);
  }
  std::string data(offsets[block.count] + kSlack, '\0');
  char* out = data.data();
  for (uint64_t k = 0; k < block.count; ++k)
    out = ExpandChecked(compressed.substr(block.offsets[k], block.offsets[k + 1] - block.offsets[k]), out);
  data.resize(offsets[block.count]);
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
