// Blob columns written by the reference, read by lancelet (skipped without the oracle):
// - legacy blobs (LargeBinary + "lance-encoding:blob"): 2.1 BlobLayout pages, read as
//   struct<position, size> descriptors whose bytes are in the data file;
// - blob v2 (struct<data, uri> tagged "lance.blob.v2"): 2.2 full-zip
//   VariablePackedStruct descriptors; small blobs are in the data file, larger ones in
//   sidecar files next to it.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "format/blob_bytes.h"
#include "format/reference_file_util.h"
#include "format/v21_test_util.h"
#include "format/v21_value_codecs.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/scalar.h"
#include "support/json_rows.h"

namespace lancelet::format::reference_test {
namespace {

using lancelet::testing::OracleAvailable;
using lancelet::testing::RunOracle;
using lancelet::testing::TempDir;

std::string Blob(std::mt19937& rng, size_t size) {
  std::string s(size, '\0');
  for (auto& c : s) c = char(rng() & 0xFF);
  return s;
}

// n legacy blob values: every 17th null, every 23rd empty, the rest 10 to 5009 random bytes.
std::vector<Scalar> LegacyBlobValues(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Scalar> values;
  for (int64_t k = 0; k < n; ++k) {
    if (k % 17 == 3) values.push_back(Scalar::Null(DataType::LargeBinary()));
    else if (k % 23 == 5) values.push_back({DataType::LargeBinary(), std::string()});
    else values.push_back({DataType::LargeBinary(), Blob(rng, 10 + rng() % 5000)});
  }
  return values;
}

TEST(BlobSidecar, PathReversesTheIdBits) {
  EXPECT_EQ(BlobSidecarPath("/t/data/abc.lance", 1), "/t/data/abc/10000000000000000000000000000000.blob");
  EXPECT_EQ(BlobSidecarPath("/t/data/abc.lance", 2), "/t/data/abc/01000000000000000000000000000000.blob");
  EXPECT_THROW(BlobSidecarPath("/t/data/abc.bin", 2), Error);
}

TEST(LegacyBlobReference, DescriptorsPointAtTheBytes) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const int64_t n = 300;
  const std::vector<Scalar> values = LegacyBlobValues(n, 61);
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("blob", DataType::LargeBinary(), true, {{"lance-encoding:blob", "true"}})});
  std::vector<ArrayPtr> columns = {MakeArray(DataType::LargeBinary(), values)};
  TempDir dir;
  const std::string table = CreateReferenceTable(dir, "legacy", schema, columns, "2.1");
  const std::string file = OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, file);
  const std::string enc = PageEncodings(file, 0);
  ASSERT_NE(enc.find("blob_layout"), std::string::npos) << enc;

  ArrayPtr got = reader->ReadField(0, 0, uint64_t(n));
  ASSERT_TRUE(got->type->Equals(*v21::LegacyBlobDescriptorType()));
  for (int64_t k = 0; k < n; ++k) {
    SCOPED_TRACE(k);
    ASSERT_EQ(got->IsNull(k), values[size_t(k)].is_null());
    if (got->IsNull(k)) continue;
    EXPECT_EQ(ReadBlobBytes(*store, file, BlobDescriptorAt(*got, k)), values[size_t(k)].as_string());
  }
  std::vector<uint64_t> rows = {299, 3, 150};
  ArrayPtr taken = reader->TakeField(0, rows);
  EXPECT_TRUE(taken->IsNull(1));
  EXPECT_EQ(ReadBlobBytes(*store, file, BlobDescriptorAt(*taken, 2)), values[150].as_string());
  // The reference prints a blob column as its descriptors too.
  auto dump = RunOracle({"dump", table});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(lancelet::testing::DiffJsonLines(dump.out, ReadAsJsonLines(*reader, {"blob"})), "");
}

// Legacy blobs written by lancelet at 2.1: the bytes sit in the data file before their
// page, 64-byte aligned; the reference reads the descriptors as lancelet does, and the
// descriptors point at the bytes.
TEST(LegacyBlobWriter, ReferenceReadsWhatLanceletWrote) {
  const int64_t n = 300;
  const std::vector<Scalar> values = LegacyBlobValues(n, 63);
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int64(), false),
      Field::Make("blob", DataType::LargeBinary(), true, {{"lance-encoding:blob", "true"}})});
  std::vector<Scalar> ids;
  for (int64_t k = 0; k < n; ++k) ids.push_back({DataType::Int64(), k});
  auto batch = RecordBatch::Make(schema, {MakeArray(DataType::Int64(), ids), MakeArray(DataType::LargeBinary(), values)});
  TempDir dir;
  const std::string table = dir.path() + "/legacy.lance";
  WriteOptions options;
  options.file_version = "2.1";
  Dataset::Write(table, std::vector<RecordBatchPtr>{batch->Slice(0, 120), batch->Slice(120, n - 120)}, options);

  const std::string file = OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, file);
  const std::string enc = PageEncodings(file, 1);
  EXPECT_NE(enc.find("blob_layout"), std::string::npos) << enc;
  EXPECT_NE(enc.find("packed_struct"), std::string::npos) << enc;
  ArrayPtr got = reader->ReadField(1, 0, uint64_t(n));
  ASSERT_TRUE(got->type->Equals(*v21::LegacyBlobDescriptorType()));
  for (int64_t k = 0; k < n; ++k) {
    SCOPED_TRACE(k);
    ASSERT_EQ(got->IsNull(k), values[size_t(k)].is_null());
    if (got->IsNull(k)) continue;
    const BlobDescriptor d = BlobDescriptorAt(*got, k);
    EXPECT_EQ(d.size, values[size_t(k)].as_string().size());
    if (d.size > 0) {
      EXPECT_EQ(d.position % 64, 0u);
    }
    EXPECT_EQ(ReadBlobBytes(*store, file, d), values[size_t(k)].as_string());
  }
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  auto dump = RunOracle({"dump", table});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(lancelet::testing::DiffJsonLines(dump.out, ReadAsJsonLines(*reader, {"id", "blob"})), "");
}

// As the reference: legacy blobs are a 2.1 layout, refused at 2.2 before anything is written.
TEST(LegacyBlobWriter, RefusedAtFileVersion22) {
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("blob", DataType::LargeBinary(), true, {{"lance-encoding:blob", "true"}})});
  auto batch = RecordBatch::Make(schema, {MakeArray(DataType::LargeBinary(), {{DataType::LargeBinary(), std::string("x")}})});
  TempDir dir;
  WriteOptions options;
  options.file_version = "2.2";
  try {
    Dataset::Write(dir.path() + "/t.lance", std::vector<RecordBatchPtr>{batch}, options);
    FAIL() << "expected NotSupported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("field 'blob': legacy blob columns (metadata \"lance-encoding:blob\") cannot be "
                                         "written at file version 2.2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/t.lance/_versions"));
}

TEST(BlobV2Reference, InlinePackedAndDedicatedBlobs) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const auto blob_type =
      DataType::Struct({Field::Make("data", DataType::LargeBinary()), Field::Make("uri", DataType::Utf8())});
  std::mt19937 rng(62);
  std::vector<size_t> sizes;
  for (int k = 0; k < 40; ++k) sizes.push_back(k % 10 == 9 ? 100 * 1024 + size_t(k) : 1 + rng() % 3000);
  sizes.push_back(5 * 1024 * 1024);  // above the dedicated threshold (4 MiB)
  std::vector<Scalar> values;
  std::vector<std::string> bytes;
  for (size_t size : sizes) {
    bytes.push_back(Blob(rng, size));
    values.push_back({blob_type, std::vector<Scalar>{{DataType::LargeBinary(), bytes.back()},
                                                     Scalar::Null(DataType::Utf8())}});
  }
  const int64_t n = int64_t(values.size());
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("blob", blob_type, true, {{"ARROW:extension:name", "lance.blob.v2"}})});
  std::vector<ArrayPtr> columns = {MakeArray(blob_type, values)};
  TempDir dir;
  const std::string table = CreateReferenceTable(dir, "v2", schema, columns, "2.2");
  const std::string file = OnlyDataFile(table);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, file);
  const std::string enc = PageEncodings(file, 0);
  ASSERT_NE(enc.find("variable_packed_struct"), std::string::npos) << enc;

  ArrayPtr got = reader->ReadField(0, 0, uint64_t(n));
  ASSERT_EQ(got->type->children().size(), 5u);
  std::set<BlobKind> kinds;
  for (int64_t k = 0; k < n; ++k) {
    SCOPED_TRACE(k);
    const BlobDescriptor d = BlobDescriptorAt(*got, k);
    kinds.insert(d.kind);
    EXPECT_EQ(d.size, bytes[size_t(k)].size());
    EXPECT_EQ(ReadBlobBytes(*store, file, d), bytes[size_t(k)]);
  }
  EXPECT_TRUE(kinds.count(BlobKind::kInline));
  EXPECT_TRUE(kinds.count(BlobKind::kPacked) || kinds.count(BlobKind::kDedicated));
  std::vector<uint64_t> rows = {40, 9, 0};
  ArrayPtr taken = reader->TakeField(0, rows);
  EXPECT_EQ(ReadBlobBytes(*store, file, BlobDescriptorAt(*taken, 1)), bytes[9]);
  EXPECT_EQ(ReadBlobBytes(*store, file, BlobDescriptorAt(*taken, 0)), bytes[40]);
}

// The sidecar files next to a data file, by name, with their sizes.
std::map<std::string, uint64_t> Sidecars(const std::string& data_file) {
  std::map<std::string, uint64_t> out;
  const std::string dir = data_file.substr(0, data_file.size() - 6);
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    out[entry.path().filename().string()] = entry.file_size();
  return out;
}

// Blob v2 written by lancelet at 2.2, beside the reference writing the same rows: the same
// page layout, the same sidecar files, the same descriptors (inline positions included),
// and the reference reads lancelet's table as its own.
TEST(BlobV2Writer, SameDescriptorsAndSidecarsAsTheReference) {
  const auto blob_type =
      DataType::Struct({Field::Make("data", DataType::LargeBinary()), Field::Make("uri", DataType::Utf8())});
  std::mt19937 rng(64);
  std::vector<Scalar> values;
  std::vector<std::string> bytes;
  for (int k = 0; k < 44; ++k) {
    const size_t size = k == 20 ? 5 * 1024 * 1024 : k % 10 == 9 ? 100 * 1024 + size_t(k) : k == 4 ? 0 : 1 + rng() % 3000;
    bytes.push_back(Blob(rng, size));
    values.push_back({blob_type, std::vector<Scalar>{{DataType::LargeBinary(), bytes.back()}, Scalar::Null(DataType::Utf8())}});
  }
  values[7] = Scalar::Null(blob_type);
  bytes[7].clear();
  const int64_t n = int64_t(values.size());
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("blob", blob_type, true, {{"ARROW:extension:name", "lance.blob.v2"}})});
  std::vector<ArrayPtr> columns = {MakeArray(blob_type, values)};
  TempDir dir;
  const std::string ours = dir.path() + "/ours.lance";
  WriteOptions options;
  options.file_version = "2.2";
  Dataset::Write(ours, std::vector<RecordBatchPtr>{RecordBatch::Make(schema, columns)}, options);
  const std::string file = OnlyDataFile(ours);
  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, file);
  ArrayPtr got = reader->ReadField(0, 0, uint64_t(n));
  std::map<BlobKind, int> kinds;
  for (int64_t k = 0; k < n; ++k) {
    SCOPED_TRACE(k);
    ASSERT_EQ(got->IsNull(k), k == 7);
    if (k == 7) continue;
    const BlobDescriptor d = BlobDescriptorAt(*got, k);
    ++kinds[d.kind];
    EXPECT_EQ(d.size, bytes[size_t(k)].size());
    EXPECT_EQ(ReadBlobBytes(*store, file, d), bytes[size_t(k)]);
  }
  EXPECT_EQ(kinds[BlobKind::kInline], 38);  // one of them empty
  EXPECT_EQ(kinds[BlobKind::kPacked], 4);
  EXPECT_EQ(kinds[BlobKind::kDedicated], 1);
  EXPECT_EQ(Sidecars(file), (std::map<std::string, uint64_t>{
                                {"10000000000000000000000000000000.blob", 4 * 100 * 1024 + 9 + 19 + 29 + 39},
                                {"01000000000000000000000000000000.blob", 5 * 1024 * 1024}}));

  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const std::string theirs = CreateReferenceTable(dir, "theirs", schema, columns, "2.2");
  const std::string their_file = OnlyDataFile(theirs);
  EXPECT_EQ(PageEncodings(file, 0), PageEncodings(their_file, 0));
  EXPECT_EQ(Sidecars(file), Sidecars(their_file));
  auto their_reader = LanceFileReader::Open(*store, their_file);
  EXPECT_EQ(ReadAsJsonLines(*reader, {"blob"}), ReadAsJsonLines(*their_reader, {"blob"}));
  auto dump = RunOracle({"dump", ours});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(lancelet::testing::DiffJsonLines(dump.out, ReadAsJsonLines(*reader, {"blob"})), "");
}

// Rows the writer cannot store leave nothing behind: an external uri (the reference needs a
// registered base path for it), a row with neither data nor uri, blob v2 below 2.2.
TEST(BlobV2Writer, RefusesWhatItCannotStore) {
  const auto blob_type =
      DataType::Struct({Field::Make("data", DataType::LargeBinary()), Field::Make("uri", DataType::Utf8())});
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("blob", blob_type, true, {{"ARROW:extension:name", "lance.blob.v2"}})});
  auto write = [&](const Scalar& row, const std::string& version) {
    TempDir dir;
    WriteOptions options;
    options.file_version = version;
    std::string message;
    try {
      Dataset::Write(dir.path() + "/t.lance",
                     std::vector<RecordBatchPtr>{RecordBatch::Make(schema, {MakeArray(blob_type, {row})})}, options);
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_EQ(std::filesystem::exists(dir.path() + "/t.lance/_versions"), message.empty());
    return message;
  };
  const Scalar external{blob_type, std::vector<Scalar>{Scalar::Null(DataType::LargeBinary()),
                                                       {DataType::Utf8(), std::string("s3://bucket/a.bin")}}};
  EXPECT_NE(write(external, "2.2").find("field 'blob': blob v2 row 0 refers to the external blob 's3://bucket/a.bin'"),
            std::string::npos);
  const Scalar neither{blob_type, std::vector<Scalar>{Scalar::Null(DataType::LargeBinary()), Scalar::Null(DataType::Utf8())}};
  EXPECT_NE(write(neither, "2.2").find("field 'blob': blob v2 row 0 has neither data nor a uri"), std::string::npos);
  const Scalar small{blob_type, std::vector<Scalar>{{DataType::LargeBinary(), std::string("abc")}, Scalar::Null(DataType::Utf8())}};
  EXPECT_EQ(write(small, "2.2"), "");
  EXPECT_NE(write(small, "2.1").find("field 'blob': blob v2 columns need file version 2.2 or later (got 2.1)"),
            std::string::npos);

  // Failing after a value went to a sidecar: no sidecar, and no directory for them, remains.
  TempDir dir;
  const Scalar packed{blob_type, std::vector<Scalar>{{DataType::LargeBinary(), std::string(200 * 1024, 'p')},
                                                     Scalar::Null(DataType::Utf8())}};
  WriteOptions options;
  options.file_version = "2.2";
  EXPECT_THROW(Dataset::Write(dir.path() + "/t.lance",
                              std::vector<RecordBatchPtr>{RecordBatch::Make(schema, {MakeArray(blob_type, {packed, neither})})},
                              options),
               Error);
  std::vector<std::string> left;
  if (std::filesystem::exists(dir.path() + "/t.lance/data"))
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path() + "/t.lance/data"))
      left.push_back(entry.path().string());
  EXPECT_EQ(left, std::vector<std::string>{});
}

}  // namespace
}  // namespace lancelet::format::reference_test
