// Bit-unpacking of the FastLanes layout (see v21_compression.h) and the two 2.1 encodings
// built on it: InlineBitpacking (width stored before each block of 1024 values, used for
// mini-block values and levels) and OutOfLineBitpacking (one width for the whole buffer,
// given by the encoding's Flat child).
#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "format/little_endian.h"
#include "format/v21_compression.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

uint64_t LoadWord(const uint8_t* p, uint32_t bytes) {
  uint64_t v = 0;
  for (uint32_t k = 0; k < bytes; ++k) v |= uint64_t(p[k]) << (8 * k);
  return v;
}

void CheckWordBits(uint32_t word_bits, const std::string& where) {
  if (word_bits != 8 && word_bits != 16 && word_bits != 32 && word_bits != 64)
    ThrowCorrupt("{}: bit-packing of {}-bit values (expected 8, 16, 32 or 64)", where, word_bits);
}

}  // namespace

namespace {

static_assert(std::endian::native == std::endian::little, "the packed words are read as native little-endian words");

// The value that lane 0 of `row` holds; lane l holds the value l after it (v21_compression.h).
uint32_t FastLanesRowStart(uint32_t row) { return uint32_t(kFastLanesOrder[row / 8] * 16 + (row % 8) * 128); }

// FastLanesUnpack for one word type. Every lane does the same shifts at the same row, so
// the inner loop runs over the lanes with loop-invariant shifts (and vectorizes).
template <typename T>
void UnpackLanes(uint32_t width, const uint8_t* packed, uint8_t* out) {
  constexpr uint32_t kBits = 8 * sizeof(T);
  constexpr uint32_t kLanes = uint32_t(kFastLanesValues) / kBits;
  const T mask = width == kBits ? T(~T(0)) : T((T(1) << width) - 1);
  for (uint32_t row = 0; row < kBits; ++row) {
    // Bits [row * width, row * width + width) of each lane's stream of words.
    const uint32_t first_bit = row * width;
    const uint32_t shift = first_bit % kBits;
    const uint8_t* words = packed + uint64_t(first_bit / kBits) * kLanes * sizeof(T);
    uint8_t* dst = out + uint64_t(FastLanesRowStart(row)) * sizeof(T);
    if (shift + width > kBits) {  // the value continues in the lane's next word
      const uint8_t* next = words + kLanes * sizeof(T);
      const uint32_t back = kBits - shift;
      for (uint32_t lane = 0; lane < kLanes; ++lane) {
        const T low = T(LoadLE<T>(words + lane * sizeof(T)) >> shift);
        const T high = T(LoadLE<T>(next + lane * sizeof(T)) << back);
        StoreLE<T>(dst + lane * sizeof(T), T((low | high) & mask));
      }
    } else {
      for (uint32_t lane = 0; lane < kLanes; ++lane)
        StoreLE<T>(dst + lane * sizeof(T), T(T(LoadLE<T>(words + lane * sizeof(T)) >> shift) & mask));
    }
  }
}

// The inverse of UnpackLanes: 1024 words at `in` into width * 128 bytes at `packed`.
template <typename T>
void PackLanes(uint32_t width, const uint8_t* in, uint8_t* packed) {
  constexpr uint32_t kBits = 8 * sizeof(T);
  constexpr uint32_t kLanes = uint32_t(kFastLanesValues) / kBits;
  std::memset(packed, 0, size_t(width) * 128);
  for (uint32_t row = 0; row < kBits; ++row) {
    const uint32_t first_bit = row * width;
    const uint32_t shift = first_bit % kBits;
    uint8_t* words = packed + uint64_t(first_bit / kBits) * kLanes * sizeof(T);
    const uint8_t* src = in + uint64_t(FastLanesRowStart(row)) * sizeof(T);
    for (uint32_t lane = 0; lane < kLanes; ++lane) {
      const T v = LoadLE<T>(src + lane * sizeof(T));
      StoreLE<T>(words + lane * sizeof(T), T(LoadLE<T>(words + lane * sizeof(T)) | T(v << shift)));
      if (shift + width > kBits) {  // the value continues in the lane's next word
        uint8_t* next = words + kLanes * sizeof(T);
        StoreLE<T>(next + lane * sizeof(T), T(LoadLE<T>(next + lane * sizeof(T)) | T(v >> (kBits - shift))));
      }
    }
  }
}

// Whether a partial block of `tail` values is packed and padded (else written raw).
bool PadsTail16(uint64_t tail, uint32_t width) {
  return tail > 0 && uint64_t(width) * (kFastLanesValues - tail) < uint64_t(16 - width) * tail;
}

}  // namespace

uint32_t MaxBitWidth(uint32_t word_bits, const uint8_t* values, uint64_t n) {
  CheckWordBits(word_bits, "bit-packing");
  const uint32_t word_bytes = word_bits / 8;
  uint64_t any = 0;
  switch (word_bytes) {  // a constant width lets the OR vectorize
    case 1: for (uint64_t k = 0; k < n; ++k) any |= values[k]; break;
    case 2: for (uint64_t k = 0; k < n; ++k) any |= LoadLE<uint16_t>(values + 2 * k); break;
    case 4: for (uint64_t k = 0; k < n; ++k) any |= LoadLE<uint32_t>(values + 4 * k); break;
    default: for (uint64_t k = 0; k < n; ++k) any |= LoadLE<uint64_t>(values + 8 * k); break;
  }
  return uint32_t(std::bit_width(any));
}

std::string EncodeInlineBitpacking(uint32_t word_bits, const uint8_t* values, uint64_t n) {
  CheckWordBits(word_bits, "InlineBitpacking");
  const uint32_t word_bytes = word_bits / 8;
  std::string out;
  std::string block(kFastLanesValues * word_bytes, '\0');
  for (uint64_t done = 0; done < n; done += kFastLanesValues) {
    const uint64_t take = std::min(kFastLanesValues, n - done);
    const uint8_t* src = values + done * word_bytes;
    if (take < kFastLanesValues) {  // the last block, padded with zeros
      std::fill(block.begin(), block.end(), '\0');
      std::memcpy(block.data(), src, take * word_bytes);
      src = reinterpret_cast<const uint8_t*>(block.data());
    }
    const uint32_t width = MaxBitWidth(word_bits, src, kFastLanesValues);
    const size_t at = out.size();
    out.resize(at + word_bytes + size_t(width) * 128);
    auto* dst = reinterpret_cast<uint8_t*>(out.data()) + at;
    for (uint32_t b = 0; b < word_bytes; ++b) dst[b] = uint8_t(b == 0 ? width : 0);
    if (width == 0) continue;
    switch (word_bits) {
      case 8: PackLanes<uint8_t>(width, src, dst + word_bytes); break;
      case 16: PackLanes<uint16_t>(width, src, dst + word_bytes); break;
      case 32: PackLanes<uint32_t>(width, src, dst + word_bytes); break;
      default: PackLanes<uint64_t>(width, src, dst + word_bytes); break;
    }
  }
  return out;
}

uint64_t OutOfLineBitpackedBytes16(uint64_t n, uint32_t width) {
  const uint64_t whole = n / kFastLanesValues, tail = n % kFastLanesValues;
  return whole * width * 128 + (PadsTail16(tail, width) ? width * 128 : tail * 2);
}

std::string EncodeOutOfLineBitpacking16(const uint16_t* values, uint64_t n, uint32_t width) {
  if (width == 0 || width >= 16) ThrowInvalid("out-of-line bit-packing of 16-bit levels at width {}", width);
  std::string out(OutOfLineBitpackedBytes16(n, width), '\0');
  auto* dst = reinterpret_cast<uint8_t*>(out.data());
  const uint64_t whole = n / kFastLanesValues, tail = n % kFastLanesValues;
  for (uint64_t b = 0; b < whole; ++b)
    PackLanes<uint16_t>(width, reinterpret_cast<const uint8_t*>(values + b * kFastLanesValues), dst + b * width * 128);
  if (PadsTail16(tail, width)) {
    uint16_t block[kFastLanesValues] = {};
    std::memcpy(block, values + whole * kFastLanesValues, tail * 2);
    PackLanes<uint16_t>(width, reinterpret_cast<const uint8_t*>(block), dst + whole * width * 128);
  } else {
    for (uint64_t k = 0; k < tail; ++k) StoreLE<uint16_t>(dst + whole * width * 128 + 2 * k, values[whole * kFastLanesValues + k]);
  }
  return out;
}

void FastLanesUnpack(uint32_t word_bits, uint32_t width, const uint8_t* packed, uint8_t* out) {
  if (width == 0) {
    std::memset(out, 0, kFastLanesValues * (word_bits / 8));
    return;
  }
  if (width > word_bits) ThrowCorrupt("bit width {} for {}-bit values", width, word_bits);
  switch (word_bits) {
    case 8: return UnpackLanes<uint8_t>(width, packed, out);
    case 16: return UnpackLanes<uint16_t>(width, packed, out);
    case 32: return UnpackLanes<uint32_t>(width, packed, out);
    case 64: return UnpackLanes<uint64_t>(width, packed, out);
    default: ThrowCorrupt("bit-packing of {}-bit values (expected 8, 16, 32 or 64)", word_bits);
  }
}

namespace {

// Where each of a block's 1024 values sits: its row (bit stream position) and lane, the
// inverse of the order UnpackLanes writes.
template <typename T>
struct LanePositions {
  uint8_t row[kFastLanesValues];
  uint8_t lane[kFastLanesValues];
  LanePositions() {
    constexpr uint32_t kBits = 8 * sizeof(T), kLanes = uint32_t(kFastLanesValues) / kBits;
    for (uint32_t r = 0; r < kBits; ++r)
      for (uint32_t l = 0; l < kLanes; ++l) {
        const uint32_t value = FastLanesRowStart(r) + l;
        row[value] = uint8_t(r);
        lane[value] = uint8_t(l);
      }
  }
};

template <typename T>
bool GatherPacked(std::string_view data, uint64_t n, std::span<const uint64_t> rows, uint64_t first, uint8_t* out) {
  constexpr uint32_t kBits = 8 * sizeof(T), kLanes = uint32_t(kFastLanesValues) / kBits;
  static const LanePositions<T> positions;
  struct Block {
    uint32_t width;
    const uint8_t* packed;
  };
  std::vector<Block> blocks;
  const auto* in = reinterpret_cast<const uint8_t*>(data.data());
  uint64_t pos = 0;
  for (uint64_t done = 0; done < n; done += kFastLanesValues) {
    if (pos + sizeof(T) > data.size()) return false;
    const uint64_t width = LoadWord(in + pos, sizeof(T));
    pos += sizeof(T);
    if (width > kBits || pos + width * 128 > data.size()) return false;
    blocks.push_back({uint32_t(width), in + pos});
    pos += width * 128;
  }
  if (pos != data.size()) return false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint64_t v = rows[i] - first;
    const Block& block = blocks[v / kFastLanesValues];
    T value = 0;
    if (block.width > 0) {
      const uint32_t o = uint32_t(v % kFastLanesValues);
      const uint32_t first_bit = uint32_t(positions.row[o]) * block.width, shift = first_bit % kBits;
      const uint8_t* word = block.packed + (uint64_t(first_bit / kBits) * kLanes + positions.lane[o]) * sizeof(T);
      value = T(LoadLE<T>(word) >> shift);
      if (shift + block.width > kBits) value = T(value | T(LoadLE<T>(word + kLanes * sizeof(T)) << (kBits - shift)));
      if (block.width < kBits) value = T(value & T((T(1) << block.width) - 1));
    }
    StoreLE<T>(out + i * sizeof(T), value);
  }
  return true;
}

}  // namespace

bool GatherInlineBitpacked(uint32_t word_bits, std::string_view data, uint64_t n, std::span<const uint64_t> rows,
                           uint64_t first, uint8_t* out) {
  switch (word_bits) {
    case 8: return GatherPacked<uint8_t>(data, n, rows, first, out);
    case 16: return GatherPacked<uint16_t>(data, n, rows, first, out);
    case 32: return GatherPacked<uint32_t>(data, n, rows, first, out);
    case 64: return GatherPacked<uint64_t>(data, n, rows, first, out);
    default: return false;
  }
}

std::string DecodeInlineBitpacking(uint32_t word_bits, std::string_view data, uint64_t n, const std::string& where) {
  CheckWordBits(word_bits, where);
  const uint32_t word_bytes = word_bits / 8;
  std::string out(n * word_bytes, '\0');
  std::string block;  // for a padded last block
  const auto* in = reinterpret_cast<const uint8_t*>(data.data());
  uint64_t pos = 0, done = 0;
  while (done < n) {
    if (pos + word_bytes > data.size())
      ThrowCorrupt("{}: bit-packed data of {} bytes ends before value {} of {}", where, data.size(), done, n);
    const uint64_t width = LoadWord(in + pos, word_bytes);
    pos += word_bytes;
    if (width > word_bits) ThrowCorrupt("{}: bit width {} for {}-bit values", where, width, word_bits);
    const uint64_t packed_bytes = width * 128;
    if (pos + packed_bytes > data.size())
      ThrowCorrupt("{}: bit-packed block of width {} needs {} bytes, {} left", where, width, packed_bytes,
                   data.size() - pos);
    const uint64_t take = std::min(kFastLanesValues, n - done);
    if (take == kFastLanesValues) {
      FastLanesUnpack(word_bits, uint32_t(width), in + pos, reinterpret_cast<uint8_t*>(out.data()) + done * word_bytes);
    } else {
      block.resize(kFastLanesValues * word_bytes);
      FastLanesUnpack(word_bits, uint32_t(width), in + pos, reinterpret_cast<uint8_t*>(block.data()));
      std::memcpy(out.data() + done * word_bytes, block.data(), take * word_bytes);
    }
    pos += packed_bytes;
    done += take;
  }
  // The blocks are the whole buffer: a width lowered by a flipped bit leaves bytes over.
  if (pos != data.size())
    ThrowCorrupt("{}: bit-packed blocks of {} values take {} bytes, but their buffer has {}", where, n, pos,
                 data.size());
  return out;
}

std::string DecodeOutOfLineBitpacking(uint32_t word_bits, uint32_t width, std::string_view data, uint64_t n,
                                      const std::string& where) {
  CheckWordBits(word_bits, where);
  if (width > word_bits) ThrowCorrupt("{}: bit width {} for {}-bit values", where, width, word_bits);
  const uint32_t word_bytes = word_bits / 8;
  const uint64_t block_bytes = uint64_t(width) * 128;
  const uint64_t whole = n / kFastLanesValues, tail = n % kFastLanesValues;
  const uint64_t packed_tail_size = whole * block_bytes + (tail ? block_bytes : 0);
  const uint64_t raw_tail_size = whole * block_bytes + tail * word_bytes;
  // When both forms have the same size the writer keeps the tail raw (padding does not pay).
  const bool raw_tail = tail > 0 && data.size() == raw_tail_size;
  if (!raw_tail && data.size() != packed_tail_size)
    ThrowCorrupt("{}: {} bytes of {}-bit values packed at {} bits, expected {} or {}", where, data.size(), n, width,
                 packed_tail_size, raw_tail_size);
  std::string out(n * word_bytes, '\0');
  const auto* in = reinterpret_cast<const uint8_t*>(data.data());
  for (uint64_t b = 0; b < whole; ++b)
    FastLanesUnpack(word_bits, width, in + b * block_bytes,
                    reinterpret_cast<uint8_t*>(out.data()) + b * kFastLanesValues * word_bytes);
  if (tail && !raw_tail) {
    std::string block(kFastLanesValues * word_bytes, '\0');
    FastLanesUnpack(word_bits, width, in + whole * block_bytes, reinterpret_cast<uint8_t*>(block.data()));
    std::memcpy(out.data() + whole * kFastLanesValues * word_bytes, block.data(), tail * word_bytes);
  }
  if (raw_tail) std::memcpy(out.data() + whole * kFastLanesValues * word_bytes, in + whole * block_bytes, tail * word_bytes);
  return out;
}

}  // namespace lancelet::format::v21
