// Datasets after the operations the reference performs (issue 3, proof 2): add_columns,
// drop_columns, alter_columns, delete, update, optimize (compaction), and a table with
// stable row ids. lancelet must read each exactly as the reference does: scan (with
// _rowid and _rowaddr), count, and take at scattered offsets.
#include <filesystem>

#include <gtest/gtest.h>

#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;


class OperationsTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string version() const { return GetParam(); }

  // Three fragments of 500 rows: ints, strings, a list, a struct and a vector column.
  std::string CreateBase(bool stable_row_ids = false) {
    const std::string arrow = dir_.Join("base.arrow"), ds = dir_.Join("t.lance");
    std::vector<std::string> gen = {"gen",     arrow,
                                    "--rows",  "1500",
                                    "--seed",  "31",
                                    "--types", "int64,int32,utf8,list<int32>,struct<a:int32,b:utf8>,fixed_size_list<float32,4>",
                                    "--no-nan-vectors"};
    if (version() == "2.0") gen.push_back("--no-null-structs");
    Oracle(gen);
    std::vector<std::string> create = {"create", ds, "--data", arrow, "--file-version", version(),
                                       "--max-rows-per-file", "500"};
    if (stable_row_ids) create.push_back("--stable-row-ids");
    Oracle(create);
    return ds;
  }

  // lancelet's scan (with row ids and addresses), count and take equal the reference's.
  void ExpectReadsIdentically(const std::string& ds, const std::string& context) {
    SCOPED_TRACE(context);
    const std::string expected = Oracle({"dump", ds, "--with-rowid", "--with-rowaddr"});
    const auto rows = SplitLines(expected);
    ASSERT_GT(rows.size(), 10u);
    EXPECT_EQ(DiffJsonLines(expected, Lancelet({"scan", ds, "--with-rowid", "--with-rowaddr", "--format", "jsonl"})),
              "");
    EXPECT_EQ(Lancelet({"count", ds}), std::to_string(rows.size()) + "\n");
    // Take prints no row ids: compare with the dump's rows without their last two keys.
    std::string want, list;
    for (size_t p : {rows.size() - 1, size_t(0), rows.size() / 2, size_t(7), rows.size() / 3 + 1, rows.size() - 2}) {
      const size_t cut = rows[p].rfind(",\"_rowid\":");
      ASSERT_NE(cut, std::string::npos) << rows[p];
      want += rows[p].substr(0, cut) + "}\n";
      list += (list.empty() ? "" : ",") + std::to_string(p);
    }
    EXPECT_EQ(DiffJsonLines(want, Lancelet({"take", ds, "--rows", list, "--format", "jsonl"})), "") << list;
  }

  TempDir dir_;
};

// add_columns writes a second data file into every fragment (multi-file fragments).
TEST_P(OperationsTest, AddColumns) {
  REQUIRE_ORACLE();
  const std::string ds = CreateBase();
  Oracle({"add-columns", ds, "--expr", "doubled=c_int64 * 2", "--expr", "label=concat(c_utf8, '!')"});
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(ds + "/data")) files += e.path().extension() == ".lance";
  EXPECT_EQ(files, 6u) << "expected one new data file per fragment";
  ExpectReadsIdentically(ds, "after add-columns");
}

// drop_columns leaves the data files alone; the manifest tombstones the field ids (-2).
TEST_P(OperationsTest, DropColumns) {
  REQUIRE_ORACLE();
  const std::string ds = CreateBase();
  Oracle({"add-columns", ds, "--expr", "extra=c_int32 + 1"});
  Oracle({"drop-columns", ds, "--columns", "c_utf8,c_struct_a_int32_b_utf8.b,c_list_int32,extra"});
  ExpectReadsIdentically(ds, "after drop-columns");
}

// alter_columns: renames (also of a struct child) and a nullability change touch only
// the schema; a cast rewrites the column into new data files under a new field id.
TEST_P(OperationsTest, AlterColumns) {
  REQUIRE_ORACLE();
  const std::string ds = CreateBase();
  Oracle({"alter-columns", ds, "--rename", "c_utf8=text", "--rename", "c_struct_a_int32_b_utf8.a=z", "--cast",
          "c_int32=int64", "--nullable", "c_int64"});
  ExpectReadsIdentically(ds, "after alter-columns");
}

TEST_P(OperationsTest, Delete) {
  REQUIRE_ORACLE();
  const std::string ds = CreateBase();
  Oracle({"delete", ds, "--where", "c_int32 % 3 = 0"});  // many rows: bitmap deletion files
  Oracle({"delete", ds, "--where", "c_int64 < -9000000000000000000"});
  ExpectReadsIdentically(ds, "after delete");
}

// update rewrites the matching rows into a new fragment and deletes the old copies.
TEST_P(OperationsTest, Update) {
  REQUIRE_ORACLE();
  const std::string ds = CreateBase();
  Oracle({"update", ds, "--where", "c_int32 > 1000000000", "--set", "c_utf8='updated'", "--set", "c_int64=c_int64 / 2"});
  ExpectReadsIdentically(ds, "after update");
}

// optimize compacts the fragments (with their deletions) into one and cleans up.
TEST_P(OperationsTest, Optimize) {
  REQUIRE_ORACLE();
  const std::string ds = CreateBase();
  Oracle({"delete", ds, "--where", "c_int32 % 5 = 0"});
  Oracle({"add-columns", ds, "--expr", "extra=c_int32 * 3"});
  Oracle({"optimize", ds});
  ExpectReadsIdentically(ds, "after optimize");
}

// Stable row ids: ids survive update (rows move to a new fragment) and compaction.
TEST_P(OperationsTest, StableRowIds) {
  REQUIRE_ORACLE();
  const std::string ds = CreateBase(/*stable_row_ids=*/true);
  ExpectReadsIdentically(ds, "created with stable row ids");
  Oracle({"update", ds, "--where", "c_int32 < 0", "--set", "c_utf8='moved'"});
  Oracle({"delete", ds, "--where", "c_int32 % 7 = 0"});
  ExpectReadsIdentically(ds, "after update and delete");
  Oracle({"optimize", ds});
  ExpectReadsIdentically(ds, "after optimize");
}

// A shallow clone reads its source's data and deletion files through the manifest's base
// paths, while its own writes land in the clone. lancelet reads each state as the
// reference does, and the reference reads lancelet's delete and overlay update on it.
TEST_P(OperationsTest, ShallowClone) {
  REQUIRE_ORACLE();
  const std::string source = CreateBase();
  Oracle({"delete", source, "--where", "c_int32 % 5 = 0"});  // deletion files under the source
  const std::string before = Oracle({"dump", source});
  const std::string clone = dir_.Join("clone.lance");
  Oracle({"clone", source, clone});
  ASSERT_FALSE(fs::exists(clone + "/data")) << "a shallow clone should share the source's data files";
  ExpectReadsIdentically(clone, "a fresh shallow clone");
  Oracle({"delete", clone, "--where", "c_int32 % 7 = 0"});
  Oracle({"append", clone, "--data", dir_.Join("base.arrow")});
  ExpectReadsIdentically(clone, "after the reference's delete and append on the clone");

  Lancelet({"delete", clone, "--where", "c_int32 % 11 = 0"});
  Lancelet({"update", clone, "--set", "c_int64 = 7", "--where", "c_int32 % 13 = 0"});
  EXPECT_EQ(DiffJsonLines(Oracle({"dump", clone}, "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1"),
                          Lancelet({"scan", clone, "--format", "jsonl"})),
            "");
  EXPECT_EQ(Oracle({"dump", source}), before);  // nothing written through the clone touched the source
}

INSTANTIATE_TEST_SUITE_P(FileVersions, OperationsTest, ::testing::Values("2.0", "2.1", "2.2"),
                         [](const auto& info) { return "v" + std::string(1, info.param[0]) + "_" + info.param[2]; });

}  // namespace
}  // namespace lancelet::testing
