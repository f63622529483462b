// IndexStaleness: the one rule for which rows of a fragment an index has not seen.
#include "table/index_staleness.h"

#include <gtest/gtest.h>

#include "format/lance_schema.h"
#include "lancelet/dataset.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/index_plan.h"

namespace lancelet::table {
namespace {

TEST(IndexStalenessTest, AChangeToTheFieldAnAncestorOrADescendantAfterTheIndexsVersionIsStale) {
  auto schema = format::LanceSchema::FromArrow(Schema({
      Field::Make("id", DataType::Int64()),
      Field::Make("s", DataType::Struct({Field::Make("a", DataType::Int64()), Field::Make("b", DataType::Int64())}))}));
  // ids in pre-order: id 0, s 1, s.a 2, s.b 3.
  const IndexStaleness on_child(schema, {2}, /*dataset_version=*/3);
  EXPECT_TRUE(on_child.Stales(2, 4));   // the field itself
  EXPECT_TRUE(on_child.Stales(1, 4));   // its ancestor: the struct replaced whole
  EXPECT_FALSE(on_child.Stales(3, 4));  // a sibling
  EXPECT_FALSE(on_child.Stales(0, 4));
  EXPECT_FALSE(on_child.Stales(2, 3));  // committed at the version the index read: seen
  EXPECT_FALSE(on_child.Stales(2, 2));
  const IndexStaleness on_struct(schema, {1}, 3);
  EXPECT_TRUE(on_struct.Stales(2, 4));  // a descendant
  EXPECT_TRUE(on_struct.Stales(3, 4));
  EXPECT_FALSE(on_struct.Stales(0, 4));
  const IndexStaleness unknown(schema, {99}, 3);  // a field the schema no longer has
  EXPECT_TRUE(unknown.Stales(99, 4));
  EXPECT_FALSE(unknown.Stales(2, 4));
}

// Where the copies of the rule disagreed: ListIndices and the index plan counted a row
// once per overlay that changed it (15 here), the compaction plan once (10).
TEST(IndexStalenessTest, EveryCounterCountsARowChangedTwiceOnce) {
  testing::TempDir dir;
  auto ds = Dataset::Write(dir.Uri("t.lance"), {testing::IdABBatch(100)})->CreateIndex("a", IndexType::kBTree);
  ds = ds->Update({{"a", "1"}}, "id < 10")->Update({{"a", "2"}, {"b", "2"}}, "id < 5");  // rows 0-4 changed twice
  EXPECT_EQ(ds->ListIndices()[0].stale_rows, 10u);
  EXPECT_EQ(ds->PlanOptimize()[0].stale_index_rows, 10u);
  auto plan = PlanIndexedRows(table::StateOf(ds), *ParseExpression("a = 2"), true);
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->uses.size(), 1u);
  EXPECT_EQ(plan->uses[0].stale, 10u);
  EXPECT_NE(ds->Explain("a = 2").find("10 rows changed since it was built"), std::string::npos) << ds->Explain("a = 2");
  const IndexStaleness rule = IndexStaleness::Of(table::StateOf(ds).schema, table::StateOf(ds).indices.indices(0));
  const auto& fragment = table::StateOf(ds).manifest.fragments(0);
  EXPECT_EQ(rule.RowsOf(*table::StateOf(ds).OverlaysOf(fragment)).ToVector(),
            (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

}  // namespace
}  // namespace lancelet::table
