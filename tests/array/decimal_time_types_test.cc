// time32/time64, duration, decimal128/256 and null: their spelling, their value text, and
// the Lance logical types the reference names them by.
#include <gtest/gtest.h>

#include "lancelet/decimal.h"
#include "format/lance_schema.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"
#include "text/temporal_text.h"

namespace lancelet {
namespace {

TEST(NewTypes, SpellingsRoundTripThroughParse) {
  for (const char* spelling : {"time32<s>", "time32<ms>", "time64<us>", "time64<ns>", "duration<s>", "duration<ns>",
                               "decimal128<10,2>", "decimal128<38,-3>", "decimal256<40,5>", "decimal256<76,0>",
                               "null", "list<decimal128<5,1>>", "struct<t:time64<us>,n:null>", "map<utf8,int32>",
                               "map<int64,list<map<utf8,null>>>", "map<utf8,utf8,sorted>"}) {
    EXPECT_EQ(DataType::Parse(spelling)->ToString(), spelling);
  }
  // decimal<p,s> takes the narrowest width for the precision.
  EXPECT_EQ(DataType::Parse("decimal<38,2>")->ToString(), "decimal128<38,2>");
  EXPECT_EQ(DataType::Parse("decimal<39,2>")->ToString(), "decimal256<39,2>");
  EXPECT_FALSE(DataType::Decimal128(10, 2)->Equals(*DataType::Decimal128(10, 3)));
  EXPECT_FALSE(DataType::Time32(TimeUnit::kSecond)->Equals(*DataType::Time32(TimeUnit::kMilli)));
  EXPECT_EQ(DataType::Decimal256(40, 0)->byte_width(), 32);
  EXPECT_EQ(DataType::Time32(TimeUnit::kMilli)->byte_width(), 4);
}

// --schema takes SQL's type names as CREATE TABLE does; int8 stays Arrow's 8-bit integer.
TEST(NewTypes, SqlNamesParseAsTheirArrowTypes) {
  EXPECT_EQ(Schema::Parse("id:BIGINT, n:INTEGER, s:VARCHAR, x:DOUBLE, at:TIMESTAMP, d:DATE, b:BOOLEAN, t:TINYINT, "
                          "h:SMALLINT, r:REAL, raw:BLOB, u:UBIGINT, c:TIME, i:int8, ts:timestamp<ns>")
                ->ToString(),
            "id:int64, n:int32, s:utf8, x:float64, at:timestamp<us>, d:date32, b:bool, t:int8, h:int16, "
            "r:float32, raw:binary, u:uint64, c:time64<us>, i:int8, ts:timestamp<ns>");
  EXPECT_EQ(DataType::Parse("list<varchar>")->ToString(), "list<utf8>");
}

TEST(NewTypes, BadParametersAreRefusedWithTheRule) {
  auto message = [](const char* spelling) {
    try {
      DataType::Parse(spelling);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("time32<us>").find("time32 takes the unit s or ms"), std::string::npos);
  EXPECT_NE(message("time64<s>").find("time64 takes the unit us or ns"), std::string::npos);
  EXPECT_NE(message("decimal128<39,0>").find("precision must be in 1..38"), std::string::npos);
  EXPECT_NE(message("decimal256<77,0>").find("precision must be in 1..76"), std::string::npos);
  EXPECT_NE(message("decimal128<5,6>").find("scale 6 does not fit precision 5"), std::string::npos);
  EXPECT_THROW(DataType::Map(Field::Make("entries", DataType::Struct({Field::Make("k", DataType::Utf8(), true),
                                                                      Field::Make("v", DataType::Int32())}))),
               Error);  // a nullable key
}

TEST(NewTypes, LanceLogicalTypesAreTheReferences) {
  using format::LogicalTypeName;
  EXPECT_EQ(LogicalTypeName(*DataType::Time32(TimeUnit::kSecond)), "time32:s");
  EXPECT_EQ(LogicalTypeName(*DataType::Time64(TimeUnit::kNano)), "time64:ns");
  EXPECT_EQ(LogicalTypeName(*DataType::Duration(TimeUnit::kMicro)), "duration:us");
  EXPECT_EQ(LogicalTypeName(*DataType::Decimal128(10, 2)), "decimal:128:10:2");
  EXPECT_EQ(LogicalTypeName(*DataType::Decimal256(40, -3)), "decimal:256:40:-3");
  EXPECT_EQ(LogicalTypeName(*DataType::Null()), "null");
  EXPECT_EQ(LogicalTypeName(*DataType::Map(DataType::Utf8(), DataType::Int32())), "map");
  EXPECT_THROW(LogicalTypeName(*DataType::Map(DataType::Utf8(), DataType::Int32(), true)), Error);
  EXPECT_EQ(LogicalTypeName(*DataType::FixedSizeList(DataType::Decimal128(5, 1), 2)),
            "fixed_size_list:decimal:128:5:1:2");
}

std::string DecimalBytes(const char* text, const TypePtr& type) {
  auto bytes = ParseDecimal(text, *type);
  return bytes ? FormatDecimal(*bytes, *type) : "refused";
}

TEST(DecimalText, FormatsEveryDigitAtTheScale) {
  TypePtr d = DataType::Decimal128(10, 2);
  EXPECT_EQ(FormatDecimal(std::string("\x39\x30") + std::string(14, '\0'), *d), "123.45");  // 12345
  EXPECT_EQ(FormatDecimal(std::string(16, '\xff'), *d), "-0.01");                             // -1
  EXPECT_EQ(FormatDecimal(std::string(16, '\0'), *d), "0.00");
  EXPECT_EQ(FormatDecimal(std::string("\x7b") + std::string(15, '\0'), *DataType::Decimal128(5, -2)), "12300");
  // The most negative 128-bit value: -2^127.
  EXPECT_EQ(FormatDecimal(std::string(15, '\0') + "\x80", *DataType::Decimal128(38, 0)),
            "-170141183460469231731687303715884105728");
  // 2^64 at 256 bits.
  EXPECT_EQ(FormatDecimal(std::string(8, '\0') + "\x01" + std::string(23, '\0'), *DataType::Decimal256(40, 0)),
            "18446744073709551616");
}

TEST(DecimalText, ParsesRoundsAndChecksThePrecision) {
  TypePtr d = DataType::Decimal128(5, 2);
  EXPECT_EQ(DecimalBytes("123.45", d), "123.45");
  EXPECT_EQ(DecimalBytes("-1", d), "-1.00");
  EXPECT_EQ(DecimalBytes("+.5", d), "0.50");
  EXPECT_EQ(DecimalBytes("1e2", d), "100.00");
  EXPECT_EQ(DecimalBytes("12.", d), "12.00");
  EXPECT_EQ(DecimalBytes("0.005", d), "0.01");    // half away from zero
  EXPECT_EQ(DecimalBytes("-0.005", d), "-0.01");
  EXPECT_EQ(DecimalBytes("0.00499", d), "0.00");
  EXPECT_EQ(DecimalBytes("999.994", d), "999.99");
  EXPECT_EQ(DecimalBytes("999.995", d), "refused");  // rounds to 1000.00: six digits
  EXPECT_EQ(DecimalBytes("1000", d), "refused");
  EXPECT_EQ(DecimalBytes("abc", d), "refused");
  EXPECT_EQ(DecimalBytes("1.2.3", d), "refused");
  EXPECT_EQ(DecimalBytes("", d), "refused");
  TypePtr wide = DataType::Decimal256(76, 0);
  const std::string max76(76, '9');
  EXPECT_EQ(DecimalBytes(max76.c_str(), wide), max76);
  EXPECT_EQ(DecimalBytes(("-" + max76).c_str(), wide), "-" + max76);
  EXPECT_EQ(DecimalBytes(("1" + max76).c_str(), wide), "refused");
}

TEST(TimeOfDayText, FormatsAndParsesInEveryUnit) {
  using text::FormatTimeOfDay;
  using text::ParseTimeOfDay;
  EXPECT_EQ(FormatTimeOfDay(0, TimeUnit::kSecond), "00:00:00");
  EXPECT_EQ(FormatTimeOfDay(86399999, TimeUnit::kMilli), "23:59:59.999");
  EXPECT_EQ(FormatTimeOfDay(45296789012, TimeUnit::kMicro), "12:34:56.789012");
  EXPECT_EQ(FormatTimeOfDay(1, TimeUnit::kNano), "00:00:00.000000001");
  // Outside one day: the sign stays and the hours run on.
  EXPECT_EQ(FormatTimeOfDay(-1, TimeUnit::kSecond), "-00:00:01");
  EXPECT_EQ(FormatTimeOfDay(90000, TimeUnit::kSecond), "25:00:00");
  EXPECT_EQ(ParseTimeOfDay("12:34:56.789012", TimeUnit::kMicro), 45296789012);
  EXPECT_EQ(ParseTimeOfDay("12:34", TimeUnit::kSecond), 45240);
  EXPECT_EQ(ParseTimeOfDay("00:00:00.5", TimeUnit::kMilli), 500);
  EXPECT_EQ(ParseTimeOfDay("00:00:00.5", TimeUnit::kSecond), std::nullopt);  // finer than the unit
  EXPECT_EQ(ParseTimeOfDay("24:00:00", TimeUnit::kSecond), std::nullopt);
  EXPECT_EQ(ParseTimeOfDay("1:00:00", TimeUnit::kSecond), std::nullopt);
}

TEST(NullType, ArraysAreAllNullAndRefuseValues) {
  auto builder = ArrayBuilder::Make(DataType::Null());
  builder->AppendNull();
  builder->AppendScalar(Scalar::Null(DataType::Null()));
  EXPECT_THROW(builder->AppendScalar(Scalar{DataType::Int64(), int64_t{1}}), Error);
  ArrayPtr array = builder->Finish();
  EXPECT_EQ(array->length, 2);
  EXPECT_EQ(array->null_count, 2);
  EXPECT_TRUE(array->IsNull(0) && array->IsNull(1));
  ValidateArray(*array, "null");
  ArrayPtr taken = Take(*array, std::vector<int64_t>{1, 1, 0});
  EXPECT_EQ(taken->length, 3);
  EXPECT_EQ(taken->null_count, 3);
  EXPECT_EQ(Concatenate({array, taken})->null_count, 5);
}

}  // namespace
}  // namespace lancelet
