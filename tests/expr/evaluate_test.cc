// Arithmetic, LIKE, CAST, functions and constant evaluation.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "expr_test_util.h"

namespace lancelet {
namespace {

using namespace expr_test;
using OI = std::optional<int64_t>;
using OU = std::optional<uint64_t>;
using OD = std::optional<double>;
using OS = std::optional<const char*>;

RecordBatchPtr Numbers() {
  auto i32 = DataType::Int32();
  auto i64 = DataType::Int64();
  auto u8 = DataType::UInt8();
  auto f64 = DataType::Float64();
  auto f32 = DataType::Float32();
  return MakeBatch({Col("a", i32, Values(i32, std::vector<OI>{7, -7, 0, std::nullopt})),
                    Col("b", i32, Values(i32, std::vector<OI>{2, 2, 5, 1})),
                    Col("big", i64, Values(i64, std::vector<OI>{INT64_MAX, INT64_MIN, 1, 0})),
                    Col("u", u8, Values(u8, std::vector<OU>{250, 0, 1, 2})),
                    Col("f", f64, Values(f64, std::vector<OD>{1.5, -2.5, 0.0, NAN})),
                    Col("g", f32, Values(f32, std::vector<OD>{0.5, 1.0, 2.0, 4.0}))});
}

TEST(ExprArithmetic, Integers) {
  auto batch = Numbers();
  EXPECT_EQ(Eval("a + b", *batch), "int32: 9, -5, 5, NULL");
  EXPECT_EQ(Eval("a - b * 2", *batch), "int64: 3, -11, -10, NULL");  // 2 is an int64 literal
  EXPECT_EQ(Eval("a - b * b", *batch), "int32: 3, -11, -25, NULL");
  EXPECT_EQ(Eval("a / b", *batch), "int32: 3, -3, 0, NULL");  // truncates toward zero
  EXPECT_EQ(Eval("a % b", *batch), "int32: 1, -1, 0, NULL");  // sign of the dividend
  EXPECT_EQ(Eval("a + 1", *batch), "int64: 8, -6, 1, NULL");
  EXPECT_EQ(Eval("-a", *batch), "int32: -7, 7, 0, NULL");
  EXPECT_EQ(Eval("u - u", *batch), "uint8: 0, 0, 0, 0");
}

// A literal divisor takes libdivide's multiply-and-shift path; a column divisor the
// hardware divide. Both must agree on every value, the extremes and negatives included,
// and truncate toward zero with the remainder taking the dividend's sign.
TEST(ExprArithmetic, DivisionByALiteralAgreesWithTheHardwareDivide) {
  auto i64 = DataType::Int64();
  auto i32 = DataType::Int32();
  std::vector<OI> xs = {INT64_MAX, INT64_MIN, INT64_MIN + 1, -1, 0, 1, 99, 100, 101, -99, -100, -101, 123456789012345,
                        -123456789012345, std::nullopt};
  std::vector<OI> xs32 = {INT32_MAX, INT32_MIN, -1, 0, 1, 99, -100, -101, 7, -7, 1 << 20, -(1 << 20), 3, -3, 5};
  for (int64_t d : std::vector<int64_t>{1, 2, 3, 7, 10, 100, 641, -2, -7, -100, int64_t(1) << 40, INT64_MAX, INT64_MIN + 1}) {
    std::vector<OI> ds(xs.size(), d), ds32(xs32.size(), std::clamp<int64_t>(d, INT32_MIN + 1, INT32_MAX));
    auto batch = MakeBatch({Col("x", i64, Values(i64, xs)), Col("d", i64, Values(i64, ds)),
                            Col("y", i32, Values(i32, xs32)), Col("e", i32, Values(i32, ds32))});
    const std::string literal = std::to_string(d), literal32 = std::to_string(ds32[0].value());
    EXPECT_EQ(Eval("x / " + literal, *batch), Eval("x / d", *batch)) << d;
    EXPECT_EQ(Eval("x % " + literal, *batch), Eval("x % d", *batch)) << d;
    EXPECT_EQ(Eval("y / CAST(" + literal32 + " AS INT)", *batch), Eval("y / e", *batch)) << d;
    EXPECT_EQ(Eval("y % CAST(" + literal32 + " AS INT)", *batch), Eval("y % e", *batch)) << d;
  }
  auto batch = MakeBatch({Col("x", i64, Values(i64, std::vector<OI>{-7, 7, -100, INT64_MIN}))});
  EXPECT_EQ(Eval("x % 3", *batch), "int64: -1, 1, -1, -2");
  EXPECT_EQ(Eval("x / -3", *batch), "int64: 2, -2, 33, 3074457345618258602");
}

TEST(ExprArithmetic, MixedTypes) {
  auto batch = Numbers();
  EXPECT_EQ(Eval("u + a", *batch), "int32: 257, -7, 1, NULL");
  EXPECT_EQ(Eval("a * 1.5", *batch), "float64: 10.5, -10.5, 0, NULL");
  EXPECT_EQ(Eval("a / 2.0", *batch), "float64: 3.5, -3.5, 0, NULL");
  EXPECT_EQ(Eval("g * g", *batch), "float32: 0.25, 1, 4, 16");
  EXPECT_EQ(Eval("f / 0", *batch), "float64: inf, -inf, NaN, NaN");
  EXPECT_EQ(Eval("-f", *batch), "float64: -1.5, 2.5, -0, NaN");
  EXPECT_EQ(Eval("-u", *batch), "int64: -250, 0, -1, -2");
  EXPECT_EQ(Eval("f % 1", *batch), "float64: 0.5, -0.5, 0, NaN");
}

TEST(ExprArithmetic, OverflowAndDivisionByZeroRaise) {
  auto batch = Numbers();
  EXPECT_EQ(ErrorOf([&] { Eval("big + 1", *batch); }),
            "int64 overflow: 9223372036854775807 + 1 at position 5 in \"big + 1\"");
  EXPECT_EQ(ErrorOf([&] { Eval("big * 2", *batch); }),
            "int64 overflow: 9223372036854775807 * 2 at position 5 in \"big * 2\"");
  EXPECT_EQ(ErrorOf([&] { Eval("-big", *batch); }),
            "int64 overflow: 0 - -9223372036854775808 at position 1 in \"-big\"");
  EXPECT_EQ(ErrorOf([&] { Eval("big / -1", *batch); }),
            "int64 overflow: -9223372036854775808 / -1 at position 5 in \"big / -1\"");
  EXPECT_EQ(ErrorOf([&] { Eval("u + u", *batch); }), "uint8 overflow: 250 + 250 at position 3 in \"u + u\"");
  EXPECT_EQ(ErrorOf([&] { Eval("u - 1", *batch); }) , "no error");  // int64 arithmetic
  EXPECT_EQ(ErrorOf([&] { Eval("b / (a - a)", *batch); }), "division by zero at position 3 in \"b / (a - a)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("b % 0", *batch); }), "division by zero at position 3 in \"b % 0\"");
  // The NULL row of `a` divides by zero but never raises.
  EXPECT_EQ(Eval("b / (a - 0 * b)", *MakeBatch({Col("a", DataType::Int32(),
                                                  Values(DataType::Int32(), std::vector<OI>{1, std::nullopt})),
                                              Col("b", DataType::Int32(),
                                                  Values(DataType::Int32(), std::vector<OI>{4, 4}))})),
            "int64: 4, NULL");
  auto zeros = MakeBatch({Col("a", DataType::Int32(), Values(DataType::Int32(), std::vector<OI>{std::nullopt}))});
  EXPECT_EQ(Eval("10 / a", *zeros), "int64: NULL");
}

TEST(ExprLike, Patterns) {
  auto s = DataType::Utf8();
  auto batch = MakeBatch({Col("s", s, Values(s, std::vector<OS>{"apple", "Apple pie", "a_b", "a%b", "\xc3\xa9t\xc3\xa9",
                                                                   "", std::nullopt}))});
  EXPECT_EQ(Eval("s LIKE 'a%'", *batch), "bool: true, false, true, true, false, false, NULL");
  EXPECT_EQ(Eval("s LIKE '%e'", *batch), "bool: true, true, false, false, false, false, NULL");
  EXPECT_EQ(Eval("s LIKE '%p%'", *batch), "bool: true, true, false, false, false, false, NULL");
  EXPECT_EQ(Eval("s LIKE 'a_b'", *batch), "bool: false, false, true, true, false, false, NULL");
  EXPECT_EQ(Eval("s LIKE 'a\\_b'", *batch), "bool: false, false, true, false, false, false, NULL");
  EXPECT_EQ(Eval("s LIKE 'a!%b' ESCAPE '!'", *batch), "bool: false, false, false, true, false, false, NULL");
  EXPECT_EQ(Eval("s LIKE '_t_'", *batch), "bool: false, false, false, false, true, false, NULL");  // _ is a character
  EXPECT_EQ(Eval("s LIKE '%'", *batch), "bool: true, true, true, true, true, true, NULL");
  EXPECT_EQ(Eval("s LIKE ''", *batch), "bool: false, false, false, false, false, true, NULL");
  EXPECT_EQ(Eval("s NOT LIKE 'a%'", *batch), "bool: false, true, false, false, true, true, NULL");
  EXPECT_EQ(Eval("s ILIKE 'APPLE%'", *batch), "bool: true, true, false, false, false, false, NULL");
  EXPECT_EQ(Eval("s LIKE '%p%p%e'", *batch), "bool: true, true, false, false, false, false, NULL");
  EXPECT_EQ(Eval("s LIKE NULL", *batch), "bool: NULL, NULL, NULL, NULL, NULL, NULL, NULL");
  EXPECT_EQ(Eval("s LIKE s", *batch), "bool: true, true, true, true, true, true, NULL");
  EXPECT_EQ(ErrorOf([&] { Eval("s LIKE 'a\\'", *batch); }),
            "LIKE pattern 'a\\' ends with the escape character at position 3 in \"s LIKE 'a\\'\"");
}

TEST(ExprCast, Conversions) {
  auto batch = Numbers();
  EXPECT_EQ(Eval("CAST(f AS INT)", *MakeBatch({Col("f", DataType::Float64(),
                                                   Values(DataType::Float64(), std::vector<OD>{1.9, -1.9, 0.5}))})),
            "int32: 2, -2, 0");
  EXPECT_EQ(Eval("CAST(a AS VARCHAR)", *batch), "utf8: '7', '-7', '0', NULL");
  EXPECT_EQ(Eval("CAST(g AS STRING)", *batch), "utf8: '0.5', '1.0', '2.0', '4.0'");
  EXPECT_EQ(Eval("CAST(f AS TEXT)", *batch), "utf8: '1.5', '-2.5', '0.0', 'nan'");
  EXPECT_EQ(Eval("CAST(a AS BOOLEAN)", *batch), "bool: true, true, false, NULL");
  EXPECT_EQ(Eval("CAST(a AS TINYINT)", *batch), "int8: 7, -7, 0, NULL");
  EXPECT_EQ(Eval("CAST(u AS float32)", *batch), "float32: 250, 0, 1, 2");
  EXPECT_EQ(Eval("CAST('42' AS BIGINT) + a", *batch), "int64: 49, 35, 42, NULL");
  EXPECT_EQ(Eval("CAST(' -3 ' AS INTEGER)", *batch), "int32: -3, -3, -3, -3");
  EXPECT_EQ(Eval("CAST('1e3' AS DOUBLE)", *batch), "float64: 1000, 1000, 1000, 1000");
  EXPECT_EQ(Eval("CAST('yes' AS BOOLEAN)", *batch), "bool: true, true, true, true");
  EXPECT_EQ(Eval("CAST(NULL AS INT)", *batch), "int32: NULL, NULL, NULL, NULL");
  EXPECT_EQ(Eval("CAST(DATE '2024-01-02' AS TIMESTAMP)", *batch).substr(0, 31), "timestamp<us>: 1704153600000000");
  EXPECT_EQ(Eval("CAST(TIMESTAMP '2024-01-02 03:04:05.5' AS VARCHAR)", *batch).substr(0, 29),
            "utf8: '2024-01-02 03:04:05.5'");
  EXPECT_EQ(Eval("CAST(TIMESTAMP '2024-01-02 03:04:05' AS VARCHAR)", *batch).substr(0, 27),
            "utf8: '2024-01-02 03:04:05'");
  EXPECT_EQ(Eval("CAST(TIMESTAMP '1960-01-02 03:04:05.00012' AS VARCHAR)", *batch).substr(0, 33),
            "utf8: '1960-01-02 03:04:05.00012'");
  EXPECT_EQ(Eval("CAST('2024-01-02' AS DATE)", *batch), "date32: 19724, 19724, 19724, 19724");
  EXPECT_EQ(Eval("CAST(TIMESTAMP '1969-12-31 23:59:59' AS DATE)", *batch), "date32: -1, -1, -1, -1");
}

// CAST of a float rounds half to even, as DuckDB and PostgreSQL round a DOUBLE, for
// literals (folded by the binder) and columns (the array path) alike.
TEST(ExprCast, FloatToIntegerRoundsHalfToEven) {
  auto batch = Numbers();
  EXPECT_EQ(Eval("CAST(2.5 AS INT)", *batch), "int32: 2, 2, 2, 2");
  EXPECT_EQ(Eval("CAST(-3.5 AS INT)", *batch), "int32: -4, -4, -4, -4");
  EXPECT_EQ(Eval("CAST(2.4999 AS BIGINT)", *batch), "int64: 2, 2, 2, 2");
  auto f = MakeBatch({Col("f", DataType::Float64(),
                          Values(DataType::Float64(), std::vector<OD>{2.5, -2.5, 0.49, -0.5, 127.5}))});
  EXPECT_EQ(Eval("CAST(f AS INT)", *f), "int32: 2, -2, 0, 0, 128");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST(f AS TINYINT)", *f); }),
            "cannot cast 127.5 to int8 (out of range) at position 1 in \"CAST(f AS TINYINT)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST(2147483647.5 AS INT)", *batch); }),
            "cannot cast 2147483647.5 to int32 (out of range) at position 6 in \"CAST(2147483647.5 AS INT)\"");
}

// Assignment casts (SET, INSERT, MERGE) convert only exactly and name the column.
TEST(ExprAssign, ExactConversionsOnly) {
  auto batch = Numbers();
  auto assign = [&](const std::string& text, const TypePtr& type) {
    ArrayPtr out = Evaluate(*Bind(*Expr::Assign(ParseExpression(text), type, "c"), *batch->schema()), *batch);
    return out->type->ToString() + ": " + Render(*out);
  };
  EXPECT_EQ(assign("a", DataType::Int8()), "int8: 7, -7, 0, NULL");
  EXPECT_EQ(assign("a", DataType::Float32()), "float32: 7, -7, 0, NULL");
  EXPECT_EQ(assign("3.0", DataType::Int32()), "int32: 3, 3, 3, 3");
  EXPECT_EQ(assign("'2024-01-02'", DataType::Date32()), "date32: 19724, 19724, 19724, 19724");
  EXPECT_EQ(assign("a", DataType::Utf8()), "utf8: '7', '-7', '0', NULL");
  EXPECT_EQ(ErrorOf([&] { assign("1.5", DataType::Int32()); }),
            "column 'c': cannot assign 1.5 to int32 (not an integer) at position 1 in \"1.5\"");
  EXPECT_EQ(ErrorOf([&] { assign("'yes'", DataType::Bool()); }),
            "column 'c': cannot assign 'yes' (utf8) to bool at position 1 in \"'yes'\"");
  EXPECT_EQ(ErrorOf([&] { assign("300", DataType::Int8()); }),
            "column 'c': cannot cast 300 to int8 (out of range) at position 1 in \"300\"");
  EXPECT_EQ(ErrorOf([&] { assign("g", DataType::Int32()); }),
            "column 'c': cannot assign 0.5 to int32 (not an integer) at position 1 in \"g\"");
  EXPECT_EQ(ErrorOf([&] { assign("CAST(a AS VARCHAR)", DataType::Int64()); }),
            "column 'c': cannot assign utf8 to int64 at position 1 in \"CAST(a AS VARCHAR)\"");
  EXPECT_EQ(ErrorOf([&] { assign("TIMESTAMP '2024-01-02 10:00:00'", DataType::Date32()); }),
            "column 'c': cannot assign 2024-01-02T10:00:00.000000 to date32 (not exact) at position 1 in "
            "\"TIMESTAMP '2024-01-02 10:00:00'\"");
}

TEST(ExprCast, Failures) {
  auto batch = Numbers();
  EXPECT_EQ(ErrorOf([&] { Eval("CAST('abc' AS INT)", *batch); }),
            "cannot cast 'abc' to int32 at position 6 in \"CAST('abc' AS INT)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST('1.5' AS INT)", *batch); }),
            "cannot cast '1.5' to int32 at position 6 in \"CAST('1.5' AS INT)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST(u AS TINYINT)", *batch); }),
            "cannot cast 250 to int8 (out of range) at position 1 in \"CAST(u AS TINYINT)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST(big AS INT)", *batch); }),
            "cannot cast 9223372036854775807 to int32 (out of range) at position 1 in \"CAST(big AS INT)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST(f AS BIGINT)", *batch); }),
            "cannot cast NaN to int64 at position 1 in \"CAST(f AS BIGINT)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST(a AS uint32)", *batch); }),
            "cannot cast -7 to uint32 (out of range) at position 1 in \"CAST(a AS uint32)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST(1e300 AS REAL)", *batch); }),
            "cannot cast 1e+300 to float32 (out of range) at position 6 in \"CAST(1e300 AS REAL)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST('99999999999999999999' AS BIGINT)", *batch); }),
            "cannot cast '99999999999999999999' to int64 (out of range) at position 6 in "
            "\"CAST('99999999999999999999' AS BIGINT)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST('maybe' AS BOOLEAN)", *batch); }),
            "cannot cast 'maybe' to bool at position 6 in \"CAST('maybe' AS BOOLEAN)\"");
  EXPECT_EQ(ErrorOf([&] { Eval("CAST('2024-13-01' AS DATE)", *batch); }),
            "cannot cast '2024-13-01' to date32 at position 6 in \"CAST('2024-13-01' AS DATE)\"");
}

TEST(ExprFunctions, Builtins) {
  auto s = DataType::Utf8();
  auto batch = MakeBatch({Col("s", s, Values(s, std::vector<OS>{"MiXed", "\xc3\xa9t\xc3\xa9", std::nullopt})),
                          Col("x", DataType::Int32(), Values(DataType::Int32(), std::vector<OI>{-5, 15, std::nullopt})),
                          Col("f", DataType::Float64(), Values(DataType::Float64(), std::vector<OD>{2.5, -2.5, 1.25}))});
  EXPECT_EQ(Eval("lower(s)", *batch), "utf8: 'mixed', '\xc3\xa9t\xc3\xa9', NULL");
  EXPECT_EQ(Eval("UPPER(s)", *batch), "utf8: 'MIXED', '\xc3\x89T\xc3\x89', NULL");
  EXPECT_EQ(Eval("length(s)", *batch), "int64: 5, 3, NULL");
  EXPECT_EQ(Eval("octet_length(s)", *batch), "int64: 5, 5, NULL");
  EXPECT_EQ(Eval("abs(x)", *batch), "int32: 5, 15, NULL");
  EXPECT_EQ(Eval("abs(f)", *batch), "float64: 2.5, 2.5, 1.25");
  EXPECT_EQ(Eval("coalesce(x, 0)", *batch), "int64: -5, 15, 0");
  EXPECT_EQ(Eval("coalesce(s, 'none')", *batch), "utf8: 'MiXed', '\xc3\xa9t\xc3\xa9', 'none'");
  EXPECT_EQ(Eval("coalesce(NULL, NULL)", *batch), "bool: NULL, NULL, NULL");
  EXPECT_EQ(Eval("round(f)", *batch), "float64: 3, -3, 1");
  EXPECT_EQ(Eval("round(f, 1)", *batch), "float64: 2.5, -2.5, 1.3");
  EXPECT_EQ(Eval("round(x, -1)", *batch), "int32: -10, 20, NULL");
  EXPECT_EQ(ErrorOf([&] { Eval("abs(CAST(-128 AS TINYINT))", *batch); }),
            "int8 overflow: abs(-128) at position 1 in \"abs(CAST(-128 AS TINYINT))\"");
}

TEST(ExprConstant, EvaluatesLiteralExpressions) {
  EXPECT_TRUE(EvaluateConstant(*ParseExpression("1 + 2 * 3")).Equals(Scalar{DataType::Int64(), int64_t(7)}));
  EXPECT_TRUE(EvaluateConstant(*ParseExpression("'a'")).Equals(Scalar{DataType::Utf8(), std::string("a")}));
  EXPECT_TRUE(EvaluateConstant(*ParseExpression("-1.5")).Equals(Scalar{DataType::Float64(), -1.5}));
  EXPECT_TRUE(EvaluateConstant(*ParseExpression("NULL"), DataType::Utf8()).Equals(Scalar::Null(DataType::Utf8())));
  EXPECT_EQ(EvaluateConstant(*ParseExpression("NULL"), DataType::Utf8()).type->ToString(), "utf8");
  EXPECT_TRUE(EvaluateConstant(*ParseExpression("7"), DataType::Int16()).Equals(Scalar{DataType::Int16(), int64_t(7)}));
  auto vec = EvaluateConstant(*ParseExpression("[0.5, 1]"), DataType::FixedSizeList(DataType::Float32(), 2));
  EXPECT_EQ(vec.type->ToString(), "fixed_size_list<float32,2>");
  EXPECT_EQ(RenderScalar(vec), "[0.5, 1]");
  EXPECT_TRUE(EvaluateConstant(*ParseExpression("DATE '2024-01-02'"), DataType::Timestamp(TimeUnit::kSecond))
                  .Equals(Scalar{DataType::Timestamp(TimeUnit::kSecond), int64_t(1704153600)}));
  EXPECT_TRUE(EvaluateConstant(*ParseExpression("upper('x') = 'X' AND 1 < 2"))
                  .Equals(Scalar{DataType::Bool(), true}));
  EXPECT_EQ(ErrorOf([] { EvaluateConstant(*ParseExpression("300"), DataType::Int8()); }),
            "cannot cast 300 to int8 (out of range) at position 1 in \"300\"");
  EXPECT_EQ(ErrorOf([] { EvaluateConstant(*ParseExpression("a + 1")); }),
            "expected a constant, but the expression reads column 'a' at position 3 in \"a + 1\"");
  EXPECT_EQ(ErrorOf([] { EvaluateConstant(*ParseExpression("1 / 0")); }),
            "division by zero at position 3 in \"1 / 0\"");
}

TEST(ExprEvaluate, LiteralOnlyExpressionsFillTheBatch) {
  auto batch = Numbers();
  EXPECT_EQ(Eval("1 + 1", *batch), "int64: 2, 2, 2, 2");
  EXPECT_EQ(Eval("TRUE", *batch), "bool: true, true, true, true");
}

}  // namespace
}  // namespace lancelet

namespace lancelet {
namespace {

using namespace expr_test;

TEST(ExprEvaluate, EmptyBatch) {
  auto t = DataType::Int32();
  auto batch = MakeBatch({Col("x", t, {})});
  EXPECT_EQ(Eval("x + 1 > 2 AND x IN (1, 2)", *batch), "bool: ");
  EXPECT_EQ(Eval("'a'", *batch), "utf8: ");
}

TEST(ExprEvaluate, LargeStringsAndLiteralOperands) {
  auto ls = DataType::LargeUtf8();
  auto batch = MakeBatch({Col("s", ls, Values(ls, std::vector<std::optional<const char*>>{"abc", "xbz", std::nullopt}))});
  EXPECT_EQ(Eval("s LIKE '_b_'", *batch), "bool: true, true, NULL");
  EXPECT_EQ(Eval("'abc' IN (s, 'q')", *batch), "bool: true, false, NULL");
  EXPECT_EQ(Eval("lower(s) = s", *batch), "bool: true, true, NULL");
}

}  // namespace
}  // namespace lancelet
