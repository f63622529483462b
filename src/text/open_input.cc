// Opening text inputs by path and choosing a reader by extension.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <istream>
#include <streambuf>
#include <vector>

#include "array/ascii_case.h"
#include "expr/cast.h"
#include "io/object_store.h"
#include "lancelet/error.h"
#include "lancelet/text.h"
#include "text/arrow_input.h"

namespace lancelet {
namespace {

// A stream over another that counts the bytes it hands on, in reads of 64 KiB.
class CountingStream final : public std::istream {
 public:
  CountingStream(std::unique_ptr<std::istream> inner, std::shared_ptr<std::atomic<uint64_t>> count)
      : std::istream(nullptr), buffer_(std::move(inner), std::move(count)) {
    rdbuf(&buffer_);
  }

 private:
  class Buffer final : public std::streambuf {
   public:
    Buffer(std::unique_ptr<std::istream> inner, std::shared_ptr<std::atomic<uint64_t>> count)
        : inner_(std::move(inner)), count_(std::move(count)), bytes_(1 << 16) {}
    int_type underflow() override {
      if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
      const std::streamsize n = inner_->rdbuf()->sgetn(bytes_.data(), std::streamsize(bytes_.size()));
      if (n <= 0) return traits_type::eof();
      *count_ += uint64_t(n);
      setg(bytes_.data(), bytes_.data(), bytes_.data() + n);
      return traits_type::to_int_type(*gptr());
    }

   private:
    std::unique_ptr<std::istream> inner_;
    std::shared_ptr<std::atomic<uint64_t>> count_;
    std::vector<char> bytes_;
  };
  Buffer buffer_;
};

std::unique_ptr<std::istream> OpenFile(const std::string& path, const TextReadOptions& options) {
  auto [store, within] = io::OpenStore(path, options.storage_options);
  std::unique_ptr<std::istream> stream = store->OpenStream(within);
  if (!options.progress) return stream;
  const auto info = store->Head(within);
  if (!info || info->size == 0) return stream;  // a pipe, or nothing to measure
  auto bytes = std::make_shared<std::atomic<uint64_t>>(0);
  options.progress->SetFraction([bytes, size = info->size] { return double(*bytes) / double(size); });
  return std::make_unique<CountingStream>(std::move(stream), std::move(bytes));
}

class ConformingReader final : public RecordBatchReader {
 public:
  ConformingReader(std::unique_ptr<RecordBatchReader> input, SchemaPtr schema, std::string name)
      : input_(std::move(input)), schema_(std::move(schema)), name_(std::move(name)) {
    const Schema& in = *input_->schema();
    for (const auto& field : in.fields())
      if (schema_->FieldIndex(field->name) < 0)
        ThrowInvalid("{}: column '{}' is not in the schema ({})", name_, field->name, schema_->ToString());
    for (const auto& field : schema_->fields()) {
      const int i = in.FieldIndex(field->name);
      if (i < 0) ThrowInvalid("{}: no column '{}' (schema: {})", name_, field->name, schema_->ToString());
      columns_.push_back(size_t(i));
    }
  }

  SchemaPtr schema() const override { return schema_; }

  RecordBatchPtr Next() override {
    RecordBatchPtr batch = input_->Next();
    if (!batch) return nullptr;
    std::vector<ArrayPtr> columns;
    for (size_t f = 0; f < columns_.size(); ++f) columns.push_back(Assign(*batch->column(columns_[f]), *schema_->field(f)));
    rows_ += batch->num_rows();
    return std::make_shared<RecordBatch>(schema_, std::move(columns), batch->num_rows());
  }

 private:
  // The whole column at once; on failure, value by value to name the first bad row.
  ArrayPtr Assign(const ArrayData& column, const Field& field) const {
    try {
      return AssignArray(column, field.type);
    } catch (const Error&) {
      for (int64_t r = 0; r < column.length; ++r) {
        try {
          AssignScalar(GetScalar(column, r), field.type);
        } catch (const Error& e) {
          ThrowInvalid("{}: row {}, column '{}': {}", name_, rows_ + r + 1, field.name, e.what());
        }
      }
      throw;
    }
  }

  std::unique_ptr<RecordBatchReader> input_;
  SchemaPtr schema_;
  std::string name_;
  std::vector<size_t> columns_;  // per schema field: its input column
  int64_t rows_ = 0;             // records returned so far
};

}  // namespace

std::unique_ptr<RecordBatchReader> ConformInput(std::unique_ptr<RecordBatchReader> input, SchemaPtr schema,
                                                std::string name) {
  if (input->schema()->Equals(*schema)) return input;
  return std::make_unique<ConformingReader>(std::move(input), std::move(schema), std::move(name));
}

std::unique_ptr<RecordBatchReader> OpenCsv(const std::string& path, const TextReadOptions& options) {
  return ReadCsv(OpenFile(path, options), path, options);
}

std::unique_ptr<RecordBatchReader> OpenJsonLines(const std::string& path,
                                                 const TextReadOptions& options) {
  return ReadJsonLines(OpenFile(path, options), path, options);
}

InputFormat DetectInputFormat(const std::string& path) {
  const std::string ext = AsciiLower(std::filesystem::path(path).extension().string());
  if (ext == ".csv") return InputFormat::kCsv;
  if (ext == ".json" || ext == ".jsonl" || ext == ".ndjson") return InputFormat::kJsonLines;
  if (ext == ".arrow" || ext == ".arrows" || ext == ".ipc") return InputFormat::kArrowIpc;
  return InputFormat::kUnknown;
}

std::unique_ptr<RecordBatchReader> OpenTextInput(const std::string& path,
                                                 const TextReadOptions& options) {
  switch (options.format != InputFormat::kUnknown ? options.format : DetectInputFormat(path)) {
    case InputFormat::kCsv: return OpenCsv(path, options);
    case InputFormat::kJsonLines: return OpenJsonLines(path, options);
    case InputFormat::kArrowIpc:
      if (options.schema)
        return ConformInput(text::OpenArrowIpc(path, options.storage_options), options.schema, path);
      return text::OpenArrowIpc(path, options.storage_options);
    case InputFormat::kUnknown: break;
  }
  ThrowInvalid("{}: unknown input format; expected a .csv, .json, .jsonl, .ndjson, .arrow, "
               ".arrows or .ipc file (or say which with --input-format)",
               path);
}

}  // namespace lancelet
