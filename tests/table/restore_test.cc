// Dataset::Restore: an old version made the latest again through the commit path.

#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"

namespace lancelet {
namespace {

using testing::IdNameBatch;
using testing::IdRange;
using testing::ScanIds;
using testing::TempDir;

std::string NameOf(const DatasetPtr& ds, int64_t id) {
  auto batch = ds->NewScan().Columns({"name"}).Filter("id = " + std::to_string(id)).ToBatch();
  EXPECT_EQ(batch->num_rows(), 1);
  const auto& col = batch->column("name");
  return std::string(col->GetView(0));
}

class RestoreTest : public ::testing::Test {
 protected:
  // v1: ids 0..19 in two fragments; v2: 0..2 deleted; v3: id 5 renamed by an overlay;
  // v4: a BTree on id; v5: ids 20..29 appended (fragment 2); v6: ids >= 10 deleted.
  void SetUp() override {
    WriteOptions o;
    o.max_rows_per_file = 10;
    auto ds = Dataset::Write(uri_, {IdNameBatch(0, 20)}, o);
    ds = ds->Delete("id < 3");
    ds = ds->Update({{"name", "'five'"}}, "id = 5", nullptr, UpdateMode::kOverlay);
    ds = ds->CreateIndex("id", IndexType::kBTree);
    ds = ds->Append({IdNameBatch(20, 10)});
    latest_ = ds->Delete("id >= 10");
    ASSERT_EQ(latest_->version(), 6u);
  }
  TempDir dir_;
  std::string uri_ = dir_.Uri("ds.lance");
  DatasetPtr latest_;
};

TEST_F(RestoreTest, TheOldVersionsRowsOverlaysDeletionsAndIndexesComeBack) {
  auto restored = Dataset::Open(uri_, 4)->Restore();
  EXPECT_EQ(restored->version(), 7u);
  EXPECT_EQ(ScanIds(restored), IdRange(3, 20));
  EXPECT_EQ(NameOf(restored, 5), "five");
  EXPECT_EQ(NameOf(restored, 6), "n6");
  auto indexes = restored->ListIndices();
  ASSERT_EQ(indexes.size(), 1u);
  EXPECT_EQ(indexes[0].name, "id_idx");
  EXPECT_EQ(indexes[0].dataset_version, 3u);
  EXPECT_EQ(restored->Explain("id = 12").find("id_idx") != std::string::npos, true);
  EXPECT_EQ(ScanIds(Dataset::Open(uri_)), IdRange(3, 20));
  EXPECT_EQ(restored->ListVersions().back().operation, "Restore");
  // The versions in between stay as they were.
  EXPECT_EQ(ScanIds(restored->Checkout(6)), IdRange(3, 10));
  EXPECT_EQ(ScanIds(restored->Checkout(5)).size(), 27u);
}

TEST_F(RestoreTest, IdsGivenOutAfterTheOldVersionAreNotGivenAgain) {
  auto restored = Dataset::Open(uri_, 2)->Restore();
  EXPECT_EQ(table::StateOf(restored).manifest.max_fragment_id(), 2u);  // fragment 2 came in v5
  auto appended = restored->Append({IdNameBatch(100, 3)});
  const auto& fragments = table::StateOf(appended).manifest.fragments();
  ASSERT_EQ(fragments.size(), 3);
  EXPECT_EQ(fragments[2].id(), 3u);
  auto ids = ScanIds(appended);
  EXPECT_EQ(ids.size(), 20u);
  EXPECT_EQ(ids.back(), 102);
}

TEST_F(RestoreTest, RestoringTheLatestVersionCommitsTheSameContent) {
  auto restored = latest_->Restore();
  EXPECT_EQ(restored->version(), 7u);
  EXPECT_EQ(ScanIds(restored), ScanIds(latest_));
}

TEST_F(RestoreTest, AWriterThatReadBeforeTheRestoreFails) {
  auto stale = Dataset::Open(uri_);
  Dataset::Open(uri_, 1)->Restore();
  try {
    stale->Delete("id = 4");
    FAIL() << "a delete computed on version 6 committed over a restore";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kConflict);
    EXPECT_NE(std::string(e.what()).find("conflicting Restore"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ScanIds(Dataset::Open(uri_)), IdRange(0, 20));
}

TEST_F(RestoreTest, ARestoreAfterNewerCommitsStillRestoresTheOldContent) {
  auto old = Dataset::Open(uri_, 1);
  latest_->Append({IdNameBatch(50, 2)});  // version 7
  auto restored = old->Restore();
  EXPECT_EQ(restored->version(), 8u);
  EXPECT_EQ(ScanIds(restored), IdRange(0, 20));
}

}  // namespace
}  // namespace lancelet
