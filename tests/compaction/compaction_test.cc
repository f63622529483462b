// Compaction rule by rule: overlay -> overlay merges (contiguity, post-images, NULL
// overrides, dense or sparse), overlay -> base folds (tombstones, offsets, deletions, row
// ids), row rewrites (bins, deletions materialized, row ids carried), what each does to
// indexes in the same commit, the overlay-layer bound, and the plan.
#include <algorithm>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/text.h"
#include "support/faulty_store.h"
#include "support/test_env.h"
#include "table/compaction.h"
#include "table/dataset_state.h"
#include "table/feature_flags.h"
#include "table/index_section.h"
#include "table/update_modes.h"

namespace lancelet::testing {
namespace {

std::string JsonLines(ScanBuilder builder, const std::string& where) {
  if (!where.empty()) builder.Filter(where);
  auto reader = builder.Open();
  std::ostringstream out;
  auto writer = MakeJsonLinesWriter(out, reader->schema());
  WriteAll(*reader, *writer);
  return out.str();
}

// Every row (with _rowid and _rowaddr) as JSON lines.
std::string Rows(const Dataset& ds, const std::string& where = "", bool use_index = true) {
  return JsonLines(ds.NewScan().WithRowId().WithRowAddress().UseIndex(use_index), where);
}

// The same rows without their addresses (a rewrite moves rows).
std::string Values(const Dataset& ds, const std::string& where = "") {
  return JsonLines(ds.NewScan().Columns({"id", "a", "b", "s"}), where);
}

const lance::table::DataFragment& Fragment(const Dataset& ds, uint64_t id) {
  for (const auto& f : table::StateOf(ds).manifest.fragments())
    if (f.id() == id) return f;
  ADD_FAILURE() << "no fragment " << id;
  return table::StateOf(ds).manifest.fragments(0);
}

std::vector<uint64_t> OverlayVersions(const Dataset& ds, uint64_t fragment) {
  std::vector<uint64_t> out;
  for (const auto& o : Fragment(ds, fragment).overlays()) out.push_back(o.committed_version());
  return out;
}

// Fragments the index segments named `name` cover, together.
std::vector<uint64_t> Covered(const Dataset& ds, const std::string& name) {
  std::set<uint64_t> out;
  for (const auto& index : table::StateOf(ds).indices.indices())
    if (index.name() == name) {
      auto bitmap = table::IndexFragments(index);
      if (!bitmap) return {UINT64_MAX};
      for (uint32_t id : bitmap->ToVector()) out.insert(id);
    }
  return {out.begin(), out.end()};
}

class CompactionTest : public ::testing::TestWithParam<std::string> {
 protected:
  // `rows` rows in fragments of `per_fragment`: id, a = id % 10, b = id, s = "s<id>".
  DatasetPtr Create(int64_t rows = 100, int64_t per_fragment = 100, bool stable_row_ids = false,
                    const std::string& name = "t.lance") {
    FixedWidthBuilder<int64_t> id(DataType::Int64()), a(DataType::Int64()), b(DataType::Int64());
    BinaryBuilder s(DataType::Utf8());
    for (int64_t i = 0; i < rows; ++i) {
      id.Append(i);
      a.Append(i % 10);
      b.Append(i);
      s.Append("s" + std::to_string(i));
    }
    auto schema = std::make_shared<Schema>(
        std::vector<FieldPtr>{Field::Make("id", DataType::Int64()), Field::Make("a", DataType::Int64()),
                              Field::Make("b", DataType::Int64()), Field::Make("s", DataType::Utf8())});
    WriteOptions options;
    options.enable_stable_row_ids = stable_row_ids;
    options.max_rows_per_file = per_fragment;
    options.file_version = GetParam();
    return Dataset::Write(
        dir_.Join(name),
        {std::make_shared<RecordBatch>(schema, std::vector<ArrayPtr>{id.Finish(), a.Finish(), b.Finish(), s.Finish()},
                                       rows)},
        options);
  }

  static OptimizeOptions FoldOnly() {
    OptimizeOptions o;
    o.rewrite_rows = false;
    o.optimize_indices = false;
    return o;
  }

  TempDir dir_;
};

TEST_P(CompactionTest, MergingKeepsTheNewestValuePerCellAndTheNewestVersion) {
  auto ds = Create();
  ds = ds->Update({{"a", "NULL"}}, "id = 5");               // v2
  ds = ds->Update({{"a", "70"}, {"s", "'x'"}}, "id IN (5, 6)");  // v3
  ds = ds->Update({{"a", "NULL"}}, "id = 6");               // v4
  ds = ds->Update({{"b", "-1"}}, "id = 7");                 // v5
  std::string before = Rows(*ds);
  auto merged = ds->MergeOverlays(0);
  EXPECT_EQ(merged->version(), 6u);
  EXPECT_EQ(OverlayVersions(*merged, 0), std::vector<uint64_t>{5});
  EXPECT_EQ(Rows(*merged), before);
  // Cells: a at {5, 6} (5 -> 70 over the older NULL, 6 -> NULL over the older 70), s at
  // {5, 6}, b at {7}: different rows per column, so the merged overlay is sparse.
  const auto& overlay = Fragment(*merged, 0).overlays(0);
  EXPECT_TRUE(overlay.has_field_coverage());
  auto batch = merged->NewScan().Columns({"a", "s"}).Filter("id IN (5, 6)").ToBatch();
  EXPECT_EQ(FormatValue(*batch->column(0), 0, ValueStyle::kJson), "70");
  EXPECT_EQ(FormatValue(*batch->column(0), 1, ValueStyle::kJson), "null");
  EXPECT_EQ(FormatValue(*batch->column(1), 1, ValueStyle::kJson), "\"x\"");
}

TEST_P(CompactionTest, MergingOverlaysWithTheSameRowsWritesADenseOverlay) {
  auto ds = Create()->Update({{"a", "1"}}, "id < 3")->Update({{"b", "2"}}, "id < 3");
  auto merged = ds->MergeOverlays(0);
  const auto& overlay = Fragment(*merged, 0).overlays(0);
  EXPECT_FALSE(overlay.has_field_coverage());
  EXPECT_FALSE(overlay.shared_offset_bitmap().empty());
  EXPECT_EQ(Rows(*merged), Rows(*ds));
}

TEST_P(CompactionTest, OnlyARunContiguousInCommittedVersionMerges) {
  auto ds = Create();
  ds = ds->Update({{"a", "10"}}, "id = 1");  // v2
  ds = ds->Update({{"a", "30"}}, "id = 1");  // v3
  ds = ds->Update({{"a", "50"}}, "id = 2");  // v4
  auto error = ThrownError([&] { ds->MergeOverlays(0, {2, 4}); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), ErrorKind::kInvalidArgument);
  EXPECT_NE(std::string(error->what()).find("overlay committed at version 3 lies between them"), std::string::npos)
      << error->what();
  EXPECT_EQ(Dataset::Open(ds->uri())->version(), 4u);  // nothing committed
  auto missing = ThrownError([&] { ds->MergeOverlays(0, {2, 9}); });
  ASSERT_TRUE(missing.has_value());
  EXPECT_NE(std::string(missing->what()).find("no overlay was committed at version 9"), std::string::npos);

  auto merged = ds->MergeOverlays(0, {2, 3});
  EXPECT_EQ(OverlayVersions(*merged, 0), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(Rows(*merged), Rows(*ds));
  EXPECT_EQ(Values(*merged, "id = 1"), "{\"id\":1,\"a\":30,\"b\":1,\"s\":\"s1\"}\n");
}

TEST_P(CompactionTest, FoldingWritesOneBaseFileTombstonesTheOldCopiesAndKeepsOffsets) {
  auto ds = Create(100, 100, /*stable_row_ids=*/true);
  ds = ds->Delete("id IN (0, 50)");
  ds = ds->Update({{"a", "NULL"}}, "id = 3");
  ds = ds->Update({{"s", "'new'"}, {"a", "a + 100"}}, "id >= 90");
  std::string before = Rows(*ds);
  const auto deletion = Fragment(*ds, 0).deletion_file().SerializeAsString();
  const auto row_ids = Fragment(*ds, 0).inline_row_ids();
  EXPECT_NE(table::StateOf(ds).manifest.reader_feature_flags() & table::kFlagDataOverlays, 0u);

  OptimizeStats stats;
  auto folded = ds->Optimize(FoldOnly(), &stats);
  EXPECT_EQ(stats.fragments_folded, 1u);
  EXPECT_EQ(stats.overlays_removed, 2u);
  EXPECT_EQ(stats.versions, std::vector<uint64_t>{5});
  EXPECT_EQ(Rows(*folded), before);  // values, row ids and row addresses alike
  const auto& f = Fragment(*folded, 0);
  EXPECT_EQ(f.overlays_size(), 0);
  ASSERT_EQ(f.files_size(), 2);
  EXPECT_EQ(std::vector<int32_t>(f.files(0).fields().begin(), f.files(0).fields().end()),
            (std::vector<int32_t>{0, -2, 2, -2}));
  EXPECT_EQ(std::vector<int32_t>(f.files(1).fields().begin(), f.files(1).fields().end()),
            (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(f.deletion_file().SerializeAsString(), deletion);
  EXPECT_EQ(f.inline_row_ids(), row_ids);
  EXPECT_EQ(table::StateOf(folded).manifest.reader_feature_flags() & table::kFlagDataOverlays, 0u);
  EXPECT_EQ(Values(*folded, "id = 3"), "{\"id\":3,\"a\":null,\"b\":3,\"s\":\"s3\"}\n");
}

TEST_P(CompactionTest, AFileLeftWithoutLiveFieldsLeavesTheFragment) {
  auto ds = Create()->Update({{"id", "id"}, {"a", "0"}, {"b", "0"}, {"s", "''"}}, "id < 10");
  auto folded = ds->Optimize(FoldOnly());
  const auto& f = Fragment(*folded, 0);
  ASSERT_EQ(f.files_size(), 1);
  EXPECT_EQ(std::vector<int32_t>(f.files(0).fields().begin(), f.files(0).fields().end()),
            (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(Rows(*folded), Rows(*ds));
}

TEST_P(CompactionTest, AFoldedFragmentLeavesTheIndexesOnFoldedFieldsOnly) {
  auto ds = Create(200, 100)->CreateIndex("a", IndexType::kBTree)->CreateIndex("b", IndexType::kBitmap);
  ds = ds->Update({{"a", "a + 100"}}, "id IN (5, 150)");  // a in both fragments
  ds = ds->Update({{"s", "'z'"}}, "id = 120");            // s in fragment 1 only
  auto folded = ds->Optimize(FoldOnly());
  EXPECT_EQ(Covered(*folded, "a_idx"), std::vector<uint64_t>{});
  EXPECT_EQ(Covered(*folded, "b_idx"), (std::vector<uint64_t>{0, 1}));
  for (const char* where : {"a = 105", "a = 5", "a = 0", "b = 150", "a > 100", "s = 'z'"})
    EXPECT_EQ(Rows(*folded, where), Rows(*folded, where, false)) << where;
  EXPECT_EQ(Rows(*folded, "a = 105"), Rows(*ds, "a = 105"));

  // With index optimization (the default) the folded fragments are indexed again, and
  // the segment left covering nothing goes.
  OptimizeOptions o = FoldOnly();
  o.optimize_indices = true;
  auto reindexed = ds->Optimize(o);
  EXPECT_EQ(Covered(*reindexed, "a_idx"), (std::vector<uint64_t>{0, 1}));
  int a_segments = 0;
  for (const auto& index : table::StateOf(reindexed).indices.indices()) a_segments += index.name() == "a_idx";
  EXPECT_EQ(a_segments, 1);
  EXPECT_EQ(Rows(*reindexed, "a = 105"), Rows(*reindexed, "a = 105", false));
}

TEST_P(CompactionTest, AMergeKeepsEveryIndexAndItsExclusions) {
  auto ds = Create()->CreateIndex("a", IndexType::kBTree);
  ds = ds->Update({{"a", "77"}}, "id = 3")->Update({{"a", "3"}}, "id = 4");
  auto before = table::StateOf(ds).indices.SerializeAsString();
  auto merged = ds->MergeOverlays(0);
  EXPECT_EQ(table::StateOf(merged).indices.SerializeAsString(), before);
  for (const char* where : {"a = 3", "a = 4", "a = 77"})
    EXPECT_EQ(Rows(*merged, where), Rows(*merged, where, false)) << where;
  EXPECT_EQ(Values(*merged, "a = 3"), Values(*ds, "a = 3"));
}

TEST_P(CompactionTest, RewritingMergesSmallFragmentsAndDropsDeletedRows) {
  auto ds = Create(100, 10);  // 10 fragments of 10 rows
  ds = ds->Delete("id % 10 = 0 OR id >= 95");
  ds = ds->Update({{"a", "-a"}}, "id % 7 = 0");
  std::string values = Values(*ds);
  OptimizeOptions o;
  o.target_rows_per_fragment = 30;
  auto plan = ds->PlanOptimize(o);
  ASSERT_EQ(plan.size(), 10u);
  // Live rows 9 per fragment (the last 4): bins of 3 fragments (27 rows) then one of 1.
  EXPECT_EQ(plan[0].rewrite_group, 0);
  EXPECT_EQ(plan[3].rewrite_group, 1);
  EXPECT_EQ(plan[9].action, CompactionAction::kRewriteRows);  // 6 of 10 deleted: materialized alone
  OptimizeStats stats;
  auto rewritten = ds->Optimize(o, &stats);
  EXPECT_EQ(stats.fragments_removed, 10u);
  EXPECT_EQ(stats.rows_deleted_materialized, 15u);
  EXPECT_EQ(Values(*rewritten), values);
  uint64_t rows = 0;
  for (const auto& f : table::StateOf(rewritten).manifest.fragments()) {
    EXPECT_FALSE(f.has_deletion_file());
    EXPECT_EQ(f.overlays_size(), 0);
    EXPECT_LE(f.physical_rows(), 30u);
    EXPECT_GE(f.id(), 10u);
    rows += f.physical_rows();
  }
  EXPECT_EQ(rows, 85u);
  EXPECT_EQ(table::StateOf(rewritten).manifest.reader_feature_flags() & table::kFlagDataOverlays, 0u);
}

TEST_P(CompactionTest, FragmentsAtTheTargetWithoutDeletionsKeepTheirRows) {
  auto ds = Create(100, 50)->Update({{"a", "1"}}, "id = 1");
  OptimizeOptions o;
  o.target_rows_per_fragment = 50;
  auto plan = ds->PlanOptimize(o);
  EXPECT_EQ(plan[0].action, CompactionAction::kFoldOverlays);
  EXPECT_EQ(plan[1].action, CompactionAction::kNone);
  auto next = ds->Optimize(o);
  EXPECT_EQ(table::StateOf(next).manifest.fragments(0).id(), 0u);
  EXPECT_EQ(table::StateOf(next).manifest.fragments(1).id(), 1u);
  EXPECT_EQ(Rows(*next), Rows(*ds));
  // A lone small fragment with nothing to materialize is left alone too.
  auto small = Create(10, 10, false, "small.lance");
  auto none = small->PlanOptimize();
  EXPECT_EQ(none[0].action, CompactionAction::kNone);
  EXPECT_EQ(small->Optimize()->version(), small->version());
}

TEST_P(CompactionTest, StableRowIdsFollowRewrittenRowsAndTheirIndexes) {
  auto ds = Create(60, 20, /*stable_row_ids=*/true)->CreateIndex("b", IndexType::kBTree);
  ds = ds->Delete("id IN (1, 21, 41)");
  std::string ids_before = Rows(*ds, "b >= 0", false);
  OptimizeOptions o;
  o.target_rows_per_fragment = 100;
  o.optimize_indices = false;
  auto rewritten = ds->Optimize(o);
  ASSERT_EQ(table::StateOf(rewritten).manifest.fragments_size(), 1);
  EXPECT_EQ(table::StateOf(rewritten).manifest.fragments(0).id(), 3u);
  // The index (row ids) covers the new fragment: no overlay was newer than it.
  EXPECT_EQ(Covered(*rewritten, "b_idx"), std::vector<uint64_t>{3});
  auto strip_addr = [](std::string rows) {  // compare _rowid, values; addresses moved
    std::string out;
    for (const auto& line : SplitLines(rows)) out += line.substr(0, line.find(",\"_rowaddr\"")) + "\n";
    return out;
  };
  EXPECT_EQ(strip_addr(Rows(*rewritten, "b >= 0", false)), strip_addr(ids_before));
  EXPECT_EQ(Rows(*rewritten, "b = 22"), Rows(*rewritten, "b = 22", false));
  EXPECT_EQ(Rows(*rewritten, "b = 21"), "");

  // An overlay on b newer than the index: the rewrite folds it, so the index must not
  // cover the new fragment (its old value of b would be served).
  auto again = Create(60, 20, true, "again.lance")->CreateIndex("b", IndexType::kBTree)->Update({{"b", "1000"}}, "id = 2");
  auto moved = again->Optimize(o);
  EXPECT_EQ(Covered(*moved, "b_idx"), std::vector<uint64_t>{});
  EXPECT_EQ(Values(*moved, "b = 1000"), "{\"id\":2,\"a\":2,\"b\":1000,\"s\":\"s2\"}\n");
  EXPECT_EQ(Values(*moved, "b = 2"), "");
}

TEST_P(CompactionTest, WithoutStableRowIdsRewrittenFragmentsLeaveTheIndex) {
  auto ds = Create(60, 20)->CreateIndex("b", IndexType::kBTree);
  OptimizeOptions o;
  o.target_rows_per_fragment = 100;
  o.optimize_indices = false;
  auto rewritten = ds->Optimize(o);
  EXPECT_EQ(Covered(*rewritten, "b_idx"), std::vector<uint64_t>{});
  EXPECT_EQ(Values(*rewritten, "b = 22"), "{\"id\":22,\"a\":2,\"b\":22,\"s\":\"s22\"}\n");
  o.optimize_indices = true;
  auto reindexed = ds->Optimize(o);
  EXPECT_EQ(Covered(*reindexed, "b_idx"), std::vector<uint64_t>{3});
  EXPECT_EQ(Rows(*reindexed, "b = 22"), Rows(*reindexed, "b = 22", false));
}

TEST_P(CompactionTest, UpdatesPastTheOverlayBoundMergeTheFragmentsOverlays) {
  auto ds = Create();
  for (int i = 0; i < 10; ++i) ds = ds->Update({{"a", std::to_string(100 + i)}}, "id = " + std::to_string(i));
  EXPECT_EQ(Fragment(*ds, 0).overlays_size(), 10);
  uint64_t version = ds->version();
  WriteOutcome outcome;
  ds = ds->Update({{"a", "200"}}, "id = 50", nullptr, UpdateMode::kAuto, nullptr, &outcome);  // the 11th: merged
  EXPECT_EQ(ds->version(), version + 2);
  EXPECT_EQ(outcome.change_version, version + 1);
  EXPECT_EQ(outcome.layer_merge_version, version + 2);
  EXPECT_EQ(LayerMergeNote(outcome),
            fmt::format(" (version {} holds the change; version {} merged the overlays of fragments past "
                        "lance.compaction.max_overlays_per_fragment)",
                        version + 1, version + 2));
  EXPECT_EQ(Fragment(*ds, 0).overlays_size(), 1);
  EXPECT_EQ(OverlayVersions(*ds, 0), std::vector<uint64_t>{version + 1});
  EXPECT_EQ(Values(*ds, "a >= 100"),
            "{\"id\":0,\"a\":100,\"b\":0,\"s\":\"s0\"}\n{\"id\":1,\"a\":101,\"b\":1,\"s\":\"s1\"}\n"
            "{\"id\":2,\"a\":102,\"b\":2,\"s\":\"s2\"}\n{\"id\":3,\"a\":103,\"b\":3,\"s\":\"s3\"}\n"
            "{\"id\":4,\"a\":104,\"b\":4,\"s\":\"s4\"}\n{\"id\":5,\"a\":105,\"b\":5,\"s\":\"s5\"}\n"
            "{\"id\":6,\"a\":106,\"b\":6,\"s\":\"s6\"}\n{\"id\":7,\"a\":107,\"b\":7,\"s\":\"s7\"}\n"
            "{\"id\":8,\"a\":108,\"b\":8,\"s\":\"s8\"}\n{\"id\":9,\"a\":109,\"b\":9,\"s\":\"s9\"}\n"
            "{\"id\":50,\"a\":200,\"b\":50,\"s\":\"s50\"}\n");
}

// The change has landed when the merge that bounds the layers fails (a full disk): the
// update returns its own version and says why the merge did not happen; it never runs
// again, and the next write bounds the layers.
TEST_P(CompactionTest, AFailedLayerMergeLeavesTheChangeCommittedAndSaysSo) {
  auto ds = Create();
  for (int i = 0; i < 10; ++i) ds = ds->Update({{"a", std::to_string(100 + i)}}, "id = " + std::to_string(i));
  auto faulty = std::make_shared<FaultyStore>();
  faulty->FailWritesUnder("/data/", 1);  // the update's overlay file, not the merged one
  auto through = table::MakeDataset(table::LoadState(faulty, Session::Default()->caches(), ds->uri(), std::nullopt));
  WriteOutcome outcome;
  uint64_t changed = 0;
  auto next = through->Update({{"a", "777"}}, "id = 50", &changed, UpdateMode::kOverlay, nullptr, &outcome);
  EXPECT_EQ(changed, 1u);
  EXPECT_EQ(next->version(), ds->version() + 1);
  EXPECT_EQ(Dataset::Open(ds->uri())->version(), ds->version() + 1);
  EXPECT_EQ(outcome.change_version, ds->version() + 1);
  EXPECT_EQ(outcome.layer_merge_version, 0u);
  EXPECT_NE(outcome.layer_merge_error.find("No space left on device"), std::string::npos) << outcome.layer_merge_error;
  EXPECT_EQ(LayerMergeNote(outcome).rfind(" (merging the overlays of fragments past "
                                          "lance.compaction.max_overlays_per_fragment failed, the change stays "
                                          "committed: writing '",
                                          0),
            0u)
      << LayerMergeNote(outcome);
  EXPECT_EQ(Dataset::Open(ds->uri())->CountRows("a = 777"), 1u);
  EXPECT_EQ(Fragment(*Dataset::Open(ds->uri()), 0).overlays_size(), 11);
}

// Optimize commits each step on its own: when indexing fails after the overlays were
// folded, the error says what was committed and what the index covers now.
TEST_P(CompactionTest, AnOptimizeFailingAfterACommitSaysWhatItCommitted) {
  auto ds = Create()->CreateIndex("a", IndexType::kBTree)->Update({{"a", "a + 100"}}, "id < 5");
  auto faulty = std::make_shared<FaultyStore>();
  faulty->FailWritesUnder("/_indices/");
  auto through = table::MakeDataset(table::LoadState(faulty, Session::Default()->caches(), ds->uri(), std::nullopt));
  auto error = ThrownError([&] { through->Optimize(); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), ErrorKind::kIo);
  const std::string message = error->what();
  const std::string head = fmt::format("optimize of '{}' compacted the overlays of 1 fragments (version {}), then "
                                       "indexing failed: writing '{}/_indices/",
                                       ds->uri(), ds->version() + 1, ds->uri());
  const std::string tail = ": No space left on device; index a_idx now covers 0 of 1 fragments; run `lancelet "
                           "optimize` again to finish";
  EXPECT_EQ(message.substr(0, head.size()), head) << message;
  ASSERT_GE(message.size(), tail.size());
  EXPECT_EQ(message.substr(message.size() - tail.size()), tail) << message;
  auto latest = Dataset::Open(ds->uri());
  EXPECT_EQ(latest->version(), ds->version() + 1);
  EXPECT_EQ(latest->CountRows("a >= 100"), 5u);
  EXPECT_EQ(latest->Optimize()->ListIndices()[0].unindexed_fragments, 0u);  // and again finishes it
}

TEST_P(CompactionTest, TheBoundSkipsAFragmentACompactionRewroteMeanwhile) {
  auto ds = Create(100, 50);  // two small fragments, which compaction merges into one
  for (int i = 0; i < 11; ++i)
    ds = ds->Update({{"a", std::to_string(100 + i)}}, "id = " + std::to_string(i), nullptr, UpdateMode::kOverlay);
  // Bounding again from the version that had 11 overlays, after a compaction folded them:
  // the merge loses the race, finds fragment 0 rewritten, and has nothing left to do.
  auto stale = Dataset::Open(ds->uri(), ds->version() - 1);
  ASSERT_EQ(Fragment(*stale, 0).overlays_size(), 11);
  OptimizeOptions o;
  o.target_rows_per_fragment = 1000;
  auto compacted = ds->Optimize(o);
  ASSERT_EQ(table::StateOf(compacted).FindFragment(0), nullptr);
  auto bounded = table::BoundOverlayLayers(stale);
  EXPECT_EQ(bounded->version(), stale->version());
  EXPECT_EQ(Dataset::Open(ds->uri())->version(), compacted->version());
}

TEST(OverlayBound, TheTableConfigKeySetsOrLiftsIt) {
  lance::table::Manifest m;
  EXPECT_EQ(table::MaxOverlaysPerFragment(m), 10u);
  (*m.mutable_config())["lance.compaction.max_overlays_per_fragment"] = "3";
  EXPECT_EQ(table::MaxOverlaysPerFragment(m), 3u);
  (*m.mutable_config())["lance.compaction.max_overlays_per_fragment"] = "none";
  EXPECT_EQ(table::MaxOverlaysPerFragment(m), std::nullopt);
  (*m.mutable_config())["lance.compaction.max_overlays_per_fragment"] = "0";
  auto error = ThrownError([&] { table::MaxOverlaysPerFragment(m); });
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(std::string(error->what()).find("lance.compaction.max_overlays_per_fragment is '0'"), std::string::npos);
}

TEST_P(CompactionTest, ThePlanNamesLayersCellsBytesVersionsAndStaleIndexRows) {
  auto ds = Create()->CreateIndex("a", IndexType::kBTree);       // v2
  ds = ds->Update({{"a", "1"}}, "id < 10")->Update({{"a", "2"}, {"b", "2"}}, "id < 5");  // v3, v4
  auto plan = ds->PlanOptimize();
  ASSERT_EQ(plan.size(), 1u);
  const auto& p = plan[0];
  EXPECT_EQ(p.action, CompactionAction::kFoldOverlays);
  EXPECT_EQ(p.overlays, 2u);
  EXPECT_EQ(p.covered_cells, 15u);  // a at 10 rows, b at 5
  EXPECT_EQ(p.versions_since_oldest_overlay, 1u);
  EXPECT_EQ(p.stale_index_rows, 10u);
  EXPECT_GT(p.overlay_bytes, 0u);
  EXPECT_GT(p.read_amplification, 1.0);
  std::string text = FormatOptimizePlan(plan);
  EXPECT_NE(text.find("fragment 0: fold overlays"), std::string::npos) << text;
  EXPECT_NE(text.find("2 overlay layers covering 15 cells"), std::string::npos) << text;
  EXPECT_NE(text.find("10 stale index rows"), std::string::npos) << text;
  EXPECT_EQ(Dataset::Open(ds->uri())->version(), ds->version());  // planning writes nothing
}

// Rows sorted by id (moving rows changes their order).
std::vector<std::string> Sorted(const std::string& jsonl) {
  auto lines = SplitLines(jsonl);
  std::sort(lines.begin(), lines.end(), [](const std::string& a, const std::string& b) {
    return std::stoll(a.substr(6)) < std::stoll(b.substr(6));  // {"id":N,...
  });
  return lines;
}

TEST_P(CompactionTest, EveryUpdateModeWritesTheSameValues) {
  std::vector<std::string> expected;
  for (UpdateMode mode : {UpdateMode::kOverlay, UpdateMode::kColumns, UpdateMode::kRows}) {
    auto ds = Create(100, 40, /*stable_row_ids=*/false, std::string(UpdateModeName(mode)) + ".lance");
    ds = ds->CreateIndex("a", IndexType::kBTree)->Update({{"b", "-1"}}, "id = 99");  // an older overlay
    UpdateMode chosen = UpdateMode::kAuto;
    uint64_t changed = 0;
    ds = ds->Update({{"a", "a * 100"}, {"s", "NULL"}}, "id % 3 = 0", &changed, mode, &chosen);
    EXPECT_EQ(chosen, mode);
    EXPECT_EQ(changed, 34u);
    auto rows = Sorted(Values(*ds));
    if (expected.empty()) expected = rows;
    EXPECT_EQ(rows, expected) << UpdateModeName(mode);
    for (const char* where : {"a = 300", "a = 3", "a >= 900", "b = -1"})
      EXPECT_EQ(Rows(*ds, where), Rows(*ds, where, false)) << UpdateModeName(mode) << ": " << where;
    const auto& m = table::StateOf(ds).manifest;
    if (mode == UpdateMode::kColumns) {
      // Every touched fragment folded (the older overlay on b with it) and left the index on a.
      for (const auto& f : m.fragments()) EXPECT_EQ(f.overlays_size(), 0);
      EXPECT_EQ(m.reader_feature_flags() & table::kFlagDataOverlays, 0u);
      EXPECT_EQ(Covered(*ds, "a_idx"), std::vector<uint64_t>{});
    }
    if (mode == UpdateMode::kRows) {
      ASSERT_EQ(m.fragments_size(), 4);  // 3 with deletions, 1 new
      EXPECT_EQ(m.fragments(3).physical_rows(), 34u);
      EXPECT_EQ(m.fragments(0).deletion_file().num_deleted_rows(), 14u);
      EXPECT_EQ(Covered(*ds, "a_idx"), (std::vector<uint64_t>{0, 1, 2}));
      EXPECT_EQ(m.fragments(2).overlays_size(), 1);  // b at id 99 stays an overlay
    }
  }
}

TEST_P(CompactionTest, RowsAnUpdateMovesKeepTheirStableIds) {
  auto ds = Create(100, 50, /*stable_row_ids=*/true)->CreateIndex("b", IndexType::kBTree);
  auto ids = [](const Dataset& d) {
    std::map<int64_t, uint64_t> out;
    auto batch = d.NewScan().Columns({"id"}).WithRowId().ToBatch();
    for (int64_t r = 0; r < batch->num_rows(); ++r)
      out[batch->column(0)->values<int64_t>()[r]] = batch->column(1)->values<uint64_t>()[r];
    return out;
  };
  auto before = ids(*ds);
  ds = ds->Update({{"b", "b + 1000"}}, "id % 4 = 1", nullptr, UpdateMode::kRows);
  EXPECT_EQ(table::StateOf(ds).manifest.fragments_size(), 3);
  EXPECT_EQ(ids(*ds), before);
  EXPECT_EQ(table::StateOf(ds).manifest.next_row_id(), 100u);  // no new ids
  for (const char* where : {"b = 1005", "b = 5", "b >= 1000", "b < 10"})
    EXPECT_EQ(Rows(*ds, where), Rows(*ds, where, false)) << where;
  EXPECT_EQ(Values(*ds, "b = 1005"), "{\"id\":5,\"a\":5,\"b\":1005,\"s\":\"s5\"}\n");
}

TEST_P(CompactionTest, TheCostModelPicksByTheShareOfRowsAndColumnsChanged) {
  auto ds = Create(100, 50);
  UpdateMode chosen = UpdateMode::kAuto;
  ds = ds->Update({{"a", "1"}}, "id < 10", nullptr, UpdateMode::kAuto, &chosen);
  EXPECT_EQ(chosen, UpdateMode::kOverlay);  // 20% of the touched fragment
  ds = ds->Update({{"a", "2"}}, "", nullptr, UpdateMode::kAuto, &chosen);
  EXPECT_EQ(chosen, UpdateMode::kColumns);  // every row
  EXPECT_EQ(table::StateOf(ds).manifest.reader_feature_flags() & table::kFlagDataOverlays, 0u);
  ds = ds->CreateIndex("a", IndexType::kBTree);
  ds = ds->Update({{"a", "3"}}, "id < 35", nullptr, UpdateMode::kAuto, &chosen);
  EXPECT_EQ(chosen, UpdateMode::kOverlay);  // 70% of fragment 0, but a is indexed
  ds = ds->UpdateConfig({{"lancelet.update.mode", "rows"}});
  ds = ds->Update({{"b", "0"}}, "id = 1", nullptr, UpdateMode::kAuto, &chosen);
  EXPECT_EQ(chosen, UpdateMode::kRows);
  auto bad = ThrownError([&] { ds->UpdateConfig({{"lancelet.update.mode", "fast"}}); });
  ASSERT_TRUE(bad.has_value());
  EXPECT_STREQ(bad->what(), "table config lancelet.update.mode is 'fast': expected overlay, columns, rows or auto");
}

TEST(UpdateCostModel, AWideColumnMovesRowsBetweenTheBounds) {
  TempDir dir;
  // id int64 and a 32-float vector: the vector is 94% of a row.
  FixedWidthBuilder<int64_t> id(DataType::Int64());
  ListBuilder emb(DataType::FixedSizeList(DataType::Float32(), 32));
  auto& items = static_cast<FixedWidthBuilder<float>&>(emb.item_builder());
  for (int64_t i = 0; i < 100; ++i) {
    id.Append(i);
    for (int d = 0; d < 32; ++d) items.Append(float(i));
    emb.Append();
  }
  auto batch = RecordBatch::Make(std::make_shared<Schema>(std::vector<FieldPtr>{
                                     Field::Make("id", DataType::Int64()),
                                     Field::Make("emb", DataType::FixedSizeList(DataType::Float32(), 32))}),
                                 {id.Finish(), emb.Finish()});
  auto ds = Dataset::Write(dir.Join("v.lance"), {batch});
  std::string why;
  auto mode = [&](const std::string& where) {
    std::map<uint64_t, std::vector<uint32_t>> offsets;
    auto rows = ds->NewScan().Columns({"_rowaddr"}).Filter(where).ToBatch();
    for (int64_t r = 0; r < rows->num_rows(); ++r)
      offsets[0].push_back(uint32_t(rows->column(0)->values<uint64_t>()[r]));
    return table::ChooseUpdateMode(table::StateOf(ds), {1}, offsets, &why);
  };
  EXPECT_EQ(mode("id < 5"), UpdateMode::kOverlay) << why;   // 5%: the new fragment is not worth it
  EXPECT_EQ(mode("id < 30"), UpdateMode::kRows) << why;     // 30%
  EXPECT_EQ(why, "the SET columns are 94% of a row's bytes and 30% of the rows change");
  EXPECT_EQ(mode("id < 95"), UpdateMode::kColumns) << why;  // 95%: rewrite in place
  EXPECT_EQ(table::StateOf(ds->Update({{"emb", "emb"}}, "id < 30", nullptr)).manifest.fragments_size(), 2);
}

// lance.overlays.enabled (upstream's key): a dataset lancelet creates says true; one
// without the key (another writer's) gets no overlay from the cost model until it says
// true or already carries overlays; "false" wins over overlays already there.
TEST_P(CompactionTest, TheCostModelWritesOverlaysOnlyWhereTheyAreEnabled) {
  auto ds = Create(100, 50);
  EXPECT_EQ(table::StateOf(ds).manifest.config().at("lance.overlays.enabled"), "true");
  ds = ds->UpdateConfig({{"lance.overlays.enabled", std::nullopt}});  // as another writer leaves it
  UpdateMode chosen = UpdateMode::kAuto;
  std::string why;
  auto plan = [&](const char* where) {
    std::map<uint64_t, std::vector<uint32_t>> offsets;
    auto rows = ds->NewScan().Columns({"_rowaddr"}).Filter(where).ToBatch();
    for (int64_t r = 0; r < rows->num_rows(); ++r) {
      const uint64_t address = rows->column(0)->values<uint64_t>()[r];
      offsets[address >> 32].push_back(uint32_t(address));
    }
    return table::ChooseUpdateMode(table::StateOf(ds), {1}, offsets, &why);
  };
  EXPECT_EQ(plan("id < 2"), UpdateMode::kRows);  // 4% of the rows x a row is less than column a
  EXPECT_EQ(why, "lance.overlays.enabled is not true on this dataset");
  EXPECT_EQ(plan("id < 20"), UpdateMode::kColumns);  // 40% x a row is more than column a
  auto moved = ds->Update({{"a", "a + 1000"}}, "id < 2", nullptr, UpdateMode::kAuto, &chosen);
  EXPECT_EQ(chosen, UpdateMode::kRows);
  EXPECT_EQ(table::StateOf(moved).manifest.reader_feature_flags() & table::kFlagDataOverlays, 0u);
  EXPECT_EQ(OverlaysOffNotice(*ds, UpdateMode::kAuto, chosen, "t.lance"),
            "note: t.lance was updated by moving rows without data overlay files, which lance.overlays.enabled is "
            "not true for (so that readers without overlay support still read it); `lancelet config t.lance --set "
            "lance.overlays.enabled=true` lets UPDATE and MERGE write them");
  EXPECT_EQ(OverlaysOffNotice(*ds, UpdateMode::kRows, chosen, "t.lance"), "");  // the user chose
  EXPECT_EQ(Values(*moved, "id = 1"), "{\"id\":1,\"a\":1001,\"b\":1,\"s\":\"s1\"}\n");
  // The user asking for overlays gets them; then the dataset carries overlays and counts as enabled.
  ds = ds->Update({{"a", "a + 1"}}, "id = 3", nullptr, UpdateMode::kOverlay);
  // (ids 0 and 1 moved to a fragment of their own above; 10 and 11 are 4% of theirs)
  EXPECT_EQ(plan("id IN (10, 11)"), UpdateMode::kOverlay) << why;
  ds = ds->UpdateConfig({{"lance.overlays.enabled", "false"}});
  EXPECT_EQ(plan("id IN (10, 11)"), UpdateMode::kRows) << why;
  ds = ds->UpdateConfig({{"lance.overlays.enabled", "true"}});
  EXPECT_EQ(plan("id IN (10, 11)"), UpdateMode::kOverlay) << why;
  auto bad = ThrownError([&] { ds->UpdateConfig({{"lance.overlays.enabled", "yes"}}); });
  ASSERT_TRUE(bad.has_value());
  EXPECT_STREQ(bad->what(), "table config lance.overlays.enabled is 'yes': expected true or false");
}

INSTANTIATE_TEST_SUITE_P(FileVersions, CompactionTest, ::testing::Values("2.0", "2.1", "2.2"));

}  // namespace
}  // namespace lancelet::testing
