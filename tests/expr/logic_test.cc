// Three-valued logic, IS NULL, IN and BETWEEN.
#include <gtest/gtest.h>

#include "expr_test_util.h"

namespace lancelet {
namespace {

using namespace expr_test;
using OB = std::optional<bool>;
using OI = std::optional<int64_t>;

RecordBatchPtr TruthBatch() {
  auto b = DataType::Bool();
  std::vector<OB> a{true, true, true, false, false, false, std::nullopt, std::nullopt, std::nullopt};
  std::vector<OB> c{true, false, std::nullopt, true, false, std::nullopt, true, false, std::nullopt};
  return MakeBatch({Col("a", b, Values(b, a)), Col("b", b, Values(b, c))});
}

TEST(ExprLogic, AndTruthTable) {
  EXPECT_EQ(Eval("a AND b", *TruthBatch()),
            "bool: true, false, NULL, false, false, false, NULL, false, NULL");
}

TEST(ExprLogic, OrTruthTable) {
  EXPECT_EQ(Eval("a OR b", *TruthBatch()), "bool: true, true, true, true, false, NULL, true, NULL, NULL");
}

TEST(ExprLogic, NotTruthTable) {
  EXPECT_EQ(Eval("NOT a", *TruthBatch()), "bool: false, false, false, true, true, true, NULL, NULL, NULL");
}

TEST(ExprLogic, WithLiterals) {
  auto batch = TruthBatch();
  EXPECT_EQ(Eval("a AND NULL", *batch), "bool: NULL, NULL, NULL, false, false, false, NULL, NULL, NULL");
  EXPECT_EQ(Eval("a OR NULL", *batch), "bool: true, true, true, NULL, NULL, NULL, NULL, NULL, NULL");
  EXPECT_EQ(Eval("a AND TRUE", *batch), "bool: true, true, true, false, false, false, NULL, NULL, NULL");
  EXPECT_EQ(Eval("NULL AND FALSE", *batch), "bool: false, false, false, false, false, false, false, false, false");
  EXPECT_EQ(Eval("NULL OR TRUE", *batch), "bool: true, true, true, true, true, true, true, true, true");
  EXPECT_EQ(Eval("NOT NULL", *batch), "bool: NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL");
}

TEST(ExprLogic, IsNull) {
  auto batch = TruthBatch();
  EXPECT_EQ(Eval("a IS NULL", *batch), "bool: false, false, false, false, false, false, true, true, true");
  EXPECT_EQ(Eval("b IS NOT NULL", *batch), "bool: true, true, false, true, true, false, true, true, false");
  EXPECT_EQ(Eval("(a AND b) IS NULL", *batch), "bool: false, false, true, false, false, false, true, false, true");
  EXPECT_EQ(Eval("NULL IS NULL", *batch), "bool: true, true, true, true, true, true, true, true, true");
}

TEST(ExprLogic, PredicateKeepsOnlyTrue) {
  auto batch = TruthBatch();
  auto bound = Bind(*ParseExpression("a OR b"), *batch->schema());
  EXPECT_EQ(EvaluatePredicate(*bound, *batch),
            (std::vector<bool>{true, true, true, true, false, false, true, false, false}));
  auto not_bool = Bind(*ParseExpression("CAST(a AS int32)"), *batch->schema());
  EXPECT_EQ(ErrorOf([&] { EvaluatePredicate(*not_bool, *batch); }),
            "a filter must be a boolean expression, but this one is int32 at position 1 in \"CAST(a AS int32)\"");
}

// Filters over fixed-width columns run in slices of 4096 rows; the selection must be
// the same as row by row across slice boundaries, with NULLs, a CASE (which takes the
// rows of its branches from the slice) and an error raised in a later slice.
TEST(ExprLogic, SelectionIsTheSameAcrossSlicesOfTheBatch) {
  const int64_t n = 10000;
  auto i64 = DataType::Int64();
  auto f64 = DataType::Float64();
  std::vector<OI> ids, divisors;
  std::vector<std::optional<double>> prices;
  for (int64_t i = 0; i < n; ++i) {
    ids.push_back(i % 97 == 0 ? std::nullopt : OI(i));
    divisors.push_back(i == 9000 ? 0 : 1 + i % 7);
    prices.push_back(double(i % 1000) / 4);
  }
  auto batch = MakeBatch({Col("id", i64, Values(i64, ids)), Col("d", i64, Values(i64, divisors)),
                          Col("price", f64, Values(f64, prices))});
  auto select = [&](const std::string& predicate) {
    return EvaluateSelection(*Bind(*ParseExpression(predicate), *batch->schema()), *batch);
  };
  auto expect = [&](auto holds) {
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < n; ++i)
      if (holds(i)) rows.push_back(i);
    return rows;
  };
  EXPECT_EQ(select("id % 100 = 0"), expect([](int64_t i) { return i % 97 != 0 && i % 100 == 0; }));
  EXPECT_EQ(select("id IS NULL OR price > 249"),
            expect([](int64_t i) { return i % 97 == 0 || double(i % 1000) / 4 > 249; }));
  EXPECT_EQ(select("CASE WHEN id < 5000 THEN price < 1 ELSE id % 1000 = 999 END"),
            expect([](int64_t i) { return i % 97 != 0 && (i < 5000 ? i % 1000 < 4 : i % 1000 == 999); }));
  EXPECT_EQ(ErrorOf([&] { select("id / d >= 0"); }), "division by zero at position 4 in \"id / d >= 0\"");
}

RecordBatchPtr IntBatch() {
  auto t = DataType::Int32();
  return MakeBatch({Col("x", t, Values(t, std::vector<OI>{1, 2, 3, std::nullopt, 5}))});
}

TEST(ExprLogic, In) {
  auto batch = IntBatch();
  EXPECT_EQ(Eval("x IN (1, 3)", *batch), "bool: true, false, true, NULL, false");
  EXPECT_EQ(Eval("x IN (1, NULL)", *batch), "bool: true, NULL, NULL, NULL, NULL");
  EXPECT_EQ(Eval("x NOT IN (1, 3)", *batch), "bool: false, true, false, NULL, true");
  EXPECT_EQ(Eval("x NOT IN (1, NULL)", *batch), "bool: false, NULL, NULL, NULL, NULL");
  EXPECT_EQ(Eval("x IN (2.0, 5.5)", *batch), "bool: false, true, false, NULL, false");
  EXPECT_EQ(Eval("x + 1 IN (x, 4)", *batch), "bool: false, false, true, NULL, false");
  EXPECT_EQ(Eval("NULL IN (1, 'a')", *batch), "bool: NULL, NULL, NULL, NULL, NULL");
  EXPECT_EQ(Eval("NULL BETWEEN 1 AND 2", *batch), "bool: NULL, NULL, NULL, NULL, NULL");
}

TEST(ExprLogic, Between) {
  auto batch = IntBatch();
  EXPECT_EQ(Eval("x BETWEEN 2 AND 3", *batch), "bool: false, true, true, NULL, false");
  EXPECT_EQ(Eval("x NOT BETWEEN 2 AND 3", *batch), "bool: true, false, false, NULL, true");
  EXPECT_EQ(Eval("x BETWEEN NULL AND 3", *batch), "bool: NULL, NULL, NULL, NULL, false");
  EXPECT_EQ(Eval("x BETWEEN 3 AND 2", *batch), "bool: false, false, false, NULL, false");
  EXPECT_EQ(Eval("x * 2 BETWEEN 1.5 AND 4", *batch), "bool: true, true, false, NULL, false");
}

}  // namespace
}  // namespace lancelet
