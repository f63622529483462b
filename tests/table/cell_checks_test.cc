// One set of checks on the cells a writer sets: OverlayWriter and the MERGE/UPDATE commit
// refuse the same cells with the same words, only the prefix naming the writer.
#include "table/cell_checks.h"

#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "lancelet/overlay_writer.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/merge_commit.h"

namespace lancelet::table {
namespace {

using testing::IdABBatch;
using testing::PickRows;
using testing::ThrownError;

TEST(CellChecksTest, OverlayWriterAndMergeRefuseTheSameCellsInTheSameWords) {
  testing::TempDir dir;
  auto ds = Dataset::Write(dir.Uri("t.lance"), {IdABBatch(10)});
  const ArrayPtr two = PickRows(*IdABBatch(2), 1, {0, 1});
  auto merge = [&](std::vector<uint32_t> offsets) {
    MergeChanges changes;
    changes.updates[0].push_back({"a", std::move(offsets), two});
    return ThrownError([&] { CommitMerge(ds, changes); });
  };
  auto overlay = [&](std::vector<uint32_t> offsets) {
    return ThrownError([&] { OverlayWriter(ds).Set(0, "a", std::move(offsets), two); });
  };
  const std::string uri = ds->uri();
  for (const auto& [offsets, rest] : std::vector<std::pair<std::vector<uint32_t>, std::string>>{
           {{2, 1}, "offsets must be strictly increasing, but offset 1 follows 2 at position 1"},
           {{3, 10}, "offset 10 is at or beyond the fragment's 10 physical rows"}}) {
    auto by_merge = merge(offsets), by_overlay = overlay(offsets);
    ASSERT_TRUE(by_merge.has_value() && by_overlay.has_value());
    EXPECT_EQ(by_merge->kind(), ErrorKind::kInvalidArgument);
    EXPECT_EQ(by_overlay->kind(), ErrorKind::kInvalidArgument);
    EXPECT_EQ(std::string(by_merge->what()), "merge into '" + uri + "' fragment 0 column 'a': " + rest);
    EXPECT_EQ(std::string(by_overlay->what()), "overlay on '" + uri + "' fragment 0 column 'a': " + rest);
  }
  EXPECT_EQ(Dataset::Open(uri)->version(), 1u);
}

TEST(CellChecksTest, ALegacyDataFileIsRefusedAsNotSupported) {
  testing::TempDir dir;
  auto ds = Dataset::Write(dir.Uri("t.lance"), {IdABBatch(10)});
  lance::table::DataFragment legacy = table::StateOf(ds).manifest.fragments(0);
  legacy.mutable_files(0)->set_file_major_version(0);
  legacy.mutable_files(0)->set_file_minor_version(2);
  auto error = ThrownError([&] { CheckTakesOverlays(table::StateOf(ds), "merge into", legacy); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), ErrorKind::kNotSupported);
  EXPECT_EQ(std::string(error->what()),
            "merge into '" + ds->uri() +
                "': fragment 0 uses the legacy Lance file format (0.1/0.2), which takes no overlays; migrate the "
                "dataset by writing a copy with data_storage_version 2.0 or newer (lancelet: scan --format arrow, "
                "then create --from)");
  EXPECT_FALSE(ThrownError([&] { CheckTakesOverlays(table::StateOf(ds), "merge into", table::StateOf(ds).manifest.fragments(0)); })
                   .has_value());
}

}  // namespace
}  // namespace lancelet::table
