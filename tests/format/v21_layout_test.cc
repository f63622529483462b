// Byte layouts of 2.1 / 2.2 pages as the reference writes and reads them, chunk-wise
// reads, and errors for encodings this build does not decode.
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "format/little_endian.h"
#include "format/v21_compression.h"
#include "format/v21_test_util.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"

namespace lancelet::format::v21_test {
namespace {

namespace pb = lance::encodings21;

const FileVersion kV21{2, 1};
const FileVersion kV22{2, 2};

std::unique_ptr<MemoryFile> WriteArray(const LanceField& field, const ArrayPtr& array, FileVersion version) {
  FileWriterOptions options;
  options.version = version;
  auto encoder = MakeFieldEncoder(version, field, options);
  auto file = std::make_unique<MemoryFile>(encoder->num_columns());
  encoder->Append(*array, *file);
  encoder->Finish(*file);
  return file;
}

std::string PageBuffer(const MemoryFile& file, size_t column, int page, int buffer) {
  const auto& p = file.column(column).pages(page);
  return file.bytes().substr(p.buffer_offsets(buffer), p.buffer_sizes(buffer));
}

std::string Hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

// The encoding inside General(scheme, level) of `encoding`, once the wrapper is checked
// (level nullopt: it must be absent, the scheme's default).
const pb::CompressiveEncoding& GeneralValues(const pb::CompressiveEncoding& encoding, pb::CompressionScheme scheme,
                                             std::optional<int32_t> level) {
  EXPECT_TRUE(encoding.has_general());
  const auto& compression = encoding.general().compression();
  EXPECT_EQ(compression.scheme(), scheme);
  if (level) EXPECT_EQ(compression.level(), *level);
  else EXPECT_FALSE(compression.has_level());
  return encoding.general().values();
}

// Values kept Flat (the reference's "lance-encoding:compression" = "none"), for the tests of
// the plain chunk layout.
const Metadata kUncompressed = {{"lance-encoding:compression", "none"}};
TypePtr UncompressedInt32List() { return DataType::List(Field::Make("item", DataType::Int32(), true, kUncompressed)); }

ArrayPtr Int32s(std::vector<std::optional<int32_t>> values) {
  std::vector<Scalar> s;
  for (auto v : values) s.push_back(v ? Scalar{DataType::Int32(), int64_t(*v)} : Scalar::Null(DataType::Int32()));
  return MakeArray(DataType::Int32(), s);
}

TEST(V21Layout, MiniBlockFlatChunkBytes21) {
  const LanceField field = MakeLanceField("x", DataType::Int32(), kUncompressed);
  auto file = WriteArray(field, Int32s({1, 2, 3}), kV21);
  const auto layout = PageLayoutOf(file->column(0).pages(0));
  ASSERT_TRUE(layout.has_mini_block_layout());
  const auto& mb = layout.mini_block_layout();
  EXPECT_EQ(mb.value_compression().flat().bits_per_value(), 32u);
  EXPECT_FALSE(mb.has_rep_compression());
  EXPECT_FALSE(mb.has_def_compression());
  EXPECT_FALSE(mb.has_large_chunk());
  EXPECT_EQ(mb.num_items(), 3u);
  EXPECT_EQ(mb.num_buffers(), 1u);
  ASSERT_EQ(mb.layers_size(), 1);
  EXPECT_EQ(mb.layers(0), pb::REPDEF_ALL_VALID_ITEM);
  ASSERT_EQ(file->column(0).pages(0).buffer_sizes_size(), 2);
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 0)), "2000");
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 1)), "00000c00fefefefe" "010000000200000003000000fefefefe");
}

TEST(V21Layout, MiniBlockFlatChunkBytes22) {
  const LanceField field = MakeLanceField("x", DataType::Int32(), kUncompressed);
  auto file = WriteArray(field, Int32s({1, 2, 3}), kV22);
  const auto layout = PageLayoutOf(file->column(0).pages(0));
  EXPECT_TRUE(layout.mini_block_layout().has_large_chunk());
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 0)), "20000000");
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 1)), "00000c000000fefe" "010000000200000003000000fefefefe");
}

TEST(V21Layout, ChunksOf1024Int32s) {
  std::vector<std::optional<int32_t>> v;
  for (int k = 0; k < 2500; ++k) v.push_back(k);
  const LanceField field = MakeLanceField("x", DataType::Int32(), kUncompressed);
  auto file = WriteArray(field, Int32s(v), kV21);
  // 2 full chunks of 8 + 4096 bytes (513 words, log2 1024 = 10), then 452 values.
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 0)), "0a200a20" "200e");
}

// Numbers whose high bits are never set are bit-packed as the reference packs them: a
// chunk per block of 1024 values, each block led by its own width word. 0..2499 packs at
// 10, 11 and 12 bits: chunks of 8 + 4 + 1280 (+4 fill), 8 + 4 + 1408 (+4), 8 + 4 + 1536 (+4)
// bytes, so metadata words (161 << 4 | 10), (177 << 4 | 10) and (193 << 4 | 0).
TEST(V21Layout, NarrowIntegersAreBitPackedPerBlock) {
  std::vector<std::optional<int32_t>> v;
  for (int k = 0; k < 2500; ++k) v.push_back(k);
  const LanceField field = MakeLanceField("x", DataType::Int32());
  for (FileVersion version : {kV21, kV22}) {
    auto file = WriteArray(field, Int32s(v), version);
    const auto layout = PageLayoutOf(file->column(0).pages(0));
    EXPECT_EQ(layout.mini_block_layout().value_compression().inline_bitpacking().uncompressed_bits_per_value(), 32u);
    if (version == kV21) {
      EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 0)), "1a0a" "1a0b" "100c");
    }
    const std::string chunks = PageBuffer(*file, 0, 0, 1);
    EXPECT_EQ(chunks.size(), 1296u + 1424u + 1552u);  // a 2.2 header (u16 + u32) pads to 8 too
    auto read = MakeFieldDecoder(version, field, file->Columns(), *file)->Read(0, 2500);
    ASSERT_EQ(read->length, 2500);
    for (int k = 0; k < 2500; ++k) ASSERT_EQ(read->values<int32_t>()[k], k);
  }
  // A value using the top bit keeps the page Flat.
  v[7] = -1;
  auto file = WriteArray(field, Int32s(v), kV21);
  EXPECT_EQ(PageLayoutOf(file->column(0).pages(0)).mini_block_layout().value_compression().flat().bits_per_value(), 32u);
}

// Packing must save at least a sixteenth of the plain bytes: positive random doubles
// (63 of 64 bits) stay Flat, since unpacking costs every read, while 64-bit values of
// up to 59 bits still pack (a block of 1024: 8 + 128 x 59 bytes against 15/16 of 8192).
TEST(V21Layout, PackingThatSavesLittleStaysFlat) {
  std::mt19937_64 rng(3);
  std::vector<double> doubles;
  std::vector<Scalar> values;
  for (int k = 0; k < 4096; ++k)
    values.push_back(Scalar{DataType::Float64(), doubles.emplace_back(double(rng() % 1000000) / 7.0 + 1.0)});
  const ArrayPtr array = MakeArray(DataType::Float64(), values);
  const LanceField real = MakeLanceField("x", DataType::Float64());
  for (FileVersion version : {kV21, kV22}) {
    auto file = WriteArray(real, array, version);
    const auto mb = PageLayoutOf(file->column(0).pages(0)).mini_block_layout();
    EXPECT_EQ(mb.value_compression().flat().bits_per_value(), 64u) << mb.ShortDebugString();
    auto read = MakeFieldDecoder(version, real, file->Columns(), *file)->Read(0, 4096);
    for (int k = 0; k < 4096; ++k) ASSERT_EQ(read->values<double>()[k], doubles[size_t(k)]);
  }
  const LanceField wide = MakeLanceField("x", DataType::Int64());
  for (uint64_t bits : {59u, 60u, 61u}) {
    std::vector<Scalar> v;
    for (int k = 0; k < 4096; ++k)
      v.push_back(Scalar{DataType::Int64(), int64_t((rng() >> (64 - bits)) | (uint64_t(1) << (bits - 1)))});
    auto file = WriteArray(wide, MakeArray(DataType::Int64(), v), kV21);
    const auto mb = PageLayoutOf(file->column(0).pages(0)).mini_block_layout();
    EXPECT_EQ(mb.value_compression().has_inline_bitpacking(), bits <= 59) << bits << " bits: " << mb.ShortDebugString();
  }
}

// 64-bit numbers with few distinct values get a dictionary at 2.2, as the reference gives
// them: 1,000 doubles of 10 values (in no runs) become 10 dictionary items and 32-bit keys
// bit-packed at 4 bits. 2.1 keeps them without one, and int32s never pay for one.
TEST(V21Layout, FewDistinctWideNumbersGetADictionaryAt22) {
  std::vector<Scalar> doubles, ints;
  for (int k = 0; k < 1000; ++k) {
    doubles.push_back({DataType::Float64(), 0.5 + double((k * 7) % 10)});
    ints.push_back({DataType::Int32(), int64_t((k * 7) % 10) << 20});
  }
  const LanceField field = MakeLanceField("d", DataType::Float64());
  auto file = WriteArray(field, MakeArray(DataType::Float64(), doubles), kV22);
  const auto mb = PageLayoutOf(file->column(0).pages(0)).mini_block_layout();
  ASSERT_TRUE(mb.has_dictionary());
  EXPECT_EQ(mb.num_dictionary_items(), 10u);
  // At 2.2 the reference compresses every dictionary with LZ4, level unset.
  EXPECT_EQ(GeneralValues(mb.dictionary(), pb::COMPRESSION_ALGORITHM_LZ4, std::nullopt).flat().bits_per_value(), 64u);
  EXPECT_EQ(mb.value_compression().inline_bitpacking().uncompressed_bits_per_value(), 32u);
  auto read = MakeFieldDecoder(kV22, field, file->Columns(), *file)->Read(0, 1000);
  for (int k = 0; k < 1000; ++k) ASSERT_EQ(read->values<double>()[k], 0.5 + double((k * 7) % 10)) << k;
  auto v21 = WriteArray(field, MakeArray(DataType::Float64(), doubles), kV21);
  EXPECT_FALSE(PageLayoutOf(v21->column(0).pages(0)).mini_block_layout().has_dictionary());
  const LanceField int_field = MakeLanceField("i", DataType::Int32());
  auto narrow = WriteArray(int_field, MakeArray(DataType::Int32(), ints), kV22);
  EXPECT_FALSE(PageLayoutOf(narrow->column(0).pages(0)).mini_block_layout().has_dictionary());
}

// Numbers in long runs are run-length encoded (fewer runs than half the values), with two
// value buffers per chunk and chunks of 4096 values: 5000 values k / 1000 are runs of 1000,
// each split in 255 + 255 + 255 + 235. Chunk 0 (4096 values) holds 17 runs: a header of
// u16 0 levels, u16 68 run-value bytes, u16 17 length bytes, then 72 + 24 bytes: 104
// bytes, metadata (12 << 4 | 12). Chunk 1 holds 904 fours: 4 runs, 32 bytes, (3 << 4).
TEST(V21Layout, LongRunsAreRunLengthEncoded) {
  std::vector<std::optional<int32_t>> v;
  for (int k = 0; k < 5000; ++k) v.push_back(k / 1000);
  const LanceField field = MakeLanceField("x", DataType::Int32());
  auto file = WriteArray(field, Int32s(v), kV21);
  const auto mb = PageLayoutOf(file->column(0).pages(0)).mini_block_layout();
  EXPECT_EQ(mb.value_compression().rle().values().flat().bits_per_value(), 32u);
  EXPECT_EQ(mb.value_compression().rle().run_lengths().flat().bits_per_value(), 8u);
  EXPECT_EQ(mb.num_buffers(), 2u);
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 0)), "cc00" "3000");
  const std::string chunks = PageBuffer(*file, 0, 0, 1);
  ASSERT_EQ(chunks.size(), 104u + 32u);
  EXPECT_EQ(Hex(chunks.substr(0, 8)), "000044001100fefe");
  EXPECT_EQ(Hex(chunks.substr(80, 8)), "ffffffebffffffeb");  // the first run lengths
  auto read = MakeFieldDecoder(kV21, field, file->Columns(), *file)->Read(0, 5000);
  ASSERT_EQ(read->length, 5000);
  for (int k = 0; k < 5000; ++k) ASSERT_EQ(read->values<int32_t>()[k], k / 1000) << k;
}

// Strings are dictionary-encoded when the reference would: 1,000 values of 10 distinct
// 12-byte strings become a dictionary of the 10 (in order of first appearance) and 32-bit
// keys bit-packed at 4 bits; 1,000 distinct strings, or fewer than 100 values, stay plain.
// The dictionary is plain at 2.1 and LZ4-compressed at 2.2 (u32 uncompressed size, then
// an LZ4 block of the same plain form).
TEST(V21Layout, LowCardinalityStringsGetADictionary) {
  auto strings = [](int n, int distinct) {
    std::vector<Scalar> s;
    for (int k = 0; k < n; ++k) s.push_back({DataType::Utf8(), fmt::format("category-{:03}", k % distinct)});
    return MakeArray(DataType::Utf8(), s);
  };
  const LanceField field = MakeLanceField("s", DataType::Utf8());
  for (FileVersion version : {kV21, kV22}) {
    auto file = WriteArray(field, strings(1000, 10), version);
    const auto mb = PageLayoutOf(file->column(0).pages(0)).mini_block_layout();
    ASSERT_TRUE(mb.has_dictionary());
    EXPECT_EQ(mb.num_dictionary_items(), 10u);
    EXPECT_EQ(mb.value_compression().inline_bitpacking().uncompressed_bits_per_value(), 32u);
    // Buffer 2: u32 32, u32 start of the bytes (8 + 4 * 11), 11 offsets, the 10 values.
    std::string dictionary = PageBuffer(*file, 0, 0, 2);
    if (version == kV22) {
      const auto& general = mb.dictionary().general();
      ASSERT_EQ(general.compression().scheme(), pb::COMPRESSION_ALGORITHM_LZ4);
      EXPECT_EQ(general.values().variable().offsets().flat().bits_per_value(), 32u);
      EXPECT_EQ(LoadLE(dictionary.data(), 4), 8u + 44u + 120u);
      EXPECT_LT(dictionary.size(), 8u + 44u + 120u);
      dictionary = v21::DecompressBuffer(general.compression(), dictionary, "test");
    }
    EXPECT_EQ(dictionary.size(), 8u + 44u + 120u);
    EXPECT_EQ(dictionary.substr(52, 24), "category-000category-001");
    auto read = MakeFieldDecoder(version, field, file->Columns(), *file)->Read(0, 1000);
    ASSERT_EQ(read->length, 1000);
    EXPECT_EQ(read->GetView(997), "category-007");
  }
  // Short strings: 1,000 values of 50 two- or three-byte names. Their offsets are most of
  // their plain bytes, so a dictionary pays (the reference gives them one too).
  std::vector<Scalar> names;
  for (int k = 0; k < 1000; ++k) names.push_back({DataType::Utf8(), fmt::format("c{}", k % 50)});
  auto short_file = WriteArray(field, MakeArray(DataType::Utf8(), names), kV22);
  EXPECT_EQ(PageLayoutOf(short_file->column(0).pages(0)).mini_block_layout().num_dictionary_items(), 50u);
  for (auto [n, distinct] : {std::pair{1000, 1000}, std::pair{99, 1}}) {
    auto file = WriteArray(field, strings(n, distinct), kV21);
    EXPECT_FALSE(PageLayoutOf(file->column(0).pages(0)).mini_block_layout().has_dictionary()) << n << " " << distinct;
  }
}

// A large_utf8 dictionary has 64-bit offsets, as the column's own values would: u64 64,
// u64 start of the bytes (16 + 8 * 11), 11 offsets, the 10 values. Readers build the
// column from the dictionary's offsets, and the reference (12.0.0 and 14.0.2) refuses
// 32-bit ones for a large type ("expected 64-bit offsets but got 32-bit offsets").
TEST(V21Layout, LargeStringDictionariesHave64BitOffsets) {
  std::vector<Scalar> s;
  for (int k = 0; k < 1000; ++k) s.push_back({DataType::LargeUtf8(), fmt::format("category-{:03}", k % 10)});
  const LanceField field = MakeLanceField("s", DataType::LargeUtf8());
  for (FileVersion version : {kV21, kV22}) {
    auto file = WriteArray(field, MakeArray(DataType::LargeUtf8(), s), version);
    const auto mb = PageLayoutOf(file->column(0).pages(0)).mini_block_layout();
    ASSERT_TRUE(mb.has_dictionary());
    EXPECT_EQ(mb.num_dictionary_items(), 10u);
    std::string dictionary = PageBuffer(*file, 0, 0, 2);
    const pb::CompressiveEncoding* encoding = &mb.dictionary();
    if (version == kV22) {
      encoding = &mb.dictionary().general().values();
      dictionary = v21::DecompressBuffer(mb.dictionary().general().compression(), dictionary, "test");
    }
    EXPECT_EQ(encoding->variable().offsets().flat().bits_per_value(), 64u);
    ASSERT_EQ(dictionary.size(), 16u + 88u + 120u);
    EXPECT_EQ(LoadLE(dictionary.data(), 8), 64u);
    EXPECT_EQ(LoadLE(dictionary.data() + 8, 8), 104u);
    EXPECT_EQ(LoadLE(dictionary.data() + 16 + 8 * 10, 8), 120u);
    EXPECT_EQ(dictionary.substr(104, 24), "category-000category-001");
    auto read = MakeFieldDecoder(version, field, file->Columns(), *file)->Read(0, 1000);
    ASSERT_EQ(read->length, 1000);
    EXPECT_EQ(read->GetView(997), "category-007");
  }
}

TEST(V21Layout, NullableChunkHasDefinitionLevels) {
  const LanceField field = MakeLanceField("x", DataType::Int32(), kUncompressed);
  auto file = WriteArray(field, Int32s({1, std::nullopt, 3}), kV21);
  const auto layout_mb = PageLayoutOf(file->column(0).pages(0));
  const auto& mb = layout_mb.mini_block_layout();
  ASSERT_TRUE(mb.has_def_compression());
  // Levels bit-packed out of line at 1 bit; 3 levels are kept raw (padding would cost more).
  EXPECT_EQ(mb.def_compression().out_of_line_bitpacking().uncompressed_bits_per_value(), 16u);
  EXPECT_EQ(mb.def_compression().out_of_line_bitpacking().values().flat().bits_per_value(), 1u);
  EXPECT_EQ(mb.layers(0), pb::REPDEF_NULLABLE_ITEM);
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 0)), "3000");
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 1)), "030006000c00fefe" "000001000000fefe" "010000000000000003000000fefefefe");
}

TEST(V21Layout, VariableChunkBytes) {
  const LanceField field = MakeLanceField("s", DataType::Utf8());
  auto array = MakeArray(DataType::Utf8(), {{DataType::Utf8(), std::string("ab")}, {DataType::Utf8(), std::string()},
                                            {DataType::Utf8(), std::string("c")}});
  auto file = WriteArray(field, array, kV21);
  const auto layout_mb = PageLayoutOf(file->column(0).pages(0));
  const auto& mb = layout_mb.mini_block_layout();
  ASSERT_TRUE(mb.value_compression().has_variable());
  EXPECT_EQ(mb.value_compression().variable().offsets().flat().bits_per_value(), 32u);
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 1)),
            "00001400fefefefe" "10000000120000001200000013000000" "61626348" "fefefefe");
}

TEST(V21Layout, ListRepetitionLevelsAndIndex) {
  const auto type = UncompressedInt32List();
  auto list = [&](std::vector<int64_t> items) {
    std::vector<Scalar> s;
    for (auto v : items) s.push_back({DataType::Int32(), v});
    return Scalar{type, s};
  };
  const LanceField field = MakeLanceField("l", type);
  auto file = WriteArray(field, MakeArray(type, {list({1, 2}), list({3})}), kV21);
  const auto layout_mb = PageLayoutOf(file->column(0).pages(0));
  const auto& mb = layout_mb.mini_block_layout();
  ASSERT_EQ(mb.layers_size(), 2);
  EXPECT_EQ(mb.layers(0), pb::REPDEF_ALL_VALID_ITEM);
  EXPECT_EQ(mb.layers(1), pb::REPDEF_ALL_VALID_LIST);
  EXPECT_TRUE(mb.has_rep_compression());
  EXPECT_FALSE(mb.has_def_compression());
  EXPECT_EQ(mb.repetition_index_depth(), 1u);
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 1)), "030006000c00fefe" "010000000100fefe" "010000000200000003000000fefefefe");
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 2)), "0200000000000000" "0000000000000000");
}

// 19,990 null lists and then ten lists of two: one chunk of 20,010 levels, as the
// reference writes it. 2.1 bit-packs the levels at 1 bit (the reference's chunk header:
// 20010 levels, rep 2560 bytes, def 2560); 2.2 run-length encodes them, smaller here (its
// header: rep 302 bytes, def 248). Such runs were refused before levels were compressed.
TEST(V21Layout, ALongRunOfNullListsIsOneChunkOfPackedLevels) {
  const auto type = DataType::List(DataType::Int32());
  std::vector<Scalar> rows(19990, Scalar::Null(type));
  for (int k = 0; k < 10; ++k)
    rows.push_back(Scalar{type, std::vector<Scalar>{{DataType::Int32(), int64_t(k)}, {DataType::Int32(), int64_t(k + 1)}}});
  const LanceField field = MakeLanceField("l", type);
  for (FileVersion version : {kV21, kV22}) {
    auto file = WriteArray(field, MakeArray(type, rows), version);
    const auto layout = PageLayoutOf(file->column(0).pages(0));
    const auto& mb = layout.mini_block_layout();
    if (version == kV21) {
      EXPECT_EQ(mb.rep_compression().out_of_line_bitpacking().values().flat().bits_per_value(), 1u);
      EXPECT_EQ(mb.def_compression().out_of_line_bitpacking().values().flat().bits_per_value(), 1u);
    } else {
      EXPECT_EQ(mb.rep_compression().rle().run_lengths().flat().bits_per_value(), 8u);
      EXPECT_EQ(mb.def_compression().rle().values().flat().bits_per_value(), 16u);
    }
    const std::string metadata = PageBuffer(*file, 0, 0, 0);
    EXPECT_EQ(metadata.size(), version == kV21 ? 2u : 4u);  // one chunk
    const std::string chunks = PageBuffer(*file, 0, 0, 1);
    auto u16 = [&](size_t at) { return uint8_t(chunks[at]) | uint16_t(uint8_t(chunks[at + 1])) << 8; };
    EXPECT_EQ(u16(0), 20010);
    EXPECT_EQ(u16(2), version == kV21 ? 2560 : 302);
    EXPECT_EQ(u16(4), version == kV21 ? 2560 : 248);
    auto read = MakeFieldDecoder(version, field, file->Columns(), *file)->Read(0, 20000);
    ASSERT_EQ(read->length, 20000);
    EXPECT_TRUE(read->IsNull(19989));
    EXPECT_FALSE(read->IsNull(19990));
  }
}

TEST(V21Layout, RepetitionIndexAcrossChunks) {
  const auto type = DataType::List(DataType::Int32());
  std::vector<Scalar> rows;
  for (int r = 0; r < 3; ++r) {
    std::vector<Scalar> items;
    for (int k = 0; k < 600; ++k) items.push_back({DataType::Int32(), int64_t(k)});
    rows.push_back({type, items});
  }
  const LanceField field = MakeLanceField("l", type);
  auto file = WriteArray(field, MakeArray(type, rows), kV21);
  // Chunk 0: levels 0..1023, row 0 ends at 600, 424 levels of row 1 left over.
  // Chunk 1: rows 1 and 2 end.
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 2)),
            "0100000000000000" "a801000000000000" "0200000000000000" "0000000000000000");
}

TEST(V21Layout, NullAndEmptyListLevels) {
  const auto type = UncompressedInt32List();
  const LanceField field = MakeLanceField("l", type);
  std::vector<Scalar> rows = {{type, std::vector<Scalar>{{DataType::Int32(), int64_t(7)}, Scalar::Null(DataType::Int32())}},
                              Scalar::Null(type),
                              {type, std::vector<Scalar>{}}};
  auto file = WriteArray(field, MakeArray(type, rows), kV21);
  const auto layout_mb = PageLayoutOf(file->column(0).pages(0));
  const auto& mb = layout_mb.mini_block_layout();
  ASSERT_EQ(mb.layers_size(), 2);
  EXPECT_EQ(mb.layers(0), pb::REPDEF_NULLABLE_ITEM);
  EXPECT_EQ(mb.layers(1), pb::REPDEF_NULL_AND_EMPTY_LIST);
  EXPECT_EQ(mb.num_items(), 2u);  // the null and the empty list have no value slot
  // 4 levels: rep 1,0,1,1; def 0 (valid), 1 (null item), 2 (null list), 3 (empty list).
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 1)), "0400080008000800" "0100000001000100" "0000010002000300"
                                              "0700000000000000");
}

TEST(V21Layout, StructLayersAndColumns) {
  const auto type = DataType::Struct({Field::Make("a", DataType::Int32()), Field::Make("b", DataType::List(DataType::Utf8()))});
  const LanceField field = MakeLanceField("s", type);
  FileWriterOptions options;
  options.version = kV21;
  auto encoder = MakeFieldEncoder(kV21, field, options);
  EXPECT_EQ(encoder->num_columns(), 2u);
  EXPECT_EQ(NumColumns(kV21, field), 2u);
  // s, a, b, b.item
  EXPECT_EQ(encoder->NodeColumns(), (std::vector<int32_t>{-1, 0, -1, 1}));
  google::protobuf::Any any;
  ASSERT_TRUE(any.ParseFromString(encoder->ColumnEncoding(0)));
  EXPECT_EQ(any.type_url(), "/lance.encodings.ColumnEncoding");
}

TEST(V21Layout, FixedSizeListIsFullZipWithoutIndex) {
  const auto type = DataType::FixedSizeList(DataType::Float32(), 2);
  const LanceField field = MakeLanceField("v", type);
  auto array = MakeArray(type, {{type, std::vector<Scalar>{{DataType::Float32(), 1.0}, {DataType::Float32(), 2.0}}},
                                {type, std::vector<Scalar>{{DataType::Float32(), 3.0}, {DataType::Float32(), 4.0}}}});
  auto file = WriteArray(field, array, kV21);
  const auto layout = PageLayoutOf(file->column(0).pages(0));
  ASSERT_TRUE(layout.has_full_zip_layout());
  const auto& fz = layout.full_zip_layout();
  EXPECT_EQ(fz.bits_per_value(), 64u);
  EXPECT_EQ(fz.bits_rep(), 0u);
  EXPECT_EQ(fz.bits_def(), 0u);
  EXPECT_EQ(fz.value_compression().fixed_size_list().items_per_value(), 2u);
  EXPECT_EQ(fz.value_compression().fixed_size_list().values().flat().bits_per_value(), 32u);
  ASSERT_EQ(file->column(0).pages(0).buffer_sizes_size(), 1);
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 0)), "0000803f00000040" "0000404000008040");
}

TEST(V21Layout, FullZipVariableWithNulls) {
  const LanceField field = MakeLanceField("s", DataType::Utf8(), {{"lance-encoding:structural-encoding", "fullzip"}});
  auto array = MakeArray(DataType::Utf8(), {{DataType::Utf8(), std::string("ab")}, Scalar::Null(DataType::Utf8())});
  auto file = WriteArray(field, array, kV21);
  const auto layout_fz = PageLayoutOf(file->column(0).pages(0));
  const auto& fz = layout_fz.full_zip_layout();
  EXPECT_EQ(fz.bits_per_offset(), 32u);
  EXPECT_EQ(fz.bits_def(), 1u);
  EXPECT_EQ(fz.num_items(), 2u);
  EXPECT_EQ(fz.num_visible_items(), 2u);
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 0)), "00020000006162" "01");
  EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 1)), "000708");
}

TEST(V21Layout, TakeReadsOnlyTheNeededChunk) {
  std::vector<std::optional<int32_t>> v;
  for (int k = 0; k < 100000; ++k) v.push_back(k * 3);
  const LanceField field = MakeLanceField("x", DataType::Int32());
  auto file = WriteArray(field, Int32s(v), kV21);
  auto decoder = MakeFieldDecoder(kV21, field, file->Columns(), *file);
  file->ResetCounters();
  std::vector<uint64_t> rows = {50000};
  ArrayPtr taken = decoder->Take(rows);
  EXPECT_EQ(taken->values<int32_t>()[0], 150000);
  // The chunk metadata (98 u16 words) and one chunk of 1024 values.
  EXPECT_LE(file->bytes_read(), 196u + 4104u);
}

TEST(V21Layout, FullZipTakeReadsOnlyTheRows) {
  RandomData gen(3, 0.0, 0.0);
  gen.set_lengths(300, 300);
  const LanceField field = MakeLanceField("s", DataType::Binary());
  ArrayPtr array = gen.Array(DataType::Binary(), 2000);
  auto file = WriteArray(field, array, kV21);
  ASSERT_TRUE(PageLayoutOf(file->column(0).pages(0)).has_full_zip_layout());
  auto decoder = MakeFieldDecoder(kV21, field, file->Columns(), *file);
  file->ResetCounters();
  std::vector<uint64_t> rows = {1234};
  ArrayPtr taken = decoder->Take(rows);
  EXPECT_EQ(taken->GetView(0), array->GetView(1234));
  EXPECT_LE(file->bytes_read(), 4u + 4u + 4u + 300u);
}

TEST(V21Layout, UnknownCompressionIsNotSupported) {
  std::vector<std::optional<int32_t>> v = {1, 2, 3};
  const LanceField field = MakeLanceField("x", DataType::Int32());
  auto file = WriteArray(field, Int32s(v), kV21);
  auto layout = PageLayoutOf(file->column(0).pages(0));
  layout.mutable_mini_block_layout()->mutable_value_compression()->mutable_delta()->set_uncompressed_bits_per_value(32);
  google::protobuf::Any any;
  any.set_type_url("/lance.encodings21.PageLayout");
  any.set_value(layout.SerializeAsString());
  file->mutable_column(0).mutable_pages(0)->mutable_encoding()->mutable_direct()->set_encoding(any.SerializeAsString());
  auto decoder = MakeFieldDecoder(kV21, field, file->Columns(), *file);
  try {
    decoder->Read(0, 3);
    FAIL() << "expected NotSupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotSupported);
    const std::string m = e.what();
    EXPECT_NE(m.find("memory.lance"), std::string::npos) << m;
    EXPECT_NE(m.find("column 0"), std::string::npos) << m;
    EXPECT_NE(m.find("page 0"), std::string::npos) << m;
    EXPECT_NE(m.find("Delta"), std::string::npos) << m;
  }
}

TEST(V21Layout, CorruptChunkMetadataIsReported) {
  std::vector<std::optional<int32_t>> v = {1, 2, 3};
  const LanceField field = MakeLanceField("x", DataType::Int32());
  auto file = WriteArray(field, Int32s(v), kV21);
  auto layout = PageLayoutOf(file->column(0).pages(0));
  layout.mutable_mini_block_layout()->set_num_items(5000);
  google::protobuf::Any any;
  any.set_type_url("/lance.encodings21.PageLayout");
  any.set_value(layout.SerializeAsString());
  file->mutable_column(0).mutable_pages(0)->mutable_encoding()->mutable_direct()->set_encoding(any.SerializeAsString());
  auto decoder = MakeFieldDecoder(kV21, field, file->Columns(), *file);
  try {
    decoder->Read(0, 3);
    FAIL() << "expected Corrupt";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
  }
}

// "lance-encoding:compression" = zstd or lz4 (with "-level") compresses each chunk's first
// value buffer: General(LZ4, Variable) for strings; for 32/64-bit numbers whose bytes vary
// little (mean entropy per byte position under 4 bits over the first 64 values, as the
// reference's rule) the chunk is first split into byte streams, General(ZSTD, level 7,
// ByteStreamSplit(Flat(64))): chunk 0 holds 512 values, its first 512 bytes the values'
// low bytes. A page whose value buffers hold under 4 KiB, or that would not shrink, stays
// as it was; an unknown scheme is refused, naming the field.
TEST(V21Layout, OptInGeneralCompressionWrapsEachChunksValues) {
  std::vector<Scalar> ints, words, few;
  for (int k = 0; k < 20000; ++k) {
    ints.push_back({DataType::Int64(), int64_t((k % 1000) * 7 + k / 1000)});
    words.push_back({DataType::Utf8(), fmt::format("word-{}-{}", k % 13, k % 1000)});
  }
  for (int k = 0; k < 100; ++k) few.push_back({DataType::Int64(), int64_t(k)});
  for (FileVersion version : {kV21, kV22}) {
    const LanceField zstd = MakeLanceField(
        "i", DataType::Int64(), {{"lance-encoding:compression", "zstd"}, {"lance-encoding:compression-level", "7"}});
    auto file = WriteArray(zstd, MakeArray(DataType::Int64(), ints), version);
    const auto mb = PageLayoutOf(file->column(0).pages(0)).mini_block_layout();
    ASSERT_TRUE(mb.value_compression().has_general());
    EXPECT_EQ(GeneralValues(mb.value_compression(), pb::COMPRESSION_ALGORITHM_ZSTD, 7)
                  .byte_stream_split().values().flat().bits_per_value(),
              64u);
    const std::string chunks = PageBuffer(*file, 0, 0, 1);
    // Chunk 0: u16 0 levels, the compressed size (u16 at 2.1, u32 at 2.2), padding to 8.
    const uint64_t compressed_size = LoadLE(chunks.data() + 2, version == kV22 ? 4 : 2);
    const std::string streams =
        v21::DecompressBuffer(mb.value_compression().general().compression(), chunks.substr(8, compressed_size), "test");
    ASSERT_EQ(streams.size(), 512u * 8u);
    for (int k = 0; k < 512; ++k) ASSERT_EQ(uint8_t(streams[k]), uint8_t((k % 1000) * 7 + k / 1000)) << k;
    auto read = MakeFieldDecoder(version, zstd, file->Columns(), *file)->Read(0, 20000);
    for (int k = 0; k < 20000; ++k) ASSERT_EQ(read->values<int64_t>()[k], (k % 1000) * 7 + k / 1000) << k;

    const LanceField lz4 = MakeLanceField("s", DataType::Utf8(), {{"lance-encoding:compression", "LZ4"}});
    auto strings = WriteArray(lz4, MakeArray(DataType::Utf8(), words), version);
    const auto smb = PageLayoutOf(strings->column(0).pages(0)).mini_block_layout();
    ASSERT_TRUE(smb.value_compression().has_general());
    EXPECT_EQ(GeneralValues(smb.value_compression(), pb::COMPRESSION_ALGORITHM_LZ4, std::nullopt)
                  .variable().offsets().flat().bits_per_value(),
              32u);
    auto read_strings = MakeFieldDecoder(version, lz4, strings->Columns(), *strings)->Read(0, 20000);
    EXPECT_EQ(read_strings->GetView(12345), "word-8-345");

    auto small = WriteArray(zstd, MakeArray(DataType::Int64(), few), version);
    EXPECT_FALSE(PageLayoutOf(small->column(0).pages(0)).mini_block_layout().value_compression().has_general());
  }
  const LanceField bad = MakeLanceField("b", DataType::Int64(), {{"lance-encoding:compression", "brotli"}});
  try {
    WriteArray(bad, MakeArray(DataType::Int64(), few), kV22);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()),
              "field 'b': lance-encoding:compression 'brotli' is not a compression scheme (expected zstd, lz4, fsst or "
              "none)");
  }
}

// Values of a full-zip page are compressed one by one with ZSTD at level 0 when one of
// them passes 32 KiB (as the reference): each stored value is its u32 length, then the
// u64 uncompressed length and a zstd frame. Shorter values stay plain.
TEST(V21Layout, LargeFullZipValuesAreEachCompressed) {
  std::vector<Scalar> big, medium;
  for (int k = 0; k < 4; ++k) {
    big.push_back({DataType::Binary(), std::string(40000 + k, char('a' + k))});
    medium.push_back({DataType::Binary(), std::string(20000, char('a' + k))});
  }
  const LanceField field = MakeLanceField("b", DataType::Binary());
  auto file = WriteArray(field, MakeArray(DataType::Binary(), big), kV22);
  const auto fz = PageLayoutOf(file->column(0).pages(0)).full_zip_layout();
  ASSERT_TRUE(fz.value_compression().has_general());
  EXPECT_EQ(GeneralValues(fz.value_compression(), pb::COMPRESSION_ALGORITHM_ZSTD, 0)
                .variable().offsets().flat().bits_per_value(),
            32u);
  const std::string zipped = PageBuffer(*file, 0, 0, 0);
  EXPECT_LT(zipped.size(), 1000u);
  EXPECT_EQ(LoadLE(zipped.data() + 4, 8), 40000u);                // the first value's uncompressed length
  EXPECT_EQ(LoadLE(zipped.data() + 12, 4), 0xFD2FB528u);          // then its zstd frame
  auto read = MakeFieldDecoder(kV22, field, file->Columns(), *file)->Read(0, 4);
  EXPECT_EQ(read->GetView(3), std::string(40003, 'd'));
  auto plain = WriteArray(field, MakeArray(DataType::Binary(), medium), kV22);
  EXPECT_TRUE(PageLayoutOf(plain->column(0).pages(0)).full_zip_layout().value_compression().has_variable());
}

// A struct with "lance-encoding:packed" is one mini-block column of rows, each row its
// children's values back to back: PackedStruct(bits_per_value [32, 32], Flat(64)). Its
// children own no column, so the file's node list leaves them out.
TEST(V21Layout, PackedStructsAreOneColumnOfRows) {
  const TypePtr type = DataType::Struct({Field::Make("a", DataType::Int32(), true),
                                         Field::Make("b", DataType::Float32(), true)});
  std::vector<Scalar> rows;
  for (int k = 0; k < 10; ++k)
    rows.push_back({type, std::vector<Scalar>{{DataType::Int32(), int64_t(k)}, {DataType::Float32(), 0.5 * k}}});
  const LanceField field = MakeLanceField("p", type, {{"lance-encoding:packed", "true"}});
  for (FileVersion version : {kV21, kV22}) {
    FileWriterOptions options;
    options.version = version;
    auto encoder = MakeFieldEncoder(version, field, options);
    EXPECT_EQ(encoder->NodeIds(), std::vector<int32_t>({field.id}));
    EXPECT_EQ(encoder->NodeColumns(), std::vector<int32_t>({0}));
    auto file = WriteArray(field, MakeArray(type, rows), version);
    ASSERT_EQ(file->Columns().size(), 1u);
    const auto mb = PageLayoutOf(file->column(0).pages(0)).mini_block_layout();
    const auto& packed = mb.value_compression().packed_struct();
    EXPECT_EQ(std::vector<uint64_t>(packed.bits_per_value().begin(), packed.bits_per_value().end()),
              std::vector<uint64_t>({32, 32}));
    EXPECT_EQ(packed.values().flat().bits_per_value(), 64u);
    // Chunk 0: u16 0 levels, u16 80 value bytes, padding, then row 1 at bytes 16..23.
    EXPECT_EQ(Hex(PageBuffer(*file, 0, 0, 1).substr(16, 8)), "010000000000003f");
    auto read = MakeFieldDecoder(version, field, file->Columns(), *file)->Read(0, 10);
    EXPECT_EQ(read->children[0]->values<int32_t>()[7], 7);
    EXPECT_EQ(read->children[1]->values<float>()[7], 3.5f);
  }
  std::vector<Scalar> with_null = rows;
  with_null[3] = {type, std::vector<Scalar>{Scalar::Null(DataType::Int32()), {DataType::Float32(), 1.0}}};
  try {
    WriteArray(field, MakeArray(type, with_null), kV22);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "field 'p': packed struct child 'a' holds nulls, which packed rows cannot store");
  }
}

// Strings are FSST-compressed when the reference would (a value of 5 bytes or more and 32
// KiB with offsets): the page's layout is Fsst(symbol table, Variable), the table holds at
// most 255 symbols in the reference's 2312-byte form, and the values read back. Binary
// values, strings under 32 KiB unless the field asks for "fsst", and strings a table
// would not shrink, stay Variable.
TEST(V21Layout, StringsAreFsstCompressed) {
  std::vector<Scalar> words, bytes, few;
  for (int k = 0; k < 4000; ++k) {
    words.push_back({DataType::Utf8(), fmt::format("user-{}@example.com", k * 7919 % 100000)});
    bytes.push_back({DataType::Binary(), fmt::format("user-{}@example.com", k * 7919 % 100000)});
  }
  for (int k = 0; k < 50; ++k) few.push_back({DataType::Utf8(), fmt::format("user-{}@example.com", k)});
  const LanceField field = MakeLanceField("s", DataType::Utf8());
  for (FileVersion version : {kV21, kV22}) {
    auto file = WriteArray(field, MakeArray(DataType::Utf8(), words), version);
    const auto mb = PageLayoutOf(file->column(0).pages(0)).mini_block_layout();
    ASSERT_TRUE(mb.value_compression().has_fsst());
    const std::string& table = mb.value_compression().fsst().symbol_table();
    ASSERT_EQ(table.size(), 2312u);
    EXPECT_EQ(LoadLE(table.data() + 4, 4), 0x46535354u);  // "FSST"
    EXPECT_EQ((LoadLE(table.data(), 4) >> 24) & 1, 1u);    // compression applied
    EXPECT_GT(LoadLE(table.data(), 1), 10u);               // symbols
    EXPECT_EQ(mb.value_compression().fsst().values().variable().offsets().flat().bits_per_value(), 32u);
    uint64_t plain = 0;
    for (const auto& w : words) plain += w.as_string().size();
    EXPECT_LT(PageBuffer(*file, 0, 0, 1).size(), plain / 2);
    auto read = MakeFieldDecoder(version, field, file->Columns(), *file)->Read(0, 4000);
    for (int k = 0; k < 4000; ++k) ASSERT_EQ(read->GetView(k), fmt::format("user-{}@example.com", k * 7919 % 100000));
  }
  const LanceField binary = MakeLanceField("b", DataType::Binary());
  auto raw = WriteArray(binary, MakeArray(DataType::Binary(), bytes), kV22);
  EXPECT_TRUE(PageLayoutOf(raw->column(0).pages(0)).mini_block_layout().value_compression().has_variable());
  auto small = WriteArray(field, MakeArray(DataType::Utf8(), few), kV22);
  EXPECT_TRUE(PageLayoutOf(small->column(0).pages(0)).mini_block_layout().value_compression().has_variable());
  // Random printable bytes: a table gains nothing on them, so the page stays plain.
  std::vector<Scalar> noise;
  uint32_t state = 11;
  for (int k = 0; k < 4000; ++k) {
    std::string v;
    for (int j = 0; j < 20; ++j) {
      state = state * 1103515245u + 12345u;
      v.push_back(char(' ' + (state >> 16) % 95));
    }
    noise.push_back({DataType::Utf8(), v});
  }
  auto random = WriteArray(field, MakeArray(DataType::Utf8(), noise), kV22);
  EXPECT_TRUE(PageLayoutOf(random->column(0).pages(0)).mini_block_layout().value_compression().has_variable());
  const LanceField asked = MakeLanceField("f", DataType::Utf8(), {{"lance-encoding:compression", "fsst"}});
  auto forced = WriteArray(asked, MakeArray(DataType::Utf8(), few), kV22);
  ASSERT_TRUE(PageLayoutOf(forced->column(0).pages(0)).mini_block_layout().value_compression().has_fsst());
  EXPECT_EQ(MakeFieldDecoder(kV22, asked, forced->Columns(), *forced)->Read(0, 50)->GetView(49), "user-49@example.com");
}

// An FSST table expands what it compressed, escapes included (bytes the training never
// saw), for any bytes.
TEST(Fsst, CompressesAndExpandsAnyBytes) {
  v21::ValueBlock sample;
  sample.variable = true;
  for (int k = 0; k < 2000; ++k) {
    sample.data += fmt::format("the quick brown fox {} jumps", k);
    sample.offsets.push_back(sample.data.size());
    ++sample.count;
  }
  const v21::FsstEncoder encoder = v21::FsstEncoder::Train(sample);
  const v21::FsstTable table = v21::FsstTable::Parse(encoder.SymbolTable(), "test");
  ASSERT_TRUE(table.active());
  for (const std::string& value : {std::string("the quick brown fox 77 jumps"), std::string("\xff\x00\x01zz", 5),
                                  std::string(""), std::string(300, 'q')}) {
    std::string compressed, expanded;
    encoder.Compress(value, compressed);
    table.Expand(compressed, expanded, "test");
    EXPECT_EQ(expanded, value);
  }
  std::string compressed;
  encoder.Compress("the quick brown fox 77 jumps", compressed);
  EXPECT_LE(compressed.size(), 10u);
}

// At 2.2 a page whose valid values are all one value is a ConstantLayout, as the reference
// writes it: a value of up to 32 bytes inline (int32 42: 2a000000) with no buffers; a
// string in a value buffer (u32 2 buffers, their u32 lengths, offsets {0, 27}, the bytes);
// nulls as raw u16 def levels after it (an empty rep buffer first). 2.1 has no such page.
TEST(V21Layout, ConstantPagesAt22) {
  const LanceField ints = MakeLanceField("i", DataType::Int32());
  std::vector<std::optional<int32_t>> fortytwo(1000, 42);
  auto file = WriteArray(ints, Int32s(fortytwo), kV22);
  auto layout = PageLayoutOf(file->column(0).pages(0));
  ASSERT_TRUE(layout.has_constant_layout());
  EXPECT_EQ(Hex(layout.constant_layout().inline_value()), "2a000000");
  EXPECT_EQ(file->column(0).pages(0).buffer_offsets_size(), 0);
  auto decoder = MakeFieldDecoder(kV22, ints, file->Columns(), *file);
  auto read = decoder->Read(0, 1000);
  EXPECT_EQ(read->values<int32_t>()[999], 42);
  // The value repeated straight into the answer (PlainRowBytes): a range and a take in any
  // order, of any length.
  auto middle = decoder->Read(3, 517);
  ASSERT_EQ(middle->length, 517);
  EXPECT_EQ(middle->null_count, 0);
  for (int64_t k = 0; k < middle->length; ++k) ASSERT_EQ(middle->values<int32_t>()[k], 42) << k;
  const std::vector<uint64_t> rows = {999, 0, 5, 5, 731};
  auto taken = decoder->Take(rows);
  ASSERT_EQ(taken->length, 5);
  for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(taken->values<int32_t>()[k], 42);
  EXPECT_THROW(decoder->Take(std::vector<uint64_t>{1000}), Error);
  const LanceField flags = MakeLanceField("b", DataType::Bool());
  std::vector<Scalar> trues(77, Scalar{DataType::Bool(), true});
  auto bool_file = WriteArray(flags, MakeArray(DataType::Bool(), trues), kV22);
  ASSERT_TRUE(PageLayoutOf(bool_file->column(0).pages(0)).has_constant_layout());
  auto bools = MakeFieldDecoder(kV22, flags, bool_file->Columns(), *bool_file);
  auto read_bools = bools->Read(1, 75);
  ASSERT_EQ(read_bools->length, 75);
  for (int64_t k = 0; k < 75; ++k)
    ASSERT_TRUE(read_bools->IsValid(k) && GetBit(read_bools->buffers[1]->data(), k)) << k;
  EXPECT_FALSE(PageLayoutOf(WriteArray(ints, Int32s(fortytwo), kV21)->column(0).pages(0)).has_constant_layout());

  const std::string value = "the same value on every row";
  std::vector<Scalar> strings;
  for (int k = 0; k < 100; ++k)
    strings.push_back(k % 10 == 3 ? Scalar::Null(DataType::Utf8()) : Scalar{DataType::Utf8(), value});
  const LanceField field = MakeLanceField("s", DataType::Utf8());
  auto sfile = WriteArray(field, MakeArray(DataType::Utf8(), strings), kV22);
  auto slayout = PageLayoutOf(sfile->column(0).pages(0));
  ASSERT_TRUE(slayout.has_constant_layout());
  EXPECT_FALSE(slayout.constant_layout().has_inline_value());
  ASSERT_EQ(sfile->column(0).pages(0).buffer_offsets_size(), 3);
  EXPECT_EQ(Hex(PageBuffer(*sfile, 0, 0, 0).substr(0, 20)), "02000000" "08000000" "1b000000" "00000000" "1b000000");
  EXPECT_EQ(PageBuffer(*sfile, 0, 0, 0).substr(20), value);
  EXPECT_EQ(PageBuffer(*sfile, 0, 0, 1), "");
  EXPECT_EQ(Hex(PageBuffer(*sfile, 0, 0, 2).substr(0, 8)), "0000000000000100");  // rows 0-3: valid x3, null
  auto sread = MakeFieldDecoder(kV22, field, sfile->Columns(), *sfile)->Read(0, 100);
  EXPECT_EQ(sread->null_count, 10);
  EXPECT_TRUE(sread->IsNull(13));
  EXPECT_EQ(sread->GetView(99), value);
}

// Numbers are run-length encoded when their runs (value + u8 length each) take fewer bytes
// than the plain values and than bit-packing, as the reference decides: 64-bit values
// picked from four at random make runs of 1.33 on average, 9 bytes each against 8 per
// value plain; 32-bit ones picked the same way would take 5 bytes a run and stay plain
// (here bit-packed at 2 bits).
TEST(V21Layout, RunLengthEncodingIsChosenBySize) {
  std::vector<Scalar> wide, narrow;
  uint32_t state = 7;
  for (int k = 0; k < 5000; ++k) {
    state = state * 1103515245u + 12345u;
    const int pick = int((state >> 16) % 4);
    wide.push_back({DataType::Float64(), 1.5 * (pick + 1)});
    narrow.push_back({DataType::Int32(), int64_t(pick)});
  }
  auto file = WriteArray(MakeLanceField("w", DataType::Float64()), MakeArray(DataType::Float64(), wide), kV21);
  EXPECT_TRUE(PageLayoutOf(file->column(0).pages(0)).mini_block_layout().value_compression().has_rle());
  auto ints = WriteArray(MakeLanceField("n", DataType::Int32()), MakeArray(DataType::Int32(), narrow), kV21);
  EXPECT_TRUE(
      PageLayoutOf(ints->column(0).pages(0)).mini_block_layout().value_compression().has_inline_bitpacking());
}

}  // namespace
}  // namespace lancelet::format::v21_test
