// Recursive-descent parser for SQL expressions over a token stream.
//
// The SQL statement parser drives the same object: it consumes its own clauses with the
// token helpers and calls ParseExpression() wherever an expression starts. An expression
// ends at the first token that cannot continue it (',', ')', FROM, AS, ORDER, end, ...),
// which is left unconsumed.
//
// Precedence, loosest first:
//   OR < AND < NOT < IS [NOT] NULL < comparisons (= <> != < <= > >=)
//      < [NOT] IN / BETWEEN / LIKE / ILIKE < + - < * / % < unary - + < primary
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expr/lexer.h"
#include "lancelet/expr.h"

namespace lancelet {

class Parser {
 public:
  // Tokenizes `text` and starts at its first token.
  explicit Parser(std::string text);
  Parser(std::shared_ptr<const std::string> text, std::vector<Token> tokens, size_t start = 0);

  // Parses one expression starting at the current token.
  ExprPtr ParseExpression();
  // Parses a SELECT at the current token (the statement parser's); with one set,
  // (SELECT ...), EXISTS (SELECT ...) and x IN (SELECT ...) parse as kSubquery nodes.
  using SubqueryParser = std::function<std::shared_ptr<const void>()>;
  void set_subquery_parser(SubqueryParser parser) { subquery_parser_ = std::move(parser); }
  // SQL's division (BinaryOp): `/` of integers gives float64, as in DuckDB. Off, `/` is
  // the reference's (integers divide as integers); `//` is integer division either way.
  void set_sql_division(bool on) { sql_division_ = on; }
  // A type name: SQL spellings (INT, BIGINT, DOUBLE PRECISION, VARCHAR(n), ...) or
  // lancelet's own (int32, fixed_size_list<float32,4>, timestamp<ms,UTC>).
  TypePtr ParseTypeName();
  TypePtr ParseBaseTypeName();  // without the [] suffixes

  // Token helpers for statement parsers.
  const Token& Peek(size_t ahead = 0) const;
  const Token& Next();
  size_t index() const { return index_; }
  void set_index(size_t index) { index_ = index; }
  bool AtEnd() const { return Peek().kind == TokenKind::kEnd; }
  bool ConsumeKeyword(std::string_view upper_word);
  bool ConsumeSymbol(std::string_view symbol);
  void ExpectKeyword(std::string_view upper_word);
  void ExpectSymbol(std::string_view symbol);
  void ExpectEnd();
  // An identifier (bare non-reserved word or "quoted"); returns its name.
  std::string ExpectIdentifier(std::string_view what = "identifier");
  // Throws ParseError "expected <what> at position <current token>".
  [[noreturn]] void Fail(std::string_view expected) const;
  [[noreturn]] void FailAt(const Token& token, const std::string& detail) const;
  const std::shared_ptr<const std::string>& text() const { return text_; }

 private:
  ExprPtr ParseOr();
  ExprPtr ParseAnd();
  ExprPtr ParseNot();
  ExprPtr ParseIs();
  ExprPtr ParseComparison();
  ExprPtr ParsePredicate();
  ExprPtr ParseConcatenation();
  ExprPtr ParseAdditive();
  // operand::type, any number of times (PostgreSQL's cast; binds tighter than unary minus).
  ExprPtr ParseCastSuffixes(ExprPtr operand);
  ExprPtr ParseMultiplicative();
  ExprPtr ParseUnary();
  ExprPtr ParsePrimary();
  ExprPtr ParseNumber(const Token& token, bool negative);
  ExprPtr ParseTypedLiteral(const Token& keyword, const Token& text);
  ExprPtr ParseCast(const Token& keyword);
  ExprPtr ParseInterval(const Token& keyword);
  // CASE [x] WHEN a THEN b ... [ELSE c] END, as a call of "case" with the arguments
  // (condition, value)... [, else]; CASE x WHEN a makes the condition x = a.
  ExprPtr ParseCase(const Token& keyword);
  ExprPtr ParseCall(const Token& name);
  // now(), current_timestamp, current_date and their synonyms: the statement's time.
  bool AtClock() const;
  ExprPtr ParseClock(const Token& name);
  void ParseOrderKeys(std::vector<ExprPtr>& keys, std::vector<bool>& descending,
                      std::vector<std::optional<bool>>& nulls_first);
  void ParseWindow(Expr& call);
  FrameBound ParseFrameBound();
  ExprPtr ParseColumn(const Token& first);
  ExprPtr ParseList(const Token& open);

  // At "(SELECT" with a subquery parser: the subquery, parenthesized, as `what`.
  ExprPtr ParseSubquery(const Token& at, const std::string& what);
  bool AtSubquery() const { return subquery_parser_ && Peek().IsSymbol("(") && Peek(1).IsKeyword("SELECT"); }
  std::shared_ptr<Expr> NewNode(ExprKind kind, const Token& at) const;
  ExprPtr MakeBinary(BinaryOp op, const Token& at, ExprPtr left, ExprPtr right) const;

  std::shared_ptr<const std::string> text_;
  SubqueryParser subquery_parser_;
  bool sql_division_ = false;
  std::vector<Token> tokens_;
  size_t index_ = 0;
  std::optional<int64_t> clock_micros_;  // UTC at the first now() of the text, in microseconds
};

}  // namespace lancelet
