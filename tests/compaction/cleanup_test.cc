// Cleanup of old versions: what goes (versions, and files only they use), what never goes
// (anything a kept version uses: overlays as much as base files; tagged versions; the
// latest), and unreferenced files by age.
#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/deletions.h"
#include "table/index_section.h"
#include "table/manifest_store.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;

// Every file under the dataset, relative to it.
std::set<std::string> Files(const std::string& ds) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(ds))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), ds).string());
  return out;
}

uint64_t Bytes(const std::string& ds, const std::set<std::string>& files) {
  uint64_t sum = 0;
  for (const auto& f : files) sum += fs::file_size(ds + "/" + f);
  return sum;
}

// Files the version uses, relative to the dataset.
std::set<std::string> Used(const Dataset& ds) {
  std::set<std::string> out;
  for (const auto& f : table::StateOf(ds).manifest.fragments()) {
    for (const auto& file : f.files()) out.insert("data/" + file.path());
    for (const auto& o : f.overlays()) out.insert("data/" + o.data_file().path());
    if (f.has_deletion_file()) out.insert("_deletions/" + table::DeletionFileName(f.id(), f.deletion_file()));
  }
  return out;
}

class CleanupTest : public ::testing::Test {
 protected:
  DatasetPtr Create() { return Dataset::Write(dir_.Join("t.lance"), {IdNameBatch(0, 100)}); }
  // Forced: the versions these tests make are seconds old (RecentVersionsStayUnlessForced).
  static CleanupOptions Keep(uint64_t n) {
    CleanupOptions o;
    o.keep_versions = n;
    o.force = true;
    return o;
  }
  TempDir dir_;
};

// Blob v2 sidecars (data/<stem>/*.blob) live and die with their data file data/<stem>.lance:
// a kept file keeps its sidecar directory even when unverified files go, and a removed
// file takes its sidecars and their directory with it.
TEST_F(CleanupTest, BlobSidecarsGoWithTheirDataFile) {
  const auto blob_type =
      DataType::Struct({Field::Make("data", DataType::LargeBinary()), Field::Make("uri", DataType::Utf8())});
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("blob", blob_type, true, {{"ARROW:extension:name", "lance.blob.v2"}})});
  auto rows = [&](char fill) {
    Scalar packed{blob_type, std::vector<Scalar>{{DataType::LargeBinary(), std::string(100 * 1024, fill)},
                                                 Scalar::Null(DataType::Utf8())}};
    return std::vector<RecordBatchPtr>{RecordBatch::Make(schema, {MakeArray(blob_type, {packed})})};
  };
  const std::string path = dir_.Join("blobs.lance");
  Dataset::Write(path, rows('a'));
  const auto first = Files(path);
  WriteOptions overwrite;
  overwrite.mode = WriteMode::kOverwrite;
  auto ds = Dataset::Write(path, rows('b'), overwrite);
  std::set<std::string> second;
  for (const auto& f : Files(path))
    if (!first.count(f) && f.rfind("data/", 0) == 0) second.insert(f);
  ASSERT_EQ(second.size(), 2u);  // the data file and its one sidecar

  CleanupOptions o = Keep(1);
  o.delete_unverified = true;
  ds->Cleanup(o);
  std::set<std::string> data_left;
  for (const auto& f : Files(path))
    if (f.rfind("data/", 0) == 0) data_left.insert(f);
  EXPECT_EQ(data_left, second);
  std::set<std::string> dirs;
  for (const auto& e : fs::directory_iterator(path + "/data"))
    if (e.is_directory()) dirs.insert(e.path().filename().string());
  EXPECT_EQ(dirs.size(), 1u);
  EXPECT_EQ(Dataset::Open(path)->CountRows(), 1u);

  // Left by killed writers: a sidecar directory whose data file never landed, and a
  // temporary file. Both are unverified, and go.
  fs::create_directories(path + "/data/0101abcd");
  WriteStringToFile(path + "/data/0101abcd/10000000000000000000000000000000.blob", "orphan");
  WriteStringToFile(path + "/data/0101abcd.lance.tmp-7", "partial");
  ds->Cleanup(o);
  data_left.clear();
  for (const auto& f : Files(path))
    if (f.rfind("data/", 0) == 0) data_left.insert(f);
  EXPECT_EQ(data_left, second);
  EXPECT_FALSE(fs::exists(path + "/data/0101abcd"));
}

TEST_F(CleanupTest, LiveOverlayFilesAreKeptLikeBaseFiles) {
  auto ds = Create()->Update({{"name", "'a'"}}, "id < 10")->Update({{"name", "'b'"}}, "id = 3");
  auto rows = ds->NewScan().ToBatch();
  auto stats = ds->Cleanup(Keep(1));
  EXPECT_EQ(stats.versions_removed, 2u);
  auto latest = Dataset::Open(ds->uri());
  for (const auto& used : Used(*latest)) EXPECT_TRUE(fs::exists(ds->uri() + "/" + used)) << used;
  EXPECT_TRUE(latest->NewScan().ToBatch()->Equals(*rows));
  EXPECT_EQ(latest->CountRows("name = 'b'"), 1u);
  auto gone = ThrownError([&] { Dataset::Open(ds->uri(), 1); });
  ASSERT_TRUE(gone.has_value());
  EXPECT_EQ(gone->kind(), ErrorKind::kNotFound);
}

TEST_F(CleanupTest, FilesOnlyRemovedVersionsUseGoWithThem) {
  auto ds = Create()->Update({{"name", "'a'"}}, "id < 10");          // v2: an overlay
  ds = ds->Delete("id = 5");                                         // v3: a deletion file
  ds = ds->CreateIndex("id", IndexType::kBTree);                     // v4
  ds = ds->DropIndex("id_idx");                                      // v5
  ds = ds->Optimize();                                               // v6: the overlay folded
  auto before = Files(ds->uri());
  const uint64_t bytes_before = Bytes(ds->uri(), before);
  auto stats = ds->Cleanup(Keep(1));
  EXPECT_EQ(stats.versions_removed, 5u);
  auto after = Files(ds->uri());
  // Left: the latest manifest, its transaction, the version hint and its data files.
  std::set<std::string> expected = Used(*ds);
  for (const auto& f : after)
    if (f.rfind("_versions/", 0) == 0 || f.rfind("_transactions/", 0) == 0) expected.insert(f);
  EXPECT_EQ(after, expected);
  EXPECT_EQ(std::count_if(after.begin(), after.end(), [](const auto& f) { return f.rfind("_transactions/", 0) == 0; }), 1);
  EXPECT_FALSE(fs::exists(ds->uri() + "/_indices") && !fs::is_empty(ds->uri() + "/_indices"));
  EXPECT_EQ(stats.bytes_freed, bytes_before - Bytes(ds->uri(), after));
  EXPECT_EQ(stats.files_removed + after.size(), before.size());
  EXPECT_EQ(Dataset::Open(ds->uri())->CountRows(), 99u);
}

TEST_F(CleanupTest, ADryRunListsTheSameAndRemovesNothing) {
  auto ds = Create()->Update({{"name", "'a'"}}, "id < 10")->Optimize();
  auto before = Files(ds->uri());
  CleanupOptions o = Keep(1);
  o.dry_run = true;
  auto dry = ds->Cleanup(o);
  EXPECT_EQ(Files(ds->uri()), before);
  EXPECT_GT(dry.files_removed, 0u);
  auto real = ds->Cleanup(Keep(1));
  EXPECT_EQ(real.removed, dry.removed);
  EXPECT_EQ(real.bytes_freed, dry.bytes_freed);
  EXPECT_EQ(dry.removed.front().rfind("_versions/", 0), 0u);  // manifests first
}

TEST_F(CleanupTest, TaggedVersionsAndTheLatestAreKept) {
  auto ds = Create()->Update({{"name", "'a'"}}, "id < 10")->Update({{"name", "'b'"}}, "id < 10");
  fs::create_directories(ds->uri() + "/_refs/tags");
  WriteStringToFile(ds->uri() + "/_refs/tags/first.json", "{\"version\": 2, \"manifest_size\": 100}");
  auto stats = ds->Cleanup(Keep(1));
  EXPECT_EQ(stats.versions_removed, 1u);
  auto tagged = Dataset::Open(ds->uri(), 2);
  EXPECT_EQ(tagged->CountRows("name = 'a'"), 10u);
  EXPECT_EQ(Dataset::Open(ds->uri())->CountRows("name = 'b'"), 10u);
}

TEST_F(CleanupTest, AnAgeKeepsRecentVersions) {
  auto ds = Create()->Update({{"name", "'a'"}}, "id < 10");
  CleanupOptions o;
  o.older_than_seconds = 3600;
  o.force = true;
  EXPECT_EQ(ds->Cleanup(o).versions_removed, 0u);
  o.keep_versions = 1;  // both must agree
  EXPECT_EQ(ds->Cleanup(o).versions_removed, 0u);
}

// A version superseded within the last hour may still be read by a running scan or be a
// running writer's read version: it stays unless forced, and the stats say so.
TEST_F(CleanupTest, RecentVersionsStayUnlessForced) {
  auto ds = Create()->Update({{"name", "'a'"}}, "id < 10")->Update({{"name", "'b'"}}, "id < 5");
  CleanupOptions o;
  o.keep_versions = 1;
  auto kept = ds->Cleanup(o);
  EXPECT_EQ(kept.versions_removed, 0u);
  EXPECT_EQ(kept.versions_kept_recent, 2u);
  EXPECT_EQ(kept.files_removed, 0u);
  EXPECT_EQ(Dataset::Open(ds->uri(), 1)->CountRows(), 100u);
  auto cli = RunLancelet({"cleanup", ds->uri(), "--keep", "1"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(cli.out,
            "freed 0 versions, 0 files, 0 bytes\n"
            "kept 2 versions superseded within the last hour: a scan may still read them and a writer may have read "
            "them; --force removes them (such a scan then fails, such a writer recomputes or fails)\n");
  auto forced = RunLancelet({"cleanup", ds->uri(), "--keep", "1", "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.out.find("freed 2 versions"), std::string::npos) << forced.out;
  EXPECT_EQ(Dataset::Open(ds->uri())->CountRows("name = 'b'"), 5u);
}

// A version whose successor is older than the window goes without --force.
TEST_F(CleanupTest, VersionsSupersededLongAgoGoWithoutForce) {
  auto ds = Create()->Update({{"name", "'a'"}}, "id < 10");
  // Back-date version 2's manifest timestamp by two hours (the window reads it).
  auto store = io::MakeLocalStore();
  auto loc = table::FindManifest(*store, ds->uri(), 2);
  ASSERT_TRUE(loc.has_value());
  auto m = table::ReadManifest(*store, loc->path);
  m.mutable_timestamp()->set_seconds(m.timestamp().seconds() - 7200);
  const auto indices = table::ReadIndexSection(*store, loc->path, m);
  store->Delete(loc->path);
  ASSERT_TRUE(table::PublishManifest(*store, ds->uri(), m, indices, nullptr, table::ManifestNaming::kV2));
  CleanupOptions o;
  o.keep_versions = 1;
  auto stats = Dataset::Open(ds->uri())->Cleanup(o);
  EXPECT_EQ(stats.versions_removed, 1u);
  EXPECT_EQ(stats.versions_kept_recent, 0u);
}

TEST_F(CleanupTest, UnreferencedFilesGoWhenOldOrWhenAsked) {
  auto ds = Create();
  std::string young = ds->uri() + "/data/young.lance", old = ds->uri() + "/data/old.lance";
  WriteStringToFile(young, "x");
  WriteStringToFile(old, "y");
  fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(24 * 8));
  auto stats = ds->Cleanup(Keep(1));
  EXPECT_EQ(stats.removed, std::vector<std::string>{"data/old.lance"});
  EXPECT_TRUE(fs::exists(young));
  CleanupOptions o = Keep(1);
  o.delete_unverified = true;
  EXPECT_EQ(ds->Cleanup(o).removed, std::vector<std::string>{"data/young.lance"});
  EXPECT_EQ(ds->CountRows(), 100u);
}

TEST_F(CleanupTest, NumericOptionsAreRangeChecked) {
  auto ds = Create();
  for (const char* keep : {"-1", "0", "18446744073709551616", "x", "1.5"}) {
    auto bad = RunLancelet({"cleanup", ds->uri(), "--keep", keep});
    EXPECT_EQ(bad.exit_code, 1) << keep;
    EXPECT_EQ(bad.err, fmt::format("lancelet: --keep '{}': expected a whole number from 1 to 18446744073709551615\n", keep));
  }
}

TEST_F(CleanupTest, ItNeedsAnAgeOrACount) {
  auto ds = Create();
  for (const auto& o : {CleanupOptions{}, Keep(0)}) {
    auto error = ThrownError([&] { ds->Cleanup(o); });
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->kind(), ErrorKind::kInvalidArgument);
  }
  auto bad = RunLancelet({"cleanup", ds->uri(), "--older-than", "7x"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "lancelet: --older-than '7x': expected a number with an optional unit s, m, h, d or w (e.g. 7d)\n");
  auto dry = RunLancelet({"cleanup", ds->uri(), "--older-than", "7d", "--dry-run"});
  EXPECT_EQ(dry.exit_code, 0);
  EXPECT_EQ(dry.out, "would free 0 versions, 0 files, 0 bytes\n");
}

}  // namespace
}  // namespace lancelet::testing
