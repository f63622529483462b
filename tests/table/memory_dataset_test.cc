// A dataset at a memory:// URI lives in the process's in-memory store: every operation
// (write, append, overlay update, delete, index, compaction, cleanup, time travel) works
// there as on disk, and nothing reaches the file system, which proves that these paths
// read and write through the store alone.
#include <filesystem>

#include <gtest/gtest.h>

#include "io/object_store.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "support/sample_batches.h"
#include "table/manifest_store.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;

TEST(MemoryDataset, EveryOperationWorksThroughTheStoreAlone) {
  const std::string uri = "memory://memory_dataset_test/t.lance";
  auto v1 = Dataset::Write(uri, {IdNameBatch(0, 100)});
  EXPECT_EQ(v1->version(), 1u);
  auto ds = Dataset::Open(uri + "/");
  ds = ds->Append(std::vector<RecordBatchPtr>{IdNameBatch(100, 50)});
  ds = ds->Update({{"name", "'changed'"}}, "id < 10", nullptr, UpdateMode::kOverlay);
  ds = ds->Delete("id >= 140");
  ds = ds->CreateIndex("id", IndexType::kBTree);
  EXPECT_EQ(ds->version(), 5u);
  EXPECT_EQ(ds->CountRows(), 140u);
  EXPECT_EQ(ds->CountRows("name = 'changed'"), 10u);
  EXPECT_EQ(ds->CountRows("id = 120"), 1u);  // through the index

  ds = ds->Optimize();
  EXPECT_EQ(ds->CountRows(), 140u);
  EXPECT_EQ(ds->CountRows("name = 'changed'"), 10u);
  CleanupOptions keep_latest;
  keep_latest.keep_versions = 1;
  keep_latest.force = true;
  EXPECT_GT(ds->Cleanup(keep_latest).versions_removed, 0u);
  std::vector<uint64_t> versions;
  for (const auto& loc : table::ListManifests(*io::DefaultMemoryStore(), uri)) versions.push_back(loc.version);
  EXPECT_EQ(versions, std::vector<uint64_t>{ds->version()});
  auto reopened = Dataset::Open(uri);
  EXPECT_EQ(reopened->version(), ds->version());
  EXPECT_EQ(reopened->CountRows("name = 'changed'"), 10u);
  EXPECT_THROW(Dataset::Open(uri, 1), Error);  // cleaned up

  EXPECT_FALSE(fs::exists("memory:"));
  EXPECT_FALSE(fs::exists("memory:/memory_dataset_test"));
  // Another name is another tree.
  EXPECT_THROW(Dataset::Open("memory://memory_dataset_test/other.lance"), Error);
}

}  // namespace
}  // namespace lancelet::testing
