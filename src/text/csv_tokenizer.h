// Splits CSV text into records of cells (RFC 4180: quoted cells may hold delimiters,
// doubled quotes and line breaks; records end in LF or CRLF).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace lancelet::text {

struct CsvCell {
  std::string text;
  bool quoted = false;
};

class CsvTokenizer {
 public:
  CsvTokenizer(std::istream& input, std::string name, char delimiter);

  // Reads the next record into `cells` (resized to the cell count); false at the end.
  // A blank line is a record of one empty unquoted cell.
  bool Next(std::vector<CsvCell>& cells);
  // The line on which the last record returned by Next started (1-based).
  int64_t record_line() const { return record_line_; }

 private:
  int Get();
  int Peek();
  void ReadQuoted(std::string& text, size_t cell_number);

  std::streambuf* input_;
  std::string name_;
  char delimiter_;
  int64_t line_ = 1;         // line of the next unread character
  int64_t record_line_ = 0;
};

}  // namespace lancelet::text
