// The generated reading matrix (issue 3, proof 1): the reference writes every census
// case (tests/oracle/oracle.mjs gen-census; the value distributions of
// /work/shared/spec/reference_encoding_census.md plus edge shapes) at file versions 2.0,
// 2.1 and 2.2, and lancelet's scan, count and take at random offsets must return exactly
// the rows the reference dumps. The reference also writes each case as legacy (0.1/0.2)
// data files, which keep no validity except empty strings read as NULL: lancelet must read
// what the reference reads there too.
#include <filesystem>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "format/reference_file_util.h"
#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;

struct MatrixCase {
  const char* name;  // a gen-census case
  // Environment for the reference's create: a small page size splits every column into
  // many pages.
  const char* env = "";
  int max_rows_per_file = 0;  // > 0: several fragments
};

const MatrixCase kCases[] = {
    {"numeric"},     {"edges"},   {"strings"}, {"big_strings"}, {"vectors"}, {"lists"},
    {"structs"},     {"compression"},
    {"pages", "LANCE_FILE_WRITER_MAX_PAGE_BYTES=16384"},
    {"mixed", "", 700},
};

void PrintTo(const MatrixCase& c, std::ostream* os) { *os << c.name; }

using Param = std::tuple<MatrixCase, std::string>;

std::vector<std::string> DataFiles(const std::string& table) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(table + "/data"))
    if (e.path().extension() == ".lance") files.push_back(e.path().string());
  return files;
}

// Random distinct offsets plus the first and last row, in random order, then a repeat.
std::vector<uint64_t> TakeOffsets(size_t num_rows, uint32_t seed) {
  std::mt19937 rng(seed);
  std::set<uint64_t> distinct = {0, num_rows - 1};
  while (distinct.size() < std::min<size_t>(num_rows, 40)) distinct.insert(rng() % num_rows);
  std::vector<uint64_t> picks(distinct.begin(), distinct.end());
  std::shuffle(picks.begin(), picks.end(), rng);
  picks.push_back(picks.front());
  return picks;
}

class MatrixTest : public ::testing::TestWithParam<Param> {
 protected:
  TempDir dir_;
};

TEST_P(MatrixTest, LanceletReadsExactlyTheReferencesRows) {
  REQUIRE_ORACLE();
  const auto& [matrix_case, version] = GetParam();
  const std::string arrow = dir_.Join("in.arrow"), ds = dir_.Join("t.lance");
  std::vector<std::string> gen = {"gen-census", arrow, "--case", matrix_case.name};
  if (version == "2.0" || version == "legacy") gen.push_back("--no-null-structs");  // no struct validity stored
  ExpectOk(RunOracle(gen), "oracle gen-census");
  std::vector<std::string> create = {"create", ds, "--data", arrow, "--file-version", version};
  if (matrix_case.max_rows_per_file > 0) {
    create.push_back("--max-rows-per-file");
    create.push_back(std::to_string(matrix_case.max_rows_per_file));
  }
  ExpectOk(RunOracle(create, matrix_case.env), "oracle create");
  const std::string expected = ExpectOk(RunOracle({"dump", ds}), "oracle dump");
  const auto rows = SplitLines(expected);
  ASSERT_GT(rows.size(), 0u);

  // The case made the shape it is named for.
  if (matrix_case.max_rows_per_file > 0) {
    EXPECT_GT(DataFiles(ds).size(), 2u) << "expected several fragments";
  }
  if (version == "legacy") {
    for (const auto& file : DataFiles(ds)) {
      const std::string bytes = ReadFileToString(file);
      ASSERT_GE(bytes.size(), 8u);
      EXPECT_EQ(bytes.substr(bytes.size() - 8, 2), std::string("\0\0", 2)) << file << ": major version 0";
      EXPECT_LE(uint8_t(bytes[bytes.size() - 6]), 2) << file << ": minor version 0.1 or 0.2";
    }
  }
  if (std::string(matrix_case.name) == "pages" && version != "legacy") {
    // 2.0 splits every column at the page size; 2.1 / 2.2 flush a column's page only when
    // its (8 MiB) cache fills or a page would exceed the size, which here the list does.
    for (const auto& file : DataFiles(ds)) {
      size_t most_pages = 0;
      for (uint32_t column = 0; column < 12; ++column)
        most_pages = std::max(most_pages, SplitLines(format::reference_test::PageEncodings(file, column)).size());
      EXPECT_GE(most_pages, 2u) << "expected a column with several pages in " << file;
    }
  }

  const std::string scanned = ExpectOk(RunLancelet({"scan", ds, "--format", "jsonl"}), "lancelet scan");
  EXPECT_EQ(DiffJsonLines(expected, scanned), "") << "scan";
  EXPECT_EQ(ExpectOk(RunLancelet({"count", ds}), "lancelet count"), std::to_string(rows.size()) + "\n");

  const auto picks = TakeOffsets(rows.size(), 20240601u + rows.size());
  std::string expected_take, list;
  for (uint64_t p : picks) {
    expected_take += rows[p] + "\n";
    list += (list.empty() ? "" : ",") + std::to_string(p);
  }
  EXPECT_EQ(DiffJsonLines(expected_take, ExpectOk(RunLancelet({"take", ds, "--rows", list, "--format", "jsonl"}),
                                            "lancelet take")),
            "")
      << "take at " << list;
}

INSTANTIATE_TEST_SUITE_P(Census, MatrixTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values("2.0", "2.1", "2.2", "legacy")),
                         [](const auto& info) {
                           const std::string& v = std::get<1>(info.param);
                           return std::string(std::get<0>(info.param).name) +
                                  (v == "legacy" ? std::string("_legacy") : std::string("_v") + v[0] + "_" + v[2]);
                         });

}  // namespace
}  // namespace lancelet::testing
