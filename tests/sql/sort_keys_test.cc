// Normalized sort keys order rows exactly as RowOrder does: every supported type, NULLs
// first and last, DESC, NaN and -0.0, strings with zero bytes and prefixes of each other,
// several keys, ties kept in input order, and top-k.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "lancelet/builder.h"
#include "lancelet/scalar.h"
#include "sql/sort.h"
#include "sql/sort_keys.h"

namespace lancelet::sql {
namespace {

// `rows` random values of `type`, about one in eight NULL, drawn from a small pool so
// that ties are common.
ArrayPtr RandomKey(const TypePtr& type, int64_t rows, std::mt19937& rng) {
  using namespace std::string_literals;
  auto builder = ArrayBuilder::Make(type);
  std::uniform_int_distribution<int> pick(0, 15);
  const std::vector<std::string> strings = {"", "a", "a\0"s, "a\0b"s, "ab", "b", "\xff", "\x01", "abc", "abd",
                                            "longer than eight bytes", "longer than eight bytez",
                                            "longer than eight", std::string(20, '\0'), "Z", "zz"};
  const std::vector<double> doubles = {0.0, -0.0, 1.5, -1.5, std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity(), std::nan(""), -std::nan(""),
                                       1e-300, -1e300, 2.0, 3.0, 4.0, -2.0, 7.25, 0.5};
  for (int64_t r = 0; r < rows; ++r) {
    const int p = pick(rng);
    if (pick(rng) < 2) {
      builder->AppendNull();
    } else if (type->is_variable_binary()) {
      builder->AppendScalar(Scalar{type, strings[size_t(p)]});
    } else if (type->is_floating()) {
      builder->AppendScalar(Scalar{type, doubles[size_t(p)]});
    } else if (type->id() == TypeId::kBool) {
      builder->AppendScalar(Scalar{type, p % 2 == 0});
    } else if (type->is_signed_integer() || type->id() == TypeId::kTimestamp || type->id() == TypeId::kDate32) {
      const int64_t values[] = {0, -1, 1, 127, -128, 5, -5, 100, 42, -42, 3, 7, 8, 9, 10, -100};
      builder->AppendScalar(Scalar{type, values[p]});
    } else {
      const uint64_t values[] = {0, 1, 255, 254, 128, 127, 5, 6, 7, 8, 9, 10, 11, 12, 200, 3};
      builder->AppendScalar(Scalar{type, values[p]});
    }
  }
  return builder->Finish();
}

std::vector<int64_t> ExpectedOrder(const std::vector<ArrayPtr>& keys, const std::vector<OrderItem>& items,
                                   int64_t rows) {
  const RowOrder order(keys, keys, items);
  std::vector<int64_t> rows_in_order(static_cast<size_t>(rows));
  std::iota(rows_in_order.begin(), rows_in_order.end(), 0);
  std::stable_sort(rows_in_order.begin(), rows_in_order.end(),
                   [&](int64_t a, int64_t b) { return order.Before(a, b); });
  return rows_in_order;
}

TEST(NormalizedSortKeys, OrderRowsAsRowOrderDoesForEveryType) {
  const std::vector<TypePtr> types = {DataType::Bool(),   DataType::Int8(),    DataType::Int16(),
                                      DataType::Int32(),  DataType::Int64(),   DataType::UInt8(),
                                      DataType::UInt16(), DataType::UInt32(),  DataType::UInt64(),
                                      DataType::Float32(), DataType::Float64(), DataType::Utf8(),
                                      DataType::LargeUtf8(), DataType::Binary(), DataType::Date32()};
  std::mt19937 rng(44);
  constexpr int64_t kRows = 500;
  for (const TypePtr& type : types) {
    for (bool descending : {false, true}) {
      for (std::optional<bool> nulls_first : {std::optional<bool>{}, std::optional<bool>{true}}) {
        const std::vector<ArrayPtr> keys = {RandomKey(type, kRows, rng)};
        const std::vector<OrderItem> items = {OrderItem{nullptr, descending, nulls_first}};
        ASSERT_TRUE(HasNormalizedKeys(keys)) << type->ToString();
        EXPECT_EQ(NormalizedSortOrder(keys, items, kRows, std::nullopt), ExpectedOrder(keys, items, kRows))
            << type->ToString() << (descending ? " DESC" : "") << (nulls_first ? " NULLS FIRST" : "");
      }
    }
  }
}

TEST(NormalizedSortKeys, SeveralKeysTiesAndTopK) {
  std::mt19937 rng(7);
  constexpr int64_t kRows = 2000;
  const std::vector<ArrayPtr> keys = {RandomKey(DataType::Utf8(), kRows, rng),
                                      RandomKey(DataType::Float64(), kRows, rng),
                                      RandomKey(DataType::Int32(), kRows, rng)};
  const std::vector<OrderItem> items = {OrderItem{nullptr, true, std::nullopt}, OrderItem{nullptr, false, true},
                                        OrderItem{nullptr, true, false}};
  const std::vector<int64_t> expected = ExpectedOrder(keys, items, kRows);
  EXPECT_EQ(NormalizedSortOrder(keys, items, kRows, std::nullopt), expected);
  for (int64_t first : {0, 1, 17, 1999, 2000}) {
    const std::vector<int64_t> top = NormalizedSortOrder(keys, items, kRows, first);
    EXPECT_EQ(top, std::vector<int64_t>(expected.begin(), expected.begin() + first)) << first;
  }
}

TEST(NormalizedSortKeys, TypesWithoutAnEncodingAreLeftToRowOrder) {
  auto decimal = ArrayBuilder::Make(DataType::Decimal128(10, 2))->Finish();
  auto half = ArrayBuilder::Make(DataType::Float16())->Finish();
  auto list = ArrayBuilder::Make(DataType::List(DataType::Int32()))->Finish();
  EXPECT_FALSE(HasNormalizedKeys({decimal}));
  EXPECT_FALSE(HasNormalizedKeys({half}));
  EXPECT_FALSE(HasNormalizedKeys({ArrayBuilder::Make(DataType::Int64())->Finish(), list}));
}

}  // namespace
}  // namespace lancelet::sql
