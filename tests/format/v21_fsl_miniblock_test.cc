// Narrow fixed_size_list columns, which the reference stores in mini-block pages with a
// FixedSizeList value compression, read by lancelet (skipped without the oracle).
#include <gtest/gtest.h>

#include "format/reference_file_util.h"
#include "format/v21_test_util.h"
#include "lancelet/error.h"
#include "support/json_rows.h"

namespace lancelet::format::reference_test {
namespace {

using lancelet::testing::OracleAvailable;
using lancelet::testing::RunOracle;
using lancelet::testing::TempDir;
using v21_test::RandomData;

class FslMiniBlockReference : public ::testing::TestWithParam<std::string> {};

TEST_P(FslMiniBlockReference, NarrowVectors) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const int64_t n = 5000;
  RandomData dense(71, 0.0, 0.0);
  RandomData sparse(72, 0.1, 0.0);
  RandomData items(73, 0.1, 0.0);
  items.set_item_nulls(true);
  const auto f4 = DataType::FixedSizeList(DataType::Float32(), 4);
  const auto i2 = DataType::FixedSizeList(DataType::Int64(), 2);
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("f4", f4), Field::Make("i2_nulls", i2), Field::Make("f4_item_nulls", f4)});
  std::vector<ArrayPtr> columns = {dense.Array(f4, n), sparse.Array(i2, n), items.Array(f4, n)};
  TempDir dir;
  const std::string table = CreateReferenceTable(dir, "fsl", schema, columns, GetParam());
  const std::string file = OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, file);
  std::vector<std::string> names;
  bool saw_mini_block_fsl = false;
  for (size_t c = 0; c < columns.size(); ++c) {
    const std::string enc = PageEncodings(file, uint32_t(c));
    SCOPED_TRACE(enc);
    saw_mini_block_fsl = saw_mini_block_fsl || (enc.find("mini_block_layout") != std::string::npos &&
                                                enc.find("fixed_size_list") != std::string::npos);
    names.push_back(schema->field(c)->name);
    EXPECT_TRUE(ArraysEqual(*reader->ReadField(c, 0, uint64_t(n)), *columns[c])) << names.back();
    std::vector<uint64_t> rows = {4999, 0, 4096, 4095, 12};
    std::vector<int64_t> idx(rows.begin(), rows.end());
    EXPECT_TRUE(ArraysEqual(*reader->TakeField(c, rows), *Take(*columns[c], idx))) << names.back();
  }
  EXPECT_TRUE(saw_mini_block_fsl);
  auto dump = RunOracle({"dump", table, "--columns", Join(names)});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(lancelet::testing::DiffJsonLines(dump.out, ReadAsJsonLines(*reader, names)), "");
}

INSTANTIATE_TEST_SUITE_P(Versions, FslMiniBlockReference, ::testing::Values("2.1", "2.2"));

}  // namespace
}  // namespace lancelet::format::reference_test
