// Mini-block pages (MiniBlockLayout): the page's items are cut into chunks of a power of two
// values (the last chunk takes the rest), each holding its slice of rep levels, def levels
// and values, so that a reader fetches and decodes only whole chunks.
//
// Buffers of a page:
//   0  chunk metadata: one word per chunk, u16 (2.1) or u32 (has_large_chunk, 2.2):
//      ((chunk_bytes / 8 - 1) << 4) | log2(values in chunk); the last chunk stores 0 there.
//   1  the chunks back to back, each 8-byte aligned:
//        u16 num_levels (0 without levels), [u16 rep bytes], [u16 def bytes],
//        one size per value buffer (u16, or u32 with has_large_chunk), pad to 8,
//        rep bytes, pad, def bytes, pad, each value buffer, pad (padding byte 0xFE).
//   2  (when there are lists) the repetition index: per chunk two u64, the rows that end in
//      the chunk and the levels left over after the last row end.
// Levels are written uncompressed (Flat, 16 bits); values as Flat (fixed width, bools
// packed 8 per byte) or Variable (u32/u64 offsets from the buffer start, then the bytes).
// With a dictionary (written for dictionary fields only), buffer 2 holds the dictionary,
// the chunks its keys, and the repetition index moves to buffer 3. Reading also accepts
// the reference's compressed levels, values and dictionaries (v21_compression.h).
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <tuple>

#include "format/little_endian.h"
#include "format/v21_compression.h"
#include "format/v21_internal.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

constexpr uint64_t kMaxChunkBytes = 8 * 1024 - 6;  // value bytes per chunk, as the reference
constexpr uint64_t kMaxChunkValues = 4096;
constexpr uint64_t kAimVariableChunkBytes = 4 * 1024;
constexpr uint64_t kMaxChunkLevels = 65535;   // the chunk header's u16 count
constexpr uint64_t kMaxChunkWords21 = 4096;   // a 2.1 chunk's size in its u16 metadata word
constexpr uint64_t kMinGeneralBytes = 4 * 1024;  // a page's first value buffers, before General pays
constexpr char kFillByte = char(0xFE);
constexpr char kVariablePadByte = char(72);

void PadTo8(std::string& out) {
  while (out.size() % 8) out.push_back(kFillByte);
}

uint64_t FloorPow2(uint64_t n) {
  uint64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

int Log2(uint64_t pow2) {
  int log = 0;
  while ((uint64_t(1) << log) < pow2) ++log;
  return log;
}

// Values per chunk for fixed-width data: the largest power of two whose bytes stay under
// kMaxChunkBytes (bools count in words of 8 values so that chunks stay byte aligned).
uint64_t FixedValuesPerChunk(uint64_t bits) {
  const bool byte_aligned = bits % 8 == 0;
  const uint64_t bytes_per_word = byte_aligned ? bits / 8 : bits;
  const uint64_t values_per_word = byte_aligned ? 1 : 8;
  uint64_t size = 2 * bytes_per_word, values = 2 * values_per_word;
  if (size >= kMaxChunkBytes) ThrowInvalid("values of {} bits are too wide for a mini-block page", bits);
  while (2 * size < kMaxChunkBytes && 2 * values <= kMaxChunkValues) {
    size *= 2;
    values *= 2;
  }
  return values;
}

// Values in the next variable-width chunk starting at value `v0`: doubles while the
// offsets and bytes stay within kAimVariableChunkBytes; returns the remaining count when it
// all fits.
uint64_t VariableValuesInChunk(const ValueBlock& values, uint64_t v0, uint64_t offset_bytes) {
  const uint64_t remaining = values.count - v0;
  auto size_of = [&](uint64_t n) {
    return values.offsets[v0 + n] - values.offsets[v0] + (n + 1) * offset_bytes;
  };
  if (remaining <= kMaxChunkValues && size_of(remaining) <= kAimVariableChunkBytes) return remaining;
  uint64_t n = 2;
  while (2 * n < remaining && 2 * n <= kMaxChunkValues && size_of(2 * n) <= kAimVariableChunkBytes) n *= 2;
  return std::min(n, remaining);
}

uint64_t PaddedTo8(uint64_t n) { return (n + 7) / 8 * 8; }

// How a page's rep or def levels are compressed: bit-packed out of line at `width` bits
// (both versions, as the reference), or run-length encoded (2.2, when the page's levels
// take fewer bytes that way: long runs of valid items or of null rows).
struct LevelCodec {
  bool present = false, rle = false;
  uint32_t width = 0;

  LevelCodec() = default;
  LevelCodec(const std::vector<uint16_t>& levels, bool rle_allowed) : present(true) {
    static_assert(std::endian::native == std::endian::little, "levels are read as native 16-bit words");
    width = std::max(1u, MaxBitWidth(16, reinterpret_cast<const uint8_t*>(levels.data()), levels.size()));
    rle = rle_allowed && RleBlockBytes16(levels.data(), levels.size()) <
                             OutOfLineBitpackedBytes16(levels.size(), width);
  }
  uint64_t Bytes(const std::vector<uint16_t>& levels, uint64_t begin, uint64_t n) const {
    if (!present) return 0;
    return rle ? RleBlockBytes16(&levels[begin], n) : OutOfLineBitpackedBytes16(n, width);
  }
  std::string Encode(const std::vector<uint16_t>& levels, uint64_t begin, uint64_t n) const {
    return rle ? EncodeRleBlock16(&levels[begin], n) : EncodeOutOfLineBitpacking16(&levels[begin], n, width);
  }
  void Describe(pb::CompressiveEncoding* codec) const {
    if (rle) {
      codec->mutable_rle()->mutable_values()->mutable_flat()->set_bits_per_value(16);
      codec->mutable_rle()->mutable_run_lengths()->mutable_flat()->set_bits_per_value(8);
      return;
    }
    auto* packed = codec->mutable_out_of_line_bitpacking();
    packed->set_uncompressed_bits_per_value(16);
    packed->mutable_values()->mutable_flat()->set_bits_per_value(width);
  }
};

// Whether a chunk of `value_bytes` of values and levels [begin, begin + n) fits the chunk
// header's u16 counts and sizes, and in 2.1 the 32 KiB a chunk may span.
bool LevelsFit(const Levels& lv, const LevelCodec& rep, const LevelCodec& def, uint64_t begin, uint64_t n,
               uint64_t value_bytes, const EncodeOptions& options) {
  if (n > kMaxChunkLevels) return false;
  const uint64_t rep_bytes = rep.Bytes(lv.rep, begin, n), def_bytes = def.Bytes(lv.def, begin, n);
  if (rep_bytes > UINT16_MAX || def_bytes > UINT16_MAX) return false;
  return options.large_chunks ||
         16 + PaddedTo8(rep_bytes) + PaddedTo8(def_bytes) + PaddedTo8(value_bytes) <= kMaxChunkWords21 * 8;
}

// Numbers, dates and times, and dictionary keys of 8 to 64 bits: what the reference
// run-length encodes or bit-packs.
bool CompressibleNumbers(const ShreddedLeaf& leaf, const ValueBlock& values, bool dictionary_keys,
                         const EncodeOptions& options) {
  if (!options.compress_values || values.variable || values.dim > 0 || values.has_item_validity) return false;
  if (values.bits != 8 && values.bits != 16 && values.bits != 32 && values.bits != 64) return false;
  const DataType* type = leaf.leaf ? leaf.leaf->type.get() : nullptr;
  return dictionary_keys || (type && (type->is_numeric() || type->is_temporal()));
}

// Bytes of a page's fixed-width values bit-packed (InlineBitpacking: per block of 1024
// values, one word and the values at the page's widest width), or 0 when packing does not
// apply or would save less than a sixteenth of the plain values. The reference packs
// numbers, dates and times, and dictionary keys, even at their full width; unpacking costs
// every read (positive doubles pack to 63 bits of 64 and unpack at a quarter of a copy's
// speed), so a saving of a bit or two per value is not worth it.
uint64_t PackedBytes(const ShreddedLeaf& leaf, const ValueBlock& values, bool dictionary_keys,
                     const EncodeOptions& options) {
  if (!CompressibleNumbers(leaf, values, dictionary_keys, options)) return 0;
  const uint64_t width =
      MaxBitWidth(uint32_t(values.bits), reinterpret_cast<const uint8_t*>(values.data.data()), values.count);
  const uint64_t blocks = (values.count + kFastLanesValues - 1) / kFastLanesValues;
  const uint64_t packed = blocks * (values.bits / 8 + 128 * width);
  const uint64_t plain = values.count * values.bits / 8;
  return packed * 16 <= plain * 15 ? packed : 0;
}

// Whether a page's values are run-length encoded (Rle), as the reference decides: the runs
// (each a value and a u8 length, longer runs split every 255) take fewer bytes than the
// plain values, and than bit-packing would.
bool RunLengthValues(const ShreddedLeaf& leaf, const ValueBlock& values, bool dictionary_keys,
                     const EncodeOptions& options) {
  if (!CompressibleNumbers(leaf, values, dictionary_keys, options)) return false;
  const uint64_t width = values.bits / 8;
  const uint64_t runs =
      StoredRunCount(uint32_t(values.bits), reinterpret_cast<const uint8_t*>(values.data.data()), values.count);
  const uint64_t rle_bytes = runs * (width + 1);
  if (rle_bytes >= values.count * width) return false;
  const uint64_t packed = PackedBytes(leaf, values, dictionary_keys, options);
  return packed == 0 || packed >= rle_bytes;
}

struct ChunkPlan {
  uint64_t first_value = 0, num_values = 0;
  uint64_t first_level = 0, num_levels = 0;
  bool last = false;
};

// A chunk's buffers: its rep and def levels, then its value buffers (the run lengths
// second, for Rle).
struct ChunkBuffers {
  std::string rep, def, values, run_lengths;
};

// One mini-block page as it is written. The constructor makes the page's choices (the
// levels' codecs, the values' encoding, values per chunk); then PlanChunks, EncodeChunks,
// CompressChunks, WriteChunks, RepetitionIndex and Describe, in that order.
class MiniBlockWriter {
 public:
  MiniBlockWriter(const ShreddedLeaf& leaf, const ValueBlock& values, const EncodeOptions& options,
                  bool dictionary_keys)
      : leaf_(leaf), values_(values), options_(options), lv_(leaf.levels), scheme_(leaf.layers) {
    has_levels_ = lv_.has_rep || lv_.has_def;
    num_levels_ = has_levels_ ? (lv_.has_rep ? lv_.rep.size() : lv_.def.size()) : values.count;
    if (has_levels_) {
      value_level_.reserve(values.count);
      for (uint64_t k = 0; k < num_levels_; ++k)
        if (!lv_.has_def || lv_.def[k] <= scheme_.max_visible_def) value_level_.push_back(k);
      if (value_level_.size() != values.count)
        ThrowInvalid("mini-block page: {} visible levels but {} values", value_level_.size(), values.count);
    }
    rep_ = lv_.has_rep ? LevelCodec(lv_.rep, options.large_chunks) : LevelCodec();
    def_ = lv_.has_def ? LevelCodec(lv_.def, options.large_chunks) : LevelCodec();
    const bool large_offsets = leaf.leaf && leaf.leaf->type->has_large_offsets();
    offset_bytes_ = values.variable ? (large_offsets ? 8 : 4) : 0;
    if (values.variable && !large_offsets && values.data.size() > UINT32_MAX)
      ThrowInvalid("mini-block page: more than 4 GiB of values with 32-bit offsets");
    fixed_values_ = reinterpret_cast<const uint8_t*>(values.data.data());
    // With General compression asked for, 32- and 64-bit values whose bytes vary little are
    // split into byte streams first (the reference tries that before Rle and bit-packing).
    split_ = options.general && options.packed_child_bits.empty() && !values.variable && values.dim == 0 &&
             !values.has_item_validity && ByteStreamsPay(uint32_t(values.bits), fixed_values_, values.count);
    rle_ = !split_ && RunLengthValues(leaf, values, dictionary_keys, options);
    packed_ = !split_ && !rle_ && PackedBytes(leaf, values, dictionary_keys, options) > 0;
    // A bit-packed chunk is one block of 1024 values (padded when shorter); a run-length
    // one at most 4096 values, fewer when its runs would pass a 2.1 chunk.
    fixed_per_chunk_ = values.variable ? 0
                       : rle_          ? kMaxChunkValues
                       : packed_       ? kFastLanesValues
                                       : FixedValuesPerChunk(values.bits);
  }

  // Chunks of whole values, a power of two each but the last, whose levels fit a chunk;
  // nullopt when even two values' levels do not (long runs of empty or null lists).
  std::optional<std::vector<ChunkPlan>> PlanChunks() const {
    std::vector<ChunkPlan> plan;
    uint64_t v0 = 0, l0 = 0;
    while (v0 < values_.count) {
      const uint64_t remaining = values_.count - v0;
      uint64_t n = values_.variable ? VariableValuesInChunk(values_, v0, offset_bytes_)
                                    : std::min(fixed_per_chunk_, remaining);
      for (;;) {
        const bool last = n == remaining;
        const uint64_t level_end = !has_levels_ ? v0 + n : last ? num_levels_ : value_level_[v0 + n - 1] + 1;
        if ((!has_levels_ && !rle_) || LevelsFit(lv_, rep_, def_, l0, level_end - l0, ValueBytes(v0, n), options_)) {
          plan.push_back({v0, n, l0, level_end - l0, last});
          l0 = level_end;
          break;
        }
        // Too many levels (long runs of empty or null lists): fewer values per chunk.
        const uint64_t smaller = last && (n & (n - 1)) ? FloorPow2(n) : n / 2;
        if (smaller < 2) return std::nullopt;
        n = smaller;
      }
      v0 += plan.back().num_values;
    }
    return plan;
  }

  std::vector<ChunkBuffers> EncodeChunks(const std::vector<ChunkPlan>& plan) const {
    std::vector<ChunkBuffers> encoded(plan.size());
    for (size_t c = 0; c < plan.size(); ++c) {
      const ChunkPlan& chunk = plan[c];
      ChunkBuffers& out = encoded[c];
      EncodeValues(chunk, out);
      if (lv_.has_rep) out.rep = rep_.Encode(lv_.rep, chunk.first_level, chunk.num_levels);
      if (lv_.has_def) out.def = def_.Encode(lv_.def, chunk.first_level, chunk.num_levels);
      if (out.rep.size() > UINT16_MAX || out.def.size() > UINT16_MAX || chunk.num_levels > UINT16_MAX)
        ThrowInvalid("mini-block chunk has {} levels, too many", chunk.num_levels);
    }
    return encoded;
  }

  // General compression of each chunk's first value buffer, as the reference applies it:
  // only when those buffers hold at least 4 KiB together and shrink in all. Returns
  // whether it was applied.
  bool CompressChunks(std::vector<ChunkBuffers>& encoded) const {
    if (!options_.general) return false;
    uint64_t before = 0, after = 0;
    for (const auto& b : encoded) before += b.values.size();
    if (before < kMinGeneralBytes) return false;
    std::vector<std::string> compressed(encoded.size());
    bool fits = true;
    for (size_t c = 0; c < encoded.size(); ++c) {
      compressed[c] = CompressBuffer(*options_.general, encoded[c].values);
      after += compressed[c].size();
      fits = fits && ChunkFits(encoded[c], compressed[c].size());
    }
    const bool general = fits && after < before;
    if (general)
      for (size_t c = 0; c < encoded.size(); ++c) encoded[c].values = std::move(compressed[c]);
    return general;
  }

  // Buffer 0 (a metadata word per chunk) and buffer 1 (the chunks).
  void WriteChunks(const std::vector<ChunkPlan>& plan, const std::vector<ChunkBuffers>& encoded,
                   std::string& metadata, std::string& chunks) const {
    for (size_t c = 0; c < plan.size(); ++c) {
      const ChunkPlan& chunk = plan[c];
      std::vector<const std::string*> value_buffers = {&encoded[c].values};
      if (rle_) value_buffers.push_back(&encoded[c].run_lengths);
      for (const std::string* buffer : value_buffers)
        if (!options_.large_chunks && buffer->size() > UINT16_MAX)
          ThrowInvalid("mini-block chunk value buffer of {} bytes does not fit a 2.1 chunk", buffer->size());
      const size_t chunk_start = chunks.size();
      WriteChunk(chunk, encoded[c], value_buffers, chunks);
      const uint64_t words = (chunks.size() - chunk_start) / 8;
      const uint64_t log = chunk.last ? 0 : uint64_t(Log2(chunk.num_values));
      const uint64_t word = ((words - 1) << 4) | log;
      if (options_.large_chunks) {
        if (words - 1 >= (uint64_t(1) << 28)) ThrowInvalid("mini-block chunk of {} bytes is too large", words * 8);
        AppendLE<uint32_t>(metadata, uint32_t(word));
      } else {
        if (words - 1 >= kMaxChunkWords21)
          ThrowInvalid("mini-block chunk of {} bytes does not fit a 2.1 chunk", words * 8);
        AppendLE<uint16_t>(metadata, uint16_t(word));
      }
    }
  }

  // The repetition index (with rep levels): per chunk, the rows that end in it and the
  // levels left over after the last row start.
  std::string RepetitionIndex(const std::vector<ChunkPlan>& plan) const {
    std::string rep_index;
    const uint16_t max_rep = scheme_.max_rep;
    for (size_t c = 0; c < plan.size(); ++c) {
      const ChunkPlan& chunk = plan[c];
      const uint64_t l_end = chunk.first_level + chunk.num_levels;
      // Rows ending in this chunk (a row ends where the next begins, or at the page end),
      // and the levels after the last row start, which belong to a row finished later.
      uint64_t rows = 0, last_start = UINT64_MAX;
      for (uint64_t k = chunk.first_level; k < l_end; ++k) {
        if (lv_.rep[k] == max_rep) {
          if (k != chunk.first_level) ++rows;
          last_start = k;
        }
      }
      uint64_t leftovers = last_start == UINT64_MAX ? chunk.num_levels : l_end - last_start;
      if (c + 1 < plan.size()) {
        // A row that runs to the chunk end and is followed by a row start is complete here.
        const uint64_t next = plan[c + 1].first_level;
        if (lv_.rep[next] == max_rep && leftovers != 0) {
          ++rows;
          leftovers = 0;
        }
      } else {
        ++rows;
        leftovers = 0;
      }
      AppendLE<uint64_t>(rep_index, rows);
      AppendLE<uint64_t>(rep_index, leftovers);
    }
    return rep_index;
  }

  // The layout's levels, value compression (General around it when `general`), layers
  // and counts; a dictionary is described by the caller.
  void Describe(pb::MiniBlockLayout* mb, bool general) const {
    if (lv_.has_rep) rep_.Describe(mb->mutable_rep_compression());
    if (lv_.has_def) def_.Describe(mb->mutable_def_compression());
    auto* vc = DescribeGeneral(general ? options_.general : std::nullopt, mb->mutable_value_compression());
    if (values_.variable) {
      vc = DescribeFsst(options_, vc);
      vc->mutable_variable()->mutable_offsets()->mutable_flat()->set_bits_per_value(offset_bytes_ * 8);
    } else if (rle_) {
      vc->mutable_rle()->mutable_values()->mutable_flat()->set_bits_per_value(values_.bits);
      vc->mutable_rle()->mutable_run_lengths()->mutable_flat()->set_bits_per_value(8);
    } else if (packed_) {
      vc->mutable_inline_bitpacking()->set_uncompressed_bits_per_value(values_.bits);
    } else if (split_) {
      vc->mutable_byte_stream_split()->mutable_values()->mutable_flat()->set_bits_per_value(values_.bits);
    } else if (!options_.packed_child_bits.empty()) {
      auto* packed_struct = vc->mutable_packed_struct();
      for (uint64_t bits : options_.packed_child_bits) packed_struct->add_bits_per_value(bits);
      packed_struct->mutable_values()->mutable_flat()->set_bits_per_value(values_.bits);
    } else {
      vc->mutable_flat()->set_bits_per_value(values_.bits);
    }
  }

  void DescribeCounts(pb::MiniBlockLayout* mb) const {
    for (auto layer : leaf_.layers) mb->add_layers(layer);
    mb->set_num_buffers(rle_ ? 2 : 1);
    mb->set_repetition_index_depth(lv_.has_rep ? 1 : 0);
    mb->set_num_items(values_.count);
    mb->set_has_large_chunk(options_.large_chunks);
  }

 private:
  // The bytes values [v0, v0 + n) take in a chunk (a bound, for Rle).
  uint64_t ValueBytes(uint64_t v0, uint64_t n) const {
    if (values_.variable) return (n + 1) * offset_bytes_ + values_.offsets[v0 + n] - values_.offsets[v0];
    if (rle_) {  // each run splits every 255 values at most: bound the runs by n / 255 more
      const uint64_t runs = RunCount(uint32_t(values_.bits), fixed_values_ + v0 * values_.bits / 8, n) + n / 255;
      return PaddedTo8(runs * values_.bits / 8) + runs + 8;
    }
    if (packed_) return values_.bits / 8 + 128 * values_.bits;
    return (n * values_.bits + 7) / 8;
  }

  void EncodeValues(const ChunkPlan& chunk, ChunkBuffers& out) const {
    std::string& value_buffer = out.values;
    // The chunk's first fixed-width value.
    auto first = [&] { return fixed_values_ + chunk.first_value * values_.bits / 8; };
    if (rle_) {
      std::tie(value_buffer, out.run_lengths) = EncodeRle(uint32_t(values_.bits), first(), chunk.num_values);
    } else if (values_.variable) {
      const uint64_t base = values_.offsets[chunk.first_value];
      const uint64_t start = (chunk.num_values + 1) * offset_bytes_;
      for (uint64_t k = 0; k <= chunk.num_values; ++k) {
        const uint64_t off = values_.offsets[chunk.first_value + k] - base + start;
        if (offset_bytes_ == 8) AppendLE<uint64_t>(value_buffer, off);
        else AppendLE<uint32_t>(value_buffer, uint32_t(off));
      }
      value_buffer.append(values_.data, base, values_.offsets[chunk.first_value + chunk.num_values] - base);
      while (value_buffer.size() % offset_bytes_) value_buffer.push_back(kVariablePadByte);
    } else if (packed_) {
      value_buffer = EncodeInlineBitpacking(uint32_t(values_.bits), first(), chunk.num_values);
    } else if (split_) {
      value_buffer = EncodeByteStreamSplit(uint32_t(values_.bits), first(), chunk.num_values);
    } else {
      ValueBlock slice;
      slice.AppendFrom(values_, chunk.first_value, chunk.num_values);
      value_buffer = std::move(slice.data);
    }
  }

  // Whether a chunk with a first value buffer of `first_bytes` fits the chunk header's
  // sizes and the chunk metadata word.
  bool ChunkFits(const ChunkBuffers& b, uint64_t first_bytes) const {
    const uint64_t size_bytes = options_.large_chunks ? 4 : 2;
    const uint64_t header = 2 + (lv_.has_rep ? 2 : 0) + (lv_.has_def ? 2 : 0) + size_bytes * (rle_ ? 2 : 1);
    const uint64_t bytes = PaddedTo8(header) + PaddedTo8(b.rep.size()) + PaddedTo8(b.def.size()) +
                           PaddedTo8(first_bytes) + PaddedTo8(b.run_lengths.size());
    if (options_.large_chunks) return bytes / 8 - 1 < (uint64_t(1) << 28);
    return first_bytes <= UINT16_MAX && b.run_lengths.size() <= UINT16_MAX && bytes / 8 - 1 < kMaxChunkWords21;
  }

  // One chunk: its header (level count, level and value buffer sizes), then each buffer,
  // 8-byte aligned.
  void WriteChunk(const ChunkPlan& chunk, const ChunkBuffers& b, const std::vector<const std::string*>& value_buffers,
                  std::string& chunks) const {
    AppendLE<uint16_t>(chunks, uint16_t(has_levels_ ? chunk.num_levels : 0));
    if (lv_.has_rep) AppendLE<uint16_t>(chunks, uint16_t(b.rep.size()));
    if (lv_.has_def) AppendLE<uint16_t>(chunks, uint16_t(b.def.size()));
    for (const std::string* buffer : value_buffers) {
      if (options_.large_chunks) AppendLE<uint32_t>(chunks, uint32_t(buffer->size()));
      else AppendLE<uint16_t>(chunks, uint16_t(buffer->size()));
    }
    PadTo8(chunks);
    if (lv_.has_rep) {
      chunks += b.rep;
      PadTo8(chunks);
    }
    if (lv_.has_def) {
      chunks += b.def;
      PadTo8(chunks);
    }
    for (const std::string* buffer : value_buffers) {
      chunks += *buffer;
      PadTo8(chunks);
    }
  }

  const ShreddedLeaf& leaf_;
  const ValueBlock& values_;
  const EncodeOptions& options_;
  const Levels& lv_;
  const LevelScheme scheme_;
  bool has_levels_ = false;
  uint64_t num_levels_ = 0;
  std::vector<uint64_t> value_level_;  // the level index of each visible value
  LevelCodec rep_, def_;
  uint64_t offset_bytes_ = 0;  // of a variable-width value's offsets
  const uint8_t* fixed_values_ = nullptr;
  bool split_ = false, rle_ = false, packed_ = false;  // the values' encoding; none: Flat or Variable
  uint64_t fixed_per_chunk_ = 0;
};

}  // namespace

// A dictionary as one block: Flat values, or Variable (a header of the offset width in
// bits and the start of the bytes, then offsets from 0 into the bytes, then the bytes).
// The offsets are as wide as the column's own: readers build the column's array from the
// dictionary's offsets and refuse 32-bit ones for large_utf8 / large_binary (the
// reference writes u64 64 + u64 start + u64 offsets for those).
std::string DictionaryBlock(const ValueBlock& dictionary, bool large_offsets, pb::CompressiveEncoding* encoding) {
  if (!dictionary.variable) {
    encoding->mutable_flat()->set_bits_per_value(dictionary.bits);
    return dictionary.data;
  }
  const uint64_t width = large_offsets ? 8 : 4;
  if (!large_offsets && dictionary.data.size() > UINT32_MAX) ThrowInvalid("mini-block dictionary of more than 4 GiB");
  encoding->mutable_variable()->mutable_offsets()->mutable_flat()->set_bits_per_value(uint32_t(width * 8));
  std::string out;
  auto append = [&](uint64_t v) {
    if (large_offsets) {
      AppendLE<uint64_t>(out, v);
    } else {
      AppendLE<uint32_t>(out, uint32_t(v));
    }
  };
  append(width * 8);
  append(width * (2 + dictionary.count + 1));
  for (uint64_t k = 0; k <= dictionary.count; ++k) append(dictionary.offsets[k]);
  return out + dictionary.data;
}

std::optional<EncodedPage> EncodeMiniBlock(const ShreddedLeaf& leaf, const ValueBlock& values,
                                           const EncodeOptions& options, const ValueBlock* dictionary) {
  const MiniBlockWriter writer(leaf, values, options, dictionary != nullptr);
  const std::optional<std::vector<ChunkPlan>> plan = writer.PlanChunks();
  if (!plan) return std::nullopt;
  std::vector<ChunkBuffers> encoded = writer.EncodeChunks(*plan);
  const bool general = writer.CompressChunks(encoded);
  std::string metadata, chunks;
  writer.WriteChunks(*plan, encoded, metadata, chunks);
  const bool has_rep = leaf.levels.has_rep;
  std::string rep_index = has_rep ? writer.RepetitionIndex(*plan) : std::string();

  pb::PageLayout layout;
  auto* mb = layout.mutable_mini_block_layout();
  writer.Describe(mb, general);
  std::string dictionary_bytes;
  if (dictionary) {
    dictionary_bytes =
        DictionaryBlock(*dictionary, leaf.leaf && leaf.leaf->type->has_large_offsets(),
                        DescribeGeneral(options.dictionary_general, mb->mutable_dictionary()));
    if (options.dictionary_general) dictionary_bytes = CompressBuffer(*options.dictionary_general, dictionary_bytes);
    mb->set_num_dictionary_items(dictionary->count);
  }
  writer.DescribeCounts(mb);

  EncodedPage page;
  page.num_rows = leaf.num_rows;
  page.buffers.push_back(std::move(metadata));
  page.buffers.push_back(std::move(chunks));
  if (dictionary) page.buffers.push_back(std::move(dictionary_bytes));
  if (has_rep) page.buffers.push_back(std::move(rep_index));
  page.encoding = WrapAny(kPageLayoutUrl, layout);
  return page;
}

// ------------------------------------------------------------------------------- reading

namespace {

// out[i] = value rows[i] - first of `values`, `row_bytes` bytes each.
template <size_t kBytes>
void GatherFixed(const uint8_t* values, std::span<const uint64_t> rows, uint64_t first, uint8_t* out) {
  for (size_t i = 0; i < rows.size(); ++i) std::memcpy(out + i * kBytes, values + (rows[i] - first) * kBytes, kBytes);
}

void GatherPlainValues(const uint8_t* values, std::span<const uint64_t> rows, uint64_t first, uint64_t row_bytes,
                       uint8_t* out) {
  switch (row_bytes) {
    case 1: return GatherFixed<1>(values, rows, first, out);
    case 2: return GatherFixed<2>(values, rows, first, out);
    case 4: return GatherFixed<4>(values, rows, first, out);
    case 8: return GatherFixed<8>(values, rows, first, out);
    case 16: return GatherFixed<16>(values, rows, first, out);
    default:
      for (size_t i = 0; i < rows.size(); ++i)
        std::memcpy(out + i * row_bytes, values + (rows[i] - first) * row_bytes, row_bytes);
  }
}

struct ChunkMeta {
  uint64_t offset = 0, size = 0;
  uint64_t first_value = 0, num_values = 0;
};

struct DecodedChunk {
  Levels levels;
  ValueBlock values;  // as stored: dictionary indices, FSST codes (see AppendItems)
  uint64_t num_levels = 0;
};

// A thread's read-ahead window over one mini-block page's value buffer (see
// MiniBlockReader::ChunkBytes). Each thread keeps its own, so that threads reading
// different rows of one page (a parallel scan's morsels) each read ahead in order
// instead of taking a shared window from each other.
struct ChunkWindow {
  uint64_t owner = 0;  // the reader's id (MiniBlockReader::id_); 0: free
  uint64_t used = 0;   // when last used, for replacement
  std::unique_ptr<uint8_t[]> bytes;  // [offset, offset + size) of value buffer 1
  uint64_t offset = 0, size = 0, capacity = 0;
  uint64_t next_bytes = 0;  // the next window's size when reads stay sequential
  size_t last_chunk = SIZE_MAX;
  // PrefetchRows fetched chunks: they are read one by one (until the window is released
  // after the page's last chunk).
  bool prefetched = false;
};

// The calling thread's window for reader `owner`. When it has none: null unless `make`,
// else the least recently used of its kThreadWindows is taken over (its buffer kept for
// reuse).
ChunkWindow* ThreadWindow(uint64_t owner, bool make) {
  constexpr size_t kThreadWindows = 8;
  thread_local std::array<ChunkWindow, kThreadWindows> windows;
  thread_local uint64_t tick = 0;
  ChunkWindow* oldest = &windows[0];
  for (ChunkWindow& w : windows) {
    if (w.owner == owner) {
      w.used = ++tick;
      return &w;
    }
    if (w.used < oldest->used) oldest = &w;
  }
  if (!make) return nullptr;
  ChunkWindow& w = *oldest;
  w.owner = owner;
  w.used = ++tick;
  w.offset = w.size = w.next_bytes = 0;
  w.last_chunk = SIZE_MAX;
  w.prefetched = false;
  return &w;
}

std::atomic<uint64_t> next_reader_id{1};

class MiniBlockReader final : public PageReader {
 public:
  MiniBlockReader(PageSource page, const pb::MiniBlockLayout& layout)
      : page_(std::move(page)), layout_(layout) {
    const std::string& where = page_.where;
    has_rep_ = layout.has_rep_compression();
    has_def_ = layout.has_def_compression();
    if (has_rep_) CheckLevelCodec(layout.rep_compression(), "repetition", where);
    if (has_def_) CheckLevelCodec(layout.def_compression(), "definition", where);
    codec_ = ParseValueCodec(layout.value_compression(), where);
    const uint64_t expected_buffers =
        codec_.compressed ? ChunkBufferCount(*codec_.compressed) : codec_.has_item_validity ? 2 : 1;
    if (layout.num_buffers() != expected_buffers)
      ThrowCorrupt("{}: {} buffers per chunk, expected {}", where, layout.num_buffers(), expected_buffers);
    for (int k = 0; k < layout.layers_size(); ++k) layers_.push_back(pb::RepDefLayer(layout.layers(k)));
    const LevelScheme scheme(layers_);
    max_rep_ = scheme.max_rep;
    max_visible_def_ = scheme.max_visible_def;
    if (max_rep_ > 0 && !has_rep_) ThrowCorrupt("{}: list layers but no repetition levels", where);
    if (layout.has_dictionary()) {
      // Buffer 2 holds the dictionary; the chunks hold indices.
      if (codec_.variable || codec_.dim || codec_.fsst || codec_.variable_packed)
        ThrowCorrupt("{}: dictionary indices must be fixed-width integers", where);
      dictionary_ = std::make_shared<const ValueBlock>(
          DecodeDictionary(layout.dictionary(), page_.ReadBuffer(2), layout.num_dictionary_items(), where));
    }
    LoadMetadata();
  }

  const std::vector<pb::RepDefLayer>& layers() const override { return layers_; }

  // Without levels each row is one value; byte-aligned fixed-width values that need no
  // dictionary look-up or post-processing are then copied from the decoded chunks as is.
  uint64_t PlainRowBytes() const override {
    const uint64_t bits = codec_.dim ? codec_.item_bits * codec_.dim : codec_.bits;
    const bool plain = !has_rep_ && !has_def_ && !dictionary_ && !codec_.variable && !codec_.has_item_validity &&
                       !codec_.fsst && !codec_.variable_packed && bits == codec_.bits && bits % 8 == 0;
    return plain ? bits / 8 : 0;
  }

  void ReadPlainRows(uint64_t start, uint64_t count, uint8_t* out) const override {
    const uint64_t row_bytes = PlainRowBytes();
    if (row_bytes == 0) PageReader::ReadPlainRows(start, count, out);
    if (start + count > page_.num_rows)
      ThrowInvalid("{}: rows {}+{} are outside the page of {} rows", page_.where, start, count, page_.num_rows);
    // As in ReadRows without repetition: value i of the page is row i.
    if (count == 0) return;
    uint64_t row = start;
    for (size_t c = ChunkOfValue(start); row < start + count; ++c) {
      if (c >= chunks_.size()) ThrowCorrupt("{}: the chunks end before row {}", page_.where, row);
      const ChunkMeta& meta = chunks_[c];
      const uint64_t begin = row - meta.first_value;
      const uint64_t n = std::min(meta.num_values - begin, start + count - row);
      if (!codec_.compressed && layout_.num_buffers() == 1) {
        CopyPlainValues(c, begin, n, row_bytes, out + (row - start) * row_bytes);
        row += n;
        continue;
      }
      auto chunk = Chunk(c);
      if (begin + n > chunk->values.count || (begin + n) * row_bytes > chunk->values.data.size())
        ThrowCorrupt("{}, chunk {}: value range {}+{} exceeds the {} decoded values", page_.where, c, begin, n,
                     chunk->values.count);
      std::memcpy(out + (row - start) * row_bytes, chunk->values.data.data() + begin * row_bytes, n * row_bytes);
      row += n;
    }
  }

  // The rows that fall in one chunk, one after the other, are gathered from it at once:
  // a take touching most chunks decodes (or locates) each once, not once per row.
  void TakePlainRows(std::span<const uint64_t> rows, uint64_t first_row, uint8_t* out) const override {
    const uint64_t row_bytes = PlainRowBytes();
    if (row_bytes == 0) return PageReader::TakePlainRows(rows, first_row, out);
    if (MayPrefetch()) {
      std::vector<std::pair<uint64_t, uint64_t>> runs;
      for (uint64_t row : rows)
        if (row >= first_row) runs.emplace_back(row - first_row, 1);
      PrefetchRows(runs);
    }
    for (size_t k = 0; k < rows.size();) {
      const uint64_t value = rows[k] - first_row;
      if (rows[k] < first_row || value >= page_.num_rows)
        ThrowInvalid("{}: row {} is outside the page of {} rows", page_.where, value, page_.num_rows);
      const size_t c = ChunkOfValue(value);
      if (c >= chunks_.size()) ThrowCorrupt("{}: the chunks end before row {}", page_.where, value);
      const ChunkMeta& meta = chunks_[c];
      const uint64_t chunk_first = first_row + meta.first_value;
      uint64_t last = value - meta.first_value;  // the furthest value read from the chunk
      size_t j = k + 1;
      for (; j < rows.size() && rows[j] >= chunk_first && rows[j] - chunk_first < meta.num_values; ++j)
        last = std::max(last, rows[j] - chunk_first);
      const std::span<const uint64_t> group = rows.subspan(k, j - k);
      if (!codec_.compressed && layout_.num_buffers() == 1) {
        GatherPlainValues(PlainValues(c, row_bytes), group, chunk_first, row_bytes, out + k * row_bytes);
        ReleaseWindowAfterLastChunk(c);
      } else if (!GatherBitpacked(c, group, chunk_first, row_bytes, out + k * row_bytes)) {
        auto chunk = Chunk(c);
        if (last >= chunk->values.count || (last + 1) * row_bytes > chunk->values.data.size())
          ThrowCorrupt("{}, chunk {}: value {} is past the {} decoded values", page_.where, c, last, chunk->values.count);
        GatherPlainValues(reinterpret_cast<const uint8_t*>(chunk->values.data.data()), group, chunk_first, row_bytes,
                          out + k * row_bytes);
      }
      k = j;
    }
  }

  // Whether PrefetchRows can fetch anything. A local file ignores hints: there, building
  // the runs of a large take would be all its cost.
  bool MayPrefetch() const { return !has_rep_ && !chunks_.empty() && page_.Prefetch(1, {}); }

  // The chunks holding the runs (without repetition a row is a value), fetched together;
  // reading them then costs no request, so the read-ahead window stays shut meanwhile
  // (widening it would fetch past what was prefetched).
  void PrefetchRows(std::span<const std::pair<uint64_t, uint64_t>> runs) const override {
    if (!MayPrefetch()) return;
    std::vector<io::ByteRange> ranges;
    for (const auto& [start, count] : runs) {
      if (count == 0 || start + count > page_.num_rows) return;  // ReadRows reports it
      for (size_t c = ChunkOfValue(start); c < chunks_.size() && chunks_[c].first_value < start + count; ++c)
        if (ranges.empty() || ranges.back().offset != chunks_[c].offset)
          ranges.push_back({chunks_[c].offset, chunks_[c].size, nullptr});
    }
    if (ranges.size() < 2 || !page_.Prefetch(1, std::move(ranges))) return;
    ThreadWindow(id_, true)->prefetched = true;
  }

  PageItems ReadRows(uint64_t start, uint64_t count) const override {
    PageItems out;
    out.num_rows = count;
    out.levels.has_rep = has_rep_;
    out.levels.has_def = has_def_;
    InitShape(out.values);
    if (count == 0) return out;
    if (start + count > page_.num_rows)
      ThrowInvalid("{}: rows {}+{} are outside the page of {} rows", page_.where, start, count, page_.num_rows);
    if (!has_rep_) {
      // One item (and one value) per row.
      size_t c = ChunkOfValue(start);
      uint64_t row = start;
      while (row < start + count) {
        auto chunk = Chunk(c);
        const ChunkMeta& meta = chunks_[c];
        const uint64_t begin = row - meta.first_value;
        const uint64_t n = std::min(meta.num_values - begin, start + count - row);
        AppendItems(out, *chunk, begin, begin + n, begin, n);
        row += n;
        ++c;
      }
      return out;
    }
    // Chunks from the one where row `start` begins (found with the repetition index).
    size_t c0 = 0;
    uint64_t rows_before = 0;
    const bool indexed = !rep_rows_.empty();
    if (indexed) {
      c0 = size_t(std::upper_bound(started_through_.begin(), started_through_.end(), start) - started_through_.begin());
      if (c0 >= chunks_.size()) ThrowCorrupt("{}: repetition index does not cover row {}", page_.where, start);
      rows_before = c0 == 0 ? 0 : started_through_[c0 - 1];
    }
    // Walk the levels from there, starting at the row start and stopping at the start of
    // the first row after the range (or the page end).
    const uint64_t skip_rows = start - rows_before;
    uint64_t row_starts = 0;
    bool started = false, done = false;
    for (size_t c = c0; c < chunks_.size() && !done; ++c) {
      auto chunk = Chunk(c);
      const auto& rep = chunk->levels.rep;
      uint64_t visible = 0, level_begin = 0, visible_begin = 0, k = 0;
      bool contributes = started;
      for (; k < chunk->num_levels; ++k) {
        if (rep[k] == max_rep_) {
          if (started && row_starts == skip_rows + count) {
            done = true;
            break;
          }
          if (!started && row_starts == skip_rows) {
            started = contributes = true;
            level_begin = k;
            visible_begin = visible;
          }
          ++row_starts;
        }
        if (!has_def_ || chunk->levels.def[k] <= max_visible_def_) ++visible;
      }
      if (contributes) AppendItems(out, *chunk, level_begin, k, visible_begin, visible - visible_begin);
      // The index tells when the range's last row ends exactly at this chunk's end.
      if (indexed && started && completed_through_[c] >= start + count && started_through_[c] == completed_through_[c])
        done = true;
    }
    if (!started) ThrowCorrupt("{}: row {} not found in the repetition levels", page_.where, start);
    return out;
  }

 private:
  // The shape of the values ReadRows returns (a dictionary's items when there is one).
  void InitShape(ValueBlock& values) const {
    if (dictionary_) {
      values.variable = dictionary_->variable;
      values.bits = dictionary_->bits;
      return;
    }
    InitStoredShape(values);
  }

  // The shape of the values as a chunk stores them (dictionary indices when there is one).
  void InitStoredShape(ValueBlock& values) const {
    values.variable = codec_.variable;
    values.bits = codec_.bits;
    if (codec_.dim) {
      values.dim = codec_.dim;
      values.has_item_validity = codec_.has_item_validity;
      values.bits = codec_.item_bits * codec_.dim;
    }
  }

  void LoadMetadata() {
    const std::string& where = page_.where;
    const std::string meta = page_.ReadBuffer(0);
    const size_t word_bytes = layout_.has_large_chunk() ? 4 : 2;
    if (meta.size() % word_bytes) ThrowCorrupt("{}: chunk metadata of {} bytes", where, meta.size());
    const size_t num_chunks = meta.size() / word_bytes;
    const uint64_t total_values = layout_.num_items();
    uint64_t offset = 0, values = 0;
    for (size_t c = 0; c < num_chunks; ++c) {
      const uint64_t word = word_bytes == 4 ? LoadLE<uint32_t>(meta.data() + c * 4) : LoadLE<uint16_t>(meta.data() + c * 2);
      const uint64_t log = word & 0xF;
      const uint64_t size = ((word >> 4) + 1) * 8;
      uint64_t n;
      if (log == 0) {
        if (c + 1 != num_chunks) ThrowCorrupt("{}: chunk {} of {} has no value count", where, c, num_chunks);
        if (values > total_values) ThrowCorrupt("{}: chunks hold more than the page's {} values", where, total_values);
        n = total_values - values;
      } else {
        n = uint64_t(1) << log;
      }
      chunks_.push_back({offset, size, values, n});
      offset += size;
      values += n;
    }
    if (values != total_values) ThrowCorrupt("{}: chunks hold {} values, the page {}", where, values, total_values);
    if (offset > page_.buffers.at(1).second)
      ThrowCorrupt("{}: chunks need {} bytes but the chunk buffer has {}", where, offset, page_.buffers.at(1).second);
    if (has_rep_ && layout_.repetition_index_depth() > 0) {
      const size_t index_buffer = layout_.has_dictionary() ? 3 : 2;
      const std::string index = page_.ReadBuffer(index_buffer);
      const size_t stride = size_t(layout_.repetition_index_depth()) + 1;
      if (index.size() != num_chunks * stride * 8)
        ThrowCorrupt("{}: repetition index of {} bytes for {} chunks", where, index.size(), num_chunks);
      uint64_t completed = 0;
      for (size_t c = 0; c < num_chunks; ++c) {
        const uint64_t rows = LoadLE<uint64_t>(index.data() + c * stride * 8);
        const uint64_t leftover = LoadLE<uint64_t>(index.data() + (c * stride + stride - 1) * 8);
        rep_rows_.push_back(rows);
        completed += rows;
        completed_through_.push_back(completed);
        started_through_.push_back(completed + (leftover > 0 ? 1 : 0));
      }
      if (completed != page_.num_rows)
        ThrowCorrupt("{}: repetition index counts {} rows, the page {}", where, completed, page_.num_rows);
    }
  }

  size_t ChunkOfValue(uint64_t value) const {
    auto it = std::upper_bound(chunks_.begin(), chunks_.end(), value,
                               [](uint64_t v, const ChunkMeta& m) { return v < m.first_value; });
    return size_t(it - chunks_.begin()) - 1;
  }

  std::shared_ptr<const DecodedChunk> Chunk(size_t c) const {
    // A corrupt repetition index or chunk table can point past the last chunk (found by
    // fuzz/v21_miniblock_fuzz.cc).
    if (c >= chunks_.size()) ThrowCorrupt("{}: no chunk {} (the page has {})", page_.where, c, chunks_.size());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto& [index, chunk] : cache_)
        if (index == c) return chunk;
    }
    auto decoded = std::make_shared<DecodedChunk>(Decode(c));
    std::lock_guard<std::mutex> lock(mutex_);
    cache_.emplace_front(c, decoded);
    if (cache_.size() > 4) cache_.pop_back();
    return decoded;
  }

  // Chunk c's bytes: in place when the file's bytes are in memory, else from the calling
  // thread's read-ahead window over the page's value buffer (valid until its next read of
  // this page). Chunks read in order widen the window, doubling up to kMaxWindowBytes: a
  // scan (or a take touching most chunks) then costs a few large reads instead of one per
  // chunk, while a lookup of one chunk still reads only that chunk.
  const uint8_t* ChunkBytes(size_t c) const {
    const ChunkMeta& meta = chunks_[c];
    if (const uint8_t* resident = page_.ResidentRange(1, meta.offset, meta.size)) return resident;  // no copy
    ChunkWindow& w = *ThreadWindow(id_, true);
    const bool sequential = w.last_chunk != SIZE_MAX && c == w.last_chunk + 1;
    w.last_chunk = c;
    if (meta.offset >= w.offset && meta.offset + meta.size <= w.offset + w.size) return w.bytes.get() + (meta.offset - w.offset);
    w.next_bytes = sequential && !w.prefetched ? std::min<uint64_t>(std::max<uint64_t>(w.next_bytes * 2, 16 << 10), kMaxWindowBytes) : 0;
    const uint64_t buffer_size = page_.buffers.size() > 1 ? page_.buffers[1].second : 0;
    const uint64_t rest = buffer_size - std::min(buffer_size, meta.offset);
    const uint64_t want = std::max<uint64_t>(meta.size, std::min(w.next_bytes, rest));
    if (w.capacity < want) {  // the old bytes are not kept: no copy, no zeroing
      w.bytes = std::make_unique_for_overwrite<uint8_t[]>(want);
      w.capacity = want;
    }
    w.size = 0;  // until the read succeeds
    page_.ReadExactInto(1, meta.offset, want, w.bytes.get());
    w.size = want;
    w.offset = meta.offset;
    return w.bytes.get();
  }

  void ReadChunkBytes(size_t c, uint8_t* out) const {
    std::memcpy(out, ChunkBytes(c), chunks_[c].size);
    ReleaseWindowAfterLastChunk(c);
  }

  // A window kept after the thread has passed the page's last chunk would only hold
  // memory.
  void ReleaseWindowAfterLastChunk(size_t c) const {
    if (c + 1 < chunks_.size()) return;
    if (ChunkWindow* w = ThreadWindow(id_, false)) *w = ChunkWindow{};
  }

  // For an uncompressed plain page (PlainRowBytes without a codec): values [begin, +n) of
  // chunk c copied straight from its bytes, with no decoded copy of the chunk.
  void CopyPlainValues(size_t c, uint64_t begin, uint64_t n, uint64_t row_bytes, uint8_t* out) const {
    std::memcpy(out, PlainValues(c, row_bytes) + begin * row_bytes, n * row_bytes);
    ReleaseWindowAfterLastChunk(c);
  }

  // The values of chunk c of an uncompressed plain page, in place (as ChunkBytes).
  const uint8_t* PlainValues(size_t c, uint64_t row_bytes) const {
    const std::string_view values = ValueBuffer(c);
    // The chunk must hold all of its values, as a decode would check, not just those read.
    if (chunks_[c].num_values * row_bytes > values.size())
      ThrowCorrupt("{}, chunk {}: {} values of {} bytes do not fit the chunk's {} value bytes", page_.where, c,
                   chunks_[c].num_values, row_bytes, values.size());
    return reinterpret_cast<const uint8_t*>(values.data());
  }

  // The one value buffer of chunk c of a page without levels, in place (as ChunkBytes).
  std::string_view ValueBuffer(size_t c) const {
    const ChunkMeta& meta = chunks_[c];
    const uint8_t* bytes = ChunkBytes(c);
    // [u16 levels][u16 or u32 size of the one buffer], padded to 8, then the values.
    const uint64_t size_width = layout_.has_large_chunk() ? 4 : 2;
    const uint64_t data_start = (2 + size_width + 7) / 8 * 8;
    if (meta.size < 2 + size_width) ThrowCorrupt("{}, chunk {}: chunk of {} bytes is truncated", page_.where, c, meta.size);
    const uint64_t data_size = size_width == 4 ? LoadLE<uint32_t>(bytes + 2) : LoadLE<uint16_t>(bytes + 2);
    if (data_start + data_size > meta.size)
      ThrowCorrupt("{}, chunk {}: a value buffer of {} bytes does not fit the chunk's {} bytes", page_.where, c,
                   data_size, meta.size);
    return {reinterpret_cast<const char*>(bytes + data_start), data_size};
  }

  // Rows `group` of chunk c (all in it) unpacked one by one from its bit-packed values,
  // with no decoded copy of the chunk: for a take that needs under a quarter of them, when
  // the page's values are InlineBitpacking alone. False when the chunk must be decoded.
  bool GatherBitpacked(size_t c, std::span<const uint64_t> group, uint64_t chunk_first, uint64_t row_bytes,
                       uint8_t* out) const {
    if (!codec_.compressed) return false;
    const pb::CompressiveEncoding& e = *codec_.compressed;
    if (e.compression_case() != pb::CompressiveEncoding::kInlineBitpacking || e.inline_bitpacking().has_values() ||
        e.inline_bitpacking().uncompressed_bits_per_value() != row_bytes * 8 || layout_.num_buffers() != 1 ||
        group.size() * 4 >= chunks_[c].num_values)
      return false;
    const bool gathered = GatherInlineBitpacked(uint32_t(row_bytes * 8), ValueBuffer(c), chunks_[c].num_values,
                                                group, chunk_first, out);
    ReleaseWindowAfterLastChunk(c);
    return gathered;
  }
  static constexpr uint64_t kMaxWindowBytes = 256 << 10;

  DecodedChunk Decode(size_t c) const {
    const ChunkMeta& meta = chunks_[c];
    const std::string where = page_.where + ", chunk " + std::to_string(c);
    // Read once into uninitialized memory; the parts below are views of it.
    const BufferPtr chunk_bytes = Buffer::AllocateUninitialized(meta.size);
    ReadChunkBytes(c, chunk_bytes->mutable_data());
    const std::string_view bytes = chunk_bytes->view();
    size_t pos = 0;
    auto need = [&](size_t n) {
      if (pos + n > bytes.size()) ThrowCorrupt("{}: chunk of {} bytes is truncated", where, bytes.size());
    };
    need(2);
    DecodedChunk out;
    out.num_levels = LoadLE<uint16_t>(bytes.data());
    pos = 2;
    uint64_t rep_size = 0, def_size = 0;
    if (has_rep_) {
      need(2);
      rep_size = LoadLE<uint16_t>(bytes.data() + pos);
      pos += 2;
    }
    if (has_def_) {
      need(2);
      def_size = LoadLE<uint16_t>(bytes.data() + pos);
      pos += 2;
    }
    std::vector<uint64_t> sizes;
    for (uint64_t b = 0; b < layout_.num_buffers(); ++b) {
      if (layout_.has_large_chunk()) {
        need(4);
        sizes.push_back(LoadLE<uint32_t>(bytes.data() + pos));
        pos += 4;
      } else {
        need(2);
        sizes.push_back(LoadLE<uint16_t>(bytes.data() + pos));
        pos += 2;
      }
    }
    auto take = [&](uint64_t size) {
      pos = (pos + 7) / 8 * 8;
      need(size);
      std::string_view part = bytes.substr(pos, size);
      pos += size;
      return part;
    };
    if (!has_rep_ && !has_def_) out.num_levels = meta.num_values;
    if (has_rep_) {
      out.levels.has_rep = true;
      out.levels.rep = DecodeLevels(layout_.rep_compression(), take(rep_size), out.num_levels, where + ", repetition");
    }
    if (has_def_) {
      out.levels.has_def = true;
      out.levels.def = DecodeLevels(layout_.def_compression(), take(def_size), out.num_levels, where + ", definition");
      // Without repetition, value k has definition level k (ReadRows indexes both alike).
      if (!has_rep_ && out.levels.def.size() < meta.num_values)
        ThrowCorrupt("{}: {} definition levels for {} values", where, out.levels.def.size(), meta.num_values);
    }
    std::vector<std::string_view> buffers;
    for (uint64_t size : sizes) buffers.push_back(take(size));
    const uint64_t n = meta.num_values;
    ValueBlock& v = out.values;
    InitStoredShape(v);
    v.count = n;
    if (codec_.compressed) {
      v = DecodeChunkValues(*codec_.compressed, std::vector<std::string>(buffers.begin(), buffers.end()), n, where);
      if (v.variable != codec_.variable || (!v.variable && v.bits != codec_.bits))
        ThrowCorrupt("{}: chunk values decode to a different shape than the page declares", where);
    } else if (codec_.variable) {
      const std::string_view buf = buffers[0];
      const uint64_t w = codec_.offset_bits / 8;
      if (buf.size() < (n + 1) * w) ThrowCorrupt("{}: {} bytes cannot hold {} offsets", where, buf.size(), n + 1);
      v.offsets.resize(n + 1);
      const uint64_t first = w == 8 ? LoadLE<uint64_t>(buf.data()) : LoadLE<uint32_t>(buf.data());
      for (uint64_t k = 0; k <= n; ++k) {
        const uint64_t off = w == 8 ? LoadLE<uint64_t>(buf.data() + k * 8) : LoadLE<uint32_t>(buf.data() + k * 4);
        if (off < first || off > buf.size() || (k > 0 && off < v.offsets[k - 1] + first))
          ThrowCorrupt("{}: value offset {} is outside the chunk", where, off);
        v.offsets[k] = off - first;
      }
      v.data = std::string(buf.substr(first, v.offsets[n]));
    } else {
      const std::string_view data = buffers.back();
      const uint64_t need_bytes = (n * v.bits + 7) / 8;
      if (data.size() < need_bytes) ThrowCorrupt("{}: {} value bytes, expected {}", where, data.size(), need_bytes);
      v.data = std::string(data.substr(0, need_bytes));
      if (codec_.has_item_validity) {
        const std::string_view validity = buffers[0];
        if (validity.size() * 8 < n * codec_.dim) ThrowCorrupt("{}: item validity too short", where);
        v.item_validity = std::string(validity);
      }
    }
    return out;
  }

  // Whether a chunk's values as stored still need a dictionary look-up or FinishValues.
  bool NeedsFinishing() const { return dictionary_ || codec_.fsst || codec_.variable_packed; }

  // Appends levels [level_begin, level_end) and values [value_begin, +n_values) of a chunk.
  // Dictionary look-ups and FinishValues (FSST expansion, ...) run here, on the values taken
  // only, so that a take of one row from a chunk expands one value, not the chunk.
  void AppendItems(PageItems& out, const DecodedChunk& chunk, uint64_t level_begin, uint64_t level_end,
                   uint64_t value_begin, uint64_t n_values) const {
    if (has_rep_)
      out.levels.rep.insert(out.levels.rep.end(), chunk.levels.rep.begin() + long(level_begin),
                            chunk.levels.rep.begin() + long(level_end));
    if (has_def_)
      out.levels.def.insert(out.levels.def.end(), chunk.levels.def.begin() + long(level_begin),
                            chunk.levels.def.begin() + long(level_end));
    if (!NeedsFinishing()) {
      out.values.AppendFrom(chunk.values, value_begin, n_values);
      return;
    }
    if (n_values == 0) return;
    ValueBlock stored;
    stored.AppendFrom(chunk.values, value_begin, n_values);
    const std::string& where = page_.where;
    if (dictionary_) stored = LookUpDictionary(*dictionary_, stored, where);
    FinishValues(codec_, stored, where);
    if (out.values.count == 0) out.values = std::move(stored);
    else out.values.AppendFrom(stored, 0, stored.count);
  }

  PageSource page_;
  pb::MiniBlockLayout layout_;
  std::vector<pb::RepDefLayer> layers_;
  bool has_rep_ = false, has_def_ = false;
  uint16_t max_rep_ = 0, max_visible_def_ = 0;
  ValueCodec codec_;
  std::shared_ptr<const ValueBlock> dictionary_;  // decoded dictionary items, if any
  std::vector<ChunkMeta> chunks_;
  std::vector<uint64_t> rep_rows_, completed_through_, started_through_;
  mutable std::mutex mutex_;
  mutable std::list<std::pair<size_t, std::shared_ptr<const DecodedChunk>>> cache_;
  const uint64_t id_ = next_reader_id.fetch_add(1, std::memory_order_relaxed);  // names its ChunkWindows
};

}  // namespace

std::unique_ptr<PageReader> MakeMiniBlockReader(PageSource page, const pb::MiniBlockLayout& layout) {
  return std::make_unique<MiniBlockReader>(std::move(page), layout);
}

}  // namespace lancelet::format::v21
