// Bit-unpacking of the FastLanes layout (see v21_compression.h) and the two 2.1 encodings
// built on it: InlineBitpacking (width stored before each block of 1024 values, used for
// mini-block values and levels) and OutOfLineBitpacking (one width for the whole buffer,
// given by the encoding's Flat child).
#include <cstring>

#include "format/v21_compression.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

uint64_t LoadWord(const uint8_t* p, uint32_t bytes) {
  uint64_t v = 0;
  for (uint32_t k = 0; k < bytes; ++k) v |= uint64_t(p[k]) << (8 * k);
  return v;
}

void StoreWord(uint8_t* p, uint32_t bytes, uint64_t v) {
  for (uint32_t k = 0; k < bytes; ++k) p[k] = uint8_t(v >> (8 * k));
}

void CheckWordBits(uint32_t word_bits, const std::string& where) {
  if (word_bits != 8 && word_bits != 16 && word_bits != 32 && word_bits != 64)
    ThrowCorrupt("{}: bit-packing of {}-bit values (expected 8, 16, 32 or 64)", where, word_bits);
}

}  // namespace

void FastLanesUnpack(uint32_t word_bits, uint32_t width, const uint8_t* packed, uint8_t* out) {
  const uint32_t word_bytes = word_bits / 8;
  const uint32_t lanes = uint32_t(kFastLanesValues) / word_bits;
  if (width == 0) {
    std::memset(out, 0, kFastLanesValues * word_bytes);
    return;
  }
  const uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    for (uint32_t row = 0; row < word_bits; ++row) {
      // Bits [row * width, row * width + width) of the lane's stream of words.
      const uint64_t first_bit = uint64_t(row) * width;
      const uint64_t word = first_bit / word_bits;
      const uint32_t shift = uint32_t(first_bit % word_bits);
      uint64_t value = LoadWord(packed + (lanes * word + lane) * word_bytes, word_bytes) >> shift;
      if (shift + width > word_bits) {  // continues in the lane's next word
        const uint64_t next = LoadWord(packed + (lanes * (word + 1) + lane) * word_bytes, word_bytes);
        value |= next << (word_bits - shift);
      }
      value &= mask;
      const uint32_t index = uint32_t(kFastLanesOrder[row / 8]) * 16 + (row % 8) * 128 + lane;
      StoreWord(out + uint64_t(index) * word_bytes, word_bytes, value);
    }
  }
}

std::string DecodeInlineBitpacking(uint32_t word_bits, std::string_view data, uint64_t n, const std::string& where) {
  CheckWordBits(word_bits, where);
  const uint32_t word_bytes = word_bits / 8;
  std::string out(n * word_bytes, '\0');
  std::string block(kFastLanesValues * word_bytes, '\0');
  auto* block_bytes = reinterpret_cast<uint8_t*>(block.data());
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
    FastLanesUnpack(word_bits, uint32_t(width), in + pos, block_bytes);
    pos += packed_bytes;
    const uint64_t take = std::min(kFastLanesValues, n - done);
    std::memcpy(out.data() + done * word_bytes, block.data(), take * word_bytes);
    done += take;
  }
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
  std::string block(kFastLanesValues * word_bytes, '\0');
  const auto* in = reinterpret_cast<const uint8_t*>(data.data());
  for (uint64_t b = 0; b < whole + (tail && !raw_tail ? 1 : 0); ++b) {
    FastLanesUnpack(word_bits, width, in + b * block_bytes, reinterpret_cast<uint8_t*>(block.data()));
    const uint64_t take = std::min(kFastLanesValues, n - b * kFastLanesValues);
    std::memcpy(out.data() + b * kFastLanesValues * word_bytes, block.data(), take * word_bytes);
  }
  if (raw_tail) std::memcpy(out.data() + whole * kFastLanesValues * word_bytes, in + whole * block_bytes, tail * word_bytes);
  return out;
}

}  // namespace lancelet::format::v21
