// JSON Lines output: the canonical text form compared against the reference.
#include <ostream>

#include "lancelet/text.h"
#include "text/utf8_text.h"
#include "text/value_format.h"

namespace lancelet {
namespace {

class JsonLinesWriter final : public BatchWriter {
 public:
  JsonLinesWriter(std::ostream& out, SchemaPtr schema) : out_(out) {
    // Keys are the same on every row, so they are escaped once.
    for (const auto& field : schema->fields()) {
      std::string key;
      text::AppendJsonString(key, field->name);
      keys_.push_back(key + ":");
    }
  }

  void Write(const RecordBatch& batch) override {
    std::string line;
    for (int64_t row = 0; row < batch.num_rows(); ++row) {
      line.clear();
      line += '{';
      for (size_t c = 0; c < batch.num_columns(); ++c) {
        if (c > 0) line += ',';
        line += keys_.at(c);
        text::AppendJsonValue(line, *batch.column(c), row);
      }
      line += "}\n";
      out_ << line;
    }
  }

  void Finish() override { out_.flush(); }

 private:
  std::ostream& out_;
  std::vector<std::string> keys_;
};

}  // namespace

std::unique_ptr<BatchWriter> MakeJsonLinesWriter(std::ostream& out, SchemaPtr schema) {
  return std::make_unique<JsonLinesWriter>(out, std::move(schema));
}

}  // namespace lancelet
