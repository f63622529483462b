#include "table/fragment_writer.h"

#include <random>

#include <fmt/format.h>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "table/manifest_store.h"

namespace lancelet::table {

std::string NewDataFileName() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  // 128 random bits as hex, like a UUID without dashes: collisions are not a concern.
  return fmt::format("{:016x}{:016x}.lance", rng(), rng());
}

lance::table::DataFile DescribeDataFile(const std::string& name, const format::LanceFileWriter& writer,
                                        format::FileVersion version, uint64_t size) {
  lance::table::DataFile file;
  file.set_path(name);
  for (int32_t id : writer.FieldIds()) file.add_fields(id);
  for (int32_t c : writer.ColumnIndices()) file.add_column_indices(c);
  file.set_file_major_version(version.major);
  file.set_file_minor_version(version.minor);
  file.set_file_size_bytes(size);
  return file;
}

RecordBatchPtr ConformBatch(const RecordBatch& batch, const SchemaPtr& schema) {
  const Schema& in = *batch.schema();
  format::CheckUniqueNames(in.fields());
  if (in.num_fields() != schema->num_fields())
    ThrowInvalid("input has {} columns ({}), but the dataset has {} ({})", in.num_fields(), in.ToString(),
                 schema->num_fields(), schema->ToString());
  std::vector<ArrayPtr> columns;
  for (const auto& field : schema->fields()) {
    int i = in.FieldIndex(field->name);
    if (i < 0) ThrowInvalid("input has no column '{}' (dataset schema: {})", field->name, schema->ToString());
    const ArrayPtr& column = batch.column(size_t(i));
    if (!column->type->Equals(*field->type))
      ThrowInvalid("column '{}' has type {} in the input, but {} in the dataset", field->name,
                   column->type->ToString(), field->type->ToString());
    if (!field->nullable && column->null_count > 0)
      ThrowInvalid("column '{}' is not nullable, but the input has {} nulls", field->name, column->null_count);
    columns.push_back(column);
  }
  return std::make_shared<RecordBatch>(schema, std::move(columns), batch.num_rows());
}

FragmentWriter::FragmentWriter(io::ObjectStore& store, AttemptFiles& files, std::string uri,
                               format::LanceSchema schema, format::FileVersion version, int64_t max_rows_per_file)
    : store_(store),
      files_(files),
      uri_(std::move(uri)),
      schema_(std::move(schema)),
      arrow_schema_(schema_.ToArrow()),
      version_(version),
      max_rows_per_file_(max_rows_per_file) {
  if (max_rows_per_file_ <= 0 || uint64_t(max_rows_per_file_) > kMaxRowsPerFile)
    ThrowInvalid("max_rows_per_file {}: expected 1 to {} (a fragment's rows are addressed by 32-bit offsets)",
                 max_rows_per_file_, kMaxRowsPerFile);
}

FragmentWriter::~FragmentWriter() = default;

void FragmentWriter::Write(const RecordBatch& input) {
  RecordBatchPtr batch = ConformBatch(input, arrow_schema_);
  int64_t done = 0;
  while (done < batch->num_rows()) {
    if (!file_) {
      std::string dir = io::JoinPath(uri_, kDataDir);
      store_.CreateDir(dir);
      file_name_ = NewDataFileName();
      files_.Add(io::JoinPath(dir, file_name_));
      file_ = std::make_unique<format::LanceFileWriter>(store_, io::JoinPath(dir, file_name_), schema_,
                                                        format::FileWriterOptions{version_});
      rows_in_file_ = 0;
    }
    int64_t take = std::min(batch->num_rows() - done, max_rows_per_file_ - rows_in_file_);
    file_->Write(take == batch->num_rows() ? *batch : *batch->Slice(done, take));
    done += take;
    rows_in_file_ += take;
    if (rows_in_file_ == max_rows_per_file_) CloseFile();
  }
}

void FragmentWriter::CloseFile() {
  if (!file_) return;
  uint64_t size = file_->Finish();
  lance::table::DataFragment fragment;
  fragment.set_physical_rows(uint64_t(rows_in_file_));
  *fragment.add_files() = DescribeDataFile(file_name_, *file_, version_, size);
  fragments_.push_back(std::move(fragment));
  file_.reset();
}

std::vector<lance::table::DataFragment> FragmentWriter::Finish() {
  CloseFile();
  return std::move(fragments_);
}

}  // namespace lancelet::table
