// Read-modify-writes against commits that landed after their read version: a change to
// what they read makes them recompute (no lost update); a change elsewhere lets them
// rebase as before, without recomputing.
#include <functional>
#include <optional>

#include <gtest/gtest.h>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/overlay_writer.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/read_set.h"

namespace lancelet {
namespace {

using testing::TempDir;

// id = 0..n-1, val = 0, other = 0, in fragments of 100 rows.
DatasetPtr MakeDataset(const std::string& uri, int64_t n) {
  FixedWidthBuilder<int64_t> ids(DataType::Int64()), vals(DataType::Int64()), others(DataType::Int64());
  for (int64_t i = 0; i < n; ++i) {
    ids.Append(i);
    vals.Append(0);
    others.Append(0);
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("id", DataType::Int64()),
                                                               Field::Make("val", DataType::Int64()),
                                                               Field::Make("other", DataType::Int64())});
  WriteOptions options;
  options.max_rows_per_file = 100;
  return Dataset::Write(uri, {RecordBatch::Make(schema, {ids.Finish(), vals.Finish(), others.Finish()})}, options);
}

std::vector<int64_t> Column(const DatasetPtr& ds, const std::string& name) {
  auto batch = ds->Latest()->NewScan().Columns({name}).ToBatch();
  const auto& col = batch->column(name);
  return std::vector<int64_t>(col->values<int64_t>(), col->values<int64_t>() + col->length);
}

// The read set of "UPDATE SET val = val + 1 WHERE id < 10" at `ds`.
table::ReadSet IncrementFirstTen(const table::DatasetState& state) {
  table::ReadSet read;
  table::ReadSet::AddFields(state.schema, {"id"}, read.all_rows_fields);
  table::ReadSet::AddFields(state.schema, {"val"}, read.changed_rows_fields);
  for (const auto& f : state.manifest.fragments()) read.fragments.insert(f.id());
  read.changed_rows[0] = format::RoaringBitmap::FromRange(0, 10);
  return read;
}

// What FindStaleRead says of "UPDATE SET val = val + 1 WHERE id < 10", read at version 1
// of a fresh dataset, when `commit` lands version 2.
std::optional<std::string> StaleAfter(const std::function<void(const DatasetPtr&)>& commit) {
  TempDir dir;
  auto v1 = MakeDataset(dir.Uri("t.lance"), 300);
  table::ReadSet read = IncrementFirstTen(table::StateOf(v1));
  commit(v1);
  return table::FindStaleRead(read, table::StateOf(v1), table::StateOf(v1->Latest()));
}

TEST(ReadSet, FindsChangesToWhatWasReadAndNothingElse) {
  // val on other rows, other on the same rows, deletes of unchanged rows.
  EXPECT_EQ(StaleAfter([](auto& ds) { ds->Update({{"val", "7"}}, "id >= 10 AND id < 20"); }), std::nullopt);
  EXPECT_EQ(StaleAfter([](auto& ds) { ds->Update({{"other", "7"}}, "id < 10"); }), std::nullopt);
  EXPECT_EQ(StaleAfter([](auto& ds) { ds->Delete("id = 50"); }), std::nullopt);

  EXPECT_EQ(StaleAfter([](auto& ds) { ds->Update({{"val", "7"}}, "id = 5"); }),
            "changed field 'val' of fragment 0 on rows it read");
  // The predicate read id on every row of every fragment.
  EXPECT_EQ(StaleAfter([](auto& ds) { ds->Update({{"id", "id"}}, "id = 250"); }),
            "changed field 'id' of fragment 2 on rows it read");
  EXPECT_EQ(StaleAfter([](auto& ds) { ds->Delete("id = 3"); }), "deleted rows of fragment 0 that it changes");
  // Appended rows may match the predicate: in version order they come first.
  EXPECT_EQ(StaleAfter([](auto& ds) { ds->Append({ds->NewScan().Filter("id < 5").ToBatch()}); }),
            "appended fragment 3, whose rows its predicate ranges over");
  EXPECT_EQ(StaleAfter([](auto& ds) { ds->Delete("id < 100"); }), "removed fragment 0, which it read");
}

TEST(ReadSet, AStaleUpdateRecomputesOnTheNewValues) {
  TempDir dir;
  auto v1 = MakeDataset(dir.Uri("t.lance"), 300);
  // Both read version 1; the first lands, the second must see its values.
  v1->Update({{"val", "val + 1"}}, "id < 10");
  uint64_t changed = 0;
  auto v3 = v1->Update({{"val", "val + 1"}}, "id < 10", &changed);
  EXPECT_EQ(v3->version(), 3u);
  EXPECT_EQ(changed, 10u);
  auto val = Column(v3, "val");
  EXPECT_EQ(val[0], 2);
  EXPECT_EQ(val[9], 2);
  EXPECT_EQ(val[10], 0);
}

TEST(ReadSet, AStaleUpdateMatchesOnTheNewValues) {
  TempDir dir;
  auto v1 = MakeDataset(dir.Uri("t.lance"), 300);
  v1->Update({{"val", "5"}}, "id >= 200");
  // Read at version 1, where every val is 0; committed after version 2, where 100 are 5.
  uint64_t changed = 0;
  auto v3 = v1->Update({{"other", "1"}}, "val = 0", &changed);
  EXPECT_EQ(changed, 200u);
  auto other = Column(v3, "other");
  EXPECT_EQ(other[199], 1);
  EXPECT_EQ(other[200], 0);
}

TEST(ReadSet, AStaleDeleteSeesTheNewValues) {
  TempDir dir;
  auto v1 = MakeDataset(dir.Uri("t.lance"), 300);
  v1->Update({{"val", "9"}}, "id % 10 = 0");
  // At version 1 every row matches; at version 2 the 30 rows set to 9 do not.
  uint64_t deleted = 0;
  auto v3 = v1->Delete("val = 0", &deleted);
  EXPECT_EQ(deleted, 270u);
  EXPECT_EQ(v3->CountRows(), 30u);
}

TEST(ReadSet, DisjointUpdatesBothLand) {
  TempDir dir;
  auto v1 = MakeDataset(dir.Uri("t.lance"), 300);
  v1->Update({{"val", "val + 1"}}, "id >= 100 AND id < 110");
  auto v3 = v1->Update({{"val", "val + 1"}}, "id < 10");
  EXPECT_EQ(v3->version(), 3u);
  auto val = Column(v3, "val");
  EXPECT_EQ(val[0], 1);
  EXPECT_EQ(val[100], 1);
  EXPECT_EQ(val[50], 0);
}

TEST(ReadSet, BlindOverlayWritesStayCompatible) {
  TempDir dir;
  auto v1 = MakeDataset(dir.Uri("t.lance"), 300);
  FixedWidthBuilder<int64_t> a(DataType::Int64()), b(DataType::Int64());
  a.Append(11);
  b.Append(22);
  OverlayWriter(v1).Set(0, "val", {5}, a.Finish()).Commit();
  // A blind write of the same cell from the stale handle lands on top: newest wins.
  auto v3 = OverlayWriter(v1).Set(0, "val", {5}, b.Finish()).Commit();
  EXPECT_EQ(v3->version(), 3u);
  EXPECT_EQ(Column(v3, "val")[5], 22);
}

}  // namespace
}  // namespace lancelet
