#include "expr/parser.h"

#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "array/ascii_case.h"
#include "expr/temporal.h"

namespace lancelet {

namespace {

// Whether `token` can start a primary expression after a keyword such as DATE.
bool IsIdentifierToken(const Token& t) {
  return (t.kind == TokenKind::kIdentifier && !IsReservedWord(t.text)) ||
         t.kind == TokenKind::kQuotedIdentifier;
}

}  // namespace

Parser::Parser(std::string text) {
  auto shared = std::make_shared<const std::string>(std::move(text));
  tokens_ = Tokenize(*shared);
  text_ = std::move(shared);
}

Parser::Parser(std::shared_ptr<const std::string> text, std::vector<Token> tokens, size_t start)
    : text_(std::move(text)), tokens_(std::move(tokens)), index_(start) {
  if (tokens_.empty() || tokens_.back().kind != TokenKind::kEnd) {
    Token end;
    end.position = int(text_->size()) + 1;
    tokens_.push_back(std::move(end));
  }
}

const Token& Parser::Peek(size_t ahead) const {
  size_t i = std::min(index_ + ahead, tokens_.size() - 1);
  return tokens_[i];
}

const Token& Parser::Next() {
  const Token& t = tokens_[index_];
  if (index_ + 1 < tokens_.size()) ++index_;
  return t;
}

bool Parser::ConsumeKeyword(std::string_view upper_word) {
  if (!Peek().IsKeyword(upper_word)) return false;
  Next();
  return true;
}

bool Parser::ConsumeSymbol(std::string_view symbol) {
  if (!Peek().IsSymbol(symbol)) return false;
  Next();
  return true;
}

void Parser::ExpectKeyword(std::string_view upper_word) {
  if (!ConsumeKeyword(upper_word)) Fail(upper_word);
}

void Parser::ExpectSymbol(std::string_view symbol) {
  if (!ConsumeSymbol(symbol)) Fail("'" + std::string(symbol) + "'");
}

void Parser::ExpectEnd() {
  if (!AtEnd()) Fail("end of input");
}

std::string Parser::ExpectIdentifier(std::string_view what) {
  const Token& t = Peek();
  if (!IsIdentifierToken(t)) Fail(what);
  Next();
  return t.kind == TokenKind::kQuotedIdentifier ? t.value : t.text;
}

void Parser::Fail(std::string_view expected) const {
  throw ParseError("expected " + std::string(expected), Peek().position, *text_);
}

void Parser::FailAt(const Token& token, const std::string& detail) const {
  throw ParseError(detail, token.position, *text_);
}

std::shared_ptr<Expr> Parser::NewNode(ExprKind kind, const Token& at) const {
  auto node = std::make_shared<Expr>();
  node->kind = kind;
  node->position = at.position;
  node->source = text_;
  return node;
}

ExprPtr Parser::MakeBinary(BinaryOp op, const Token& at, ExprPtr left, ExprPtr right) const {
  auto node = NewNode(ExprKind::kBinary, at);
  node->binary_op = op;
  node->args = {std::move(left), std::move(right)};
  return node;
}

ExprPtr Parser::ParseExpression() { return ParseOr(); }

ExprPtr Parser::ParseOr() {
  ExprPtr left = ParseAnd();
  while (Peek().IsKeyword("OR")) {
    Token op = Next();
    left = MakeBinary(BinaryOp::kOr, op, left, ParseAnd());
  }
  return left;
}

ExprPtr Parser::ParseAnd() {
  ExprPtr left = ParseNot();
  while (Peek().IsKeyword("AND")) {
    Token op = Next();
    left = MakeBinary(BinaryOp::kAnd, op, left, ParseNot());
  }
  return left;
}

ExprPtr Parser::ParseNot() {
  if (Peek().IsKeyword("NOT")) {
    Token op = Next();
    auto node = NewNode(ExprKind::kUnary, op);
    node->unary_op = UnaryOp::kNot;
    node->args = {ParseNot()};
    return node;
  }
  return ParseIs();
}

// x IS [NOT] NULL, and x IS [NOT] DISTINCT FROM y: equality that takes NULL for a value
// (never NULL itself), written as coalesce(x = y, x IS NULL AND y IS NULL) so that every
// type the comparison takes is covered, NaN equal to NaN included.
ExprPtr Parser::ParseIs() {
  ExprPtr operand = ParseComparison();
  while (Peek().IsKeyword("IS")) {
    Token is = Next();
    const bool negated = ConsumeKeyword("NOT");
    if (ConsumeKeyword("DISTINCT")) {
      ExpectKeyword("FROM");
      ExprPtr other = ParseComparison();
      auto is_null = [&](const ExprPtr& e) {
        auto node = NewNode(ExprKind::kIsNull, is);
        node->args = {e};
        return node;
      };
      auto same = NewNode(ExprKind::kCall, is);
      same->function = "coalesce";
      same->args = {MakeBinary(BinaryOp::kEq, is, operand, other),
                    MakeBinary(BinaryOp::kAnd, is, is_null(operand), is_null(other))};
      if (negated) {
        operand = same;
        continue;
      }
      auto distinct = NewNode(ExprKind::kUnary, is);
      distinct->unary_op = UnaryOp::kNot;
      distinct->args = {same};
      operand = distinct;
      continue;
    }
    auto node = NewNode(ExprKind::kIsNull, is);
    node->negated = negated;
    ExpectKeyword("NULL");
    node->args = {operand};
    operand = node;
  }
  return operand;
}

ExprPtr Parser::ParseComparison() {
  ExprPtr left = ParsePredicate();
  while (true) {
    const Token& t = Peek();
    BinaryOp op;
    if (t.IsSymbol("=") || t.IsSymbol("==")) op = BinaryOp::kEq;
    else if (t.IsSymbol("<>") || t.IsSymbol("!=")) op = BinaryOp::kNe;
    else if (t.IsSymbol("<")) op = BinaryOp::kLt;
    else if (t.IsSymbol("<=")) op = BinaryOp::kLe;
    else if (t.IsSymbol(">")) op = BinaryOp::kGt;
    else if (t.IsSymbol(">=")) op = BinaryOp::kGe;
    else return left;
    Token op_token = Next();
    left = MakeBinary(op, op_token, left, ParsePredicate());
  }
}

ExprPtr Parser::ParsePredicate() {
  ExprPtr operand = ParseConcatenation();
  const Token& first = Peek();
  bool negated = false;
  size_t keyword_ahead = 0;
  if (first.IsKeyword("NOT")) {
    const Token& second = Peek(1);
    if (!(second.IsKeyword("IN") || second.IsKeyword("BETWEEN") || second.IsKeyword("LIKE") ||
          second.IsKeyword("ILIKE")))
      return operand;
    negated = true;
    keyword_ahead = 1;
  }
  const Token& keyword = Peek(keyword_ahead);
  if (keyword.IsKeyword("IN")) {
    Token at = keyword;
    index_ += keyword_ahead + 1;
    auto node = NewNode(ExprKind::kIn, at);
    node->negated = negated;
    node->args.push_back(operand);
    if (AtSubquery()) {
      node->args.push_back(ParseSubquery(at, "in"));
      return node;
    }
    ExpectSymbol("(");
    do node->args.push_back(ParseExpression());
    while (ConsumeSymbol(","));
    ExpectSymbol(")");
    return node;
  }
  if (keyword.IsKeyword("BETWEEN")) {
    Token at = keyword;
    index_ += keyword_ahead + 1;
    auto node = NewNode(ExprKind::kBetween, at);
    node->negated = negated;
    ExprPtr low = ParseAdditive();
    ExpectKeyword("AND");
    ExprPtr high = ParseAdditive();
    node->args = {operand, low, high};
    return node;
  }
  if (keyword.IsKeyword("LIKE") || keyword.IsKeyword("ILIKE")) {
    Token at = keyword;
    index_ += keyword_ahead + 1;
    auto node = NewNode(ExprKind::kLike, at);
    node->negated = negated;
    node->case_insensitive = at.IsKeyword("ILIKE");
    node->args = {operand, ParseAdditive()};
    if (ConsumeKeyword("ESCAPE")) {
      const Token& esc = Peek();
      if (esc.kind != TokenKind::kString || esc.value.size() != 1) Fail("a one-character string after ESCAPE");
      node->escape = esc.value;
      Next();
    }
    return node;
  }
  return operand;
}

// a || b: string concatenation, binding looser than + and tighter than comparisons (as in
// DuckDB and PostgreSQL); a call of the function "||".
ExprPtr Parser::ParseConcatenation() {
  ExprPtr left = ParseAdditive();
  while (Peek().IsSymbol("||")) {
    Token op = Next();
    auto node = NewNode(ExprKind::kCall, op);
    node->function = "||";
    node->args = {left, ParseAdditive()};
    left = node;
  }
  return left;
}

ExprPtr Parser::ParseAdditive() {
  ExprPtr left = ParseMultiplicative();
  while (Peek().IsSymbol("+") || Peek().IsSymbol("-")) {
    Token op = Next();
    left = MakeBinary(op.text == "+" ? BinaryOp::kAdd : BinaryOp::kSub, op, left, ParseMultiplicative());
  }
  return left;
}

ExprPtr Parser::ParseMultiplicative() {
  ExprPtr left = ParseUnary();
  while (Peek().IsSymbol("*") || Peek().IsSymbol("/") || Peek().IsSymbol("//") || Peek().IsSymbol("%")) {
    Token op = Next();
    BinaryOp kind = op.text == "*"    ? BinaryOp::kMul
                    : op.text == "/"  ? (sql_division_ ? BinaryOp::kFloatDiv : BinaryOp::kDiv)
                    : op.text == "//" ? BinaryOp::kIntDiv
                                      : BinaryOp::kMod;
    left = MakeBinary(kind, op, left, ParseUnary());
  }
  return left;
}

ExprPtr Parser::ParseUnary() {
  if (Peek().IsSymbol("-")) {
    Token op = Next();
    const Token& t = Peek();
    // Folded so that -9223372036854775808 is an int64 literal.
    if (t.kind == TokenKind::kInteger || t.kind == TokenKind::kFloat) {
      Token number = Next();
      auto literal = ParseNumber(number, true);
      auto node = std::const_pointer_cast<Expr>(literal);
      node->position = op.position;
      return ParseCastSuffixes(node);
    }
    auto node = NewNode(ExprKind::kUnary, op);
    node->unary_op = UnaryOp::kNegate;
    node->args = {ParseUnary()};
    return node;
  }
  if (Peek().IsSymbol("+")) {
    Next();
    return ParseUnary();
  }
  return ParseCastSuffixes(ParsePrimary());
}

ExprPtr Parser::ParseCastSuffixes(ExprPtr operand) {
  for (;;) {
    if (Peek().IsSymbol(":") && Peek(1).IsSymbol(":") && Peek(1).position == Peek().position + 1) {
      Token at = Next();
      Next();
      auto node = NewNode(ExprKind::kCast, at);
      node->cast_type = ParseTypeName();
      node->args = {operand};
      operand = node;
    } else if (Peek().IsSymbol("[")) {
      // x[i]: list_element(x, i); x[a:b]: list_slice(x, a, b), a omitted from the first
      // item (1), b to the last (-1).
      Token at = Next();
      auto node = NewNode(ExprKind::kCall, at);
      auto bound = [&](int64_t k) -> ExprPtr {
        auto literal = NewNode(ExprKind::kLiteral, at);
        literal->literal = Scalar{DataType::Int64(), k};
        return literal;
      };
      ExprPtr first = Peek().IsSymbol(":") ? bound(1) : ParseExpression();
      if (ConsumeSymbol(":")) {
        node->function = "list_slice";
        node->args = {operand, first, Peek().IsSymbol("]") ? bound(-1) : ParseExpression()};
      } else {
        node->function = "list_element";
        node->args = {operand, first};
      }
      ExpectSymbol("]");
      operand = node;
    } else {
      return operand;
    }
  }
}

ExprPtr Parser::ParseNumber(const Token& token, bool negative) {
  auto node = NewNode(ExprKind::kLiteral, token);
  const std::string& s = token.text;
  if (token.kind == TokenKind::kInteger) {
    uint64_t magnitude = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude);
    if (ec != std::errc() || end != s.data() + s.size())
      FailAt(token, "integer literal " + s + " is out of range");
    if (!negative) {
      if (magnitude <= uint64_t(std::numeric_limits<int64_t>::max()))
        node->literal = Scalar{DataType::Int64(), int64_t(magnitude)};
      else
        node->literal = Scalar{DataType::UInt64(), magnitude};
    } else {
      if (magnitude > uint64_t(std::numeric_limits<int64_t>::max()) + 1)
        FailAt(token, "integer literal -" + s + " is out of range");
      node->literal = Scalar{DataType::Int64(), int64_t(0 - magnitude)};
    }
    return node;
  }
  double v = std::strtod(s.c_str(), nullptr);
  if (std::isinf(v)) FailAt(token, "float literal " + s + " is out of range");
  node->literal = Scalar{DataType::Float64(), negative ? -v : v};
  return node;
}

ExprPtr Parser::ParsePrimary() {
  const Token& t = Peek();
  switch (t.kind) {
    case TokenKind::kInteger:
    case TokenKind::kFloat: {
      Token number = Next();
      return ParseNumber(number, false);
    }
    case TokenKind::kString: {
      Token s = Next();
      auto node = NewNode(ExprKind::kLiteral, s);
      node->literal = Scalar{DataType::Utf8(), s.value};
      return node;
    }
    case TokenKind::kBlob: {
      Token b = Next();
      auto node = NewNode(ExprKind::kLiteral, b);
      node->literal = Scalar{DataType::Binary(), b.value};
      return node;
    }
    case TokenKind::kQuotedIdentifier: {
      Token first = Next();
      return ParseColumn(first);
    }
    case TokenKind::kSymbol: {
      if (AtSubquery()) return ParseSubquery(t, "");
      if (t.IsSymbol("(")) {
        Next();
        ExprPtr inner = ParseExpression();
        ExpectSymbol(")");
        return inner;
      }
      if (t.IsSymbol("[")) {
        Token open = Next();
        return ParseList(open);
      }
      break;
    }
    case TokenKind::kIdentifier: {
      if (t.IsKeyword("NULL") || t.IsKeyword("TRUE") || t.IsKeyword("FALSE")) {
        Token word = Next();
        auto node = NewNode(ExprKind::kLiteral, word);
        if (word.IsKeyword("NULL")) node->literal = Scalar::Null(nullptr);
        else node->literal = Scalar{DataType::Bool(), word.IsKeyword("TRUE")};
        return node;
      }
      if ((t.IsKeyword("DATE") || t.IsKeyword("TIMESTAMP")) && Peek(1).kind == TokenKind::kString) {
        Token keyword = Next();
        Token text = Next();
        return ParseTypedLiteral(keyword, text);
      }
      if (t.IsKeyword("CAST")) {
        Token keyword = Next();
        return ParseCast(keyword);
      }
      if (t.IsKeyword("INTERVAL") &&
          (Peek(1).kind == TokenKind::kString || Peek(1).kind == TokenKind::kInteger || Peek(1).IsSymbol("-"))) {
        Token keyword = Next();
        return ParseInterval(keyword);
      }
      if (t.IsKeyword("CASE")) {
        Token keyword = Next();
        return ParseCase(keyword);
      }
      if (t.IsKeyword("EXTRACT") && Peek(1).IsSymbol("(")) {  // extract(part FROM x): date_part('part', x)
        Token keyword = Next();
        Next();
        auto part = NewNode(ExprKind::kLiteral, Peek());
        part->literal = Scalar{DataType::Utf8(), AsciiLower(ExpectIdentifier("a date part (year, month, day, ...)"))};
        ExpectKeyword("FROM");
        auto node = NewNode(ExprKind::kCall, keyword);
        node->function = "date_part";
        node->args = {part, ParseExpression()};
        ExpectSymbol(")");
        return node;
      }
      // LEFT and RIGHT are reserved (joins) but also DuckDB's string functions.
      if ((t.IsKeyword("LEFT") || t.IsKeyword("RIGHT")) && Peek(1).IsSymbol("(")) return ParseCall(Next());
      if (IsReservedWord(t.text)) break;
      if (t.IsKeyword("EXISTS") && subquery_parser_) {
        Token keyword = Next();
        if (!AtSubquery()) Fail("(SELECT ...) after EXISTS");
        return ParseSubquery(keyword, "exists");
      }
      if (AtClock()) return ParseClock(Next());
      Token name = Next();
      if (Peek().IsSymbol("(")) return ParseCall(name);
      return ParseColumn(name);
    }
    case TokenKind::kEnd: break;
  }
  Fail("an expression");
}

ExprPtr Parser::ParseTypedLiteral(const Token& keyword, const Token& text) {
  auto node = NewNode(ExprKind::kLiteral, keyword);
  if (keyword.IsKeyword("DATE")) {
    auto days = ParseDate(text.value);
    if (!days) FailAt(text, "invalid DATE literal '" + text.value + "' (expected YYYY-MM-DD)");
    node->literal = Scalar{DataType::Date32(), *days};
  } else {
    auto ts = ParseTimestamp(text.value);
    if (!ts)
      FailAt(text, "invalid TIMESTAMP literal '" + text.value + "' (expected YYYY-MM-DD HH:MM:SS[.ffffff])");
    node->literal = Scalar{DataType::Timestamp(ts->unit), ts->value};
  }
  return node;
}

// INTERVAL '3 days' | INTERVAL '3' DAY | INTERVAL 3 DAY (DuckDB's forms, whole numbers):
// interval(3, 'day'), which the binder lets only be added to or subtracted from a date
// or timestamp.
ExprPtr Parser::ParseInterval(const Token& keyword) {
  std::string count, unit;
  const Token& first = Peek();
  if (first.kind == TokenKind::kString) {
    Next();
    std::istringstream words(first.value);
    words >> count >> unit;
    std::string rest;
    if (words >> rest) FailAt(first, "an INTERVAL is a whole number and a unit, as '3 days'");
  } else {
    if (first.IsSymbol("-")) count = Next().text;
    const Token number = Next();
    if (number.kind != TokenKind::kInteger) FailAt(number, "an INTERVAL is a whole number and a unit, as '3 days'");
    count += number.text;
  }
  if (unit.empty()) unit = ExpectIdentifier("an INTERVAL unit (day, hour, month, ...)");
  unit = AsciiLower(unit);
  if (unit.size() > 1 && unit.back() == 's') unit.pop_back();
  if (!FindIntervalUnit(unit)) {
    std::vector<std::string> known;
    for (const auto& u : IntervalUnits()) known.push_back(u.name);
    FailAt(first, fmt::format("unknown INTERVAL unit '{}' (known: {})", unit, fmt::join(known, ", ")));
  }
  int64_t n = 0;
  auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
  if (count.empty() || ec != std::errc() || end != count.data() + count.size())
    FailAt(first, fmt::format("an INTERVAL counts whole {}s, not '{}'", unit, count));
  auto amount = NewNode(ExprKind::kLiteral, first);
  amount->literal = Scalar{DataType::Int64(), n};
  auto name = NewNode(ExprKind::kLiteral, first);
  name->literal = Scalar{DataType::Utf8(), unit};
  auto node = NewNode(ExprKind::kCall, keyword);
  node->function = "interval";
  node->args = {amount, name};
  return node;
}

ExprPtr Parser::ParseCast(const Token& keyword) {
  auto node = NewNode(ExprKind::kCast, keyword);
  ExpectSymbol("(");
  ExprPtr operand = ParseExpression();
  ExpectKeyword("AS");
  node->cast_type = ParseTypeName();
  ExpectSymbol(")");
  node->args = {operand};
  return node;
}

bool Parser::AtClock() const {
  const Token& t = Peek();
  if (t.IsKeyword("CURRENT_DATE") || t.IsKeyword("CURRENT_TIMESTAMP") || t.IsKeyword("LOCALTIMESTAMP")) return true;
  return (t.IsKeyword("NOW") || t.IsKeyword("TODAY") || t.IsKeyword("GET_CURRENT_TIMESTAMP")) && Peek(1).IsSymbol("(");
}

// A call of `now` (a timestamp) or `current_date` (a date) holding the value as its one
// argument: every use in one statement gives the same time, UTC when the statement was
// parsed (DuckDB's transaction time; lancelet's timestamps, as Lance's commit times, are UTC).
ExprPtr Parser::ParseClock(const Token& name) {
  if (ConsumeSymbol("(")) {
    if (!Peek().IsSymbol(")")) FailAt(Peek(), fmt::format("{}() takes no arguments", AsciiLower(name.text)));
    Next();
  }
  if (!clock_micros_)
    clock_micros_ = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch()).count();
  const bool date = name.IsKeyword("CURRENT_DATE") || name.IsKeyword("TODAY");
  auto value = NewNode(ExprKind::kLiteral, name);
  const int64_t micros = *clock_micros_;
  const int64_t days = micros / kMicrosPerDay - (micros % kMicrosPerDay < 0 ? 1 : 0);
  value->literal = date ? Scalar{DataType::Date32(), days}
                        : Scalar{DataType::Timestamp(TimeUnit::kMicro), *clock_micros_};
  auto node = NewNode(ExprKind::kCall, name);
  node->function = date ? "current_date" : "now";
  node->args = {value};
  return node;
}

ExprPtr Parser::ParseCase(const Token& keyword) {
  auto node = NewNode(ExprKind::kCall, keyword);
  node->function = "case";
  ExprPtr operand;
  if (!Peek().IsKeyword("WHEN") && !Peek().IsKeyword("END")) operand = ParseExpression();
  if (!Peek().IsKeyword("WHEN")) Fail("WHEN");
  while (Peek().IsKeyword("WHEN")) {
    Token when = Next();
    ExprPtr condition = ParseExpression();
    if (operand) condition = MakeBinary(BinaryOp::kEq, when, operand, condition);
    ExpectKeyword("THEN");
    node->args.push_back(condition);
    node->args.push_back(ParseExpression());
  }
  if (ConsumeKeyword("ELSE")) node->args.push_back(ParseExpression());
  ExpectKeyword("END");
  return node;
}

ExprPtr Parser::ParseCall(const Token& name) {
  auto node = NewNode(ExprKind::kCall, name);
  node->function = AsciiLower(name.text);
  ExpectSymbol("(");
  if (ConsumeSymbol("*")) {
    node->star_argument = true;
  } else if (!Peek().IsSymbol(")")) {
    node->distinct = ConsumeKeyword("DISTINCT");
    do node->args.push_back(ParseExpression());
    while (ConsumeSymbol(","));
    if (ConsumeKeyword("ORDER")) {  // an aggregate's own order: string_agg(s, ',' ORDER BY s)
      ExpectKeyword("BY");
      auto order = std::make_shared<AggregateOrder>();
      ParseOrderKeys(node->args, order->descending, order->nulls_first);
      node->order = std::move(order);
    }
  }
  ExpectSymbol(")");
  if (Peek().IsKeyword("FILTER") && Peek(1).IsSymbol("(")) {
    Next();
    Next();
    ExpectKeyword("WHERE");
    node->args.push_back(ParseExpression());
    node->has_filter = true;
    ExpectSymbol(")");
    if (Peek().IsKeyword("OVER")) FailAt(Peek(), "FILTER (WHERE ...) on a window function is not supported");
  }
  if (node->order && Peek().IsKeyword("OVER"))
    FailAt(Peek(), "ORDER BY inside a window call's parentheses is not supported; order the window with OVER (ORDER BY ...)");
  if (Peek().IsKeyword("OVER") && Peek(1).IsSymbol("(")) ParseWindow(*node);
  else if (Peek().IsKeyword("OVER") && ((Peek(1).kind == TokenKind::kIdentifier && !IsReservedWord(Peek(1).text)) ||
                                        Peek(1).kind == TokenKind::kQuotedIdentifier))
    FailAt(Peek(1), "a named window (OVER name, WINDOW name AS ...) is not supported; write OVER (...)");
  return node;
}

// y [ASC|DESC] [NULLS FIRST|LAST], ... after ORDER BY: each key onto `keys`.
void Parser::ParseOrderKeys(std::vector<ExprPtr>& keys, std::vector<bool>& descending,
                            std::vector<std::optional<bool>>& nulls_first) {
  do {
    keys.push_back(ParseExpression());
    const bool desc = ConsumeKeyword("DESC");
    if (!desc) ConsumeKeyword("ASC");
    std::optional<bool> first;
    if (ConsumeKeyword("NULLS")) {
      if (ConsumeKeyword("FIRST")) first = true;
      else if (ConsumeKeyword("LAST")) first = false;
      else Fail("FIRST or LAST after NULLS");
    }
    descending.push_back(desc);
    nulls_first.push_back(first);
  } while (ConsumeSymbol(","));
}

// OVER ([PARTITION BY x, ...] [ORDER BY y [ASC|DESC] [NULLS FIRST|LAST], ...] [frame]),
// after a call: its expressions join the call's args (see WindowSpec).
void Parser::ParseWindow(Expr& call) {
  Next();
  ExpectSymbol("(");
  auto spec = std::make_shared<WindowSpec>();
  spec->arguments = call.args.size();
  if (ConsumeKeyword("PARTITION")) {
    ExpectKeyword("BY");
    do call.args.push_back(ParseExpression());
    while (ConsumeSymbol(","));
    spec->partitions = call.args.size() - spec->arguments;
  }
  if (ConsumeKeyword("ORDER")) {
    ExpectKeyword("BY");
    ParseOrderKeys(call.args, spec->descending, spec->nulls_first);
  }
  if (Peek().IsKeyword("ROWS") || Peek().IsKeyword("RANGE")) {
    const Token unit = Next();
    spec->rows = unit.IsKeyword("ROWS");
    spec->explicit_frame = true;
    if (ConsumeKeyword("BETWEEN")) {
      spec->start = ParseFrameBound();
      ExpectKeyword("AND");
      spec->end = ParseFrameBound();
    } else {
      spec->start = ParseFrameBound();
      spec->end = FrameBound{};
    }
    using K = FrameBound::Kind;
    if (spec->start.kind == K::kUnboundedFollowing || spec->end.kind == K::kUnboundedPreceding ||
        int(spec->start.kind) > int(spec->end.kind))
      FailAt(unit, "a window frame starts before it ends (UNBOUNDED PRECEDING, n PRECEDING, CURRENT ROW, "
                   "n FOLLOWING, UNBOUNDED FOLLOWING)");
    if (!spec->rows && (spec->start.kind == K::kPreceding || spec->start.kind == K::kFollowing ||
                        spec->end.kind == K::kPreceding || spec->end.kind == K::kFollowing))
      FailAt(unit, "a RANGE frame's bounds are UNBOUNDED or CURRENT ROW; use ROWS for n PRECEDING / FOLLOWING");
  }
  ExpectSymbol(")");
  call.window = spec;
}

FrameBound Parser::ParseFrameBound() {
  using K = FrameBound::Kind;
  if (ConsumeKeyword("CURRENT")) {
    ExpectKeyword("ROW");
    return {K::kCurrentRow, 0};
  }
  if (ConsumeKeyword("UNBOUNDED")) {
    if (ConsumeKeyword("PRECEDING")) return {K::kUnboundedPreceding, 0};
    ExpectKeyword("FOLLOWING");
    return {K::kUnboundedFollowing, 0};
  }
  const Token count = Next();
  if (count.kind != TokenKind::kInteger) FailAt(count, "a frame bound: UNBOUNDED, CURRENT ROW or a row count");
  int64_t n = 0;
  auto [end, ec] = std::from_chars(count.text.data(), count.text.data() + count.text.size(), n);
  if (ec != std::errc() || end != count.text.data() + count.text.size())
    FailAt(count, "a frame's row count is a whole number up to 2^63 - 1");
  if (ConsumeKeyword("PRECEDING")) return {K::kPreceding, n};
  ExpectKeyword("FOLLOWING");
  return {K::kFollowing, n};
}

ExprPtr Parser::ParseSubquery(const Token& at, const std::string& what) {
  auto node = NewNode(ExprKind::kSubquery, at);
  node->function = what;
  ExpectSymbol("(");
  node->subquery = subquery_parser_();
  ExpectSymbol(")");
  return node;
}

ExprPtr Parser::ParseColumn(const Token& first) {
  auto node = NewNode(ExprKind::kColumn, first);
  node->path.push_back(first.kind == TokenKind::kQuotedIdentifier ? first.value : first.text);
  while (Peek().IsSymbol(".")) {
    Next();
    node->path.push_back(ExpectIdentifier("a field name after '.'"));
  }
  return node;
}

ExprPtr Parser::ParseList(const Token& open) {
  auto node = NewNode(ExprKind::kList, open);
  if (!ConsumeSymbol("]")) {
    do node->args.push_back(ParseExpression());
    while (ConsumeSymbol(","));
    ExpectSymbol("]");
  }
  return node;
}

TypePtr Parser::ParseTypeName() {
  TypePtr type = ParseBaseTypeName();
  // DuckDB's list and array types: T[] is list<T>, T[n] fixed_size_list<T, n>; nested too.
  while (Peek().IsSymbol("[")) {
    const Token open = Next();
    if (ConsumeSymbol("]")) {
      type = DataType::List(Field::Make("item", type));
      continue;
    }
    if (Peek().kind != TokenKind::kInteger) Fail("']' or an array length");
    const Token size = Next();
    ExpectSymbol("]");
    try {
      type = DataType::FixedSizeList(Field::Make("item", type), int32_t(std::stol(size.text)));
    } catch (const std::exception& e) {
      FailAt(size, fmt::format("array length {}: {}", size.text, e.what()));
    }
  }
  return type;
}

TypePtr Parser::ParseBaseTypeName() {
  const Token& first = Peek();
  if (first.kind != TokenKind::kIdentifier) Fail("a type name");
  Token name = Next();
  std::string upper = name.text;
  for (auto& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  auto skip_length = [&] {  // VARCHAR(255), CHAR(10): the length is not enforced
    if (ConsumeSymbol("(")) {
      if (Peek().kind != TokenKind::kInteger) Fail("a length");
      Next();
      ExpectSymbol(")");
    }
  };
  // SQL's names and DuckDB's aliases. INT8 stays lancelet's 8-bit integer (int8), where
  // DuckDB's and PostgreSQL's INT8 is a BIGINT (docs/sql.md).
  if (upper == "INT" || upper == "INTEGER" || upper == "INT4" || upper == "SIGNED") return DataType::Int32();
  if (upper == "BIGINT" || upper == "LONG") return DataType::Int64();
  if (upper == "SMALLINT" || upper == "INT2" || upper == "SHORT") return DataType::Int16();
  if (upper == "TINYINT" || upper == "INT1") return DataType::Int8();
  if (upper == "REAL" || upper == "FLOAT4") return DataType::Float32();
  if (upper == "FLOAT8") return DataType::Float64();
  if (upper == "INTERVAL") return DataType::Duration(TimeUnit::kMicro);
  if (upper == "TIMESTAMPTZ") return DataType::Timestamp(TimeUnit::kMicro, "UTC");
  if (upper == "TIMESTAMP_S") return DataType::Timestamp(TimeUnit::kSecond);
  if (upper == "TIMESTAMP_MS") return DataType::Timestamp(TimeUnit::kMilli);
  if (upper == "TIMESTAMP_NS") return DataType::Timestamp(TimeUnit::kNano);
  if (upper == "TIMESTAMP" && Peek().IsKeyword("WITH")) {  // TIMESTAMP WITH TIME ZONE
    Next();
    ExpectKeyword("TIME");
    ExpectKeyword("ZONE");
    return DataType::Timestamp(TimeUnit::kMicro, "UTC");
  }
  if (upper == "DOUBLE") {
    ConsumeKeyword("PRECISION");
    return DataType::Float64();
  }
  if (upper == "VARCHAR" || upper == "CHAR" || upper == "TEXT" || upper == "STRING") {
    skip_length();
    return DataType::Utf8();
  }
  if (upper == "CHARACTER") {
    ConsumeKeyword("VARYING");
    skip_length();
    return DataType::Utf8();
  }
  if (upper == "BOOLEAN" || upper == "BOOL") return DataType::Bool();
  if (upper == "DATE") return DataType::Date32();
  if (upper == "TIME") return DataType::Time64(TimeUnit::kMicro);
  if (upper == "DECIMAL" || upper == "NUMERIC") {
    // DECIMAL(p[, s]); bare DECIMAL is DuckDB's DECIMAL(18, 3).
    int32_t precision = 18, scale = 3;
    if (ConsumeSymbol("(")) {
      auto number = [&](const char* what) {
        const Token& t = Peek();
        if (t.kind != TokenKind::kInteger) Fail(what);
        Next();
        return int32_t(std::stol(t.text));
      };
      precision = number("a precision");
      scale = ConsumeSymbol(",") ? number("a scale") : 0;
      ExpectSymbol(")");
    }
    try {
      return precision > 38 ? DataType::Decimal256(precision, scale) : DataType::Decimal128(precision, scale);
    } catch (const Error& e) {
      FailAt(name, e.what());
    }
  }
  if (upper == "BYTEA" || upper == "VARBINARY" || upper == "BLOB") return DataType::Binary();
  if (upper == "TIMESTAMP" && !Peek().IsSymbol("<")) return DataType::Timestamp(TimeUnit::kMicro);
  // lancelet's own spelling; a parameterised one runs to the matching '>'.
  size_t begin = size_t(name.position - 1);
  size_t end = begin + name.text.size();
  if (Peek().IsSymbol("<")) {
    int depth = 0;
    do {
      const Token& t = Peek();
      if (t.kind == TokenKind::kEnd) Fail("'>' closing the type");
      if (t.IsSymbol("<")) ++depth;
      if (t.IsSymbol(">")) --depth;
      end = size_t(t.position - 1) + t.text.size();
      Next();
    } while (depth > 0);
  }
  std::string spelling = text_->substr(begin, end - begin);
  try {
    return DataType::Parse(spelling);
  } catch (const Error&) {
    FailAt(name, "unknown type '" + spelling + "'");
  }
}

ExprPtr ParseExpression(const std::string& text) {
  Parser parser(text);
  ExprPtr expr = parser.ParseExpression();
  if (!parser.AtEnd()) parser.Fail("an operator or end of input");
  return expr;
}

}  // namespace lancelet
