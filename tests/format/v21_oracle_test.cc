// 2.1 / 2.2 data files against the reference implementation (skipped without the oracle):
// - the reference writes a table; lancelet reads its data file (columns whose default
//   encoding is Flat, Variable or full-zip);
// - lancelet writes a data file with the same schema, field ids and rows as the
//   reference's, it replaces the reference's file, and the reference reads the table.
#include <gtest/gtest.h>

#include <filesystem>

#include "format/lance_file.h"
#include "format/v21_test_util.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/record_batch.h"
#include "support/test_env.h"
#include "table/manifest_store.h"

namespace lancelet::format::v21_test {
namespace {

namespace fs = std::filesystem;
using lancelet::testing::OracleAvailable;
using lancelet::testing::RunOracle;
using lancelet::testing::TempDir;

std::string DataFile(const std::string& table) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(table + "/data"))
    if (e.path().extension() == ".lance") files.push_back(e.path().string());
  if (files.size() != 1) throw std::runtime_error("expected one data file in " + table);
  return files[0];
}

void CreateTable(const TempDir& dir, const std::string& table, const SchemaPtr& schema, const std::vector<ArrayPtr>& columns,
                 const std::string& version) {
  const std::string arrow = dir.Join(version + ".arrow");
  lancelet::testing::WriteStringToFile(arrow, WriteIpcFile(*schema, {RecordBatch::Make(schema, columns)}));
  auto r = RunOracle({"create", table, "--data", arrow, "--file-version", version});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

class V21Oracle : public ::testing::TestWithParam<std::string> {};

TEST_P(V21Oracle, ReadsReferenceDataFile) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const std::string version = GetParam();
  const int64_t n = 3000;
  RandomData flat(21, 0.0, 0.0);
  RandomData bin(22, 0.0, 0.0);
  bin.set_lengths(8, 64);
  RandomData big(23, 0.0, 0.0);
  big.set_lengths(300, 1000);
  const auto vec_type = DataType::FixedSizeList(DataType::Float32(), 128);
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("f32", DataType::Float32()), Field::Make("i32", DataType::Int32()),
      Field::Make("flag", DataType::Bool()), Field::Make("bin", DataType::Binary()),
      Field::Make("vec", vec_type), Field::Make("big", DataType::Binary()),
      Field::Make("vec4", DataType::FixedSizeList(DataType::Float32(), 4))});
  std::vector<ArrayPtr> columns = {flat.Array(DataType::Float32(), n), flat.Array(DataType::Int32(), n),
                                   flat.Array(DataType::Bool(), n),    bin.Array(DataType::Binary(), n),
                                   flat.Array(vec_type, n),            big.Array(DataType::Binary(), n),
                                   flat.Array(DataType::FixedSizeList(DataType::Float32(), 4), n)};
  TempDir dir;
  const std::string table = dir.Join("t.lance");
  CreateTable(dir, table, schema, columns, version);

  auto store = io::MakeLocalStore();
  auto reader = LanceFileReader::Open(*store, DataFile(table));
  EXPECT_EQ(reader->version().ToString(), version);
  ASSERT_EQ(reader->num_rows(), uint64_t(n));
  for (size_t c = 0; c < columns.size(); ++c) {
    const std::string& name = schema->field(c)->name;
    SCOPED_TRACE(name);
    const auto& fields = reader->schema().fields();
    size_t index = 0;
    while (index < fields.size() && fields[index].name != name) ++index;
    ASSERT_LT(index, fields.size());
    ArrayPtr got;
    try {
      got = reader->ReadField(index, 0, uint64_t(n));
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    ValidateArray(*got, name);
    EXPECT_TRUE(ArraysEqual(*got, *columns[c])) << got->type->ToString() << " vs " << columns[c]->type->ToString();
    std::vector<uint64_t> rows = {2999, 5, 1500, 1024, 1023, 5};
    std::vector<int64_t> idx(rows.begin(), rows.end());
    ArrayPtr taken = reader->TakeField(index, rows);
    EXPECT_TRUE(ArraysEqual(*taken, *Take(*columns[c], idx)));
  }
}

TEST_P(V21Oracle, ReferenceReadsLanceletDataFile) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const std::string version = GetParam();
  const int64_t n = 2500;
  RandomData gen(31, 0.1, 0.1);
  RandomData big(32, 0.1, 0.0);
  big.set_lengths(300, 600);
  const auto point = DataType::Struct({Field::Make("a", DataType::Int32()), Field::Make("b", DataType::Utf8())});
  const auto vec = DataType::FixedSizeList(DataType::Float32(), 16);
  const auto nested = DataType::List(DataType::List(DataType::Int32()));
  const auto lstruct = DataType::List(DataType::Struct(
      {Field::Make("x", DataType::Float64()), Field::Make("y", DataType::List(DataType::Int64()))}));
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int64()), Field::Make("i32n", DataType::Int32()),
      Field::Make("s", DataType::Utf8()), Field::Make("flag", DataType::Bool()),
      Field::Make("ls", DataType::List(DataType::Utf8())), Field::Make("nested", nested),
      Field::Make("point", point), Field::Make("vec", vec), Field::Make("big", DataType::LargeBinary()),
      Field::Make("ts", DataType::Timestamp(TimeUnit::kMicro)), Field::Make("d", DataType::Date32()),
      Field::Make("lstruct", lstruct), Field::Make("f16", DataType::Float16()),
      Field::Make("none", DataType::Int32()), Field::Make("empties", DataType::List(DataType::Int32()))});
  std::vector<Scalar> ids;
  for (int64_t k = 0; k < n; ++k) ids.push_back({DataType::Int64(), k});
  std::vector<ArrayPtr> columns = {MakeArray(DataType::Int64(), ids)};
  for (size_t c = 1; c < schema->num_fields(); ++c) {
    const auto& type = schema->field(c)->type;
    const std::string& name = schema->field(c)->name;
    if (name == "none") {
      columns.push_back(MakeNullArray(type, n));
    } else if (name == "empties") {
      std::vector<Scalar> lists;
      for (int64_t k = 0; k < n; ++k) lists.push_back(k % 3 ? Scalar{type, std::vector<Scalar>{}} : Scalar::Null(type));
      columns.push_back(MakeArray(type, lists));
    } else {
      columns.push_back(name == "big" ? big.Array(type, n) : gen.Array(type, n));
    }
  }
  TempDir dir;
  const std::string table = dir.Join("t.lance");
  CreateTable(dir, table, schema, columns, version);
  auto before = RunOracle({"dump", table});
  ASSERT_EQ(before.exit_code, 0) << before.err;

  auto store = io::MakeLocalStore();
  const std::string path = DataFile(table);
  auto reference = LanceFileReader::Open(*store, path);
  const std::string ours = dir.Join("ours.lance");
  FileWriterOptions options;
  options.version = FileVersion::Parse(version);
  {
    LanceFileWriter writer(*store, ours, reference->schema(), options);
    writer.Write(*RecordBatch::Make(schema, columns));
    writer.Finish();
  }
  // Our file must read back by itself first.
  auto mine = LanceFileReader::Open(*store, ours);
  for (size_t c = 0; c < columns.size(); ++c)
    EXPECT_TRUE(ArraysEqual(*mine->ReadField(c, 0, uint64_t(n)), *columns[c])) << schema->field(c)->name;
  reference.reset();
  const uint64_t size = fs::file_size(ours);
  fs::rename(ours, path);
  // The manifest caches each data file's size, and the reference reads the footer there.
  auto latest = table::LatestManifest(*store, table);
  ASSERT_TRUE(latest.has_value());
  auto manifest = table::ReadManifest(*store, latest->path);
  ASSERT_EQ(manifest.fragments_size(), 1);
  ASSERT_EQ(manifest.fragments(0).files_size(), 1);
  manifest.mutable_fragments(0)->mutable_files(0)->set_file_size_bytes(size);
  store->Put(latest->path, table::EncodeManifestFile(manifest, nullptr));
  auto after = RunOracle({"dump", table});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  const auto want = lancelet::testing::SplitLines(before.out);
  const auto got = lancelet::testing::SplitLines(after.out);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k)
    if (got[k] != want[k]) {
      ADD_FAILURE() << "row " << k << " differs:\n  reference file: " << want[k] << "\n  lancelet file:  " << got[k];
      break;
    }
  auto filtered = RunOracle({"count", table, "--where", "i32n > 0 AND s IS NOT NULL"});
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  EXPECT_NE(filtered.out, "0\n");
}

TEST_P(V21Oracle, ReferenceConstantAndCompressedPages) {
  if (!OracleAvailable()) GTEST_SKIP() << "oracle not installed";
  const std::string version = GetParam();
  const int64_t n = 5000;
  std::vector<Scalar> seq, constant, nulls;
  for (int64_t k = 0; k < n; ++k) {
    seq.push_back({DataType::Int64(), k});
    constant.push_back({DataType::Int32(), int64_t(42)});
    nulls.push_back(Scalar::Null(DataType::Int32()));
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("seq", DataType::Int64()),
                                                               Field::Make("constant", DataType::Int32()),
                                                               Field::Make("nulls", DataType::Int32())});
  std::vector<ArrayPtr> columns = {MakeArray(DataType::Int64(), seq), MakeArray(DataType::Int32(), constant),
                                   MakeArray(DataType::Int32(), nulls)};
  TempDir dir;
  const std::string table = dir.Join("t.lance");
  CreateTable(dir, table, schema, columns, version);
  auto store = io::MakeLocalStore();
  const std::string path = DataFile(table);
  auto reader = LanceFileReader::Open(*store, path);
  // seq: InlineBitpacking; constant: Rle in 2.1, ConstantLayout with an inline value in 2.2.
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(0, 0, uint64_t(n)), *columns[0]));
  EXPECT_TRUE(ArraysEqual(*reader->ReadField(1, 0, uint64_t(n)), *columns[1]));
  // nulls: the all-null layout (2.1) / ConstantLayout without a value (2.2).
  ArrayPtr got = reader->ReadField(2, 0, uint64_t(n));
  EXPECT_TRUE(ArraysEqual(*got, *columns[2]));
  std::vector<uint64_t> rows = {4999, 0, 17};
  EXPECT_EQ(reader->TakeField(2, rows)->null_count, 3);
}

INSTANTIATE_TEST_SUITE_P(Versions, V21Oracle, ::testing::Values("2.1", "2.2"));

}  // namespace
}  // namespace lancelet::format::v21_test
