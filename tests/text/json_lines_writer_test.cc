// Exact JSON Lines text for every type, including edge values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "text/text_test_util.h"

namespace lancelet {
namespace {

using text_test::Jsonl;
using text_test::OneColumn;
using Payload = Scalar::Payload;
const Payload kNull = std::monostate{};

TEST(JsonLinesWriter, Integers) {
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Int64(), {std::numeric_limits<int64_t>::min(),
                                                std::numeric_limits<int64_t>::max(), int64_t{0}, kNull})),
            "{\"v\":-9223372036854775808}\n{\"v\":9223372036854775807}\n{\"v\":0}\n{\"v\":null}\n");
  EXPECT_EQ(Jsonl(*OneColumn(DataType::UInt64(), {std::numeric_limits<uint64_t>::max(), uint64_t{0}})),
            "{\"v\":18446744073709551615}\n{\"v\":0}\n");
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Int8(), {int64_t{-128}, int64_t{127}})),
            "{\"v\":-128}\n{\"v\":127}\n");
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Int16(), {int64_t{-32768}})), "{\"v\":-32768}\n");
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Int32(), {int64_t{-2147483648}})), "{\"v\":-2147483648}\n");
  EXPECT_EQ(Jsonl(*OneColumn(DataType::UInt8(), {uint64_t{255}})), "{\"v\":255}\n");
  EXPECT_EQ(Jsonl(*OneColumn(DataType::UInt16(), {uint64_t{65535}})), "{\"v\":65535}\n");
  EXPECT_EQ(Jsonl(*OneColumn(DataType::UInt32(), {uint64_t{4294967295}})), "{\"v\":4294967295}\n");
  // 2^53 + 1 is not a double; it must still be exact.
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Int64(), {int64_t{9007199254740993}})),
            "{\"v\":9007199254740993}\n");
}

TEST(JsonLinesWriter, Bool) {
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Bool(), {true, false, kNull})),
            "{\"v\":true}\n{\"v\":false}\n{\"v\":null}\n");
}

TEST(JsonLinesWriter, Float64ShortestRoundTrip) {
  const double inf = std::numeric_limits<double>::infinity();
  // to_chars picks the shorter of fixed and scientific notation: 123456789012345680 (18
  // characters) beats 1.2345678901234568e+17 (22).
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Float64(),
                             {0.1, 1.5, 100.0, 1e21, 1e-7, 123456789012345678.0, 9007199254740992.0,
                              5e-324, -0.0, 0.0, std::nan(""), inf, -inf, kNull})),
            "{\"v\":0.1}\n{\"v\":1.5}\n{\"v\":100}\n{\"v\":1e+21}\n{\"v\":1e-7}\n"
            "{\"v\":123456789012345680}\n{\"v\":9007199254740992}\n{\"v\":5e-324}\n"
            "{\"v\":-0}\n{\"v\":0}\n{\"v\":\"NaN\"}\n{\"v\":\"Infinity\"}\n{\"v\":\"-Infinity\"}\n"
            "{\"v\":null}\n");
}

TEST(JsonLinesWriter, Float32ShortestAtItsWidth) {
  // float(0.1) is 0.100000001490116..., but the shortest float32 text is 0.1.
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Float32(),
                             {0.1, 16777217.0, 3.4028234663852886e38, -0.0, 1.0 / 3.0, std::nan(""),
                              -std::numeric_limits<double>::infinity()})),
            "{\"v\":0.1}\n{\"v\":16777216}\n{\"v\":3.4028235e+38}\n{\"v\":-0}\n{\"v\":0.33333334}\n"
            "{\"v\":\"NaN\"}\n{\"v\":\"-Infinity\"}\n");
}

TEST(JsonLinesWriter, Float16ShortestAtItsWidth) {
  Float16Builder builder(DataType::Float16());
  // 1, ~1/3 (0.33325195), max finite 65504, ~0.1 (0.099975586), smallest subnormal
  // (5.96e-8), -0, inf, NaN.
  for (uint16_t bits : {0x3C00, 0x3555, 0x7BFF, 0x2E66, 0x0001, 0x8000, 0x7C00, 0xFC00, 0x7E00}) {
    builder.Append(bits);
  }
  builder.AppendNull();
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("v", DataType::Float16())});
  auto batch = RecordBatch::Make(schema, {builder.Finish()});
  EXPECT_EQ(Jsonl(*batch),
            "{\"v\":1}\n{\"v\":0.3333}\n{\"v\":65500}\n{\"v\":0.1}\n{\"v\":6e-8}\n{\"v\":-0}\n"
            "{\"v\":\"Infinity\"}\n{\"v\":\"-Infinity\"}\n{\"v\":\"NaN\"}\n{\"v\":null}\n");
}

TEST(JsonLinesWriter, Utf8EscapingAndInvalidBytes) {
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Utf8(),
                             {std::string("h\xC3\xA9llo \xF0\x9F\x98\x80"), std::string("a\"b\\c/"),
                              std::string("\n\r\t\b\f"), std::string("\x01\x1f\x7f", 3),
                              std::string("nul\0x", 5), std::string(""), kNull})),
            "{\"v\":\"h\xC3\xA9llo \xF0\x9F\x98\x80\"}\n{\"v\":\"a\\\"b\\\\c/\"}\n"
            "{\"v\":\"\\n\\r\\t\\b\\f\"}\n{\"v\":\"\\u0001\\u001f\x7f\"}\n{\"v\":\"nul\\u0000x\"}\n"
            "{\"v\":\"\"}\n{\"v\":null}\n");
}

TEST(JsonLinesWriter, InvalidUtf8BecomesReplacementCharacters) {
  // A lone 0xFF; a truncated 3-byte sequence (one replacement for the whole prefix); an
  // encoded surrogate (each byte replaced); an overlong 2-byte form.
  EXPECT_EQ(Jsonl(*OneColumn(DataType::LargeUtf8(),
                             {std::string("a\xFF" "b"), std::string("ab\xE2\x82"),
                              std::string("\xED\xA0\x80"), std::string("\xC0\xAF")})),
            "{\"v\":\"a\xEF\xBF\xBD" "b\"}\n{\"v\":\"ab\xEF\xBF\xBD\"}\n"
            "{\"v\":\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"}\n{\"v\":\"\xEF\xBF\xBD\xEF\xBF\xBD\"}\n");
}

TEST(JsonLinesWriter, BinaryAsPaddedBase64) {
  const std::string expected = "{\"v\":\"\"}\n{\"v\":\"AP8=\"}\n{\"v\":\"YWI=\"}\n{\"v\":\"YWJj\"}\n{\"v\":null}\n";
  for (const auto& type : {DataType::Binary(), DataType::LargeBinary()}) {
    EXPECT_EQ(Jsonl(*OneColumn(type, {std::string(""), std::string("\x00\xFF", 2), std::string("ab"),
                                      std::string("abc"), kNull})),
              expected);
  }
  EXPECT_EQ(Jsonl(*OneColumn(DataType::FixedSizeBinary(3), {std::string("abc"), std::string("\xFB\xFF\xBF")})),
            "{\"v\":\"YWJj\"}\n{\"v\":\"+/+/\"}\n");
}

TEST(JsonLinesWriter, Dates) {
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Date32(), {int64_t{0}, int64_t{-1}, int64_t{19723}, int64_t{-25508},
                                                  int64_t{-719162}, int64_t{11016}})),
            "{\"v\":\"1970-01-01\"}\n{\"v\":\"1969-12-31\"}\n{\"v\":\"2024-01-01\"}\n"
            "{\"v\":\"1900-03-01\"}\n{\"v\":\"0001-01-01\"}\n{\"v\":\"2000-02-29\"}\n");
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Date64(), {int64_t{0}, int64_t{-1}, int64_t{1704067200123}})),
            "{\"v\":\"1970-01-01T00:00:00.000\"}\n{\"v\":\"1969-12-31T23:59:59.999\"}\n"
            "{\"v\":\"2024-01-01T00:00:00.123\"}\n");
}

TEST(JsonLinesWriter, TimestampsAtEveryUnit) {
  struct Case {
    TimeUnit unit;
    std::string epoch, minus_one, before_1970;
    int64_t scale;
  };
  const Case cases[] = {
      {TimeUnit::kSecond, "1970-01-01T00:00:00", "1969-12-31T23:59:59", "1900-03-01T12:34:56", 1},
      {TimeUnit::kMilli, "1970-01-01T00:00:00.000", "1969-12-31T23:59:59.999", "1900-03-01T12:34:56.000", 1000},
      {TimeUnit::kMicro, "1970-01-01T00:00:00.000000", "1969-12-31T23:59:59.999999",
       "1900-03-01T12:34:56.000000", 1000000},
      {TimeUnit::kNano, "1970-01-01T00:00:00.000000000", "1969-12-31T23:59:59.999999999",
       "1900-03-01T12:34:56.000000000", 1000000000},
  };
  for (const auto& c : cases) {
    auto type = DataType::Timestamp(c.unit);
    EXPECT_EQ(Jsonl(*OneColumn(type, {int64_t{0}, int64_t{-1}, int64_t{-2203845904} * c.scale, kNull})),
              "{\"v\":\"" + c.epoch + "\"}\n{\"v\":\"" + c.minus_one + "\"}\n{\"v\":\"" + c.before_1970 +
                  "\"}\n{\"v\":null}\n")
        << type->ToString();
  }
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Timestamp(TimeUnit::kNano), {int64_t{1}})),
            "{\"v\":\"1970-01-01T00:00:00.000000001\"}\n");
}

TEST(JsonLinesWriter, TimestampWithTimeZoneEndsInZ) {
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Timestamp(TimeUnit::kMicro, "UTC"), {int64_t{1704067200123456}})),
            "{\"v\":\"2024-01-01T00:00:00.123456Z\"}\n");
  // Values are UTC instants whatever the zone; the zone only adds the suffix.
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Timestamp(TimeUnit::kSecond, "America/New_York"), {int64_t{-1}})),
            "{\"v\":\"1969-12-31T23:59:59Z\"}\n");
}

TEST(JsonLinesWriter, ListsEmptyVersusNull) {
  auto type = DataType::List(DataType::Int32());
  std::vector<Scalar> items = {text_test::S(DataType::Int32(), int64_t{1}), text_test::Null(DataType::Int32())};
  EXPECT_EQ(Jsonl(*OneColumn(type, {items, std::vector<Scalar>{}, kNull})),
            "{\"v\":[1,null]}\n{\"v\":[]}\n{\"v\":null}\n");
  auto large = DataType::LargeList(DataType::Utf8());
  EXPECT_EQ(Jsonl(*OneColumn(large, {std::vector<Scalar>{text_test::S(DataType::Utf8(), std::string("x"))}})),
            "{\"v\":[\"x\"]}\n");
}

TEST(JsonLinesWriter, FixedSizeListOfFloat32) {
  auto type = DataType::FixedSizeList(DataType::Float32(), 3);
  std::vector<Scalar> items;
  for (double v : {0.1, -0.5, 1e-3}) items.push_back(text_test::S(DataType::Float32(), v));
  EXPECT_EQ(Jsonl(*OneColumn(type, {items, kNull})), "{\"v\":[0.1,-0.5,0.001]}\n{\"v\":null}\n");
}

TEST(JsonLinesWriter, NestedStructAndList) {
  auto inner = DataType::Struct({Field::Make("x", DataType::Float64())});
  auto type = DataType::Struct({Field::Make("a", DataType::Int32()),
                                Field::Make("b", DataType::List(DataType::Utf8())),
                                Field::Make("c", inner)});
  auto str = [](const char* s) { return text_test::S(DataType::Utf8(), std::string(s)); };
  std::vector<Scalar> row1 = {text_test::S(DataType::Int32(), int64_t{1}),
                              text_test::S(DataType::List(DataType::Utf8()), std::vector<Scalar>{str("p"), str("q")}),
                              text_test::S(inner, std::vector<Scalar>{text_test::S(DataType::Float64(), 2.5)})};
  std::vector<Scalar> row2 = {text_test::Null(DataType::Int32()),
                              text_test::S(DataType::List(DataType::Utf8()), std::vector<Scalar>{}),
                              text_test::Null(inner)};
  EXPECT_EQ(Jsonl(*OneColumn(type, {row1, row2, kNull})),
            "{\"v\":{\"a\":1,\"b\":[\"p\",\"q\"],\"c\":{\"x\":2.5}}}\n"
            "{\"v\":{\"a\":null,\"b\":[],\"c\":null}}\n{\"v\":null}\n");
}

TEST(JsonLinesWriter, KeysInSchemaOrderAndEscaped) {
  auto schema = Schema::Parse("z:int32,a:utf8");
  auto batch = RecordBatch::Make(
      schema, {MakeArray(DataType::Int32(), {text_test::S(DataType::Int32(), int64_t{7})}),
               MakeArray(DataType::Utf8(), {text_test::S(DataType::Utf8(), std::string("q"))})});
  EXPECT_EQ(Jsonl(*batch), "{\"z\":7,\"a\":\"q\"}\n");
  EXPECT_EQ(Jsonl(*OneColumn(DataType::Int32(), {int64_t{1}}, "we\"ird")), "{\"we\\\"ird\":1}\n");
}

}  // namespace
}  // namespace lancelet
