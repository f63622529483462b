// Streaming JSON Lines reader: one JSON object per line.
#include <deque>
#include <istream>
#include <string_view>
#include <vector>

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

// A member of a line's object: its key and its value's text, as they stand in the line.
struct Member {
  std::string_view key, value;
};

// The members of the JSON object on `line`, by a scan of the object's own structure: keys,
// colons, commas, and each value's extent (a string to its closing quote, an array or
// object to its matching bracket, anything else to the next delimiter). The values'
// contents are not checked here; whoever reads a value parses it. False when the line is
// not such an object, or a key holds an escape or comes twice: the caller then parses the
// line whole, which reports whatever is wrong with it.
bool ScanMembers(std::string_view line, std::vector<Member>& members) {
  members.clear();
  size_t at = 0;
  auto blank = [&] {
    while (at < line.size() && text::IsJsonBlank(line[at])) ++at;
  };
  auto string_end = [&](size_t quote) -> size_t {  // past the closing quote, or npos
    for (size_t i = quote + 1; i < line.size(); ++i) {
      if (line[i] == '\\') ++i;
      else if (line[i] == '"') return i + 1;
    }
    return std::string_view::npos;
  };
  blank();
  if (at == line.size() || line[at] != '{') return false;
  ++at;
  blank();
  if (at < line.size() && line[at] == '}') return ++at, blank(), at == line.size();
  for (;;) {
    if (at == line.size() || line[at] != '"') return false;
    const size_t key_end = string_end(at);
    if (key_end == std::string_view::npos) return false;
    const std::string_view key = line.substr(at + 1, key_end - at - 2);
    if (key.find('\\') != std::string_view::npos) return false;
    at = key_end;
    blank();
    if (at == line.size() || line[at] != ':') return false;
    ++at;
    blank();
    const size_t value_start = at;
    if (at == line.size()) return false;
    if (line[at] == '"') {
      at = string_end(at);
      if (at == std::string_view::npos) return false;
    } else if (line[at] == '[' || line[at] == '{') {
      int depth = 0;
      for (; at < line.size(); ++at) {
        const char c = line[at];
        if (c == '"') {
          at = string_end(at);
          if (at == std::string_view::npos) return false;
          --at;
        } else if (c == '[' || c == '{') {
          ++depth;
        } else if ((c == ']' || c == '}') && --depth == 0) {
          ++at;
          break;
        }
      }
      if (depth != 0) return false;
    } else {
      while (at < line.size() && line[at] != ',' && line[at] != '}' && !text::IsJsonBlank(line[at])) ++at;
    }
    for (const Member& m : members)
      if (m.key == key) return false;
    members.push_back({key, line.substr(value_start, at - value_start)});
    blank();
    if (at < line.size() && line[at] == ',') {
      ++at;
      blank();
      continue;
    }
    if (at < line.size() && line[at] == '}') return ++at, blank(), at == line.size();
    return false;
  }
}

// What AppendLine works in, kept from line to line.
struct LineScratch {
  std::vector<Member> members;
  std::vector<size_t> member_of;
  std::vector<bool> appended, read_directly;
  std::vector<json> values;
};

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
    if (!chunks_ && ReadAheadThreads() < 2) {
      return ParseRecords(buffered_, [this](std::string& line, int64_t& number) {
        if (!std::getline(*input_, line)) {
          if (input_->bad()) ThrowIo("{}:{}: read failed", name_, line_ + 1);
          return false;
        }
        number = ++line_;
        return true;
      });
    }
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
              return ParseRecords(*head, [&](std::string& line, int64_t& number) {
                if (next == lines->size()) return false;
                line = std::move((*lines)[next]);
                number = first_line + int64_t(next++);
                return true;
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
  // `head` first (taken from it), then those of the lines next_line(line, number) gives
  // (false at the end). Safe on several threads at once for different heads.
  template <typename NextLine>
  RecordBatchPtr ParseRecords(std::deque<JsonRecord>& head, NextLine&& next_line) const {
    std::vector<std::unique_ptr<ArrayBuilder>> builders;
    for (const auto& field : schema_->fields()) builders.push_back(ArrayBuilder::Make(field->type));
    int64_t rows = 0;
    for (; rows < options_.batch_rows && !head.empty(); ++rows) {
      AppendRecord(builders, head.front());
      head.pop_front();
    }
    std::string line;
    int64_t number = 0;
    LineScratch scratch;
    while (rows < options_.batch_rows && next_line(line, number))
      if (AppendLine(builders, line, number, scratch)) ++rows;
    if (rows == 0) return nullptr;
    std::vector<ArrayPtr> columns;
    for (auto& builder : builders) columns.push_back(builder->Finish());
    return std::make_shared<RecordBatch>(schema_, std::move(columns), rows);
  }

  void AppendRecord(std::vector<std::unique_ptr<ArrayBuilder>>& builders, const JsonRecord& record) const {
    const text::ValueSource source{name_, record.line};
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
  }

  // Line `number`'s record appended; false when the line is blank. Its members are found
  // by ScanMembers and each value parsed on its own (a list of numbers or a plain scalar
  // read straight into its builder), not the whole line as one document. A line that ScanMembers does not
  // take, or a value that does not parse, is parsed whole, which throws the error it
  // always did; every value is parsed before any is checked against its column, so that
  // errors come in the order a whole line's parse gives them.
  bool AppendLine(std::vector<std::unique_ptr<ArrayBuilder>>& builders, std::string& line, int64_t number,
                  LineScratch& scratch) const {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return false;
    auto parse_whole = [&] {
      JsonRecord record;
      ParseLine(line, number, record);
      AppendRecord(builders, record);
    };
    std::vector<Member>& members = scratch.members;
    if (!ScanMembers(line, members)) return parse_whole(), true;
    // [field]: its member, or npos; number lists and plain scalars read straight into
    // their builders (AppendNumberList, AppendJsonToken).
    std::vector<size_t>& member_of = scratch.member_of;
    std::vector<bool>& appended = scratch.appended;
    std::vector<bool>& read_directly = scratch.read_directly;
    member_of.assign(builders.size(), std::string::npos);
    appended.assign(builders.size(), false);
    read_directly.assign(members.size(), false);
    for (size_t f = 0; f < builders.size(); ++f) {
      const std::string& key = schema_->field(f)->name;
      if (f < members.size() && members[f].key == key) member_of[f] = f;  // members in the columns' order
      for (size_t m = 0; m < members.size() && member_of[f] == std::string::npos; ++m)
        if (members[m].key == key) member_of[f] = m;
      if (member_of[f] == std::string::npos) continue;
      const std::string_view value = members[member_of[f]].value;
      appended[f] = read_directly[member_of[f]] =
          value[0] == '[' ? text::AppendNumberList(*builders[f], value) : text::AppendJsonToken(*builders[f], value);
    }
    std::vector<json>& values = scratch.values;  // the rest, members no column reads included
    values.resize(members.size());
    for (size_t m = 0; m < members.size(); ++m) {
      if (read_directly[m]) continue;
      try {
        values[m] = text::ParseJsonText(members[m].value, /*throw_errors=*/true);
      } catch (const json::exception&) {
        parse_whole();  // throws: the line does not parse either
        throw;
      }
    }
    const text::ValueSource source{name_, number};
    for (size_t f = 0; f < builders.size(); ++f) {
      if (appended[f]) continue;
      if (member_of[f] == std::string::npos) {
        builders[f]->AppendNull();  // a missing key is NULL
        continue;
      }
      const text::ValuePath path{nullptr, schema_->field(f)->name, 0};
      text::AppendJson(*builders[f], values[member_of[f]], source, path);
    }
    return true;
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
