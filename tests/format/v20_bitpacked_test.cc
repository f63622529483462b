// The 2.0 bit-packing encodings, Bitpacked (ArrayEncoding field 10) and
// BitpackedForNonNeg (field 12), read from pages built by hand.
//
// The reference (lance 12.0.0) reads both at file version 2.0 but never writes either:
// its 2.0 array encoders are Basic/Value, Binary, Dictionary, Fsl, Fsst and PackedStruct
// only, so these pages come from the test's own packers, which follow the layouts' bit
// definitions one bit at a time.
#include <gtest/gtest.h>

#include <random>

#include "format/reference_file_util.h"
#include "format/v20_internal.h"
#include "format/v20_test_util.h"
#include "format/v21_compression.h"
#include "format/v21_test_util.h"
#include "lancelet/error.h"
#include "lancelet/scalar.h"

namespace lancelet::format::v20 {
namespace {

namespace pb = lance::encodings;
using v21_test::MakeLanceField;
using v21_test::MemoryFile;
using test::Page;

// ----------------------------------------------------------------------- test packers

// The Bitpacked layout from its definition: bit j of value k is bit k * width + j of the
// buffer, and bit b of the buffer is bit b % 8 of byte b / 8.
std::string PackBits(const std::vector<uint64_t>& values, uint32_t width) {
  std::string out((values.size() * width + 7) / 8, '\0');
  for (size_t k = 0; k < values.size(); ++k)
    for (uint32_t j = 0; j < width; ++j)
      if ((values[k] >> j) & 1) {
        const uint64_t bit = k * width + j;
        out[bit / 8] = char(uint8_t(out[bit / 8]) | (1u << (bit % 8)));
      }
  return out;
}

// BitpackedForNonNeg: chunks of 1024 values (the last padded with zeros), each packed the
// FastLanes way: value (row, lane) takes bits [row * width, +width) of lane `lane`, whose
// bit b is bit b % word_bits of word (b / word_bits) * lanes + lane.
std::string PackFastLanesChunks(const std::vector<uint64_t>& values, uint32_t word_bits, uint32_t width) {
  const uint64_t chunks = (values.size() + 1023) / 1024, chunk_bytes = 128 * uint64_t(width);
  const uint32_t lanes = 1024 / word_bits;
  std::string out(chunks * chunk_bytes, '\0');
  for (uint64_t c = 0; c < chunks; ++c)
    for (uint32_t lane = 0; lane < lanes; ++lane)
      for (uint32_t row = 0; row < word_bits; ++row) {
        const uint64_t index = c * 1024 + uint64_t(v21::kFastLanesOrder[row / 8]) * 16 + (row % 8) * 128 + lane;
        const uint64_t v = index < values.size() ? values[index] : 0;
        for (uint32_t j = 0; j < width; ++j) {
          if (!((v >> j) & 1)) continue;
          const uint64_t lane_bit = uint64_t(row) * width + j;
          const uint64_t word = (lane_bit / word_bits) * lanes + lane;
          const uint64_t bit = c * chunk_bytes * 8 + word * word_bits + lane_bit % word_bits;
          out[bit / 8] = char(uint8_t(out[bit / 8]) | (1u << (bit % 8)));
        }
      }
  return out;
}

// ---------------------------------------------------------------------- page builders

pb::ArrayEncoding Bitpacked(uint64_t width, uint64_t word_bits, bool is_signed, uint32_t buffer) {
  pb::ArrayEncoding e;
  auto* b = e.mutable_bitpacked();
  b->set_compressed_bits_per_value(width);
  b->set_uncompressed_bits_per_value(word_bits);
  b->set_signed_(is_signed);
  b->mutable_buffer()->set_buffer_index(buffer);
  return e;
}

pb::ArrayEncoding ForNonNeg(uint64_t width, uint64_t word_bits, uint32_t buffer) {
  pb::ArrayEncoding e;
  auto* b = e.mutable_bitpacked_for_non_neg();
  b->set_compressed_bits_per_value(width);
  b->set_uncompressed_bits_per_value(word_bits);
  b->mutable_buffer()->set_buffer_index(buffer);
  return e;
}

pb::ArrayEncoding Flat(uint64_t bits, uint32_t buffer) {
  pb::ArrayEncoding e;
  e.mutable_flat()->set_bits_per_value(bits);
  e.mutable_flat()->mutable_buffer()->set_buffer_index(buffer);
  return e;
}

pb::ArrayEncoding NoNulls(pb::ArrayEncoding values) {
  pb::ArrayEncoding e;
  *e.mutable_nullable()->mutable_no_nulls()->mutable_values() = std::move(values);
  return e;
}

pb::ArrayEncoding SomeNulls(pb::ArrayEncoding validity, pb::ArrayEncoding values) {
  pb::ArrayEncoding e;
  *e.mutable_nullable()->mutable_some_nulls()->mutable_validity() = std::move(validity);
  *e.mutable_nullable()->mutable_some_nulls()->mutable_values() = std::move(values);
  return e;
}

std::string Bitmap(const std::vector<bool>& valid) {
  std::string out((valid.size() + 7) / 8, '\0');
  for (size_t k = 0; k < valid.size(); ++k)
    if (valid[k]) out[k / 8] = char(uint8_t(out[k / 8]) | (1u << (k % 8)));
  return out;
}

std::unique_ptr<FieldDecoder> DecoderOf(const MemoryFile& file, const TypePtr& type) {
  return MakeDecoder(MakeLanceField("v", type), file.Columns(), file);
}

// ------------------------------------------------------------------- expected values

TypePtr IntType(uint32_t word_bits, bool is_signed) {
  switch (word_bits) {
    case 8:
      return is_signed ? DataType::Int8() : DataType::UInt8();
    case 16:
      return is_signed ? DataType::Int16() : DataType::UInt16();
    case 32:
      return is_signed ? DataType::Int32() : DataType::UInt32();
    default:
      return is_signed ? DataType::Int64() : DataType::UInt64();
  }
}

// `n` values that fit `width` bits (two's complement when signed), the extremes first.
std::vector<uint64_t> ValuesOfWidth(uint32_t width, bool is_signed, size_t n, uint32_t seed) {
  const uint64_t mask = width == 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
  std::vector<uint64_t> out;
  if (is_signed) {
    const int64_t max = width == 64 ? INT64_MAX : (int64_t(1) << (width - 1)) - 1;
    const int64_t min = -max - 1;
    for (int64_t v : {min, int64_t(-1), int64_t(0), max, min + 1, width > 1 ? int64_t(1) : int64_t(0)})
      out.push_back(uint64_t(v));
  } else {
    for (uint64_t v : {uint64_t(0), mask, uint64_t(1) & mask, mask - (mask > 0)}) out.push_back(v);
  }
  std::mt19937_64 rng(seed);
  while (out.size() < n) {
    uint64_t v = rng() & mask;
    if (is_signed && width < 64 && ((v >> (width - 1)) & 1)) v |= ~mask;  // a negative value of `width` bits
    out.push_back(v);
  }
  return out;
}

ArrayPtr ExpectedInts(const TypePtr& type, const std::vector<uint64_t>& values, const std::vector<bool>& valid = {}) {
  std::vector<Scalar> scalars;
  for (size_t k = 0; k < values.size(); ++k) {
    if (!valid.empty() && !valid[k])
      scalars.push_back(Scalar::Null(type));
    else if (type->is_signed_integer())
      scalars.push_back(Scalar{type, int64_t(values[k])});
    else
      scalars.push_back(Scalar{type, values[k]});
  }
  return MakeArray(type, scalars);
}

template <typename F>
void ExpectCorrupt(const std::string& where, const std::string& what, F&& read) {
  try {
    read();
    ADD_FAILURE() << "no error; expected one about " << what;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt) << message;
    EXPECT_NE(message.find(where), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// ------------------------------------------------------------------------- Bitpacked

TEST(V20Bitpacked, HandComputedBytes) {
  // Values 1, 2, 3, 4, 5 at 3 bits: 001 010 011 100 101 from bit 0 up gives the bytes
  // 0b11'010'001 = 0xD1 and 0b0'101'100'0 = 0x58.
  const std::string bytes = "\xD1\x58";
  ASSERT_EQ(PackBits({1, 2, 3, 4, 5}, 3), bytes);
  MemoryFile unsigned_file(1);
  unsigned_file.WritePage(0, Page(5, {bytes}, Bitpacked(3, 32, false, 0)));
  EXPECT_TRUE(ArraysEqual(*DecoderOf(unsigned_file, DataType::UInt32())->Read(0, 5),
                          *ExpectedInts(DataType::UInt32(), {1, 2, 3, 4, 5})));
  // Signed, bit 2 is the sign: 4 = 0b100 is -4 and 5 = 0b101 is -3.
  MemoryFile signed_file(1);
  signed_file.WritePage(0, Page(5, {bytes}, Bitpacked(3, 32, true, 0)));
  auto i32 = DataType::Int32();
  EXPECT_TRUE(
      ArraysEqual(*DecoderOf(signed_file, i32)->Read(0, 5), *ExpectedInts(i32, {1, 2, 3, uint64_t(-4), uint64_t(-3)})));
  EXPECT_TRUE(ArraysEqual(*DecoderOf(signed_file, i32)->Read(3, 2), *ExpectedInts(i32, {uint64_t(-4), uint64_t(-3)})));
}

TEST(V20Bitpacked, EveryWidthAndWordSizeSignedAndUnsigned) {
  const size_t n = 777;  // not a multiple of 8: the last value ends inside a byte
  for (uint32_t width : {1u, 3u, 7u, 8u, 13u, 16u, 31u, 33u, 63u, 64u}) {
    for (uint32_t word_bits : {8u, 16u, 32u, 64u}) {
      if (width > word_bits) continue;
      for (bool is_signed : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "width " << width << " word " << word_bits << " signed " << is_signed);
        const auto values = ValuesOfWidth(width, is_signed, n, width * 100 + word_bits);
        const TypePtr type = IntType(word_bits, is_signed);
        MemoryFile file(1);
        file.WritePage(0, Page(n, {PackBits(values, width)}, NoNulls(Bitpacked(width, word_bits, is_signed, 0))));
        auto decoder = DecoderOf(file, type);
        const ArrayPtr expected = ExpectedInts(type, values);
        const ArrayPtr got = decoder->Read(0, n);
        ValidateArray(*got, "bitpacked");
        EXPECT_TRUE(ArraysEqual(*got, *expected));
        // Ranges starting and ending at every bit offset within a byte.
        for (uint64_t start : {1, 2, 3, 5, 7, 8, 9, 100, 769})
          for (uint64_t count : {1, 3, 8}) {
            ASSERT_TRUE(ArraysEqual(*decoder->Read(start, count), *Slice(*expected, int64_t(start), int64_t(count))))
                << "rows " << start << "+" << count;
          }
        std::vector<uint64_t> rows = {776, 0, 391, 5, 5, 640};
        EXPECT_TRUE(ArraysEqual(*decoder->Take(rows), *Take(*expected, std::vector<int64_t>{776, 0, 391, 5, 5, 640})));
      }
    }
  }
}

TEST(V20Bitpacked, UnsignedFlagOnASignedTypeZeroExtends) {
  // The reference sets `signed` only when a value is negative; non-negative values of a
  // signed type keep their top bit clear, so 127 at 7 bits stays 127.
  MemoryFile file(1);
  file.WritePage(0, Page(4, {PackBits({127, 0, 64, 1}, 7)}, Bitpacked(7, 16, false, 0)));
  auto i16 = DataType::Int16();
  EXPECT_TRUE(ArraysEqual(*DecoderOf(file, i16)->Read(0, 4), *ExpectedInts(i16, {127, 0, 64, 1})));
}

TEST(V20Bitpacked, NullsInsideNullable) {
  // Validity in its own Flat buffer; the packed values hold a slot (zero) for each null.
  const std::vector<bool> valid = {true, false, true, true, false, false, true, true, true, false, true};
  const std::vector<uint64_t> values = {5, 0, uint64_t(-6), 1, 0, 0, uint64_t(-1), 7, uint64_t(-8), 0, 3};
  auto i64 = DataType::Int64();
  MemoryFile file(1);
  file.WritePage(0, Page(11, {Bitmap(valid), PackBits(values, 4)}, SomeNulls(Flat(1, 0), Bitpacked(4, 64, true, 1))));
  auto decoder = DecoderOf(file, i64);
  const ArrayPtr expected = ExpectedInts(i64, values, valid);
  const ArrayPtr got = decoder->Read(0, 11);
  ValidateArray(*got, "bitpacked with nulls");
  EXPECT_EQ(got->null_count, 4);
  EXPECT_TRUE(ArraysEqual(*got, *expected));
  EXPECT_TRUE(ArraysEqual(*decoder->Read(3, 7), *Slice(*expected, 3, 7)));
}

TEST(V20Bitpacked, PagesOfDifferentWidths) {
  // Page 0: 10 values at 5 bits; page 1: 6 values at 33 bits (unsigned 64-bit).
  std::vector<uint64_t> first, second;
  for (uint64_t k = 0; k < 10; ++k) first.push_back(k * 3);
  for (uint64_t k = 0; k < 6; ++k) second.push_back((uint64_t(1) << 32) + k * 1000003);
  MemoryFile file(1);
  file.WritePage(0, Page(10, {PackBits(first, 5)}, Bitpacked(5, 64, false, 0)));
  file.WritePage(0, Page(6, {PackBits(second, 33)}, NoNulls(Bitpacked(33, 64, false, 0))));
  auto u64 = DataType::UInt64();
  std::vector<uint64_t> all = first;
  all.insert(all.end(), second.begin(), second.end());
  const ArrayPtr expected = ExpectedInts(u64, all);
  auto decoder = DecoderOf(file, u64);
  EXPECT_EQ(decoder->num_rows(), 16u);
  EXPECT_TRUE(ArraysEqual(*decoder->Read(0, 16), *expected));
  EXPECT_TRUE(ArraysEqual(*decoder->Read(8, 5), *Slice(*expected, 8, 5)));
  std::vector<uint64_t> rows = {15, 2, 10};
  EXPECT_TRUE(ArraysEqual(*decoder->Take(rows), *Take(*expected, std::vector<int64_t>{15, 2, 10})));
}

TEST(V20Bitpacked, BinaryOffsetsAndListOffsets) {
  // Binary ends 1, 3, 3 + 7 (null: + null_adjustment 7), 6 at 4 bits: "a", "bb", null, "ccc".
  MemoryFile strings(1);
  pb::ArrayEncoding binary;
  *binary.mutable_binary()->mutable_indices() = NoNulls(Bitpacked(4, 64, false, 0));
  *binary.mutable_binary()->mutable_bytes() = Flat(8, 1);
  binary.mutable_binary()->set_null_adjustment(7);
  strings.WritePage(0, Page(4, {PackBits({1, 3, 10, 6}, 4), "abbccc"}, binary));
  auto utf8 = DataType::Utf8();
  auto s = [&](const char* v) { return Scalar{utf8, std::string(v)}; };
  const ArrayPtr expected_strings = MakeArray(utf8, {s("a"), s("bb"), Scalar::Null(utf8), s("ccc")});
  auto string_decoder = DecoderOf(strings, utf8);
  EXPECT_TRUE(ArraysEqual(*string_decoder->Read(0, 4), *expected_strings));
  EXPECT_TRUE(ArraysEqual(*string_decoder->Read(2, 2), *Slice(*expected_strings, 2, 2)));

  // List ends 2, 2 + 5 (null: + null_offset_adjustment 5), 4 at 3 bits over items 1..4:
  // [1, 2], null, [3, 4].
  MemoryFile lists(2);
  pb::ArrayEncoding list;
  *list.mutable_list()->mutable_offsets() = Bitpacked(3, 64, false, 0);
  list.mutable_list()->set_null_offset_adjustment(5);
  list.mutable_list()->set_num_items(4);
  lists.WritePage(0, Page(3, {PackBits({2, 7, 4}, 3)}, list));
  lists.WritePage(1, Page(4, {PackBits({1, 2, 3, 4}, 3)}, NoNulls(Bitpacked(3, 32, false, 0))));
  auto i32 = DataType::Int32();
  auto lt = DataType::List(i32);
  auto item = [&](int64_t v) { return Scalar{i32, v}; };
  const ArrayPtr expected_lists = MakeArray(lt, {Scalar{lt, std::vector<Scalar>{item(1), item(2)}}, Scalar::Null(lt),
                                                 Scalar{lt, std::vector<Scalar>{item(3), item(4)}}});
  auto list_decoder = MakeDecoder(MakeLanceField("l", lt), lists.Columns(), lists);
  EXPECT_TRUE(ArraysEqual(*list_decoder->Read(0, 3), *expected_lists));
  EXPECT_TRUE(ArraysEqual(*list_decoder->Read(1, 2), *Slice(*expected_lists, 1, 2)));
}

TEST(V20Bitpacked, CorruptPagesNameFileColumnAndPage) {
  auto i32 = DataType::Int32();
  const std::string packed = PackBits({1, 2, 3, 4, 5, 6, 7, 0}, 3);  // 3 bytes
  MemoryFile file(1);
  file.WritePage(0, Page(8, {packed}, Bitpacked(3, 32, false, 0)));   // page 0: fine
  file.WritePage(0, Page(8, {packed}, Bitpacked(0, 32, false, 0)));   // page 1: width 0
  file.WritePage(0, Page(8, {packed}, Bitpacked(65, 32, false, 0)));  // page 2: width > 64
  file.WritePage(0, Page(8, {packed}, Bitpacked(33, 32, false, 0)));  // page 3: wider than its word
  file.WritePage(0, Page(8, {packed}, Bitpacked(3, 24, false, 0)));   // page 4: no such word size
  file.WritePage(0, Page(8, {packed}, Bitpacked(3, 16, false, 0)));   // page 5: word is not the type's
  file.WritePage(0, Page(9, {packed}, Bitpacked(3, 32, false, 0)));   // page 6: 27 bits in 24
  file.WritePage(0, Page(8, {packed}, Bitpacked(3, 32, false, 4)));   // page 7: no buffer 4
  auto decoder = DecoderOf(file, i32);
  EXPECT_TRUE(ArraysEqual(*decoder->Read(0, 8), *ExpectedInts(i32, {1, 2, 3, 4, 5, 6, 7, 0})));
  const std::string at = "memory.lance: column 0 page ";
  ExpectCorrupt(at + "1:", "bit width 0", [&] { decoder->Read(8, 1); });
  ExpectCorrupt(at + "2:", "bit width 65", [&] { decoder->Read(16, 8); });
  ExpectCorrupt(at + "3:", "bit width 33 for 32-bit values", [&] { decoder->Read(24, 8); });
  ExpectCorrupt(at + "4:", "unpack to 24 bits", [&] { decoder->Read(32, 8); });
  ExpectCorrupt(at + "5:", "unpack to 16 bits but the field's type int32 needs 32", [&] { decoder->Read(40, 8); });
  ExpectCorrupt(at + "6:", "need bytes up to 4, but their buffer holds 3", [&] { decoder->Read(48, 9); });
  EXPECT_EQ(decoder->Read(48, 8)->length, 8);  // the rows the buffer does hold are fine
  ExpectCorrupt(at + "7:", "buffer 4", [&] { decoder->Read(57, 1); });
}

// ---------------------------------------------------------------- BitpackedForNonNeg

TEST(V20BitpackedForNonNeg, ChunksOfEveryWordSize) {
  const size_t n = 2500;  // two full chunks and a partial one
  for (uint32_t word_bits : {8u, 16u, 32u, 64u}) {
    for (uint32_t width : {1u, 3u, 7u, 13u, 31u, 33u, 63u, 64u}) {
      if (width > word_bits) continue;
      SCOPED_TRACE(::testing::Message() << "width " << width << " word " << word_bits);
      const auto values = ValuesOfWidth(width, false, n, width + 7 * word_bits);
      const TypePtr type = IntType(word_bits, word_bits == 32);  // a signed type reads the same bits
      MemoryFile file(1);
      file.WritePage(0, Page(n, {PackFastLanesChunks(values, word_bits, width)}, ForNonNeg(width, word_bits, 0)));
      auto decoder = DecoderOf(file, type);
      const ArrayPtr expected = ExpectedInts(type, values);
      EXPECT_TRUE(ArraysEqual(*decoder->Read(0, n), *expected));
      for (auto [start, count] :
           std::vector<std::pair<uint64_t, uint64_t>>{{1, 5}, {1000, 50}, {1023, 1026}, {2047, 453}}) {
        ASSERT_TRUE(ArraysEqual(*decoder->Read(start, count), *Slice(*expected, int64_t(start), int64_t(count))))
            << "rows " << start << "+" << count;
      }
    }
  }
}

TEST(V20BitpackedForNonNeg, NullsReadsOnlyTheChunksNeededAndCorruptPages) {
  // 3000 u16 values at 11 bits with every 7th row null: three chunks of 1408 bytes.
  const size_t n = 3000;
  std::vector<uint64_t> values(n);
  std::vector<bool> valid(n);
  for (size_t k = 0; k < n; ++k) {
    valid[k] = k % 7 != 0;
    values[k] = valid[k] ? (k * 37) % 2048 : 0;
  }
  MemoryFile file(1);
  const std::string chunks = PackFastLanesChunks(values, 16, 11);
  ASSERT_EQ(chunks.size(), 3u * 1408);
  file.WritePage(0, Page(n, {Bitmap(valid), chunks}, SomeNulls(Flat(1, 0), ForNonNeg(11, 16, 1))));
  auto u16 = DataType::UInt16();
  auto decoder = DecoderOf(file, u16);
  const ArrayPtr expected = ExpectedInts(u16, values, valid);
  EXPECT_TRUE(ArraysEqual(*decoder->Read(0, n), *expected));
  file.ResetCounters();
  EXPECT_TRUE(ArraysEqual(*decoder->Read(1100, 20), *Slice(*expected, 1100, 20)));
  EXPECT_EQ(file.bytes_read(), 1408u + 3u);  // the second chunk, and the 20 validity bits' bytes

  MemoryFile bad(1);
  bad.WritePage(0, Page(n, {chunks.substr(0, chunks.size() - 1)}, ForNonNeg(11, 16, 0)));
  bad.WritePage(0, Page(4, {std::string(128, '\0')}, ForNonNeg(0, 16, 0)));
  bad.WritePage(0, Page(4, {std::string(128 * 17, '\0')}, ForNonNeg(17, 16, 0)));
  auto bad_decoder = DecoderOf(bad, u16);
  EXPECT_TRUE(ArraysEqual(*bad_decoder->Read(0, 2048), *Slice(*ExpectedInts(u16, values), 0, 2048)));
  const std::string at = "memory.lance: column 0 page ";
  ExpectCorrupt(at + "0:", "need bytes up to 4224, but their buffer holds 4223", [&] { bad_decoder->Read(2048, 1); });
  ExpectCorrupt(at + "1:", "bit width 0 for 16-bit values", [&] { bad_decoder->Read(n, 4); });
  ExpectCorrupt(at + "2:", "bit width 17 for 16-bit values", [&] { bad_decoder->Read(n + 4, 4); });
}

// ------------------------------------------------------- the reference reads our pages

// Rewrites a 2.0 data file so that the Flat values of every page of column c become
// Bitpacked at widths[c] (with its `signed` flag), or BitpackedForNonNeg when `fastlanes`,
// keeping the file's size: the dataset's manifest records it. Page buffers come first,
// then padding, then the global buffers, column metadata, offset tables and footer.
std::string RepackFlatValues(const std::string& bytes, const std::vector<std::pair<uint32_t, bool>>& widths,
                             bool fastlanes) {
  auto le = [&](uint64_t pos, size_t n) { return reference_test::LoadLE(bytes, pos, n); };
  const uint64_t footer = bytes.size() - 40, cmo = le(footer + 8, 8), gbo = le(footer + 16, 8);
  const uint32_t num_global = uint32_t(le(footer + 24, 4)), num_columns = uint32_t(le(footer + 28, 4));
  std::string out;
  std::vector<std::string> metas;
  for (uint32_t c = 0; c < num_columns; ++c) {
    lance::file::v2::ColumnMetadata meta;
    EXPECT_TRUE(meta.ParseFromString(bytes.substr(le(cmo + 16 * c, 8), le(cmo + 16 * c + 8, 8))));
    for (auto& page : *meta.mutable_pages()) {
      google::protobuf::Any any;
      any.ParseFromString(page.encoding().direct().encoding());
      pb::ArrayEncoding encoding;
      encoding.ParseFromString(any.value());
      pb::ArrayEncoding* values = &encoding;
      if (values->has_nullable()) {
        values = values->mutable_nullable()->has_no_nulls()
                     ? values->mutable_nullable()->mutable_no_nulls()->mutable_values()
                     : values->mutable_nullable()->mutable_some_nulls()->mutable_values();
      }
      EXPECT_TRUE(values->has_flat()) << encoding.ShortDebugString();
      const uint32_t word_bits = uint32_t(values->flat().bits_per_value()),
                     buffer = values->flat().buffer().buffer_index();
      const auto [width, is_signed] = widths.at(c);
      std::vector<std::string> buffers;
      for (int b = 0; b < page.buffer_offsets_size(); ++b)
        buffers.push_back(bytes.substr(page.buffer_offsets(b), page.buffer_sizes(b)));
      std::vector<uint64_t> words;
      for (uint64_t k = 0; k < page.length(); ++k)
        words.push_back(reference_test::LoadLE(buffers[buffer], k * word_bits / 8, word_bits / 8));
      buffers[buffer] = fastlanes ? PackFastLanesChunks(words, word_bits, width) : PackBits(words, width);
      *values = fastlanes ? ForNonNeg(width, word_bits, buffer) : Bitpacked(width, word_bits, is_signed, buffer);
      any.set_value(encoding.SerializeAsString());
      page.mutable_encoding()->mutable_direct()->set_encoding(any.SerializeAsString());
      for (size_t b = 0; b < buffers.size(); ++b) {
        out.resize((out.size() + 63) / 64 * 64, '\0');
        page.set_buffer_offsets(int(b), out.size());
        page.set_buffer_sizes(int(b), buffers[b].size());
        out += buffers[b];
      }
    }
    metas.push_back(meta.SerializeAsString());
  }
  std::vector<std::string> globals;
  for (uint32_t g = 0; g < num_global; ++g)
    globals.push_back(bytes.substr(le(gbo + 16 * g, 8), le(gbo + 16 * g + 8, 8)));
  uint64_t tail = 16 * uint64_t(num_columns + num_global) + 40;
  for (const auto& m : metas) tail += m.size();
  for (const auto& g : globals) tail += g.size();
  EXPECT_LE(out.size() + tail, bytes.size()) << "the packed file must not be larger than the original";
  out.resize(bytes.size() - tail, '\0');
  auto put = [&](uint64_t v, int n) { out.append(reinterpret_cast<const char*>(&v), size_t(n)); };
  std::vector<std::pair<uint64_t, uint64_t>> global_at, meta_at;
  for (const auto& g : globals) global_at.emplace_back(out.size(), g.size()), out += g;
  const uint64_t column_meta_start = out.size();
  for (const auto& m : metas) meta_at.emplace_back(out.size(), m.size()), out += m;
  const uint64_t new_cmo = out.size();
  for (auto [at, n] : meta_at) put(at, 8), put(n, 8);
  const uint64_t new_gbo = out.size();
  for (auto [at, n] : global_at) put(at, 8), put(n, 8);
  put(column_meta_start, 8);
  put(new_cmo, 8);
  put(new_gbo, 8);
  put(num_global, 4);
  put(num_columns, 4);
  out += bytes.substr(footer + 32, 8);  // version 0.3 and "LANC"
  return out;
}

// Rewrites the only data file of the reference-written `table` with its Flat pages
// bit-packed (`widths` per column), then checks that the reference reads the rewritten
// file as it read its own, and that lancelet reads `columns` from it (whole, and rows
// [slice_start, slice_start + slice_length)). `first_encoding` must appear in column 0's
// page encoding.
void ExpectBothReadThePackedFile(const std::string& table, const std::vector<std::pair<uint32_t, bool>>& widths,
                                 bool fastlanes, const std::string& first_encoding,
                                 const std::vector<ArrayPtr>& columns, int64_t slice_start, int64_t slice_length) {
  const auto dump_before = lancelet::testing::RunOracle({"dump", table});
  ASSERT_EQ(dump_before.exit_code, 0) << dump_before.err;
  const std::string data_file = reference_test::OnlyDataFile(table);
  const std::string original = lancelet::testing::ReadFileToString(data_file);
  const std::string packed = RepackFlatValues(original, widths, fastlanes);
  ASSERT_EQ(packed.size(), original.size());  // the manifest records the file's size
  lancelet::testing::WriteStringToFile(data_file, packed);
  ASSERT_NE(reference_test::PageEncodings(data_file, 0).find(first_encoding), std::string::npos);

  const auto dump_after = lancelet::testing::RunOracle({"dump", table});
  ASSERT_EQ(dump_after.exit_code, 0) << dump_after.err;
  EXPECT_EQ(dump_after.out, dump_before.out);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, data_file);
  for (size_t c = 0; c < columns.size(); ++c) {
    SCOPED_TRACE(reader->schema().fields()[c].name);
    EXPECT_NE(reference_test::PageEncodings(data_file, uint32_t(c)).find("bitpacked"), std::string::npos);
    EXPECT_TRUE(ArraysEqual(*reader->ReadField(c, 0, uint64_t(columns[c]->length)), *columns[c]));
    EXPECT_TRUE(ArraysEqual(*reader->ReadField(c, uint64_t(slice_start), uint64_t(slice_length)),
                            *Slice(*columns[c], slice_start, slice_length)));
  }
}

TEST(V20Bitpacked, TheReferenceReadsHandPackedPagesAsLanceletDoes) {
  if (!lancelet::testing::OracleAvailable()) GTEST_SKIP() << "the oracle (node + @lancedb/lancedb) is missing";
  // One column per (type, width): widths 1, 3, 7, 13, 31, 33, 63, 64, signed and not,
  // one with nulls.
  struct Spec {
    const char* name;
    TypePtr type;
    uint32_t width;
    bool nulls;
  };
  const std::vector<Spec> specs = {
      {"u8_w1", DataType::UInt8(), 1, false},     {"i8_w3", DataType::Int8(), 3, false},
      {"i16_w7", DataType::Int16(), 7, false},    {"u16_w13", DataType::UInt16(), 13, false},
      {"i32_w13", DataType::Int32(), 13, true},   {"i32_w31", DataType::Int32(), 31, false},
      {"u32_w31", DataType::UInt32(), 31, false}, {"i64_w33", DataType::Int64(), 33, false},
      {"u64_w33", DataType::UInt64(), 33, true},  {"i64_w63", DataType::Int64(), 63, false},
      {"i64_w64", DataType::Int64(), 64, false},  {"u64_w63", DataType::UInt64(), 63, false},
  };
  const size_t n = 1000;
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> columns;
  std::vector<std::pair<uint32_t, bool>> widths;
  for (size_t c = 0; c < specs.size(); ++c) {
    const Spec& spec = specs[c];
    const bool is_signed = spec.type->is_signed_integer();
    std::vector<bool> valid(n, true);
    if (spec.nulls)
      for (size_t k = 0; k < n; k += 3) valid[k] = false;
    fields.push_back(Field::Make(spec.name, spec.type));
    columns.push_back(ExpectedInts(spec.type, ValuesOfWidth(spec.width, is_signed, n, uint32_t(c) + 1),
                                   spec.nulls ? valid : std::vector<bool>{}));
    widths.emplace_back(spec.width, is_signed);
  }
  lancelet::testing::TempDir dir;
  const std::string table =
      reference_test::CreateReferenceTable(dir, "packed", std::make_shared<Schema>(fields), columns, "2.0");
  ExpectBothReadThePackedFile(table, widths, /*fastlanes=*/false, "bitpacked { compressed_bits_per_value: 1", columns,
                              333, 77);
}

TEST(V20BitpackedForNonNeg, TheReferenceReadsHandPackedPagesAsLanceletDoes) {
  if (!lancelet::testing::OracleAvailable()) GTEST_SKIP() << "the oracle (node + @lancedb/lancedb) is missing";
  // Non-negative values only; 2500 rows make two full chunks and a partial one.
  const std::vector<std::tuple<const char*, TypePtr, uint32_t>> specs = {
      {"u8_w1", DataType::UInt8(), 1},     {"u8_w7", DataType::UInt8(), 7},     {"u16_w3", DataType::UInt16(), 3},
      {"u16_w13", DataType::UInt16(), 13}, {"i32_w13", DataType::Int32(), 13},  {"u32_w31", DataType::UInt32(), 31},
      {"u64_w1", DataType::UInt64(), 1},   {"u64_w33", DataType::UInt64(), 33}, {"i64_w63", DataType::Int64(), 63},
  };
  const size_t n = 2500;
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> columns;
  std::vector<std::pair<uint32_t, bool>> widths;
  for (size_t c = 0; c < specs.size(); ++c) {
    const auto& [name, type, width] = specs[c];
    std::vector<bool> valid(n, true);
    for (size_t k = 5; k < n; k += 11) valid[k] = c % 2 == 1;  // nulls in every other column
    fields.push_back(Field::Make(name, type));
    columns.push_back(ExpectedInts(type, ValuesOfWidth(width, false, n, uint32_t(c) + 50), valid));
    widths.emplace_back(width, false);
  }
  lancelet::testing::TempDir dir;
  const std::string table =
      reference_test::CreateReferenceTable(dir, "fastlanes", std::make_shared<Schema>(fields), columns, "2.0");
  ExpectBothReadThePackedFile(table, widths, /*fastlanes=*/true, "bitpacked_for_non_neg { compressed_bits_per_value: 1",
                              columns, 1000, 1100);
}

}  // namespace
}  // namespace lancelet::format::v20
