// Round trips through the 2.1 / 2.2 FieldEncoder and FieldDecoder with an in-memory file.
#include <gtest/gtest.h>

#include <algorithm>

#include "format/v21_test_util.h"
#include "lancelet/error.h"

namespace lancelet::format::v21_test {
namespace {

struct Written {
  LanceField field;
  std::unique_ptr<MemoryFile> file;
  ArrayPtr expected;
};

Written Write(const LanceField& field, const std::vector<ArrayPtr>& batches, FileVersion version,
              uint64_t page_size = 8 << 20) {
  Written w;
  w.field = field;
  FileWriterOptions options;
  options.version = version;
  options.page_size_bytes = page_size;
  auto encoder = MakeFieldEncoder(version, field, options);
  w.file = std::make_unique<MemoryFile>(encoder->num_columns());
  for (const auto& b : batches) encoder->Append(*b, *w.file);
  encoder->Finish(*w.file);
  w.expected = batches.size() == 1 ? batches[0] : Concatenate(batches);
  return w;
}

std::unique_ptr<FieldDecoder> Decoder(const Written& w, FileVersion version) {
  return MakeFieldDecoder(version, w.field, w.file->Columns(), *w.file);
}

const FileVersion kV21{2, 1};
const FileVersion kV22{2, 2};

// Writes, then checks a full read, two slices and a shuffled take with duplicates.
void CheckRoundTrip(const TypePtr& type, const std::vector<ArrayPtr>& batches, FileVersion version,
                    uint64_t page_size = 8 << 20, Metadata metadata = {}) {
  SCOPED_TRACE(type->ToString() + " @ " + version.ToString());
  const LanceField field = MakeLanceField("f", type, metadata);
  Written w = Write(field, batches, version, page_size);
  auto decoder = Decoder(w, version);
  const int64_t n = w.expected->length;
  ASSERT_EQ(decoder->num_rows(), uint64_t(n));
  ArrayPtr all = decoder->Read(0, uint64_t(n));
  ValidateArray(*all, "decoded");
  ASSERT_TRUE(ArraysEqual(*all, *w.expected));
  if (n >= 10) {
    const int64_t a = n / 3, len = n / 2;
    ArrayPtr part = decoder->Read(uint64_t(a), uint64_t(len));
    EXPECT_TRUE(ArraysEqual(*part, *Slice(*w.expected, a, len)));
    ArrayPtr tail = decoder->Read(uint64_t(n - 1), 1);
    EXPECT_TRUE(ArraysEqual(*tail, *Slice(*w.expected, n - 1, 1)));
  }
  std::vector<uint64_t> rows;
  std::vector<int64_t> idx;
  std::mt19937 rng(7);
  for (int k = 0; k < 40 && n > 0; ++k) {
    int64_t r = std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
    rows.push_back(uint64_t(r));
    idx.push_back(r);
  }
  if (n > 0) {
    rows.push_back(rows[0]);
    idx.push_back(idx[0]);
    rows.push_back(uint64_t(n - 1));
    idx.push_back(n - 1);
  }
  ArrayPtr taken = decoder->Take(rows);
  ValidateArray(*taken, "taken");
  EXPECT_TRUE(ArraysEqual(*taken, *Take(*w.expected, idx)));
}

void CheckBothVersions(const TypePtr& type, const std::vector<ArrayPtr>& batches, uint64_t page_size = 8 << 20,
                       Metadata metadata = {}) {
  CheckRoundTrip(type, batches, kV21, page_size, metadata);
  CheckRoundTrip(type, batches, kV22, page_size, metadata);
}

TEST(V21RoundTrip, FixedWidthPrimitivesWithNulls) {
  for (auto type : {DataType::Bool(), DataType::Int8(), DataType::Int16(), DataType::Int32(), DataType::Int64(),
                    DataType::UInt8(), DataType::UInt16(), DataType::UInt32(), DataType::UInt64(),
                    DataType::Float16(), DataType::Float32(), DataType::Float64(), DataType::Date32(),
                    DataType::Date64(), DataType::Timestamp(TimeUnit::kMicro, "UTC"), DataType::FixedSizeBinary(3)}) {
    RandomData gen(1);
    CheckBothVersions(type, {gen.Array(type, 5000), gen.Array(type, 1234)});
  }
}

TEST(V21RoundTrip, FixedWidthWithoutNulls) {
  RandomData gen(2, 0.0);
  CheckBothVersions(DataType::Int32(), {gen.Array(DataType::Int32(), 3000)});
  CheckBothVersions(DataType::Bool(), {gen.Array(DataType::Bool(), 9000)});
}

TEST(V21RoundTrip, VariableBinary) {
  for (auto type : {DataType::Utf8(), DataType::Binary(), DataType::LargeUtf8(), DataType::LargeBinary()}) {
    RandomData gen(3, 0.1, 0.1);
    CheckBothVersions(type, {gen.Array(type, 3000), gen.Array(type, 700)});
  }
}

TEST(V21RoundTrip, LongBinaryUsesFullZip) {
  for (auto type : {DataType::Utf8(), DataType::LargeBinary()}) {
    RandomData gen(4, 0.1, 0.05);
    gen.set_lengths(200, 1200);
    CheckBothVersions(type, {gen.Array(type, 300)});
  }
}

TEST(V21RoundTrip, ForcedLayouts) {
  RandomData gen(5);
  const auto list = DataType::List(DataType::Utf8());
  CheckBothVersions(list, {gen.Array(list, 500)}, 8 << 20, {{"lance-encoding:structural-encoding", "fullzip"}});
  CheckBothVersions(DataType::Int64(), {gen.Array(DataType::Int64(), 500)}, 8 << 20,
                    {{"lance-encoding:structural-encoding", "fullzip"}});
  const auto nested = DataType::List(DataType::List(DataType::Int32()));
  CheckBothVersions(nested, {gen.Array(nested, 400)}, 8 << 20, {{"lance-encoding:structural-encoding", "fullzip"}});
}

TEST(V21RoundTrip, Lists) {
  for (auto type : {DataType::List(DataType::Int32()), DataType::LargeList(DataType::Float64()),
                    DataType::List(DataType::Utf8()), DataType::List(DataType::Bool())}) {
    RandomData gen(6, 0.1, 0.15);
    CheckBothVersions(type, {gen.Array(type, 3000)});
  }
}

TEST(V21RoundTrip, ListsWithoutNullsOrEmpties) {
  RandomData gen(7, 0.0, 0.0);
  const auto type = DataType::List(DataType::Int64());
  CheckBothVersions(type, {gen.Array(type, 2000)});
}

TEST(V21RoundTrip, ListsOfLists) {
  RandomData gen(8, 0.1, 0.2);
  const auto type = DataType::List(DataType::LargeList(DataType::Int16()));
  CheckBothVersions(type, {gen.Array(type, 2000)});
  const auto deep = DataType::List(DataType::List(DataType::List(DataType::Utf8())));
  CheckBothVersions(deep, {gen.Array(deep, 800)});
}

TEST(V21RoundTrip, ListsOfStructs) {
  RandomData gen(9, 0.1, 0.15);
  const auto type = DataType::List(DataType::Struct(
      {Field::Make("a", DataType::Int32()), Field::Make("b", DataType::Utf8()),
       Field::Make("c", DataType::List(DataType::Float32()))}));
  CheckBothVersions(type, {gen.Array(type, 1500)});
}

TEST(V21RoundTrip, StructsWithNullRows) {
  RandomData gen(10, 0.15);
  const auto type = DataType::Struct({Field::Make("a", DataType::Int32()), Field::Make("b", DataType::Utf8()),
                                      Field::Make("s", DataType::Struct({Field::Make("x", DataType::Float64())}))});
  CheckBothVersions(type, {gen.Array(type, 3000)});
}

TEST(V21RoundTrip, StructAboveList) {
  RandomData gen(11, 0.15, 0.2);
  const auto type = DataType::Struct(
      {Field::Make("id", DataType::Int64()), Field::Make("tags", DataType::List(DataType::Utf8()))});
  CheckBothVersions(type, {gen.Array(type, 2000)});
}

TEST(V21RoundTrip, FixedSizeLists) {
  RandomData gen(12, 0.05);
  const auto embedding = DataType::FixedSizeList(DataType::Float32(), 128);
  CheckBothVersions(embedding, {gen.Array(embedding, 300)});
  RandomData item_nulls(13, 0.1);
  item_nulls.set_item_nulls(true);
  const auto small = DataType::FixedSizeList(DataType::Int16(), 3);
  CheckBothVersions(small, {item_nulls.Array(small, 1000)});
  const auto nested = DataType::List(DataType::FixedSizeList(DataType::Float32(), 4));
  CheckBothVersions(nested, {gen.Array(nested, 500)});
}

TEST(V21RoundTrip, EmptyListsVersusNullLists) {
  const auto type = DataType::List(DataType::Int32());
  auto list = [&](std::vector<int64_t> items) {
    std::vector<Scalar> s;
    for (auto v : items) s.push_back({DataType::Int32(), v});
    return Scalar{type, s};
  };
  std::vector<Scalar> rows = {list({1, 2}), Scalar::Null(type), list({}), list({3}),
                              list({}), Scalar::Null(type), list({4, 5, 6})};
  ArrayPtr array = MakeArray(type, rows);
  CheckBothVersions(type, {array});
  const LanceField field = MakeLanceField("f", type);
  Written w = Write(field, {array}, kV21);
  ArrayPtr back = Decoder(w, kV21)->Read(0, 7);
  EXPECT_TRUE(back->IsNull(1));
  EXPECT_TRUE(back->IsValid(2));
  EXPECT_EQ(back->offset(3) - back->offset(2), 0);
  EXPECT_TRUE(back->IsNull(5));
}

TEST(V21RoundTrip, AllNullPages) {
  RandomData gen(14, 1.0);
  CheckBothVersions(DataType::Int32(), {gen.Array(DataType::Int32(), 100)});
  CheckBothVersions(DataType::Utf8(), {gen.Array(DataType::Utf8(), 100)});
  // Struct rows valid but the child all null: levels must distinguish the two.
  const auto type = DataType::Struct({Field::Make("a", DataType::Int32())});
  std::vector<Scalar> rows;
  for (int k = 0; k < 50; ++k)
    rows.push_back(k % 3 == 0 ? Scalar::Null(type) : Scalar{type, std::vector<Scalar>{Scalar::Null(DataType::Int32())}});
  CheckBothVersions(type, {MakeArray(type, rows)});
  // Lists that are all empty or null.
  const auto lists = DataType::List(DataType::Int64());
  std::vector<Scalar> empties;
  for (int k = 0; k < 30; ++k) empties.push_back(k % 4 == 0 ? Scalar::Null(lists) : Scalar{lists, std::vector<Scalar>{}});
  CheckBothVersions(lists, {MakeArray(lists, empties)});
}

TEST(V21RoundTrip, AllNullLayoutIsUsed) {
  RandomData gen(15, 1.0);
  const LanceField field = MakeLanceField("f", DataType::Int32());
  Written w = Write(field, {gen.Array(DataType::Int32(), 64)}, kV22);
  const auto layout = PageLayoutOf(w.file->column(0).pages(0));
  ASSERT_TRUE(layout.has_constant_layout());
  EXPECT_FALSE(layout.constant_layout().has_inline_value());
  EXPECT_EQ(w.file->column(0).pages(0).buffer_offsets_size(), 0);
  ASSERT_EQ(layout.constant_layout().layers_size(), 1);
  EXPECT_EQ(layout.constant_layout().layers(0), lance::encodings21::REPDEF_NULLABLE_ITEM);
}

TEST(V21RoundTrip, ManyPages) {
  RandomData gen(16, 0.1, 0.1);
  const auto type = DataType::Struct(
      {Field::Make("n", DataType::Int64()), Field::Make("l", DataType::List(DataType::Utf8()))});
  std::vector<ArrayPtr> batches;
  for (int k = 0; k < 12; ++k) batches.push_back(gen.Array(type, 300));
  // A tiny page size gives one page per batch.
  CheckBothVersions(type, batches, 1);
  const LanceField field = MakeLanceField("f", type);
  Written w = Write(field, batches, kV21, 1);
  EXPECT_EQ(w.file->column(0).pages_size(), 12);
  EXPECT_EQ(w.file->column(1).pages_size(), 12);
  EXPECT_EQ(w.file->column(1).pages(3).priority(), 900u);
}

TEST(V21RoundTrip, RowSpanningManyChunks) {
  // One row with 10000 items spans several chunks; the rows around it must still be found.
  const auto type = DataType::List(DataType::Int32());
  std::vector<Scalar> rows;
  auto list = [&](int64_t n, int64_t base) {
    std::vector<Scalar> s;
    for (int64_t k = 0; k < n; ++k) s.push_back({DataType::Int32(), base + k});
    return Scalar{type, s};
  };
  for (int k = 0; k < 500; ++k) rows.push_back(list(3, k));
  rows.push_back(list(10000, 1000000));
  rows.push_back(Scalar{type, std::vector<Scalar>{}});
  for (int k = 0; k < 500; ++k) rows.push_back(list(2, -k));
  CheckBothVersions(type, {MakeArray(type, rows)});
}

TEST(V21RoundTrip, ManyEmptyListsBetweenValues) {
  // Runs of empty lists longer than a chunk can hold levels for are spread over chunks.
  const auto type = DataType::List(DataType::Int32());
  std::vector<Scalar> rows;
  for (int k = 0; k < 20000; ++k)
    rows.push_back(k % 1000 == 0 ? Scalar{type, std::vector<Scalar>{{DataType::Int32(), int64_t(k)}}}
                                 : Scalar{type, std::vector<Scalar>{}});
  CheckBothVersions(type, {MakeArray(type, rows)});
}

}  // namespace
}  // namespace lancelet::format::v21_test
