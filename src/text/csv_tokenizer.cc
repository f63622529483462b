#include "text/csv_tokenizer.h"

#include <algorithm>
#include <cstring>

#include "lancelet/error.h"

namespace lancelet::text {

namespace {
constexpr int kEnd = std::char_traits<char>::eof();
constexpr size_t kBlockBytes = 256 << 10;
}  // namespace

CsvTokenizer::CsvTokenizer(std::istream& input, std::string name, char delimiter)
    : input_(input.rdbuf()), name_(std::move(name)), delimiter_(delimiter),
      block_(std::make_unique_for_overwrite<char[]>(kBlockBytes)), buffer_(block_.get()) {
  if (delimiter == '"' || delimiter == '\n' || delimiter == '\r') {
    ThrowInvalid("CSV delimiter cannot be a quote or line break");
  }
  // A UTF-8 byte order mark before the header is not part of the first column name.
  if (Peek() == 0xEF) {
    Get();
    if (Get() != 0xBB || Get() != 0xBF) ThrowInvalid("{}:1: malformed UTF-8 byte order mark", name_);
  }
}

CsvTokenizer::CsvTokenizer(std::string_view records, std::string name, char delimiter, int64_t first_line)
    : input_(nullptr), name_(std::move(name)), delimiter_(delimiter), line_(first_line), buffer_(records.data()),
      end_(records.size()) {}

bool CsvTokenizer::Fill() {
  if (!input_) return false;
  pos_ = 0;
  end_ = size_t(std::max<std::streamsize>(input_->sgetn(block_.get(), kBlockBytes), 0));
  return end_ > 0;
}

int CsvTokenizer::Get() {
  if (pos_ == end_ && !Fill()) return kEnd;
  return static_cast<unsigned char>(buffer_[pos_++]);
}

int CsvTokenizer::Peek() {
  if (pos_ == end_ && !Fill()) return kEnd;
  return static_cast<unsigned char>(buffer_[pos_]);
}

const char* CsvTokenizer::AppendToQuote(std::string& out) {
  const char* begin = buffer_ + pos_;
  const char* stop = buffer_ + end_;
  const char* quote = static_cast<const char*>(std::memchr(begin, '"', size_t(stop - begin)));
  const char* upto = quote ? quote : stop;
  line_ += std::count(begin, upto, '\n');
  out.append(begin, upto);
  pos_ = size_t(upto - buffer_);
  return quote;
}

int CsvTokenizer::AppendToCellEnd(std::string& out) {
  const char* begin = buffer_ + pos_;
  const char* stop = buffer_ + end_;
  const char* at = begin;
  while (at != stop && *at != delimiter_ && *at != '\n' && *at != '\r') ++at;
  out.append(begin, at);
  pos_ = size_t(at - buffer_);
  return at == stop ? kEnd : static_cast<unsigned char>(buffer_[pos_++]);
}

void CsvTokenizer::ReadQuoted(std::string& text, size_t cell_number) {
  const int64_t start_line = line_;
  for (;;) {
    if (pos_ == end_ && !Fill()) {
      ThrowInvalid("{}:{}: unterminated quoted field in cell {} (no closing quote before the end "
                   "of the file)",
                   name_, start_line, cell_number);
    }
    const char* quote = AppendToQuote(text);
    if (!quote) continue;
    ++pos_;
    if (Peek() != '"') return;  // the closing quote; a doubled one is a quote in the text
    ++pos_;
    text += '"';
  }
}

// An unquoted cell's text up to its delimiter or line end, which it returns (consumed),
// or kEnd. Quotes inside it are ordinary characters.
int CsvTokenizer::ReadUnquoted(std::string& text) {
  for (;;) {
    if (pos_ == end_ && !Fill()) return kEnd;
    if (const int c = AppendToCellEnd(text); c != kEnd) return c;
  }
}

bool CsvTokenizer::NextRawRecords(size_t max_records, size_t max_bytes, std::string& out, int64_t& first_line) {
  out.clear();
  if (Peek() == kEnd) return false;
  first_line = line_;
  for (size_t records = 0; records < max_records && out.size() < max_bytes && Peek() != kEnd; ++records)
    CopyRawRecord(out);
  return true;
}

// Next's splitting without its cells: a record's text through its line end, appended to
// `out`, and line_ moved past it as Next moves it.
void CsvTokenizer::CopyRawRecord(std::string& out) {
  bool cell_start = true;
  for (;;) {
    if (pos_ == end_ && !Fill()) return;  // the last record, without a line end
    if (cell_start && buffer_[pos_] == '"') {
      out += buffer_[pos_++];
      for (bool closed = false; !closed;) {  // through the closing quote; Next reports a missing one
        if (pos_ == end_ && !Fill()) return;
        if (!AppendToQuote(out)) continue;
        out += buffer_[pos_++];
        if (Peek() != '"') closed = true;
        else out += buffer_[pos_++];  // a doubled quote
      }
    }
    cell_start = false;
    const int c = AppendToCellEnd(out);
    if (c == kEnd) continue;
    out += static_cast<char>(c);
    if (c == static_cast<unsigned char>(delimiter_)) {
      cell_start = true;
      continue;
    }
    if (c == '\r' && Peek() == '\n') out += buffer_[pos_++];
    ++line_;
    return;
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
    int c = Peek();
    if (c == '"') {
      Get();
      cell.quoted = true;
      ReadQuoted(cell.text, count);
      c = Get();
      if (c != static_cast<unsigned char>(delimiter_) && c != '\n' && c != '\r' && c != kEnd) {
        ThrowInvalid("{}:{}: expected a delimiter or line end after the closing quote of cell {}, "
                     "found '{}'",
                     name_, line_, count, EscapeForMessage(std::string(1, static_cast<char>(c))));
      }
    } else {
      c = ReadUnquoted(cell.text);
    }
    if (c == static_cast<unsigned char>(delimiter_)) continue;
    if (c == '\r' && Peek() == '\n') Get();
    if (c != kEnd) ++line_;
    break;
  }
  cells.resize(count);
  return true;
}

}  // namespace lancelet::text
