// The combined MERGE commit (table/merge_commit.h): conflict rules of its Update
// transaction, and a failed MERGE leaving neither a version nor files behind.
#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "lancelet/scalar.h"
#include "lancelet/sql.h"
#include "support/test_env.h"
#include "table/commit.h"
#include "table/merge_commit.h"

namespace lancelet::testing {
namespace {

using lance::table::Transaction;
using table::ConflictResult;

Transaction MergeTouching(uint64_t fragment) {
  Transaction t;
  t.mutable_update()->add_updated_fragments()->set_id(fragment);
  return t;
}

TEST(MergeCommitTest, ConcurrentChangesToTouchedFragmentsForceARetry) {
  Transaction ours = MergeTouching(1);

  Transaction overlay_same, overlay_other;
  overlay_same.mutable_data_overlay()->add_groups()->set_fragment_id(1);
  overlay_other.mutable_data_overlay()->add_groups()->set_fragment_id(2);
  EXPECT_EQ(table::CheckConflict(ours, overlay_same), ConflictResult::kRetry);
  EXPECT_EQ(table::CheckConflict(ours, overlay_other), ConflictResult::kCompatible);

  Transaction delete_same;
  delete_same.mutable_delete_()->add_updated_fragments()->set_id(1);
  EXPECT_EQ(table::CheckConflict(ours, delete_same), ConflictResult::kRetry);
  EXPECT_EQ(table::CheckConflict(ours, MergeTouching(1)), ConflictResult::kRetry);
  EXPECT_EQ(table::CheckConflict(ours, MergeTouching(3)), ConflictResult::kCompatible);

  Transaction append, overwrite;
  append.mutable_append();
  overwrite.mutable_overwrite();
  EXPECT_EQ(table::CheckConflict(ours, append), ConflictResult::kCompatible);
  EXPECT_EQ(table::CheckConflict(ours, overwrite), ConflictResult::kIncompatible);
  // And the other way round: an overlay commit that raced a MERGE on its fragment retries.
  EXPECT_EQ(table::CheckConflict(overlay_same, ours), ConflictResult::kRetry);
}

size_t CountFiles(const std::string& dir) { return ObjectsUnder(dir).size(); }

TEST(MergeCommitTest, AFailedMergeChangesNothing) {
  TempDir dir;
  SqlSession db(dir.RootUri());
  db.Execute("CREATE TABLE t (id int32, qty int64) AS VALUES (1, 10), (2, 20)");
  db.Execute("CREATE TABLE s (id int32, qty float64) AS VALUES (1, 11.0), (2, 2.5), (3, 30.0)");
  std::string ds = dir.Uri("t.lance");
  size_t files = CountFiles(ds);
  try {
    db.Execute("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET qty = s.qty "
               "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.qty)");
    FAIL() << "expected the assignment of 2.5 to an int64 column to fail";
  } catch (const SqlError& e) {
    EXPECT_NE(std::string(e.what()).find("column 'qty': cannot assign 2.5 to int64 (not an integer)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(Dataset::Open(ds)->version(), 1u);
  EXPECT_EQ(CountFiles(ds), files);
  auto r = db.Execute("SELECT id, qty FROM t ORDER BY id");
  ASSERT_TRUE(r.rows);
  EXPECT_EQ(r.rows->num_rows(), 2);

  // The same MERGE with valid values commits once: version 2.
  db.Execute("UPDATE s SET qty = 21 WHERE id = 2");
  EXPECT_EQ(db.Execute("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET qty = s.qty "
                       "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.qty)")
                .message,
            "MERGE 2 rows updated, 0 deleted, 1 inserted; t is now at version 2\nnote: t now has data overlay files (reader feature flag 64); LanceDB and lance read it only with LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1 until `lancelet optimize` (SQL: OPTIMIZE) folds them into base columns");
  auto after = db.Execute("SELECT sum(qty) AS total FROM t").rows;
  EXPECT_EQ(GetScalar(*after->column(0), 0).as_int(), 11 + 21 + 30);
}

// A MERGE planned on version 1 whose commit finds a concurrent change: a deletion of a
// row it does not change rebases and both changes survive; new rows (which its ON
// clause might match) or a changed cell anywhere in the target make it plan again.
TEST(MergeCommitTest, StaleMergeRebasesOrAsksForARetry) {
  TempDir dir;
  SqlSession db(dir.RootUri());
  db.Execute("CREATE TABLE t (id int32, v utf8) WITH (max_rows_per_file = 2) AS VALUES (1, 'a'), (2, 'b'), (3, 'c'), "
             "(6, 'f')");
  auto stale = Dataset::Open(dir.Uri("t.lance"));
  table::MergeChanges changes;
  changes.updates[0].push_back({"v", {1}, MakeArray(DataType::Utf8(), {Scalar{DataType::Utf8(), std::string("B")}})});
  changes.deletes[0] = {0};
  changes.inserts.push_back(RecordBatch::Make(stale->schema(), {MakeArray(DataType::Int32(), {Scalar{DataType::Int32(), int64_t(4)}}),
                                                                 MakeArray(DataType::Utf8(), {Scalar::Null(DataType::Utf8())})}));

  db.Execute("DELETE FROM t WHERE id = 3");  // version 2: a row of fragment 1 the MERGE does not change
  auto next = table::CommitMerge(stale, changes);
  EXPECT_EQ(next->version(), 3u);
  auto rows = db.Execute("SELECT id, v FROM t ORDER BY id").rows;
  ASSERT_EQ(rows->num_rows(), 3);
  EXPECT_EQ(GetScalar(*rows->column(1), 0).as_string(), "B");
  EXPECT_TRUE(rows->column(1)->IsNull(1));
  EXPECT_EQ(GetScalar(*rows->column(1), 2).as_string(), "f");

  // New rows: the MERGE might match them (and would insert a key twice if it did not look).
  db.Execute("INSERT INTO t VALUES (5, 'e')");  // version 4
  table::MergeChanges again;
  again.deletes[0] = {1};
  EXPECT_THROW(table::CommitMerge(next, again), table::RetryableConflict);
  EXPECT_EQ(Dataset::Open(dir.Uri("t.lance"))->version(), 4u);

  // A MERGE reads every target cell, so a change to any of them, even in a fragment it
  // does not touch, makes it plan again.
  auto stale2 = Dataset::Open(dir.Uri("t.lance"));
  db.Execute("UPDATE t SET v = 'x' WHERE id = 5");  // version 5
  EXPECT_THROW(table::CommitMerge(stale2, again), table::RetryableConflict);
  EXPECT_EQ(Dataset::Open(dir.Uri("t.lance"))->version(), 5u);
}

}  // namespace
}  // namespace lancelet::testing
