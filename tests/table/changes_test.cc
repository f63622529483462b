// Dataset::Changes: the change feed of each kind of commit, its range and options, and
// its errors.

#include <gtest/gtest.h>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/merge_insert.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/manifest_store.h"

namespace lancelet {
namespace {

using testing::IdABBatch;
using testing::TempDir;

std::string Cell(const ArrayData& column, int64_t i) {
  if (column.IsNull(i)) return "NULL";
  if (column.type->id() == TypeId::kInt64) return std::to_string(column.values<int64_t>()[i]);
  if (column.type->id() == TypeId::kUInt64) return std::to_string(column.values<uint64_t>()[i]);
  if (column.type->id() == TypeId::kUtf8) return std::string(column.GetView(i));
  if (column.type->is_list()) {
    std::string out = "[";
    for (int64_t j = column.offset(i); j < column.offset(i + 1); ++j)
      out += (j > column.offset(i) ? "," : "") + std::string(column.child(0)->GetView(j));
    return out + "]";
  }
  return "?";
}

// The feed as lines: kind, version, _rowid, _changed_columns, then the data columns (the
// timestamp checked apart).
std::vector<std::string> Feed(const DatasetPtr& ds, uint64_t from, const ChangesOptions& options = {}) {
  auto reader = ds->Changes(from, options);
  std::vector<std::string> out;
  while (auto batch = reader->Next()) {
    for (int64_t i = 0; i < batch->num_rows(); ++i) {
      std::string line;
      for (size_t c = 0; c < batch->num_columns(); ++c) {
        if (c == 2) continue;  // _commit_timestamp
        line += (line.empty() ? "" : " ") + Cell(*batch->column(c), i);
      }
      out.push_back(line);
    }
  }
  return out;
}

// A MERGE on id: row `matched` takes a = -matched (b kept), id 9 is inserted (a -9, b 90)
// and id 0 deleted.
DatasetPtr UpsertDeletingZero(const DatasetPtr& ds, int64_t matched) {
  MergeInsertOptions m;
  m.on = {"id"};
  m.when_matched_update_all = true;
  m.when_not_matched_insert_all = true;
  m.when_not_matched_by_source_delete = true;
  m.by_source_condition = "id = 0";
  auto source = RecordBatch::Make(IdABBatch(1)->schema(), {testing::Int64s({matched, 9}),
                                                           testing::Int64s({-matched, -9}),
                                                           testing::Int64s({matched, 90})});
  return MergeInsert(ds, {source}, m).dataset;
}

class ChangesTest : public ::testing::Test {
 protected:
  DatasetPtr Create(int64_t rows, int64_t per_file, bool stable_row_ids = false) {
    WriteOptions o;
    o.max_rows_per_file = per_file;
    o.enable_stable_row_ids = stable_row_ids;
    return Dataset::Write(uri_, {IdABBatch(rows)}, o);
  }

  TempDir dir_;
  std::string uri_ = dir_.Uri("ds.lance");
};

constexpr uint64_t kFragment1 = uint64_t(1) << 32;

// Each kind of commit gives the rows it changed: an overlay UPDATE update pairs naming
// the columns it wrote, a DELETE deletes read at the version before, an append inserts, an
// UPDATE that moved rows or rewrote a column update pairs, and compaction or an index
// build nothing.
TEST_F(ChangesTest, EachCommitGivesTheRowsItChangedAndNothingElse) {
  auto ds = Create(10, 5);  // ids 0..9 in fragments 0 and 1; a = id % 10, b = id
  ds = ds->Update({{"a", "a + 100"}, {"b", "b"}}, "id IN (1, 7)", nullptr, UpdateMode::kOverlay);  // v2
  ds = ds->Delete("id = 3");                                                                        // v3
  auto more = IdABBatch(12)->Slice(10, 2);
  ds = ds->Append({more});                                                                          // v4
  ds = ds->Update({{"b", "-1"}}, "id = 0", nullptr, UpdateMode::kRows);                             // v5
  ds = ds->Update({{"a", "7"}}, "id = 9", nullptr, UpdateMode::kColumns);                           // v6
  OptimizeOptions compact;
  compact.target_rows_per_fragment = 100;
  ds = ds->Optimize(compact);                                                                       // v7
  ds = ds->CreateIndex("id", IndexType::kBTree);                                                   // v8
  ASSERT_EQ(ds->version(), 8u);
  const std::string f1 = std::to_string(kFragment1 + 2), f2 = std::to_string(2 * kFragment1);
  const std::string f3 = std::to_string(3 * kFragment1), f1_4 = std::to_string(kFragment1 + 4);
  EXPECT_EQ(Feed(ds, 1), (std::vector<std::string>{
                             "update_preimage 2 1 [a,b] 1 1 1",
                             "update_postimage 2 1 [a,b] 1 101 1",
                             "update_preimage 2 " + f1 + " [a,b] 7 7 7",
                             "update_postimage 2 " + f1 + " [a,b] 7 107 7",
                             "delete 3 3 NULL 3 3 3",
                             "insert 4 " + f2 + " NULL 10 0 10",
                             "insert 4 " + std::to_string(2 * kFragment1 + 1) + " NULL 11 1 11",
                             "update_preimage 5 0 [b] 0 0 0",
                             "update_postimage 5 " + f3 + " [b] 0 0 -1",
                             "update_preimage 6 " + f1_4 + " [a] 9 9 9",
                             "update_postimage 6 " + f1_4 + " [a] 9 7 9",
                         }));
  // The whole history, from before the first version: the creation's rows are inserts.
  auto all = Feed(ds, 0);
  ASSERT_EQ(all.size(), 21u);
  EXPECT_EQ(all[0], "insert 1 0 NULL 0 0 0");
  EXPECT_EQ(all[9], "insert 1 " + f1_4 + " NULL 9 9 9");
  EXPECT_EQ(Feed(ds, 6), std::vector<std::string>{});  // compaction and the index: no value changed
  ChangesOptions ids;  // the columns shown do not change what _changed_columns says
  ids.columns = std::vector<std::string>{"id"};
  ids.to_version = 6;
  EXPECT_EQ(Feed(ds, 4, ids), (std::vector<std::string>{"update_preimage 5 0 [b] 0", "update_postimage 5 " + f3 + " [b] 0",
                                                        "update_preimage 6 " + f1_4 + " [a] 9",
                                                        "update_postimage 6 " + f1_4 + " [a] 9"}));

  // The commit's version and time lead each row.
  auto batch = ds->Changes(4, {})->Next();  // version 5's pair
  ASSERT_EQ(batch->num_rows(), 2);
  EXPECT_EQ(batch->schema()->ToString(),
            "_change_type:utf8 not null, _commit_version:uint64 not null, _commit_timestamp:timestamp<us,UTC> not "
            "null, _rowid:uint64 not null, _changed_columns:list<utf8>, id:int64, a:int64, b:int64");
  const VersionInfo v5 = ds->ListVersions()[4];
  EXPECT_EQ(batch->column(2)->values<int64_t>()[0], v5.timestamp_nanos / 1000);
}

TEST_F(ChangesTest, ARangeColumnsAndChangeTypesNarrowTheFeed) {
  auto ds = Create(10, 5);
  ds = ds->Update({{"a", "a + 100"}}, "id = 1", nullptr, UpdateMode::kOverlay);  // v2
  ds = ds->Delete("id = 3");                                                     // v3
  ds = ds->Update({{"b", "0"}}, "id = 8", nullptr, UpdateMode::kOverlay);        // v4
  ChangesOptions o;
  o.to_version = 3;
  EXPECT_EQ(Feed(ds, 1, o), (std::vector<std::string>{"update_preimage 2 1 [a] 1 1 1",
                                                      "update_postimage 2 1 [a] 1 101 1", "delete 3 3 NULL 3 3 3"}));
  o.columns = std::vector<std::string>{"b"};
  o.change_types = {"update_postimage", "delete"};
  o.to_version = std::nullopt;
  const std::string f8 = std::to_string(kFragment1 + 3);
  EXPECT_EQ(Feed(ds, 1, o), (std::vector<std::string>{"update_postimage 2 1 [a] 1", "delete 3 3 NULL 3",
                                                      "update_postimage 4 " + f8 + " [b] 0"}));
  o.change_types = {"update"};
  EXPECT_EQ(Feed(ds, 3, o), (std::vector<std::string>{"update_preimage 4 " + f8 + " [b] 8",
                                                      "update_postimage 4 " + f8 + " [b] 0"}));
  EXPECT_EQ(Feed(ds, 4), std::vector<std::string>{});  // nothing after the latest

  auto error = [&](uint64_t from, const ChangesOptions& options) -> std::string {
    try {
      ds->Changes(from, options);
    } catch (const Error& e) {
      return e.what();
    }
    return "<no error>";
  };
  ChangesOptions to9;
  to9.to_version = 9;
  EXPECT_EQ(error(1, to9), "changes of '" + uri_ + "': version 9 does not exist (versions 1 to 4)");
  ChangesOptions to2;
  to2.to_version = 2;
  EXPECT_EQ(error(3, to2), "changes of '" + uri_ + "': from version 3 is after to version 2");
  ChangesOptions bad;
  bad.columns = std::vector<std::string>{"nope"};
  EXPECT_EQ(error(1, bad), "changes of '" + uri_ + "': no column 'nope' at version 4 (columns: id:int64, a:int64, b:int64)");
  bad = {};
  bad.change_types = {"upsert"};
  EXPECT_EQ(error(1, bad),
            "changes: change type 'upsert': expected insert, delete, update, update_preimage or update_postimage");

  CleanupOptions cleanup;
  cleanup.keep_versions = 1;
  cleanup.force = true;
  ds->Cleanup(cleanup);  // versions 1 to 3 go
  EXPECT_EQ(error(1, {}), "changes of '" + uri_ + "': version 1 was removed by cleanup; the oldest readable version is 4");
  EXPECT_EQ(Feed(ds, 4), std::vector<std::string>{});
}

// An update of a narrow column reads the wide column of its rows once: the post-image
// takes the cells the commit did not write from the pre-image, not from a second read.
TEST_F(ChangesTest, ANarrowUpdateReadsTheWideColumnOfItsRowsOnce) {
  constexpr int64_t kRows = 256, kWide = 4096, kUpdated = 4;
  BinaryBuilder blobs(DataType::Binary());
  uint64_t x = 88172645463325252ull;
  for (int64_t i = 0; i < kRows; ++i) {
    std::string blob(kWide, ' ');
    for (auto& byte : blob) x ^= x << 13, x ^= x >> 7, x ^= x << 17, byte = char(x);  // incompressible
    blobs.Append(blob);
  }
  auto batch = RecordBatch::Make(
      std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("id", DataType::Int64()),
                                                     Field::Make("a", DataType::Int64()),
                                                     Field::Make("blob", DataType::Binary())}),
      {IdABBatch(kRows)->column(0), IdABBatch(kRows)->column(1), blobs.Finish()});
  auto ds = Dataset::Write(uri_, {batch}, WriteOptions{});
  ds = ds->Update({{"a", "a + 1"}}, "id < " + std::to_string(kUpdated), nullptr, UpdateMode::kOverlay);  // v2
  auto bytes_read = [&](std::vector<std::string> columns) {
    const uint64_t before = table::StateOf(ds).store->stats().bytes_read;
    ChangesOptions options;
    options.columns = std::move(columns);
    auto reader = ds->Changes(1, options);
    int64_t rows = 0;
    while (auto b = reader->Next()) rows += b->num_rows();
    EXPECT_EQ(rows, 2 * kUpdated);
    return table::StateOf(ds).store->stats().bytes_read - before;
  };
  const uint64_t narrow = bytes_read({"id", "a"});
  const uint64_t wide = bytes_read({"id", "a", "blob"});
  EXPECT_GE(wide - narrow, uint64_t(kUpdated * kWide * 3 / 4));  // reads coalesce with the narrow columns
  EXPECT_LT(wide - narrow, uint64_t(kUpdated * kWide * 3 / 2)) << narrow << " " << wide;
}

// A cleanup while a feed reads keeps the versions it reads (they were superseded within
// the safety window); a forced one that removes them fails the feed with one line naming
// the version.
TEST_F(ChangesTest, ACleanupDuringAFeedKeepsItsVersionsUnlessForced) {
  auto ds = Create(10, 5);
  for (int64_t id = 0; id < 4; ++id)
    ds = ds->Update({{"a", "a + 1"}}, "id = " + std::to_string(id), nullptr, UpdateMode::kOverlay);  // v2-v5
  ChangesOptions options;
  options.batch_size = 1;
  auto reader = ds->Changes(1, options);
  auto first = reader->Next();  // version 2's pair
  ASSERT_NE(first, nullptr);
  CleanupOptions cleanup;
  cleanup.keep_versions = 1;
  EXPECT_EQ(ds->Cleanup(cleanup).versions_kept_recent, 4u);
  int64_t rows = first->num_rows();
  while (auto batch = reader->Next()) rows += batch->num_rows();
  EXPECT_EQ(rows, 8);

  reader = ds->Changes(1, options);
  ASSERT_NE(reader->Next(), nullptr);
  cleanup.force = true;
  EXPECT_EQ(ds->Cleanup(cleanup).versions_removed, 4u);
  try {
    while (reader->Next()) {
    }
    ADD_FAILURE() << "the feed read removed versions";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_EQ(std::string(e.what()), "changes of '" + uri_ +
                                         "': version 3 was removed by a forced cleanup while the feed read it "
                                         "(dataset '" + uri_ + "' has no version 3 (versions 5 to 5 exist))");
  }
}

// A MERGE's matched rows are update pairs naming the columns it wrote, its unmatched
// source rows inserts, its unmatched target rows deletes. With stable row ids, rows an
// UPDATE moved pair up by their ids.
TEST_F(ChangesTest, AMergeAndMovedRowsWithStableIdsPairUp) {
  auto ds = Create(6, 3, /*stable_row_ids=*/true);
  ds = ds->Update({{"b", "b * 10"}}, "id IN (1, 4)", nullptr, UpdateMode::kRows);  // v2: rows move, ids stay
  ds = ds->Delete("id = 5");                                                        // v3
  ds = UpsertDeletingZero(ds, 2);  // v4: id 2 updated, 9 inserted, 0 deleted
  ASSERT_EQ(ds->version(), 4u);
  EXPECT_EQ(Feed(ds, 1), (std::vector<std::string>{
                             "update_preimage 2 1 [b] 1 1 1", "update_postimage 2 1 [b] 1 1 10",
                             "update_preimage 2 4 [b] 4 4 4", "update_postimage 2 4 [b] 4 4 40",
                             "delete 3 5 NULL 5 5 5",
                             "update_preimage 4 2 [a,b] 2 2 2", "update_postimage 4 2 [a,b] 2 -2 2",
                             "delete 4 0 NULL 0 0 0",
                             "insert 4 6 NULL 9 -9 90",
                         }));
}

// lancelet records the rows a MERGE or UPDATE moved, so the feed pairs exactly those with
// their copies: a MERGE on a table without overlays (rows moved) gives update pairs for
// its matched rows and inserts and deletes for the rest, and one that deletes as many
// rows as it inserts gives deletes and inserts, never pairs.
TEST_F(ChangesTest, TheRowsAMergeMovedPairUpAndNoOthers) {
  auto ds = Create(6, 3);
  ds = ds->UpdateConfig({{"lance.overlays.enabled", std::string("false")}});  // v2: no rows
  ds = UpsertDeletingZero(ds, 4);  // v3: id 4 moved and updated, 9 inserted, 0 deleted
  MergeInsertOptions swap;  // v4: id 1 deleted, id 7 inserted: as many deletes as inserts
  swap.on = {"id"};
  swap.when_not_matched_insert_all = true;
  swap.when_not_matched_by_source_delete = true;
  swap.by_source_condition = "id = 1";
  ds = MergeInsert(ds, {RecordBatch::Make(IdABBatch(1)->schema(), {testing::Int64s({7}), testing::Int64s({7}),
                                                                   testing::Int64s({7})})},
                   swap).dataset;
  ASSERT_EQ(ds->version(), 4u);
  const std::string moved = std::to_string(2 * kFragment1), inserted = std::to_string(2 * kFragment1 + 1);
  EXPECT_EQ(Feed(ds, 1), (std::vector<std::string>{
                             "update_preimage 3 " + std::to_string(kFragment1 + 1) + " [a] 4 4 4",
                             "update_postimage 3 " + moved + " [a] 4 -4 4",
                             "delete 3 0 NULL 0 0 0",
                             "insert 3 " + inserted + " NULL 9 -9 90",
                             "delete 4 1 NULL 1 1 1",
                             "insert 4 " + std::to_string(3 * kFragment1) + " NULL 7 7 7",
                         }));
}

// A column renamed later keeps its values in the feed of earlier commits (columns are
// matched by field id and named as the last version names them); a dropped one is gone
// from the data columns, and named as it was where a commit changed it.
TEST_F(ChangesTest, ColumnsAreMatchedByFieldIdAcrossRenamesAndDrops) {
  auto ds = Create(4, 10);
  ds = ds->Update({{"a", "a + 100"}}, "id = 1", nullptr, UpdateMode::kOverlay);  // v2
  ds = ds->AlterColumns({{"a", std::string("alpha"), std::nullopt}});            // v3
  ds = ds->Update({{"b", "b + 100"}}, "id = 2", nullptr, UpdateMode::kRows);      // v4
  ds = ds->DropColumns({"b"});                                                    // v5
  EXPECT_EQ(Feed(ds, 1), (std::vector<std::string>{
                             "update_preimage 2 1 [alpha] 1 1", "update_postimage 2 1 [alpha] 1 101",
                             "update_preimage 4 2 [b] 2 2", "update_postimage 4 " + std::to_string(kFragment1) + " [b] 2 2",
                         }));
}

// A version that records no transaction (as some old writers left them) cannot say what
// it changed: the feed refuses it by name, and starts after it.
TEST_F(ChangesTest, AVersionWithoutATransactionIsRefusedByName) {
  auto ds = Create(4, 10);
  ds = ds->Delete("id = 1");  // v2, its transaction then dropped from the manifest
  ds = ds->Delete("id = 2");  // v3
  const auto& state = table::StateOf(ds->Checkout(2));
  lance::table::Manifest m = state.manifest;
  m.clear_transaction_file();
  m.clear_transaction_section();
  state.store->Put(state.manifest_path, table::EncodeManifestFile(m, nullptr));
  try {
    ds->Changes(1, {})->Next();
    FAIL() << "version 2 records no transaction";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotSupported);
    EXPECT_EQ(std::string(e.what()), "changes of '" + uri_ + "': version 2 records no transaction (an old writer's), "
                                     "so the feed cannot tell what it changed; start after version 2");
  }
  EXPECT_EQ(Feed(ds, 2), std::vector<std::string>{"delete 3 2 NULL 2 2 2"});
}

// An overwrite replaces every row: the old ones deleted, the new ones inserted; past 1M
// rows in the feed that needs allow_full.
TEST_F(ChangesTest, AnOverwriteFeedsEveryRowAndABigOneIsAskedFor) {
  auto ds = Create(3, 10);
  WriteOptions over;
  over.mode = WriteMode::kOverwrite;
  ds = Dataset::Write(uri_, {IdABBatch(2)}, over);
  EXPECT_EQ(Feed(ds, 1), (std::vector<std::string>{"delete 2 0 NULL 0 0 0", "delete 2 1 NULL 1 1 1",
                                                   "delete 2 2 NULL 2 2 2", "insert 2 0 NULL 0 0 0",
                                                   "insert 2 1 NULL 1 1 1"}));
  ds = Dataset::Write(uri_, {IdABBatch(1'000'000)}, over);  // v3: 2 + 1M rows in its feed
  try {
    ds->Changes(2, {})->Next();  // the commits are read as the feed reaches them
    FAIL() << "the whole table in the feed";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "changes of '" + uri_ + "': version 3 replaced the whole table (Overwrite), "
                                     "1000002 rows in the feed; allow the full feed (--allow-full) or start after "
                                     "version 3");
  }
  ChangesOptions all;
  all.allow_full = true;
  all.columns = std::vector<std::string>{"id"};
  int64_t rows = 0;
  auto reader = ds->Changes(2, all);
  while (auto batch = reader->Next()) rows += batch->num_rows();
  EXPECT_EQ(rows, 1'000'002);
}

}  // namespace
}  // namespace lancelet
