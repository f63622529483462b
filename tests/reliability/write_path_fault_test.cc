// The one write path under faults: a write failing at any step of a read-modify-write
// (after each file it wrote, at the publish of its manifest) leaves the dataset at its
// last committed version, readable, with no file of the failed attempt behind; a failure
// after the publish (the best-effort version hint) leaves the change committed.
#include <filesystem>
#include <functional>
#include <iostream>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "lancelet/merge_insert.h"
#include "support/faulty_store.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/manifest_store.h"
#include "table/merge_commit.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;

// Every regular file under `dir`, relative to it.
std::set<std::string> FilesUnder(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) out.insert(fs::relative(entry.path(), dir).string());
  return out;
}

// 100 rows (id, a = id % 10, b = id) in two fragments of 50, a BTree index on a, and two
// overlays on fragment 0 (a for ids 0-4, then for ids 0-2): version 4.
DatasetPtr MakeBase(const std::string& uri) {
  WriteOptions options;
  options.max_rows_per_file = 50;
  auto ds = Dataset::Write(uri, {IdABBatch(100)}, options)->CreateIndex("a", IndexType::kBTree);
  ds = ds->Update({{"a", "100"}}, "id < 5", nullptr, UpdateMode::kOverlay);
  return ds->Update({{"a", "200"}}, "id < 3", nullptr, UpdateMode::kOverlay);
}

OptimizeOptions OneStep(bool rewrite_rows, bool merge_overlays) {
  OptimizeOptions options;
  options.rewrite_rows = rewrite_rows;
  options.merge_overlays_instead_of_fold = merge_overlays;
  options.optimize_indices = false;
  return options;
}

struct Operation {
  const char* name;
  std::function<DatasetPtr(const DatasetPtr&)> run;  // one commit on the dataset given
  // Commits run first, through the plain store (their version is the operation's start).
  std::function<DatasetPtr(const DatasetPtr&)> prepare = [](const DatasetPtr& d) { return d; };
};

std::vector<Operation> Operations() {
  return {
      {"append", [](const DatasetPtr& d) { return d->Append({IdABBatch(10)}); }},
      {"delete", [](const DatasetPtr& d) { return d->Delete("id % 7 = 0"); }},
      {"update (overlay)",
       [](const DatasetPtr& d) { return d->Update({{"b", "-b"}}, "id < 60", nullptr, UpdateMode::kOverlay); }},
      {"update (columns)",
       [](const DatasetPtr& d) { return d->Update({{"a", "a + 1"}}, "id < 60", nullptr, UpdateMode::kColumns); }},
      {"update (rows)",
       [](const DatasetPtr& d) { return d->Update({{"b", "0"}}, "id < 60", nullptr, UpdateMode::kRows); }},
      {"merge",
       [](const DatasetPtr& d) {
         table::MergeChanges changes;
         changes.updates[1].push_back({"a", {0, 1}, PickRows(*IdABBatch(2), 1, {0, 1})});
         changes.deletes[0] = {10, 11};
         changes.inserts.push_back(IdABBatch(3));
         return table::CommitMerge(d, changes);
       }},
      {"fold", [](const DatasetPtr& d) { return d->Optimize(OneStep(false, false)); }},
      {"merge overlays", [](const DatasetPtr& d) { return d->MergeOverlays(0); }},
      {"rewrite", [](const DatasetPtr& d) { return d->Optimize(OneStep(true, false)); }},
      {"index build", [](const DatasetPtr& d) { return d->CreateIndex("b", IndexType::kBitmap); }},
      {"index optimize", [](const DatasetPtr& d) { return d->OptimizeIndices(); },
       [](const DatasetPtr& d) { return d->Append({IdABBatch(10)}); }},
      {"merge insert",
       [](const DatasetPtr& d) {
         // ids 50..99 matched (updated), 100..104 inserted, 9, 19, ..., 49 deleted by source.
         MergeInsertOptions options;
         options.on = {"id"};
         options.when_matched_update_all = true;
         options.when_not_matched_insert_all = true;
         options.when_not_matched_by_source_delete = true;
         options.by_source_condition = "id % 10 = 9";
         return MergeInsert(d, {IdABBatch(105)->Slice(50, 55)}, options).dataset;
       }},
      {"restore", [](const DatasetPtr& d) { return d->Checkout(2)->Restore(); }},
      {"add columns", [](const DatasetPtr& d) { return d->AddColumns({{"c", "a * 2"}}); }},
      {"drop columns", [](const DatasetPtr& d) { return d->DropColumns({"b"}); }},
      {"alter columns",
       [](const DatasetPtr& d) { return d->AlterColumns({{"b", std::string("b2"), std::nullopt}}); }},
      {"config", [](const DatasetPtr& d) { return d->UpdateConfig({{"lancelet.test", std::string("1")}}); }},
  };
}

TEST(WritePathFaultTest, AFailureAtAnyWriteLeavesTheLastCommittedVersionAndNoFileOfTheAttempt) {
  TempDir dir;
  const std::string base_uri = dir.Join("base.lance");
  const auto base = MakeBase(base_uri);
  const uint64_t base_version = base->version();
  const uint64_t base_rows = base->CountRows();
  ASSERT_EQ(base_version, 4u);
  int failures = 0;
  for (const auto& op : Operations()) {
    for (int allowed = 0;; ++allowed) {
      SCOPED_TRACE(fmt::format("{}, failing after {} writes", op.name, allowed));
      const std::string uri = dir.Join(fmt::format("{}-{}.lance", failures, allowed));
      fs::copy(base_uri, uri, fs::copy_options::recursive);
      auto start = op.prepare(Dataset::Open(uri));
      const auto before = FilesUnder(uri);
      const uint64_t before_version = start->version();
      const uint64_t before_rows = start->CountRows();

      auto faulty = std::make_shared<FaultyStore>();
      faulty->FailWritesUnder(uri, allowed);
      auto through = table::MakeDataset(table::LoadState(faulty, Session::Default()->caches(), uri, std::nullopt));
      DatasetPtr next;
      auto error = ThrownError([&] {
        next = op.run(through);
      });
      auto latest = Dataset::Open(uri);
      if (error) {
        ++failures;
        EXPECT_NE(std::string(error->what()).find("No space left on device"), std::string::npos) << error->what();
        EXPECT_EQ(latest->version(), before_version);
        EXPECT_EQ(latest->CountRows(), before_rows);
        EXPECT_EQ(latest->NewScan().ToBatch()->num_rows(), int64_t(before_rows));
        EXPECT_EQ(FilesUnder(uri), before);
        continue;
      }
      // Enough writes for every file and the manifest: the only one left to fail is the
      // version hint, after the publish, which is best effort.
      EXPECT_EQ(latest->version(), before_version + 1);
      EXPECT_EQ(next->version(), before_version + 1);
      EXPECT_EQ(latest->NewScan().ToBatch()->num_rows(), int64_t(latest->CountRows()));
      EXPECT_GT(allowed, 1) << "a commit writes at least its transaction and its manifest";
      std::cout << "[figures] " << op.name << ": " << allowed
                << " runs failing at each write up to the manifest, then committed\n";
      break;
    }
  }
  EXPECT_GT(failures, 30);
  EXPECT_EQ(Dataset::Open(base_uri)->version(), base_version);
  EXPECT_EQ(Dataset::Open(base_uri)->CountRows(), base_rows);
}

// A tag is one file beside the versions: a create or an update that fails to write it
// leaves the tags as they were.
TEST(WritePathFaultTest, AFailedTagWriteLeavesTheTagsAsTheyWere) {
  TempDir dir;
  const std::string uri = dir.Join("tags.lance");
  MakeBase(uri)->CreateTag("kept", 2);
  auto faulty = std::make_shared<FaultyStore>();
  auto through = table::MakeDataset(table::LoadState(faulty, Session::Default()->caches(), uri, std::nullopt));
  const auto before = FilesUnder(uri);
  faulty->FailWritesUnder(uri, 0);
  auto error = ThrownError([&] { through->CreateTag("new", 3); });
  ASSERT_TRUE(error);
  EXPECT_NE(std::string(error->what()).find("No space left on device"), std::string::npos) << error->what();
  error = ThrownError([&] { through->UpdateTag("kept", 3); });
  ASSERT_TRUE(error);
  EXPECT_EQ(FilesUnder(uri), before);
  auto tags = Dataset::Open(uri)->ListTags();
  ASSERT_EQ(tags.size(), 1u);
  EXPECT_EQ(tags[0].name, "kept");
  EXPECT_EQ(tags[0].version, 2u);

  faulty->FailWritesUnder(uri, 2);  // enough for both
  through->CreateTag("new", 3);
  through->UpdateTag("kept", 4);
  tags = Dataset::Open(uri)->ListTags();
  ASSERT_EQ(tags.size(), 2u);
  EXPECT_EQ(tags[0].name, "kept");
  EXPECT_EQ(tags[0].version, 4u);
  EXPECT_EQ(tags[1].name, "new");
  EXPECT_EQ(tags[1].version, 3u);
}

}  // namespace
}  // namespace lancelet::testing
