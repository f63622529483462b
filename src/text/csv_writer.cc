// CSV output (RFC 4180).
#include <ostream>

#include "lancelet/text.h"
#include "text/utf8_text.h"
#include "text/value_format.h"

namespace lancelet {
namespace {

// Appends a cell, quoting it when RFC 4180 requires or `force_quotes` asks.
void AppendCell(std::string& out, std::string_view cell, char delimiter, bool force_quotes) {
  bool quote = force_quotes;
  for (char c : cell) {
    if (c == delimiter || c == '"' || c == '\n' || c == '\r') {
      quote = true;
      break;
    }
  }
  if (!quote) {
    out += cell;
    return;
  }
  out += '"';
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

class CsvWriter final : public BatchWriter {
 public:
  CsvWriter(std::ostream& out, SchemaPtr schema, CsvWriteOptions options)
      : out_(out), schema_(std::move(schema)), options_(options) {
    if (options_.header) {
      std::string line;
      for (size_t c = 0; c < schema_->num_fields(); ++c) {
        if (c > 0) line += options_.delimiter;
        const std::string& name = schema_->field(c)->name;
        AppendCell(line, text::SanitizeUtf8(name), options_.delimiter, name.empty());
      }
      line += '\n';
      out_ << line;
    }
  }

  void Write(const RecordBatch& batch) override {
    std::string line, cell;
    for (int64_t row = 0; row < batch.num_rows(); ++row) {
      line.clear();
      for (size_t c = 0; c < batch.num_columns(); ++c) {
        if (c > 0) line += options_.delimiter;
        const ArrayData& column = *batch.column(c);
        if (column.IsNull(row)) continue;  // NULL is an empty, unquoted cell
        cell.clear();
        text::AppendValue(cell, column, row, ValueStyle::kCsv);
        // An empty string is quoted to tell it from NULL; nested JSON is always quoted.
        const bool force = cell.empty() || column.type->is_nested();
        AppendCell(line, cell, options_.delimiter, force);
      }
      // A single-column row holding NULL is an empty line, which the reader reads back
      // as NULL.
      line += '\n';
      out_ << line;
    }
  }

  void Finish() override { out_.flush(); }

 private:
  std::ostream& out_;
  SchemaPtr schema_;
  CsvWriteOptions options_;
};

}  // namespace

std::unique_ptr<BatchWriter> MakeCsvWriter(std::ostream& out, SchemaPtr schema,
                                           CsvWriteOptions options) {
  return std::make_unique<CsvWriter>(out, std::move(schema), options);
}

}  // namespace lancelet
