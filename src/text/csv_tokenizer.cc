#include "text/csv_tokenizer.h"

#include "lancelet/error.h"

namespace lancelet::text {

namespace {
constexpr int kEnd = std::char_traits<char>::eof();
}

CsvTokenizer::CsvTokenizer(std::istream& input, std::string name, char delimiter)
    : input_(input.rdbuf()), name_(std::move(name)), delimiter_(delimiter) {
  if (delimiter == '"' || delimiter == '\n' || delimiter == '\r') {
    ThrowInvalid("CSV delimiter cannot be a quote or line break");
  }
  // A UTF-8 byte order mark before the header is not part of the first column name.
  if (Peek() == 0xEF) {
    Get();
    if (Get() != 0xBB || Get() != 0xBF) ThrowInvalid("{}:1: malformed UTF-8 byte order mark", name_);
  }
}

int CsvTokenizer::Get() {
  return input_->sbumpc();  // already an unsigned char value or eof
}

int CsvTokenizer::Peek() { return input_->sgetc(); }

void CsvTokenizer::ReadQuoted(std::string& text, size_t cell_number) {
  const int64_t start_line = line_;
  for (;;) {
    int c = Get();
    if (c == kEnd) {
      ThrowInvalid("{}:{}: unterminated quoted field in cell {} (no closing quote before the end "
                   "of the file)",
                   name_, start_line, cell_number);
    }
    if (c == '"') {
      if (Peek() != '"') return;
      Get();
    } else if (c == '\n') {
      ++line_;
    }
    text += static_cast<char>(c);
  }
}

bool CsvTokenizer::Next(std::vector<CsvCell>& cells) {
  if (Peek() == kEnd) return false;
  record_line_ = line_;
  size_t count = 0;
  for (;;) {
    if (cells.size() <= count) cells.emplace_back();
    CsvCell& cell = cells[count++];
    cell.text.clear();
    cell.quoted = false;
    int c = Get();
    if (c == '"') {
      cell.quoted = true;
      ReadQuoted(cell.text, count);
      c = Get();
      if (c != delimiter_ && c != '\n' && c != '\r' && c != kEnd) {
        ThrowInvalid("{}:{}: expected a delimiter or line end after the closing quote of cell {}, "
                     "found '{}'",
                     name_, line_, count, EscapeForMessage(std::string(1, static_cast<char>(c))));
      }
    } else {
      // Quotes inside an unquoted cell are kept as ordinary characters.
      while (c != delimiter_ && c != '\n' && c != '\r' && c != kEnd) {
        cell.text += static_cast<char>(c);
        c = Get();
      }
    }
    if (c == delimiter_) continue;
    if (c == '\r' && Peek() == '\n') Get();
    if (c != kEnd) ++line_;
    break;
  }
  cells.resize(count);
  return true;
}

}  // namespace lancelet::text
