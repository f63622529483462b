// Streaming JSON Lines reader: one JSON object per line.
#include <deque>
#include <istream>

#include <nlohmann/json.hpp>

#include "array/parallel_map.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"
#include "lancelet/text.h"
#include "text/record_chunks.h"
#include "text/type_inference.h"
#include "text/utf8_text.h"
#include "text/value_parse.h"

namespace lancelet {
namespace {

// ordered_json keeps object keys in document order, which inference reports.
using json = nlohmann::ordered_json;

struct JsonRecord {
  json object;
  int64_t line = 0;
};

// nlohmann messages start with "[json.exception.parse_error.101] parse error at line 1, ";
// the line is ours to report, so keep the part from "column" on.
std::string DescribeParseError(const json::exception& error) {
  // The message quotes the input, which may hold invalid UTF-8.
  std::string message = EscapeForMessage(error.what());
  size_t column = message.find("column ");
  if (column != std::string::npos) return "at " + message.substr(column);
  size_t bracket = message.find("] ");
  return bracket == std::string::npos ? message : message.substr(bracket + 2);
}

class JsonLinesBatchReader final : public RecordBatchReader {
 public:
  JsonLinesBatchReader(std::unique_ptr<std::istream> input, std::string name,
                       const TextReadOptions& options)
      : input_(std::move(input)), name_(std::move(name)), options_(options) {
    if (options_.batch_rows <= 0) ThrowInvalid("batch_rows must be positive, got {}", options_.batch_rows);
    if (options_.schema) {
      schema_ = options_.schema;
    } else {
      text::JsonTypeGuess guess;
      JsonRecord record;
      while (static_cast<int64_t>(buffered_.size()) < options_.infer_rows && ReadRecord(record)) {
        guess.Observe(record.object);
        buffered_.push_back(std::move(record));
      }
      std::vector<FieldPtr> fields = guess.ObjectFields();
      for (auto& field : fields) {
        const int given = options_.column_types ? options_.column_types->FieldIndex(field->name) : -1;
        if (given >= 0) field = Field::Make(field->name, options_.column_types->field(size_t(given))->type);
      }
      schema_ = std::make_shared<Schema>(std::move(fields));
    }
  }

  SchemaPtr schema() const override { return schema_; }

  RecordBatchPtr Next() override {
    // Once chunks are handed out, their reader has the rest (the thread count may change).
    if (!chunks_ && ReadAheadThreads() < 2)
      return ParseRecords(buffered_, [this](JsonRecord& record) { return ReadRecord(record); });
    // Chunks of lines (the inference buffer's records first) that threads parse at once,
    // a batch each, in order: parsing, not reading lines, is what costs.
    if (!chunks_) {
      chunks_ = ParallelTasks(
          [this]() -> BatchTask {
            auto head = text::TakeBuffered(buffered_, size_t(options_.batch_rows));
            auto lines = std::make_shared<std::vector<std::string>>();
            const int64_t first_line = line_ + 1;
            size_t bytes = 0;
            for (std::string line; int64_t(head->size() + lines->size()) < options_.batch_rows && bytes < kChunkBytes &&
                                   std::getline(*input_, line);) {
              ++line_;
              bytes += line.size() + 1;
              lines->push_back(std::move(line));
            }
            if (input_->bad()) ThrowIo("{}:{}: read failed", name_, line_ + 1);
            if (head->empty() && lines->empty()) return {};
            return [this, head, lines, first_line] {
              size_t next = 0;
              return ParseRecords(*head, [&](JsonRecord& record) {
                while (next < lines->size()) {
                  std::string& line = (*lines)[next];
                  const int64_t number = first_line + int64_t(next++);
                  if (ParseLine(line, number, record)) return true;
                }
                return false;
              });
            };
          },
          schema_, ReadAheadThreads());
    }
    return chunks_->Next();
  }

 private:
  // A chunk holds about this many bytes of lines: a few chunks in flight per thread stay small.
  static constexpr size_t kChunkBytes = 2 << 20;

  // Up to batch_rows records parsed into a batch, null when there are none: those of
  // `head` first (taken from it), then those `read` gives. Safe on several threads at once
  // for different heads.
  template <typename Read>
  RecordBatchPtr ParseRecords(std::deque<JsonRecord>& head, Read&& read) const {
    std::vector<std::unique_ptr<ArrayBuilder>> builders;
    for (const auto& field : schema_->fields()) builders.push_back(ArrayBuilder::Make(field->type));
    int64_t rows = 0;
    JsonRecord record;
    auto next = [&] {
      if (head.empty()) return read(record);
      record = std::move(head.front());
      head.pop_front();
      return true;
    };
    while (rows < options_.batch_rows && next()) {
      text::ValueSource source{name_, record.line};
      for (size_t f = 0; f < builders.size(); ++f) {
        const std::string& key = schema_->field(f)->name;
        auto it = record.object.find(key);
        if (it == record.object.end()) {
          builders[f]->AppendNull();  // a missing key is NULL
        } else {
          text::ValuePath path{nullptr, key, 0};
          text::AppendJson(*builders[f], *it, source, path);
        }
      }
      ++rows;
    }
    if (rows == 0) return nullptr;
    std::vector<ArrayPtr> columns;
    for (auto& builder : builders) columns.push_back(builder->Finish());
    return std::make_shared<RecordBatch>(schema_, std::move(columns), rows);
  }

  // Parses the next non-blank line, which must hold one JSON object.
  bool ReadRecord(JsonRecord& record) {
    std::string line;
    while (std::getline(*input_, line)) {
      ++line_;
      if (ParseLine(line, line_, record)) return true;
    }
    if (input_->bad()) ThrowIo("{}:{}: read failed", name_, line_ + 1);
    return false;
  }

  // Line `number` into `record`; false when it is blank. Throws unless it holds one JSON
  // object.
  bool ParseLine(std::string& line, int64_t number, JsonRecord& record) const {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return false;
    try {
      record.object = text::ParseJsonText(line, /*throw_errors=*/true);
    } catch (const json::exception& error) {  // a parse error, or a number out of range
      ThrowInvalid("{}:{}: malformed JSON {}", name_, number, DescribeParseError(error));
    }
    if (!record.object.is_object()) {
      ThrowInvalid("{}:{}: expected a JSON object, found {}", name_, number, record.object.dump().substr(0, 60));
    }
    record.line = number;
    return true;
  }

  std::unique_ptr<std::istream> input_;
  std::string name_;
  TextReadOptions options_;
  SchemaPtr schema_;
  int64_t line_ = 0;  // lines consumed so far
  std::deque<JsonRecord> buffered_;  // records read during inference, not yet returned
  std::unique_ptr<RecordBatchReader> chunks_;  // the records past buffered_, parsed on several threads
};

}  // namespace

std::unique_ptr<RecordBatchReader> ReadJsonLines(std::unique_ptr<std::istream> input,
                                                 std::string name, const TextReadOptions& options) {
  return std::make_unique<JsonLinesBatchReader>(std::move(input), std::move(name), options);
}

}  // namespace lancelet
