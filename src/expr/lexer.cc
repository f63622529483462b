#include "expr/lexer.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "lancelet/expr.h"

namespace lancelet {

namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (c & 0x80); }
bool IsIdentPart(char c) { return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '$'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Scanner {
 public:
  explicit Scanner(const std::string& text) : text_(text) {}

  std::vector<Token> Run() {
    std::vector<Token> tokens;
    while (true) {
      SkipSpaceAndComments();
      if (i_ >= text_.size()) break;
      tokens.push_back(NextToken());
    }
    Token end;
    end.kind = TokenKind::kEnd;
    end.position = int(text_.size()) + 1;
    tokens.push_back(std::move(end));
    return tokens;
  }

 private:
  [[noreturn]] void Fail(const std::string& detail, size_t at) const {
    throw ParseError(detail, int(at) + 1, text_);
  }

  void SkipSpaceAndComments() {
    while (i_ < text_.size()) {
      char c = text_[i_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '-' && i_ + 1 < text_.size() && text_[i_ + 1] == '-') {
        while (i_ < text_.size() && text_[i_] != '\n') ++i_;
      } else if (c == '/' && i_ + 1 < text_.size() && text_[i_ + 1] == '*') {
        const size_t end = text_.find("*/", i_ + 2);
        if (end == std::string::npos) Fail("unterminated /* comment", i_);
        i_ = end + 2;
      } else {
        break;
      }
    }
  }

  Token Make(TokenKind kind, size_t start, std::string value = {}) {
    Token t;
    t.kind = kind;
    t.text = text_.substr(start, i_ - start);
    t.value = std::move(value);
    t.position = int(start) + 1;
    return t;
  }

  // Reads a `quote`-delimited run starting at i_ (on the opening quote); a doubled quote
  // stands for one.
  std::string ReadQuoted(char quote, const char* what) {
    size_t start = i_++;
    std::string value;
    while (true) {
      if (i_ >= text_.size()) Fail(std::string("unterminated ") + what, start);
      char c = text_[i_++];
      if (c == quote) {
        if (i_ < text_.size() && text_[i_] == quote) {
          value.push_back(quote);
          ++i_;
          continue;
        }
        return value;
      }
      value.push_back(c);
    }
  }

  Token NextToken() {
    size_t start = i_;
    char c = text_[i_];
    if ((c == 'x' || c == 'X') && i_ + 1 < text_.size() && text_[i_ + 1] == '\'') {
      ++i_;
      std::string hex = ReadQuoted('\'', "binary literal");
      if (hex.size() % 2 != 0) Fail("binary literal needs an even number of hex digits", start);
      std::string bytes;
      for (size_t k = 0; k < hex.size(); k += 2) {
        int hi = HexValue(hex[k]), lo = HexValue(hex[k + 1]);
        if (hi < 0 || lo < 0) Fail("binary literal holds a non-hex digit", start);
        bytes.push_back(char(hi * 16 + lo));
      }
      return Make(TokenKind::kBlob, start, std::move(bytes));
    }
    if (IsIdentStart(c)) {
      while (i_ < text_.size() && IsIdentPart(text_[i_])) ++i_;
      return Make(TokenKind::kIdentifier, start, text_.substr(start, i_ - start));
    }
    if (IsDigit(c) || (c == '.' && i_ + 1 < text_.size() && IsDigit(text_[i_ + 1]))) return Number(start);
    if (c == '\'') {
      std::string value = ReadQuoted('\'', "string literal");
      return Make(TokenKind::kString, start, std::move(value));
    }
    if (c == '"') {
      std::string value = ReadQuoted('"', "quoted identifier");
      if (value.empty()) Fail("empty quoted identifier", start);
      return Make(TokenKind::kQuotedIdentifier, start, std::move(value));
    }
    static constexpr std::array<std::string_view, 7> kTwoChar = {"<=", ">=", "<>", "!=", "||", "==", "//"};
    if (i_ + 1 < text_.size()) {
      std::string_view two(text_.data() + i_, 2);
      if (std::find(kTwoChar.begin(), kTwoChar.end(), two) != kTwoChar.end()) {
        i_ += 2;
        return Make(TokenKind::kSymbol, start);
      }
    }
    if (std::string_view("()[],.;*+-/%=<>{}:").find(c) != std::string_view::npos) {
      ++i_;
      return Make(TokenKind::kSymbol, start);
    }
    // Quote the whole UTF-8 sequence (lead byte and continuation bytes), escaped: the
    // input may be any bytes, the message must stay valid UTF-8.
    size_t end = start + 1;
    while (end < text_.size() && end < start + 4 && (static_cast<unsigned char>(text_[end]) & 0xC0) == 0x80) ++end;
    Fail(fmt::format("unexpected character '{}'", EscapeForMessage(text_.substr(start, end - start))), start);
  }

  Token Number(size_t start) {
    bool is_float = false;
    while (i_ < text_.size() && IsDigit(text_[i_])) ++i_;
    if (i_ < text_.size() && text_[i_] == '.') {
      is_float = true;
      ++i_;
      while (i_ < text_.size() && IsDigit(text_[i_])) ++i_;
    }
    if (i_ < text_.size() && (text_[i_] == 'e' || text_[i_] == 'E')) {
      size_t k = i_ + 1;
      if (k < text_.size() && (text_[k] == '+' || text_[k] == '-')) ++k;
      if (k < text_.size() && IsDigit(text_[k])) {
        is_float = true;
        i_ = k;
        while (i_ < text_.size() && IsDigit(text_[i_])) ++i_;
      }
    }
    if (i_ < text_.size() && IsIdentStart(text_[i_])) Fail("malformed number", start);
    return Make(is_float ? TokenKind::kFloat : TokenKind::kInteger, start);
  }

  const std::string& text_;
  size_t i_ = 0;
};

}  // namespace

bool Token::IsKeyword(std::string_view word) const {
  if (kind != TokenKind::kIdentifier || text.size() != word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(text[i])) != word[i]) return false;
  return true;
}

std::string Token::Describe() const {
  if (kind == TokenKind::kEnd) return "end of input";
  return "'" + text + "'";
}

bool IsReservedWord(std::string_view word) {
  static constexpr std::array<std::string_view, 45> kReserved = {
      "ALL",    "AND",   "AS",     "ASC",     "BETWEEN", "BY",     "CASE",   "CAST",  "CROSS",
      "DESC",   "DISTINCT", "ELSE", "END",    "ESCAPE",  "EXCEPT", "FALSE",  "FROM",  "FULL",
      "GROUP",  "HAVING", "ILIKE", "IN",     "INNER",   "INTERSECT", "IS",  "JOIN",  "LEFT",
      "LIKE",   "LIMIT", "NOT",    "NULL",   "OFFSET",  "ON",     "OR",     "ORDER", "OUTER",
      "RIGHT",  "SELECT", "SET",   "THEN",   "TRUE",    "UNION",  "USING",  "WHEN",  "WHERE"};
  std::string upper(word);
  for (auto& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  return std::find(kReserved.begin(), kReserved.end(), upper) != kReserved.end();
}

std::vector<Token> Tokenize(const std::string& text) { return Scanner(text).Run(); }

}  // namespace lancelet
