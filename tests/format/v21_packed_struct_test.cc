// Packed structs written by the reference (opt-in "packed": "true" field metadata), read
// by lancelet (skipped without the oracle): 2.1 / 2.2 mini-block PackedStruct(Flat) and
// 2.0 PackedStruct; plus the row splitting on its own.
#include <gtest/gtest.h>

#include "format/reference_file_util.h"
#include "format/v21_test_util.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"
#include "lancelet/scalar.h"
#include "support/json_rows.h"

namespace lancelet::format::reference_test {
namespace {

using lancelet::testing::DiffJsonLines;
using lancelet::testing::OracleAvailable;
using lancelet::testing::RunOracle;
using lancelet::testing::TempDir;

const TypePtr kPoint =
    DataType::Struct({Field::Make("x", DataType::Int32()), Field::Make("y", DataType::Float32())});

TEST(PackedStructRows, SplitsFixedRowsIntoChildren) {
  v21::ValueBlock rows;
  rows.bits = 64;
  rows.count = 2;
  const int32_t x[2] = {7, -3};
  const float y[2] = {1.5f, -2.25f};
  rows.data.resize(16);
  for (int r = 0; r < 2; ++r) {
    std::memcpy(&rows.data[size_t(r) * 8], &x[r], 4);
    std::memcpy(&rows.data[size_t(r) * 8 + 4], &y[r], 4);
  }
  ArrayPtr got = v21::MakePackedStructArray(kPoint, rows, {1, 0}, "test");
  ArrayPtr want = MakeArray(kPoint, {Scalar{kPoint, std::vector<Scalar>{{DataType::Int32(), int64_t(7)},
                                                                        {DataType::Float32(), 1.5}}},
                                     Scalar::Null(kPoint)});
  EXPECT_TRUE(ArraysEqual(*got, *want));
  EXPECT_EQ(got->child(0)->values<int32_t>()[1], -3);
  rows.bits = 96;
  EXPECT_THROW(v21::MakePackedStructArray(kPoint, rows, {1, 1}, "test"), Error);
}

TEST(PackedStructRows, NormalizesVariableRows) {
  lance::encodings21::VariablePackedStruct encoding;
  auto* a = encoding.add_fields();
  a->set_bits_per_value(8);
  a->mutable_value()->mutable_flat()->set_bits_per_value(8);
  auto* b = encoding.add_fields();
  b->set_bits_per_length(32);
  b->mutable_value()->mutable_variable()->mutable_offsets()->mutable_flat()->set_bits_per_value(32);
  v21::ValueBlock rows;
  rows.variable = true;
  rows.count = 2;
  rows.data = std::string("\x05\x03\x00\x00\x00" "abc" "\x06\x00\x00\x00\x00", 13);
  rows.offsets = {0, 8, 13};
  v21::NormalizeVariablePackedRows(encoding, rows, "test");
  const auto type = DataType::Struct({Field::Make("k", DataType::UInt8()), Field::Make("s", DataType::Utf8())});
  ArrayPtr got = v21::MakePackedStructArray(type, rows, {1, 1}, "test");
  ArrayPtr want = MakeArray(type, {Scalar{type, std::vector<Scalar>{{DataType::UInt8(), uint64_t(5)},
                                                                    {DataType::Utf8(), std::string("abc")}}},
                                   Scalar{type, std::vector<Scalar>{{DataType::UInt8(), uint64_t(6)},
                                                                    {DataType::Utf8(), std::string()}}}});
  EXPECT_TRUE(ArraysEqual(*got, *want));
  rows.data = std::string("\x05\x09\x00\x00\x00" "abc", 8);  // length past the row
  rows.count = 1;
  rows.offsets = {0, 8};
  EXPECT_THROW(v21::NormalizeVariablePackedRows(encoding, rows, "test"), Error);
}

class PackedStructReference : public ::testing::TestWithParam<std::string> {};

TEST_P(PackedStructReference, ReadsOptInPackedStruct) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const std::string version = GetParam();
  const int64_t n = 5000;
  std::mt19937 rng(51);
  // The reference refuses packed structs with null rows (2.1: "Variable packed struct
  // encoding is not enabled", 2.2: "Per-value compression not yet supported for block type
  // Nullable"), so every row is valid.
  std::vector<Scalar> dense;
  for (int64_t k = 0; k < n; ++k) {
    auto point = [&] {
      return Scalar{kPoint, std::vector<Scalar>{{DataType::Int32(), int64_t(int32_t(rng()))},
                                               {DataType::Float32(), double(float(int32_t(rng() % 100000)) / 8)}}};
    };
    dense.push_back(point());
  }
  const Metadata packed = {{"packed", "true"}};
  std::vector<FieldPtr> fields = {Field::Make("p", kPoint, true, packed)};
  std::vector<ArrayPtr> columns = {MakeArray(kPoint, dense)};
  auto schema = std::make_shared<Schema>(fields);
  TempDir dir;
  const std::string table = CreateReferenceTable(dir, "packed", schema, columns, version);
  const std::string file = OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, file);
  const bool v20 = version == "2.0";
  for (const auto& f : fields) {
    const std::string enc = PageEncodings(file, FirstColumnOf(*reader, f->name, v20));
    EXPECT_NE(enc.find("packed_struct"), std::string::npos) << enc;
  }
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f->name);
  auto dump = RunOracle({"dump", table, "--columns", Join(names)});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(DiffJsonLines(dump.out, ReadAsJsonLines(*reader, names)), "");
  for (size_t c = 0; c < columns.size(); ++c) {
    EXPECT_TRUE(ArraysEqual(*reader->ReadField(c, 0, uint64_t(n)), *columns[c])) << names[c];
    std::vector<uint64_t> rows = {4999, 0, 1024, 77, 77};
    std::vector<int64_t> idx(rows.begin(), rows.end());
    EXPECT_TRUE(ArraysEqual(*reader->TakeField(c, rows), *Take(*columns[c], idx))) << names[c];
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, PackedStructReference, ::testing::Values("2.0", "2.1", "2.2"));

}  // namespace
}  // namespace lancelet::format::reference_test
