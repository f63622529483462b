// Aligned, human-readable table output.
#include <algorithm>
#include <deque>
#include <ostream>
#include <string_view>

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
      ++rows_;
      const int64_t head = (options_.max_rows + 1) / 2;
      if (options_.max_rows > 0 && rows_ > head && options_.max_rows - head == 0) continue;
      std::vector<std::string> cells;
      cells.reserve(batch.num_columns());
      for (size_t c = 0; c < batch.num_columns(); ++c) {
        cells.push_back(FormatValue(*batch.column(c), row, ValueStyle::kTable));
      }
      if (options_.max_rows > 0) {
        // Everything shown is sized together: nothing prints before Finish.
        if (rows_ <= head) {
          pending_.push_back(std::move(cells));
        } else {
          tail_.push_back(std::move(cells));
          if (int64_t(tail_.size()) > options_.max_rows - head) tail_.pop_front();
        }
        continue;
      }
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
    const int64_t shown = int64_t(pending_.size() + tail_.size());
    if (options_.max_rows > 0 && rows_ > shown) {
      // The elided rows: a row of "…" between the first and the last ones.
      const int64_t head = int64_t(pending_.size());
      pending_.emplace_back(headers_.size(), "…");
      for (auto& cells : tail_) pending_.push_back(std::move(cells));
      tail_.clear();
      PrintPending(head);
      if (options_.box) PrintRule("└─", "─┴─", "─┘");
      out_ << fmt::format("({} rows, {} shown)\n", rows_, shown);
      out_.flush();
      return;
    }
    for (auto& cells : tail_) pending_.push_back(std::move(cells));
    tail_.clear();
    if (widths_.empty()) PrintPending();
    if (options_.box) PrintRule("└─", "─┴─", "─┘");
    out_ << fmt::format("({} {})\n", rows_, rows_ == 1 ? "row" : "rows");
    out_.flush();
  }

 private:
  // Sizes the columns from the header and the buffered rows, then prints them. The row at
  // `elision` (if any) is the "…" row, centred rather than aligned.
  void PrintPending(int64_t elision = -1) {
    widths_.assign(headers_.size(), 1);
    for (size_t c = 0; c < headers_.size(); ++c) {
      widths_[c] = std::max(widths_[c], text::CountCodePoints(headers_[c]));
      for (const auto& cells : pending_) {
        widths_[c] = std::max(widths_[c], text::CountCodePoints(cells[c]));
      }
    }
    if (elision >= 0) {
      auto& dots = pending_[size_t(elision)];
      for (size_t c = 0; c < dots.size(); ++c) dots[c] = std::string((widths_[c] - 1) / 2, ' ') + "…";
    }
    if (options_.box) PrintRule("┌─", "─┬─", "─┐");
    PrintRow(headers_);
    if (options_.box) PrintRule("├─", "─┼─", "─┤");
    else PrintRule("", "-+-", "");
    for (const auto& cells : pending_) PrintRow(cells);
    pending_.clear();
  }

  // A horizontal line across the columns: `left`, each column's width of dashes (box
  // drawing ones in a box) separated by `middle`, then `right`.
  void PrintRule(std::string_view left, std::string_view middle, std::string_view right) {
    const std::string_view dash = options_.box ? "─" : "-";
    std::string rule(left);
    for (size_t c = 0; c < widths_.size(); ++c) {
      if (c > 0) rule += middle;
      for (size_t i = 0; i < widths_[c]; ++i) rule += dash;
    }
    out_ << rule << right << '\n';
  }

  void PrintRow(const std::vector<std::string>& cells) {
    std::string line = options_.box ? "│ " : "";
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line += options_.box ? " │ " : " | ";
      const size_t width = text::CountCodePoints(cells[c]);
      const size_t pad = width < widths_[c] ? widths_[c] - width : 0;
      if (right_align_[c]) {
        line.append(pad, ' ');
        line += cells[c];
      } else {
        line += cells[c];
        // No trailing blanks after the last column, unless a frame follows.
        if (c + 1 < cells.size() || options_.box) line.append(pad, ' ');
      }
    }
    out_ << line << (options_.box ? " │\n" : "\n");
  }

  std::ostream& out_;
  SchemaPtr schema_;
  TableWriteOptions options_;
  std::vector<std::string> headers_;
  std::vector<bool> right_align_;
  std::vector<size_t> widths_;  // empty until the header is printed
  std::vector<std::vector<std::string>> pending_;
  std::deque<std::vector<std::string>> tail_;  // with max_rows: the last rows seen
  int64_t rows_ = 0;
};

}  // namespace

std::unique_ptr<BatchWriter> MakeTableWriter(std::ostream& out, SchemaPtr schema,
                                             TableWriteOptions options) {
  return std::make_unique<TableWriter>(out, std::move(schema), options);
}

}  // namespace lancelet
