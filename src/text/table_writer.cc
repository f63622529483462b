// Aligned, human-readable table output.
#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "lancelet/text.h"
#include "text/utf8_text.h"
#include "text/value_format.h"

namespace lancelet {
namespace {

class TableWriter final : public BatchWriter {
 public:
  TableWriter(std::ostream& out, SchemaPtr schema, TableWriteOptions options)
      : out_(out), schema_(std::move(schema)), options_(options) {
    for (const auto& field : schema_->fields()) {
      headers_.push_back(text::SanitizeUtf8(field->name));
      right_align_.push_back(field->type->is_numeric());
    }
  }

  void Write(const RecordBatch& batch) override {
    for (int64_t row = 0; row < batch.num_rows(); ++row) {
      std::vector<std::string> cells;
      cells.reserve(batch.num_columns());
      for (size_t c = 0; c < batch.num_columns(); ++c) {
        cells.push_back(FormatValue(*batch.column(c), row, ValueStyle::kTable));
      }
      ++rows_;
      if (widths_.empty()) {
        pending_.push_back(std::move(cells));
        if (static_cast<int64_t>(pending_.size()) >= std::max<int64_t>(options_.buffer_rows, 1)) {
          PrintPending();
        }
      } else {
        PrintRow(cells);
      }
    }
  }

  void Finish() override {
    if (widths_.empty()) PrintPending();
    out_ << fmt::format("({} {})\n", rows_, rows_ == 1 ? "row" : "rows");
    out_.flush();
  }

 private:
  // Sizes the columns from the header and the buffered rows, then prints them.
  void PrintPending() {
    widths_.assign(headers_.size(), 1);
    for (size_t c = 0; c < headers_.size(); ++c) {
      widths_[c] = std::max(widths_[c], text::CountCodePoints(headers_[c]));
      for (const auto& cells : pending_) {
        widths_[c] = std::max(widths_[c], text::CountCodePoints(cells[c]));
      }
    }
    PrintRow(headers_);
    std::string rule;
    for (size_t c = 0; c < widths_.size(); ++c) {
      if (c > 0) rule += "-+-";
      rule.append(widths_[c], '-');
    }
    out_ << rule << '\n';
    for (const auto& cells : pending_) PrintRow(cells);
    pending_.clear();
  }

  void PrintRow(const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line += " | ";
      const size_t width = text::CountCodePoints(cells[c]);
      const size_t pad = width < widths_[c] ? widths_[c] - width : 0;
      if (right_align_[c]) {
        line.append(pad, ' ');
        line += cells[c];
      } else {
        line += cells[c];
        // No trailing blanks after the last column.
        if (c + 1 < cells.size()) line.append(pad, ' ');
      }
    }
    out_ << line << '\n';
  }

  std::ostream& out_;
  SchemaPtr schema_;
  TableWriteOptions options_;
  std::vector<std::string> headers_;
  std::vector<bool> right_align_;
  std::vector<size_t> widths_;  // empty until the header is printed
  std::vector<std::vector<std::string>> pending_;
  int64_t rows_ = 0;
};

}  // namespace

std::unique_ptr<BatchWriter> MakeTableWriter(std::ostream& out, SchemaPtr schema,
                                             TableWriteOptions options) {
  return std::make_unique<TableWriter>(out, std::move(schema), options);
}

}  // namespace lancelet
