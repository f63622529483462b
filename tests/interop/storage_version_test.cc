// Datasets whose manifests older Lance releases wrote: no data_format (its storage version is
// inferred from the data files, or from the deprecated "use v2 format" writer flag), a
// data_format that says 0.1 over 2.0 files (recorded as file version 0.3), and legacy data
// files. lancelet opens every one the reference opens, reads what the reference reads, and
// writes new data files only where it can write them in the dataset's storage version.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <numeric>
#include <sstream>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/loader.h"
#include "lancelet/text.h"
#include "support/json_rows.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/manifest_store.h"
#include "table/session.h"

namespace lancelet::testing {
namespace {

class StorageVersionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uri_ = tmp_.Join("t.lance");
    const std::string arrow = tmp_.Join("rows.arrow");
    auto batch = IdNameBatch(0, 300);
    WriteStringToFile(arrow, WriteIpcFile(*batch->schema(), {batch}));
    Oracle({"create", uri_, "--data", arrow, "--file-version", "2.0", "--max-rows-per-file", "100"});
    rows_ = Oracle({"dump", uri_});
    base_version_ = Dataset::Open(uri_)->version();
  }

  // Commits a copy of the newest manifest, edited, as the next version (as an old writer
  // would have written it).
  void CommitEdited(const std::function<void(lance::table::Manifest&)>& edit) {
    auto store = io::MakeLocalStore();
    auto latest = table::LatestManifest(*store, uri_);
    lance::table::Manifest m = table::ReadManifest(*store, latest->path);
    m.set_version(m.version() + 1);
    edit(m);
    WriteStringToFile(io::JoinPath(uri_, std::string(table::kVersionsDir) + "/" + table::ManifestFileNameV2(m.version())),
                      table::EncodeManifestFile(m, nullptr, nullptr));
  }

  static void SetFileVersions(lance::table::Manifest& m, uint32_t major, uint32_t minor) {
    for (auto& fragment : *m.mutable_fragments())
      for (auto& file : *fragment.mutable_files()) {
        file.set_file_major_version(major);
        file.set_file_minor_version(minor);
      }
  }

  std::string ErrorOf(const std::function<void()>& fn) {
    auto err = ThrownError(fn);
    return err ? std::string(err->what()) : "(no error)";
  }

  TempDir tmp_;
  std::string uri_;
  std::string rows_;
  uint64_t base_version_ = 0;  // the reference's last version; the edited one is next
};

TEST_F(StorageVersionTest, NoDataFormatIsInferredFromTheFiles) {
  CommitEdited([](lance::table::Manifest& m) {
    m.clear_data_format();
    SetFileVersions(m, 0, 3);  // what releases before 0.15 recorded for 2.0 files
  });
  auto ds = Dataset::Open(uri_);
  ASSERT_TRUE(table::StateOf(ds).storage_version.has_value());
  EXPECT_EQ(table::StateOf(ds).storage_version->ToString(), "2.0");
  EXPECT_EQ(DiffJsonLines(rows_, Lancelet({"scan", uri_, "--format", "jsonl"})), "");
  EXPECT_EQ(DiffJsonLines(rows_, Oracle({"dump", uri_})), "");
  EXPECT_NE(Lancelet({"inspect", uri_}).find("data storage: lance 2.0 (inferred; the manifest records none)"),
            std::string::npos);

  // An append writes 2.0 files, and both sides read old and new rows.
  ds = ds->Append({IdNameBatch(300, 50)});
  const auto& added = table::StateOf(ds).manifest.fragments(3).files(0);
  EXPECT_EQ(added.file_major_version(), 2u);
  EXPECT_EQ(added.file_minor_version(), 0u);
  EXPECT_EQ(std::stoll(Oracle({"count", uri_})), 350);
  EXPECT_EQ(DiffJsonLines(Oracle({"dump", uri_}), Lancelet({"scan", uri_, "--format", "jsonl"})), "");
}

TEST_F(StorageVersionTest, ALegacyLabelOverNewFilesReadsButRefusesNewDataFiles) {
  CommitEdited([](lance::table::Manifest& m) {
    m.mutable_data_format()->set_version("0.1");
    SetFileVersions(m, 0, 3);
  });
  auto ds = Dataset::Open(uri_);
  EXPECT_FALSE(table::StateOf(ds).storage_version.has_value());
  EXPECT_EQ(DiffJsonLines(rows_, Lancelet({"scan", uri_, "--format", "jsonl"})), "");
  EXPECT_EQ(DiffJsonLines(rows_, Oracle({"dump", uri_})), "");
  EXPECT_NE(Lancelet({"inspect", uri_}).find("data storage: lance 0.1 (legacy)\n"), std::string::npos);
  EXPECT_EQ(SplitLines(Lancelet({"versions", uri_})).size(), base_version_ + 1);

  const std::string message = ErrorOf([&] { ds->Append({IdNameBatch(300, 5)}); });
  EXPECT_NE(message.find("dataset '" + uri_ + "' uses the legacy Lance storage version (0.1)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("data_storage_version 2.0 or newer"), std::string::npos) << message;
  EXPECT_NE(ErrorOf([&] { ds->Update({{"name", "'x'"}}, "id < 3"); }).find("legacy Lance storage version"),
            std::string::npos);
  EXPECT_EQ(Dataset::Open(uri_)->version(), base_version_ + 1);  // nothing was committed
  // Deleting writes no data file: it works, and the reference agrees.
  ds = ds->Delete("id % 3 = 0");
  EXPECT_EQ(std::stoll(Oracle({"count", uri_})), 200);
  EXPECT_EQ(std::stoll(Lancelet({"count", uri_})), 200);
}

TEST_F(StorageVersionTest, WithoutFilesTheDeprecatedV2FlagDecides) {
  CommitEdited([](lance::table::Manifest& m) {
    m.clear_data_format();
    m.clear_fragments();
    m.set_writer_feature_flags(m.writer_feature_flags() | (1 << 2));
  });
  auto ds = Dataset::Open(uri_);
  ASSERT_TRUE(table::StateOf(ds).storage_version.has_value());
  EXPECT_EQ(table::StateOf(ds).storage_version->ToString(), "2.0");
  ds = ds->Append({IdNameBatch(0, 10)});
  EXPECT_EQ(table::StateOf(ds).manifest.fragments(0).files(0).file_major_version(), 2u);
  EXPECT_EQ(std::stoll(Oracle({"count", uri_})), 10);

  CommitEdited([](lance::table::Manifest& m) {
    m.clear_data_format();
    m.clear_fragments();
    m.set_writer_feature_flags(m.writer_feature_flags() & ~uint64_t(1 << 2));
  });
  ds = Dataset::Open(uri_);
  EXPECT_FALSE(table::StateOf(ds).storage_version.has_value());
  EXPECT_EQ(std::stoll(Lancelet({"count", uri_})), 0);
  EXPECT_NE(ErrorOf([&] { ds->Append({IdNameBatch(0, 10)}); }).find("legacy Lance storage version (0.1)"),
            std::string::npos);
}

TEST_F(StorageVersionTest, NewFilesTheManifestCallsLegacyAreRefusedByTheirFooter) {
  CommitEdited([](lance::table::Manifest& m) {
    m.clear_data_format();
    SetFileVersions(m, 0, 2);
  });
  EXPECT_EQ(SplitLines(Lancelet({"versions", uri_})).size(), base_version_ + 1);
  EXPECT_NE(Lancelet({"inspect", uri_}).find("data storage: lance legacy (inferred; the manifest records none)"),
            std::string::npos);
  auto scan = RunLancelet({"scan", uri_});
  EXPECT_NE(scan.exit_code, 0);
  EXPECT_NE(scan.err.find("the manifest lists it as a legacy (0.1/0.2) data file, but its footer says version 0.3"),
            std::string::npos)
      << scan.err;
  // The older version, before the edit, still reads.
  EXPECT_EQ(DiffJsonLines(rows_, Lancelet({"scan", uri_, "--version", std::to_string(base_version_), "--format",
                                           "jsonl"})),
            "");
}

// A dataset the reference writes with legacy data files: three fragments, deletions and a
// column added later (a second data file per fragment, whose page table starts at the new
// field's id). lancelet reads it as the reference does, at every version, deletes rows in
// it (a deletion file), and refuses to write data files into it.
TEST_F(StorageVersionTest, LegacyDatasetsReadAsTheReferenceReadsThem) {
  REQUIRE_ORACLE();
  const std::string legacy = tmp_.Join("legacy.lance"), arrow = tmp_.Join("legacy.arrow");
  Oracle({"gen", arrow, "--rows", "3000", "--seed", "5", "--types", "int64,utf8,list<int32>,struct<a:int32,b:utf8>",
          "--no-null-structs"});
  Oracle({"create", legacy, "--data", arrow, "--file-version", "legacy", "--max-rows-per-file", "1200"});
  const std::string created = Oracle({"dump", legacy});
  Oracle({"delete", legacy, "--where", "c_int64 % 7 = 0"});
  Oracle({"add-columns", legacy, "--expr", "doubled=c_int64 * 2", "--expr", "tag=concat('t', c_utf8)"});
  auto ds = Dataset::Open(legacy);
  EXPECT_FALSE(table::StateOf(ds).storage_version.has_value());
  EXPECT_EQ(table::StateOf(ds).manifest.fragments_size(), 3);
  for (const auto& fragment : table::StateOf(ds).manifest.fragments()) {
    ASSERT_EQ(fragment.files_size(), 2);
    EXPECT_TRUE(table::IsLegacyDataFile(fragment.files(1)));
    EXPECT_GT(fragment.files(1).fields(0), 0);
  }
  EXPECT_NE(Lancelet({"inspect", legacy}).find("(legacy)"), std::string::npos);

  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"--with-rowid"}, {"--where", "c_int64 % 3 = 1 AND tag IS NOT NULL"}, {"--columns", "tag,c_list_int32"}}) {
    std::vector<std::string> scan = {"scan", legacy, "--format", "jsonl"}, dump = {"dump", legacy};
    scan.insert(scan.end(), args.begin(), args.end());
    dump.insert(dump.end(), args.begin(), args.end());
    EXPECT_EQ(DiffJsonLines(Oracle(dump), Lancelet(scan)), "") << scan.back();
  }
  const auto rows = SplitLines(Oracle({"dump", legacy}));
  EXPECT_EQ(Lancelet({"count", legacy}), std::to_string(rows.size()) + "\n");
  ASSERT_GT(rows.size(), 2000u);
  std::string expected_take, offsets;
  for (size_t r : {rows.size() - 1, size_t{0}, size_t{800}, size_t{1100}, rows.size() - 1}) {
    expected_take += rows[r] + "\n";
    offsets += (offsets.empty() ? "" : ",") + std::to_string(r);
  }
  EXPECT_EQ(Lancelet({"take", legacy, "--rows", offsets, "--format", "jsonl"}), expected_take);
  // The training loader reads the same rows, one shard per fragment.
  auto shards = ShardedDataset::FromPath(legacy);
  ASSERT_EQ(shards->total(), rows.size());
  std::ostringstream loaded;
  auto writer = MakeJsonLinesWriter(loaded, shards->schema());
  for (size_t shard = 0; shard < shards->shard_count(); ++shard) {
    std::vector<uint64_t> samples(shards->shard_sizes()[shard]);
    std::iota(samples.begin(), samples.end(), 0);
    writer->Write(*shards->ReadBatch(shard, samples));
  }
  writer->Finish();
  EXPECT_EQ(DiffJsonLines(Oracle({"dump", legacy}), loaded.str()), "");
  // Time travel to the version the reference created.
  EXPECT_EQ(DiffJsonLines(created, Lancelet({"scan", legacy, "--version", "3", "--format", "jsonl"})), "");

  // Indexes the reference builds on a legacy dataset (their files are 2.0) serve both sides
  // alike.
  Oracle({"create-index", legacy, "c_int64", "--type", "btree"});
  Oracle({"create-index", legacy, "tag", "--type", "bitmap"});
  for (const char* where : {"c_int64 > 0", "tag = 't'"}) {
    EXPECT_EQ(Lancelet({"count", legacy, "--where", where}), Oracle({"count", legacy, "--where", where})) << where;
    EXPECT_EQ(DiffJsonLines(Oracle({"dump", legacy, "--where", where}),
                            Lancelet({"scan", legacy, "--where", where, "--format", "jsonl"})),
              "")
        << where;
  }
  EXPECT_EQ(SplitLines(Lancelet({"index", "list", legacy})).size(), 2u);
  EXPECT_NE(Lancelet({"sql", "--db", tmp_.path(), "EXPLAIN SELECT count(*) FROM legacy WHERE tag = 't'"})
                .find("index tag_idx: tag = 't'"),
            std::string::npos);

  // A delete writes only a deletion file: lancelet commits it and the reference reads it.
  const size_t before = rows.size();
  Lancelet({"delete", legacy, "--where", "c_int64 % 5 = 1"});
  const std::string after = Oracle({"dump", legacy});
  EXPECT_LT(SplitLines(after).size(), before);
  EXPECT_EQ(DiffJsonLines(after, Lancelet({"scan", legacy, "--format", "jsonl"})), "");

  // Writing data files needs a storage version lancelet writes; nothing is committed.
  ds = Dataset::Open(legacy);
  const uint64_t version = ds->version();
  const std::string refusal = ErrorOf([&] { ds->Update({{"tag", "'x'"}}, "c_int64 < 3"); });
  EXPECT_NE(refusal.find("uses the legacy Lance file format"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("then create --from"), std::string::npos) << refusal;
  EXPECT_EQ(Dataset::Open(legacy)->version(), version);
}

// Releases before 0.8 wrote no writer version and no (or a wrong) physical_rows: the rows
// are counted in the first data file, as the reference does; a fragment with no count and
// no readable file is refused rather than read as empty.
TEST_F(StorageVersionTest, RowCountsOfWritersThatNamedNoneAreCountedInTheFiles) {
  CommitEdited([](lance::table::Manifest& m) {
    m.clear_writer_version();
    m.mutable_fragments(0)->set_physical_rows(0);
    m.mutable_fragments(1)->set_physical_rows(7);
  });
  EXPECT_EQ(DiffJsonLines(rows_, Lancelet({"scan", uri_, "--format", "jsonl"})), "");
  EXPECT_EQ(Lancelet({"count", uri_}), "300\n");
  EXPECT_EQ(table::StateOf(Dataset::Open(uri_)).manifest.fragments(1).physical_rows(), 100u);

  const std::string first = table::StateOf(Dataset::Open(uri_)).manifest.fragments(0).files(0).path();
  std::filesystem::remove(io::JoinPath(uri_, "data/" + first));
  Session::Default()->Clear();  // as a new process: nothing opened before is kept
  std::string message = ErrorOf([&] { Dataset::Open(uri_); });
  EXPECT_NE(message.find("fragment 0: its manifest records no row count, and counting the rows of its data file '" +
                         first + "' failed"),
            std::string::npos)
      << message;
}

// A dataset whose manifests have V1 names ({version}.manifest, what older writers used)
// keeps them: the reference refuses a directory that mixes the two namings.
TEST_F(StorageVersionTest, ADatasetKeepsItsManifestNaming) {
  REQUIRE_ORACLE();
  const std::string v1 = tmp_.Join("v1.lance"), arrow = tmp_.Join("v1.arrow");
  auto batch = IdNameBatch(0, 50);
  WriteStringToFile(arrow, WriteIpcFile(*batch->schema(), {batch}));
  Oracle({"create", v1, "--data", arrow, "--file-version", "2.1", "--manifest-paths", "v1"});
  Lancelet({"delete", v1, "--where", "id % 5 = 0"});
  Lancelet({"update", v1, "--set", "name = 'x'", "--where", "id < 10"});
  auto more = IdNameBatch(50, 5);
  WriteStringToFile(arrow, WriteIpcFile(*more->schema(), {more}));
  Lancelet({"append", v1, "--from", arrow});
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(v1 + "/_versions"))
    if (e.path().extension() == ".manifest") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"1.manifest", "2.manifest", "3.manifest", "4.manifest"}));
  const char* overlays = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1";
  EXPECT_EQ(DiffJsonLines(Oracle({"dump", v1}, overlays), Lancelet({"scan", v1, "--format", "jsonl"})), "");
  EXPECT_EQ(Oracle({"count", v1}, overlays), "45\n");
}

TEST_F(StorageVersionTest, FilesThatDisagreeOrVersionsNobodyKnowsAreRefused) {
  CommitEdited([](lance::table::Manifest& m) {
    m.clear_data_format();
    SetFileVersions(m, 2, 0);
    m.mutable_fragments(2)->mutable_files(0)->set_file_minor_version(1);
  });
  std::string message = ErrorOf([&] { Dataset::Open(uri_); });
  EXPECT_NE(message.find("its manifest records no data storage version and its data files disagree"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("(fragment 2) is 2.1"), std::string::npos) << message;

  CommitEdited([](lance::table::Manifest& m) { m.mutable_data_format()->set_version("3.7"); });
  message = ErrorOf([&] { Dataset::Open(uri_); });
  EXPECT_NE(message.find("unknown data storage version '3.7'"), std::string::npos) << message;

  CommitEdited([](lance::table::Manifest& m) {
    m.clear_data_format();
    SetFileVersions(m, 2, 7);
  });
  message = ErrorOf([&] { Dataset::Open(uri_); });
  EXPECT_NE(message.find("records Lance file version 2.7"), std::string::npos) << message;
}

}  // namespace
}  // namespace lancelet::testing
