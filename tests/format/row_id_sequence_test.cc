#include "format/row_id_sequence.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::format {
namespace {

using lancelet::testing::ThrownKind;

using Kind = U64Segment::Kind;
using Width = EncodedU64Array::Width;

std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

std::string CorruptMessage(const std::string& bytes) {
  try {
    RowIdSequence::Decode(bytes, "fragment 7 row ids");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted " << Hex(bytes);
  return "";
}

// Reference bytes, from fragments written by lance 12.0.0 with stable row ids.
// 300 rows, then rows with even ids < 100 and id 250 deleted, then compacted.
constexpr const char* kCompactedRowIds =
    "0a2f1a2d080110ac021a26555555555555555555555555fdffffffffffffffffffffffffffffffffffff"
    "fdffffffffff07";
constexpr const char* kCompactedCreatedAt =
    "0a330a2f1a2d080110ac021a26555555555555555555555555fdffffffffffffffffffffffffffffffffff"
    "fffdffffffffff071001";
// The two rows rewritten by an update of ids 5 and 700.
constexpr const char* kUpdatedRowIds = "0a0c220a0a08080512040000b702";

std::vector<uint32_t> CompactedDeletions() {
  std::vector<uint32_t> deleted;
  for (uint32_t id = 0; id < 100; id += 2) deleted.push_back(id);
  deleted.push_back(250);
  return deleted;
}

TEST(EncodedU64ArrayTest, NarrowestPicksWidthFromSpread) {
  EXPECT_EQ(EncodedU64Array::Narrowest({}).width, Width::kU64);
  EncodedU64Array u16 = EncodedU64Array::Narrowest({65545, 10});
  EXPECT_EQ(u16.width, Width::kU16);
  EXPECT_EQ(u16.base, 10u);
  EXPECT_EQ(u16.values, (std::vector<uint64_t>{65545, 10}));
  EncodedU64Array u32 = EncodedU64Array::Narrowest({10, 65546});
  EXPECT_EQ(u32.width, Width::kU32);
  EXPECT_EQ(u32.base, 10u);
  EXPECT_EQ(EncodedU64Array::Narrowest({5, 5 + 0xffffffffull}).width, Width::kU32);
  EncodedU64Array u64 = EncodedU64Array::Narrowest({0, 1ull << 32});
  EXPECT_EQ(u64.width, Width::kU64);
  EXPECT_EQ(u64.base, 0u);
}

TEST(U64SegmentTest, ContiguousValuesBecomeRange) {
  U64Segment empty = U64Segment::FromValues({});
  EXPECT_EQ(empty.kind(), Kind::kRange);
  EXPECT_EQ(empty.size(), 0u);
  U64Segment range = U64Segment::FromValues({5, 6, 7});
  EXPECT_EQ(range.kind(), Kind::kRange);
  EXPECT_EQ(range.range_start(), 5u);
  EXPECT_EQ(range.range_end(), 8u);
}

TEST(U64SegmentTest, FewHolesBecomeRangeWithHoles) {
  std::vector<uint64_t> values;
  for (uint64_t v = 0; v < 100; ++v) {
    if (v != 10 && v != 20) values.push_back(v);
  }
  U64Segment s = U64Segment::FromValues(values);  // holes 32 < bitmap 37 < array 220
  ASSERT_EQ(s.kind(), Kind::kRangeWithHoles);
  EXPECT_EQ(s.range_start(), 0u);
  EXPECT_EQ(s.range_end(), 100u);
  EXPECT_EQ(s.array().width, Width::kU16);
  EXPECT_EQ(s.array().base, 10u);
  EXPECT_EQ(s.array().values, (std::vector<uint64_t>{10, 20}));
  EXPECT_EQ(s.size(), 98u);
  EXPECT_EQ(s.ToVector(), values);
  for (uint64_t i = 0; i < values.size(); ++i) ASSERT_EQ(s.Get(i), values[i]) << i;
}

TEST(U64SegmentTest, DenseSortedValuesBecomeRangeWithBitmap) {
  std::vector<uint64_t> values;
  for (uint64_t v = 0; v < 100; v += 2) values.push_back(v);  // bitmap 37 < array 124
  U64Segment s = U64Segment::FromValues(values);
  ASSERT_EQ(s.kind(), Kind::kRangeWithBitmap);
  EXPECT_EQ(s.range_start(), 0u);
  EXPECT_EQ(s.range_end(), 99u);
  EXPECT_EQ(Hex(s.bitmap()), "55555555555555555555555505");
  EXPECT_EQ(s.size(), 50u);
  EXPECT_EQ(s.ToVector(), values);
  for (uint64_t i = 0; i < values.size(); ++i) ASSERT_EQ(s.Get(i), values[i]) << i;
}

TEST(U64SegmentTest, SparseSortedValuesBecomeSortedArray) {
  U64Segment s = U64Segment::FromValues({0, 1000, 5000});
  ASSERT_EQ(s.kind(), Kind::kSortedArray);
  EXPECT_EQ(s.array().width, Width::kU16);
  EXPECT_EQ(s.array().base, 0u);
  U64Segment wide = U64Segment::FromValues({1, 1ull << 40});
  ASSERT_EQ(wide.kind(), Kind::kSortedArray);
  EXPECT_EQ(wide.array().width, Width::kU64);
}

TEST(U64SegmentTest, UnsortedValuesBecomeArray) {
  U64Segment s = U64Segment::FromValues({3, 1, 2});
  ASSERT_EQ(s.kind(), Kind::kArray);
  EXPECT_EQ(s.array().width, Width::kU16);
  EXPECT_EQ(s.array().base, 1u);
  EXPECT_EQ(s.ToVector(), (std::vector<uint64_t>{3, 1, 2}));
  EXPECT_EQ(s.Get(0), 3u);
}

TEST(U64SegmentTest, TiesPreferHolesThenBitmap) {
  // 32 slots, one hole: holes 28 == bitmap 28 < array 86.
  std::vector<uint64_t> one_hole;
  for (uint64_t v = 0; v < 32; ++v) {
    if (v != 5) one_hole.push_back(v);
  }
  EXPECT_EQ(U64Segment::FromValues(one_hole).kind(), Kind::kRangeWithHoles);
  // 160 slots, ten values: bitmap 44 == array 44 < holes 624.
  std::vector<uint64_t> ten{0, 10, 20, 30, 40, 50, 60, 70, 80, 159};
  EXPECT_EQ(U64Segment::FromValues(ten).kind(), Kind::kRangeWithBitmap);
}

TEST(U64SegmentTest, DuplicatesAndTopOfRangeStaySortedArray) {
  EXPECT_EQ(U64Segment::FromValues({1, 1, 2}).kind(), Kind::kSortedArray);
  uint64_t max = std::numeric_limits<uint64_t>::max();
  U64Segment top = U64Segment::FromValues({max - 1, max});
  EXPECT_EQ(top.kind(), Kind::kSortedArray);
  EXPECT_EQ(top.ToVector(), (std::vector<uint64_t>{max - 1, max}));
}

TEST(U64SegmentTest, GetOutOfRangeIsInvalid) {
  EXPECT_EQ(ThrownKind([] { U64Segment::Range(0, 3).Get(3); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(ThrownKind([] { U64Segment::Range(4, 3); }), ErrorKind::kInvalidArgument);
}

TEST(U64SegmentTest, ExplicitConstructorsValidate) {
  EXPECT_EQ(ThrownKind([] { U64Segment::RangeWithHoles(0, 10, EncodedU64Array::Narrowest({10})); }),
            ErrorKind::kInvalidArgument);
  EXPECT_EQ(ThrownKind([] { U64Segment::RangeWithHoles(0, 10, EncodedU64Array::Narrowest({4, 3})); }),
            ErrorKind::kInvalidArgument);
  EXPECT_EQ(ThrownKind([] { U64Segment::RangeWithBitmap(0, 9, std::string(1, '\xff')); }),
            ErrorKind::kInvalidArgument);
  EXPECT_EQ(ThrownKind([] { U64Segment::RangeWithBitmap(0, 4, std::string(1, '\x1f')); }),
            ErrorKind::kInvalidArgument);
  EXPECT_EQ(ThrownKind([] {
              U64Segment::Array(EncodedU64Array{Width::kU16, 0, {70000}});
            }),
            ErrorKind::kInvalidArgument);
}

TEST(RowIdSequenceTest, EncodesRangeExactly) {
  EXPECT_EQ(Hex(RowIdSequence::FromRange(0, 10).Encode()), "0a040a02100a");
  EXPECT_EQ(Hex(RowIdSequence().Encode()), "");
  RowIdSequence decoded = RowIdSequence::Decode(Unhex("0a040a02100a"), "t");
  EXPECT_EQ(decoded, RowIdSequence::FromRange(0, 10));
  EXPECT_EQ(decoded.size(), 10u);
}

TEST(RowIdSequenceTest, EncodesSortedArrayExactly) {
  RowIdSequence seq({U64Segment::SortedArray(EncodedU64Array{Width::kU16, 200, {201, 202, 203}})});
  EXPECT_EQ(Hex(seq.Encode()), "0a0f220d0a0b08c80112060100020003" "00");
}

TEST(RowIdSequenceTest, MatchesReferenceCompactedSequence) {
  RowIdSequence seq = RowIdSequence::FromRange(0, 300);
  std::vector<uint32_t> deleted = CompactedDeletions();
  seq.Mask(deleted);
  seq = seq.Slice(0, seq.size());
  EXPECT_EQ(Hex(seq.Encode()), kCompactedRowIds);

  RowIdSequence decoded = RowIdSequence::Decode(Unhex(kCompactedRowIds), "t");
  ASSERT_EQ(decoded.segments().size(), 1u);
  EXPECT_EQ(decoded.segments()[0].kind(), Kind::kRangeWithBitmap);
  std::vector<uint64_t> expected;
  for (uint64_t id = 0; id < 300; ++id) {
    if (!((id < 100 && id % 2 == 0) || id == 250)) expected.push_back(id);
  }
  EXPECT_EQ(decoded.ToVector(), expected);
  EXPECT_EQ(Hex(decoded.Encode()), kCompactedRowIds);
}

TEST(RowIdSequenceTest, MatchesReferenceUpdatedRows) {
  EXPECT_EQ(Hex(RowIdSequence::FromValues({5, 700}).Encode()), kUpdatedRowIds);
  EXPECT_EQ(RowIdSequence::Decode(Unhex(kUpdatedRowIds), "t").ToVector(),
            (std::vector<uint64_t>{5, 700}));
}

TEST(RowIdSequenceTest, DecodeEncodeKeepsOnDiskWidth) {
  // RangeWithHoles 100..200 with holes stored as plain u64 (not the narrowest width).
  RowIdSequence seq({U64Segment::Range(0, 20),
                     U64Segment::RangeWithHoles(100, 200,
                                                EncodedU64Array{Width::kU64, 0, {104, 108, 150}}),
                     U64Segment::RangeWithBitmap(200, 210, std::string("\x0f\x02", 2)),
                     U64Segment::SortedArray(EncodedU64Array{Width::kU32, 300, {300, 301}}),
                     U64Segment::Array(EncodedU64Array{Width::kU64, 0, {9, 3}})});
  std::string bytes = seq.Encode();
  RowIdSequence back = RowIdSequence::Decode(bytes, "t");
  EXPECT_EQ(back, seq);
  EXPECT_EQ(back.Encode(), bytes);
  EXPECT_EQ(back.segments()[1].array().width, Width::kU64);
  EXPECT_EQ(back.size(), 20u + 97 + 5 + 2 + 2);
  std::vector<uint64_t> all = back.ToVector();
  ASSERT_EQ(all.size(), back.size());
  for (uint64_t i = 0; i < all.size(); ++i) ASSERT_EQ(back.Get(i), all[i]) << i;
  EXPECT_EQ(all[20], 100u);
  EXPECT_EQ(all[24], 105u);
  EXPECT_EQ(all[117], 200u);
  EXPECT_EQ(all[121], 209u);
  EXPECT_EQ(all.back(), 3u);
  EXPECT_EQ(ThrownKind([&] { back.Get(back.size()); }), ErrorKind::kInvalidArgument);
}

TEST(RowIdSequenceTest, DecodeRejectsMalformedBytes) {
  EXPECT_NE(CorruptMessage("\xff").find("fragment 7 row ids"), std::string::npos);
  EXPECT_NE(CorruptMessage(Unhex("0a00")).find("no segment type"), std::string::npos);
  // u16 offsets with an odd byte count.
  EXPECT_NE(CorruptMessage(Unhex("0a0722050a03120101")).find("multiple of 2"),
            std::string::npos);
  // Range with start 5 > end 1.
  EXPECT_NE(CorruptMessage(Unhex("0a060a040805100" "1")).find("segment 0"), std::string::npos);
  // RangeWithHoles without a holes array.
  EXPECT_NE(CorruptMessage(Unhex("0a06120408001005")).find("no holes"), std::string::npos);
  // RangeWithHoles 0..5 with hole 9.
  EXPECT_NE(CorruptMessage(Unhex("0a10120e080010051a080a06080912020000")).find("not within"),
            std::string::npos);
  // RangeWithBitmap 0..16 with a 1-byte bitmap.
  EXPECT_NE(CorruptMessage(Unhex("0a091a07080010101a01ff")).find("bitmap bytes"),
            std::string::npos);
  // EncodedU64Array with no array set.
  EXPECT_NE(CorruptMessage(Unhex("0a022200")).find("no array type"), std::string::npos);
}

TEST(RowIdSequenceTest, ExtendMergesTouchingRanges) {
  RowIdSequence seq = RowIdSequence::FromRange(0, 5);
  seq.Extend(RowIdSequence::FromRange(5, 9));
  ASSERT_EQ(seq.segments().size(), 1u);
  EXPECT_EQ(seq.segments()[0], U64Segment::Range(0, 9));
  seq.Extend(RowIdSequence::FromRange(10, 12));
  EXPECT_EQ(seq.segments().size(), 2u);
  seq.Extend(RowIdSequence::FromValues({3, 1}));
  EXPECT_EQ(seq.segments().size(), 3u);
  EXPECT_EQ(seq.ToVector(), (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 3, 1}));
}

TEST(RowIdSequenceTest, SliceReencodesTouchedSegments) {
  RowIdSequence seq({U64Segment::Range(0, 10),
                     U64Segment::SortedArray(EncodedU64Array::Narrowest({20, 30, 40})),
                     U64Segment::Range(60, 70)});
  RowIdSequence slice = seq.Slice(8, 6);
  EXPECT_EQ(slice.ToVector(), (std::vector<uint64_t>{8, 9, 20, 30, 40, 60}));
  ASSERT_EQ(slice.segments().size(), 3u);
  EXPECT_EQ(slice.segments()[0], U64Segment::Range(8, 10));
  // {20, 30, 40}: bitmap 27 bytes beats sorted array 30, as the reference's rechunk finds.
  EXPECT_EQ(slice.segments()[1].kind(), Kind::kRangeWithBitmap);
  EXPECT_EQ(slice.segments()[2], U64Segment::Range(60, 61));
  EXPECT_TRUE(seq.Slice(3, 0).segments().empty());
  EXPECT_EQ(ThrownKind([&] { seq.Slice(10, 14); }), ErrorKind::kInvalidArgument);
  // Adjacent range pieces merge.
  RowIdSequence ranges({U64Segment::Range(0, 5), U64Segment::Range(5, 9)});
  EXPECT_EQ(ranges.Slice(1, 6).segments(), (std::vector<U64Segment>{U64Segment::Range(1, 7)}));
}

TEST(RowIdSequenceTest, MaskRemovesDeletedOffsetsLikeTheReference) {
  RowIdSequence ends = RowIdSequence::FromRange(0, 10);
  ends.Mask(std::vector<uint32_t>{0, 9});
  EXPECT_EQ(ends.segments(), (std::vector<U64Segment>{U64Segment::Range(1, 9)}));

  RowIdSequence middle = RowIdSequence::FromRange(0, 10);
  middle.Mask(std::vector<uint32_t>{3});  // bitmap 26 < holes 28 < array 42
  ASSERT_EQ(middle.segments().size(), 1u);
  EXPECT_EQ(middle.segments()[0].kind(), Kind::kRangeWithBitmap);
  EXPECT_EQ(Hex(middle.segments()[0].bitmap()), "f703");

  RowIdSequence two({U64Segment::Range(0, 4), U64Segment::FromValues({9, 7, 8})});
  two.Mask(std::vector<uint32_t>{1, 5});
  ASSERT_EQ(two.segments().size(), 2u);
  EXPECT_EQ(two.segments()[0].kind(), Kind::kRangeWithBitmap);
  EXPECT_EQ(two.segments()[1].kind(), Kind::kArray);
  EXPECT_EQ(two.ToVector(), (std::vector<uint64_t>{0, 2, 3, 9, 8}));

  // An Array stays an Array even when what remains is sorted.
  RowIdSequence array = RowIdSequence::FromValues({3, 1, 2});
  array.Mask(std::vector<uint32_t>{0});
  EXPECT_EQ(array.segments()[0].kind(), Kind::kArray);

  // A fully deleted segment disappears.
  RowIdSequence gone({U64Segment::Range(0, 2), U64Segment::Range(10, 12)});
  gone.Mask(std::vector<uint32_t>{0, 1});
  EXPECT_EQ(gone.segments(), (std::vector<U64Segment>{U64Segment::Range(10, 12)}));

  EXPECT_EQ(ThrownKind([&] { gone.Mask(std::vector<uint32_t>{1, 0}); }),
            ErrorKind::kInvalidArgument);
  EXPECT_EQ(ThrownKind([&] { gone.Mask(std::vector<uint32_t>{2}); }), ErrorKind::kInvalidArgument);
}

TEST(VersionSequenceTest, UniformEncodesExactly) {
  EXPECT_EQ(Hex(VersionSequence::Uniform(5, 3).Encode()), "0a080a040a0210051003");
  EXPECT_EQ(Hex(VersionSequence::Uniform(2, 1).Encode()), "0a080a040a0210021001");
  EXPECT_TRUE(VersionSequence::Uniform(0, 3).runs().empty());
  VersionSequence back = VersionSequence::Decode(Unhex("0a080a040a0210051003"), "t");
  EXPECT_EQ(back, VersionSequence::Uniform(5, 3));
  EXPECT_EQ(back.ToVector(), (std::vector<uint64_t>{3, 3, 3, 3, 3}));
}

TEST(VersionSequenceTest, MatchesReferenceCompactedSequence) {
  VersionSequence seq = VersionSequence::Uniform(300, 1);
  std::vector<uint32_t> deleted = CompactedDeletions();
  seq.Mask(deleted);
  seq = seq.Slice(0, seq.size());
  EXPECT_EQ(Hex(seq.Encode()), kCompactedCreatedAt);
  VersionSequence back = VersionSequence::Decode(Unhex(kCompactedCreatedAt), "t");
  EXPECT_EQ(back.size(), 249u);
  EXPECT_EQ(back.VersionAt(248), 1u);
}

TEST(VersionSequenceTest, FromVersionsMaskSliceAndExtend) {
  VersionSequence seq = VersionSequence::FromVersions(std::vector<uint64_t>{1, 1, 2, 2, 2, 1});
  ASSERT_EQ(seq.runs().size(), 3u);
  EXPECT_EQ(seq.runs()[1], (VersionSequence::Run{U64Segment::Range(2, 5), 2}));
  EXPECT_EQ(seq.VersionAt(4), 2u);
  EXPECT_EQ(seq.VersionAt(5), 1u);
  EXPECT_EQ(ThrownKind([&] { seq.VersionAt(6); }), ErrorKind::kInvalidArgument);

  VersionSequence slice = seq.Slice(1, 3);
  EXPECT_EQ(slice.runs(), (std::vector<VersionSequence::Run>{{U64Segment::Range(1, 2), 1},
                                                             {U64Segment::Range(2, 4), 2}}));

  seq.Mask(std::vector<uint32_t>{1, 2});
  EXPECT_EQ(seq.ToVector(), (std::vector<uint64_t>{1, 2, 2, 1}));
  EXPECT_EQ(seq.runs()[1].span, U64Segment::Range(3, 5));

  seq.Extend(VersionSequence::Uniform(2, 1));
  EXPECT_EQ(seq.runs().size(), 4u);  // never merged with the previous run
  EXPECT_EQ(seq.ToVector(), (std::vector<uint64_t>{1, 2, 2, 1, 1, 1}));
  EXPECT_EQ(VersionSequence::Decode(seq.Encode(), "t"), seq);
}

TEST(VersionSequenceTest, DecodeRejectsRunWithoutSpan) {
  try {
    VersionSequence::Decode(Unhex("0a021003"), "fragment 2 created_at");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("fragment 2 created_at: version run 0"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace lancelet::format
