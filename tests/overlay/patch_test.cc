// Scattering overlay values into base arrays: in place when the base is unshared,
// copy-on-write when it is shared, fixed-size lists level by level, and the gather path.
#include <gtest/gtest.h>

#include <algorithm>

#include "format/roaring_bitmap.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"
#include "lancelet/text.h"
#include "overlay/patch.h"

namespace lancelet {
namespace {

ArrayPtr Int32s(const std::vector<std::optional<int32_t>>& values) {
  FixedWidthBuilder<int32_t> b(DataType::Int32());
  for (auto v : values) v ? b.Append(*v) : b.AppendNull();
  return b.Finish();
}

// fixed_size_list<int32, 2>; a null row is std::nullopt, a null item INT32_MIN.
ArrayPtr Pairs(const std::vector<std::optional<std::pair<int32_t, int32_t>>>& rows) {
  ListBuilder b(DataType::FixedSizeList(DataType::Int32(), 2));
  auto& items = static_cast<FixedWidthBuilder<int32_t>&>(b.item_builder());
  for (const auto& row : rows) {
    if (!row) {
      b.AppendNull();  // appends the row's two null items too
      continue;
    }
    for (int32_t v : {row->first, row->second}) v == INT32_MIN ? items.AppendNull() : items.Append(v);
    b.Append();
  }
  return b.Finish();
}

std::string Text(const ArrayPtr& a) {
  std::string out;
  for (int64_t i = 0; i < a->length; ++i)
    out += (i ? "," : "") + (a->IsNull(i) ? std::string("NULL") : FormatValue(*a, i, ValueStyle::kJson));
  return out;
}

TEST(OverlayPatch, UnsharedBaseIsPatchedInPlace) {
  ArrayPtr base = Int32s({0, 1, 2, 3, 4});
  const uint8_t* storage = base->buffers[1]->data();
  std::vector<uint32_t> positions = {1, 3};
  ArrayPtr out = overlay::ApplyReplacements(std::move(base), {{positions, Int32s({10, std::nullopt})}});
  EXPECT_EQ(Text(out), "0,10,2,NULL,4");
  EXPECT_EQ(out->null_count, 1);
  EXPECT_EQ(out->buffers[1]->data(), storage);  // no copy of the batch
}

TEST(OverlayPatch, SharedBaseIsCopiedAndLeftIntact) {
  ArrayPtr base = Int32s({0, std::nullopt, 2});
  std::vector<uint32_t> positions = {1};
  ArrayPtr out = overlay::ApplyReplacements(base, {{positions, Int32s({7})}});
  EXPECT_EQ(Text(out), "0,7,2");
  EXPECT_EQ(out->null_count, 0);
  EXPECT_EQ(Text(base), "0,NULL,2");  // the caller's array is unchanged
  EXPECT_NE(out->buffers[1]->data(), base->buffers[1]->data());
}

TEST(OverlayPatch, ValuesStartAtFirstAndCellsAtOrigin) {
  std::vector<uint32_t> positions = {0, 2};
  ArrayPtr column = Int32s({100, 101, 102, 103});
  ArrayPtr out = overlay::ApplyReplacements(Int32s({0, 1, 2}), {{positions, column, 2}});
  EXPECT_EQ(Text(out), "102,1,103");
  std::vector<uint32_t> physical = {1000, 1002};  // offsets of a batch that starts at row 1000
  EXPECT_EQ(Text(overlay::ApplyReplacements(Int32s({0, 1, 2}), {{physical, column, 1, 1000}})), "101,1,102");
  std::vector<uint32_t> too_many = {0, 1, 2};
  EXPECT_THROW(overlay::ApplyReplacements(Int32s({0, 1, 2}), {{too_many, column, 2}}), Error);
}

TEST(OverlayPatch, ScatteredCellsBeyondTheUnrolledBlocksAllLand) {
  std::vector<uint32_t> positions = {0, 2, 3, 5, 7, 8, 10};  // 4 + a remainder of 3
  ArrayPtr out = overlay::ApplyReplacements(Int32s({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
                                            {{positions, Int32s({-0, -2, -3, -5, -7, -8, -10})}});
  EXPECT_EQ(Text(out), "0,1,-2,-3,4,-5,6,-7,-8,9,-10,11");
}

TEST(OverlayPatch, ARunOfCellsIsCopiedAsOneBlock) {
  std::vector<uint32_t> run = {12, 13, 14};  // rows 2..4 of a batch starting at row 10
  ArrayPtr out = overlay::ApplyReplacements(Int32s({0, 1, 2, 3, 4, 5}), {{run, Int32s({9, 20, 30, 40}), 1, 10}});
  EXPECT_EQ(Text(out), "0,1,20,30,40,5");
}

// Eight consecutive cells go as one block; runs and scattered cells mix in any order.
TEST(OverlayPatch, RunsOfEightAmongScatteredCellsAllLand) {
  std::vector<uint32_t> cells;
  for (uint32_t c = 1; c < 9; ++c) cells.push_back(c);    // a run of 8
  for (uint32_t c : {11, 13, 14, 16}) cells.push_back(c);  // scattered
  for (uint32_t c = 20; c < 29; ++c) cells.push_back(c);   // a run of 9: a block and a remainder
  std::vector<std::optional<int32_t>> base, values;
  for (int32_t i = 0; i < 32; ++i) base.push_back(i);
  for (uint32_t c : cells) values.push_back(-int32_t(c) - 100);
  ArrayPtr out = overlay::ApplyReplacements(Int32s(base), {{cells, Int32s(values)}});
  std::string expected;
  for (int32_t i = 0; i < 32; ++i) {
    const bool covered = std::find(cells.begin(), cells.end(), uint32_t(i)) != cells.end();
    expected += (i ? "," : "") + std::to_string(covered ? -i - 100 : i);
  }
  EXPECT_EQ(Text(out), expected);
}

TEST(OverlayPatch, FixedSizeListRowsAndItemsKeepTheirNulls) {
  ArrayPtr base = Pairs({{{1, 2}}, {{3, 4}}, {{5, 6}}, std::nullopt});
  std::vector<uint32_t> positions = {0, 2, 3};
  ArrayPtr values = Pairs({std::nullopt, {{7, INT32_MIN}}, {{9, 10}}});
  ArrayPtr out = overlay::ApplyReplacements(std::move(base), {{positions, values}});
  EXPECT_EQ(Text(out), "NULL,[3,4],[7,null],[9,10]");
  EXPECT_EQ(out->null_count, 1);
  EXPECT_EQ(out->children[0]->null_count, 3);  // the null row's two items and one null item
}

TEST(OverlayPatch, VariableWidthValuesAreGathered) {
  BinaryBuilder b(DataType::Utf8());
  for (const char* v : {"a", "bb", "ccc"}) b.Append(v);
  BinaryBuilder r(DataType::Utf8());
  r.AppendNull();
  r.Append("zz");
  std::vector<uint32_t> positions = {0, 2};
  ArrayPtr out = overlay::ApplyReplacements(b.Finish(), {{positions, r.Finish()}});
  EXPECT_EQ(Text(out), "NULL,\"bb\",\"zz\"");
}

TEST(OverlayPatch, VariableWidthValuesStartAtFirstAndCellsAtOrigin) {
  BinaryBuilder b(DataType::Utf8());
  for (const char* v : {"a", "bb", "ccc", "dddd"}) b.Append(v);
  BinaryBuilder column(DataType::Utf8());  // a whole overlay column; the batch uses [2, 4)
  for (const char* v : {"v0", "v1", "v2", "v3", "v4"}) column.Append(v);
  std::vector<uint32_t> cells = {11, 13};  // physical offsets; the batch starts at 10
  ArrayPtr out = overlay::ApplyReplacements(b.Finish(), {{cells, column.Finish(), 2, 10}});
  EXPECT_EQ(Text(out), "\"a\",\"v2\",\"ccc\",\"v3\"");
}

// A replacement given as a bitmap range scatters the members of the range, whatever the
// containers (array, bitset, runs), the same as the listed cells; values with NULLs, and
// variable-width values, take the listed path and land the same.
TEST(OverlayPatch, BitmapRangeCellsLandLikeListedOnes) {
  format::RoaringBitmap built;
  for (uint32_t c = 3; c < 65536; c += 1000) built.Add(c);        // array
  for (uint32_t c = 65536; c < 2 * 65536; c += 3) built.Add(c);   // bitset
  built.AddRange(2 * 65536 + 10, 2 * 65536 + 40);                   // runs
  built.AddRange(2 * 65536 + 100, 2 * 65536 + 103);
  const format::RoaringBitmap coverage = format::RoaringBitmap::DeserializePortable(built.SerializePortable(), "t");
  const uint32_t origin = 60000, end = 2 * 65536 + 200;
  std::vector<uint32_t> cells;
  coverage.AppendMembersIn(origin, end, cells);
  ASSERT_EQ(coverage.CountInRange(origin, end), cells.size());

  auto patched = [&](bool listed, bool with_null, const DataType& type) {
    const int64_t rows = end - origin;
    std::vector<std::optional<int32_t>> base(static_cast<size_t>(rows)), values;
    for (int64_t i = 0; i < rows; ++i) base[size_t(i)] = int32_t(i);
    values.push_back(-1);  // rank 0 is before the range's first value
    for (size_t k = 0; k < cells.size(); ++k)
      values.push_back(with_null && k == 7 ? std::nullopt : std::optional<int32_t>(-int32_t(cells[k])));
    auto make = [&](const std::vector<std::optional<int32_t>>& v) {
      if (type.id() != TypeId::kUtf8) return Int32s(v);
      BinaryBuilder b(DataType::Utf8());
      for (const auto& x : v) x ? b.Append(std::to_string(*x)) : b.AppendNull();
      return b.Finish();
    };
    ArrayPtr base_array = make(base), value_array = make(values);
    overlay::Replacement r{{}, value_array, 1, origin};
    if (listed) r.cells = cells;
    else r.coverage = &coverage, r.end = end, r.count = cells.size();
    return Text(overlay::ApplyReplacements(base_array, std::vector<overlay::Replacement>{r}));
  };
  for (bool with_null : {false, true}) {
    for (const auto& type : {DataType::Int32(), DataType::Utf8()}) {
      const std::string expected = patched(true, with_null, *type);
      EXPECT_EQ(patched(false, with_null, *type), expected) << type->ToString() << (with_null ? " with a NULL" : "");
      EXPECT_NE(expected.find(with_null ? "NULL" : std::to_string(-int64_t(2 * 65536 + 102))), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace lancelet
