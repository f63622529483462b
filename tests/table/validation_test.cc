// Corrupt files are refused with one Corrupt error naming the file and the fragment;
// failed writes leave nothing behind; API errors name the right things.
#include <cstring>
#include <functional>

#include <gtest/gtest.h>

#include "format/lance_schema.h"
#include "io/object_store.h"
#include "format/row_id_sequence.h"
#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "support/sample_batches.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/deletions.h"

namespace lancelet {
namespace {

using testing::ThrownError;

using testing::IdNameBatch;
using testing::IdNameSchema;

// `ds`'s version read through a hand-edited manifest.
DatasetPtr WithManifest(const DatasetPtr& ds, const lance::table::Manifest& manifest) {
  const auto& state = table::StateOf(ds);
  return table::MakeDataset(table::MakeState(state.store, state.session, state.uri, state.manifest_path, manifest));
}

// The message of the Corrupt error `fn` throws ("no error" / "wrong kind: ..." otherwise).
template <typename Fn>
std::string CorruptMessage(Fn&& fn) {
  auto error = ThrownError(fn);
  if (!error) return "no error";
  if (error->kind() != ErrorKind::kCorrupt) return std::string("wrong kind: ") + error->what();
  return error->what();
}

class ValidationTest : public ::testing::Test {
 protected:
  // 100 rows in one fragment, then "id < 10" deleted: an Arrow deletion file of the
  // offsets 0..9, which lancelet writes ascending.
  DatasetPtr WithArrowDeletions() {
    auto ds = Dataset::Write(uri_, {IdNameBatch(0, 100)})->Delete("id < 10");
    const auto& file = table::StateOf(ds).manifest.fragments(0).deletion_file();
    EXPECT_EQ(file.file_type(), lance::table::DeletionFile::ARROW_ARRAY);
    deletion_path_ = table::DeletionFilePath(uri_, 0, file);
    return ds;
  }
  // Flips every bit of the 16 bytes holding offsets 0, 1, 2, 3 (now 2^32-1 ... 2^32-4).
  void FlipFirstOffsets() {
    std::string bytes = testing::ReadObject(deletion_path_);
    std::string ascending(40, '\0');
    for (uint32_t i = 0; i < 10; ++i) std::memcpy(ascending.data() + 4 * i, &i, 4);
    size_t at = bytes.find(ascending);
    ASSERT_NE(at, std::string::npos);
    for (size_t k = at; k < at + 16; ++k) bytes[k] = char(~bytes[k]);
    testing::PutObject(deletion_path_, bytes);
  }
  testing::TempDir dir_;
  std::string uri_ = dir_.Uri("ds.lance");
  std::string deletion_path_;
};

TEST_F(ValidationTest, BitFlippedArrowDeletionFileIsRefusedByEveryRead) {
  WithArrowDeletions();
  EXPECT_EQ(Dataset::Open(uri_)->CountRows(), 90u);
  FlipFirstOffsets();
  const std::string expected = "deletion file '" + deletion_path_ +
                               "' of fragment 0: offset 4294967295 at position 0 is beyond the fragment's 100 rows";
  auto ds = Dataset::Open(uri_);
  EXPECT_EQ(CorruptMessage([&] { ds->CountRows(); }), expected);  // count without a predicate reads it too
  EXPECT_EQ(CorruptMessage([&] { ds->CountRows("id > 50"); }), expected);
  EXPECT_EQ(CorruptMessage([&] { ds->NewScan().ToBatch(); }), expected);
  std::vector<uint64_t> offsets = {0};
  EXPECT_EQ(CorruptMessage([&] { ds->Take(offsets); }), expected);
  EXPECT_EQ(CorruptMessage([&] { ds->Delete("id = 50"); }), expected);
}

TEST_F(ValidationTest, DeletionCountMustMatchTheManifest) {
  auto ds = WithArrowDeletions();
  lance::table::Manifest m = table::StateOf(ds).manifest;
  m.mutable_fragments(0)->mutable_deletion_file()->set_num_deleted_rows(11);
  EXPECT_EQ(CorruptMessage([&] { WithManifest(ds, m)->CountRows(); }),
            "deletion file '" + deletion_path_ + "' of fragment 0: it holds 10 offsets, but the manifest says 11");
  // 0 means "not recorded": the file alone decides.
  m.mutable_fragments(0)->mutable_deletion_file()->set_num_deleted_rows(0);
  EXPECT_EQ(WithManifest(ds, m)->CountRows(), 90u);
}

TEST_F(ValidationTest, DeletionFileOfAShrunkFragmentIsRefused) {
  auto ds = WithArrowDeletions();
  lance::table::Manifest m = table::StateOf(ds).manifest;
  m.mutable_fragments(0)->set_physical_rows(9);  // offset 9 is now past the end
  EXPECT_EQ(CorruptMessage([&] { WithManifest(ds, m)->NewScan().ToBatch(); }),
            "deletion file '" + deletion_path_ +
                "' of fragment 0: offset 9 at position 9 is beyond the fragment's 9 rows");
}

TEST_F(ValidationTest, BitmapDeletionFileIsChecked) {
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 6000)})->Delete("id < 5500");
  const auto& file = table::StateOf(ds).manifest.fragments(0).deletion_file();
  ASSERT_EQ(file.file_type(), lance::table::DeletionFile::BITMAP);
  const std::string path = table::DeletionFilePath(uri_, 0, file);
  lance::table::Manifest m = table::StateOf(ds).manifest;
  m.mutable_fragments(0)->set_physical_rows(5000);
  EXPECT_EQ(CorruptMessage([&] { WithManifest(ds, m)->CountRows(); }),
            "deletion file '" + path + "' of fragment 0: offset 5499 is beyond the fragment's 5000 rows");
  testing::PutObject(path, "not a roaring bitmap");
  std::string message = CorruptMessage([&] { Dataset::Open(uri_)->NewScan().ToBatch(); });
  EXPECT_EQ(message.rfind("deletion file '" + path + "' of fragment 0: ", 0), 0u) << message;
}

TEST_F(ValidationTest, RowIdSequenceLengthMustMatchTheFragment) {
  WriteOptions o;
  o.enable_stable_row_ids = true;
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 10)}, o);
  lance::table::Manifest m = table::StateOf(ds).manifest;
  m.mutable_fragments(0)->set_inline_row_ids(format::RowIdSequence::FromRange(0, 12).Encode());
  EXPECT_EQ(CorruptMessage([&] { WithManifest(ds, m)->NewScan().Columns({"_rowid"}).ToBatch(); }),
            "row ids of fragment 0 in '" + uri_ + "': 12 ids for 10 physical rows of which 0 are deleted");
  // A segment claiming 2^62 ids is refused before anything is materialized.
  m.mutable_fragments(0)->set_inline_row_ids(format::RowIdSequence::FromRange(0, uint64_t{1} << 62).Encode());
  EXPECT_EQ(CorruptMessage([&] { WithManifest(ds, m)->NewScan().Columns({"_rowid"}).ToBatch(); }),
            "row ids of fragment 0 in '" + uri_ + "': 4611686018427387904 ids for 10 physical rows of which 0 are "
            "deleted");
}

TEST_F(ValidationTest, VersionSequenceLengthMustMatchTheFragment) {
  WriteOptions o;
  o.enable_stable_row_ids = true;
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 10)}, o);
  lance::table::Manifest m = table::StateOf(ds).manifest;
  m.mutable_fragments(0)->set_inline_last_updated_at_versions(format::VersionSequence::Uniform(7, 1).Encode());
  EXPECT_EQ(CorruptMessage([&] { WithManifest(ds, m)->Update({{"name", "'x'"}}, "id = 1"); }),
            "last_updated_at versions of fragment 0: the sequence has 7 rows but the fragment has 10");
  // The untouched dataset updates fine.
  EXPECT_EQ(ds->Update({{"name", "'x'"}}, "id = 1")->version(), 2u);
}

TEST_F(ValidationTest, UnknownFilterColumnListsTheDatasetColumns) {
  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 10)});
  for (auto fn : std::vector<std::function<void()>>{
           [&] { ds->Delete("nope = 1 AND id = 2"); },
           [&] { ds->Update({{"name", "'x'"}}, "nope = 1"); },
           [&] { ds->CountRows("nope = 1"); },
           [&] { ds->NewScan().Columns({"name"}).Filter("nope = 1").ToBatch(); },
       }) {
    auto error = ThrownError(fn);
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(error->what()).find("unknown column 'nope' (columns: id, name)"), std::string::npos)
        << error->what();
  }
}

TEST_F(ValidationTest, OpeningAMissingDatasetIsNotFoundNamingThePath) {
  auto error = ThrownError([] { Dataset::Open("/no/such"); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), ErrorKind::kNotFound);
  EXPECT_EQ(std::string(error->what()), "dataset '/no/such' does not exist");
}

TEST(EscapeForMessage, EscapesInvalidUtf8AndControlBytesOnly) {
  EXPECT_EQ(EscapeForMessage("plain 'text' \\ ok"), "plain 'text' \\ ok");
  EXPECT_EQ(EscapeForMessage("\xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80"), "\xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80");  // valid
  EXPECT_EQ(EscapeForMessage(std::string("a\xFF\x01\n\x7F", 5) + std::string(1, '\0')), "a\\xFF\\x01\\x0A\\x7F\\x00");
  EXPECT_EQ(EscapeForMessage("\xE2\x82"), "\\xE2\\x82");          // truncated sequence
  EXPECT_EQ(EscapeForMessage("\xC0\xAF"), "\\xC0\\xAF");          // overlong '/'
  EXPECT_EQ(EscapeForMessage("\xED\xA0\x80"), "\\xED\\xA0\\x80");  // a surrogate
  const std::string once = EscapeForMessage("x\xFFy");
  EXPECT_EQ(EscapeForMessage(once), once);  // idempotent
}

// Yields `good` batches of 5 rows, then fails like a full disk or a bad input line.
class FailingReader final : public RecordBatchReader {
 public:
  explicit FailingReader(int good) : good_(good) {}
  SchemaPtr schema() const override { return IdNameSchema(); }
  RecordBatchPtr Next() override {
    if (next_ == good_) ThrowIo("input failed after {} batches", good_);
    return IdNameBatch(5 * next_++, 5);
  }

 private:
  int good_;
  int next_ = 0;
};

TEST_F(ValidationTest, FailedCreateLeavesNothingBehind) {
  WriteOptions o;
  o.max_rows_per_file = 5;  // two data files are written before the failure
  FailingReader reader(2);
  auto error = ThrownError([&] { Dataset::Write(uri_, reader, o); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(std::string(error->what()), "input failed after 2 batches");
  auto store = io::OpenStore(uri_).store;
  EXPECT_FALSE(store->Exists(uri_));
  EXPECT_EQ(testing::ObjectsUnder(dir_.RootUri()), std::vector<std::string>{});

  // A directory that was there before stays, emptied of what we wrote (S3 has none).
  if (testing::TempDir::InS3()) return;
  store->CreateDir(uri_);
  FailingReader again(2);
  EXPECT_TRUE(ThrownError([&] { Dataset::Write(uri_, again, o); }).has_value());
  ASSERT_TRUE(store->Exists(uri_));
  EXPECT_EQ(testing::ObjectsUnder(uri_), std::vector<std::string>{});
  EXPECT_EQ(Dataset::Write(uri_, {IdNameBatch(0, 3)})->CountRows(), 3u);
}

// Two columns, or two fields of one struct, with one name would write a schema no reader
// can resolve: refused by name before anything is written, on create and on append.
TEST_F(ValidationTest, DuplicateNamesAreRefusedByName) {
  auto ints = [](int64_t n) {
    FixedWidthBuilder<int32_t> b(DataType::Int32());
    for (int64_t i = 0; i < n; ++i) b.Append(int32_t(i));
    return b.Finish();
  };
  auto twice = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("x", DataType::Int32()), Field::Make("x", DataType::Int32())});
  auto batch = std::make_shared<RecordBatch>(twice, std::vector<ArrayPtr>{ints(3), ints(3)}, 3);
  auto error = ThrownError([&] { Dataset::Write(uri_, {batch}); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind(), ErrorKind::kInvalidArgument);
  EXPECT_EQ(std::string(error->what()), "duplicate column name 'x'");
  EXPECT_FALSE(io::OpenStore(uri_).store->Exists(uri_));

  auto inner = DataType::Struct({Field::Make("a", DataType::Int32()), Field::Make("a", DataType::Int32())});
  Schema nested({Field::Make("s", inner)});
  error = ThrownError([&] { format::LanceSchema::FromArrow(nested); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(std::string(error->what()), "duplicate field name 'a' in struct 's'");

  auto ds = Dataset::Write(uri_, {IdNameBatch(0, 3)});
  auto names = std::make_shared<Schema>(std::vector<FieldPtr>{IdNameSchema()->field(0), IdNameSchema()->field(0)});
  auto appended = std::make_shared<RecordBatch>(names, std::vector<ArrayPtr>{IdNameBatch(3, 2)->column(0),
                                                                            IdNameBatch(3, 2)->column(0)}, 2);
  error = ThrownError([&] { ds->Append({appended}); });
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(std::string(error->what()), "duplicate column name 'id'");
  EXPECT_EQ(Dataset::Open(uri_)->version(), 1u);
}

}  // namespace
}  // namespace lancelet
