// The syntax tree: construction, normalized printing and column discovery.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "array/ascii_case.h"
#include "expr/lexer.h"
#include "expr/temporal.h"
#include "lancelet/expr.h"

namespace lancelet {

namespace {

std::string ParseErrorMessage(const std::string& detail, int position, const std::string& source) {
  std::string out = detail;
  if (position > 0) out += fmt::format(" at position {}", position);
  if (!source.empty()) out += fmt::format(" in \"{}\"", source);
  return EscapeForMessage(out);  // the source and quoted names are user bytes
}

// Binding strength, loosest first; the parser's levels (see parser.h).
enum Precedence : int {
  kPrecOr = 1, kPrecAnd, kPrecNot, kPrecIs, kPrecCompare, kPrecPredicate,
  kPrecConcat, kPrecAdd, kPrecMul, kPrecUnary, kPrecPrimary,
};

int BinaryPrecedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr: return kPrecOr;
    case BinaryOp::kAnd: return kPrecAnd;
    case BinaryOp::kAdd: case BinaryOp::kSub: return kPrecAdd;
    case BinaryOp::kMul: case BinaryOp::kDiv: case BinaryOp::kMod: case BinaryOp::kFloatDiv: case BinaryOp::kIntDiv:
      return kPrecMul;
    default: return kPrecCompare;
  }
}

bool IsNegativeNumber(const Scalar& v) {
  if (auto* i = std::get_if<int64_t>(&v.value)) return *i < 0;
  if (auto* d = std::get_if<double>(&v.value)) return std::signbit(*d);
  return false;
}

int PrecedenceOf(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kLiteral: return IsNegativeNumber(e.literal) ? kPrecUnary : kPrecPrimary;
    case ExprKind::kUnary: return e.unary_op == UnaryOp::kNot ? kPrecNot : kPrecUnary;
    case ExprKind::kBinary: return BinaryPrecedence(e.binary_op);
    case ExprKind::kIsNull: return kPrecIs;
    case ExprKind::kIn: case ExprKind::kBetween: case ExprKind::kLike: return kPrecPredicate;
    case ExprKind::kCall: return e.function == "||" ? kPrecConcat : kPrecPrimary;
    default: return kPrecPrimary;
  }
}

std::string QuoteIdentifier(const std::string& name) {
  bool bare = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
              !IsReservedWord(name);
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') bare = false;
  if (bare) return name;
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string QuoteString(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::string FormatFloat(double v) {
  if (std::isnan(v)) return "CAST('NaN' AS float64)";
  if (std::isinf(v)) return v > 0 ? "CAST('Infinity' AS float64)" : "CAST('-Infinity' AS float64)";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string LiteralToString(const Scalar& v);

// The literal spelled the way the parser would produce it, or empty when its type is not
// one the parser gives literals.
std::string CanonicalLiteral(const Scalar& v) {
  const DataType& t = *v.type;
  switch (t.id()) {
    case TypeId::kBool: return v.as_bool() ? "TRUE" : "FALSE";
    case TypeId::kInt64: return std::to_string(std::get<int64_t>(v.value));
    case TypeId::kUInt64: {
      uint64_t u = std::get<uint64_t>(v.value);
      if (u > uint64_t(INT64_MAX)) return std::to_string(u);
      return {};
    }
    case TypeId::kFloat64: return FormatFloat(std::get<double>(v.value));
    case TypeId::kUtf8: return QuoteString(v.as_string());
    case TypeId::kBinary: {
      std::string out = "X'";
      for (unsigned char c : v.as_string()) out += fmt::format("{:02x}", c);
      return out + "'";
    }
    case TypeId::kDate32: return "DATE '" + FormatDate(std::get<int64_t>(v.value)) + "'";
    case TypeId::kTimestamp: {
      if (!t.timezone().empty()) return {};
      int64_t x = std::get<int64_t>(v.value);
      if (t.unit() == TimeUnit::kNano) return "TIMESTAMP '" + FormatTimestamp(x, TimeUnit::kNano) + "'";
      if (t.unit() != TimeUnit::kMicro) return {};
      if (x % 1000000 == 0) return "TIMESTAMP '" + FormatTimestamp(x / 1000000, TimeUnit::kSecond) + "'";
      return "TIMESTAMP '" + FormatTimestamp(x, TimeUnit::kMicro) + "'";
    }
    case TypeId::kList: {
      std::string out = "[";
      const auto& items = v.as_list();
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += LiteralToString(items[i]);
      }
      return out + "]";
    }
    default: return {};
  }
}

std::string LiteralToString(const Scalar& v) {
  if (v.is_null()) return v.type ? "CAST(NULL AS " + v.type->ToString() + ")" : "NULL";
  std::string canonical = CanonicalLiteral(v);
  if (!canonical.empty()) return canonical;
  // Any other type: print the value in a canonical type and cast it back.
  std::string inner;
  if (auto* i = std::get_if<int64_t>(&v.value)) inner = std::to_string(*i);
  else if (auto* u = std::get_if<uint64_t>(&v.value)) inner = std::to_string(*u);
  else if (auto* d = std::get_if<double>(&v.value)) inner = FormatFloat(*d);
  else if (auto* s = std::get_if<std::string>(&v.value)) inner = QuoteString(*s);
  else if (auto* b = std::get_if<bool>(&v.value)) inner = *b ? "TRUE" : "FALSE";
  else if (auto* l = std::get_if<std::vector<Scalar>>(&v.value)) {
    inner = "[";
    for (size_t i = 0; i < l->size(); ++i) inner += (i ? ", " : "") + LiteralToString((*l)[i]);
    inner += "]";
  }
  return "CAST(" + inner + " AS " + v.type->ToString() + ")";
}

void Print(const Expr& e, std::string* out);

void PrintAtLeast(const Expr& e, int min_precedence, std::string* out) {
  if (PrecedenceOf(e) < min_precedence) {
    *out += "(";
    Print(e, out);
    *out += ")";
  } else {
    Print(e, out);
  }
}

void PrintList(const std::vector<ExprPtr>& items, size_t from, std::string* out) {
  for (size_t i = from; i < items.size(); ++i) {
    if (i > from) *out += ", ";
    Print(*items[i], out);
  }
}

void Print(const Expr& e, std::string* out);

std::string FrameBoundText(const FrameBound& b) {
  switch (b.kind) {
    case FrameBound::Kind::kUnboundedPreceding: return "UNBOUNDED PRECEDING";
    case FrameBound::Kind::kPreceding: return std::to_string(b.offset) + " PRECEDING";
    case FrameBound::Kind::kCurrentRow: return "CURRENT ROW";
    case FrameBound::Kind::kFollowing: return std::to_string(b.offset) + " FOLLOWING";
    case FrameBound::Kind::kUnboundedFollowing: return "UNBOUNDED FOLLOWING";
  }
  return "";
}

// The arguments of a window call, then ") OVER (...)".
void PrintWindow(const Expr& e, std::string* out) {
  const WindowSpec& w = *e.window;
  for (size_t i = 0; i < w.arguments; ++i) {
    if (i) *out += ", ";
    Print(*e.args[i], out);
  }
  *out += ") OVER (";
  std::string spec;
  const size_t order_from = w.arguments + w.partitions;
  for (size_t i = w.arguments; i < order_from; ++i) {
    spec += i == w.arguments ? "PARTITION BY " : ", ";
    Print(*e.args[i], &spec);
  }
  for (size_t i = order_from; i < e.args.size(); ++i) {
    spec += i == order_from ? (spec.empty() ? "ORDER BY " : " ORDER BY ") : ", ";
    Print(*e.args[i], &spec);
    const size_t k = i - order_from;
    if (w.descending[k]) spec += " DESC";
    if (w.nulls_first[k]) spec += *w.nulls_first[k] ? " NULLS FIRST" : " NULLS LAST";
  }
  if (w.explicit_frame) {
    spec += spec.empty() ? "" : " ";
    spec += fmt::format("{} BETWEEN {} AND {}", w.rows ? "ROWS" : "RANGE", FrameBoundText(w.start), FrameBoundText(w.end));
  }
  *out += spec + ")";
}

// A function call, with the syntax of the calls SQL spells otherwise: INTERVAL, CASE,
// the || operator, and window calls.
void PrintCall(const Expr& e, std::string* out) {
  if (e.function == "interval" && e.args.size() == 2 && e.args[0]->kind == ExprKind::kLiteral &&
      e.args[1]->kind == ExprKind::kLiteral && !e.args[1]->literal.is_null()) {
    std::string unit = e.args[1]->literal.as_string();
    for (auto& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
    *out += "INTERVAL ";
    Print(*e.args[0], out);
    *out += " " + unit;
    return;
  }
  if (e.function == "case") {
    *out += "CASE";
    for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
      *out += " WHEN ";
      Print(*e.args[k], out);
      *out += " THEN ";
      Print(*e.args[k + 1], out);
    }
    if (e.args.size() % 2) {
      *out += " ELSE ";
      Print(*e.args.back(), out);
    }
    *out += " END";
    return;
  }
  if ((e.function == "now" || e.function == "current_date") && e.args.size() == 1 &&
      e.args[0]->kind == ExprKind::kLiteral) {  // the parser's clock calls, as they were written
    *out += e.function == "now" ? "now()" : "current_date";
    return;
  }
  if (e.function == "||") {  // the concatenation operator, printed infix
    PrintAtLeast(*e.args[0], kPrecConcat, out);
    *out += " || ";
    PrintAtLeast(*e.args[1], kPrecConcat + 1, out);
    return;
  }
  *out += e.function + "(";
  if (e.star_argument) *out += "*";
  if (e.distinct) *out += "DISTINCT ";
  if (e.window) {
    PrintWindow(e, out);
    return;
  }
  const size_t keys = e.order ? e.order->descending.size() : 0;
  const size_t arguments = e.args.size() - keys - (e.has_filter ? 1 : 0);
  PrintList({e.args.begin(), e.args.begin() + arguments}, 0, out);
  for (size_t k = 0; k < keys; ++k) {
    *out += k ? ", " : " ORDER BY ";
    Print(*e.args[arguments + k], out);
    if (e.order->descending[k]) *out += " DESC";
    if (e.order->nulls_first[k]) *out += *e.order->nulls_first[k] ? " NULLS FIRST" : " NULLS LAST";
  }
  *out += ")";
  if (e.has_filter) {
    *out += " FILTER (WHERE ";
    Print(*e.args.back(), out);
    *out += ")";
  }
}

void Print(const Expr& e, std::string* out) {
  switch (e.kind) {
    case ExprKind::kLiteral: *out += LiteralToString(e.literal); return;
    case ExprKind::kColumn:
      for (size_t i = 0; i < e.path.size(); ++i) {
        if (i) *out += ".";
        *out += QuoteIdentifier(e.path[i]);
      }
      return;
    case ExprKind::kList:
      *out += "[";
      PrintList(e.args, 0, out);
      *out += "]";
      return;
    case ExprKind::kUnary:
      if (e.unary_op == UnaryOp::kNot) {
        *out += "NOT ";
        PrintAtLeast(*e.args[0], kPrecNot, out);
      } else {
        std::string operand;
        PrintAtLeast(*e.args[0], kPrecUnary, &operand);
        *out += operand[0] == '-' ? "-(" + operand + ")" : "-" + operand;
      }
      return;
    case ExprKind::kBinary: {
      int p = BinaryPrecedence(e.binary_op);
      PrintAtLeast(*e.args[0], p, out);
      *out += " ";
      *out += BinaryOpSymbol(e.binary_op);
      *out += " ";
      PrintAtLeast(*e.args[1], p + 1, out);
      return;
    }
    case ExprKind::kIsNull:
      PrintAtLeast(*e.args[0], kPrecCompare, out);
      *out += e.negated ? " IS NOT NULL" : " IS NULL";
      return;
    case ExprKind::kIn:
      PrintAtLeast(*e.args[0], kPrecAdd, out);
      *out += e.negated ? " NOT IN (" : " IN (";
      PrintList(e.args, 1, out);
      *out += ")";
      return;
    case ExprKind::kBetween:
      PrintAtLeast(*e.args[0], kPrecAdd, out);
      *out += e.negated ? " NOT BETWEEN " : " BETWEEN ";
      PrintAtLeast(*e.args[1], kPrecAdd, out);
      *out += " AND ";
      PrintAtLeast(*e.args[2], kPrecAdd, out);
      return;
    case ExprKind::kLike:
      PrintAtLeast(*e.args[0], kPrecAdd, out);
      *out += e.negated ? " NOT " : " ";
      *out += e.case_insensitive ? "ILIKE " : "LIKE ";
      PrintAtLeast(*e.args[1], kPrecAdd, out);
      if (e.escape) *out += " ESCAPE " + QuoteString(*e.escape);
      return;
    case ExprKind::kCast:
      *out += "CAST(";
      Print(*e.args[0], out);
      *out += " AS " + e.cast_type->ToString() + ")";
      return;
    case ExprKind::kCall:
      PrintCall(e, out);
      return;
    case ExprKind::kSubquery:  // the statement's text is the SQL layer's
      *out += e.function == "exists" ? "EXISTS (SELECT ...)" : "(SELECT ...)";
      return;
  }
}

void CollectColumns(const Expr& e, std::vector<std::string>* out) {
  if (e.kind == ExprKind::kColumn) {
    std::string name;
    for (size_t i = 0; i < e.path.size(); ++i) name += (i ? "." : "") + e.path[i];
    if (std::find(out->begin(), out->end(), name) == out->end()) out->push_back(std::move(name));
  }
  for (const auto& a : e.args) CollectColumns(*a, out);
}

}  // namespace

ParseError::ParseError(std::string detail, int position, std::string source)
    : Error(ErrorKind::kInvalidArgument, ParseErrorMessage(detail, position, source)),
      detail_(std::move(detail)),
      position_(position),
      source_(std::move(source)) {}

const char* BinaryOpSymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr: return "OR";
    case BinaryOp::kAnd: return "AND";
    case BinaryOp::kEq: return "=";
    case BinaryOp::kNe: return "<>";
    case BinaryOp::kLt: return "<";
    case BinaryOp::kLe: return "<=";
    case BinaryOp::kGt: return ">";
    case BinaryOp::kGe: return ">=";
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kFloatDiv: return "/";
    case BinaryOp::kIntDiv: return "//";
  }
  return "?";
}

bool IsComparison(BinaryOp op) { return op >= BinaryOp::kEq && op <= BinaryOp::kGe; }
bool IsArithmetic(BinaryOp op) { return op >= BinaryOp::kAdd; }

ExprPtr Expr::Literal(Scalar value) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kLiteral;
  e->literal = std::move(value);
  return e;
}

ExprPtr Expr::Column(std::string name) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kColumn;
  e->path = {std::move(name)};
  return e;
}

ExprPtr Expr::Unary(UnaryOp op, ExprPtr operand) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kUnary;
  e->unary_op = op;
  e->args = {std::move(operand)};
  return e;
}

ExprPtr Expr::Binary(BinaryOp op, ExprPtr left, ExprPtr right) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kBinary;
  e->binary_op = op;
  e->args = {std::move(left), std::move(right)};
  return e;
}

ExprPtr Expr::Call(std::string function, std::vector<ExprPtr> args) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kCall;
  e->function = AsciiLower(std::move(function));
  e->args = std::move(args);
  return e;
}

ExprPtr Expr::Cast(ExprPtr operand, TypePtr type) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kCast;
  e->cast_type = std::move(type);
  e->args = {std::move(operand)};
  return e;
}

ExprPtr Expr::Assign(ExprPtr operand, TypePtr type, std::string column) {
  auto e = std::make_shared<Expr>(*Cast(std::move(operand), std::move(type)));
  e->assign_to = std::move(column);
  return e;
}

std::string ToString(const Expr& expr) {
  std::string out;
  Print(expr, &out);
  return out;
}

std::vector<std::string> ReferencedColumns(const Expr& expr) {
  std::vector<std::string> out;
  CollectColumns(expr, &out);
  return out;
}

}  // namespace lancelet
