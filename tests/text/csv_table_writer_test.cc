// Exact CSV and table output, and FormatValue in every style.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "text/text_test_util.h"

namespace lancelet {
namespace {

using text_test::Csv;
using text_test::OneColumn;
using text_test::S;
using text_test::Table;
using Payload = Scalar::Payload;
const Payload kNull = std::monostate{};

Scalar Str(const std::string& s) { return S(DataType::Utf8(), s); }
Scalar F32(double v) { return S(DataType::Float32(), v); }

// One batch with a column of every common kind.
RecordBatchPtr MixedBatch() {
  auto schema = Schema::Parse(
      "id:int64,name:utf8,score:float64,tags:list<utf8>,emb:fixed_size_list<float32,2>,data:binary,"
      "day:date32,ts:timestamp<ms,UTC>");
  auto col = [&](size_t i, std::vector<Payload> values) {
    std::vector<Scalar> scalars;
    for (auto& v : values) scalars.push_back(Scalar{schema->field(i)->type, v});
    return MakeArray(schema->field(i)->type, scalars);
  };
  const double inf = std::numeric_limits<double>::infinity();
  return RecordBatch::Make(
      schema,
      {col(0, {int64_t{1}, int64_t{2}, int64_t{-3}, int64_t{4}, kNull}),
       col(1, {std::string("plain"), std::string("has,comma"), std::string("quote \"x\""), std::string(""),
               std::string("line\nbreak")}),
       col(2, {0.1, std::nan(""), -0.0, inf, kNull}),
       col(3, {std::vector<Scalar>{Str("a")}, std::vector<Scalar>{}, kNull, std::vector<Scalar>{Str("a,b")},
               std::vector<Scalar>{Str("q\"")}}),
       col(4, {std::vector<Scalar>{F32(0.1), F32(0.2)}, kNull, std::vector<Scalar>{F32(-1), F32(1e10)}, kNull,
               kNull}),
       col(5, {std::string("ab"), std::string(""), kNull, std::string("\xFF"), kNull}),
       col(6, {int64_t{0}, int64_t{-1}, kNull, int64_t{19723}, kNull}),
       col(7, {int64_t{0}, int64_t{-1}, kNull, int64_t{1704067200123}, kNull})});
}

TEST(CsvWriter, EveryKindWithQuotingAndNulls) {
  EXPECT_EQ(Csv(*MixedBatch()),
            "id,name,score,tags,emb,data,day,ts\n"
            "1,plain,0.1,\"[\"\"a\"\"]\",\"[0.1,0.2]\",YWI=,1970-01-01,1970-01-01T00:00:00.000Z\n"
            "2,\"has,comma\",NaN,\"[]\",,\"\",1969-12-31,1969-12-31T23:59:59.999Z\n"
            "-3,\"quote \"\"x\"\"\",-0,,\"[-1,10000000000]\",,,\n"
            "4,\"\",Infinity,\"[\"\"a,b\"\"]\",,/w==,2024-01-01,2024-01-01T00:00:00.123Z\n"
            ",\"line\nbreak\",,\"[\"\"q\\\"\"\"\"]\",,,,\n");
}

TEST(CsvWriter, DelimiterAndNoHeader) {
  std::ostringstream out;
  auto batch = OneColumn(DataType::Utf8(), {std::string("a;b"), std::string("c,d")});
  auto writer = MakeCsvWriter(out, batch->schema(), CsvWriteOptions{';', false});
  writer->Write(*batch);
  writer->Finish();
  EXPECT_EQ(out.str(), "\"a;b\"\nc,d\n");
}

TEST(CsvWriter, SingleColumnNullIsBlankLine) {
  EXPECT_EQ(Csv(*OneColumn(DataType::Int32(), {int64_t{1}, kNull, int64_t{3}})), "v\n1\n\n3\n");
}

TEST(TableWriter, AlignsShortensAndCounts) {
  auto schema = Schema::Parse("id:int64,name:utf8,emb:fixed_size_list<float32,5>,score:float64");
  auto emb = [](std::vector<double> v) {
    std::vector<Scalar> items;
    for (double x : v) items.push_back(F32(x));
    return Payload(items);
  };
  auto col = [&](size_t i, std::vector<Payload> values) {
    std::vector<Scalar> scalars;
    for (auto& v : values) scalars.push_back(Scalar{schema->field(i)->type, v});
    return MakeArray(schema->field(i)->type, scalars);
  };
  auto batch = RecordBatch::Make(
      schema, {col(0, {int64_t{1}, int64_t{22}, int64_t{3}}),
               col(1, {std::string("alice"), kNull, std::string("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwx")}),
               col(2, {emb({0.12, -0.5, 0.33, 1, 2}), kNull, emb({1, 2, 3, 4, 5})}),
               col(3, {0.5, -1.25, std::nan("")})});
  EXPECT_EQ(Table(*batch),
            "id | name                                     | emb                            | score\n"
            "---+------------------------------------------+--------------------------------+------\n"
            " 1 | alice                                    | [0.12, -0.5, 0.33, \xE2\x80\xA6 5 values] |   0.5\n"
            "22 | NULL                                     | NULL                           | -1.25\n"
            " 3 | abcdefghijklmnopqrstuvwxyzabcdefghijklm\xE2\x80\xA6 | [1, 2, 3, \xE2\x80\xA6 5 values]          |   NaN\n"
            "(3 rows)\n");
}

TEST(CsvWriter, NonAsciiAndControlCharactersStayRaw) {
  EXPECT_EQ(Csv(*OneColumn(DataType::Utf8(), {std::string("\xC3\xA9t\xC3\xA9"), std::string("a\x01\tb"),
                                              std::string("bad\xFF"), std::string("cr\r")})),
            "v\n\xC3\xA9t\xC3\xA9\na\x01\tb\nbad\xEF\xBF\xBD\n\"cr\r\"\n");
}

TEST(TableWriter, WidthsCountCodePoints) {
  auto schema = Schema::Parse("w:utf8,n:int32");
  auto batch = RecordBatch::Make(
      schema, {MakeArray(DataType::Utf8(), {Str("\xC3\xA9t\xC3\xA9"), Str("ab")}),
               MakeArray(DataType::Int32(), {S(DataType::Int32(), int64_t{1}), S(DataType::Int32(), int64_t{2})})});
  // "été" is three columns wide (five bytes).
  EXPECT_EQ(Table(*batch), "w   | n\n----+--\n\xC3\xA9t\xC3\xA9 | 1\nab  | 2\n(2 rows)\n");
}

TEST(TableWriter, ANullIsToldApartFromTheStringNull) {
  auto strings = OneColumn(DataType::Utf8(), {std::string("NULL"), kNull, std::string("null")});
  EXPECT_EQ(Table(*strings), "v\n------\n'NULL'\nNULL\nnull\n(3 rows)\n");
}

TEST(TableWriter, EmptyAndSingleRow) {
  auto empty = OneColumn(DataType::Utf8(), {});
  EXPECT_EQ(Table(*empty), "v\n-\n(0 rows)\n");
  EXPECT_EQ(Table(*OneColumn(DataType::Utf8(), {std::string("x")}, "name")), "name\n----\nx\n(1 row)\n");
}

TEST(TableWriter, StreamsAfterBufferedRowsWithTheirWidths) {
  std::ostringstream out;
  auto schema = Schema::Parse("s:utf8,n:int32");
  auto writer = MakeTableWriter(out, schema, TableWriteOptions{2});
  auto batch = [&](std::string s, int64_t n) {
    return RecordBatch::Make(schema, {MakeArray(DataType::Utf8(), {Str(s)}),
                                      MakeArray(DataType::Int32(), {S(DataType::Int32(), n)})});
  };
  writer->Write(*batch("ab", 1));
  EXPECT_EQ(out.str(), "");  // still sizing columns
  writer->Write(*batch("a", 10));
  EXPECT_EQ(out.str(), "s  |  n\n---+---\nab |  1\na  | 10\n");
  writer->Write(*batch("longer", 1000));  // printed at once, out of line
  writer->Finish();
  EXPECT_EQ(out.str(), "s  |  n\n---+---\nab |  1\na  | 10\nlonger | 1000\n(3 rows)\n");
}

// max_rows shows the first and the last rows (two and one of three), sized over what is
// shown (not over 1000 or "dddd"), with a "…" row between and both counts at the end.
TEST(TableWriter, MaxRowsShowsTheFirstAndLastRows) {
  std::ostringstream out;
  auto schema = Schema::Parse("s:utf8,n:int32");
  TableWriteOptions options;
  options.max_rows = 3;
  auto writer = MakeTableWriter(out, schema, options);
  auto batch = [&](std::string s, int64_t n) {
    return RecordBatch::Make(schema, {MakeArray(DataType::Utf8(), {Str(s)}),
                                      MakeArray(DataType::Int32(), {S(DataType::Int32(), n)})});
  };
  for (auto [s, n] : std::vector<std::pair<std::string, int64_t>>{{"a", 1}, {"bb", 2}, {"c", 1000}, {"dddd", 4}, {"e", 5}})
    writer->Write(*batch(s, n));
  EXPECT_EQ(out.str(), "");
  writer->Finish();
  EXPECT_EQ(out.str(), "s  | n\n---+--\na  | 1\nbb | 2\n…  | …\ne  | 5\n(5 rows, 3 shown)\n");
  // Not more rows than the limit: printed as they are.
  std::ostringstream few;
  auto all = MakeTableWriter(few, schema, options);
  all->Write(*batch("a", 1));
  all->Finish();
  EXPECT_EQ(few.str(), "s | n\n--+--\na | 1\n(1 row)\n");
}

TEST(FormatValue, TableStyleNestedAndEscaped) {
  auto inner = DataType::List(DataType::Utf8());
  auto type = DataType::Struct({Field::Make("a", DataType::Int32()), Field::Make("b", inner)});
  auto array = MakeArray(type, {S(type, std::vector<Scalar>{S(DataType::Int32(), int64_t{1}),
                                                            S(inner, std::vector<Scalar>{Str("p"), Str("q r")})}),
                                S(type, std::vector<Scalar>{text_test::Null(DataType::Int32()),
                                                            text_test::Null(inner)})});
  EXPECT_EQ(FormatValue(*array, 0, ValueStyle::kTable), "{a: 1, b: [\"p\", \"q r\"]}");
  EXPECT_EQ(FormatValue(*array, 1, ValueStyle::kTable), "{a: NULL, b: NULL}");
  EXPECT_EQ(FormatValue(*array, 0, ValueStyle::kJson), "{\"a\":1,\"b\":[\"p\",\"q r\"]}");
  EXPECT_EQ(FormatValue(*array, 0, ValueStyle::kCsv), "{\"a\":1,\"b\":[\"p\",\"q r\"]}");

  auto strings = MakeArray(DataType::Utf8(), {Str("tab\there\nnext"), Str(std::string(41, 'x')),
                                              Str(std::string(40, 'y')), text_test::Null(DataType::Utf8())});
  EXPECT_EQ(FormatValue(*strings, 0, ValueStyle::kTable), "tab\\there\\nnext");
  EXPECT_EQ(FormatValue(*strings, 0, ValueStyle::kCsv), "tab\there\nnext");
  EXPECT_EQ(FormatValue(*strings, 0, ValueStyle::kJson), "\"tab\\there\\nnext\"");
  EXPECT_EQ(FormatValue(*strings, 1, ValueStyle::kTable), std::string(39, 'x') + "\xE2\x80\xA6");
  EXPECT_EQ(FormatValue(*strings, 2, ValueStyle::kTable), std::string(40, 'y'));
  EXPECT_EQ(FormatValue(*strings, 3, ValueStyle::kTable), "NULL");
  EXPECT_EQ(FormatValue(*strings, 3, ValueStyle::kCsv), "");
  EXPECT_EQ(FormatValue(*strings, 3, ValueStyle::kJson), "null");

  auto list = MakeArray(DataType::List(DataType::Int64()),
                        {S(DataType::List(DataType::Int64()),
                           std::vector<Scalar>{S(DataType::Int64(), int64_t{1}), S(DataType::Int64(), int64_t{2}),
                                               S(DataType::Int64(), int64_t{3})}),
                         S(DataType::List(DataType::Int64()), std::vector<Scalar>{})});
  EXPECT_EQ(FormatValue(*list, 0, ValueStyle::kTable), "[1, 2, 3]");
  EXPECT_EQ(FormatValue(*list, 1, ValueStyle::kTable), "[]");

  auto floats = MakeArray(DataType::Float64(), {S(DataType::Float64(), -std::numeric_limits<double>::infinity())});
  EXPECT_EQ(FormatValue(*floats, 0, ValueStyle::kTable), "-Infinity");
  EXPECT_EQ(FormatValue(*floats, 0, ValueStyle::kCsv), "-Infinity");
  EXPECT_EQ(FormatValue(*floats, 0, ValueStyle::kJson), "\"-Infinity\"");
}

}  // namespace
}  // namespace lancelet
