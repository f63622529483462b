// The shell's other row layouts, as DuckDB's .mode names them: markdown (a pipe table)
// and line (one "name = value" line per column, a blank line between rows).
#include <algorithm>

#include "lancelet/text.h"

namespace lancelet {

namespace {

// Markdown cells hold no line breaks, and a '|' in a value is escaped.
std::string MarkdownCell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

class MarkdownWriter final : public BatchWriter {
 public:
  MarkdownWriter(std::ostream& out, SchemaPtr schema) : out_(out), schema_(std::move(schema)) {
    out_ << "|";
    for (const auto& f : schema_->fields()) out_ << " " << MarkdownCell(f->name) << " |";
    out_ << "\n|";
    for (size_t i = 0; i < schema_->num_fields(); ++i) out_ << "---|";
    out_ << "\n";
  }
  void Write(const RecordBatch& batch) override {
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      out_ << "|";
      for (const auto& column : batch.columns())
        out_ << " " << MarkdownCell(FormatValue(*column, r, ValueStyle::kTable)) << " |";
      out_ << "\n";
    }
  }
  void Finish() override { out_.flush(); }

 private:
  std::ostream& out_;
  SchemaPtr schema_;
};

class LineWriter final : public BatchWriter {
 public:
  LineWriter(std::ostream& out, SchemaPtr schema) : out_(out), schema_(std::move(schema)) {
    for (const auto& f : schema_->fields()) width_ = std::max(width_, f->name.size());
  }
  void Write(const RecordBatch& batch) override {
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      if (rows_++) out_ << "\n";
      for (size_t c = 0; c < schema_->num_fields(); ++c) {
        const std::string& name = schema_->field(c)->name;
        out_ << std::string(width_ - name.size(), ' ') << name << " = "
             << FormatValue(*batch.column(c), r, ValueStyle::kTable) << "\n";
      }
    }
  }
  void Finish() override { out_.flush(); }

 private:
  std::ostream& out_;
  SchemaPtr schema_;
  size_t width_ = 0;
  int64_t rows_ = 0;
};

}  // namespace

std::unique_ptr<BatchWriter> MakeMarkdownWriter(std::ostream& out, SchemaPtr schema) {
  return std::make_unique<MarkdownWriter>(out, std::move(schema));
}

std::unique_ptr<BatchWriter> MakeLineWriter(std::ostream& out, SchemaPtr schema) {
  return std::make_unique<LineWriter>(out, std::move(schema));
}

}  // namespace lancelet
