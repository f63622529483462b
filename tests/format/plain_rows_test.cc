// Fixed-width columns without nulls are read straight into one buffer (plain_rows.h) by the
// 2.0 and 2.1+ decoders. These tests pin that route to the general decoders' answers: row
// ranges inside one page, across many small pages, at the ends, and next to columns and
// pages that need the general path (nulls, item nulls, variable width).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "format/lance_file.h"
#include "format/plain_rows.h"
#include "lancelet/builder.h"
#include "support/test_env.h"

namespace lancelet::format {
namespace {

constexpr int64_t kRows = 5000;

ArrayPtr Ids() {
  FixedWidthBuilder<int64_t> b(DataType::Int64());
  for (int64_t i = 0; i < kRows; ++i) b.Append(i * 7 - 3);
  return b.Finish();
}

// fixed_size_list<float32, 3>; with `item_nulls`, every 100th row has a null item.
ArrayPtr Vectors(bool item_nulls) {
  ListBuilder b(DataType::FixedSizeList(DataType::Float32(), 3));
  auto& items = static_cast<FixedWidthBuilder<float>&>(b.item_builder());
  for (int64_t i = 0; i < kRows; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (item_nulls && i % 100 == 0 && j == 1) items.AppendNull();
      else items.Append(float(i) + float(j) / 4);
    }
    b.Append();
  }
  return b.Finish();
}

ArrayPtr Codes() {
  BinaryBuilder b(DataType::FixedSizeBinary(3));
  for (int64_t i = 0; i < kRows; ++i) b.Append(std::string{char('a' + i % 26), char(i % 251), char(i / 251)});
  return b.Finish();
}

// int32 with nulls only in the first rows: the later pages hold no nulls.
ArrayPtr EarlyNulls() {
  FixedWidthBuilder<int32_t> b(DataType::Int32());
  for (int64_t i = 0; i < kRows; ++i) {
    if (i < 700 && i % 3 == 0) b.AppendNull();
    else b.Append(int32_t(i * 11));
  }
  return b.Finish();
}

// Small non-negative numbers: bit-packed at 2.1+, so a take decodes chunks.
ArrayPtr Packed() {
  FixedWidthBuilder<int32_t> b(DataType::Int32());
  for (int64_t i = 0; i < kRows; ++i) b.Append(int32_t(i * 37 % 1000));
  return b.Finish();
}

ArrayPtr Labels() {
  BinaryBuilder b(DataType::Utf8());
  for (int64_t i = 0; i < kRows; ++i) b.Append("row-" + std::to_string(i));
  return b.Finish();
}

class PlainRowsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    store_ = io::MakeLocalStore();
    path_ = dir_.Join("plain.lance");
    fields_ = {Field::Make("id", DataType::Int64(), false),
               Field::Make("vec", DataType::FixedSizeList(DataType::Float32(), 3), false),
               Field::Make("code", DataType::FixedSizeBinary(3), false),
               Field::Make("early_nulls", DataType::Int32()),
               Field::Make("vec_item_nulls", DataType::FixedSizeList(DataType::Float32(), 3)),
               Field::Make("label", DataType::Utf8(), false),
               Field::Make("packed", DataType::Int32(), false)};
    columns_ = {Ids(), Vectors(false), Codes(), EarlyNulls(), Vectors(true), Labels(), Packed()};
    auto schema = std::make_shared<Schema>(fields_);
    FileWriterOptions options;
    options.version = FileVersion::Parse(GetParam());
    options.page_size_bytes = 4096;  // many pages per column
    LanceFileWriter writer(*store_, path_, LanceSchema::FromArrow(*schema), options);
    for (int64_t start = 0; start < kRows; start += 300) {  // batches that do not line up with pages
      const int64_t n = std::min<int64_t>(300, kRows - start);
      std::vector<ArrayPtr> part;
      for (const auto& c : columns_) part.push_back(Slice(*c, start, n));
      writer.Write(RecordBatch(schema, part, n));
    }
    writer.Finish();
    reader_ = LanceFileReader::Open(*store_, path_);
  }

  // Reads rows [start, start + count) of every field and compares them with the input.
  void ExpectRange(uint64_t start, uint64_t count) {
    for (size_t f = 0; f < fields_.size(); ++f) {
      SCOPED_TRACE(fields_[f]->name + " rows " + std::to_string(start) + "+" + std::to_string(count));
      ArrayPtr got = reader_->ReadField(f, start, count);
      ValidateArray(*got, "plain rows test");
      ArrayPtr want = Slice(*columns_[f], int64_t(start), int64_t(count));
      EXPECT_TRUE(ArraysEqual(*got, *want)) << got->type->ToString();
      if (PlainRowBytes(*fields_[f]->type) > 0 && !fields_[f]->nullable) {
        EXPECT_EQ(got->null_count, 0);
        EXPECT_EQ(got->buffers.at(0), nullptr);
      }
    }
  }

  // Takes `rows` of every field and compares them with the input's.
  void ExpectTake(const std::vector<uint64_t>& rows) {
    for (size_t f = 0; f < fields_.size(); ++f) {
      SCOPED_TRACE(fields_[f]->name);
      std::vector<int64_t> idx(rows.begin(), rows.end());
      ArrayPtr got = reader_->TakeField(f, rows);
      ValidateArray(*got, "plain rows test");
      EXPECT_TRUE(ArraysEqual(*got, *Take(*columns_[f], idx)));
    }
  }

  testing::TempDir dir_;
  std::shared_ptr<io::ObjectStore> store_;
  std::string path_;
  std::vector<FieldPtr> fields_;
  std::vector<ArrayPtr> columns_;
  std::unique_ptr<LanceFileReader> reader_;
};

TEST_P(PlainRowsTest, WholeColumns) { ExpectRange(0, kRows); }

TEST_P(PlainRowsTest, RangesInsideAndAcrossPages) {
  ExpectRange(0, 1);
  ExpectRange(5, 17);
  ExpectRange(123, 1000);
  ExpectRange(650, 100);  // the end of the nulls in early_nulls
  ExpectRange(2047, 2049);
  ExpectRange(kRows - 1, 1);
  ExpectRange(kRows - 333, 333);
}

TEST_P(PlainRowsTest, EmptyRange) {
  for (size_t f = 0; f < fields_.size(); ++f) EXPECT_EQ(reader_->ReadField(f, 17, 0)->length, 0);
}

TEST_P(PlainRowsTest, TakeAgreesWithRead) {
  ExpectTake({4999, 0, 1234, 1235, 17, 17, 3000});
}

// Mostly isolated rows are read straight into their places in the answer; a run of
// consecutive rows among them (here across page boundaries) is read at once.
TEST_P(PlainRowsTest, TakeOfScatteredRowsInRequestOrder) {
  std::vector<uint64_t> rows;
  for (uint64_t r = 4998; r >= 2000; r -= 3) rows.push_back(r);
  std::mt19937 rng(7);
  std::shuffle(rows.begin(), rows.end(), rng);
  std::vector<uint64_t> run;
  for (uint64_t r = 1000; r <= 1600; ++r) run.push_back(r);
  rows.insert(rows.begin() + 400, run.begin(), run.end());
  rows.push_back(2001);  // a duplicate, last
  ExpectTake(rows);
}

// A filter's survivors: ascending, every 7th row, so most chunks give several rows.
TEST_P(PlainRowsTest, TakeOfAscendingSurvivors) {
  std::vector<uint64_t> rows;
  for (uint64_t r = 3; r < uint64_t(kRows); r += 7) rows.push_back(r);
  ExpectTake(rows);
}

INSTANTIATE_TEST_SUITE_P(Versions, PlainRowsTest, ::testing::Values("2.0", "2.1", "2.2"),
                         [](const auto& info) { return "v" + info.param.substr(0, 1) + "_" + info.param.substr(2); });

TEST(PlainRowBytes, Types) {
  EXPECT_EQ(PlainRowBytes(*DataType::Int64()), 8u);
  EXPECT_EQ(PlainRowBytes(*DataType::Float16()), 2u);
  EXPECT_EQ(PlainRowBytes(*DataType::Timestamp(TimeUnit::kMicro)), 8u);
  EXPECT_EQ(PlainRowBytes(*DataType::FixedSizeBinary(5)), 5u);
  EXPECT_EQ(PlainRowBytes(*DataType::FixedSizeList(DataType::Float32(), 128)), 512u);
  EXPECT_EQ(PlainRowBytes(*DataType::Bool()), 0u);
  EXPECT_EQ(PlainRowBytes(*DataType::Utf8()), 0u);
  EXPECT_EQ(PlainRowBytes(*DataType::FixedSizeList(DataType::Bool(), 8)), 0u);
  EXPECT_EQ(PlainRowBytes(*DataType::FixedSizeList(DataType::FixedSizeList(DataType::Int8(), 2), 2)), 0u);
  EXPECT_EQ(PlainRowBytes(*DataType::List(DataType::Int32())), 0u);
}

TEST(MakePlainArray, FixedSizeListShape) {
  auto values = Buffer::Copy("\x01\x02\x03\x04\x05\x06", 6);
  ArrayPtr a = MakePlainArray(DataType::FixedSizeList(DataType::UInt8(), 3), 2, values);
  ValidateArray(*a, "MakePlainArray");
  ASSERT_EQ(a->buffers.size(), 1u);
  EXPECT_EQ(a->buffers[0], nullptr);
  ASSERT_EQ(a->children.size(), 1u);
  EXPECT_EQ(a->children[0]->length, 6);
  EXPECT_EQ(a->children[0]->buffers.at(1), values);
  EXPECT_EQ(a->children[0]->values<uint8_t>()[4], 5);
}

}  // namespace
}  // namespace lancelet::format
