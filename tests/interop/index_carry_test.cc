// Every lancelet commit keeps the reference's indexes (issue 11, "fix first"): on a
// dataset the reference indexed (a BTree on val, a Bitmap on cat), each lancelet
// operation leaves both listed, the reference's plan still answers from them, and its
// indexed answers equal lancelet's scans of the same version. An overwrite starts
// without indexes, as the reference's does.
#include <algorithm>

#include <gtest/gtest.h>

#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

// The reference reads overlays only with this set.
const char* kOverlayEnv = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1";

class IndexCarryTest : public ::testing::TestWithParam<std::string> {
 protected:
  // 3000 rows in fragments of 1000: id, val = 10 * id, cat = "c<id % 5>".
  std::string Create() {
    std::string csv = "id,val,cat\n";
    for (int i = 0; i < 3000; ++i) csv += std::to_string(i) + "," + std::to_string(10 * i) + ",c" + std::to_string(i % 5) + "\n";
    WriteStringToFile(dir_.Join("rows.csv"), csv);
    Lancelet({"create", ds_, "--from", dir_.Join("rows.csv"), "--schema", "id:int64,val:int64,cat:utf8",
              "--max-rows-per-file", "1000", "--file-version", GetParam()});
    Oracle({"create-index", ds_, "val"});
    Oracle({"create-index", ds_, "cat", "--type", "bitmap"});
    return ds_;
  }

  // Both indexes listed; `where` answered through the index by the reference, with the
  // `rows` rows lancelet's scan returns (in any order: an indexed plan returns the
  // index's rows first).
  void ExpectIndexesKept(const std::string& where, size_t rows, const std::string& context) {
    SCOPED_TRACE(context);
    const std::string listed = Oracle({"indices", ds_}, kOverlayEnv);
    EXPECT_NE(listed.find("\"name\":\"val_idx\",\"type\":\"BTree\""), std::string::npos) << listed;
    EXPECT_NE(listed.find("\"name\":\"cat_idx\",\"type\":\"Bitmap\""), std::string::npos) << listed;
    EXPECT_NE(Oracle({"explain", ds_, "--where", where}, kOverlayEnv).find("ScalarIndexQuery"), std::string::npos);
    auto theirs = SplitLines(Oracle({"dump", ds_, "--where", where, "--columns", "id,val,cat"}, kOverlayEnv));
    auto ours = SplitLines(Lancelet({"scan", ds_, "--where", where, "--columns", "id,val,cat", "--format", "jsonl"}));
    std::sort(theirs.begin(), theirs.end());
    std::sort(ours.begin(), ours.end());
    EXPECT_EQ(theirs.size(), rows);
    EXPECT_EQ(theirs, ours);
  }

  TempDir dir_;
  std::string db_ = dir_.Join("db");
  std::string ds_ = db_ + "/t.lance";
};

TEST_P(IndexCarryTest, AppendKeepsTheIndexes) {
  REQUIRE_ORACLE();
  Create();
  WriteStringToFile(dir_.Join("more.csv"), "id,val,cat\n3000,30000,c0\n3001,40,c9\n");
  Lancelet({"append", ds_, "--from", dir_.Join("more.csv")});
  ExpectIndexesKept("val = 40", 2, "append");  // row 4 (indexed) and row 3001 (a new fragment)
  ExpectIndexesKept("cat = 'c9'", 1, "append");
  const std::string inspect = Lancelet({"inspect", ds_});
  EXPECT_NE(inspect.find("indexes: 2\n"), std::string::npos) << inspect;
  EXPECT_NE(inspect.find("index val_idx: /lance.table.BTreeIndexDetails, fields [1], built from version 1, "
                         "fragments [0,1,2]\n"),
            std::string::npos)
      << inspect;
}

TEST_P(IndexCarryTest, DeleteKeepsTheIndexes) {
  REQUIRE_ORACLE();
  Create();
  Lancelet({"delete", ds_, "--where", "id < 1000 OR id % 3 = 0"});  // fragment 0 goes whole
  ExpectIndexesKept("val >= 14000 AND val < 14100", 7, "delete");
  ExpectIndexesKept("cat = 'c2'", 266, "delete");
}

TEST_P(IndexCarryTest, UpdateKeepsTheIndexesAndTheirAnswersFollowTheOverlays) {
  REQUIRE_ORACLE();
  Create();
  Lancelet({"update", ds_, "--set", "val = 5", "--set", "cat = 'new'", "--where", "id % 700 = 0"});
  ExpectIndexesKept("val = 5", 5, "update: the overlaid rows");
  ExpectIndexesKept("val = 7000", 0, "update: id 700's old value is stale");
  ExpectIndexesKept("cat = 'new'", 5, "update: the overlaid rows");
}

TEST_P(IndexCarryTest, SqlUpdateAndMergeKeepTheIndexes) {
  REQUIRE_ORACLE();
  Create();
  WriteStringToFile(dir_.Join("staged.csv"), "id,val,cat\n5,-5,m\n2500,-2500,m\n9000,-9000,m\n");
  Lancelet({"sql", "--db", db_,
            "UPDATE t SET val = val + 1 WHERE id = 10; MERGE INTO t USING read_csv('" + dir_.Join("staged.csv") +
                "') AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET val = s.val, cat = s.cat "
                "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.val, s.cat)"});
  ExpectIndexesKept("val < 0", 3, "merge");
  ExpectIndexesKept("val = 101", 1, "sql update");
  ExpectIndexesKept("cat = 'm'", 3, "merge");
}

// WHEN NOT MATCHED BY SOURCE deletes in the MERGE's own commit: the reference reads the
// deletions beside the overlays and the inserted fragment, through its indexes.
TEST_P(IndexCarryTest, MergeWithABySourceDeleteKeepsTheIndexes) {
  REQUIRE_ORACLE();
  Create();
  WriteStringToFile(dir_.Join("staged.csv"), "id,val,cat\n5,-5,m\n9000,-9000,m\n");
  const std::string out = Lancelet({"sql", "--db", db_,
            "MERGE INTO t USING read_csv('" + dir_.Join("staged.csv") +
                "') AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET val = s.val, cat = s.cat "
                "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.val, s.cat) "
                "WHEN NOT MATCHED BY SOURCE AND t.id >= 2000 THEN DELETE"});
  EXPECT_NE(out.find("MERGE 1 row updated, 1000 deleted, 1 inserted; t is now at version 4"), std::string::npos) << out;
  ExpectIndexesKept("val < 0", 2, "merge: the updated and the inserted row");
  ExpectIndexesKept("val >= 19000", 100, "merge: ids 1900 to 1999 left");
  ExpectIndexesKept("val >= 0", 1999, "merge: ids 0 to 1999 but 5");
  ExpectIndexesKept("cat = 'c2'", 400, "merge");
}

// Compactions narrow the reference's indexes where they must (a fold of an indexed
// column, rows moved to new fragments) and optimize indexes those fragments again, in
// segments of the same names the reference queries; cleanup keeps every segment in use.
TEST_P(IndexCarryTest, CompactionsAndCleanupKeepTheIndexes) {
  REQUIRE_ORACLE();
  Create();
  Lancelet({"update", ds_, "--set", "val = -val", "--where", "id % 100 = 7"});
  Lancelet({"update", ds_, "--set", "cat = 'z'", "--where", "id % 100 = 8"});
  Lancelet({"optimize", ds_, "--merge-overlays", "--no-rewrite"});
  ExpectIndexesKept("val = -70", 1, "merge");
  ExpectIndexesKept("cat = 'z'", 30, "merge");
  Lancelet({"optimize", ds_, "--no-rewrite"});
  ExpectIndexesKept("val = -70", 1, "fold");
  ExpectIndexesKept("cat = 'z'", 30, "fold");
  Lancelet({"delete", ds_, "--where", "id % 3 = 0"});
  Lancelet({"optimize", ds_});  // the three fragments become one
  ExpectIndexesKept("val = -70", 1, "rewrite");
  ExpectIndexesKept("cat = 'c2'", 400, "rewrite");
  Lancelet({"cleanup", ds_, "--keep", "1", "--force"});
  ExpectIndexesKept("cat = 'c2'", 400, "cleanup");
  ExpectIndexesKept("val >= 14000 AND val < 14100", 7, "cleanup");
}

TEST_P(IndexCarryTest, OverwriteStartsWithoutIndexes) {
  REQUIRE_ORACLE();
  Create();
  Lancelet({"create", ds_, "--overwrite", "--from", dir_.Join("rows.csv"), "--schema", "id:int64,val:int64,cat:utf8",
            "--file-version", GetParam()});
  EXPECT_EQ(Oracle({"indices", ds_}, kOverlayEnv), "");
  EXPECT_EQ(Lancelet({"count", ds_, "--where", "val = 40"}), "1\n");
}

INSTANTIATE_TEST_SUITE_P(FileVersions, IndexCarryTest, ::testing::Values("2.0", "2.2"),
                         [](const auto& info) { return "v" + std::string(1, info.param[0]) + "_" + info.param[2]; });

}  // namespace
}  // namespace lancelet::testing
