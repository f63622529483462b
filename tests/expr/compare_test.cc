// Comparisons across numeric widths and signedness, floats with NaN, strings, binary,
// bools, dates, timestamps and vectors.
#include <cmath>

#include <gtest/gtest.h>

#include "lancelet/decimal.h"
#include "expr_test_util.h"

namespace lancelet {
namespace {

using namespace expr_test;
using OI = std::optional<int64_t>;
using OU = std::optional<uint64_t>;
using OD = std::optional<double>;
using OS = std::optional<const char*>;

TEST(ExprCompare, MixedSignednessIsExact) {
  auto u64 = DataType::UInt64();
  auto i64 = DataType::Int64();
  auto batch = MakeBatch({Col("u", u64, Values(u64, std::vector<OU>{UINT64_MAX, 0, 5, std::nullopt})),
                          Col("i", i64, Values(i64, std::vector<OI>{-1, -1, 5, 1}))});
  EXPECT_EQ(Eval("u > i", *batch), "bool: true, true, false, NULL");
  EXPECT_EQ(Eval("u = i", *batch), "bool: false, false, true, NULL");
  EXPECT_EQ(Eval("i < u", *batch), "bool: true, true, false, NULL");
  EXPECT_EQ(Eval("u > -1", *batch), "bool: true, true, true, NULL");
  EXPECT_EQ(Eval("u = 18446744073709551615", *batch), "bool: true, false, false, NULL");
  EXPECT_EQ(Eval("i < 18446744073709551615", *batch), "bool: true, true, true, true");
}

TEST(ExprCompare, NarrowColumnsAgainstWideLiterals) {
  auto i8 = DataType::Int8();
  auto u16 = DataType::UInt16();
  auto batch = MakeBatch({Col("a", i8, Values(i8, std::vector<OI>{-128, 0, 127})),
                          Col("b", u16, Values(u16, std::vector<OU>{0, 300, 65535}))});
  EXPECT_EQ(Eval("a < 1000", *batch), "bool: true, true, true");
  EXPECT_EQ(Eval("a > -1000", *batch), "bool: true, true, true");
  EXPECT_EQ(Eval("a = 127", *batch), "bool: false, false, true");
  EXPECT_EQ(Eval("a < 0.5", *batch), "bool: true, true, false");
  EXPECT_EQ(Eval("a >= -127.5", *batch), "bool: false, true, true");
  EXPECT_EQ(Eval("b > a", *batch), "bool: true, true, true");
  EXPECT_EQ(Eval("b <> 300", *batch), "bool: true, false, true");
  EXPECT_EQ(Eval("5 < b", *batch), "bool: false, true, true");  // literal on the left
}

TEST(ExprCompare, IntegersAgainstFloatsAreExact) {
  auto i64 = DataType::Int64();
  auto f64 = DataType::Float64();
  // 2^53 + 1 is not a float64; it must still be greater than 2^53 as a float.
  auto batch = MakeBatch({Col("i", i64, Values(i64, std::vector<OI>{9007199254740993, INT64_MAX, 3})),
                          Col("f", f64, Values(f64, std::vector<OD>{9007199254740992.0, 9223372036854775808.0, 3.0}))});
  EXPECT_EQ(Eval("i > f", *batch), "bool: true, false, false");
  EXPECT_EQ(Eval("i = f", *batch), "bool: false, false, true");
  EXPECT_EQ(Eval("i < f", *batch), "bool: false, true, false");
}

TEST(ExprCompare, NaNIsGreatestAndEqualToItself) {
  auto f64 = DataType::Float64();
  auto batch = MakeBatch({Col("f", f64, Values(f64, std::vector<OD>{NAN, 1.0, INFINITY, -0.0, std::nullopt})),
                          Col("g", f64, Values(f64, std::vector<OD>{NAN, NAN, NAN, 0.0, 1.0}))});
  EXPECT_EQ(Eval("f = g", *batch), "bool: true, false, false, true, NULL");
  EXPECT_EQ(Eval("f < g", *batch), "bool: false, true, true, false, NULL");
  EXPECT_EQ(Eval("f > 1e308", *batch), "bool: true, false, true, false, NULL");
  EXPECT_EQ(Eval("f = CAST('NaN' AS DOUBLE)", *batch), "bool: true, false, false, false, NULL");
  EXPECT_EQ(Eval("f <> f", *batch), "bool: false, false, false, false, NULL");
}

TEST(ExprCompare, Float32AgainstDecimalLiteral) {
  auto f32 = DataType::Float32();
  auto batch = MakeBatch({Col("f", f32, Values(f32, std::vector<OD>{double(0.1f), 0.5, 2.0}))});
  EXPECT_EQ(Eval("f = 0.1", *batch), "bool: true, false, false");
  EXPECT_EQ(Eval("f > 0.1", *batch), "bool: false, true, true");
  EXPECT_EQ(Eval("f = 2", *batch), "bool: false, false, true");
}

TEST(ExprCompare, StringsAndBinaryAreBytewise) {
  auto s = DataType::Utf8();
  auto ls = DataType::LargeUtf8();
  auto bin = DataType::Binary();
  auto batch = MakeBatch({Col("s", s, Values(s, std::vector<OS>{"apple", "Banana", "\xc3\xa9t\xc3\xa9", "", std::nullopt})),
                          Col("l", ls, Values(ls, std::vector<OS>{"apple", "apple", "z", "", "x"})),
                          Col("b", bin, Values(bin, std::vector<OS>{"\x01", "\xff", "a", "", "x"}))});
  EXPECT_EQ(Eval("s = 'apple'", *batch), "bool: true, false, false, false, NULL");
  EXPECT_EQ(Eval("s < 'b'", *batch), "bool: true, true, false, true, NULL");  // 'B' < 'b'; 0xC3 > 'b'
  EXPECT_EQ(Eval("s > l", *batch), "bool: false, false, true, false, NULL");
  EXPECT_EQ(Eval("s >= ''", *batch), "bool: true, true, true, true, NULL");
  EXPECT_EQ(Eval("b > X'7f'", *batch), "bool: false, true, false, false, false");
  EXPECT_EQ(Eval("b = 'a'", *batch), "bool: false, false, true, false, false");
}

TEST(ExprCompare, Bools) {
  auto b = DataType::Bool();
  auto batch = MakeBatch({Col("f", b, Values(b, std::vector<std::optional<bool>>{true, false, std::nullopt}))});
  EXPECT_EQ(Eval("f = TRUE", *batch), "bool: true, false, NULL");
  EXPECT_EQ(Eval("f < TRUE", *batch), "bool: false, true, NULL");
  EXPECT_EQ(Eval("f <> f", *batch), "bool: false, false, NULL");
}

TEST(ExprCompare, DatesAndTimestamps) {
  auto d = DataType::Date32();
  auto ms = DataType::Timestamp(TimeUnit::kMilli);
  auto ns = DataType::Timestamp(TimeUnit::kNano, "UTC");
  // 2024-01-01, 2024-01-02, 2024-01-03
  auto batch = MakeBatch({Col("d", d, Values(d, std::vector<OI>{19723, 19724, 19725})),
                          // 2024-01-02 00:00:00.000, 2024-01-02 03:04:05.123, NULL
                          Col("t", ms, Values(ms, std::vector<OI>{1704153600000, 1704164645123, std::nullopt})),
                          Col("n", ns, Values(ns, std::vector<OI>{1704153600000000001, 0, -1}))});
  EXPECT_EQ(Eval("d = DATE '2024-01-02'", *batch), "bool: false, true, false");
  EXPECT_EQ(Eval("d > '2024-01-01'", *batch), "bool: false, true, true");
  EXPECT_EQ(Eval("d BETWEEN DATE '2024-01-02' AND DATE '2024-01-03'", *batch), "bool: false, true, true");
  EXPECT_EQ(Eval("d < TIMESTAMP '2024-01-02 00:00:00.000001'", *batch), "bool: true, true, false");
  EXPECT_EQ(Eval("t = DATE '2024-01-02'", *batch), "bool: true, false, NULL");
  EXPECT_EQ(Eval("t >= TIMESTAMP '2024-01-02 03:04:05.123'", *batch), "bool: false, true, NULL");
  EXPECT_EQ(Eval("t > TIMESTAMP '2024-01-02 03:04:05.1229'", *batch), "bool: false, true, NULL");
  EXPECT_EQ(Eval("t < '2024-01-02T00:00:00.001'", *batch), "bool: true, false, NULL");
  EXPECT_EQ(Eval("t = d", *batch), "bool: false, false, NULL");
  EXPECT_EQ(Eval("t > d", *batch), "bool: true, true, NULL");
  EXPECT_EQ(Eval("n > TIMESTAMP '2024-01-02 00:00:00'", *batch), "bool: true, false, false");
  EXPECT_EQ(Eval("n = TIMESTAMP '2024-01-02 00:00:00.000000001'", *batch), "bool: true, false, false");
  EXPECT_EQ(Eval("n < DATE '1970-01-01'", *batch), "bool: false, false, true");
}

// The message of the error binding `text` throws, without its " at position ..." tail.
std::string EvalError(const std::string& text, const RecordBatch& batch) {
  std::string message = ErrorOf([&] { Eval(text, batch); });
  return message.substr(0, message.find(" at position"));
}

TEST(ExprCompare, DecimalsInTheirOwnOrderAgainstExactLiterals) {
  auto dec = DataType::Decimal128(6, 2);
  auto wide = DataType::Decimal256(40, 0);
  auto d = [](const char* text, const TypePtr& t) { return Scalar{t, *ParseDecimal(text, *t)}; };
  auto batch = MakeBatch({Col("d", dec, {d("-0.01", dec), d("0.01", dec), d("325.60", dec), Scalar::Null(dec)}),
                          Col("w", wide, {d("-1", wide), d("18446744073709551616", wide), d("0", wide), d("2", wide)})});
  // Byte order would put -0.01 (all 0xff bytes) above every positive value.
  EXPECT_EQ(Eval("d > 0", *batch), "bool: false, true, true, NULL");
  EXPECT_EQ(Eval("d < '0.01'", *batch), "bool: true, false, false, NULL");
  EXPECT_EQ(Eval("d >= 325.6", *batch), "bool: false, false, true, NULL");
  EXPECT_EQ(Eval("-0.01 = d", *batch), "bool: true, false, false, NULL");
  EXPECT_EQ(Eval("w > 18446744073709551615", *batch), "bool: false, true, false, false");
  EXPECT_EQ(Eval("w < 0", *batch), "bool: true, false, false, false");
  EXPECT_EQ(EvalError("d > 0.005", *batch), "0.005 has more fraction digits than decimal128<6,2> keeps");
  EXPECT_EQ(EvalError("d = w", *batch), "cannot compare decimal128<6,2> with decimal256<40,0>");
}

TEST(ExprCompare, TimesAndDurationsAgainstLiterals) {
  auto t = DataType::Time64(TimeUnit::kMicro);
  auto du = DataType::Duration(TimeUnit::kSecond);
  auto batch = MakeBatch({Col("t", t, Values(t, std::vector<OI>{0, 43200000000, 86399999999})),
                          Col("du", du, Values(du, std::vector<OI>{-5, 0, std::nullopt}))});
  EXPECT_EQ(Eval("t >= '12:00:00'", *batch), "bool: false, true, true");
  EXPECT_EQ(Eval("t = '23:59:59.999999'", *batch), "bool: false, false, true");
  EXPECT_EQ(Eval("t < 1", *batch), "bool: true, false, false");
  EXPECT_EQ(Eval("du < 0", *batch), "bool: true, false, NULL");
  EXPECT_EQ(EvalError("t > '25:00:00'", *batch), "cannot cast '25:00:00' to time64<us>");
  EXPECT_EQ(EvalError("t = du", *batch), "cannot compare time64<us> with duration<s>");
}

TEST(ExprCompare, VectorEquality) {
  auto vec = DataType::FixedSizeList(DataType::Float32(), 2);
  auto f = DataType::Float32();
  auto item = [&](std::optional<double> v) { return v ? Scalar{f, *v} : Scalar::Null(f); };
  std::vector<Scalar> rows = {Scalar{vec, std::vector<Scalar>{item(0.5), item(1)}},
                              Scalar{vec, std::vector<Scalar>{item(0.5), item(2)}},
                              Scalar{vec, std::vector<Scalar>{item(std::nullopt), item(1)}},
                              Scalar{vec, std::vector<Scalar>{item(std::nullopt), item(3)}}, Scalar::Null(vec)};
  auto batch = MakeBatch({Col("v", vec, rows)});
  EXPECT_EQ(Eval("v = [0.5, 1]", *batch), "bool: true, false, NULL, false, NULL");
  EXPECT_EQ(Eval("v <> [0.5, 1]", *batch), "bool: false, true, NULL, true, NULL");
  EXPECT_EQ(Eval("v = v", *batch), "bool: true, true, NULL, NULL, NULL");
}

TEST(ExprCompare, NullLiteralGivesNull) {
  auto t = DataType::Int32();
  auto batch = MakeBatch({Col("x", t, Values(t, std::vector<OI>{1, std::nullopt}))});
  EXPECT_EQ(Eval("x = NULL", *batch), "bool: NULL, NULL");
  EXPECT_EQ(Eval("NULL <> x", *batch), "bool: NULL, NULL");
  EXPECT_EQ(Eval("NULL = NULL", *batch), "bool: NULL, NULL");
}

TEST(ExprCompare, StructFieldsInheritTheStructsNulls) {
  auto st = DataType::Struct({Field::Make("a", DataType::Int64())});
  auto i64 = DataType::Int64();
  std::vector<Scalar> rows = {Scalar{st, std::vector<Scalar>{Scalar{i64, int64_t(1)}}}, Scalar::Null(st),
                              Scalar{st, std::vector<Scalar>{Scalar::Null(i64)}}};
  auto batch = MakeBatch({Col("s", st, rows)});
  EXPECT_EQ(Eval("s.a", *batch), "int64: 1, NULL, NULL");
  EXPECT_EQ(Eval("s.a IS NULL", *batch), "bool: false, true, true");
}

TEST(ExprCompare, ColumnsAreFoundByNameInProjectedBatches) {
  auto t = DataType::Int32();
  Schema full({Field::Make("a", t), Field::Make("b", t)});
  auto bound = Bind(*ParseExpression("b > 1"), full);
  auto only_b = MakeBatch({Col("b", t, Values(t, std::vector<OI>{1, 2}))});
  EXPECT_EQ(Render(*Evaluate(*bound, *only_b)), "false, true");
  auto only_a = MakeBatch({Col("a", t, Values(t, std::vector<OI>{1, 2}))});
  EXPECT_EQ(ErrorOf([&] { Evaluate(*bound, *only_a); }), "column 'b' is not in the batch (a:int32)");
}

}  // namespace
}  // namespace lancelet
