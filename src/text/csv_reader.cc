// Streaming CSV reader: header row, then records parsed into batches of the schema.
#include <deque>
#include <istream>

#include <fmt/format.h>

#include "array/parallel_map.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"
#include "lancelet/text.h"
#include "text/csv_tokenizer.h"
#include "text/record_chunks.h"
#include "text/type_inference.h"
#include "text/value_parse.h"

namespace lancelet {
namespace {

using text::CsvCell;

struct CsvRecord {
  std::vector<CsvCell> cells;
  int64_t line = 0;
};

class CsvBatchReader final : public RecordBatchReader {
 public:
  CsvBatchReader(std::unique_ptr<std::istream> input, std::string name, const TextReadOptions& options)
      : input_(std::move(input)),
        name_(std::move(name)),
        options_(options),
        tokenizer_(*input_, name_, options.delimiter) {
    if (options_.batch_rows <= 0) ThrowInvalid("batch_rows must be positive, got {}", options_.batch_rows);
    std::vector<CsvCell> header;
    if (!tokenizer_.Next(header)) {
      if (options_.header) ThrowInvalid("{}:1: expected a header row, found an empty file", name_);
      if (!options_.schema) ThrowInvalid("{}: an empty file without a header needs a schema", name_);
    }
    if (options_.header) {
      for (const auto& cell : header) header_.push_back(cell.text);
    } else {
      // No header: the first line is a record; columns are the schema's fields in order,
      // or column0, column1, ... (DuckDB's names).
      const size_t count = options_.schema ? options_.schema->num_fields() : header.size();
      for (size_t c = 0; c < count; ++c)
        header_.push_back(options_.schema ? options_.schema->field(c)->name : fmt::format("column{}", c));
      if (!header.empty()) {
        if (header.size() != header_.size())
          ThrowInvalid("{}:1: expected {} cells, found {}", name_, header_.size(), header.size());
        buffered_.push_back(CsvRecord{std::move(header), tokenizer_.record_line()});
      }
    }
    if (options_.schema) {
      schema_ = options_.schema;
      MapHeaderToSchema();
    } else {
      InferSchema();
    }
  }

  SchemaPtr schema() const override { return schema_; }

  RecordBatchPtr Next() override {
    // Once chunks are handed out, their reader has the rest (the thread count may change).
    if (!chunks_ && ReadAheadThreads() < 2) return ParseRecords(&buffered_, &tokenizer_);
    // Chunks of whole records (the inference buffer's first) that threads parse at once,
    // a batch each, in order.
    if (!chunks_) {
      chunks_ = ParallelTasks(
          [this]() -> BatchTask {
            auto head = text::TakeBuffered(buffered_, size_t(options_.batch_rows));
            auto text = std::make_shared<std::string>();
            int64_t first_line = 0;
            const size_t more = size_t(options_.batch_rows) - head->size();
            const bool any = more > 0 && tokenizer_.NextRawRecords(more, kChunkBytes, *text, first_line);
            if (head->empty() && !any) return {};
            return [this, head, text, first_line] {
              text::CsvTokenizer chunk(*text, name_, options_.delimiter, first_line);
              return ParseRecords(head.get(), &chunk);
            };
          },
          schema_, ReadAheadThreads());
    }
    return chunks_->Next();
  }

 private:
  // Every schema field must name a header column and every header column a field.
  void MapHeaderToSchema() {
    for (const auto& column : header_) {
      if (schema_->FieldIndex(column) < 0) {
        ThrowInvalid("{}:1: header column '{}' is not in the given schema ({})", name_, column,
                     schema_->ToString());
      }
    }
    for (const auto& field : schema_->fields()) {
      size_t index = 0;
      while (index < header_.size() && header_[index] != field->name) ++index;
      if (index == header_.size()) {
        ThrowInvalid("{}:1: schema field '{}' is missing from the header", name_, field->name);
      }
      header_index_.push_back(index);
    }
  }

  void InferSchema() {
    std::vector<text::CsvColumnGuess> guesses(header_.size());
    CsvRecord record;
    while (static_cast<int64_t>(buffered_.size()) < options_.infer_rows && ReadRecord(tokenizer_, record)) {
      for (size_t c = 0; c < header_.size(); ++c) {
        guesses[c].Observe(record.cells[c].text);
      }
      buffered_.push_back(std::move(record));
      record = CsvRecord{};
    }
    std::vector<FieldPtr> fields;
    for (size_t c = 0; c < header_.size(); ++c) {
      const int given = options_.column_types ? options_.column_types->FieldIndex(header_[c]) : -1;
      fields.push_back(given >= 0 ? Field::Make(header_[c], options_.column_types->field(size_t(given))->type) : Field::Make(header_[c], guesses[c].ToType()));
      header_index_.push_back(c);
    }
    schema_ = std::make_shared<Schema>(std::move(fields));
  }

  // A chunk holds about this much text: a few chunks in flight per thread stay small.
  static constexpr size_t kChunkBytes = 2 << 20;

  // Up to batch_rows records parsed into a batch, null when there are none: those of
  // `head` first (taken from it), then `tokenizer`'s. Safe on several threads at once for
  // different heads and tokenizers.
  RecordBatchPtr ParseRecords(std::deque<CsvRecord>* head, text::CsvTokenizer* tokenizer) const {
    std::vector<std::unique_ptr<ArrayBuilder>> builders;
    for (const auto& field : schema_->fields()) builders.push_back(ArrayBuilder::Make(field->type));
    int64_t rows = 0;
    CsvRecord record;
    auto next = [&] {
      if (!head->empty()) {
        record = std::move(head->front());
        head->pop_front();
        return true;
      }
      return ReadRecord(*tokenizer, record);
    };
    while (rows < options_.batch_rows && next()) {
      text::ValueSource source{name_, record.line};
      for (size_t f = 0; f < builders.size(); ++f) {
        const CsvCell& cell = record.cells[header_index_[f]];
        text::ValuePath path{nullptr, schema_->field(f)->name, 0};
        text::AppendCell(*builders[f], cell.text, cell.quoted, source, path);
      }
      ++rows;
    }
    if (rows == 0) return nullptr;
    std::vector<ArrayPtr> columns;
    for (auto& builder : builders) columns.push_back(builder->Finish());
    return std::make_shared<RecordBatch>(schema_, std::move(columns), rows);
  }

  // Reads a record with the header's cell count, skipping blank lines in multi-column files.
  bool ReadRecord(text::CsvTokenizer& tokenizer, CsvRecord& record) const {
    for (;;) {
      if (!tokenizer.Next(record.cells)) return false;
      record.line = tokenizer.record_line();
      const bool blank = record.cells.size() == 1 && record.cells[0].text.empty() && !record.cells[0].quoted;
      if (blank && header_.size() > 1) continue;
      if (record.cells.size() != header_.size()) {
        ThrowInvalid("{}:{}: expected {} cells as in the header, found {}", name_, record.line,
                     header_.size(), record.cells.size());
      }
      return true;
    }
  }

  std::unique_ptr<std::istream> input_;
  std::string name_;
  TextReadOptions options_;
  text::CsvTokenizer tokenizer_;
  std::vector<std::string> header_;
  std::vector<size_t> header_index_;  // per schema field: its header column
  SchemaPtr schema_;
  std::deque<CsvRecord> buffered_;  // records read during inference, not yet returned
  std::unique_ptr<RecordBatchReader> chunks_;  // the records past buffered_, parsed on several threads
};

}  // namespace

std::unique_ptr<RecordBatchReader> ReadCsv(std::unique_ptr<std::istream> input, std::string name,
                                           const TextReadOptions& options) {
  return std::make_unique<CsvBatchReader>(std::move(input), std::move(name), options);
}

}  // namespace lancelet
