// Cleanup racing writers and itself, made deterministic: a writer holds a version that a
// forced cleanup removes before it commits, and cleanups fail at every delete.
//
// A writer that read version 1 while versions 2-4 committed and `cleanup --keep 1`
// removed 1-3 must never publish into the freed number 2 (put-if-absent would let it):
// its change lands after version 4, or it recomputes from version 4, or it fails in one
// line; the version hint never goes back.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "io/object_store.h"
#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/overlay_writer.h"
#include "support/faulty_store.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/deletions.h"
#include "table/index_section.h"
#include "table/manifest_store.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;

CleanupOptions ForcedKeep(uint64_t n) {
  CleanupOptions o;
  o.keep_versions = n;
  o.force = true;
  return o;
}

std::set<std::string> Files(const std::string& uri) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(uri))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), uri).string());
  return out;
}

std::string Hint(const std::string& uri) { return ReadFileToString(uri + "/_versions/latest_version_hint.json"); }

// Versions listed in the dataset directory.
std::vector<uint64_t> Versions(const std::string& uri) {
  std::vector<uint64_t> out;
  for (const auto& loc : table::ListManifests(*io::MakeLocalStore(), uri)) out.push_back(loc.version);
  return out;
}

class CleanupRaceTest : public ::testing::Test {
 protected:
  // Version 1: ids 0..99; versions 2-4: three updates of 'name'. Returns a handle on
  // version 1, and leaves versions 1-3 removed by a forced cleanup keeping 1.
  DatasetPtr StaleHandle() {
    uri_ = dir_.Join("t.lance");
    auto v1 = Dataset::Write(uri_, {IdNameBatch(0, 100)});
    auto latest = v1;
    for (const char* name : {"'a'", "'b'", "'c'"}) latest = latest->Update({{"name", name}}, "id < 10");
    EXPECT_EQ(latest->version(), 4u);
    EXPECT_EQ(latest->Cleanup(ForcedKeep(1)).versions_removed, 3u);
    EXPECT_EQ(Versions(uri_), std::vector<uint64_t>{4});
    return v1;
  }
  TempDir dir_;
  std::string uri_;
};

TEST_F(CleanupRaceTest, AnAppendLandsAfterTheLatestVersion) {
  auto stale = StaleHandle();
  auto next = stale->Append(std::vector<RecordBatchPtr>{IdNameBatch(100, 5)});
  EXPECT_EQ(next->version(), 5u);
  EXPECT_EQ(Versions(uri_), (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(Hint(uri_), "{\"version\":5}");
  auto latest = Dataset::Open(uri_);
  EXPECT_EQ(latest->version(), 5u);
  EXPECT_EQ(latest->CountRows(), 105u);
  EXPECT_EQ(latest->CountRows("name = 'c'"), 10u);  // version 4's change is kept
}

TEST_F(CleanupRaceTest, AnUpdateRecomputesFromTheLatestVersion) {
  auto stale = StaleHandle();
  uint64_t changed = 0;
  auto next = stale->Update({{"name", "name || '!'"}}, "id < 20", &changed);
  EXPECT_EQ(changed, 20u);
  EXPECT_EQ(next->version(), 5u);
  EXPECT_EQ(Hint(uri_), "{\"version\":5}");
  auto latest = Dataset::Open(uri_);
  EXPECT_EQ(latest->CountRows("name = 'c!'"), 10u);  // computed from version 4, not 1
  EXPECT_EQ(latest->CountRows("name LIKE '%!'"), Dataset::Open(uri_, 4)->CountRows("id < 20 AND name IS NOT NULL"));
}

TEST_F(CleanupRaceTest, ADeleteRecomputesFromTheLatestVersion) {
  auto stale = StaleHandle();
  uint64_t deleted = 0;
  auto next = stale->Delete("id < 4 OR name = 'c'", &deleted);
  EXPECT_EQ(deleted, 10u);  // on version 1, 4 rows: no row was named 'c'
  EXPECT_EQ(next->version(), 5u);
  EXPECT_EQ(Dataset::Open(uri_)->CountRows(), 90u);
}

// An index build from version 1 is built again from version 4.
TEST_F(CleanupRaceTest, AnIndexBuildIsRebuiltFromTheLatestVersion) {
  auto stale = StaleHandle();
  auto next = stale->CreateIndex("name", IndexType::kBitmap);
  EXPECT_EQ(next->version(), 5u);
  auto indexes = Dataset::Open(uri_)->ListIndices();
  ASSERT_EQ(indexes.size(), 1u);
  EXPECT_EQ(indexes[0].dataset_version, 4u);
  EXPECT_EQ(Dataset::Open(uri_)->CountRows("name = 'c'"), 10u);
}

// A blind overlay write (values given, nothing read) cannot tell what versions 2-3 did
// to its cells: it fails in one line and leaves nothing behind.
TEST_F(CleanupRaceTest, ABlindOverlayWriteFailsInOneLineAndLeavesNothing) {
  auto stale = StaleHandle();
  const auto before = Files(uri_);
  OverlayWriter writer(stale);
  FixedWidthBuilder<int64_t> values(DataType::Int64());
  values.Append(-1);
  writer.Set(0, "id", {0}, values.Finish());
  auto error = ThrownError([&] { writer.Commit(OverlayWriter::Options{}); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), ErrorKind::kConflict);
  EXPECT_EQ(std::string(error->what()),
            "DataOverlay on '" + uri_ +
                "' read version 1, but versions 2-3 after it were removed by a concurrent cleanup before it committed "
                "and cannot be checked for conflicts; nothing was committed: run it again (cleanup keeps versions "
                "superseded within the last hour unless --force)");
  EXPECT_EQ(Files(uri_), before);
}

TEST_F(CleanupRaceTest, TheHintNeverMovesBackwards) {
  StaleHandle();
  auto store = io::MakeLocalStore();
  table::WriteVersionHint(*store, uri_, 2);  // a slow writer of an older version
  EXPECT_EQ(Hint(uri_), "{\"version\":4}");
  // A hint naming a version that is not there is wrong, not newer.
  WriteStringToFile(uri_ + "/_versions/latest_version_hint.json", "{\"version\":99}");
  table::WriteVersionHint(*store, uri_, 4);
  EXPECT_EQ(Hint(uri_), "{\"version\":4}");
}

// The last gap: between a writer's final check and its put, another writer commits
// versions 2 and 3 and a forced cleanup keeping 1 would remove 1 and 2, freeing the
// number the writer is about to put. The cleanup's removals wait for the put (the
// writer holds _versions/ shared, the cleanup exclusive), so the put finds version 2
// taken and the append lands at 4. Without the lock it would publish an unreachable 2.
TEST_F(CleanupRaceTest, ACleanupWaitsForAWriterBetweenItsCheckAndItsPut) {
  uri_ = dir_.Join("t.lance");
  Dataset::Write(uri_, {IdNameBatch(0, 100)});
  auto staged = std::make_shared<FaultyStore>();
  std::thread cleaner;
  std::atomic<bool> cleaned{false};
  staged->BeforePutIfAbsent([&](const std::string& path) {
    if (cleaner.joinable() || !path.ends_with(".manifest")) return;
    auto other = Dataset::Open(uri_)->Update({{"name", "'a'"}}, "id < 10")->Update({{"name", "'b'"}}, "id < 10");
    EXPECT_EQ(other->version(), 3u);
    cleaner = std::thread([&] {
      Dataset::Open(uri_)->Cleanup(ForcedKeep(1));
      cleaned = true;
    });
    // Time for the cleanup to remove versions 1 and 2 if it could.
    for (int i = 0; i < 50 && !cleaned; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(cleaned) << "the cleanup removed versions while a writer was between its check and its put";
  });
  auto writer = table::MakeDataset(table::LoadState(staged, Session::Default()->caches(), uri_, std::nullopt));
  auto next = writer->Append(std::vector<RecordBatchPtr>{IdNameBatch(100, 5)});
  cleaner.join();
  EXPECT_EQ(next->version(), 4u);
  EXPECT_EQ(Versions(uri_), (std::vector<uint64_t>{3, 4}));
  auto latest = Dataset::Open(uri_);
  EXPECT_EQ(latest->version(), 4u);
  EXPECT_EQ(latest->CountRows(), 105u);
  EXPECT_EQ(latest->CountRows("name = 'b'"), 10u);
}

// Files under data/, _deletions/, _transactions/ and _indices/ that no listed version
// references, and cleanup journals.
std::vector<std::string> Leftovers(const std::string& uri) {
  auto store = io::MakeLocalStore();
  std::set<std::string> named;
  for (const auto& loc : table::ListManifests(*store, uri)) {
    auto state = table::LoadState(store, Session::Default()->caches(), uri, loc.version);
    const auto& m = state->manifest;
    named.insert("_transactions/" + m.transaction_file());
    for (const auto& f : m.fragments()) {
      for (const auto& file : f.files()) named.insert("data/" + file.path());
      for (const auto& o : f.overlays()) named.insert("data/" + o.data_file().path());
      if (f.has_deletion_file()) named.insert("_deletions/" + table::DeletionFileName(f.id(), f.deletion_file()));
    }
    for (const auto& index : state->indices.indices()) named.insert("_indices/" + table::UuidText(index.uuid().uuid()));
  }
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(uri)) {
    if (!e.is_regular_file()) continue;
    std::string relative = fs::relative(e.path(), uri).string();
    if (relative.find(".journal") != std::string::npos) {
      out.push_back(relative);
      continue;
    }
    std::string top = relative.substr(0, relative.find('/'));
    if (top == "_indices") relative = relative.substr(0, relative.find('/', top.size() + 1));
    if ((top == "data" || top == "_deletions" || top == "_transactions" || top == "_indices") && !named.count(relative))
      out.push_back(relative);
  }
  return out;
}

// A cleanup stopped at its k-th delete, for every k: every version left is whole (it
// reads), and a later cleanup with another rule finishes the removal, leaving no file
// that only removed versions used.
TEST(CleanupJournal, AStoppedCleanupLeavesVersionsWholeAndTheNextFinishesIt) {
  TempDir dir;
  const std::string source = dir.Join("source.lance");
  auto ds = Dataset::Write(source, {IdNameBatch(0, 100)});
  ds = ds->Update({{"name", "'a'"}}, "id < 10")->Delete("id = 5")->CreateIndex("id", IndexType::kBTree);
  ds = ds->Update({{"name", "'b'"}}, "id < 3")->Optimize()->Update({{"name", "'c'"}}, "id = 7");
  const uint64_t latest = ds->version();
  const std::map<uint64_t, uint64_t> rows = [&] {
    std::map<uint64_t, uint64_t> out;
    for (uint64_t v = 1; v <= latest; ++v) out[v] = Dataset::Open(source, v)->CountRows();
    return out;
  }();
  // How many deletes a whole cleanup keeping 2 makes.
  int deletes = 0;
  {
    const std::string copy = dir.Join("count.lance");
    fs::copy(source, copy, fs::copy_options::recursive);
    auto stats = Dataset::Open(copy)->Cleanup(ForcedKeep(2));
    deletes = int(stats.files_removed) + 1;  // and its journal
  }
  ASSERT_GT(deletes, 8);
  int stopped = 0;
  for (int k = 1; k <= deletes; ++k) {
    const std::string copy = dir.Join("copy" + std::to_string(k) + ".lance");
    fs::copy(source, copy, fs::copy_options::recursive);
    auto failing = std::make_shared<FaultyStore>();
    failing->FailDeletesFrom(k);
    auto error = ThrownError([&] { table::MakeDataset(table::LoadState(failing, Session::Default()->caches(), copy, std::nullopt))->Cleanup(ForcedKeep(2)); });
    stopped += error.has_value();
    for (uint64_t v : Versions(copy)) {
      auto read = ThrownError([&] { Dataset::Open(copy, v)->NewScan().ToBatch(); });
      EXPECT_FALSE(read.has_value()) << "stopped at delete " << k << ": version " << v << " is partly gone: "
                                     << read->what();
      EXPECT_EQ(Dataset::Open(copy, v)->CountRows(), rows.at(v)) << "delete " << k << ", version " << v;
    }
    // A later cleanup with another rule (keep 4) finishes the first one's files.
    Dataset::Open(copy)->Cleanup(ForcedKeep(4));
    EXPECT_EQ(Leftovers(copy), std::vector<std::string>{}) << "stopped at delete " << k;
    EXPECT_EQ(Dataset::Open(copy)->CountRows("name = 'c'"), 1u);
  }
  EXPECT_EQ(stopped, deletes);
}

}  // namespace
}  // namespace lancelet::testing
