#include <gtest/gtest.h>

#include "expr/lexer.h"
#include "expr/parser.h"
#include "expr_test_util.h"

namespace lancelet {
namespace {

using expr_test::ErrorOf;

// A fully parenthesised prefix rendering that shows the tree's shape.
std::string Tree(const Expr& e) {
  auto args = [&](size_t from) {
    std::string out;
    for (size_t i = from; i < e.args.size(); ++i) out += " " + Tree(*e.args[i]);
    return out;
  };
  switch (e.kind) {
    case ExprKind::kLiteral: return ToString(e);
    case ExprKind::kColumn: return ToString(e);
    case ExprKind::kList: return "(list" + args(0) + ")";
    case ExprKind::kUnary: return std::string(e.unary_op == UnaryOp::kNot ? "(NOT" : "(neg") + args(0) + ")";
    case ExprKind::kBinary: return std::string("(") + BinaryOpSymbol(e.binary_op) + args(0) + ")";
    case ExprKind::kIn: return std::string(e.negated ? "(NOT-IN" : "(IN") + args(0) + ")";
    case ExprKind::kBetween: return std::string(e.negated ? "(NOT-BETWEEN" : "(BETWEEN") + args(0) + ")";
    case ExprKind::kIsNull: return std::string(e.negated ? "(IS-NOT-NULL" : "(IS-NULL") + args(0) + ")";
    case ExprKind::kLike:
      return std::string("(") + (e.negated ? "NOT-" : "") + (e.case_insensitive ? "ILIKE" : "LIKE") + args(0) +
             (e.escape ? " esc=" + *e.escape : "") + ")";
    case ExprKind::kCast: return "(CAST" + args(0) + " " + e.cast_type->ToString() + ")";
    case ExprKind::kCall: return "(" + e.function + "()" + args(0) + ")";
    case ExprKind::kSubquery: return "(subquery " + e.function + ")";
  }
  return "?";
}

std::string T(const std::string& text) { return Tree(*ParseExpression(text)); }
std::string Norm(const std::string& text) { return ToString(*ParseExpression(text)); }

TEST(ExprLexer, TokensCarryPositions) {
  auto tokens = Tokenize("a >= 'it''s' -- comment\n AND \"Col\"\"x\" <> X'0aFF'");
  ASSERT_EQ(tokens.size(), 8u);
  EXPECT_EQ(tokens[0].text, "a");
  EXPECT_EQ(tokens[0].position, 1);
  EXPECT_TRUE(tokens[1].IsSymbol(">="));
  EXPECT_EQ(tokens[1].position, 3);
  EXPECT_EQ(tokens[2].kind, TokenKind::kString);
  EXPECT_EQ(tokens[2].value, "it's");
  EXPECT_EQ(tokens[2].position, 6);
  EXPECT_TRUE(tokens[3].IsKeyword("AND"));
  EXPECT_EQ(tokens[4].kind, TokenKind::kQuotedIdentifier);
  EXPECT_EQ(tokens[4].value, "Col\"x");
  EXPECT_TRUE(tokens[5].IsSymbol("<>"));
  EXPECT_EQ(tokens[6].kind, TokenKind::kBlob);
  EXPECT_EQ(tokens[6].value, std::string("\x0a\xff", 2));
  EXPECT_EQ(tokens[7].kind, TokenKind::kEnd);
  EXPECT_EQ(tokens[7].position, 49);
}

TEST(ExprLexer, Numbers) {
  auto tokens = Tokenize("1 1.5 .5 1e3 2E-2 7.");
  EXPECT_EQ(tokens[0].kind, TokenKind::kInteger);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(tokens[size_t(i)].kind, TokenKind::kFloat) << i;
}

TEST(ExprLexer, Errors) {
  EXPECT_EQ(ErrorOf([] { Tokenize("name = 'abc"); }), "unterminated string literal at position 8 in \"name = 'abc\"");
  EXPECT_EQ(ErrorOf([] { Tokenize("a # b"); }), "unexpected character '#' at position 3 in \"a # b\"");
  EXPECT_EQ(ErrorOf([] { Tokenize("X'abc'"); }),
            "binary literal needs an even number of hex digits at position 1 in \"X'abc'\"");
  EXPECT_EQ(ErrorOf([] { Tokenize("12abc"); }), "malformed number at position 1 in \"12abc\"");
}

TEST(ExprParser, Literals) {
  auto lit = [](const std::string& text) { return ParseExpression(text)->literal; };
  EXPECT_TRUE(lit("42").Equals(Scalar{DataType::Int64(), int64_t(42)}));
  EXPECT_TRUE(lit("-9223372036854775808").Equals(Scalar{DataType::Int64(), INT64_MIN}));
  EXPECT_TRUE(lit("9223372036854775808").Equals(Scalar{DataType::UInt64(), uint64_t(1) << 63}));
  EXPECT_TRUE(lit("18446744073709551615").Equals(Scalar{DataType::UInt64(), UINT64_MAX}));
  EXPECT_TRUE(lit("1.5").Equals(Scalar{DataType::Float64(), 1.5}));
  EXPECT_TRUE(lit("-2.5e3").Equals(Scalar{DataType::Float64(), -2500.0}));
  EXPECT_TRUE(lit("'it''s'").Equals(Scalar{DataType::Utf8(), std::string("it's")}));
  EXPECT_TRUE(lit("x'00ff'").Equals(Scalar{DataType::Binary(), std::string("\x00\xff", 2)}));
  EXPECT_TRUE(lit("true").Equals(Scalar{DataType::Bool(), true}));
  EXPECT_TRUE(lit("FALSE").Equals(Scalar{DataType::Bool(), false}));
  EXPECT_TRUE(lit("null").is_null());
  EXPECT_EQ(lit("NULL").type, nullptr);
  EXPECT_TRUE(lit("DATE '2024-01-02'").Equals(Scalar{DataType::Date32(), int64_t(19724)}));
  EXPECT_TRUE(lit("TIMESTAMP '2024-01-02 03:04:05.123456'")
                  .Equals(Scalar{DataType::Timestamp(TimeUnit::kMicro), int64_t(1704164645123456)}));
  EXPECT_TRUE(lit("timestamp '1970-01-01T00:00:00.000000001'")
                  .Equals(Scalar{DataType::Timestamp(TimeUnit::kNano), int64_t(1)}));
  EXPECT_TRUE(lit("TIMESTAMP '1970-01-01 01:00:00+01:00'")
                  .Equals(Scalar{DataType::Timestamp(TimeUnit::kMicro), int64_t(0)}));
  EXPECT_EQ(T("[0.1, -0.2]"), "(list 0.1 -0.2)");
  EXPECT_EQ(T("[]"), "(list)");
}

TEST(ExprParser, LiteralErrors) {
  EXPECT_EQ(ErrorOf([] { ParseExpression("18446744073709551616"); }),
            "integer literal 18446744073709551616 is out of range at position 1 in \"18446744073709551616\"");
  EXPECT_EQ(ErrorOf([] { ParseExpression("d > DATE '2024-02-30'"); }),
            "invalid DATE literal '2024-02-30' (expected YYYY-MM-DD) at position 10 in \"d > DATE '2024-02-30'\"");
  EXPECT_EQ(ErrorOf([] { ParseExpression("TIMESTAMP 'noon'"); }),
            "invalid TIMESTAMP literal 'noon' (expected YYYY-MM-DD HH:MM:SS[.ffffff]) at position 11 in "
            "\"TIMESTAMP 'noon'\"");
}

TEST(ExprParser, Identifiers) {
  EXPECT_EQ(ParseExpression("abc")->path, (std::vector<std::string>{"abc"}));
  EXPECT_EQ(ParseExpression("\"Weird Name\"")->path, (std::vector<std::string>{"Weird Name"}));
  EXPECT_EQ(ParseExpression("a.b.\"C d\"")->path, (std::vector<std::string>{"a", "b", "C d"}));
  EXPECT_EQ(ParseExpression("\"order\"")->path, (std::vector<std::string>{"order"}));
  // DATE and TIMESTAMP are column names unless a string follows.
  EXPECT_EQ(T("date = DATE '2024-01-01'"), "(= date DATE '2024-01-01')");
  EXPECT_EQ(T("_rowid < 10"), "(< _rowid 10)");
}

TEST(ExprParser, Precedence) {
  EXPECT_EQ(T("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(T("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(T("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(T("a / b % c"), "(% (/ a b) c)");
  EXPECT_EQ(T("(a + b) * c"), "(* (+ a b) c)");
  EXPECT_EQ(T("-a * b"), "(* (neg a) b)");
  EXPECT_EQ(T("- -a"), "(neg (neg a))");
  EXPECT_EQ(T("a OR b AND c"), "(OR a (AND b c))");
  EXPECT_EQ(T("a AND b OR c AND d"), "(OR (AND a b) (AND c d))");
  EXPECT_EQ(T("NOT a = b"), "(NOT (= a b))");
  EXPECT_EQ(T("NOT a AND b"), "(AND (NOT a) b)");
  EXPECT_EQ(T("NOT NOT a"), "(NOT (NOT a))");
  EXPECT_EQ(T("a = 1 OR NOT b < 2 AND c"), "(OR (= a 1) (AND (NOT (< b 2)) c))");
  EXPECT_EQ(T("a + 1 > b * 2"), "(> (+ a 1) (* b 2))");
  EXPECT_EQ(T("a = b IS NULL"), "(IS-NULL (= a b))");
  EXPECT_EQ(T("NOT a IS NOT NULL"), "(NOT (IS-NOT-NULL a))");
  EXPECT_EQ(T("a + 1 IN (1, 2) = TRUE"), "(= (IN (+ a 1) 1 2) TRUE)");
  EXPECT_EQ(T("a BETWEEN 1 AND 2 AND b"), "(AND (BETWEEN a 1 2) b)");
  EXPECT_EQ(T("a BETWEEN b + 1 AND c * 2"), "(BETWEEN a (+ b 1) (* c 2))");
}

TEST(ExprParser, Predicates) {
  EXPECT_EQ(T("id IN (1, 2, 3)"), "(IN id 1 2 3)");
  EXPECT_EQ(T("id not in ('a')"), "(NOT-IN id 'a')");
  EXPECT_EQ(T("x NOT BETWEEN 1 AND 5"), "(NOT-BETWEEN x 1 5)");
  EXPECT_EQ(T("x is null"), "(IS-NULL x)");
  EXPECT_EQ(T("x IS NOT NULL"), "(IS-NOT-NULL x)");
  EXPECT_EQ(T("s LIKE 'a%'"), "(LIKE s 'a%')");
  EXPECT_EQ(T("s NOT LIKE 'a!%' ESCAPE '!'"), "(NOT-LIKE s 'a!%' esc=!)");
  EXPECT_EQ(T("s ILIKE '%X'"), "(ILIKE s '%X')");
  EXPECT_EQ(T("a <> b"), "(<> a b)");
  EXPECT_EQ(T("a != b"), "(<> a b)");
  EXPECT_EQ(T("a <= b"), "(<= a b)");
  EXPECT_EQ(T("a >= b"), "(>= a b)");
}

TEST(ExprParser, SubqueriesNeedTheStatementParser) {
  // With a subquery parser (here: one that takes SELECT and one number), the three forms.
  auto parse = [](const std::string& text) {
    Parser p(text);
    p.set_subquery_parser([&p] {
      p.ExpectKeyword("SELECT");
      p.Next();
      return std::shared_ptr<const void>(std::make_shared<int>(7));
    });
    ExprPtr e = p.ParseExpression();
    p.ExpectEnd();
    return e;
  };
  EXPECT_EQ(Tree(*parse("x IN (SELECT 1) AND NOT EXISTS (SELECT 2)")), "(AND (IN x (subquery in)) (NOT (subquery exists)))");
  ExprPtr scalar = parse("(SELECT 3) + 1");
  EXPECT_EQ(Tree(*scalar), "(+ (subquery ) 1)");
  EXPECT_EQ(*static_cast<const int*>(scalar->args[0]->subquery.get()), 7);
  EXPECT_EQ(ToString(*scalar), "(SELECT ...) + 1");
  // Without one, a SELECT is no expression, and exists(...) is an ordinary call.
  EXPECT_NE(ErrorOf([] { ParseExpression("(SELECT 1)"); }).find("expected an expression"), std::string::npos);
  EXPECT_EQ(T("exists(a)"), "(exists() a)");
}

TEST(ExprParser, CastAndCalls) {
  EXPECT_EQ(T("CAST(a AS INT)"), "(CAST a int32)");
  EXPECT_EQ(T("cast(a as integer)"), "(CAST a int32)");
  EXPECT_EQ(T("CAST(a AS BIGINT)"), "(CAST a int64)");
  EXPECT_EQ(T("CAST(a AS SMALLINT)"), "(CAST a int16)");
  EXPECT_EQ(T("CAST(a AS TINYINT)"), "(CAST a int8)");
  EXPECT_EQ(T("CAST(a AS FLOAT)"), "(CAST a float32)");
  EXPECT_EQ(T("CAST(a AS REAL)"), "(CAST a float32)");
  EXPECT_EQ(T("CAST(a AS DOUBLE)"), "(CAST a float64)");
  EXPECT_EQ(T("CAST(a AS DOUBLE PRECISION)"), "(CAST a float64)");
  EXPECT_EQ(T("CAST(a AS VARCHAR(10))"), "(CAST a utf8)");
  EXPECT_EQ(T("CAST(a AS STRING)"), "(CAST a utf8)");
  EXPECT_EQ(T("CAST(a AS TEXT)"), "(CAST a utf8)");
  EXPECT_EQ(T("CAST(a AS BOOLEAN)"), "(CAST a bool)");
  EXPECT_EQ(T("CAST(a AS DATE)"), "(CAST a date32)");
  EXPECT_EQ(T("CAST(a AS TIMESTAMP)"), "(CAST a timestamp<us>)");
  EXPECT_EQ(T("CAST(a AS uint16)"), "(CAST a uint16)");
  EXPECT_EQ(T("CAST(a AS float32)"), "(CAST a float32)");
  EXPECT_EQ(T("CAST(a AS utf8)"), "(CAST a utf8)");
  EXPECT_EQ(T("CAST(a AS timestamp<ms>)"), "(CAST a timestamp<ms>)");
  EXPECT_EQ(T("CAST(v AS fixed_size_list<float32,2>) = [1, 2]"),
            "(= (CAST v fixed_size_list<float32,2>) (list 1 2))");
  EXPECT_EQ(T("abs(-x)"), "(abs() (neg x))");
  EXPECT_EQ(T("COALESCE(a, b, 0)"), "(coalesce() a b 0)");
  EXPECT_EQ(T("round(x, 2)"), "(round() x 2)");
  EXPECT_EQ(T("pi()"), "(pi())");
  // now() and current_date hold the statement's time, and print as they were written.
  EXPECT_EQ(T("now()").rfind("(now() TIMESTAMP '", 0), 0u);
  EXPECT_EQ(T("CURRENT_DATE").rfind("(current_date() DATE '", 0), 0u);
  EXPECT_EQ(Norm("current_timestamp > ts"), "now() > ts");
  EXPECT_EQ(Norm("today()"), "current_date");
  auto count = ParseExpression("count(*)");
  EXPECT_TRUE(count->star_argument);
  EXPECT_TRUE(ParseExpression("count(DISTINCT a)")->distinct);
}

// x[i] is list_element(x, i); x[a:b] is list_slice(x, a, b), an omitted a the first item
// (1), an omitted b the last (-1).
TEST(ExprParser, ListIndexAndSlice) {
  EXPECT_EQ(T("xs[2]"), "(list_element() xs 2)");
  EXPECT_EQ(T("xs[2:3]"), "(list_slice() xs 2 3)");
  EXPECT_EQ(T("xs[:3]"), "(list_slice() xs 1 3)");
  EXPECT_EQ(T("xs[-2:]"), "(list_slice() xs -2 -1)");
  EXPECT_EQ(T("xs[:]"), "(list_slice() xs 1 -1)");
  EXPECT_EQ(T("xs[i + 1:i::int64]"), "(list_slice() xs (+ i 1) (CAST i int64))");
  EXPECT_EQ(T("xs[1][2:3]"), "(list_slice() (list_element() xs 1) 2 3)");
  EXPECT_EQ(ErrorOf([] { ParseExpression("xs[1:2:3]"); }), "expected ']' at position 7 in \"xs[1:2:3]\"");
}

TEST(ExprParser, KeywordsAreCaseInsensitive) {
  EXPECT_EQ(T("a iS nOt NuLl oR b BeTwEeN 1 aNd 2"), "(OR (IS-NOT-NULL a) (BETWEEN b 1 2))");
}

TEST(ExprParser, ErrorsNamePositions) {
  EXPECT_EQ(ErrorOf([] { ParseExpression("id IN (1, 2"); }), "expected ')' at position 12 in \"id IN (1, 2\"");
  EXPECT_EQ(ErrorOf([] { ParseExpression("a = "); }), "expected an expression at position 5 in \"a = \"");
  EXPECT_EQ(ErrorOf([] { ParseExpression("a b"); }),
            "expected an operator or end of input at position 3 in \"a b\"");
  EXPECT_EQ(ErrorOf([] { ParseExpression("x BETWEEN 1 OR 2"); }),
            "expected AND at position 13 in \"x BETWEEN 1 OR 2\"");
  EXPECT_EQ(ErrorOf([] { ParseExpression("CAST(x AS nosuch)"); }),
            "unknown type 'nosuch' at position 11 in \"CAST(x AS nosuch)\"");
  EXPECT_EQ(ErrorOf([] { ParseExpression("x IS 5"); }), "expected NULL at position 6 in \"x IS 5\"");
  EXPECT_EQ(ErrorOf([] { ParseExpression("s LIKE 'a' ESCAPE 'ab'"); }),
            "expected a one-character string after ESCAPE at position 19 in \"s LIKE 'a' ESCAPE 'ab'\"");
  EXPECT_EQ(ErrorOf([] { ParseExpression("select"); }), "expected an expression at position 1 in \"select\"");
  try {
    ParseExpression("(a + )");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.position(), 6);
    EXPECT_EQ(e.detail(), "expected an expression");
    EXPECT_EQ(e.source(), "(a + )");
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

TEST(ExprParser, StopsAtTokensThatCannotContinue) {
  std::string sql = "a + 1 AS x, b FROM t WHERE c = 2 ORDER BY d";
  Parser p(sql);
  EXPECT_EQ(Tree(*p.ParseExpression()), "(+ a 1)");
  p.ExpectKeyword("AS");
  EXPECT_EQ(p.ExpectIdentifier(), "x");
  p.ExpectSymbol(",");
  EXPECT_EQ(Tree(*p.ParseExpression()), "b");
  p.ExpectKeyword("FROM");
  EXPECT_EQ(p.ExpectIdentifier(), "t");
  p.ExpectKeyword("WHERE");
  auto where = p.ParseExpression();
  EXPECT_EQ(Tree(*where), "(= c 2)");
  EXPECT_EQ(where->position, 30);
  EXPECT_TRUE(p.Peek().IsKeyword("ORDER"));
  // Positions stay relative to the whole statement.
  EXPECT_EQ(where->args[1]->position, 32);
  EXPECT_EQ(*where->source, sql);
}

TEST(ExprParser, DrivenFromATokenStream) {
  auto text = std::make_shared<const std::string>("x IN (1), y");
  Parser p(text, Tokenize(*text), 0);
  EXPECT_EQ(Tree(*p.ParseExpression()), "(IN x 1)");
  EXPECT_TRUE(p.ConsumeSymbol(","));
  EXPECT_EQ(Tree(*p.ParseExpression()), "y");
  EXPECT_TRUE(p.AtEnd());
}

TEST(ExprToString, Normalizes) {
  EXPECT_EQ(Norm("a+b*c"), "a + b * c");
  EXPECT_EQ(Norm("(a+b)*c"), "(a + b) * c");
  EXPECT_EQ(Norm("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(Norm("((a))"), "a");
  EXPECT_EQ(Norm("not (a = 1) and (b or c)"), "NOT a = 1 AND (b OR c)");
  EXPECT_EQ(Norm("a in (1,2) and b not between 1 and 2"), "a IN (1, 2) AND b NOT BETWEEN 1 AND 2");
  EXPECT_EQ(Norm("s like 'x%' escape '!'"), "s LIKE 'x%' ESCAPE '!'");
  EXPECT_EQ(Norm("\"my col\" = 'it''s'"), "\"my col\" = 'it''s'");
  EXPECT_EQ(Norm("\"order\".\"Select\" is not null"), "\"order\".\"Select\" IS NOT NULL");
  EXPECT_EQ(Norm("cast(x as int) + 1.0"), "CAST(x AS int32) + 1.0");
  EXPECT_EQ(Norm("a - -5"), "a - -5");
  EXPECT_EQ(Norm("-(-5)"), "-(-5)");
  EXPECT_EQ(Norm("DATE '2024-01-02'"), "DATE '2024-01-02'");
  EXPECT_EQ(Norm("TIMESTAMP '2024-01-02 03:04:05'"), "TIMESTAMP '2024-01-02 03:04:05'");
  EXPECT_EQ(Norm("TIMESTAMP '2024-01-02T03:04:05.5'"), "TIMESTAMP '2024-01-02 03:04:05.500000'");
  EXPECT_EQ(Norm("x'0AfF'"), "X'0aff'");
  EXPECT_EQ(Norm("[1, 2.5]"), "[1, 2.5]");
  EXPECT_EQ(Norm("Lower(s)"), "lower(s)");
  EXPECT_EQ(Norm("null is null"), "NULL IS NULL");
  EXPECT_EQ(Norm("1e20"), "1e+20");
  EXPECT_EQ(Norm("d + INTERVAL '3 Days'"), "d + INTERVAL 3 DAY");
  EXPECT_EQ(Norm("d - interval 2 hours"), "d - INTERVAL 2 HOUR");
}

TEST(ExprToString, WindowCalls) {
  EXPECT_EQ(Norm("sum(x) over (partition by g, h order by d desc nulls last, e rows between 2 preceding and current row)"),
            "sum(x) OVER (PARTITION BY g, h ORDER BY d DESC NULLS LAST, e ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)");
  EXPECT_EQ(Norm("row_number() OVER ()"), "row_number() OVER ()");
  EXPECT_EQ(Norm("rank() over (order by x range unbounded preceding) + 1"),
            "rank() OVER (ORDER BY x RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) + 1");
  EXPECT_EQ(Norm("lag(x, 2, 0) OVER (ORDER BY t ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)"),
            "lag(x, 2, 0) OVER (ORDER BY t ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)");
  // The window's expressions follow the call's arguments, so rewrites of args reach them.
  const ExprPtr e = ParseExpression("lag(x, 1) OVER (PARTITION BY g ORDER BY t DESC)");
  ASSERT_TRUE(e->window);
  EXPECT_EQ(e->window->arguments, 2u);
  EXPECT_EQ(e->window->partitions, 1u);
  EXPECT_EQ(e->args.size(), 4u);
  EXPECT_EQ(e->window->descending, std::vector<bool>{true});
  EXPECT_EQ(ReferencedColumns(*e), (std::vector<std::string>{"x", "g", "t"}));
  EXPECT_EQ(ErrorOf([] { ParseExpression("sum(x) OVER (ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW)"); }),
            "a window frame starts before it ends (UNBOUNDED PRECEDING, n PRECEDING, CURRENT ROW, n FOLLOWING, "
            "UNBOUNDED FOLLOWING) at position 14 in \"sum(x) OVER (ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW)\"");
  EXPECT_EQ(ErrorOf([] { ParseExpression("sum(x) OVER (ORDER BY y NULLS MIDDLE)"); }),
            "expected FIRST or LAST after NULLS at position 31 in \"sum(x) OVER (ORDER BY y NULLS MIDDLE)\"");
}

TEST(ExprToString, RoundTrips) {
  for (const char* text : {"a + b * c - d / e % f", "NOT (a OR b) AND c", "x BETWEEN -1 AND 2 + 3",
                           "CAST(a AS timestamp<ns>) > TIMESTAMP '2024-01-01 00:00:00.000000001'",
                           "s NOT ILIKE 'a\\_%'", "coalesce(a.b, 1) IN (1, NULL)", "(a = b) = (c = d)",
                           "-(a + 1)", "18446744073709551615 > u", "d - INTERVAL '3 days' < INTERVAL -1 month + d"}) {
    std::string once = Norm(text);
    EXPECT_EQ(Norm(once), once) << text;
    EXPECT_EQ(T(once), T(text)) << text;
  }
}

TEST(ExprColumns, ReferencedColumns) {
  EXPECT_EQ(ReferencedColumns(*ParseExpression("a + b > a AND s.x IS NULL OR lower(\"C\") = 'x'")),
            (std::vector<std::string>{"a", "b", "s.x", "C"}));
  EXPECT_TRUE(ReferencedColumns(*ParseExpression("1 + 2")).empty());
}

}  // namespace
}  // namespace lancelet
