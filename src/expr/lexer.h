// Splits SQL text into tokens that remember where they start. Shared by the expression
// parser and the SQL statement parser.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lancelet {

enum class TokenKind : uint8_t {
  kIdentifier,        // bare word: a name or a keyword (keywords are not told apart here)
  kQuotedIdentifier,  // "double quoted"; value has "" unescaped
  kInteger,           // digits only
  kFloat,             // digits with '.' or an exponent
  kString,            // 'single quoted'; value has '' unescaped
  kBlob,              // X'0aff'; value holds the decoded bytes
  kSymbol,            // ( ) [ ] , . ; * + - / % = != <> < <= > >= ||
  kEnd,               // after the last token; position is one past the text
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;   // the source characters of the token
  std::string value;  // unescaped content for strings, quoted identifiers and blobs
  int position = 0;   // 1-based column of the first character

  bool IsSymbol(std::string_view s) const { return kind == TokenKind::kSymbol && text == s; }
  // A bare identifier equal to `word` ignoring ASCII case (`word` given in upper case).
  bool IsKeyword(std::string_view word) const;
  // How the token reads in an error message: 'FROM', end of input, ...
  std::string Describe() const;
};

// Words that cannot be bare column names because they continue or end an expression or
// start a clause. A column with such a name must be "quoted".
bool IsReservedWord(std::string_view word);

// Tokenizes the whole text; the last token is kEnd. `--` comments run to the end of the
// line. Throws ParseError for unterminated strings and unknown characters.
std::vector<Token> Tokenize(const std::string& text);

}  // namespace lancelet
