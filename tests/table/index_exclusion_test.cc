// Overlay exclusion, rule by rule (the data overlay spec's Index integration section): an
// index segment's answer leaves out, and the scan re-evaluates, exactly the cells of its
// field that overlays committed after its dataset_version cover.
#include <gtest/gtest.h>

#include "format/lance_schema.h"
#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/index_plan.h"
#include "index/scalar_index.h"

namespace lancelet::testing {
namespace {

class IndexExclusionTest : public ::testing::Test {
 protected:
  // 100 rows, one fragment: id, a = id % 10, b = id.
  DatasetPtr Create(bool stable_row_ids = false) {
    WriteOptions options;
    options.enable_stable_row_ids = stable_row_ids;
    return Dataset::Write(dir_.Uri("t.lance"), {IdABBatch(100)}, options);
  }

  // The plan's one index use and its candidates in fragment 0.
  static std::pair<table::IndexedRows::Use, std::vector<uint64_t>> Plan(const Dataset& ds, const std::string& where) {
    auto plan = table::PlanIndexedRows(table::StateOf(ds), *ParseExpression(where), true);
    EXPECT_TRUE(plan.has_value()) << where;
    if (!plan || plan->uses.size() != 1) return {};
    auto found = plan->candidates.find(0);
    return {plan->uses[0], found == plan->candidates.end() ? std::vector<uint64_t>{} : found->second};
  }

  static std::vector<int64_t> Ids(const Dataset& ds, const std::string& where) {
    auto batch = ds.NewScan().Columns({"id"}).Filter(where).ToBatch();
    return std::vector<int64_t>(batch->column(0)->values<int64_t>(),
                                batch->column(0)->values<int64_t>() + batch->num_rows());
  }

  TempDir dir_;
};

TEST_F(IndexExclusionTest, AnOverlayNewerThanTheIndexOnItsFieldIsExcludedAndReEvaluated) {
  auto ds = Create()->CreateIndex("a", IndexType::kBTree);            // built from version 1
  ds = ds->Update({{"a", "7"}}, "id IN (3, 17)");                      // committed at 3 > 1
  auto [use, candidates] = Plan(*ds, "a = 3");
  EXPECT_EQ(use.hits, 10u);   // the index still says rows 3, 13, ..., 93 hold 3
  EXPECT_EQ(use.stale, 2u);   // offsets 3 and 17 changed
  EXPECT_EQ(use.stale_matching, 0u);  // neither holds 3 now: 17 is not read; 3, a hit, is re-evaluated
  EXPECT_EQ(candidates, (std::vector<uint64_t>{3, 13, 23, 33, 43, 53, 63, 73, 83, 93}));
  auto [use7, candidates7] = Plan(*ds, "a = 7");
  EXPECT_EQ(use7.stale_matching, 2u);  // both now hold 7
  EXPECT_EQ(candidates7, (std::vector<uint64_t>{3, 7, 17, 27, 37, 47, 57, 67, 77, 87, 97}));
  EXPECT_EQ(Ids(*ds, "a = 3"), (std::vector<int64_t>{13, 23, 33, 43, 53, 63, 73, 83, 93}));  // 3 no longer matches
  EXPECT_EQ(Ids(*ds, "a = 7"), (std::vector<int64_t>{3, 7, 17, 27, 37, 47, 57, 67, 77, 87, 97}));  // 3 now does
}

TEST_F(IndexExclusionTest, AnOlderChangedValueMakesACandidateTheNewestValueDecides) {
  auto ds = Create()->CreateIndex("a", IndexType::kBTree);
  ds = ds->Update({{"a", "50"}}, "id = 5");
  ds = ds->Update({{"a", "60"}}, "id = 5");
  auto [use, candidates] = Plan(*ds, "a = 50");
  EXPECT_EQ(use.stale, 1u);  // one cell, changed twice: stale once
  EXPECT_EQ(candidates, std::vector<uint64_t>{5});
  EXPECT_EQ(Ids(*ds, "a = 50"), std::vector<int64_t>{});
  EXPECT_EQ(Ids(*ds, "a = 60"), std::vector<int64_t>{5});
}

TEST_F(IndexExclusionTest, AnOverlayOnAnotherFieldExcludesNothing) {
  auto ds = Create()->CreateIndex("a", IndexType::kBTree);
  ds = ds->Update({{"b", "-1"}}, "id < 50");
  auto [use, candidates] = Plan(*ds, "a = 3");
  EXPECT_EQ(use.stale, 0u);
  EXPECT_EQ(candidates.size(), 10u);
}

TEST_F(IndexExclusionTest, AnOverlayTheIndexAlreadySawIsNotExcluded) {
  auto ds = Create()->Update({{"a", "7"}}, "id = 3");  // version 2
  ds = ds->CreateIndex("a", IndexType::kBitmap);       // reads version 2: dataset_version 2 == committed_version
  EXPECT_EQ(ds->ListIndices()[0].dataset_version, 2u);
  auto [use, candidates] = Plan(*ds, "a = 7");
  EXPECT_EQ(use.stale, 0u);
  EXPECT_EQ(use.hits, 11u);  // the index holds the overlaid value
  EXPECT_EQ(Ids(*ds, "a = 7").size(), 11u);
}

TEST_F(IndexExclusionTest, DeletionsBelowAnOverlaidOffsetDoNotShiftIt) {
  auto ds = Create()->CreateIndex("a", IndexType::kBTree);
  ds = ds->Delete("id < 5");
  ds = ds->Update({{"a", "100"}}, "id = 8");  // physical offset 8, the 4th live row
  auto [use, candidates] = Plan(*ds, "a = 100");
  EXPECT_EQ(use.stale, 1u);
  EXPECT_EQ(candidates, std::vector<uint64_t>{8});
  EXPECT_EQ(Ids(*ds, "a = 100"), std::vector<int64_t>{8});
  EXPECT_EQ(Ids(*ds, "a = 8"), (std::vector<int64_t>{18, 28, 38, 48, 58, 68, 78, 88, 98}));
  EXPECT_EQ(Ids(*ds, "a = 2"), (std::vector<int64_t>{12, 22, 32, 42, 52, 62, 72, 82, 92}));  // row 2 deleted
}

TEST_F(IndexExclusionTest, StableRowIdsMapBackToOffsetsWithDeletionsPresent) {
  auto ds = Create(true)->CreateIndex("a", IndexType::kBTree);
  ds = ds->Delete("id < 5");
  ds = ds->Update({{"a", "100"}}, "id = 8");
  EXPECT_EQ(Ids(*ds, "a = 100"), std::vector<int64_t>{8});
  EXPECT_EQ(Ids(*ds, "a = 3"), (std::vector<int64_t>{13, 23, 33, 43, 53, 63, 73, 83, 93}));
  auto [use, candidates] = Plan(*ds, "a = 3");
  // Row 3's id maps to no live row (deleted); row 8 changed, but not to 3.
  EXPECT_EQ(candidates, (std::vector<uint64_t>{13, 23, 33, 43, 53, 63, 73, 83, 93}));
  auto [use100, candidates100] = Plan(*ds, "a = 100");
  EXPECT_EQ(candidates100, std::vector<uint64_t>{8});
}

TEST_F(IndexExclusionTest, AnIndexWithoutAFragmentBitmapCoversEveryFragment) {
  auto ds = Create()->CreateIndex("a", IndexType::kBTree);
  const auto& s = table::StateOf(ds);
  lance::table::IndexSection legacy = s.indices;
  legacy.mutable_indices(0)->clear_fragment_bitmap();
  auto state = table::MakeState(s.store, s.session, s.uri, s.manifest_path, s.manifest, legacy);
  auto plan = table::PlanIndexedRows(*state, *ParseExpression("a = 3"));
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->uses[0].fragments, 1u);
  EXPECT_EQ(plan->candidates.at(0).size(), 10u);
}

TEST_F(IndexExclusionTest, AnIndexNamingRowsPastItsFragmentIsRefused) {
  auto ds = Create()->CreateIndex("a", IndexType::kBTree);
  const auto& s = table::StateOf(ds);
  // Rewrite the segment's files, and the sizes the manifest records: value 3 now points
  // at offset 500 of fragment 0.
  FixedWidthBuilder<int64_t> values(DataType::Int64());
  values.Append(3);
  auto files = index::WriteIndex(*s.store, s.IndexDirectory(s.indices.indices(0)), index::IndexKind::kBTree,
                                 format::FileVersion{2, 0}, *values.Finish(), {500});
  lance::table::IndexSection rewritten = s.indices;
  rewritten.mutable_indices(0)->clear_files();
  for (const auto& f : files) {
    auto* file = rewritten.mutable_indices(0)->add_files();
    file->set_path(f.name);
    file->set_size_bytes(f.size);
  }
  auto reopened = table::MakeDataset(table::MakeState(s.store, s.session, s.uri, s.manifest_path, s.manifest, rewritten));
  auto error = ThrownError([&] { reopened->CountRows("a = 3"); });
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::kCorrupt);
  EXPECT_EQ(std::string(error->what()),
            "index 'a_idx': '" + s.IndexDirectory(s.indices.indices(0)) +
                "/page_data.lance' page 0 (file row 0), row 0: row address 500 names row 500 of fragment 0, which "
                "has 100 rows (the index file is damaged: rebuild the index)");
}

TEST_F(IndexExclusionTest, FragmentsAppendedAfterTheIndexAreScannedWhole) {
  auto ds = Create()->CreateIndex("a", IndexType::kBTree);
  const RecordBatchPtr first_rows = ds->NewScan().Filter("id < 20").ToBatch();
  ds = ds->Append({first_rows});
  auto plan = table::PlanIndexedRows(table::StateOf(ds), *ParseExpression("a = 3"));
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->candidates.count(0), 1u);
  EXPECT_EQ(plan->candidates.count(1), 0u);  // no segment covers fragment 1
  EXPECT_EQ(Ids(*ds, "a = 3"), (std::vector<int64_t>{3, 13, 23, 33, 43, 53, 63, 73, 83, 93, 3, 13}));
}

// 100 rows: id, s = {a: id % 10, b: "r<id>"}.
DatasetPtr CreateNested(const std::string& uri) {
  auto struct_type = DataType::Struct({Field::Make("a", DataType::Int64()), Field::Make("b", DataType::Utf8())});
  FixedWidthBuilder<int64_t> id(DataType::Int64());
  StructBuilder s(struct_type);
  for (int64_t i = 0; i < 100; ++i) {
    id.Append(i);
    static_cast<FixedWidthBuilder<int64_t>&>(s.field_builder(0)).Append(i % 10);
    static_cast<BinaryBuilder&>(s.field_builder(1)).Append("r" + std::to_string(i));
    s.Append();
  }
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("id", DataType::Int64()), Field::Make("s", struct_type)});
  WriteOptions options;
  options.file_version = "2.2";  // 2.0 cannot store a NULL struct row
  return Dataset::Write(uri, {std::make_shared<RecordBatch>(schema, std::vector<ArrayPtr>{id.Finish(), s.Finish()}, 100)},
                        options);
}

TEST(StructPath, AFieldIsAffectedByItselfItsAncestorsAndItsDescendants) {
  auto schema = format::LanceSchema::FromArrow(Schema({
      Field::Make("id", DataType::Int64()),
      Field::Make("o", DataType::Struct({Field::Make("m", DataType::Struct({Field::Make("a", DataType::Int64()),
                                                                             Field::Make("b", DataType::Int64())})),
                                         Field::Make("c", DataType::Int64())}))}));
  // ids in pre-order: id 0, o 1, o.m 2, o.m.a 3, o.m.b 4, o.c 5.
  auto a = schema.StructPathOf(3);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->name, "o.m.a");
  EXPECT_EQ(a->ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(a->children, (std::vector<int>{0, 0}));
  EXPECT_EQ(a->top, 1u);
  EXPECT_TRUE(a->AffectedBy(1));
  EXPECT_TRUE(a->AffectedBy(2));
  EXPECT_TRUE(a->AffectedBy(3));
  EXPECT_FALSE(a->AffectedBy(4));  // a sibling
  EXPECT_FALSE(a->AffectedBy(5));
  EXPECT_FALSE(a->AffectedBy(0));
  auto m = schema.StructPathNamed("o.m");
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->AffectedBy(3));  // a descendant
  EXPECT_TRUE(m->AffectedBy(1));
  EXPECT_FALSE(m->AffectedBy(5));
  EXPECT_EQ(schema.StructPathNamed("o.m.b")->field->id, 4);
  EXPECT_FALSE(schema.StructPathNamed("o.x").has_value());
  EXPECT_FALSE(schema.StructPathNamed("id.a").has_value());
}

TEST_F(IndexExclusionTest, AnOverlayOnAStructExcludesItsIndexedChild) {
  auto ds = CreateNested(dir_.Uri("n.lance"))->CreateIndex("s.a", IndexType::kBTree);
  ASSERT_EQ(ds->ListIndices().size(), 1u);
  EXPECT_EQ(ds->ListIndices()[0].name, "s.a_idx");
  EXPECT_EQ(ds->ListIndices()[0].columns, std::vector<std::string>{"s.a"});
  EXPECT_EQ(table::StateOf(ds).indices.indices(0).fields(0), 2);  // id 0, s 1, s.a 2
  auto [fresh, fresh_candidates] = Plan(*ds, "s.a = 3");
  EXPECT_EQ(fresh.hits, 10u);
  EXPECT_EQ(fresh_candidates, (std::vector<uint64_t>{3, 13, 23, 33, 43, 53, 63, 73, 83, 93}));

  ds = ds->Update({{"id", "-id"}}, "id = 13");  // an unrelated field
  EXPECT_EQ(Plan(*ds, "s.a = 3").first.stale, 0u);
  ds = ds->Update({{"s", "NULL"}}, "id IN (3, 17)");  // the ancestor of s.a
  auto [use, candidates] = Plan(*ds, "s.a = 3");
  EXPECT_EQ(use.stale, 2u);
  EXPECT_EQ(use.stale_matching, 0u);
  EXPECT_EQ(candidates, (std::vector<uint64_t>{3, 13, 23, 33, 43, 53, 63, 73, 83, 93}));
  auto [nulls, null_candidates] = Plan(*ds, "s.a IS NULL");
  EXPECT_EQ(nulls.stale_matching, 2u);
  EXPECT_EQ(null_candidates, (std::vector<uint64_t>{3, 17}));
  EXPECT_EQ(Ids(*ds, "s.a = 3"), (std::vector<int64_t>{-13, 23, 33, 43, 53, 63, 73, 83, 93}));
  EXPECT_EQ(Ids(*ds, "s.a IS NULL"), (std::vector<int64_t>{3, 17}));
  EXPECT_EQ(ds->ListIndices()[0].stale_rows, 2u);
}

TEST_F(IndexExclusionTest, AStructFoldLeavesTheIndexesOnItsChildren) {
  auto ds = CreateNested(dir_.Uri("n.lance"))->CreateIndex("s.a", IndexType::kBitmap);
  ds = ds->Update({{"s", "NULL"}}, "id < 60", nullptr, UpdateMode::kColumns);  // a column rewrite of s
  EXPECT_EQ(ds->ListIndices()[0].indexed_fragments, 0u);
  EXPECT_EQ(Ids(*ds, "s.a = 7"), (std::vector<int64_t>{67, 77, 87, 97}));
}

}  // namespace
}  // namespace lancelet::testing
