// Interop with the reference implementation (Rust lance 12.0.0 via npm @lancedb/lancedb).
// Each test writes with one side and reads with the other, comparing the rows both
// print in the canonical JSON-lines form.
#include <filesystem>
#include <fstream>
#include <functional>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {


// Every type the reference accepts at a file version (2.0 cannot store null structs).
std::vector<std::string> GenArgs(const std::string& out, int rows, int seed, const std::string& version) {
  std::vector<std::string> args = {"gen", out, "--rows", std::to_string(rows), "--seed", std::to_string(seed),
                                   "--no-nan-vectors"};
  if (version == "2.0") args.push_back("--no-null-structs");
  return args;
}

std::string DumpRows(const std::string& ds, bool with_rowaddr = false) {
  std::vector<std::string> args = {"dump", ds};
  if (with_rowaddr) args.push_back("--with-rowaddr");
  return Oracle(args);
}

std::string ScanRows(const std::string& ds, bool with_rowaddr = false) {
  std::vector<std::string> args = {"scan", ds, "--format", "jsonl"};
  if (with_rowaddr) args.push_back("--with-rowaddr");
  return Lancelet(args);
}

void ExpectSameRows(const std::string& expected, const std::string& actual, const std::string& context) {
  EXPECT_FALSE(expected.empty()) << context;
  std::string diff = DiffJsonLines(expected, actual);
  EXPECT_EQ(diff, "") << context;
}

class InteropTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string version() const { return GetParam(); }
  TempDir dir_;
};

// The reference writes (create, append, delete few rows); lancelet reads.
TEST_P(InteropTest, LanceletReadsWhatTheReferenceWrote) {
  REQUIRE_ORACLE();
  std::string ds = dir_.Join("ref.lance"), a = dir_.Join("a.arrow"), b = dir_.Join("b.arrow");
  Oracle(GenArgs(a, 400, 11, version()));
  Oracle(GenArgs(b, 120, 12, version()));
  Oracle({"create", ds, "--data", a, "--file-version", version()});
  Oracle({"append", ds, "--data", b});
  Oracle({"delete", ds, "--where", "c_int16 < -20000 OR c_int8 = 127"});

  ExpectSameRows(DumpRows(ds, true), ScanRows(ds, true), "full scan with _rowaddr");
  EXPECT_EQ(Lancelet({"count", ds}), Oracle({"count", ds}));
  // Take at scattered offsets equals those rows of the dump.
  auto rows = SplitLines(DumpRows(ds));
  ASSERT_GT(rows.size(), 300u);
  std::vector<size_t> picks = {0, 7, 99, rows.size() - 1, 250};
  std::string expected, list;
  for (size_t p : picks) {
    expected += rows[p] + "\n";
    list += (list.empty() ? "" : ",") + std::to_string(p);
  }
  ExpectSameRows(expected, Lancelet({"take", ds, "--rows", list, "--format", "jsonl"}), "take");
  // Time travel: version 1 has exactly the created rows.
  ExpectSameRows(Oracle({"dump", ds, "--version", "1"}), Lancelet({"scan", ds, "--version", "1", "--format", "jsonl"}),
                 "version 1");
}

// The reference deletes thousands of rows from one fragment: the bitmap deletion kind.
TEST_P(InteropTest, LanceletReadsTheReferencesBitmapDeletions) {
  REQUIRE_ORACLE();
  std::string ds = dir_.Join("many.lance"), a = dir_.Join("a.arrow");
  Oracle({"gen", a, "--rows", "12000", "--seed", "5", "--types", "int64,utf8,float32"});
  Oracle({"create", ds, "--data", a, "--file-version", version()});
  Oracle({"delete", ds, "--where", "c_int64 % 2 = 0"});
  bool has_bitmap = false;
  for (const auto& e : std::filesystem::directory_iterator(ds + "/_deletions"))
    has_bitmap |= e.path().extension() == ".bin";
  EXPECT_TRUE(has_bitmap) << "expected the reference to write a .bin deletion file";
  ExpectSameRows(DumpRows(ds), ScanRows(ds), "scan after many deletions");
  EXPECT_EQ(Lancelet({"count", ds}), Oracle({"count", ds}));
}

// lancelet writes (create, append, delete few and many); the reference reads; then the
// reference appends and deletes, and lancelet reads the result.
TEST_P(InteropTest, TheReferenceReadsWhatLanceletWrote) {
  REQUIRE_ORACLE();
  std::string ds = dir_.Join("ours.lance"), a = dir_.Join("a.arrow"), b = dir_.Join("b.arrow"),
              c = dir_.Join("c.arrow");
  Oracle(GenArgs(a, 400, 21, version()));
  Oracle(GenArgs(b, 150, 22, version()));
  Oracle(GenArgs(c, 60, 23, version()));
  Lancelet({"create", ds, "--from", a, "--file-version", version(), "--max-rows-per-file", "300"});
  Lancelet({"append", ds, "--from", b});
  Lancelet({"delete", ds, "--where", "c_int16 < -20000 OR c_int8 = 127"});

  // Same schema (names, types, nullability) as the input file.
  auto expected_schema = nlohmann::json::parse(Oracle({"arrow-schema", a}));
  auto schema = nlohmann::json::parse(Oracle({"schema", ds}));
  EXPECT_EQ(schema, expected_schema);
  ExpectSameRows(ScanRows(ds, true), DumpRows(ds, true), "reference scan of lancelet's dataset");
  EXPECT_EQ(Oracle({"count", ds}), Lancelet({"count", ds}));

  Oracle({"append", ds, "--data", c});
  Oracle({"delete", ds, "--where", "c_int32 < 0"});
  ExpectSameRows(DumpRows(ds, true), ScanRows(ds, true), "lancelet scan after the reference's writes");
  EXPECT_EQ(Lancelet({"count", ds}), Oracle({"count", ds}));
}

TEST_P(InteropTest, TheReferenceReadsLanceletsBitmapDeletions) {
  REQUIRE_ORACLE();
  std::string ds = dir_.Join("many.lance"), a = dir_.Join("a.arrow");
  Oracle({"gen", a, "--rows", "12000", "--seed", "6", "--types", "int64,utf8,float32"});
  Lancelet({"create", ds, "--from", a, "--file-version", version()});
  Lancelet({"delete", ds, "--where", "c_int64 % 2 = 0"});
  bool has_bitmap = false;
  for (const auto& e : std::filesystem::directory_iterator(ds + "/_deletions"))
    has_bitmap |= e.path().extension() == ".bin";
  EXPECT_TRUE(has_bitmap);
  ExpectSameRows(ScanRows(ds), DumpRows(ds), "reference scan after many deletions");
  EXPECT_EQ(Oracle({"count", ds}), Lancelet({"count", ds}));
}

// Runs of null and of empty lists far longer than a chunk's values (30,000 and 40,000
// rows between lists with items): lancelet packs the levels and the reference reads the
// rows as lancelet does.
// Creates `ds` at the test's file version from n rows {"id": i, "l": list_of(i)} of schema
// id:int64, l:list<int32>.
void CreateListRows(const std::string& ds, int n, const std::function<std::string(int)>& list_of,
                    const std::string& version, const std::string& input) {
  {
    std::ofstream out(input);
    for (int i = 0; i < n; ++i) out << "{\"id\":" << i << ",\"l\":" << list_of(i) << "}\n";
  }
  ExpectOk(RunLancelet({"create", ds, "--from", input, "--schema", "id:int64,l:list<int32>", "--file-version", version}),
           "lancelet create");
}

TEST_P(InteropTest, TheReferenceReadsLongRunsOfNullAndEmptyLists) {
  REQUIRE_ORACLE();
  const std::string ds = dir_.Join("lists.lance");
  CreateListRows(ds, 80000, [](int i) -> std::string {
    if (i < 30000) return "null";
    if (i < 30010 || i >= 79990) return fmt::format("[{},{}]", i, i + 1);
    return "[]";
  }, version(), dir_.Join("lists.jsonl"));
  const std::string ours = ScanRows(ds);
  EXPECT_EQ(SplitLines(ours).size(), 80000u);
  ExpectSameRows(ours, DumpRows(ds), "the reference reads lancelet's long runs");
}

// 99,999 null lists in a row are more levels between two values than a mini-block chunk
// holds (65,535): the writer splits those rows over pages of their own (all-null pages
// hold any number of levels), and both lancelet and the reference read every row back.
TEST_P(InteropTest, RunsOfNullListsLongerThanAChunkAreSplitOverPages) {
  REQUIRE_ORACLE();
  const std::string ds = dir_.Join("nulls.lance");
  CreateListRows(ds, 150000, [](int i) -> std::string {
    if (i == 0 || (i >= 100000 && i < 100010) || i >= 149990) return fmt::format("[{}]", i);
    return i < 100000 ? "null" : "[]";
  }, version(), dir_.Join("nulls.jsonl"));
  const std::string ours = ScanRows(ds);
  const auto rows = SplitLines(ours);
  ASSERT_EQ(rows.size(), 150000u);
  EXPECT_EQ(rows[0], R"({"id":0,"l":[0]})");
  EXPECT_EQ(rows[99999], R"({"id":99999,"l":null})");
  EXPECT_EQ(rows[100000], R"({"id":100000,"l":[100000]})");
  EXPECT_EQ(rows[120000], R"({"id":120000,"l":[]})");
  ExpectSameRows(ours, DumpRows(ds), "the reference reads lancelet's split pages");
}

INSTANTIATE_TEST_SUITE_P(FileVersions, InteropTest, ::testing::Values("2.0", "2.1", "2.2"),
                         [](const auto& info) { return "v" + std::string(1, info.param[0]) + "_" + info.param[2]; });

}  // namespace
}  // namespace lancelet::testing
