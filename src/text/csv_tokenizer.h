// Splits CSV text into records of cells (RFC 4180: quoted cells may hold delimiters,
// doubled quotes and line breaks; records end in LF or CRLF).
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lancelet::text {

struct CsvCell {
  std::string text;
  bool quoted = false;
};

class CsvTokenizer {
 public:
  CsvTokenizer(std::istream& input, std::string name, char delimiter);
  // Over records that NextRawRecords copied, the first starting on line `first_line`.
  CsvTokenizer(std::string_view records, std::string name, char delimiter, int64_t first_line);

  // Reads the next record into `cells` (resized to the cell count); false at the end.
  // A blank line is a record of one empty unquoted cell.
  bool Next(std::vector<CsvCell>& cells);
  // The line on which the last record returned by Next started (1-based).
  int64_t record_line() const { return record_line_; }

  // The text of the next whole records as they stand in the input, into `out`: records
  // until `max_records` or until `out` holds `max_bytes` or more. `first_line`: the line
  // the first starts on. False at the end. The records split where Next would split them
  // (a quote opens a quoted cell only at a cell's start), so that they can be tokenized
  // elsewhere, on another thread, by the constructor above.
  bool NextRawRecords(size_t max_records, size_t max_bytes, std::string& out, int64_t& first_line);

 private:
  int Get();
  int Peek();
  bool Fill();  // at the buffer's end: reads the next block; false at the input's end
  void ReadQuoted(std::string& text, size_t cell_number);
  int ReadUnquoted(std::string& text);
  void CopyRawRecord(std::string& out);
  // The buffered bytes from pos_ up to the next quote appended to `out` (line breaks
  // counted), pos_ left at the quote; null when the buffer ends first.
  const char* AppendToQuote(std::string& out);
  // The buffered bytes from pos_ up to the next delimiter or line end appended to `out`;
  // that byte (as Get gives it), consumed, or Get's end value when the buffer ends first.
  int AppendToCellEnd(std::string& out);

  std::streambuf* input_;  // null over records in memory
  std::string name_;
  char delimiter_;
  int64_t line_ = 1;         // line of the next unread character
  int64_t record_line_ = 0;
  // Read in blocks: a cell's text is found with memchr and appended as a span, where a
  // character at a time through the streambuf took a quarter of an ingest's time.
  std::unique_ptr<char[]> block_;
  const char* buffer_ = nullptr;  // block_, or the records in memory
  size_t pos_ = 0, end_ = 0;      // the unread part of buffer_
};

}  // namespace lancelet::text
