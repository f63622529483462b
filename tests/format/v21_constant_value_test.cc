// Constant pages whose value does not fit inline (2.2 ConstantLayout with a value buffer:
// strings, binary, wide fixed-size binary), written by the reference and read by lancelet
// (skipped without the oracle); plus the value buffer format on its own.
#include <gtest/gtest.h>

#include "format/reference_file_util.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"
#include "lancelet/scalar.h"
#include "support/json_rows.h"

namespace lancelet::format::reference_test {
namespace {

using lancelet::testing::OracleAvailable;
using lancelet::testing::RunOracle;
using lancelet::testing::TempDir;

std::string U32(uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

TEST(ConstantScalar, ParsesValueBuffers) {
  const std::string utf8 = U32(2) + U32(8) + U32(5) + U32(0) + U32(5) + "hello";
  EXPECT_EQ(v21::ParseConstantScalar(utf8, true, "test"), "hello");
  const uint64_t wide[2] = {1, 3};
  const std::string large = U32(2) + U32(16) + U32(4) + std::string(reinterpret_cast<const char*>(wide), 16) + "abcd";
  EXPECT_EQ(v21::ParseConstantScalar(large, true, "test"), "bc");
  EXPECT_EQ(v21::ParseConstantScalar(U32(1) + U32(3) + "xyz", false, "test"), "xyz");
  EXPECT_THROW(v21::ParseConstantScalar(U32(2) + U32(8) + U32(50) + U32(0) + U32(5) + "hello", true, "test"), Error);
  EXPECT_THROW(v21::ParseConstantScalar(U32(2) + U32(8) + U32(5) + U32(0) + U32(9) + "hello", true, "test"), Error);
  EXPECT_THROW(v21::ParseConstantScalar(U32(0), false, "test"), Error);
}

TEST(ConstantValueReference, StringAndWideConstants) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const int64_t n = 5000;
  const auto fsb = DataType::FixedSizeBinary(40);
  std::vector<Scalar> text, bin, wide, large;
  for (int64_t k = 0; k < n; ++k) {
    text.push_back({DataType::Utf8(), std::string("the same words on every row")});
    bin.push_back({DataType::Binary(), std::string("\x01\x02\x00\x03", 4)});
    wide.push_back({fsb, std::string(40, 'w')});
    large.push_back({DataType::LargeUtf8(), std::string("large offsets")});
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("text", DataType::Utf8()), Field::Make("bin", DataType::Binary()), Field::Make("wide", fsb),
      Field::Make("large", DataType::LargeUtf8())});
  std::vector<ArrayPtr> columns = {MakeArray(DataType::Utf8(), text), MakeArray(DataType::Binary(), bin),
                                   MakeArray(fsb, wide), MakeArray(DataType::LargeUtf8(), large)};
  TempDir dir;
  const std::string table = CreateReferenceTable(dir, "constant", schema, columns, "2.2");
  const std::string file = OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, file);
  std::vector<std::string> names;
  for (size_t c = 0; c < columns.size(); ++c) {
    const std::string& name = schema->field(c)->name;
    const std::string enc = PageEncodings(file, uint32_t(c));
    if (enc.find("constant_layout") == std::string::npos) {
      // Not a constant page for this type: covered elsewhere (or by the other encodings).
      EXPECT_NE(name, "text") << enc;
      continue;
    }
    EXPECT_EQ(enc.find("inline_value"), std::string::npos) << enc;
    names.push_back(name);
    SCOPED_TRACE(name);
    EXPECT_TRUE(ArraysEqual(*reader->ReadField(c, 0, uint64_t(n)), *columns[c]));
    std::vector<uint64_t> rows = {4999, 0, 77};
    std::vector<int64_t> idx(rows.begin(), rows.end());
    EXPECT_TRUE(ArraysEqual(*reader->TakeField(c, rows), *Take(*columns[c], idx)));
  }
  ASSERT_FALSE(names.empty());
  auto dump = RunOracle({"dump", table, "--columns", Join(names)});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(lancelet::testing::DiffJsonLines(dump.out, ReadAsJsonLines(*reader, names)), "");
}

}  // namespace
}  // namespace lancelet::format::reference_test
