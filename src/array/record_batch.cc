#include "lancelet/record_batch.h"

#include "lancelet/error.h"

namespace lancelet {

RecordBatch::RecordBatch(SchemaPtr schema, std::vector<ArrayPtr> columns, int64_t num_rows)
    : schema_(std::move(schema)), columns_(std::move(columns)), num_rows_(num_rows) {
  if (columns_.size() != schema_->num_fields())
    ThrowInvalid("record batch has {} columns for a schema of {} fields", columns_.size(), schema_->num_fields());
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i]->length != num_rows_)
      ThrowInvalid("column '{}' has {} rows, expected {}", schema_->field(i)->name, columns_[i]->length, num_rows_);
    if (!columns_[i]->type->Equals(*schema_->field(i)->type))
      ThrowInvalid("column '{}' has type {}, but the schema says {}", schema_->field(i)->name,
                   columns_[i]->type->ToString(), schema_->field(i)->type->ToString());
  }
}

std::shared_ptr<RecordBatch> RecordBatch::Make(SchemaPtr schema, std::vector<ArrayPtr> columns) {
  int64_t rows = columns.empty() ? 0 : columns[0]->length;
  return std::make_shared<RecordBatch>(std::move(schema), std::move(columns), rows);
}

const ArrayPtr& RecordBatch::column(const std::string& name) const {
  int i = schema_->FieldIndex(name);
  if (i < 0) ThrowNotFound("no column '{}' in batch with columns ({})", name, schema_->ToString());
  return columns_[size_t(i)];
}

std::shared_ptr<RecordBatch> RecordBatch::Slice(int64_t start, int64_t length) const {
  std::vector<ArrayPtr> cols;
  for (const auto& c : columns_) cols.push_back(lancelet::Slice(*c, start, length));
  return std::make_shared<RecordBatch>(schema_, std::move(cols), length);
}

std::shared_ptr<RecordBatch> RecordBatch::Filter(const std::vector<bool>& keep) const {
  std::vector<int64_t> idx;
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) idx.push_back(int64_t(i));
  if (int64_t(idx.size()) == num_rows_) return std::make_shared<RecordBatch>(*this);
  return Take(idx);
}

std::shared_ptr<RecordBatch> RecordBatch::Take(const std::vector<int64_t>& rows) const {
  std::vector<ArrayPtr> cols;
  for (const auto& c : columns_) cols.push_back(lancelet::Take(*c, rows));
  return std::make_shared<RecordBatch>(schema_, std::move(cols), int64_t(rows.size()));
}

std::shared_ptr<RecordBatch> RecordBatch::Concatenate(const SchemaPtr& schema,
                                                      const std::vector<std::shared_ptr<RecordBatch>>& batches) {
  if (batches.empty()) {
    std::vector<ArrayPtr> cols;
    for (const auto& f : schema->fields()) cols.push_back(MakeEmptyArray(f->type));
    return std::make_shared<RecordBatch>(schema, std::move(cols), 0);
  }
  if (batches.size() == 1) return batches[0];
  std::vector<ArrayPtr> cols;
  int64_t rows = 0;
  for (const auto& b : batches) rows += b->num_rows();
  for (size_t c = 0; c < schema->num_fields(); ++c) {
    std::vector<ArrayPtr> parts;
    for (const auto& b : batches) parts.push_back(b->column(c));
    cols.push_back(lancelet::Concatenate(parts));
  }
  return std::make_shared<RecordBatch>(schema, std::move(cols), rows);
}

bool RecordBatch::Equals(const RecordBatch& o) const {
  if (num_rows_ != o.num_rows_ || !schema_->Equals(*o.schema_)) return false;
  for (size_t i = 0; i < columns_.size(); ++i)
    if (!ArraysEqual(*columns_[i], *o.columns_[i])) return false;
  return true;
}

SchemaPtr BatchListReader::schema() const {
  if (batches_.empty()) ThrowInvalid("no input batches");
  return batches_[0]->schema();
}

uint64_t BufferBytes(const RecordBatch& batch) {
  uint64_t bytes = 0;
  for (const auto& column : batch.columns()) bytes += BufferBytes(*column);
  return bytes;
}

}  // namespace lancelet
