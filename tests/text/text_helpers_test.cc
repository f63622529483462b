// The building blocks: base64, half precision, shortest floats, dates, UTF-8.
#include <gtest/gtest.h>

#include <cmath>

#include "text/base64.h"
#include "text/number_text.h"
#include "text/temporal_text.h"
#include "text/utf8_text.h"

namespace lancelet::text {
namespace {

TEST(Base64, EncodesAndDecodesWithPadding) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Decode("Zm8="), "fo");
  EXPECT_EQ(Base64Decode("Zm8"), "fo");  // unpadded is accepted
  EXPECT_EQ(Base64Decode("Zg=="), "f");
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_FALSE(Base64Decode("Zm9"));  // "fo" is Zm8: the unused low bits must be zero
  EXPECT_FALSE(Base64Decode("Z"));
  EXPECT_FALSE(Base64Decode("Zm=v"));
  EXPECT_FALSE(Base64Decode("Zh=="));  // nonzero leftover bits
  EXPECT_FALSE(Base64Decode("Zm-_"));  // URL alphabet is not standard base64
}

TEST(Half, ConvertsBothWays) {
  EXPECT_EQ(HalfToDouble(0x3C00), 1.0);
  EXPECT_EQ(HalfToDouble(0xC000), -2.0);
  EXPECT_EQ(HalfToDouble(0x7BFF), 65504.0);
  EXPECT_EQ(HalfToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(HalfToDouble(0x0400), std::ldexp(1.0, -14));
  EXPECT_TRUE(std::isnan(HalfToDouble(0x7E00)));
  EXPECT_EQ(DoubleToHalf(1.0), 0x3C00);
  EXPECT_EQ(DoubleToHalf(-0.0), 0x8000);
  EXPECT_EQ(DoubleToHalf(65504.0), 0x7BFF);
  EXPECT_EQ(DoubleToHalf(65519.0), 0x7BFF);
  EXPECT_EQ(DoubleToHalf(65520.0), 0x7C00);  // tie rounds to even: infinity
  EXPECT_EQ(DoubleToHalf(1e10), 0x7C00);
  EXPECT_EQ(DoubleToHalf(std::ldexp(1.0, -25)), 0x0000);       // tie to even (zero)
  EXPECT_EQ(DoubleToHalf(std::ldexp(3.0, -25)), 0x0002);       // 1.5 units: tie to even (2)
  EXPECT_EQ(DoubleToHalf(std::ldexp(1023.5, -24)), 0x0400);    // rounds up into the normals
  EXPECT_EQ(DoubleToHalf(1.0 + std::ldexp(1.0, -11)), 0x3C00);  // tie to even
  EXPECT_EQ(DoubleToHalf(1.0 + std::ldexp(3.0, -11)), 0x3C02);  // tie to even (up)
  EXPECT_EQ(DoubleToHalf(0.1), 0x2E66);
  EXPECT_EQ(DoubleToHalf(std::nan("")) & 0x7E00, 0x7E00);
  for (uint32_t bits = 0; bits < 0x7C00; ++bits) {
    ASSERT_EQ(DoubleToHalf(HalfToDouble(static_cast<uint16_t>(bits))), bits);
  }
}

TEST(Half, ShortestTextRoundTripsForEveryFiniteValue) {
  for (uint32_t bits = 0; bits < 0x7C00; ++bits) {
    const std::string text = FormatFloat16(static_cast<uint16_t>(bits));
    auto parsed = ParseFloat64(text);
    ASSERT_TRUE(parsed) << text;
    ASSERT_EQ(DoubleToHalf(*parsed), bits) << text;
  }
  EXPECT_EQ(FormatFloat16(0x3555), "0.3333");
  EXPECT_EQ(FormatFloat16(0x5640), "100");
  EXPECT_EQ(FormatFloat16(0x0400), "0.00006104");
}

TEST(Numbers, ParseStrictly) {
  EXPECT_EQ(ParseInt64("-42"), -42);
  EXPECT_EQ(ParseInt64("+42"), 42);
  EXPECT_FALSE(ParseInt64("+-4"));
  EXPECT_FALSE(ParseInt64("4 "));
  EXPECT_FALSE(ParseInt64(""));
  EXPECT_FALSE(ParseUInt64("-1"));
  EXPECT_EQ(ParseUInt64("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseUInt64("18446744073709551616"));
  EXPECT_EQ(ParseFloat64("1e3"), 1000.0);
  EXPECT_EQ(ParseFloat64("+.5"), 0.5);
  EXPECT_TRUE(std::isnan(*ParseFloat64("NaN")));
  EXPECT_EQ(ParseFloat64("-Infinity"), -INFINITY);
  EXPECT_EQ(ParseFloat64("INF"), INFINITY);
  EXPECT_FALSE(ParseFloat64("1e999"));
  EXPECT_FALSE(ParseFloat64("0x10"));
  EXPECT_FALSE(ParseFloat64("1,5"));
  EXPECT_EQ(ParseFloat32("0.1"), 0.1f);
}

TEST(Temporal, FormatsAndParses) {
  EXPECT_EQ(FormatDate(-719162), "0001-01-01");
  EXPECT_EQ(FormatDate(2932896), "9999-12-31");
  EXPECT_EQ(FormatDate(2932897), "+10000-01-01");
  EXPECT_EQ(FormatDate(-719528), "0000-01-01");
  EXPECT_EQ(FormatDate(-719529), "-0001-12-31");
  EXPECT_EQ(ParseDate("1969-12-31"), -1);
  EXPECT_EQ(ParseDate("+10000-01-01"), 2932897);
  EXPECT_EQ(ParseDate("-0001-12-31"), -719529);
  EXPECT_FALSE(ParseDate("+100-01-01"));
  EXPECT_EQ(ParseDate("2000-02-29"), 11016);
  EXPECT_FALSE(ParseDate("1900-02-29"));
  EXPECT_FALSE(ParseDate("2024-13-01"));
  EXPECT_FALSE(ParseDate("2024-1-01"));
  EXPECT_EQ(ParseDateTime("1969-12-31T23:59:59.999999999", TimeUnit::kNano)->value, -1);
  EXPECT_EQ(ParseDateTime("1970-01-01", TimeUnit::kSecond)->value, 0);
  EXPECT_EQ(ParseDateTime("1970-01-01T00:00", TimeUnit::kSecond)->value, 0);
  EXPECT_EQ(ParseDateTime("1970-01-01T00:00:01.5", TimeUnit::kMilli)->value, 1500);
  EXPECT_EQ(ParseDateTime("1970-01-01T00:00:01.000000", TimeUnit::kSecond)->value, 1);  // zeros are fine
  EXPECT_FALSE(ParseDateTime("1970-01-01T00:00:01.5", TimeUnit::kSecond));
  EXPECT_EQ(ParseDateTime("1970-01-01T05:30:00+05:30", TimeUnit::kSecond)->value, 0);
  EXPECT_EQ(ParseDateTime("1970-01-01T00:00:00-0100", TimeUnit::kSecond)->value, 3600);
  EXPECT_TRUE(ParseDateTime("1970-01-01T00:00:00Z", TimeUnit::kSecond)->has_offset);
  EXPECT_FALSE(ParseDateTime("1970-01-01T00:00:00", TimeUnit::kSecond)->has_offset);
  EXPECT_FALSE(ParseDateTime("1970-01-01T24:00:00", TimeUnit::kSecond));
  EXPECT_FALSE(ParseDateTime("1970-01-01T00:00:00 UTC", TimeUnit::kSecond));
  EXPECT_FALSE(ParseDateTime("2300-01-01T00:00:00", TimeUnit::kNano));  // beyond int64 nanoseconds
  EXPECT_EQ(FormatTimestamp(-1, TimeUnit::kMilli, true), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatTimestamp(INT64_MIN, TimeUnit::kNano, false), "1677-09-21T00:12:43.145224192");
  EXPECT_EQ(FormatTimestamp(INT64_MAX, TimeUnit::kNano, false), "2262-04-11T23:47:16.854775807");
}

TEST(Utf8, ValidatesAndReplaces) {
  EXPECT_TRUE(IsValidUtf8("h\xC3\xA9 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_EQ(SanitizeUtf8("a\xF0\x9F\x98" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(CountCodePoints("h\xC3\xA9"), 2u);
  EXPECT_EQ(PrefixCodePoints("h\xC3\xA9x", 2), "h\xC3\xA9");
}

}  // namespace
}  // namespace lancelet::text
