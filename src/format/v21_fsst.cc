// FSST (Fast Static Symbol Table) string decompression, as the 2.1 / 2.2 encodings use it:
// one symbol table per page, kept in the page's encoding description, and each value
// compressed on its own (mini-block: the chunk's Variable values; full-zip: each value).
#include <algorithm>
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
// the output needs kSlack writable bytes past the expansion's end.
namespace {
constexpr size_t kSlack = 8;
// A block expands into a reused per-thread buffer up to this size, then is copied out at
// its real size; a larger one gets a buffer of its own, so that no thread keeps one.
constexpr size_t kReusedExpansionBytes = 1 << 20;
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
  bool bad = false;
  return ExpandUnchecked(in, out, bad);
}

char* FsstTable::ExpandUnchecked(std::string_view in, char* out, bool& bad) const {
  const size_t n = in.size();
  for (size_t k = 0; k < n; ++k) {
    const uint8_t code = uint8_t(in[k]);
    if (code == kEscape) {
      if (k + 1 == n) {
        bad = true;
        break;
      }
      *out++ = in[++k];
      continue;
    }
    // A code past the table reads a zero symbol of length 0 (the arrays hold 256).
    bad |= code >= num_symbols_;
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
  for (uint64_t k = 0; k < block.count; ++k)
    if (block.offsets[k + 1] < block.offsets[k] || block.offsets[k + 1] > block.data.size())
      ThrowCorrupt("{}: FSST value {} is outside its buffer", where, k);
  // One pass over the codes: a code writes at most 8 bytes, so 8 per compressed byte is
  // room enough. A bad code or cut escape is only noted here; ExpandedSize then names it.
  const size_t bound = compressed.size() * 8 + kSlack;
  thread_local std::string reused;
  std::string own;
  std::string& room = bound <= kReusedExpansionBytes ? reused : own;
  if (room.size() < bound) room.resize(bound);
  std::vector<uint64_t> offsets(block.count + 1, 0);
  char* const begin = room.data();
  char* out = begin;
  bool bad = false;
  for (uint64_t k = 0; k < block.count; ++k) {
    out = ExpandUnchecked(compressed.substr(block.offsets[k], block.offsets[k + 1] - block.offsets[k]), out, bad);
    offsets[k + 1] = uint64_t(out - begin);
  }
  if (bad)
    for (uint64_t k = 0; k < block.count; ++k)
      ExpandedSize(compressed.substr(block.offsets[k], block.offsets[k + 1] - block.offsets[k]), where);
  block.data.assign(begin, size_t(out - begin));
  block.offsets = std::move(offsets);
}

// ------------------------------------------------------------------------------ encoder

namespace {

constexpr uint32_t kMaxSymbols = 255;  // code 255 is the escape
constexpr int kGenerations = 5;
constexpr uint64_t kSampleBytes = 32 * 1024;

uint64_t SymbolWord(std::string_view bytes) {
  uint64_t word = 0;
  std::memcpy(&word, bytes.data(), std::min<size_t>(8, bytes.size()));
  return word;
}

uint64_t LowBytesMask(uint32_t length) { return length >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * length)) - 1; }

}  // namespace

void FsstEncoder::Index() {
  single_.fill(-1);
  pair_start_.assign(65537, 0);
  std::vector<uint8_t> longest_first;
  for (size_t code = 0; code < symbols_.size(); ++code) {
    if (symbols_[code].length == 1) single_[symbols_[code].bytes & 0xFF] = int16_t(code);
    else longest_first.push_back(uint8_t(code));
  }
  std::stable_sort(longest_first.begin(), longest_first.end(),
                   [&](uint8_t a, uint8_t b) { return symbols_[a].length > symbols_[b].length; });
  for (uint8_t code : longest_first) ++pair_start_[(symbols_[code].bytes & 0xFFFF) + 1];
  for (size_t k = 1; k < pair_start_.size(); ++k) pair_start_[k] += pair_start_[k - 1];
  pair_codes_.assign(longest_first.size(), 0);
  std::vector<uint32_t> next(pair_start_.begin(), pair_start_.end() - 1);
  for (uint8_t code : longest_first) pair_codes_[next[symbols_[code].bytes & 0xFFFF]++] = code;
}

int FsstEncoder::LongestMatch(std::string_view rest) const {
  if (rest.size() >= 2) {
    const uint64_t word = SymbolWord(rest);
    const uint32_t key = uint32_t(word & 0xFFFF);
    for (uint32_t k = pair_start_[key]; k < pair_start_[key + 1]; ++k) {
      const Symbol& symbol = symbols_[pair_codes_[k]];
      if (symbol.length <= rest.size() && (word & LowBytesMask(symbol.length)) == symbol.bytes) return pair_codes_[k];
    }
  }
  return single_[uint8_t(rest[0])];
}

FsstEncoder FsstEncoder::Train(const ValueBlock& block) {
  // The sample: every k-th value, about kSampleBytes of them.
  const uint64_t total = block.offsets[block.count] - block.offsets[0];
  const uint64_t step = std::max<uint64_t>(1, total / kSampleBytes);
  std::vector<std::string_view> sample;
  for (uint64_t k = 0; k < block.count; k += step)
    if (block.offsets[k + 1] > block.offsets[k])  // empty values (nulls among them) teach nothing
      sample.emplace_back(block.data.data() + block.offsets[k], block.offsets[k + 1] - block.offsets[k]);

  FsstEncoder encoder;
  encoder.Index();  // the empty table: every byte escapes
  // Codes while counting: a symbol's code, or kMaxSymbols + byte for an escaped byte.
  constexpr size_t kCodes = kMaxSymbols + 256;
  std::vector<uint32_t> single(kCodes), pairs(kCodes * kCodes);
  for (int generation = 0; generation < kGenerations; ++generation) {
    std::fill(single.begin(), single.end(), 0);
    std::fill(pairs.begin(), pairs.end(), 0);
    for (std::string_view value : sample) {
      size_t previous = SIZE_MAX;
      for (size_t pos = 0; pos < value.size();) {
        const int match = encoder.LongestMatch(value.substr(pos));
        const size_t code = match >= 0 ? size_t(match) : kMaxSymbols + uint8_t(value[pos]);
        pos += match >= 0 ? encoder.symbols_[size_t(match)].length : 1;
        ++single[code];
        if (previous != SIZE_MAX) ++pairs[previous * kCodes + code];
        previous = code;
      }
    }
    auto symbol_of = [&](size_t code) {
      return code < kMaxSymbols ? encoder.symbols_[code] : Symbol{uint64_t(code - kMaxSymbols), 1};
    };
    // Candidates: every symbol met and every pair of neighbours, by the bytes they cover.
    struct Candidate {
      uint64_t gain;
      Symbol symbol;
    };
    std::vector<Candidate> candidates;
    for (size_t a = 0; a < kCodes; ++a) {
      if (!single[a]) continue;
      const Symbol first = symbol_of(a);
      candidates.push_back({uint64_t(single[a]) * first.length, first});
      if (first.length == 8) continue;
      for (size_t b = 0; b < kCodes; ++b) {
        const uint32_t count = pairs[a * kCodes + b];
        if (!count) continue;
        const Symbol second = symbol_of(b);
        const uint32_t length = std::min<uint32_t>(8, first.length + second.length);
        const uint64_t bytes = (first.bytes | (second.bytes << (8 * first.length))) & LowBytesMask(length);
        candidates.push_back({uint64_t(count) * length, {bytes, uint8_t(length)}});
      }
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
      if (x.gain != y.gain) return x.gain > y.gain;
      if (x.symbol.length != y.symbol.length) return x.symbol.length > y.symbol.length;
      return x.symbol.bytes < y.symbol.bytes;
    });
    encoder.symbols_.clear();
    std::vector<std::pair<uint64_t, uint8_t>> chosen;
    for (const Candidate& c : candidates) {
      if (encoder.symbols_.size() == kMaxSymbols) break;
      const std::pair<uint64_t, uint8_t> key{c.symbol.bytes, c.symbol.length};
      if (std::find(chosen.begin(), chosen.end(), key) != chosen.end()) continue;
      chosen.push_back(key);
      encoder.symbols_.push_back(c.symbol);
    }
    encoder.Index();
  }
  return encoder;
}

std::string FsstEncoder::SymbolTable() const {
  std::string out;
  AppendLE<uint64_t>(out, kMagic | (uint64_t{1} << 24) | symbols_.size());
  for (const Symbol& symbol : symbols_) AppendLE<uint64_t>(out, symbol.bytes);
  for (const Symbol& symbol : symbols_) out.push_back(char(symbol.length));
  out.resize(kSymbolTableBytes, '\0');
  return out;
}

void FsstEncoder::Compress(std::string_view value, std::string& out) const {
  for (size_t pos = 0; pos < value.size();) {
    const int match = LongestMatch(value.substr(pos));
    if (match >= 0) {
      out.push_back(char(match));
      pos += symbols_[size_t(match)].length;
    } else {
      out.push_back(char(kEscape));
      out.push_back(value[pos++]);
    }
  }
}

ValueBlock FsstEncoder::CompressBlock(const ValueBlock& block) const {
  ValueBlock out;
  out.variable = true;
  out.count = block.count;
  out.offsets.reserve(block.count + 1);
  for (uint64_t k = 0; k < block.count; ++k) {
    Compress(std::string_view(block.data.data() + block.offsets[k], block.offsets[k + 1] - block.offsets[k]), out.data);
    out.offsets.push_back(out.data.size());
  }
  return out;
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
