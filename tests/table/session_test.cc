// Sessions and storage options: what datasets opened through one session share, what
// separate sessions do not, the bound a session keeps to, and the store options a URI is
// opened with.
#include <gtest/gtest.h>

#include "io/object_store.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/session.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"

namespace lancelet::testing {
namespace {

// A dataset of two fragments (two data files).
std::string TwoFragments(const std::string& uri) {
  WriteOptions options;
  options.max_rows_per_file = 50;
  Dataset::Write(uri, {IdNameBatch(0, 100)}, options);
  return uri;
}

OpenOptions Through(std::shared_ptr<Session> session) {
  OpenOptions options;
  options.session = std::move(session);
  return options;
}

OpenOptions With(StorageOptions storage_options) {
  OpenOptions options;
  options.storage_options = std::move(storage_options);
  return options;
}

uint64_t ScanRows(const DatasetPtr& ds) {
  auto reader = ds->NewScan().Open();
  uint64_t rows = 0;
  while (auto batch = reader->Next()) rows += batch->num_rows();
  return rows;
}

TEST(SessionTest, DatasetsOpenedThroughOneSessionShareItsFilesAndNoOtherSessionSeesThem) {
  const std::string uri = TwoFragments("memory://session_test/shared.lance");
  auto first = std::make_shared<Session>();
  auto second = std::make_shared<Session>();
  EXPECT_EQ(ScanRows(Dataset::Open(uri, std::nullopt, Through(first))), 100u);
  EXPECT_EQ(first->Stats().data_files, 2u);
  EXPECT_EQ(second->Stats().data_files, 0u);

  // A second opening (another Dataset, another version object) through the same session
  // opens no file again; every version read or committed through it keeps to it.
  auto again = Dataset::Open(uri, std::nullopt, Through(first));
  EXPECT_EQ(ScanRows(again), 100u);
  EXPECT_EQ(first->Stats().data_files, 2u);
  auto appended = again->Append(std::vector<RecordBatchPtr>{IdNameBatch(100, 10)});
  EXPECT_EQ(ScanRows(appended), 110u);
  EXPECT_EQ(first->Stats().data_files, 3u);
  EXPECT_EQ(appended->Checkout(1)->CountRows(), 100u);
  EXPECT_EQ(second->Stats().data_files, 0u);

  first->Clear();
  EXPECT_EQ(first->Stats().data_files, 0u);
}

TEST(SessionTest, ASessionKeepsNoMoreThanItsOptionsAllow) {
  const std::string uri = TwoFragments("memory://session_test/bounded.lance");
  SessionOptions options;
  options.data_files = 1;
  auto one_file = std::make_shared<Session>(options);
  EXPECT_EQ(ScanRows(Dataset::Open(uri, std::nullopt, Through(one_file))), 100u);
  EXPECT_EQ(one_file->Stats().data_files, 1u);
}

TEST(SessionTest, OptionsTakeDesignatedInitializersUnderTheWarningsUsersBuildWith) {
  const std::string uri = TwoFragments("memory://session_test/designated.lance");
  auto session = std::make_shared<Session>(SessionOptions{.data_files = 8});
  EXPECT_EQ(ScanRows(Dataset::Open(uri, std::nullopt, {.session = session})), 100u);
  EXPECT_EQ(session->Stats().data_files, 2u);
  EXPECT_EQ(Dataset::Open(uri, std::nullopt, {.storage_options = {{"timeout", "1s"}}})->Scan({.limit = 3})->Next()
                ->num_rows(),
            3);
}

TEST(SessionTest, AWriteKeepsToTheSessionItWasGiven) {
  auto session = std::make_shared<Session>();
  WriteOptions options;
  options.session = session;
  auto ds = Dataset::Write("memory://session_test/written.lance", {IdNameBatch(0, 10)}, options);
  EXPECT_EQ(ScanRows(ds), 10u);
  EXPECT_EQ(session->Stats().data_files, 1u);
}

TEST(SessionTest, AVersionOpenedAgainIsTheOneKeptWithTheIndexesItOpened) {
  const std::string uri = TwoFragments("memory://session_test/versions.lance");
  Dataset::Open(uri)->CreateIndex("id", IndexType::kBTree);
  auto session = std::make_shared<Session>();
  auto first = Dataset::Open(uri, std::nullopt, Through(session));
  EXPECT_EQ(first->NewScan().Filter("id = 7").Open()->Next()->num_rows(), 1);
  EXPECT_EQ(session->Stats().versions, 1u);

  // Opened again: the same version object, its index segment already open. The open and
  // the query read one object, the manifest (checked against the one kept).
  auto [store, path] = io::OpenStore(uri);
  const uint64_t before = store->stats().read_calls.load();
  auto second = Dataset::Open(uri, std::nullopt, Through(session));
  EXPECT_EQ(second->NewScan().Filter("id = 7").Open()->Next()->num_rows(), 1);
  EXPECT_EQ(store->stats().read_calls.load() - before, 1u);
  EXPECT_EQ(&table::StateOf(*first), &table::StateOf(*second));
  EXPECT_EQ(session->Stats().versions, 1u);

  // Another session keeps its own, and decodes it, index section included, from one read
  // of the manifest.
  const uint64_t before_other = store->stats().read_calls.load();
  auto other = Dataset::Open(uri, std::nullopt, Through(std::make_shared<Session>()));
  EXPECT_EQ(store->stats().read_calls.load() - before_other, 1u);
  EXPECT_NE(&table::StateOf(*first), &table::StateOf(*other));
}

TEST(SessionTest, ADatasetMadeAgainUnderTheSameNameIsNotTheVersionKept) {
  const std::string uri = TwoFragments("memory://session_test/made_again.lance");
  auto session = std::make_shared<Session>();
  EXPECT_EQ(Dataset::Open(uri, std::nullopt, Through(session))->CountRows(), 100u);
  // Dropped and written again: version 1 again, under the same manifest name.
  auto [store, path] = io::OpenStore(uri);
  store->DeleteTree(path);
  Dataset::Write(uri, {IdNameBatch(0, 7)});
  auto again = Dataset::Open(uri, std::nullopt, Through(session));
  EXPECT_EQ(again->version(), 1u);
  EXPECT_EQ(again->CountRows(), 7u);
  EXPECT_EQ(session->Stats().versions, 2u);
}

TEST(SessionTest, ASessionKeepsNoMoreVersionsThanItsOptionsAllow) {
  const std::string uri = TwoFragments("memory://session_test/two_versions.lance");
  Dataset::Open(uri)->Append(std::vector<RecordBatchPtr>{IdNameBatch(100, 10)});
  auto session = std::make_shared<Session>(SessionOptions{.versions = 1});
  auto latest = Dataset::Open(uri, std::nullopt, Through(session));
  EXPECT_EQ(latest->Checkout(1)->CountRows(), 100u);
  EXPECT_EQ(latest->CountRows(), 110u);
  EXPECT_EQ(session->Stats().versions, 1u);
  session->Clear();
  EXPECT_EQ(session->Stats().versions, 0u);
}

TEST(SessionTest, DatasetsOutliveTheirSessionAndThenLetItsCachesGo) {
  const std::string uri = TwoFragments("memory://session_test/outlived.lance");
  Dataset::Open(uri)->Append(std::vector<RecordBatchPtr>{IdNameBatch(100, 10)});
  std::weak_ptr<Session::Caches> caches;
  DatasetPtr kept;
  {
    auto session = std::make_shared<Session>();
    caches = session->caches();
    kept = Dataset::Open(uri, std::nullopt, Through(session));
    EXPECT_EQ(ScanRows(kept), 110u);
  }
  // The versions the session kept held its caches; its end let them go, so the dataset
  // alone holds them now, and what it opens again is not kept.
  EXPECT_FALSE(caches.expired());
  EXPECT_EQ(ScanRows(kept), 110u);
  EXPECT_EQ(kept->Checkout(1)->CountRows(), 100u);
  kept.reset();
  EXPECT_TRUE(caches.expired());
}

TEST(StorageOptionsTest, KeysTheReferenceKnowsAreAcceptedInAnyCaseAndOthersAreRefusedByName) {
  TempDir tmp;
  const std::string uri = TwoFragments(tmp.Uri("t.lance"));
  const StorageOptions known = {{"timeout", "60s"}, {"AWS_REGION", "us-east-1"}, {"allow_http", "true"}};
  EXPECT_EQ(Dataset::Open(uri, std::nullopt, With(known))->CountRows(), 100u);
  // file:// names the local file system alone (the memory and S3 runs' URIs have a scheme).
  if (!TempDir::InObjectStore()) {
    EXPECT_EQ(Dataset::Open("file://" + uri, std::nullopt, With(known))->CountRows(), 100u);
  }

  try {
    Dataset::Open(uri, std::nullopt, With({{"timout", "60s"}}));
    FAIL() << "a misspelt key was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()),
              "storage option 'timout' is not one the reference knows (general keys such as allow_http, timeout, "
              "client_max_retries, or a store's own aws_*, google_* or azure_* keys)");
  }
  try {
    Dataset::Open(uri, std::nullopt, With({{"Timeout", "1s"}, {"timeout", "2s"}}));
    FAIL() << "a key given twice was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "storage option 'timeout' is given twice (keys ignore case)");
  }
  WriteOptions write;
  write.mode = WriteMode::kAppend;
  write.storage_options = {{"no_such_option", "1"}};
  EXPECT_THROW(Dataset::Write(uri, {IdNameBatch(100, 1)}, write), Error);
  EXPECT_EQ(Dataset::Open(uri)->CountRows(), 100u);  // nothing was written
}

}  // namespace
}  // namespace lancelet::testing
