// The two 2.0 bit-packing encodings, as byte-level functions (v20_decode.cc reads the
// bytes and checks the encoding against the field; see v20_internal.h for the layouts).
#include <algorithm>
#include <cstring>

#include "format/v20_internal.h"
#include "format/v21_compression.h"
#include "lancelet/error.h"

namespace lancelet::format::v20 {

namespace {

bool IsWordWidth(uint64_t bits) { return bits == 8 || bits == 16 || bits == 32 || bits == 64; }

void StoreWord(uint8_t* out, uint32_t word_bytes, uint64_t value) {
  for (uint32_t k = 0; k < word_bytes; ++k) out[k] = uint8_t(value >> (8 * k));
}

}  // namespace

void CheckBitpackedRead(uint64_t width, uint64_t word_bits, uint64_t start, uint64_t count, const std::string& where) {
  if (!IsWordWidth(word_bits)) {
    ThrowCorrupt("{}: bit-packed values unpack to {} bits (expected 8, 16, 32 or 64)", where, word_bits);
  }
  if (width == 0 || width > word_bits) {
    ThrowCorrupt("{}: bit width {} for {}-bit values (expected 1 to {})", where, width, word_bits, word_bits);
  }
  if (start > (uint64_t(1) << 48) || count > (uint64_t(1) << 48)) {
    ThrowCorrupt("{}: {} bit-packed values at value {} cannot fit in a page", where, count, start);
  }
}

ByteRange BitpackedBytes(uint64_t start, uint64_t count, uint64_t width) {
  return {start * width / 8, ((start + count) * width + 7) / 8};
}

BufferPtr UnpackBits(std::string_view bytes, uint32_t bit_offset, uint64_t count, uint32_t width, uint32_t word_bits,
                     bool sign_extend) {
  const uint32_t word_bytes = word_bits / 8;
  auto out = Buffer::AllocateUninitialized(count * word_bytes);
  uint8_t* dst = out->mutable_data();
  const uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  const auto* src = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint64_t size = bytes.size();
  for (uint64_t i = 0; i < count; ++i) {
    // A value spans at most 9 bytes (64 bits starting at bit 7 of a byte); bytes past the
    // end of `bytes` count as zero, which only a value's unused high bits can reach.
    const uint64_t bit = bit_offset + i * width;
    const uint64_t byte = bit / 8;
    const uint32_t shift = uint32_t(bit % 8);
    uint64_t window = 0;
    for (uint32_t k = 0; k < 8 && byte + k < size; ++k) window |= uint64_t(src[byte + k]) << (8 * k);
    uint64_t value = window >> shift;
    if (shift + width > 64 && byte + 8 < size) value |= uint64_t(src[byte + 8]) << (64 - shift);
    value &= mask;
    if (sign_extend && width < 64 && (value >> (width - 1)) & 1) value |= ~mask;
    StoreWord(dst + i * word_bytes, word_bytes, value);
  }
  return out;
}

ByteRange FastLanesChunkBytes(uint64_t start, uint64_t count, uint64_t width) {
  const uint64_t chunk_bytes = v21::kFastLanesValues * width / 8;
  const uint64_t first = start / v21::kFastLanesValues;
  const uint64_t end = count == 0 ? first : (start + count - 1) / v21::kFastLanesValues + 1;
  return {first * chunk_bytes, end * chunk_bytes};
}

BufferPtr UnpackFastLanesChunks(std::string_view chunks, uint64_t start, uint64_t count, uint32_t width,
                                uint32_t word_bits) {
  const uint32_t word_bytes = word_bits / 8;
  const uint64_t chunk_bytes = v21::kFastLanesValues * width / 8;
  auto out = Buffer::AllocateUninitialized(count * word_bytes);
  std::string chunk(v21::kFastLanesValues * word_bytes, '\0');
  uint64_t done = 0, index = start % v21::kFastLanesValues;
  for (uint64_t pos = 0; done < count; pos += chunk_bytes, index = 0) {
    v21::FastLanesUnpack(word_bits, width, reinterpret_cast<const uint8_t*>(chunks.data() + pos),
                         reinterpret_cast<uint8_t*>(chunk.data()));
    const uint64_t take = std::min(v21::kFastLanesValues - index, count - done);
    std::memcpy(out->mutable_data() + done * word_bytes, chunk.data() + index * word_bytes, take * word_bytes);
    done += take;
  }
  return out;
}

}  // namespace lancelet::format::v20
