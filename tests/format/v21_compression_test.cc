// The 2.1 / 2.2 compressive encodings: byte-level unit tests of each decoder (FastLanes
// bit-unpacking at every width, InlineBitpacking, OutOfLineBitpacking, Rle, ByteStreamSplit,
// General, dictionaries, levels), and files the reference wrote with those encodings,
// which lancelet must read exactly as the reference dumps them (skipped without the oracle).
#include <gtest/gtest.h>
#include <lz4.h>
#include <zstd.h>

#include <functional>
#include <random>

#include "format/reference_file_util.h"
#include "format/v21_compression.h"
#include "format/v21_test_util.h"
#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::format::v21 {
namespace {

using lancelet::testing::ThrownKind;

using lancelet::testing::OracleAvailable;
using lancelet::testing::RunLancelet;
using lancelet::testing::RunOracle;
using lancelet::testing::TempDir;

// ------------------------------------------------------------------------ byte helpers

void PutLE(std::string& out, uint64_t v, size_t bytes) {
  for (size_t k = 0; k < bytes; ++k) out.push_back(char(uint8_t(v >> (8 * k))));
}

uint64_t GetLE(const std::string& s, size_t pos, size_t bytes) {
  uint64_t v = 0;
  for (size_t k = 0; k < bytes; ++k) v |= uint64_t(uint8_t(s.at(pos + k))) << (8 * k);
  return v;
}

std::string Words(const std::vector<uint64_t>& values, size_t bytes) {
  std::string out;
  for (uint64_t v : values) PutLE(out, v, bytes);
  return out;
}

// Packs 1024 values the FastLanes way, bit by bit, straight from the layout's definition:
// value index(row, lane) goes to bits [row * width, +width) of lane `lane`, whose bit b
// lives in word (b / word_bits) * lanes + lane at bit b % word_bits.
std::string ReferencePack(uint32_t word_bits, uint32_t width, const std::vector<uint64_t>& values) {
  const uint32_t lanes = 1024 / word_bits;
  std::vector<uint8_t> bits(size_t(width) * 1024, 0);  // bit array of the output, LSB-first
  for (uint32_t lane = 0; lane < lanes; ++lane)
    for (uint32_t row = 0; row < word_bits; ++row) {
      const uint64_t index = uint64_t(kFastLanesOrder[row / 8]) * 16 + (row % 8) * 128 + lane;
      for (uint32_t b = 0; b < width; ++b) {
        const uint64_t lane_bit = uint64_t(row) * width + b;
        const uint64_t word = (lane_bit / word_bits) * lanes + lane;
        bits[word * word_bits + lane_bit % word_bits] = (values[index] >> b) & 1;
      }
    }
  std::string out(size_t(width) * 128, '\0');
  for (size_t k = 0; k < bits.size(); ++k)
    if (bits[k]) out[k / 8] = char(uint8_t(out[k / 8]) | (1u << (k % 8)));
  return out;
}

std::vector<uint64_t> RandomValues(uint32_t width, size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out(n);
  const uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  for (auto& v : out) v = rng() & mask;
  return out;
}

// ------------------------------------------------------------------- FastLanes unpacking

TEST(FastLanes, UnpacksEveryWidthOfEveryWordSize) {
  for (uint32_t word_bits : {8u, 16u, 32u, 64u}) {
    for (uint32_t width = 0; width <= word_bits; ++width) {
      SCOPED_TRACE(std::to_string(word_bits) + "-bit words at width " + std::to_string(width));
      const auto values = RandomValues(width, 1024, word_bits * 100 + width);
      const std::string packed = ReferencePack(word_bits, width, values);
      ASSERT_EQ(packed.size(), size_t(width) * 128);
      std::string out(1024 * word_bits / 8, '\x55');
      FastLanesUnpack(word_bits, width, reinterpret_cast<const uint8_t*>(packed.data()),
                      reinterpret_cast<uint8_t*>(out.data()));
      EXPECT_EQ(out, Words(values, word_bits / 8));
    }
  }
}

TEST(FastLanes, HandBuiltBytes) {
  // 8-bit words, width 1: 128 lanes of one byte; row r of lane l is value r * 128 + l, so
  // byte l holds bit r = value r * 128 + l. Only value 130 (row 1, lane 2) is set.
  std::string packed(128, '\0');
  packed[2] = char(0x02);
  std::string out(1024, '\0');
  FastLanesUnpack(8, 1, reinterpret_cast<const uint8_t*>(packed.data()), reinterpret_cast<uint8_t*>(out.data()));
  for (size_t k = 0; k < 1024; ++k) EXPECT_EQ(uint8_t(out[k]), k == 130 ? 1 : 0) << k;

  // 32-bit words, width 3: 32 lanes; row 8 of lane 5 (value order[1] * 16 + 0 + 5 = 69)
  // sits at lane bits 24..26, inside the lane's first word (word 5), bits 24..26.
  packed.assign(3 * 128, '\0');
  packed[5 * 4 + 3] = char(0x05);  // bits 24..26 = 0b101
  out.assign(4096, '\0');
  FastLanesUnpack(32, 3, reinterpret_cast<const uint8_t*>(packed.data()), reinterpret_cast<uint8_t*>(out.data()));
  for (size_t k = 0; k < 1024; ++k) EXPECT_EQ(GetLE(out, k * 4, 4), k == 69 ? 5u : 0u) << k;

  // 16-bit words, width 5: row 3 of lane 0 (value 384) straddles the lane's words 0 and 1
  // (lane bits 15..19): bit 15 of word 0 and bits 0..3 of word 64.
  packed.assign(5 * 128, '\0');
  packed[1] = char(0x80);        // word 0, bit 15 -> value bit 0
  packed[64 * 2] = char(0x0A);   // word 64, bits 1 and 3 -> value bits 2 and 4
  out.assign(2048, '\0');
  FastLanesUnpack(16, 5, reinterpret_cast<const uint8_t*>(packed.data()), reinterpret_cast<uint8_t*>(out.data()));
  for (size_t k = 0; k < 1024; ++k) EXPECT_EQ(GetLE(out, k * 2, 2), k == 384 ? 0b10101u : 0u) << k;
}

// ----------------------------------------------------------------------- InlineBitpacking

TEST(InlineBitpacking, BlocksCarryTheirOwnWidth) {
  // 1500 u16 values: a block at width 4 (1024 values) and a padded block at width 11.
  auto first = RandomValues(4, 1024, 1);
  auto second = RandomValues(11, 1024, 2);
  std::string data;
  PutLE(data, 4, 2);
  data += ReferencePack(16, 4, first);
  PutLE(data, 11, 2);
  data += ReferencePack(16, 11, second);
  std::vector<uint64_t> expected(first);
  expected.insert(expected.end(), second.begin(), second.begin() + 476);
  EXPECT_EQ(DecodeInlineBitpacking(16, data, 1500, "t"), Words(expected, 2));
  // Width 0: only the width word.
  EXPECT_EQ(DecodeInlineBitpacking(64, std::string(8, '\0'), 7, "t"), std::string(56, '\0'));
}

TEST(InlineBitpacking, RejectsBadBlocks) {
  std::string data;
  PutLE(data, 33, 4);  // wider than the 32-bit values
  data += std::string(33 * 128, '\0');
  EXPECT_EQ(ThrownKind([&] { DecodeInlineBitpacking(32, data, 10, "t"); }), ErrorKind::kCorrupt);
  std::string short_data;
  PutLE(short_data, 3, 4);
  short_data += std::string(100, '\0');  // needs 384
  EXPECT_EQ(ThrownKind([&] { DecodeInlineBitpacking(32, short_data, 10, "t"); }), ErrorKind::kCorrupt);
  EXPECT_EQ(ThrownKind([&] { DecodeInlineBitpacking(24, data, 10, "t"); }), ErrorKind::kCorrupt);
}

// The blocks are the whole buffer: a width lowered by a flipped bit (3 to 2 here) reads
// other values from fewer bytes and leaves the rest over, which decode and gather refuse.
TEST(InlineBitpacking, BlocksFillTheirBuffer) {
  std::string data;
  PutLE(data, 3, 4);
  data += ReferencePack(32, 3, RandomValues(3, 1024, 5));
  EXPECT_EQ(DecodeInlineBitpacking(32, data, 10, "t").size(), 40u);
  data[0] = 2;
  try {
    DecodeInlineBitpacking(32, data, 10, "t");
    ADD_FAILURE() << "a width lowered to 2 was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_EQ(std::string(e.what()), "t: bit-packed blocks of 10 values take 260 bytes, but their buffer has 388");
  }
  const std::vector<uint64_t> rows = {0, 5};
  std::string out(8, '\0');
  EXPECT_FALSE(GatherInlineBitpacked(32, data, 10, rows, 0, reinterpret_cast<uint8_t*>(out.data())));
}

// A take's values unpacked one by one agree with whole-block unpacking, at every word size,
// at the extreme widths, across two blocks of different widths (the second partial), in
// any order and with repeats.
TEST(InlineBitpacking, GatheredValuesMatchTheDecodedBlocks) {
  for (uint32_t word_bits : {8u, 16u, 32u, 64u}) {
    for (uint32_t first_width : {0u, 1u, 3u, word_bits - 1, word_bits}) {
      const uint32_t second_width = word_bits / 2 + 1;
      SCOPED_TRACE(std::to_string(word_bits) + "-bit words, widths " + std::to_string(first_width) + " and " +
                   std::to_string(second_width));
      std::string data;
      PutLE(data, first_width, word_bits / 8);
      data += ReferencePack(word_bits, first_width, RandomValues(first_width, 1024, 3));
      PutLE(data, second_width, word_bits / 8);
      data += ReferencePack(word_bits, second_width, RandomValues(second_width, 1024, 4));
      const uint64_t n = 1500, first = 70;
      const std::string decoded = DecodeInlineBitpacking(word_bits, data, n, "t");
      std::vector<uint64_t> rows;
      for (uint64_t v = 0; v < n; v += 7) rows.push_back(first + (v * 389) % n);
      rows.push_back(first + n - 1);
      rows.push_back(first);
      rows.push_back(first);
      std::string got(rows.size() * word_bits / 8, '\0');
      ASSERT_TRUE(GatherInlineBitpacked(word_bits, data, n, rows, first, reinterpret_cast<uint8_t*>(got.data())));
      std::string want;
      for (uint64_t row : rows) want += decoded.substr((row - first) * word_bits / 8, word_bits / 8);
      EXPECT_EQ(got, want);
    }
  }
}

TEST(InlineBitpacking, GatherRefusesBadBlocks) {
  const std::vector<uint64_t> rows = {0, 5};
  std::string out(16, '\0');
  auto* dst = reinterpret_cast<uint8_t*>(out.data());
  std::string wide;
  PutLE(wide, 33, 4);  // wider than the 32-bit values
  wide += std::string(33 * 128, '\0');
  EXPECT_FALSE(GatherInlineBitpacked(32, wide, 10, rows, 0, dst));
  std::string short_data;
  PutLE(short_data, 3, 4);
  short_data += std::string(100, '\0');  // needs 384
  EXPECT_FALSE(GatherInlineBitpacked(32, short_data, 10, rows, 0, dst));
  std::string one_block;
  PutLE(one_block, 0, 4);
  EXPECT_FALSE(GatherInlineBitpacked(32, one_block, 1025, rows, 0, dst));  // 1025 values need two blocks
  EXPECT_FALSE(GatherInlineBitpacked(24, wide, 10, rows, 0, dst));
}

// -------------------------------------------------------------------- OutOfLineBitpacking

TEST(OutOfLineBitpacking, PackedAndRawTails) {
  const auto values = RandomValues(3, 1100, 7);
  std::vector<uint64_t> head(values.begin(), values.begin() + 1024);
  // Packed tail: the 76 last values padded with zeros to a whole block.
  std::vector<uint64_t> tail(values.begin() + 1024, values.end());
  std::vector<uint64_t> padded(tail);
  padded.resize(1024, 0);
  const std::string packed_tail = ReferencePack(16, 3, head) + ReferencePack(16, 3, padded);
  EXPECT_EQ(DecodeOutOfLineBitpacking(16, 3, packed_tail, 1100, "t"), Words(values, 2));
  // Raw tail: the 76 values follow as plain u16.
  const std::string raw_tail = ReferencePack(16, 3, head) + Words(tail, 2);
  EXPECT_EQ(DecodeOutOfLineBitpacking(16, 3, raw_tail, 1100, "t"), Words(values, 2));
  // Fewer values than a block, width 1 (def levels of a small page).
  const auto bits = RandomValues(1, 10, 8);
  std::vector<uint64_t> bits_padded(bits);
  bits_padded.resize(1024, 0);
  EXPECT_EQ(DecodeOutOfLineBitpacking(16, 1, ReferencePack(16, 1, bits_padded), 10, "t"), Words(bits, 2));
  // Any other size is corrupt.
  EXPECT_EQ(ThrownKind([&] { DecodeOutOfLineBitpacking(16, 3, packed_tail + "xx", 1100, "t"); }), ErrorKind::kCorrupt);
}

// InlineBitpacking written block by block: each block's width word, then the block packed
// as ReferencePack packs it (the last one padded with zeros); DecodeInlineBitpacking reads
// every word size back.
TEST(InlineBitpacking, EncodesEachBlockAtItsOwnWidth) {
  for (uint32_t word_bits : {8u, 16u, 32u, 64u}) {
    std::vector<uint64_t> values = RandomValues(word_bits / 2, 1024, word_bits);
    const auto tail = RandomValues(3, 700, word_bits + 1);
    values.insert(values.end(), tail.begin(), tail.end());
    const std::string raw = Words(values, word_bits / 8);
    const std::string encoded = EncodeInlineBitpacking(word_bits, reinterpret_cast<const uint8_t*>(raw.data()), values.size());
    std::vector<uint64_t> padded(tail);
    padded.resize(1024, 0);
    const uint32_t first_width = MaxBitWidth(word_bits, reinterpret_cast<const uint8_t*>(raw.data()), 1024);
    EXPECT_EQ(first_width, word_bits / 2);
    const std::string expected = Words({first_width}, word_bits / 8) +
                                 ReferencePack(word_bits, first_width, std::vector<uint64_t>(values.begin(), values.begin() + 1024)) +
                                 Words({3}, word_bits / 8) + ReferencePack(word_bits, 3, padded);
    EXPECT_EQ(encoded, expected) << word_bits;
    EXPECT_EQ(DecodeInlineBitpacking(word_bits, encoded, values.size(), "t"), raw) << word_bits;
  }
  // An all-zero block is its width word alone.
  const std::string zeros(1024 * 4, '\0');
  EXPECT_EQ(EncodeInlineBitpacking(32, reinterpret_cast<const uint8_t*>(zeros.data()), 1024), std::string(4, '\0'));
}

// Levels packed the reference's way: whole blocks as ReferencePack packs them; a partial
// block padded and packed only when padding costs fewer bits than packing saves
// (width * (1024 - tail) < (16 - width) * tail), else its values raw; and the decoder
// reads each form back.
TEST(OutOfLineBitpacking, EncodesLevelsAsTheReferenceDoes) {
  for (uint32_t width = 1; width < 16; ++width)
    for (size_t n : {size_t(1), size_t(64), size_t(65), size_t(1024), size_t(1030), size_t(2047), size_t(3000)}) {
      const auto values = RandomValues(width, n, uint32_t(width * 7919 + n));
      std::vector<uint16_t> levels(values.begin(), values.end());
      const std::string encoded = EncodeOutOfLineBitpacking16(levels.data(), n, width);
      const size_t whole = n / 1024, tail = n % 1024;
      std::string expected;
      for (size_t b = 0; b < whole; ++b)
        expected += ReferencePack(16, width, std::vector<uint64_t>(values.begin() + b * 1024, values.begin() + (b + 1) * 1024));
      const bool padded = tail > 0 && width * (1024 - tail) < (16 - width) * tail;
      if (padded) {
        std::vector<uint64_t> last(values.begin() + whole * 1024, values.end());
        last.resize(1024, 0);
        expected += ReferencePack(16, width, last);
      } else {
        expected += Words(std::vector<uint64_t>(values.begin() + whole * 1024, values.end()), 2);
      }
      ASSERT_EQ(encoded, expected) << "width " << width << ", " << n << " values";
      EXPECT_EQ(OutOfLineBitpackedBytes16(n, width), encoded.size());
      EXPECT_EQ(DecodeOutOfLineBitpacking(16, width, encoded, n, "t"), Words(values, 2)) << width << " " << n;
    }
  // 1 bit, 20,010 levels: 20 blocks, the last padded (2,560 bytes, as the reference's chunk).
  EXPECT_EQ(OutOfLineBitpackedBytes16(20010, 1), 2560u);
  // 1 bit, a tail of 64 levels: padding (960 bits) saves no more than it costs: raw.
  EXPECT_EQ(OutOfLineBitpackedBytes16(1024 + 64, 1), 128u + 128u);
  EXPECT_EQ(OutOfLineBitpackedBytes16(1024 + 65, 1), 256u);
}

// ------------------------------------------------------------------------------------ Rle

// Values run-length encoded as a mini-block chunk's two buffers; RunCount ignores the
// 255-value split, as the reference's run statistic does.
TEST(Rle, EncodesValueRuns) {
  std::vector<uint64_t> values(300, 7);
  values.insert(values.end(), {1, 1, 9});
  const std::string raw = Words(values, 8);
  const auto* bytes = reinterpret_cast<const uint8_t*>(raw.data());
  EXPECT_EQ(RunCount(64, bytes, values.size()), 3u);
  const auto [run_values, lengths] = EncodeRle(64, bytes, values.size());
  EXPECT_EQ(run_values, Words({7, 7, 1, 9}, 8));
  EXPECT_EQ(lengths, Words({255, 45, 2, 1}, 1));
  EXPECT_EQ(DecodeRle(64, 8, run_values, lengths, values.size(), "t"), raw);
}

// Levels run-length encoded in the block form the reference writes at 2.2: u64 size of the
// run values, u16 values, u8 lengths; a run longer than 255 is split.
TEST(Rle, EncodesLevelBlocks) {
  std::vector<uint16_t> levels(600, 2);
  levels.insert(levels.end(), {0, 0, 1});
  const std::string block = EncodeRleBlock16(levels.data(), levels.size());
  EXPECT_EQ(block, Words({10}, 8) + Words({2, 2, 2, 0, 1}, 2) + Words({255, 255, 90, 2, 1}, 1));
  EXPECT_EQ(RleBlockBytes16(levels.data(), levels.size()), block.size());
  std::vector<uint64_t> wide(levels.begin(), levels.end());
  EXPECT_EQ(DecodeRleBlock(16, 8, block, levels.size(), "t"), Words(wide, 2));
}

TEST(Rle, RunsExpand) {
  const std::string values = Words({7, 0xFFFFFFFF, 7}, 4);
  const std::string lengths = Words({3, 1, 255}, 1);
  std::vector<uint64_t> expected(3, 7);
  expected.push_back(0xFFFFFFFF);
  expected.insert(expected.end(), 255, 7);
  EXPECT_EQ(DecodeRle(32, 8, values, lengths, 259, "t"), Words(expected, 4));
  // u16 run lengths.
  EXPECT_EQ(DecodeRle(64, 16, Words({9}, 8), Words({1000}, 2), 1000, "t"), Words(std::vector<uint64_t>(1000, 9), 8));
  // Block framing: u64 size of the values, then values and lengths.
  std::string block;
  PutLE(block, values.size(), 8);
  block += values + lengths;
  EXPECT_EQ(DecodeRleBlock(32, 8, block, 259, "t"), Words(expected, 4));
}

TEST(Rle, RejectsBadRuns) {
  EXPECT_EQ(ThrownKind([] { DecodeRle(32, 8, Words({1, 2}, 4), Words({3, 0}, 1), 3, "t"); }), ErrorKind::kCorrupt);
  EXPECT_EQ(ThrownKind([] { DecodeRle(32, 8, Words({1, 2}, 4), Words({3}, 1), 3, "t"); }), ErrorKind::kCorrupt);
  EXPECT_EQ(ThrownKind([] { DecodeRle(32, 8, Words({1}, 4), Words({3}, 1), 5, "t"); }), ErrorKind::kCorrupt);
  std::string block;
  PutLE(block, 100, 8);
  EXPECT_EQ(ThrownKind([&] { DecodeRleBlock(32, 8, block, 1, "t"); }), ErrorKind::kCorrupt);
}

// ------------------------------------------------------------------------ ByteStreamSplit

TEST(ByteStreamSplit, StreamsInterleave) {
  // Two u32 values 0x04030201 and 0x08070605: streams {01 05} {02 06} {03 07} {04 08}.
  const std::string split("\x01\x05\x02\x06\x03\x07\x04\x08", 8);
  EXPECT_EQ(DecodeByteStreamSplit(32, split, 2, "t"), Words({0x04030201, 0x08070605}, 4));
  EXPECT_EQ(ThrownKind([&] { DecodeByteStreamSplit(32, split, 3, "t"); }), ErrorKind::kCorrupt);
}

// -------------------------------------------------------------------------------- General

std::string Zstd(const std::string& plain) {
  std::string frame(ZSTD_compressBound(plain.size()), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), plain.data(), plain.size(), 3));
  return frame;
}

std::string Lz4(const std::string& plain) {
  std::string block(LZ4_compressBound(int(plain.size())), '\0');
  block.resize(LZ4_compress_default(plain.data(), block.data(), int(plain.size()), int(block.size())));
  return block;
}

TEST(General, ZstdAndLz4Framing) {
  std::string plain;
  for (int k = 0; k < 5000; ++k) plain += std::to_string(k % 97);
  pb::BufferCompression zstd;
  zstd.set_scheme(pb::COMPRESSION_ALGORITHM_ZSTD);
  std::string prefixed;
  PutLE(prefixed, plain.size(), 8);
  prefixed += Zstd(plain);
  EXPECT_EQ(DecompressBuffer(zstd, prefixed, "t"), plain);
  EXPECT_EQ(DecompressBuffer(zstd, Zstd(plain), "t"), plain);  // bare frame (older writers)
  std::string wrong_size;
  PutLE(wrong_size, plain.size() + 1, 8);
  wrong_size += Zstd(plain);
  EXPECT_EQ(ThrownKind([&] { DecompressBuffer(zstd, wrong_size, "t"); }), ErrorKind::kCorrupt);

  pb::BufferCompression lz4;
  lz4.set_scheme(pb::COMPRESSION_ALGORITHM_LZ4);
  std::string framed;
  PutLE(framed, plain.size(), 4);
  framed += Lz4(plain);
  EXPECT_EQ(DecompressBuffer(lz4, framed, "t"), plain);
  EXPECT_EQ(ThrownKind([&] { DecompressBuffer(lz4, framed.substr(0, framed.size() - 3), "t"); }), ErrorKind::kCorrupt);

  pb::BufferCompression none;
  EXPECT_EQ(ThrownKind([&] { DecompressBuffer(none, framed, "t"); }), ErrorKind::kNotSupported);
}

// A size prefix larger than the codec can expand its bytes to is refused before the
// output is allocated (fuzz/compression_fuzz.cc: 14 bytes claiming 12 GB ran out of memory).
TEST(General, SizePrefixBeyondTheCodecsExpansionIsCorrupt) {
  pb::BufferCompression zstd;
  zstd.set_scheme(pb::COMPRESSION_ALGORITHM_ZSTD);
  const std::string zstd_input("\x00\xff\x90\xff\x02\x00\x00\x00\xc2\x7f\x00\x00\x00\x00", 14);
  auto error = lancelet::testing::ThrownError([&] { DecompressBuffer(zstd, zstd_input, "fuzz compression"); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kCorrupt);
  EXPECT_STREQ(error->what(), "fuzz compression: zstd buffer of 14 bytes claims 12877627136 bytes");

  pb::BufferCompression lz4;
  lz4.set_scheme(pb::COMPRESSION_ALGORITHM_LZ4);
  std::string lz4_input;
  PutLE(lz4_input, 2000000000, 4);
  lz4_input += "abcdef";
  error = lancelet::testing::ThrownError([&] { DecompressBuffer(lz4, lz4_input, "t"); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kCorrupt);
  EXPECT_STREQ(error->what(), "t: lz4 buffer of 10 bytes claims 2000000000 bytes");
}

// ---------------------------------------------------------------------- trees and levels

pb::CompressiveEncoding Flat(uint64_t bits) {
  pb::CompressiveEncoding e;
  e.mutable_flat()->set_bits_per_value(bits);
  return e;
}

TEST(CompressionTree, ChunkValuesThroughGeneralAndRle) {
  // General(ZSTD, Rle(Flat32, Flat8)): the first buffer (run values) is compressed.
  pb::CompressiveEncoding rle;
  *rle.mutable_rle()->mutable_values() = Flat(32);
  *rle.mutable_rle()->mutable_run_lengths() = Flat(8);
  pb::CompressiveEncoding general;
  general.mutable_general()->mutable_compression()->set_scheme(pb::COMPRESSION_ALGORITHM_ZSTD);
  *general.mutable_general()->mutable_values() = rle;
  const std::string values = Words({5, 6}, 4);
  std::string compressed;
  PutLE(compressed, values.size(), 8);
  compressed += Zstd(values);
  ValueBlock block = DecodeChunkValues(general, {compressed, Words({2, 1}, 1)}, 3, "t");
  EXPECT_FALSE(block.variable);
  EXPECT_EQ(block.bits, 32u);
  EXPECT_EQ(block.count, 3u);
  EXPECT_EQ(block.data, Words({5, 5, 6}, 4));
  EXPECT_EQ(ChunkBufferCount(general), 2u);
  ValueCodec codec = ParseValueCodec(general, "t");
  EXPECT_EQ(codec.bits, 32u);
  ASSERT_TRUE(codec.compressed);

  // Variable inside General: offsets from the buffer start, then the bytes.
  pb::CompressiveEncoding variable;
  *variable.mutable_variable()->mutable_offsets() = Flat(32);
  const std::string buffer = Words({12, 14, 17}, 4) + "abcde";
  block = DecodeChunkValues(variable, {buffer}, 2, "t");
  ASSERT_TRUE(block.variable);
  EXPECT_EQ(block.offsets, (std::vector<uint64_t>{0, 2, 5}));
  EXPECT_EQ(block.data, "abcde");
  EXPECT_EQ(ThrownKind([&] { DecodeChunkValues(variable, {Words({12, 20, 14}, 4) + "ab"}, 2, "t"); }),
            ErrorKind::kCorrupt);

  // Not decoded: Delta, FixedSizeList under General.
  pb::CompressiveEncoding delta;
  delta.mutable_delta()->set_uncompressed_bits_per_value(32);
  EXPECT_EQ(ThrownKind([&] { ParseValueCodec(delta, "t"); }), ErrorKind::kNotSupported);
  pb::CompressiveEncoding fsl_general;
  fsl_general.mutable_general()->mutable_compression()->set_scheme(pb::COMPRESSION_ALGORITHM_ZSTD);
  fsl_general.mutable_general()->mutable_values()->mutable_fixed_size_list()->set_items_per_value(4);
  *fsl_general.mutable_general()->mutable_values()->mutable_fixed_size_list()->mutable_values() = Flat(32);
  EXPECT_EQ(ThrownKind([&] { ParseValueCodec(fsl_general, "t"); }), ErrorKind::kNotSupported);
}

TEST(CompressionTree, LevelBlocks) {
  const std::vector<uint64_t> levels = {0, 1, 2, 0, 0, 3, 1};
  std::vector<uint64_t> padded(levels);
  padded.resize(1024, 0);
  const std::vector<uint16_t> expected(levels.begin(), levels.end());
  // InlineBitpacking(16).
  pb::CompressiveEncoding ib;
  ib.mutable_inline_bitpacking()->set_uncompressed_bits_per_value(16);
  std::string data;
  PutLE(data, 2, 2);
  data += ReferencePack(16, 2, padded);
  EXPECT_EQ(DecodeLevels(ib, data, 7, "t"), expected);
  // OutOfLineBitpacking(16 -> Flat(2)).
  pb::CompressiveEncoding oolbp;
  oolbp.mutable_out_of_line_bitpacking()->set_uncompressed_bits_per_value(16);
  *oolbp.mutable_out_of_line_bitpacking()->mutable_values() = Flat(2);
  EXPECT_EQ(DecodeLevels(oolbp, Words(levels, 2), 7, "t"), expected);  // raw tail: 14 < 256 bytes
  EXPECT_EQ(DecodeLevels(oolbp, ReferencePack(16, 2, padded), 7, "t"), expected);
  // Rle(Flat16, Flat8) block.
  pb::CompressiveEncoding rle;
  *rle.mutable_rle()->mutable_values() = Flat(16);
  *rle.mutable_rle()->mutable_run_lengths() = Flat(8);
  std::string rle_block;
  PutLE(rle_block, 12, 8);
  rle_block += Words({0, 1, 2, 0, 3, 1}, 2) + Words({1, 1, 1, 2, 1, 1}, 1);
  EXPECT_EQ(DecodeLevels(rle, rle_block, 7, "t"), expected);
  // Flat(16) and the checks.
  EXPECT_EQ(DecodeLevels(Flat(16), Words(levels, 2), 7, "t"), expected);
  EXPECT_NO_THROW(CheckLevelCodec(ib, "definition", "t"));
  EXPECT_NO_THROW(CheckLevelCodec(oolbp, "definition", "t"));
  EXPECT_NO_THROW(CheckLevelCodec(rle, "definition", "t"));
  EXPECT_EQ(ThrownKind([] { CheckLevelCodec(Flat(8), "definition", "t"); }), ErrorKind::kNotSupported);
  pb::CompressiveEncoding ib32;
  ib32.mutable_inline_bitpacking()->set_uncompressed_bits_per_value(32);
  EXPECT_EQ(ThrownKind([&] { CheckLevelCodec(ib32, "repetition", "t"); }), ErrorKind::kNotSupported);
  EXPECT_EQ(ThrownKind([&] { DecodeLevels(ib32, std::string(4, '\0'), 3, "t"); }), ErrorKind::kCorrupt);
}

TEST(Dictionary, BlocksAndLookUp) {
  // Variable dictionary block: u32 32, u32 start of bytes, offsets, bytes.
  pb::CompressiveEncoding variable;
  *variable.mutable_variable()->mutable_offsets() = Flat(32);
  std::string block;
  PutLE(block, 32, 4);
  PutLE(block, 8 + 16, 4);
  block += Words({0, 3, 3, 5}, 4) + "redgo";
  ValueBlock dict = DecodeDictionary(variable, block, 3, "t");
  ASSERT_TRUE(dict.variable);
  EXPECT_EQ(dict.offsets, (std::vector<uint64_t>{0, 3, 3, 5}));
  ValueBlock indices;
  indices.bits = 32;
  indices.count = 4;
  indices.data = Words({2, 0, 1, 0}, 4);
  ValueBlock values = LookUpDictionary(dict, indices, "t");
  EXPECT_EQ(values.offsets, (std::vector<uint64_t>{0, 2, 5, 5, 8}));
  EXPECT_EQ(values.data, "goredred");
  indices.data = Words({2, 0, 3, 0}, 4);
  EXPECT_EQ(ThrownKind([&] { LookUpDictionary(dict, indices, "t"); }), ErrorKind::kCorrupt);

  // General(LZ4, Flat64) dictionary of 2.2.
  pb::CompressiveEncoding general;
  general.mutable_general()->mutable_compression()->set_scheme(pb::COMPRESSION_ALGORITHM_LZ4);
  *general.mutable_general()->mutable_values() = Flat(64);
  const std::string items = Words({10, 20}, 8);
  std::string framed;
  PutLE(framed, items.size(), 4);
  framed += Lz4(items);
  dict = DecodeDictionary(general, framed, 2, "t");
  indices.bits = 8;
  indices.count = 3;
  indices.data = Words({1, 1, 0}, 1);
  values = LookUpDictionary(dict, indices, "t");
  EXPECT_FALSE(values.variable);
  EXPECT_EQ(values.data, Words({20, 20, 10}, 8));
}

// ---------------------------------------------------------------- reference-written files

struct Column {
  std::string name;
  TypePtr type;
  std::vector<Scalar> values;
  Metadata metadata;
};

// Columns whose data makes the reference pick each compressive encoding (see
// shared/spec/reference_encoding_census.md).
std::vector<Column> CompressionColumns(int64_t n) {
  std::mt19937_64 rng(2024);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const auto i32 = DataType::Int32(), i64 = DataType::Int64(), f64 = DataType::Float64();
  std::vector<Column> cols = {
      {"seq", i64, {}, {}},          {"few", i32, {}, {}},       {"runs", i32, {}, {}},
      {"constant", i32, {}, {}},     {"runs64", i64, {}, {}},    {"few_f64", f64, {}, {}},
      {"nulls64", i64, {}, {}},      {"rand_f64", f64, {}, {}},  {"flag", DataType::Bool(), {}, {}},
      {"cat", DataType::Utf8(), {}, {}},
      {"lst", DataType::List(i32), {}, {}},
      {"point", DataType::Struct({Field::Make("a", i32), Field::Make("b", i64)}), {}, {}},
      {"ts", DataType::Timestamp(TimeUnit::kMicro), {}, {}},
      {"day", DataType::Date32(), {}, {}},
      {"zstd_i32", i32, {}, {{"lance-encoding:compression", "zstd"}}},
      {"zstd_f64", f64, {}, {{"lance-encoding:compression", "zstd"}}},
      {"lz4_i64", i64, {}, {{"lance-encoding:compression", "lz4"}}},
      {"lz4_str", DataType::Utf8(), {}, {{"lance-encoding:compression", "lz4"}}},
  };
  const double few_f64[] = {1.5, -2.25, 1e300, 3.0, 0.1};
  const char* colours[] = {"red", "green", "blue", "cyan", "magenta", "yellow", "black", "white", "grey", ""};
  for (int64_t k = 0; k < n; ++k) {
    cols[0].values.push_back({i64, k});
    cols[1].values.push_back({i32, int64_t((k * 7919) % 13)});
    cols[2].values.push_back({i32, int64_t(k / 300)});
    cols[3].values.push_back({i32, int64_t(42)});
    cols[4].values.push_back({i64, int64_t(k / 500) * 1000000000007});
    cols[5].values.push_back({f64, few_f64[uniform(0, 4)]});
    cols[6].values.push_back(chance(0.1) ? Scalar::Null(i64) : Scalar{i64, uniform(-1000000, 1000000)});
    cols[7].values.push_back({f64, std::uniform_real_distribution<double>(-1e6, 1e6)(rng)});
    cols[8].values.push_back(chance(0.1) ? Scalar::Null(cols[8].type) : Scalar{cols[8].type, chance(0.5)});
    cols[9].values.push_back(chance(0.05) ? Scalar::Null(cols[9].type)
                                          : Scalar{cols[9].type, std::string(colours[uniform(0, 9)])});
    {
      const auto& t = cols[10].type;
      if (chance(0.05)) {
        cols[10].values.push_back(Scalar::Null(t));
      } else {
        std::vector<Scalar> items;
        const int64_t len = chance(0.05) ? 0 : uniform(1, 6);
        for (int64_t j = 0; j < len; ++j)
          items.push_back(chance(0.05) ? Scalar::Null(i32) : Scalar{i32, uniform(-50, 50)});
        cols[10].values.push_back({t, items});
      }
    }
    cols[11].values.push_back(chance(0.1) ? Scalar::Null(cols[11].type)
                                           : Scalar{cols[11].type, std::vector<Scalar>{{i32, uniform(0, 1000)},
                                                                                      {i64, k * 3}}});
    cols[12].values.push_back({cols[12].type, int64_t(1700000000000000) + k * 1000003});
    cols[13].values.push_back({cols[13].type, int64_t(19000 + k / 7)});
    cols[14].values.push_back({i32, int64_t(k % 1000)});
    cols[15].values.push_back({f64, double(k % 100) * 0.25});
    cols[16].values.push_back({i64, int64_t(k / 10)});
    cols[17].values.push_back({cols[17].type, "value number " + std::to_string(k % 50)});
  }
  return cols;
}

class ReferenceCompression : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceCompression, ReadsWhatTheReferenceDumps) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const std::string version = GetParam();
  const int64_t n = 20000;
  const auto columns = CompressionColumns(n);
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> arrays;
  std::vector<std::string> names;
  for (const auto& c : columns) {
    fields.push_back(Field::Make(c.name, c.type, true, c.metadata));
    arrays.push_back(MakeArray(c.type, c.values));
    names.push_back(c.name);
  }
  auto schema = std::make_shared<Schema>(fields);
  TempDir dir;
  const std::string table = reference_test::CreateReferenceTable(dir, "t", schema, arrays, version);
  const std::string path = reference_test::OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, path);

  // The data must make the reference use the encodings under test.
  std::string all_encodings;
  for (const auto& name : names) {
    const uint32_t column = reference_test::FirstColumnOf(*reader, name, false);
    all_encodings += name + ": " + reference_test::PageEncodings(path, column);
  }
  for (const char* expected : {"inline_bitpacking", "out_of_line_bitpacking", "rle {", "dictionary {",
                               "COMPRESSION_ALGORITHM_ZSTD", "COMPRESSION_ALGORITHM_LZ4", "byte_stream_split"})
    EXPECT_NE(all_encodings.find(expected), std::string::npos) << expected << " unused:\n" << all_encodings;

  // Column by column, so that one failure names its column.
  for (const auto& name : names) {
    SCOPED_TRACE(name + " (" + reference_test::PageEncodings(path, reference_test::FirstColumnOf(*reader, name, false)) + ")");
    auto dump = RunOracle({"dump", table, "--columns", name});
    ASSERT_EQ(dump.exit_code, 0) << dump.err;
    std::string ours;
    try {
      ours = reference_test::ReadAsJsonLines(*reader, {name});
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    const auto want = lancelet::testing::SplitLines(dump.out);
    const auto got = lancelet::testing::SplitLines(ours);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k)
      if (got[k] != want[k]) {
        ADD_FAILURE() << "row " << k << ": reference " << want[k] << ", lancelet " << got[k];
        break;
      }
  }
  // Random access decodes only the chunks it needs and must agree with a full read.
  for (size_t f = 0; f < names.size(); ++f) {
    std::vector<uint64_t> rows = {19999, 0, 1023, 1024, 5000, 5000, 12345};
    std::vector<int64_t> idx(rows.begin(), rows.end());
    ArrayPtr full = reader->ReadField(reference_test::FieldIndex(*reader, names[f]), 0, uint64_t(n));
    ArrayPtr taken = reader->TakeField(reference_test::FieldIndex(*reader, names[f]), rows);
    EXPECT_TRUE(ArraysEqual(*taken, *Take(*full, idx))) << names[f];
    ArrayPtr middle = reader->ReadField(reference_test::FieldIndex(*reader, names[f]), 3000, 2500);
    EXPECT_TRUE(ArraysEqual(*middle, *Slice(*full, 3000, 2500))) << names[f];
  }
}

// Larger pages: levels compressed with Rle or InlineBitpacking, General around
// InlineBitpacking and around Variable.
TEST_P(ReferenceCompression, ReadsCompressedLevelsAndGeneralValues) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const std::string version = GetParam();
  const int64_t n = 50000;
  std::mt19937_64 rng(77);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const auto i32 = DataType::Int32(), i64 = DataType::Int64(), utf8 = DataType::Utf8();
  const auto list = DataType::List(i32);
  const auto nested = DataType::List(DataType::List(i64));
  std::vector<Scalar> lists, nests, small, words, sparse;
  for (int64_t k = 0; k < n; ++k) {
    if (uniform(0, 19) == 0) {
      lists.push_back(Scalar::Null(list));
    } else {
      std::vector<Scalar> items;
      for (int64_t j = uniform(0, 4); j > 0; --j) items.push_back({i32, uniform(0, 1000)});
      lists.push_back({list, items});
    }
    std::vector<Scalar> outer;
    for (int64_t j = uniform(0, 2); j > 0; --j) {
      std::vector<Scalar> inner;
      for (int64_t i = uniform(0, 2); i > 0; --i) inner.push_back({i64, k});
      outer.push_back(uniform(0, 9) == 0 ? Scalar::Null(nested->child(0)->type) : Scalar{nested->child(0)->type, inner});
    }
    nests.push_back({nested, outer});
    small.push_back({i32, uniform(0, 200)});
    std::string w;
    for (int64_t j = uniform(1, 30); j > 0; --j) w.push_back(char('a' + uniform(0, 25)));
    words.push_back({utf8, w});
    sparse.push_back(k % 1000 == 7 ? Scalar{i64, k} : Scalar::Null(i64));
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("lst", list), Field::Make("nested", nested),
      Field::Make("small", i32, true, {{"lance-encoding:compression", "lz4"}}),
      Field::Make("words", utf8, true, {{"lance-encoding:compression", "zstd"}}),
      Field::Make("sparse", i64)});
  std::vector<ArrayPtr> arrays = {MakeArray(list, lists), MakeArray(nested, nests), MakeArray(i32, small),
                                  MakeArray(utf8, words), MakeArray(i64, sparse)};
  TempDir dir;
  const std::string table = reference_test::CreateReferenceTable(dir, "levels", schema, arrays, version);
  const std::string path = reference_test::OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, path);
  std::string all_encodings;
  for (size_t f = 0; f < arrays.size(); ++f) {
    const std::string& name = schema->field(f)->name;
    const std::string encodings = reference_test::PageEncodings(path, reference_test::FirstColumnOf(*reader, name, false));
    all_encodings += name + ": " + encodings;
    SCOPED_TRACE(name + ": " + encodings);
    ArrayPtr got;
    try {
      got = reader->ReadField(reference_test::FieldIndex(*reader, name), 0, uint64_t(n));
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_TRUE(ArraysEqual(*got, *arrays[f]));
    std::vector<uint64_t> rows = {49999, 7, 1007, 31000, 31001, 2};
    std::vector<int64_t> idx(rows.begin(), rows.end());
    EXPECT_TRUE(ArraysEqual(*reader->TakeField(reference_test::FieldIndex(*reader, name), rows), *Take(*arrays[f], idx)));
  }
  std::vector<std::string> expected = {"general { compression { scheme: COMPRESSION_ALGORITHM_ZSTD } values { variable",
                                       "rep_compression { out_of_line_bitpacking"};
  if (version == "2.2") expected.push_back("def_compression { rle");
  for (const auto& e : expected)
    EXPECT_NE(all_encodings.find(e), std::string::npos) << e << " unused:\n" << all_encodings;
}

// Values of 40 KB and more: full-zip pages whose values are each General(ZSTD)-compressed.
TEST_P(ReferenceCompression, ReadsZstdFullZipValues) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const std::string version = GetParam();
  const auto type = DataType::Binary();
  std::vector<Scalar> values;
  std::mt19937_64 rng(5);
  for (int k = 0; k < 40; ++k) {
    if (k % 9 == 4) {
      values.push_back(Scalar::Null(type));
      continue;
    }
    std::string v(40000 + (rng() % 16000), '\0');
    for (auto& c : v) c = char('a' + rng() % 4);  // compressible
    values.push_back({type, v});
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("big", type)});
  TempDir dir;
  const std::string table =
      reference_test::CreateReferenceTable(dir, "big", schema, {MakeArray(type, values)}, version);
  const std::string path = reference_test::OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, path);
  const std::string encodings = reference_test::PageEncodings(path, 0);
  EXPECT_NE(encodings.find("full_zip_layout"), std::string::npos) << encodings;
  EXPECT_NE(encodings.find("COMPRESSION_ALGORITHM_ZSTD"), std::string::npos) << encodings;
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, 40), *MakeArray(type, values))) << encodings;
}

// The reported bug: list<int32> written at 2.1 read back as all-null lists through the
// dataset (the data file lists only the item's field id).
TEST_P(ReferenceCompression, ScansListsLikeTheReference) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  TempDir dir;
  const std::string arrow = dir.Join("a.arrow");
  auto gen = RunOracle({"gen", arrow, "--rows", "60", "--seed", "23", "--types", "list<int32>,int32"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const std::string table = dir.Join("r.lance");
  auto create = RunOracle({"create", table, "--data", arrow, "--file-version", GetParam()});
  ASSERT_EQ(create.exit_code, 0) << create.err;
  auto want = RunOracle({"dump", table});
  ASSERT_EQ(want.exit_code, 0) << want.err;
  auto got = RunLancelet({"scan", table, "--format", "jsonl"});
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(got.out, want.out);
}

INSTANTIATE_TEST_SUITE_P(Versions, ReferenceCompression, ::testing::Values("2.1", "2.2"));

}  // namespace
}  // namespace lancelet::format::v21
