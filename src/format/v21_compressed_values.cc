// Walks a 2.1 compression tree (CompressiveEncoding) and hands each node to its decoder.
// Two shapes of input exist:
//   - mini-block chunks: the chunk's value buffers (Rle has two: run values, run lengths;
//     General decompresses the first buffer and passes the rest on unchanged);
//   - blocks: one buffer holding everything (levels of a chunk, a dictionary, the levels of
//     a constant page); there Rle frames its two parts with a u64 size and Variable starts
//     with its offset width and the position of its bytes.
#include <bit>
#include <cstring>
#include <memory>

#include "format/little_endian.h"
#include "format/v21_compression.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

// Bits per value of a Flat child that a parent requires to be Flat.
uint64_t FlatBits(const pb::CompressiveEncoding& e, const char* role, const std::string& where) {
  if (e.compression_case() != pb::CompressiveEncoding::kFlat) ThrowUnsupportedCompression(e, role, where);
  if (e.flat().has_data()) ThrowNotSupported("{}: buffer-compressed Flat {} are not supported yet", where, role);
  if (e.flat().bits_per_value() == 0) ThrowCorrupt("{}: Flat {} of 0 bits per value", where, role);
  return e.flat().bits_per_value();
}

uint32_t WordBits(uint64_t bits, const char* what, const std::string& where) {
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    ThrowCorrupt("{}: {} of {}-bit values (expected 8, 16, 32 or 64)", where, what, bits);
  return uint32_t(bits);
}

ValueBlock FixedBlock(uint64_t bits, std::string data, uint64_t n, const std::string& where) {
  const uint64_t need = (n * bits + 7) / 8;
  if (data.size() < need) ThrowCorrupt("{}: {} bytes for {} values of {} bits, expected {}", where, data.size(), n, bits, need);
  data.resize(need);
  ValueBlock out;
  out.bits = bits;
  out.count = n;
  out.data = std::move(data);
  return out;
}

// Offsets (n + 1, `width` bytes each, at `offsets`) into `bytes`, rebased to start at 0.
ValueBlock VariableBlock(std::string_view offsets, size_t width, std::string_view bytes, uint64_t base, uint64_t n,
                         const std::string& where) {
  if (offsets.size() < (n + 1) * width)
    ThrowCorrupt("{}: {} bytes cannot hold {} offsets of {} bytes", where, offsets.size(), n + 1, width);
  ValueBlock out;
  out.variable = true;
  out.count = n;
  out.offsets.resize(n + 1);
  const uint64_t first = LoadLE(offsets.data(), width);
  if (first < base) ThrowCorrupt("{}: first value offset {} is before the value bytes at {}", where, first, base);
  uint64_t previous = first;
  for (uint64_t k = 0; k <= n; ++k) {
    const uint64_t off = LoadLE(offsets.data() + k * width, width);
    if (off < previous || off - base > bytes.size())
      ThrowCorrupt("{}: value offset {} is outside the {} value bytes or goes backwards", where, off, bytes.size());
    out.offsets[k] = off - first;
    previous = off;
  }
  out.data.assign(bytes.substr(first - base, out.offsets[n]));
  return out;
}

}  // namespace

ValueCodec ParseCompressedCodec(const pb::CompressiveEncoding& e, const std::string& where) {
  ValueCodec codec;
  switch (e.compression_case()) {
    case pb::CompressiveEncoding::kInlineBitpacking:
      if (e.inline_bitpacking().has_values())
        ThrowNotSupported("{}: buffer-compressed InlineBitpacking is not supported yet", where);
      codec.bits = WordBits(e.inline_bitpacking().uncompressed_bits_per_value(), "InlineBitpacking", where);
      break;
    case pb::CompressiveEncoding::kRle:
      codec.bits = FlatBits(e.rle().values(), "run values", where);
      FlatBits(e.rle().run_lengths(), "run lengths", where);
      break;
    case pb::CompressiveEncoding::kByteStreamSplit:
      codec.bits = FlatBits(e.byte_stream_split().values(), "byte stream split values", where);
      if (codec.bits % 8) ThrowCorrupt("{}: byte stream split of {}-bit values", where, codec.bits);
      break;
    case pb::CompressiveEncoding::kGeneral:
      if (!e.general().has_values()) ThrowCorrupt("{}: General compression without an inner encoding", where);
      codec = ParseValueCodec(e.general().values(), where);
      if (codec.dim) ThrowNotSupported("{}: General-compressed fixed_size_list values are not supported yet", where);
      break;
    default:
      ThrowUnsupportedCompression(e, "value", where);
  }
  codec.item_bits = codec.variable ? 0 : codec.bits;
  codec.compressed = std::make_shared<const pb::CompressiveEncoding>(e);
  return codec;
}

uint64_t ChunkBufferCount(const pb::CompressiveEncoding& e) {
  switch (e.compression_case()) {
    case pb::CompressiveEncoding::kRle: return 2;
    case pb::CompressiveEncoding::kGeneral: return ChunkBufferCount(e.general().values());
    case pb::CompressiveEncoding::kFsst: return ChunkBufferCount(e.fsst().values());
    case pb::CompressiveEncoding::kFixedSizeList: return e.fixed_size_list().has_validity() ? 2 : 1;
    default: return 1;
  }
}

ValueBlock DecodeChunkValues(const pb::CompressiveEncoding& e, std::vector<std::string> buffers, uint64_t n,
                             const std::string& where) {
  const uint64_t needed = ChunkBufferCount(e);
  if (buffers.size() < needed) ThrowCorrupt("{}: chunk has {} value buffers, {} needs {}", where, buffers.size(), CompressionName(e), needed);
  switch (e.compression_case()) {
    case pb::CompressiveEncoding::kFlat:
      return FixedBlock(FlatBits(e, "values", where), std::move(buffers[0]), n, where);
    case pb::CompressiveEncoding::kVariable: {
      const auto& v = e.variable();
      if (v.has_values()) ThrowNotSupported("{}: buffer-compressed Variable values are not supported yet", where);
      const uint64_t bits = FlatBits(v.offsets(), "offsets", where);
      if (bits != 32 && bits != 64) ThrowCorrupt("{}: Variable offsets of {} bits", where, bits);
      // Offsets count from the start of the buffer, which they begin.
      const std::string_view buffer = buffers[0];
      return VariableBlock(buffer, bits / 8, buffer, 0, n, where);
    }
    case pb::CompressiveEncoding::kInlineBitpacking: {
      const uint32_t bits = WordBits(e.inline_bitpacking().uncompressed_bits_per_value(), "InlineBitpacking", where);
      return FixedBlock(bits, DecodeInlineBitpacking(bits, buffers[0], n, where), n, where);
    }
    case pb::CompressiveEncoding::kRle: {
      const uint64_t bits = FlatBits(e.rle().values(), "run values", where);
      const uint64_t length_bits = FlatBits(e.rle().run_lengths(), "run lengths", where);
      return FixedBlock(bits, DecodeRle(uint32_t(bits), uint32_t(length_bits), buffers[0], buffers[1], n, where), n, where);
    }
    case pb::CompressiveEncoding::kByteStreamSplit: {
      const uint64_t bits = FlatBits(e.byte_stream_split().values(), "byte stream split values", where);
      return FixedBlock(bits, DecodeByteStreamSplit(uint32_t(bits), buffers[0], n, where), n, where);
    }
    case pb::CompressiveEncoding::kGeneral:
      buffers[0] = DecompressBuffer(e.general().compression(), buffers[0], where);
      return DecodeChunkValues(e.general().values(), std::move(buffers), n, where);
    case pb::CompressiveEncoding::kFsst:  // expanded by FinishValues
      return DecodeChunkValues(e.fsst().values(), std::move(buffers), n, where);
    case pb::CompressiveEncoding::kPackedStruct:  // rows split by MakePackedStructArray
      return DecodeChunkValues(e.packed_struct().values(), std::move(buffers), n, where);
    default:
      ThrowUnsupportedCompression(e, "value", where);
  }
}

ValueBlock DecodeBlock(const pb::CompressiveEncoding& e, std::string_view data, uint64_t n, const std::string& where) {
  switch (e.compression_case()) {
    case pb::CompressiveEncoding::kFlat: {
      const uint64_t bits = e.flat().bits_per_value();
      if (bits == 0) ThrowCorrupt("{}: Flat of 0 bits per value", where);
      if (e.flat().has_data()) return FixedBlock(bits, DecompressBuffer(e.flat().data(), data, where), n, where);
      return FixedBlock(bits, std::string(data), n, where);
    }
    case pb::CompressiveEncoding::kVariable: {
      if (e.variable().has_values()) ThrowNotSupported("{}: buffer-compressed Variable blocks are not supported yet", where);
      // u32 32 + u32 start of the bytes, or u64 64 + u64 start; the offsets follow and
      // count from the start of the bytes.
      if (data.size() < 8) ThrowCorrupt("{}: variable-width block of {} bytes has no header", where, data.size());
      const uint64_t bits = LoadLE(data.data(), 4);
      if (bits != 32 && bits != 64)
        ThrowNotSupported("{}: variable-width block with a {}-bit offset header is not supported", where, bits);
      const size_t width = bits / 8;
      if (data.size() < 2 * width) ThrowCorrupt("{}: variable-width block of {} bytes has no header", where, data.size());
      const uint64_t start = LoadLE(data.data() + width, width);
      if (start < 2 * width || start > data.size())
        ThrowCorrupt("{}: variable-width block says its bytes start at {} of {}", where, start, data.size());
      ValueBlock out = VariableBlock(data.substr(2 * width, start - 2 * width), width, data.substr(start), 0, n, where);
      return out;
    }
    case pb::CompressiveEncoding::kInlineBitpacking: {
      if (e.inline_bitpacking().has_values())
        ThrowNotSupported("{}: buffer-compressed InlineBitpacking is not supported yet", where);
      const uint32_t bits = WordBits(e.inline_bitpacking().uncompressed_bits_per_value(), "InlineBitpacking", where);
      return FixedBlock(bits, DecodeInlineBitpacking(bits, data, n, where), n, where);
    }
    case pb::CompressiveEncoding::kOutOfLineBitpacking: {
      const auto& o = e.out_of_line_bitpacking();
      const uint32_t bits = WordBits(o.uncompressed_bits_per_value(), "OutOfLineBitpacking", where);
      const uint64_t width = FlatBits(o.values(), "bit-packed values", where);
      if (width > bits) ThrowCorrupt("{}: {}-bit values packed at {} bits", where, bits, width);
      return FixedBlock(bits, DecodeOutOfLineBitpacking(bits, uint32_t(width), data, n, where), n, where);
    }
    case pb::CompressiveEncoding::kRle: {
      const uint64_t bits = FlatBits(e.rle().values(), "run values", where);
      const uint64_t length_bits = FlatBits(e.rle().run_lengths(), "run lengths", where);
      return FixedBlock(bits, DecodeRleBlock(uint32_t(bits), uint32_t(length_bits), data, n, where), n, where);
    }
    case pb::CompressiveEncoding::kGeneral: {
      const std::string plain = DecompressBuffer(e.general().compression(), data, where);
      return DecodeBlock(e.general().values(), plain, n, where);
    }
    default:
      ThrowUnsupportedCompression(e, "block", where);
  }
}

void CheckLevelEncoding(const pb::CompressiveEncoding& e, const std::string& what, const std::string& where) {
  switch (e.compression_case()) {
    case pb::CompressiveEncoding::kFlat:
      if (e.flat().bits_per_value() != 16) ThrowUnsupportedCompression(e, what, where);
      return;
    case pb::CompressiveEncoding::kInlineBitpacking:
      if (e.inline_bitpacking().uncompressed_bits_per_value() != 16 || e.inline_bitpacking().has_values())
        ThrowUnsupportedCompression(e, what, where);
      return;
    case pb::CompressiveEncoding::kOutOfLineBitpacking:
      if (e.out_of_line_bitpacking().uncompressed_bits_per_value() != 16) ThrowUnsupportedCompression(e, what, where);
      FlatBits(e.out_of_line_bitpacking().values(), "bit-packed levels", where);
      return;
    case pb::CompressiveEncoding::kRle:
      if (FlatBits(e.rle().values(), "run values", where) != 16) ThrowUnsupportedCompression(e, what, where);
      FlatBits(e.rle().run_lengths(), "run lengths", where);
      return;
    case pb::CompressiveEncoding::kGeneral:
      CheckLevelEncoding(e.general().values(), what, where);
      return;
    default:
      ThrowUnsupportedCompression(e, what, where);
  }
}

std::vector<uint16_t> DecodeLevels(const pb::CompressiveEncoding& e, std::string_view data, uint64_t n,
                                   const std::string& where) {
  const ValueBlock block = DecodeBlock(e, data, n, where);
  if (block.variable || block.bits != 16) ThrowCorrupt("{}: levels decode to {}-bit values, expected 16", where, block.bits);
  if (block.data.size() < 2 * n) ThrowCorrupt("{}: {} bytes of levels, expected {}", where, block.data.size(), 2 * n);
  std::vector<uint16_t> out(n);
  static_assert(std::endian::native == std::endian::little, "levels are copied as native 16-bit words");
  if (n > 0) std::memcpy(out.data(), block.data.data(), 2 * n);
  return out;
}

}  // namespace lancelet::format::v21
