// Dataset::DropColumns and AlterColumns: schema changes committed as the reference's
// Project, no data rewritten; what they refuse; and how they meet concurrent commits.
#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "lancelet/scalar.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"

namespace lancelet::testing {
namespace {

// ids 0..29 (id, name) in 3 fragments, a score column rewritten into a file of its own,
// and a BTree index on id and on name.
DatasetPtr Evolving(const TempDir& dir) {
  WriteOptions options;
  options.max_rows_per_file = 10;
  auto ds = Dataset::Write(dir.Uri("t.lance"), {IdNameBatch(0, 30)}, options);
  ds = ds->Update({{"name", "upper(name)"}}, "id < 5", nullptr, UpdateMode::kColumns);
  ds = ds->CreateIndex("id", IndexType::kBTree);
  return ds->CreateIndex("name", IndexType::kBTree);
}

std::vector<std::string> IndexColumns(const Dataset& ds) {
  std::vector<std::string> out;
  for (const auto& i : ds.ListIndices()) out.push_back(i.name + ":" + i.columns.at(0));
  return out;
}

TEST(SchemaChange, ADroppedColumnLeavesTheSchemaItsOwnFilesAndItsIndexes) {
  TempDir dir;
  auto before = Evolving(dir);
  ASSERT_EQ(table::StateOf(before).manifest.fragments(0).files_size(), 2);  // the rewritten name
  auto after = before->DropColumns({"name"});
  EXPECT_EQ(after->version(), before->version() + 1);
  EXPECT_EQ(after->schema()->ToString(), "id:int64");
  for (const auto& f : table::StateOf(after).manifest.fragments()) EXPECT_EQ(f.files_size(), 1) << f.id();
  EXPECT_EQ(IndexColumns(*after), (std::vector<std::string>{"id_idx:id"}));
  EXPECT_EQ(after->CountRows("id >= 20"), 10u);
  // The older version keeps its column.
  EXPECT_EQ(GetScalar(*after->Checkout(before->version())->NewScan().Filter("id = 1").ToBatch()->column(1), 0)
                .as_string(),
            "N1");
}

TEST(SchemaChange, ARenamedColumnKeepsItsValuesAndItsIndex) {
  TempDir dir;
  auto ds = Evolving(dir)->AlterColumns({{"id", "key", std::nullopt}, {"name", std::nullopt, true}});
  EXPECT_EQ(ds->schema()->ToString(), "key:int64, name:utf8");
  EXPECT_EQ(IndexColumns(*ds), (std::vector<std::string>{"id_idx:key", "name_idx:name"}));
  EXPECT_NE(ds->Explain("key = 12").find("id_idx"), std::string::npos) << ds->Explain("key = 12");
  EXPECT_EQ(GetScalar(*ds->NewScan().Filter("key = 12").ToBatch()->column(1), 0).as_string(), "n12");
  ds = ds->AlterColumns({{"key", std::nullopt, false}});
  EXPECT_FALSE(ds->schema()->field(0)->nullable);
}

TEST(SchemaChange, RefusalsNameTheColumnAndLeaveTheDatasetAsItWas) {
  TempDir dir;
  auto ds = Evolving(dir);
  const uint64_t version = ds->version();
  auto message = [&](const std::function<void()>& f) { return ThrownMessage(f); };
  EXPECT_EQ(message([&] { ds->DropColumns({"nope"}); }),
            "no column 'nope' in dataset '" + ds->uri() + "' (columns: id:int64, name:utf8)");
  EXPECT_EQ(message([&] { ds->DropColumns({"id", "name"}); }),
            "cannot drop every column of '" + ds->uri() + "' (drop the dataset instead)");
  EXPECT_EQ(message([&] { ds->AlterColumns({{"id", "name", std::nullopt}}); }),
            "cannot rename column 'id' to 'name': a column of that name exists");
  EXPECT_EQ(message([&] { ds->AlterColumns({{"id", "a.b", std::nullopt}}); }),
            "cannot rename column 'id' to 'a.b': a name must be non-empty and hold no '.'");
  EXPECT_EQ(message([&] { ds->AlterColumns({{"name", std::nullopt, false}}); }),
            "cannot make column 'name' NOT NULL: 4 rows hold NULL");  // ids 3, 10, 17, 24
  EXPECT_EQ(ds->Latest()->version(), version);
}

TEST(SchemaChange, NotNullChecksAColumnWhateverItsNameHolds) {
  TempDir dir;
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("p.q", DataType::Int64()), Field::Make("say \"hi\"", DataType::Int64())});
  auto ds = Dataset::Write(dir.Uri("t.lance"), {RecordBatch::Make(schema, {Int64s({1, 2}), Int64s({1, std::nullopt})})});
  ds = ds->AlterColumns({{"p.q", std::nullopt, false}});
  EXPECT_FALSE(ds->schema()->field(0)->nullable);
  EXPECT_EQ(ThrownMessage([&] { ds->AlterColumns({{"say \"hi\"", std::nullopt, false}}); }),
            "cannot make column 'say \"hi\"' NOT NULL: 1 row holds NULL");
}

TEST(SchemaChange, ConcurrentChangesBothLand) {
  TempDir dir;
  auto stale = Evolving(dir);
  stale->DropColumns({"name"});
  // Another schema change from the same version is recomputed on the latest schema.
  auto renamed = stale->AlterColumns({{"id", "key", std::nullopt}});
  EXPECT_EQ(renamed->schema()->ToString(), "key:int64");
  // An append from before the drop lands; its rows read in the latest schema.
  auto appended = stale->Append({IdNameBatch(100, 5)});
  EXPECT_EQ(appended->schema()->ToString(), "key:int64");
  EXPECT_EQ(appended->CountRows("key >= 100"), 5u);
  EXPECT_EQ(appended->CountRows(), 35u);
}

TEST(SchemaChange, AddedColumnsAreComputedForEveryRowInAFileOfTheirOwn) {
  TempDir dir;
  WriteOptions options;
  options.max_rows_per_file = 10;
  auto ds = Dataset::Write(dir.Uri("t.lance"), {IdNameBatch(0, 30)}, options);
  ds = ds->Delete("id % 10 = 9")->Update({{"name", "'x' || name"}}, "id = 12", nullptr, UpdateMode::kOverlay);
  ds = ds->DropColumns({"name"})->AddColumns({{"twice", "id * 2"}, {"big", "id > 20"}});
  EXPECT_EQ(ds->schema()->ToString(), "id:int64, twice:int64, big:bool");
  const auto& state = table::StateOf(ds);
  for (const auto& f : state.manifest.fragments()) {
    ASSERT_EQ(f.files_size(), 2) << f.id();
    // Ids past the dropped name's (1): a dropped column's values never read as a new one.
    EXPECT_EQ(std::vector<int32_t>(f.files(1).fields().begin(), f.files(1).fields().end()),
              (std::vector<int32_t>{2, 3}));
  }
  auto rows = ds->NewScan().Filter("id IN (12, 21)").ToBatch();
  ASSERT_EQ(rows->num_rows(), 2);
  EXPECT_EQ(GetScalar(*rows->column(1), 0).as_int(), 24);
  EXPECT_EQ(GetScalar(*rows->column(2), 1).as_bool(), true);
  EXPECT_EQ(ds->CountRows("twice = id * 2"), 27u);

  // Names that exist and expressions that do not bind are refused; nothing is committed.
  const uint64_t version = ds->version();
  EXPECT_EQ(ThrownMessage([&] { ds->AddColumns({{"id", "1"}}); }), "cannot add column 'id': a column of that name exists");
  EXPECT_NE(ThrownMessage([&] { ds->AddColumns({{"x", "nope + 1"}}); }).find("unknown column 'nope'"), std::string::npos);
  EXPECT_EQ(ds->Latest()->version(), version);
}

TEST(SchemaChange, AnAppendDuringAnAddIsRecomputed) {
  TempDir dir;
  auto stale = Dataset::Write(dir.Uri("t.lance"), {IdNameBatch(0, 10)});
  stale->Append({IdNameBatch(10, 5)});
  auto added = stale->AddColumns({{"next", "id + 1"}});  // retries on the version with the append
  EXPECT_EQ(added->CountRows(), 15u);
  EXPECT_EQ(added->CountRows("next = id + 1"), 15u);
}

}  // namespace
}  // namespace lancelet::testing
