// Scalar indexes both ways (issue 11): lancelet answers filters through the reference's
// BTree and Bitmap indexes and the reference through lancelet's, with overlays newer
// than the index excluded and re-evaluated. Every indexed answer must equal the flat
// scan of the same version, on both sides.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "format/lance_file.h"
#include "io/object_store.h"
#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

const char* kOverlayEnv = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1";

// Predicates over val (BTree) and cat (Bitmap) covering every leaf kind and AND/OR/NOT.
const char* kPredicates[] = {
    "val = 370",
    "val = 5000",
    "val = 110",
    "val < 30",
    "val >= 9950",
    "val BETWEEN 4000 AND 4100",
    "val IN (10, 20, 5000, 7)",
    "val IS NULL",
    "val IS NOT NULL AND val < 100",
    "val <> 370 AND cat = 'c3'",
    "NOT (val >= 20)",
    "cat = 'zz'",
    "cat = 'c1' OR val = 5000",
    "cat IN ('c2', 'zz') AND id < 500",
    "cat = 'c4' AND val > 9000 OR val = 110",
};

// lancelet's indexed scan, lancelet's flat scan, lancelet's count and the reference all
// agree on the rows of `ds` where `where` holds (compared as sets of lines). Returns how
// many there are.
size_t ExpectAgreementOn(const std::string& ds, const std::string& where, const std::string& columns) {
  SCOPED_TRACE(where);
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  auto indexed = sorted(SplitLines(Lancelet({"scan", ds, "--where", where, "--columns", columns, "--format", "jsonl"})));
  auto flat = sorted(
      SplitLines(Lancelet({"scan", ds, "--where", where, "--columns", columns, "--format", "jsonl", "--no-index"})));
  auto theirs = sorted(SplitLines(Oracle({"dump", ds, "--where", where, "--columns", columns}, kOverlayEnv)));
  EXPECT_EQ(indexed, flat);
  EXPECT_EQ(theirs, flat);
  EXPECT_EQ(Lancelet({"count", ds, "--where", where}), std::to_string(flat.size()) + "\n");
  return flat.size();
}

class IndexQueryTest : public ::testing::TestWithParam<std::string> {
 protected:
  // 3000 rows in fragments of 1000: id, val = 10 * id (null for every 97th row),
  // cat = "c<id % 5>".
  void Create() {
    std::string csv = "id,val,cat\n";
    for (int i = 0; i < 3000; ++i)
      csv += std::to_string(i) + "," + (i % 97 == 0 ? "" : std::to_string(10 * i)) + ",c" + std::to_string(i % 5) + "\n";
    WriteStringToFile(dir_.Join("rows.csv"), csv);
    Lancelet({"create", ds_, "--from", dir_.Join("rows.csv"), "--schema", "id:int64,val:int64,cat:utf8",
              "--max-rows-per-file", "1000", "--file-version", GetParam()});
  }

  // Overlays on val and cat newer than the indexes, a deletion, and an appended fragment.
  void Change() {
    Lancelet({"update", ds_, "--set", "val = 5000", "--where", "id % 100 = 11"});  // val 110 (id 11) becomes 5000
    Lancelet({"update", ds_, "--set", "cat = 'zz'", "--where", "id = 7 OR id = 2500"});
    Lancelet({"update", ds_, "--set", "val = NULL", "--where", "id = 37"});
    Lancelet({"delete", ds_, "--where", "id = 1011"});
    WriteStringToFile(dir_.Join("more.csv"), "id,val,cat\n3000,370,zz\n3001,5000,c1\n");
    Lancelet({"append", ds_, "--from", dir_.Join("more.csv")});
  }

  void ExpectAgreement() {
    for (const char* where : kPredicates) ExpectAgreementOn(ds_, where, "id,val,cat");
  }

  TempDir dir_;
  std::string ds_ = dir_.Join("db") + "/t.lance";
};

TEST_P(IndexQueryTest, LanceletQueriesThroughTheReferencesIndexes) {
  REQUIRE_ORACLE();
  Create();
  Oracle({"create-index", ds_, "val"});
  Oracle({"create-index", ds_, "cat", "--type", "bitmap"});
  Change();
  const std::string explain = Lancelet({"explain", ds_, "--where", "val = 110"});
  // Ten rows had 111 in the index... no: only id 11 did; it and the other 29 overlaid
  // val cells (30 by id % 100 = 11, one set to NULL) are re-evaluated.
  EXPECT_NE(explain.find("index val_idx: val = 110: 1 hits in 3 fragments; 31 rows changed since it was built, 0 of them re-evaluated\n"),
            std::string::npos)
      << explain;
  EXPECT_NE(explain.find("read: 1 candidate rows in 3 fragments through indexes, 1 fragments scanned whole\n"),
            std::string::npos)
      << explain;
  ExpectAgreement();
}

TEST_P(IndexQueryTest, TheReferenceQueriesThroughLanceletsIndexes) {
  REQUIRE_ORACLE();
  Create();
  Lancelet({"index", "create", ds_, "val"});
  Lancelet({"index", "create", ds_, "cat", "--type", "bitmap"});
  const std::string listed = Oracle({"indices", ds_});
  EXPECT_NE(listed.find("{\"name\":\"val_idx\",\"type\":\"BTree\",\"columns\":[\"val\"],\"indexed\":3000,\"unindexed\":0}"),
            std::string::npos)
      << listed;
  EXPECT_NE(listed.find("{\"name\":\"cat_idx\",\"type\":\"Bitmap\",\"columns\":[\"cat\"],\"indexed\":3000,\"unindexed\":0}"),
            std::string::npos)
      << listed;
  Change();
  for (const char* where : {"val = 5000", "cat = 'zz'", "val < 30"})
    EXPECT_NE(Oracle({"explain", ds_, "--where", where}, kOverlayEnv).find("ScalarIndexQuery"), std::string::npos)
        << where;
  ExpectAgreement();
  const std::string list = Lancelet({"index", "list", ds_});
  EXPECT_EQ(list,
            "val_idx\tBTree\tval\tbuilt from version 1\t1 segments\t3 fragments indexed, 1 not\t31 stale rows\n"
            "cat_idx\tBitmap\tcat\tbuilt from version 2\t1 segments\t3 fragments indexed, 1 not\t2 stale rows\n");
}

TEST_P(IndexQueryTest, DropAndReplaceCommitNewVersions) {
  REQUIRE_ORACLE();
  Create();
  Lancelet({"index", "create", ds_, "val", "--name", "v"});
  auto again = RunLancelet({"index", "create", ds_, "val", "--name", "v"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("already has an index named 'v'"), std::string::npos) << again.err;
  Lancelet({"index", "create", ds_, "val", "--name", "v", "--type", "bitmap", "--replace"});
  EXPECT_NE(Oracle({"indices", ds_}).find("\"name\":\"v\",\"type\":\"Bitmap\""), std::string::npos);
  Lancelet({"index", "drop", ds_, "v"});
  EXPECT_EQ(Oracle({"indices", ds_}), "");
  EXPECT_EQ(Lancelet({"index", "list", ds_}), "");
  EXPECT_EQ(Lancelet({"count", ds_, "--where", "val = 370"}), "1\n");
}

TEST_P(IndexQueryTest, OptimizeIndexesTheAppendedFragmentsAsNewSegments) {
  REQUIRE_ORACLE();
  Create();
  Lancelet({"index", "create", ds_, "val"});
  Lancelet({"index", "create", ds_, "cat", "--type", "bitmap"});
  Change();  // appends fragment 3, which no segment covers
  const std::string before = Oracle({"indices", ds_}, kOverlayEnv);
  EXPECT_NE(before.find("\"name\":\"val_idx\",\"type\":\"BTree\",\"columns\":[\"val\"],\"indexed\":"), std::string::npos);
  EXPECT_NE(before.find(",\"unindexed\":2}"), std::string::npos) << before;
  EXPECT_EQ(Lancelet({"index", "optimize", ds_}), "indexed the new fragments of " + ds_ + "; now version 9\n");
  EXPECT_EQ(Lancelet({"index", "optimize", ds_}), "every index of " + ds_ + " covers every fragment; unchanged at version 9\n");
  const std::string listed = Oracle({"indices", ds_}, kOverlayEnv);
  EXPECT_EQ(listed.find(",\"unindexed\":2}"), std::string::npos) << listed;
  EXPECT_NE(listed.find(",\"unindexed\":0}"), std::string::npos) << listed;
  EXPECT_NE(Lancelet({"index", "list", ds_}).find("val_idx\tBTree\tval\tbuilt from version 1\t2 segments\t"
                                                  "4 fragments indexed, 0 not\t31 stale rows\n"),
            std::string::npos);
  const auto stats = SplitLines(Lancelet({"index", "stats", ds_, "val_idx"}));
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_NE(stats[0].find(": built from version 1, fragments [0,1,2], 3000 rows, "), std::string::npos) << stats[0];
  EXPECT_NE(stats[0].find(" bytes, 31 stale rows"), std::string::npos) << stats[0];
  EXPECT_NE(stats[1].find(": built from version 8, fragments [3], 2 rows, "), std::string::npos) << stats[1];
  const std::string explain = Lancelet({"explain", ds_, "--where", "val = 370"});
  EXPECT_NE(explain.find("read: 2 candidate rows in 4 fragments through indexes, 0 fragments scanned whole\n"),
            std::string::npos)
      << explain;
  ExpectAgreement();
}

// The reference's optimize (compaction, index remap, new segments) writes Bitmap files
// whose keys are in hash order with the null key among them: lancelet's checks of index
// files (index/scalar_index.h) accept every file the reference wrote, in every version.
TEST(ReferenceIndexFilesTest, EveryIndexFileTheReferencesOptimizeWroteIsAccepted) {
  REQUIRE_ORACLE();
  TempDir dir;
  const std::string ds = dir.Join("t.lance");
  // 3000 rows in fragments of 1000: val = id * 37 % 1001 (null for every 7th), cat the same.
  std::string csv = "id,val,cat\n";
  for (int i = 0; i < 3000; ++i) {
    const std::string v = i % 7 == 0 ? "" : std::to_string(i * 37 % 1001);
    csv += std::to_string(i) + "," + v + "," + v + "\n";
  }
  WriteStringToFile(dir.Join("rows.csv"), csv);
  Lancelet({"create", ds, "--from", dir.Join("rows.csv"), "--schema", "id:int64,val:int64,cat:int64",
            "--max-rows-per-file", "1000"});
  Lancelet({"delete", ds, "--where", "id % 3 = 0"});
  Oracle({"create-index", ds, "val"});
  Oracle({"create-index", ds, "cat", "--type", "bitmap"});
  WriteStringToFile(dir.Join("more.csv"), "id,val,cat\n3000,37,37\n3001,,\n3002,5000,5000\n");
  Lancelet({"append", ds, "--from", dir.Join("more.csv")});
  Oracle({"optimize", ds});
  const int latest = std::stoi(SplitLines(Lancelet({"versions", ds})).back());
  int unsorted = 0;  // Bitmap files with keys out of order, or the null key after the first row
  auto store = io::MakeLocalStore();
  for (const auto& e : std::filesystem::recursive_directory_iterator(ds + "/_indices")) {
    if (e.path().filename() != "bitmap_page_lookup.lance") continue;
    auto file = format::LanceFileReader::Open(*store, e.path().string());
    auto keys = file->ReadField(0, 0, file->num_rows(0));
    for (int64_t i = 1; i < keys->length; ++i)
      if (keys->IsNull(i) || (!keys->IsNull(i - 1) && keys->values<int64_t>()[i] < keys->values<int64_t>()[i - 1])) {
        ++unsorted;
        break;
      }
  }
  EXPECT_GE(unsorted, 1);  // the remapped file (the reference's first build sorts them)
  for (int v = 3; v <= latest; ++v)
    for (const char* where : {"val = 37", "val IS NULL", "val IN (1, 74, 5000)", "val < 100", "val > 990",
                              "cat = 37", "cat IS NULL", "cat IN (1, 74, 5000)", "cat < 100", "NOT (cat >= 20)"}) {
      SCOPED_TRACE(std::string(where) + " at version " + std::to_string(v));
      const std::string at = std::to_string(v);
      auto indexed = RunLancelet({"count", ds, "--version", at, "--where", where});
      EXPECT_EQ(indexed.exit_code, 0) << indexed.err;
      const auto flat = SplitLines(Lancelet({"scan", ds, "--version", at, "--where", where, "--no-index", "--format", "jsonl"}));
      EXPECT_EQ(indexed.out, std::to_string(flat.size()) + "\n");
    }
}

// Indexes on struct fields ("s.a"): the reference's BTree and lancelet's Bitmap, an
// overlay on the struct itself (an ancestor of both) excluded and re-evaluated by both.
TEST(NestedIndexTest, StructFieldsAreIndexedAndOverlaysOnTheStructExcludedOnBothSides) {
  REQUIRE_ORACLE();
  TempDir dir;
  const std::string ds = dir.Join("db") + "/t.lance";
  // 3000 rows in fragments of 1000: id, s = {a: id % 50, b: "r<id % 40>"}.
  std::string rows;
  for (int i = 0; i < 3000; ++i)
    rows += "{\"id\": " + std::to_string(i) + ", \"s\": {\"a\": " + std::to_string(i % 50) + ", \"b\": \"r" +
            std::to_string(i % 40) + "\"}}\n";
  WriteStringToFile(dir.Join("rows.jsonl"), rows);
  Lancelet({"create", ds, "--from", dir.Join("rows.jsonl"), "--max-rows-per-file", "1000", "--file-version", "2.2"});
  Oracle({"create-index", ds, "s.a"});
  Lancelet({"index", "create", ds, "s.b", "--type", "bitmap"});
  const std::string listed = Oracle({"indices", ds});
  EXPECT_NE(listed.find("{\"name\":\"s.a_idx\",\"type\":\"BTree\",\"columns\":[\"s.a\"],\"indexed\":3000,\"unindexed\":0}"),
            std::string::npos)
      << listed;
  EXPECT_NE(listed.find("{\"name\":\"s.b_idx\",\"type\":\"Bitmap\",\"columns\":[\"s.b\"],\"indexed\":3000,\"unindexed\":0}"),
            std::string::npos)
      << listed;
  EXPECT_EQ(Lancelet({"index", "list", ds}),
            "s.a_idx\tBTree\ts.a\tbuilt from version 1\t1 segments\t3 fragments indexed, 0 not\t0 stale rows\n"
            "s.b_idx\tBitmap\ts.b\tbuilt from version 2\t1 segments\t3 fragments indexed, 0 not\t0 stale rows\n");

  Lancelet({"update", ds, "--set", "s = NULL", "--where", "id % 100 = 7"});  // 30 rows: the ancestor of s.a and s.b
  Lancelet({"update", ds, "--set", "id = id + 10000", "--where", "id % 10 = 1"});  // an unrelated field
  const std::string explain = Lancelet({"explain", ds, "--where", "s.a = 7"});
  EXPECT_NE(explain.find("index s.a_idx: s.a = 7: 60 hits in 3 fragments; 30 rows changed since it was built, 0 of "
                         "them re-evaluated\n"),
            std::string::npos)
      << explain;
  EXPECT_NE(Lancelet({"explain", ds, "--where", "s.b IS NULL"})
                .find("index s.b_idx: s.b IS NULL: 0 hits in 3 fragments; 30 rows changed since it was built, 30 of "
                      "them re-evaluated\n"),
            std::string::npos);
  for (const char* where : {"s.a = 7", "s.b = 'r7'"})
    EXPECT_NE(Oracle({"explain", ds, "--where", where}, kOverlayEnv).find("ScalarIndexQuery"), std::string::npos)
        << where;
  for (const char* where : {"s.a = 7", "s.a IS NULL", "s.a < 3", "s.b = 'r7'", "s.b = 'r8' OR s.a = 9", "s.b IS NULL",
                            "s.a IN (1, 7) AND id > 1500", "NOT (s.a >= 2)"})
    EXPECT_GT(ExpectAgreementOn(ds, where, "id"), 0u) << where;
}

INSTANTIATE_TEST_SUITE_P(FileVersions, IndexQueryTest, ::testing::Values("2.0", "2.1", "2.2"),
                         [](const auto& info) { std::string s = info.param; s.erase(s.find('.'), 1); return "v" + s; });

}  // namespace
}  // namespace lancelet::testing
