// FoldCommit: the one Update a fold, an UPDATE's column rewrite and a merge of overlays
// commit.
#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/compaction.h"
#include "table/dataset_state.h"

namespace lancelet::table {
namespace {

TEST(FoldCommitTest, AFoldModifiesTheFieldsOfItsNewBaseFileAMergeNone) {
  testing::TempDir dir;
  WriteOptions options;
  options.max_rows_per_file = 5;
  auto ds = Dataset::Write(dir.Join("t.lance"), {testing::IdABBatch(10)}, options);  // ids 0 id, 1 a, 2 b
  ds = ds->Update({{"a", "1"}}, "id IN (1, 6)", nullptr, UpdateMode::kOverlay);
  ds = ds->Update({{"b", "2"}}, "id IN (2, 7)", nullptr, UpdateMode::kOverlay);
  const DatasetState& s = table::StateOf(ds);
  AttemptFiles attempt(*s.store);
  lance::table::Transaction t;
  FoldCommit fold(t);
  fold.AddFolded(FoldOverlays(s, s.manifest.fragments(0), attempt));
  auto merged = MergeOverlayRun(s, s.manifest.fragments(1), {}, attempt);
  EXPECT_EQ(merged.overlays_removed, 1u);
  fold.AddMerged(std::move(merged.fragment));
  EXPECT_TRUE(fold.Finish());
  EXPECT_EQ(t.update().update_mode(), lance::table::Transaction::REWRITE_COLUMNS);
  EXPECT_EQ(std::vector<uint32_t>(t.update().fields_modified().begin(), t.update().fields_modified().end()),
            (std::vector<uint32_t>{1, 2}));
  ASSERT_EQ(t.update().updated_fragments_size(), 2);
  EXPECT_EQ(t.update().updated_fragments(0).overlays_size(), 0);
  EXPECT_EQ(t.update().updated_fragments(1).overlays_size(), 1);

  lance::table::Transaction empty;
  EXPECT_FALSE(FoldCommit(empty).Finish());
  EXPECT_EQ(empty.update().fields_modified_size(), 0);
}

}  // namespace
}  // namespace lancelet::table
