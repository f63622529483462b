// The shard loader: the spec's refusal table (../shared/spec/lance_shards_for_training.md)
// turned into reads that equal a full scan, the cases still refused, discovery's reads,
// version pinning and the fragment cache.
#include <gtest/gtest.h>

#include "io/object_store.h"
#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/ipc.h"
#include "lancelet/loader.h"
#include "lancelet/scalar.h"
#include "loader/sharded_dataset.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/manifest_store.h"

namespace lancelet {
namespace {

using testing::TempDir;

// Every sample of every shard, in shard order, as one batch.
RecordBatchPtr ReadEverySample(const ShardedDataset& shards) {
  std::vector<RecordBatchPtr> parts;
  for (size_t s = 0; s < shards.shard_count(); ++s) {
    std::vector<uint64_t> all(shards.shard_sizes()[s]);
    for (size_t k = 0; k < all.size(); ++k) all[k] = k;
    parts.push_back(shards.ReadBatch(s, all));
  }
  return RecordBatch::Concatenate(shards.schema(), parts);
}

void ExpectSamplesEqualTheScan(const std::string& dir, const LoaderOptions& options) {
  auto shards = ShardedDataset::FromPath(dir, options);
  const std::vector<std::string>& columns = options.columns;
  auto scan = Dataset::Open(dir)->NewScan();
  if (!columns.empty()) scan.Columns(columns);
  auto expected = scan.ToBatch();
  auto got = ReadEverySample(*shards);
  EXPECT_EQ(shards->total(), uint64_t(expected->num_rows()));
  EXPECT_TRUE(got->Equals(*expected)) << "loader:\n" << got->schema()->ToString() << "\nscan:\n"
                                      << expected->schema()->ToString();
}

void ExpectSamplesEqualTheScan(const std::string& dir, const std::vector<std::string>& columns = {}) {
  LoaderOptions options;
  options.columns = columns;
  ExpectSamplesEqualTheScan(dir, options);
}

// A dataset of `fragments` fragments of `rows` rows each (id, name), by lancelet.
DatasetPtr Fragments(const std::string& dir, int fragments, int64_t rows) {
  WriteOptions o;
  o.max_rows_per_file = rows;
  o.file_version = "2.1";
  return Dataset::Write(dir, {testing::IdNameBatch(0, fragments * rows)}, o);
}

// A table the reference creates from `batch` (an Arrow IPC file handed to the oracle).
std::string ReferenceTable(const TempDir& tmp, const std::string& name, const RecordBatchPtr& batch,
                           const std::string& version, int64_t rows_per_file) {
  const std::string arrow = tmp.Join(name + ".arrow"), dir = tmp.Join(name + ".lance");
  testing::WriteStringToFile(arrow, WriteIpcFile(*batch->schema(), {batch}));
  testing::Oracle({"create", dir, "--data", arrow, "--file-version", version, "--max-rows-per-file",
                   std::to_string(rows_per_file)});
  return dir;
}

TEST(Loader, OneShardPerFragmentWithSurvivingRowsAndDeletionsSkipped) {
  TempDir tmp;
  auto ds = Fragments(tmp.Uri("t.lance"), 3, 100);
  ds = ds->Delete("id % 10 = 4 OR id = 150 OR id >= 290");
  auto shards = ShardedDataset::FromPath(ds->uri());
  EXPECT_EQ(shards->shard_count(), 3u);
  EXPECT_EQ(shards->shard_sizes(), (std::vector<uint64_t>{90, 89, 81}));  // 290..299 and 204..284
  EXPECT_EQ(shards->total(), 260u);
  std::vector<uint64_t> picks = {88, 0, 44, 88};  // any order, repeats kept
  auto batch = shards->ReadBatch(1, picks);
  // Shard 1 holds ids 100..199 less 104, 114, .., 194 and 150.
  std::vector<int64_t> live;
  for (int64_t id = 100; id < 200; ++id)
    if (id % 10 != 4 && id != 150) live.push_back(id);
  const int64_t* ids = batch->column(0)->values<int64_t>();
  for (size_t k = 0; k < picks.size(); ++k) EXPECT_EQ(ids[k], live[picks[k]]) << k;
  ExpectSamplesEqualTheScan(ds->uri());
  auto err = testing::ThrownError([&] { shards->ReadBatch(2, std::vector<uint64_t>{81}); });
  ASSERT_TRUE(err);
  EXPECT_NE(std::string(err->what()).find("shard 2 of"), std::string::npos) << err->what();
  EXPECT_TRUE(testing::ThrownError([&] { shards->ReadBatch(3, std::vector<uint64_t>{0}); }));
}

TEST(Loader, FragmentsCutIntoShardsGiveEverySampleOnce) {
  TempDir tmp;
  auto ds = Fragments(tmp.Uri("t.lance"), 3, 100);
  ds = ds->Delete("id % 10 = 4 OR id = 150 OR id >= 290");  // 90, 89 and 81 rows survive
  LoaderOptions by_rows;
  by_rows.shard_rows = 40;
  auto shards = ShardedDataset::FromPath(ds->uri(), by_rows);
  EXPECT_EQ(shards->shard_sizes(), (std::vector<uint64_t>{40, 40, 10, 40, 40, 9, 40, 40, 1}));
  EXPECT_EQ(shards->total(), 260u);
  // Shard 4 is fragment 1's surviving rows 40..79: ids 100..199 less 104, 114, .., 194 and 150.
  std::vector<int64_t> live;
  for (int64_t id = 100; id < 200; ++id)
    if (id % 10 != 4 && id != 150) live.push_back(id);
  auto batch = shards->ReadBatch(4, std::vector<uint64_t>{39, 0, 12});
  const int64_t* ids = batch->column(0)->values<int64_t>();
  EXPECT_EQ((std::vector<int64_t>{ids[0], ids[1], ids[2]}), (std::vector<int64_t>{live[79], live[40], live[52]}));
  EXPECT_TRUE(testing::ThrownError([&] { shards->ReadBatch(5, std::vector<uint64_t>{9}); }));
  ExpectSamplesEqualTheScan(ds->uri(), by_rows);
  // Shards of one fragment share its opened reader.
  auto cached = ShardedDataset::FromPath(ds->uri(), by_rows);
  for (size_t s = 0; s < 3; ++s) cached->ReadBatch(s, std::vector<uint64_t>{0});
  EXPECT_EQ(cached->cached_shards(), 1u);

  LoaderOptions by_count;
  by_count.num_shards = 7;  // ceil(260 / 7) = 38 rows a shard
  EXPECT_EQ(ShardedDataset::FromPath(ds->uri(), by_count)->shard_sizes(),
            (std::vector<uint64_t>{38, 38, 14, 38, 38, 13, 38, 38, 5}));
  ExpectSamplesEqualTheScan(ds->uri(), by_count);
  // A one-fragment table feeds four ranks.
  auto one = Fragments(tmp.Uri("one.lance"), 1, 100);
  by_count.num_shards = 4;
  EXPECT_EQ(ShardedDataset::FromPath(one->uri(), by_count)->shard_sizes(), (std::vector<uint64_t>{25, 25, 25, 25}));
  by_count.min_shard_rows = 30;  // ceil(100 / 4) = 25 is below the floor
  EXPECT_EQ(ShardedDataset::FromPath(one->uri(), by_count)->shard_sizes(), (std::vector<uint64_t>{30, 30, 30, 10}));
}

TEST(Loader, OverlaysAreResolved) {
  TempDir tmp;
  auto ds = Fragments(tmp.Uri("t.lance"), 2, 50);
  ds = ds->Update({{"name", "upper(name)"}}, "id % 3 = 0", nullptr, UpdateMode::kOverlay);
  ds = ds->Update({{"name", "NULL"}}, "id = 51", nullptr, UpdateMode::kOverlay);
  ASSERT_GT(table::StateOf(ds).manifest.fragments(0).overlays_size(), 0);
  ExpectSamplesEqualTheScan(ds->uri());
  auto batch = ShardedDataset::FromPath(ds->uri())->ReadBatch(1, std::vector<uint64_t>{1, 4});
  EXPECT_TRUE(batch->column(1)->IsNull(0));
  EXPECT_EQ(batch->column(1)->GetView(1), "N54");
}

TEST(Loader, MultiFileFragmentsAndDroppedColumnsFromTheReference) {
  REQUIRE_ORACLE();
  TempDir tmp;
  const std::string dir = ReferenceTable(tmp, "ref", testing::IdNameBatch(0, 120), "2.1", 40);
  testing::Oracle({"add-columns", dir, "--expr", "double_id=id * 2", "--expr", "tag=concat('t', name)"});
  ASSERT_GT(table::StateOf(Dataset::Open(dir)).manifest.fragments(0).files_size(), 1);
  ExpectSamplesEqualTheScan(dir);
  ExpectSamplesEqualTheScan(dir, {"tag", "id"});
  testing::Oracle({"drop-columns", dir, "--columns", "name"});
  ExpectSamplesEqualTheScan(dir);
  EXPECT_EQ(ShardedDataset::FromPath(dir)->schema()->ToString(), "id:int64, double_id:int64, tag:utf8");
}

TEST(Loader, ShallowClonesFollowTheirBasePaths) {
  REQUIRE_ORACLE();
  TempDir tmp;
  const std::string source = ReferenceTable(tmp, "src", testing::IdNameBatch(0, 90), "2.1", 30);
  const std::string clone = tmp.Join("clone.lance");
  testing::Oracle({"clone", source, clone});
  ASSERT_GT(table::StateOf(Dataset::Open(clone)).manifest.base_paths_size(), 0);
  ExpectSamplesEqualTheScan(clone);
}

TEST(Loader, BlobColumnsReturnTheirBytes) {
  REQUIRE_ORACLE();
  TempDir tmp;
  std::vector<Scalar> ids, blobs;
  for (int64_t k = 0; k < 60; ++k) {
    ids.push_back({DataType::Int64(), k});
    blobs.push_back(k % 11 == 4 ? Scalar::Null(DataType::LargeBinary())
                                : Scalar{DataType::LargeBinary(), std::string(size_t(k * 37 % 900), char('a' + k % 26))});
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int64()),
      Field::Make("blob", DataType::LargeBinary(), true, {{"lance-encoding:blob", "true"}})});
  auto batch = std::make_shared<RecordBatch>(
      schema, std::vector<ArrayPtr>{MakeArray(DataType::Int64(), ids), MakeArray(DataType::LargeBinary(), blobs)}, 60);
  const std::string dir = ReferenceTable(tmp, "blobs", batch, "2.1", 25);
  auto shards = ShardedDataset::FromPath(dir);
  EXPECT_TRUE(shards->schema()->field(1)->type->Equals(*DataType::LargeBinary()));
  auto got = ReadEverySample(*shards);
  ASSERT_EQ(got->num_rows(), 60);
  for (int64_t k = 0; k < 60; ++k) {
    ASSERT_EQ(got->column(1)->IsNull(k), blobs[size_t(k)].is_null()) << k;
    if (!blobs[size_t(k)].is_null()) {
      EXPECT_EQ(got->column(1)->GetView(k), blobs[size_t(k)].as_string()) << k;
    }
  }
}

// What cannot be read is refused at discovery, naming the case, the reason and a remedy.
TEST(Loader, UnreadableCasesAreRefusedAtDiscovery) {
  TempDir tmp;
  auto ds = Fragments(tmp.Uri("t.lance"), 2, 10);
  auto write_version = [&](const std::function<void(lance::table::Manifest&)>& edit) {
    lance::table::Manifest m = table::StateOf(ds).manifest;
    m.set_version(m.version() + 1);
    edit(m);
    const std::string path = tmp.Uri("t.lance/_versions/edited.manifest");
    testing::PutObject(path, table::EncodeManifestFile(m, nullptr, nullptr));
    return path;
  };
  auto refusal = [&](const std::string& path) {
    auto err = testing::ThrownError([&] { ShardedDataset::FromPath(path); });
    return err ? std::string(err->what()) : std::string("(no error)");
  };
  std::string message = refusal(write_version([](lance::table::Manifest& m) {
    auto* base = m.add_base_paths();
    base->set_id(7);
    base->set_path("s3://bucket/source");
  }));
  EXPECT_NE(message.find("object-store URI 's3://bucket/source'"), std::string::npos) << message;
  EXPECT_NE(message.find("remedy"), std::string::npos) << message;
  message = refusal(write_version([](lance::table::Manifest& m) { m.set_reader_feature_flags(m.reader_feature_flags() | (1ull << 40)); }));
  EXPECT_NE(message.find("feature flag"), std::string::npos) << message;
  EXPECT_NE(message.find("use a newer lancelet"), std::string::npos) << message;
  EXPECT_NE(refusal(tmp.Uri("t.lance/data")).find("holds no Lance dataset"), std::string::npos);
  EXPECT_NE(refusal(tmp.Uri("elsewhere.manifest")).find("_versions/"), std::string::npos);
}

TEST(Loader, DiscoveryReadsTheManifestOnceAndOpensNoDataFile) {
  TempDir tmp;
  auto ds = Fragments(tmp.Uri("t.lance"), 20, 10);
  ds = ds->Delete("id % 9 = 1");
  ds->CreateIndex("id", IndexType::kBTree);
  // The process's store for the URI, so its counter is read before and after.
  auto [store, path] = io::OpenStore(ds->uri());
  const uint64_t before = store->stats().read_calls.load();
  auto shards = loader::OpenShardedDataset(store, path, {});
  EXPECT_EQ(store->stats().read_calls.load() - before, 1u);  // the manifest, whole
  EXPECT_EQ(shards->shard_count(), 20u);
  EXPECT_EQ(shards->total(), 200u - 23u);  // ids 1, 10, .., 199
}

TEST(Loader, TheVersionStaysPinned) {
  TempDir tmp;
  auto ds = Fragments(tmp.Uri("t.lance"), 2, 20);
  auto shards = ShardedDataset::FromPath(ds->uri());
  const std::string pinned = shards->path();
  EXPECT_NE(pinned.find("/_versions/"), std::string::npos);
  auto before = ReadEverySample(*shards);
  ds = ds->Append({testing::IdNameBatch(1000, 20)});
  ds = ds->Update({{"name", "'changed'"}}, "", nullptr, UpdateMode::kOverlay);
  ds = ds->Optimize();
  EXPECT_TRUE(ReadEverySample(*shards)->Equals(*before));
  EXPECT_EQ(ShardedDataset::FromPath(pinned)->total(), 40u);  // the manifest names the version
  auto later = ShardedDataset::FromPath(ds->uri());
  EXPECT_EQ(later->total(), 60u);
  EXPECT_NE(later->path(), pinned);
}

TEST(Loader, ShardsReadThroughTheSessionAndStoreOptionsTheyAreGiven) {
  TempDir tmp;
  auto ds = Fragments(tmp.Uri("t.lance"), 3, 10);
  LoaderOptions options;
  options.session = std::make_shared<Session>();
  options.storage_options = {{"timeout", "5s"}};
  auto shards = ShardedDataset::FromPath(ds->uri(), options);
  for (size_t s = 0; s < 3; ++s) shards->ReadBatch(s, std::vector<uint64_t>{0});
  EXPECT_EQ(options.session->Stats().data_files, 3u);
  options.storage_options = {{"timeoot", "5s"}};
  EXPECT_THROW(ShardedDataset::FromPath(ds->uri(), options), Error);
}

LoaderOptions CacheOf(size_t entries) {
  LoaderOptions options;
  options.metadata_cache_entries = entries;
  return options;
}

TEST(Loader, OpenedFragmentsAreCachedUnderTheCap) {
  TempDir tmp;
  auto ds = Fragments(tmp.Uri("t.lance"), 5, 10);
  auto capped = ShardedDataset::FromPath(ds->uri(), CacheOf(2));
  EXPECT_EQ(capped->cache_capacity(), 2u);
  for (size_t s = 0; s < 5; ++s) capped->ReadBatch(s, std::vector<uint64_t>{0});
  EXPECT_EQ(capped->cached_shards(), 2u);
  auto none = ShardedDataset::FromPath(ds->uri(), CacheOf(0));
  none->ReadBatch(0, std::vector<uint64_t>{3});
  EXPECT_EQ(none->cached_shards(), 0u);
  auto wide = ShardedDataset::FromPath(ds->uri());
  EXPECT_EQ(wide->cache_capacity(), 256u);
  for (size_t s = 0; s < 5; ++s) wide->ReadBatch(s, std::vector<uint64_t>{1});
  EXPECT_EQ(wide->cached_shards(), 5u);
}

}  // namespace
}  // namespace lancelet
