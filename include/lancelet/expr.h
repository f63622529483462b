// Scalar expressions and predicates: a SQL-syntax parser, a binder that resolves columns
// and types against a schema, and a vectorized evaluator over record batches.
//
//   ExprPtr e = ParseExpression("price * 2 > 10 AND name LIKE 'a%'");
//   BoundExprPtr b = Bind(*e, *batch->schema());
//   std::vector<bool> keep = EvaluatePredicate(*b, *batch);
//
// Semantics (chosen to follow SQL, and DataFusion where SQL leaves a choice):
// - Three-valued logic: NULL AND FALSE = FALSE, NULL OR TRUE = TRUE, NOT NULL = NULL,
//   comparisons with NULL give NULL, `x IN (...)` gives NULL when nothing matches and x
//   or a list item is NULL. EvaluatePredicate keeps only TRUE rows.
// - Literals: integers are int64 (uint64 above int64's range), decimals and exponents are
//   float64, 'text' is utf8, X'0aff' is binary, DATE '...' is date32, TIMESTAMP '...' is
//   timestamp<us> (timestamp<ns> when written with more than 6 fraction digits), and
//   [a, b] is a list (a vector literal). A bare NULL takes the type its context needs.
// - Numeric comparisons are exact across widths and signedness (uint64 max > int64 -1,
//   2^53 + 1 > 2^53 as float64). A float64 literal compared with a float32 expression is
//   first rounded to float32 (so `f32 = 0.1` matches the stored 0.1f).
// - NaN is equal to itself and greater than every other value (a total order, as in
//   PostgreSQL and in DataFusion's sort order); -0.0 equals 0.0.
// - Strings and binary compare bytewise; utf8 literals compare with binary columns.
// - Temporal values compare as instants: a DATE literal against a timestamp column means
//   midnight; units are converted exactly (to the finer unit). A string literal compared
//   with a date/timestamp column is parsed as one.
// - Arithmetic: int op int gives the wider type (mixed signedness: a signed type wider
//   than the unsigned operand, at most int64); anything with a float gives float64
//   (float32 op float32 stays float32). Integer overflow raises InvalidArgument. Integer
//   `/` truncates toward zero and `%` takes the dividend's sign; integer division or
//   modulo by zero raises InvalidArgument "division by zero" (rows where either side is
//   NULL never raise). Float division follows IEEE 754 (x / 0.0 is +-inf or NaN).
// - LIKE: % matches any run of characters, _ one character (one UTF-8 code point for
//   utf8, one byte for binary); the escape character is backslash unless ESCAPE 'c' names
//   another. ILIKE folds ASCII letters only.
// - CAST: float to integer rounds half away from zero (CAST(2.5 AS int32) = 3, as in
//   DuckDB and PostgreSQL); out-of-range values, NaN and unparsable strings raise
//   InvalidArgument naming the value and the target type.
// - Assignment (Expr::Assign: SET, INSERT, MERGE) converts only exactly (CanAssign in
//   expr/cast.h) and names the column: "column 'qty': cannot assign 1.5 to int32 (not an
//   integer)".
// - Functions: abs, lower, upper (ASCII), length / char_length (code points; bytes for
//   binary), octet_length, coalesce, round(x [, digits]) (half away from zero).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lancelet/error.h"
#include "lancelet/record_batch.h"
#include "lancelet/scalar.h"

namespace lancelet {

// An InvalidArgument error that points at a character of the expression text, so that a
// caller can draw a caret under it. what() is one line:
//   expected ')' at position 12 in "id IN (1, 2"
class ParseError : public Error {
 public:
  // `position` is the 1-based column (in bytes) in `source` (0: unknown; then the message
  // carries no position). `source` may be empty when the expression was built in code.
  ParseError(std::string detail, int position, std::string source);
  int position() const { return position_; }
  const std::string& detail() const { return detail_; }
  const std::string& source() const { return source_; }

 private:
  std::string detail_;
  int position_;
  std::string source_;
};

// ---------------------------------------------------------------------------------------
// Syntax tree

enum class ExprKind : uint8_t {
  kLiteral,  // literal
  kColumn,   // path
  kList,     // [args...]: a vector literal
  kUnary,    // unary_op args[0]
  kBinary,   // args[0] binary_op args[1]
  kIn,       // args[0] [NOT] IN (args[1..])
  kBetween,  // args[0] [NOT] BETWEEN args[1] AND args[2]
  kIsNull,   // args[0] IS [NOT] NULL
  kLike,     // args[0] [NOT] LIKE|ILIKE args[1] [ESCAPE escape]
  kCast,     // CAST(args[0] AS cast_type)
  kCall,     // function(args...)
  kSubquery, // (SELECT ...), EXISTS (SELECT ...), or IN's list x IN (SELECT ...): only
             // the SQL layer parses them (Parser::set_subquery_parser), and it puts
             // their values in place before binding
};

enum class UnaryOp : uint8_t { kNot, kNegate };
// Division: kDiv is `/` in an expression of the API (the reference's filters and SET
// values, as DataFusion: integers divide as integers). In SQL, as in DuckDB, `/` is
// kFloatDiv (integers divide as float64: 7 / 2 = 3.5) and `//` is kIntDiv (7 // 2 = 3),
// both bound to kDiv over the types they imply, so only parsed expressions hold them.
enum class BinaryOp : uint8_t { kOr, kAnd, kEq, kNe, kLt, kLe, kGt, kGe, kAdd, kSub, kMul, kDiv, kMod, kFloatDiv, kIntDiv };

const char* BinaryOpSymbol(BinaryOp op);  // "OR", "=", "<>", "+" ...
bool IsComparison(BinaryOp op);
bool IsArithmetic(BinaryOp op);

// One end of a window frame: UNBOUNDED PRECEDING, n PRECEDING, CURRENT ROW, n FOLLOWING
// or UNBOUNDED FOLLOWING.
struct FrameBound {
  enum class Kind : uint8_t { kUnboundedPreceding, kPreceding, kCurrentRow, kFollowing, kUnboundedFollowing };
  Kind kind = Kind::kCurrentRow;
  int64_t offset = 0;  // kPreceding / kFollowing
};

// The OVER (...) of a window function call, which only the SQL layer evaluates. Its
// expressions are the call node's args after the function's own arguments (arguments,
// then PARTITION BY, then ORDER BY), so that every rewrite of args reaches them.
struct WindowSpec {
  size_t arguments = 0;   // args[0, arguments): the function's arguments
  size_t partitions = 0;  // then the PARTITION BY expressions; the rest are ORDER BY's
  std::vector<bool> descending;                 // per ORDER BY expression
  std::vector<std::optional<bool>> nulls_first; // per ORDER BY expression; default as ORDER BY
  // The frame: ROWS counts rows, RANGE counts peers (rows equal under ORDER BY). Without
  // an explicit frame: the whole partition without ORDER BY, else RANGE BETWEEN
  // UNBOUNDED PRECEDING AND CURRENT ROW.
  bool rows = false;
  bool explicit_frame = false;
  FrameBound start{FrameBound::Kind::kUnboundedPreceding, 0};
  FrameBound end{FrameBound::Kind::kCurrentRow, 0};
};

// An aggregate's ORDER BY inside its parentheses (string_agg(s, ',' ORDER BY s DESC)),
// for the SQL layer: the call's keys are the `descending.size()` args after its arguments
// (before FILTER's condition), each with a direction and, when given, where NULLs go.
struct AggregateOrder {
  std::vector<bool> descending;
  std::vector<std::optional<bool>> nulls_first;
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  // 1-based character column of the construct in `source` (for operators: the operator
  // token), 0 when the node was built in code.
  int position = 0;
  std::shared_ptr<const std::string> source;

  Scalar literal;                  // kLiteral; an untyped NULL has a null type
  std::vector<std::string> path;   // kColumn: column name, then struct field names
  UnaryOp unary_op = UnaryOp::kNot;
  BinaryOp binary_op = BinaryOp::kEq;
  std::vector<ExprPtr> args;
  bool negated = false;            // NOT IN, NOT BETWEEN, IS NOT NULL, NOT LIKE
  bool case_insensitive = false;   // ILIKE
  std::optional<std::string> escape;  // LIKE ... ESCAPE 'c'
  TypePtr cast_type;               // kCast
  std::string assign_to;           // kCast: the column of an assignment cast, else empty
  std::string function;            // kCall, lower-cased
  bool star_argument = false;      // kCall: f(*), for the SQL layer's count(*)
  bool distinct = false;           // kCall: f(DISTINCT x), for the SQL layer
  // kCall: f(x) FILTER (WHERE c), for the SQL layer's aggregates. c is the last of args,
  // so that whatever walks a tree's arguments (columns read, qualifiers, subqueries) sees it.
  bool has_filter = false;
  // kSubquery: the SQL layer's parsed SELECT, and what it stands for: "" (its one value),
  // "exists" (whether it has rows) or "in" (its values, as IN's list).
  std::shared_ptr<const void> subquery;
  // kCall: OVER (...) makes the call a window function (see WindowSpec).
  std::shared_ptr<const WindowSpec> window;
  // kCall: f(x ORDER BY k), the aggregate's own order (see AggregateOrder).
  std::shared_ptr<const AggregateOrder> order;

  // Builders for code that makes expressions without text.
  static ExprPtr Literal(Scalar value);
  static ExprPtr Column(std::string name);
  static ExprPtr Unary(UnaryOp op, ExprPtr operand);
  static ExprPtr Binary(BinaryOp op, ExprPtr left, ExprPtr right);
  static ExprPtr Call(std::string function, std::vector<ExprPtr> args);
  static ExprPtr Cast(ExprPtr operand, TypePtr type);
  // The value stored into `column` of type `type`: a cast that converts only exactly.
  static ExprPtr Assign(ExprPtr operand, TypePtr type, std::string column);
};

// Parses one whole expression; anything after it is an error. Throws ParseError.
ExprPtr ParseExpression(const std::string& text);

// Normalized SQL text: upper-case keywords, minimal parentheses, identifiers quoted only
// when needed, literals in re-parsable form. ParseExpression(ToString(e)) gives an equal
// tree (apart from positions).
std::string ToString(const Expr& expr);

// The columns an expression reads, as written (struct paths joined with '.'), each once,
// in order of first appearance.
std::vector<std::string> ReferencedColumns(const Expr& expr);

// ---------------------------------------------------------------------------------------
// Bound expressions

enum class BoundKind : uint8_t {
  kLiteral, kColumn, kNot, kNegate, kLogical, kCompare, kArithmetic,
  kIn, kBetween, kIsNull, kLike, kCast, kCall,
};

struct BoundExpr;
using BoundExprPtr = std::shared_ptr<const BoundExpr>;

// An expression resolved against a schema: every node knows its result type and every
// implicit conversion is an explicit kCast node. Evaluate() runs it.
struct BoundExpr {
  BoundKind kind = BoundKind::kLiteral;
  TypePtr type;
  ExprPtr origin;  // the syntax node, for error messages

  Scalar literal;             // kLiteral
  std::string column_name;    // kColumn: top-level field name (looked up again per batch
  int column_index = -1;      //   when the batch's field at column_index has another name)
  std::vector<int> child_path;  // kColumn: struct child indices below the top-level field
  BinaryOp op = BinaryOp::kEq;  // kLogical (kAnd/kOr), kCompare, kArithmetic
  // Operands as in Expr, except: kIn holds [x, x = item1, x = item2, ...] and kBetween
  // [x, x >= low, x <= high], where each comparison reads the shared node x (evaluated
  // once per batch); a comparison may wrap x in a kCast.
  std::vector<BoundExprPtr> args;
  bool negated = false;
  bool case_insensitive = false;
  char escape = '\\';         // kLike; '\0' means no escape character
  std::string function;       // kCall
  std::string assign_to;      // kCast: the column of an assignment cast, else empty
};

// Resolves columns (exact name first, then a unique case-insensitive match; "a.b" walks
// into struct a, or names a top-level field literally called "a.b"), infers types and
// inserts conversions. Pseudo-columns such as _rowid are ordinary schema fields to the
// binder. Throws ParseError (InvalidArgument) naming the position on unknown columns,
// type mismatches and unknown functions.
BoundExprPtr Bind(const Expr& expr, const Schema& schema);
// As Bind, but an unknown column's error lists the columns of `known` (a table's whole
// schema, when `schema` holds only the columns a scan reads).
BoundExprPtr Bind(const Expr& expr, const Schema& schema, const Schema& known);

// Evaluates over a batch; the result has batch->num_rows() elements of bound.type.
ArrayPtr Evaluate(const BoundExpr& bound, const RecordBatch& batch);

// Evaluates a boolean expression to keep flags (NULL counts as false).
std::vector<bool> EvaluatePredicate(const BoundExpr& bound, const RecordBatch& batch);
// The same as the ascending indices of the rows it keeps: what a scan filters by.
std::vector<int64_t> EvaluateSelection(const BoundExpr& bound, const RecordBatch& batch);

// Evaluates an expression that reads no columns (INSERT ... VALUES). With `target`, the
// value is cast to that type (a NULL becomes a NULL of that type).
Scalar EvaluateConstant(const Expr& expr, const TypePtr& target = nullptr);

}  // namespace lancelet
