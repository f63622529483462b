#include "support/sample_batches.h"

#include <string>

#include "lancelet/builder.h"
#include "lancelet/ipc.h"
#include "support/test_env.h"

namespace lancelet::testing {

SchemaPtr IdNameSchema() {
  return std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("id", DataType::Int64()), Field::Make("name", DataType::Utf8())});
}

std::vector<int64_t> ScanIds(const DatasetPtr& ds) {
  auto batch = ds->NewScan().Columns({"id"}).ToBatch();
  const auto& col = batch->column("id");
  return std::vector<int64_t>(col->values<int64_t>(), col->values<int64_t>() + col->length);
}

std::vector<int64_t> IdRange(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; ++i) v.push_back(i);
  return v;
}

RecordBatchPtr IdNameBatch(int64_t start, int64_t n) {
  FixedWidthBuilder<int64_t> ids(DataType::Int64());
  BinaryBuilder names(DataType::Utf8());
  for (int64_t i = start; i < start + n; ++i) {
    ids.Append(i);
    if (i % 7 == 3) names.AppendNull();
    else names.Append("n" + std::to_string(i));
  }
  return RecordBatch::Make(IdNameSchema(), {ids.Finish(), names.Finish()});
}

RecordBatchPtr IdABBatch(int64_t n) {
  FixedWidthBuilder<int64_t> id(DataType::Int64()), a(DataType::Int64()), b(DataType::Int64());
  for (int64_t i = 0; i < n; ++i) {
    id.Append(i);
    a.Append(i % 10);
    b.Append(i);
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int64()), Field::Make("a", DataType::Int64()), Field::Make("b", DataType::Int64())});
  return std::make_shared<RecordBatch>(schema, std::vector<ArrayPtr>{id.Finish(), a.Finish(), b.Finish()}, n);
}

ArrayPtr Int64s(const std::vector<std::optional<int64_t>>& values) {
  FixedWidthBuilder<int64_t> b(DataType::Int64());
  for (auto v : values) v ? b.Append(*v) : b.AppendNull();
  return b.Finish();
}

ArrayPtr Strings(const std::vector<std::optional<std::string>>& values) {
  BinaryBuilder b(DataType::Utf8());
  for (const auto& v : values) v ? b.Append(*v) : b.AppendNull();
  return b.Finish();
}

RecordBatchPtr ReadArrowFile(const std::string& path) {
  auto reader = ReadIpc(ReadFileToString(path), path);
  std::vector<RecordBatchPtr> batches;
  while (auto b = reader->Next()) batches.push_back(b);
  return RecordBatch::Concatenate(reader->schema(), batches);
}

ArrayPtr PickRows(const RecordBatch& source, size_t c, const std::vector<uint32_t>& rows) {
  std::vector<int64_t> idx(rows.begin(), rows.end());
  return Take(*source.column(c), idx);
}

}  // namespace lancelet::testing
