
#include <gtest/gtest.h>

#include "io/object_store.h"
#include "lancelet//builder.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/manifest_store.h"

namespace lancelet {
namespace {

using testing::TempDir;

using testing::IdNameBatch;
using testing::IdNameSchema;

std::vector<int64_t> Ids(const RecordBatch& batch) {
  const auto& col = batch.column("id");
  return std::vector<int64_t>(col->values<int64_t>(), col->values<int64_t>() + col->length);
}

std::vector<int64_t> Range(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; ++i) v.push_back(i);
  return v;
}

class DatasetTest : public ::testing::TestWithParam<std::string> {
 protected:
  WriteOptions Options(int64_t rows_per_file = 1024 * 1024) {
    WriteOptions o;
    o.file_version = GetParam();
    o.max_rows_per_file = rows_per_file;
    return o;
  }
  TempDir dir_;
  std::string uri_ = dir_.Uri("ds.lance");
};

TEST_P(DatasetTest, CreateSplitsIntoFragmentsAndScansInOrder) {
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 25)}, Options(10));
  EXPECT_EQ(ds->version(), 1u);
  EXPECT_EQ(table::StatePtrOf(ds) != nullptr, true);
  EXPECT_EQ(ds->CountRows(), 25u);
  auto all = ds->NewScan().ToBatch();
  EXPECT_EQ(Ids(*all), Range(0, 25));
  EXPECT_EQ(all->column("name")->null_count, 4);  // 3, 10, 17, 24
  auto reopened = Dataset::Open(uri_);
  EXPECT_EQ(reopened->version(), 1u);
  EXPECT_TRUE(reopened->schema()->Equals(*IdNameSchema()));
}

TEST_P(DatasetTest, AppendAddsAVersionAndKeepsTheOldOne) {
  auto v1 = Dataset::Write(uri_, {IdNameBatch(0, 5)}, Options());
  auto v2 = v1->Append({IdNameBatch(5, 5)});
  EXPECT_EQ(v2->version(), 2u);
  EXPECT_EQ(Ids(*v2->NewScan().ToBatch()), Range(0, 10));
  EXPECT_EQ(Ids(*Dataset::Open(uri_, 1)->NewScan().ToBatch()), Range(0, 5));
  auto versions = v2->ListVersions();
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0].operation, "Overwrite");
  EXPECT_EQ(versions[1].operation, "Append");
}

TEST_P(DatasetTest, DeleteHidesRowsFromScanCountAndTake) {
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 20)}, Options(8));
  auto after = ds->Delete("id % 3 = 0 OR id >= 18");
  EXPECT_EQ(after->version(), 2u);
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 18; ++i)
    if (i % 3 != 0) expected.push_back(i);
  EXPECT_EQ(Ids(*after->NewScan().ToBatch()), expected);
  EXPECT_EQ(after->CountRows(), expected.size());
  EXPECT_EQ(after->CountRows("id > 10"), 5u);  // 11, 13, 14, 16, 17
  EXPECT_EQ(after->PhysicalRows(), 20u);  // the manifest's count: deleted rows included
  std::vector<uint64_t> offsets = {0, 5, 11};
  EXPECT_EQ(Ids(*after->Take(offsets)), (std::vector<int64_t>{expected[0], expected[5], expected[11]}));
  // The old version still has every row.
  EXPECT_EQ(after->Checkout(1)->CountRows(), 20u);
}

TEST_P(DatasetTest, DeletingAWholeFragmentDropsIt) {
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 20)}, Options(10));
  auto after = ds->Delete("id < 10");
  EXPECT_EQ(table::StateOf(after).manifest.fragments_size(), 1);
  EXPECT_EQ(Ids(*after->NewScan().ToBatch()), Range(10, 20));
}

TEST_P(DatasetTest, ManyDeletionsUseTheBitmapKind) {
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 12000)}, Options());
  auto after = ds->Delete("id % 2 = 0");
  const auto& d = table::StateOf(after).manifest.fragments(0).deletion_file();
  EXPECT_EQ(d.file_type(), lance::table::DeletionFile::BITMAP);
  EXPECT_EQ(d.num_deleted_rows(), 6000u);
  auto few = Dataset::Open(uri_)->Delete("id = 1");
  EXPECT_EQ(few->CountRows(), 5999u);
  auto small = Dataset::Write(dir_.Uri("small.lance"), {IdNameBatch(0, 10)}, Options())->Delete("id = 1");
  EXPECT_EQ(table::StateOf(small).manifest.fragments(0).deletion_file().file_type(),
            lance::table::DeletionFile::ARROW_ARRAY);
}

TEST_P(DatasetTest, ScanProjectionFilterLimitOffset) {
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 100)}, Options(30));
  auto batch = ds->NewScan().Columns({"name", "id"}).Filter("id >= 40").Offset(5).Limit(3).ToBatch();
  ASSERT_EQ(batch->num_columns(), 2u);
  EXPECT_EQ(batch->schema()->field(0)->name, "name");
  EXPECT_EQ(Ids(*batch), (std::vector<int64_t>{45, 46, 47}));
  // Filter on a column that is not projected.
  auto names = ds->NewScan().Columns({"name"}).Filter("id = 42").ToBatch();
  ASSERT_EQ(names->num_rows(), 1);
  EXPECT_EQ(names->column(0)->GetView(0), "n42");
  EXPECT_EQ(ds->NewScan().Limit(0).ToBatch()->num_rows(), 0);
}

TEST_P(DatasetTest, RowAddressesAndTakeByAddress) {
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 10)}, Options(4));
  auto batch = ds->NewScan().Columns({"id", "_rowaddr", "_rowid"}).Filter("id IN (1, 5, 9)").ToBatch();
  const uint64_t* addr = batch->column("_rowaddr")->values<uint64_t>();
  EXPECT_EQ(addr[0], 1u);
  EXPECT_EQ(addr[1], (1ull << 32) | 1);
  EXPECT_EQ(addr[2], (2ull << 32) | 1);
  // Without stable row ids, the row id is the address.
  EXPECT_EQ(batch->column("_rowid")->values<uint64_t>()[2], (2ull << 32) | 1);
  std::vector<uint64_t> want = {(2ull << 32) | 1, 0};
  EXPECT_EQ(Ids(*ds->TakeRowAddresses(want)), (std::vector<int64_t>{9, 0}));
}

TEST_P(DatasetTest, StableRowIdsSurviveAppend) {
  WriteOptions o = Options(4);
  o.enable_stable_row_ids = true;
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 6)}, o)->Append({IdNameBatch(6, 3)});
  auto batch = ds->NewScan().Columns({"id", "_rowid"}).ToBatch();
  for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(batch->column("_rowid")->values<uint64_t>()[i], uint64_t(i));
  EXPECT_EQ(table::StateOf(ds).manifest.next_row_id(), 9u);
  EXPECT_EQ(table::StateOf(ds).manifest.reader_feature_flags() & 2, 2u);
}

TEST_P(DatasetTest, AppendWithWrongSchemaFailsAndChangesNothing) {
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 3)}, Options());
  auto bad_schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("id", DataType::Int32())});
  FixedWidthBuilder<int32_t> b(DataType::Int32());
  b.Append(1);
  auto bad = RecordBatch::Make(bad_schema, {b.Finish()});
  EXPECT_THROW(ds->Append({bad}), Error);
  EXPECT_EQ(Dataset::Open(uri_)->version(), 1u);
  EXPECT_EQ(io::OpenStore(uri_).store->List(uri_ + "/data").size(), 1u);
}

TEST_P(DatasetTest, CreateRefusesAnExistingDataset) {
  Dataset::Write(uri_, {IdNameBatch(0, 3)}, Options());
  try {
    Dataset::Write(uri_, {IdNameBatch(0, 3)}, Options());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
  }
  WriteOptions o = Options();
  o.mode = WriteMode::kOverwrite;
  auto replaced = Dataset::Write(uri_, {IdNameBatch(100, 2)}, o);
  EXPECT_EQ(replaced->version(), 2u);
  EXPECT_EQ(Ids(*replaced->NewScan().ToBatch()), (std::vector<int64_t>{100, 101}));
}

TEST_P(DatasetTest, OpenErrorsNameThePath) {
  try {
    Dataset::Open(dir_.Uri("missing.lance"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_NE(std::string(e.what()).find("missing.lance"), std::string::npos);
  }
  Dataset::Write(uri_, {IdNameBatch(0, 3)}, Options());
  try {
    Dataset::Open(uri_, 7);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "dataset '" + uri_ + "' has no version 7 (versions 1 to 1 exist)");
  }
}

TEST_P(DatasetTest, WritesTheVersionHintAndV2ManifestNames) {
  auto v2 = Dataset::Write(uri_, {IdNameBatch(0, 3)}, Options())->Append({IdNameBatch(3, 1)});
  auto store = io::OpenStore(uri_).store;
  const std::string hint = uri_ + "/_versions/latest_version_hint.json";
  if (store->costly_requests()) {
    EXPECT_FALSE(store->Exists(hint));  // as the reference: an object store lists instead
  } else {
    EXPECT_EQ(store->ReadObject(hint), "{\"version\":2}");
  }
  EXPECT_TRUE(io::OpenStore(uri_).store->Exists(uri_ + "/_versions/18446744073709551613.manifest"));
  // The state a commit returns names the manifest it wrote (not version 0's).
  EXPECT_EQ(table::StateOf(v2).manifest_path, uri_ + "/_versions/18446744073709551613.manifest");
}

INSTANTIATE_TEST_SUITE_P(FileVersions, DatasetTest, ::testing::Values("2.0", "2.1", "2.2"),
                         [](const auto& info) { return "v" + std::string(1, info.param[0]) + "_" + info.param[2]; });

TEST(ManifestNames, ParseBothSchemes) {
  EXPECT_EQ(table::ManifestFileNameV2(1), "18446744073709551614.manifest");
  EXPECT_EQ(table::ParseManifestFileName("18446744073709551614.manifest"), 1u);
  EXPECT_EQ(table::ParseManifestFileName("12.manifest"), 12u);
  EXPECT_EQ(table::ParseManifestFileName("latest_version_hint.json"), std::nullopt);
  EXPECT_EQ(table::ParseManifestFileName("x.manifest"), std::nullopt);
}

}  // namespace
}  // namespace lancelet
