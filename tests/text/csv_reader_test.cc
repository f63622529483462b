// CSV parsing with given and inferred schemas, streaming, and error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "text/text_test_util.h"

namespace lancelet {
namespace {

using text_test::ErrorOf;
using text_test::Jsonl;
using text_test::ReadCsvText;
using text_test::ReadJsonText;

TextReadOptions WithSchema(const std::string& schema) {
  TextReadOptions options;
  options.schema = Schema::Parse(schema);
  return options;
}

std::string FieldTypes(const Schema& schema) {
  std::string out;
  for (const auto& f : schema.fields()) out += f->name + ":" + f->type->ToString() + "\n";
  return out;
}

TEST(CsvReader, GivenSchemaParsesEveryKind) {
  auto result = ReadCsvText(
      "id,name,score,flag,day,ts,emb,data\n"
      "1,alice,0.5,true,2024-01-01,2024-01-01T00:00:00.5Z,\"[0.1, 0.2]\",YWI=\n"
      "-2,\"b,ob\",nan,0,1969-12-31,1969-12-31 23:59:59,\"[1,2]\",\n"
      ",\"\",-inf,FALSE,,,,\"\"\n"
      " 7 ,\"multi\nline\",+1e3,1,2000-02-29,2024-01-01T01:00:00+01:00,\"[0.35,4]\",/w==\n",
      WithSchema("id:int32,name:utf8,score:float32,flag:bool,day:date32,ts:timestamp<ms,UTC>,"
                 "emb:fixed_size_list<float32,2>,data:binary"));
  ASSERT_EQ(result.batch->num_rows(), 4);
  EXPECT_EQ(Jsonl(*result.batch),
            "{\"id\":1,\"name\":\"alice\",\"score\":0.5,\"flag\":true,\"day\":\"2024-01-01\","
            "\"ts\":\"2024-01-01T00:00:00.500Z\",\"emb\":[0.1,0.2],\"data\":\"YWI=\"}\n"
            "{\"id\":-2,\"name\":\"b,ob\",\"score\":\"NaN\",\"flag\":false,\"day\":\"1969-12-31\","
            "\"ts\":\"1969-12-31T23:59:59.000Z\",\"emb\":[1,2],\"data\":null}\n"
            "{\"id\":null,\"name\":\"\",\"score\":\"-Infinity\",\"flag\":false,\"day\":null,\"ts\":null,"
            "\"emb\":null,\"data\":\"\"}\n"
            "{\"id\":7,\"name\":\"multi\\nline\",\"score\":1000,\"flag\":true,\"day\":\"2000-02-29\","
            "\"ts\":\"2024-01-01T00:00:00.000Z\",\"emb\":[0.35,4],\"data\":\"/w==\"}\n");
}

TEST(CsvReader, TimesDurationsAndDecimalsReadFromTheirText) {
  auto result = ReadCsvText("t,du,d,n\n23:59:59,-3,-0.5,\n,9, 1.999 ,\n",
                            WithSchema("t:time32<s>,du:duration<s>,d:decimal128<4,2>,n:null"));
  EXPECT_EQ(Jsonl(*result.batch), "{\"t\":\"23:59:59\",\"du\":-3,\"d\":-0.50,\"n\":null}\n"
                                  "{\"t\":null,\"du\":9,\"d\":2.00,\"n\":null}\n");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("d\n1.2.3\n", WithSchema("d:decimal128<4,2>")); }),
            "in.csv: row 2, column 'd': expected decimal128<4,2>, found \"1.2.3\"");
}

// A cell holding a JSON array of numbers is read without a JSON document
// (value_parse.cc's AppendNumberList); the values, and the errors, must be those of the
// JSON path, which a JSON lines file takes: compared here on texts at its edges.
TEST(CsvReader, NumberListsReadAsTheJsonPathReadsThem) {
  const std::vector<std::string> texts = {
      "[]", " [ 1 , 2.5e1 ,-3E-2 ] ", "[0.1,0.2,0.30000000000000004]", "[-0, 0, -0.0, 1e0]",
      "[16777217, 16777217.0, 3.4028235e38, 1e-50]", "[123456789012345, 1234567890123456, 12345678901234567890]",
      "[9007199254740993]", "[2147483648, -2147483649]", "[1.5, 2]", "[null, 1]", "[01]", "[1,]", "[.5]",
      "[1e999]", "[1]x", "[\"\"1\"\"]", "[+1]", "[1 2]", "[-]", "[1.]", "[1e]", "[\t1\r ]"};
  for (const std::string type : {"list<float32>", "list<float64>", "list<int32>", "list<int64>",
                                 "fixed_size_list<float32,2>", "large_list<float64>"}) {
    for (const std::string& text : texts) {
      std::string json_text = text;  // the CSV cell's doubled quotes undone
      for (size_t at; (at = json_text.find("\"\"")) != std::string::npos;) json_text.replace(at, 2, "\"");
      std::string csv_out, json_out, csv_error, json_error;
      csv_error = ErrorOf([&] { csv_out = Jsonl(*ReadCsvText("e\n\"" + text + "\"\n", WithSchema("e:" + type)).batch); });
      json_error = ErrorOf([&] { json_out = Jsonl(*ReadJsonText("{\"e\":" + json_text + "}\n", WithSchema("e:" + type)).batch); });
      EXPECT_EQ(csv_out, json_out) << type << " " << text;
      // The messages differ in file and row only, and the CSV one quotes the cell.
      EXPECT_EQ(csv_error.empty(), json_error.empty()) << type << " " << text << ": " << csv_error << " / " << json_error;
    }
  }
  // Spelled out, what both give for a few of them.
  EXPECT_EQ(Jsonl(*ReadCsvText("e\n\"[16777217, -0, 0.1]\"\n", WithSchema("e:list<float32>")).batch),
            "{\"e\":[16777216,-0,0.1]}\n");
  EXPECT_EQ(Jsonl(*ReadCsvText("e\n\"[1234567890123456, 12345678901234567]\"\n", WithSchema("e:list<int64>")).batch),
            "{\"e\":[1234567890123456,12345678901234567]}\n");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("e\n\"[2147483648]\"\n", WithSchema("e:list<int32>")); }),
            "in.csv: row 2, column 'e[0]': 2147483648 does not fit int32");
}

// Past the inference rows, records are split into chunks of about 2 MiB that threads
// parse at once (csv_reader.cc): the rows, and the line an error names, must be one
// thread's, with quoted line breaks, doubled quotes, delimiters and every line end
// (LF, CRLF, a lone CR) on both sides of the chunks' ends.
TEST(CsvReader, ChunksParsedInParallelGiveOneThreadsRowsAndErrors) {
  std::string text = "id,s,e\r\n";
  for (int i = 0; i < 150000; ++i)
    text += fmt::format("{},\"line {}\nnext \"\"q\"\", x\",\"[{}, {}.5]\"{}", i, i, i, i,
                        i % 3 == 0 ? "\r\n" : i % 3 == 1 ? "\n" : "\r");
  ASSERT_GT(text.size(), size_t(6) << 20);
  const TextReadOptions options = WithSchema("id:int64,s:utf8,e:list<float64>");
  std::string broken = text;  // record 120000 starts on line 2 + 2 * 120000
  broken.replace(broken.find("[120000, 120000.5]"), 18, "[120000, x]");
  std::string one_thread, one_thread_error;
  for (const int threads : {1, 2, 8}) {
    SetReadAheadThreads(threads);
    const auto result = ReadCsvText(text, options);
    ASSERT_EQ(result.batch->num_rows(), 150000);
    const std::string rows = Jsonl(*result.batch);
    const std::string error = ErrorOf([&] { ReadCsvText(broken, options); });
    if (threads == 1) {
      one_thread = rows, one_thread_error = error;
      EXPECT_EQ(result.batches, 3);  // 65536 rows each
    } else {
      EXPECT_EQ(rows, one_thread) << threads << " threads";
      EXPECT_EQ(error, one_thread_error) << threads << " threads";
      EXPECT_GT(result.batches, 3) << threads << " threads";  // chunks of 2 MiB hold fewer rows
    }
  }
  SetReadAheadThreads(0);
  EXPECT_EQ(one_thread.substr(0, one_thread.find('\n')), R"({"id":0,"s":"line 0\nnext \"q\", x","e":[0,0.5]})");
  EXPECT_EQ(one_thread_error, "in.csv: row 240002, column 'e': expected list<float64> as JSON text, found \"[120000, x]\"");
}

// A reader that began handing out chunks keeps reading through them when the thread count
// drops to one (SQL's SET threads, say) meanwhile: no record is lost or read twice.
TEST(CsvReader, AThreadCountChangedWhileReadingLosesNoRecord) {
  std::string text = "id\n";
  for (int i = 0; i < 200'000; ++i) text += std::to_string(i) + "\n";
  TextReadOptions options;
  options.batch_rows = 50'000;
  SetReadAheadThreads(2);
  auto reader = ReadCsv(text_test::Input(text), "in.csv", options);
  EXPECT_EQ(text_test::RowsAndSumWhileThreadsDrop(*reader), std::make_pair(int64_t(200'000), int64_t(199'999) * 200'000 / 2));
}

TEST(CsvReader, SchemaColumnsMayComeInAnyHeaderOrder) {
  auto result = ReadCsvText("b,a\nx,1\n", WithSchema("a:int64,b:utf8"));
  EXPECT_EQ(Jsonl(*result.batch), "{\"a\":1,\"b\":\"x\"}\n");
}

TEST(CsvReader, IntegerRangesAreChecked) {
  auto result = ReadCsvText("a,b,c\n-9223372036854775808,18446744073709551615,-128\n",
                            WithSchema("a:int64,b:uint64,c:int8"));
  EXPECT_EQ(Jsonl(*result.batch), "{\"a\":-9223372036854775808,\"b\":18446744073709551615,\"c\":-128}\n");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("c\n128\n", WithSchema("c:int8")); }),
            "in.csv: row 2, column 'c': 128 does not fit int8");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("c\n-1\n", WithSchema("c:uint32")); }),
            "in.csv: row 2, column 'c': expected uint32, found \"-1\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("c\n9223372036854775808\n", WithSchema("c:int64")); }),
            "in.csv: row 2, column 'c': expected int64, found \"9223372036854775808\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("c\n1.5\n", WithSchema("c:int64")); }),
            "in.csv: row 2, column 'c': expected int64, found \"1.5\"");
}

TEST(CsvReader, ValueNotFittingTheTypeNamesFileLineColumnAndType) {
  EXPECT_EQ(ErrorOf([] { ReadCsvText("id,n\n1,2\n2,abc\n", WithSchema("id:int32,n:int32")); }),
            "in.csv: row 3, column 'n': expected int32, found \"abc\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("d\n2023-02-29\n", WithSchema("d:date32")); }),
            "in.csv: row 2, column 'd': expected date32, found \"2023-02-29\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("t\n2024-01-01T00:00:00.1234\n", WithSchema("t:timestamp<ms>")); }),
            "in.csv: row 2, column 't': expected timestamp<ms>, found \"2024-01-01T00:00:00.1234\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("n\n\"1\n2\"\n", WithSchema("n:int32")); }),
            "in.csv: row 2, column 'n': expected int32, found \"1\\n2\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("b\nyes\n", WithSchema("b:bool")); }),
            "in.csv: row 2, column 'b': expected bool, found \"yes\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("e\n\"[1,2,3]\"\n", WithSchema("e:fixed_size_list<float32,2>")); }),
            "in.csv: row 2, column 'e': expected fixed_size_list<float32,2> (2 items), got 3 items, found [1,2,3]");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("e\n\"[1,\"\"x\"\"]\"\n", WithSchema("e:list<int32>")); }),
            "in.csv: row 2, column 'e[1]': expected int32, found \"x\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("e\n[1\n", WithSchema("e:list<int32>")); }),
            "in.csv: row 2, column 'e': expected list<int32> as JSON text, found \"[1\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("x\n!!\n", WithSchema("x:binary")); }),
            "in.csv: row 2, column 'x': expected binary (base64), found \"!!\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("x\nYWI=\n", WithSchema("x:fixed_size_binary<3>")); }),
            "in.csv: row 2, column 'x': expected fixed_size_binary<3> (3 bytes, base64), got 2 bytes, found \"YWI=\"");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("s\n\xFF\n", WithSchema("s:utf8")); }),
            "in.csv: row 2, column 's': expected utf8 (valid UTF-8), found \"\xEF\xBF\xBD\"");
}

TEST(CsvReader, MalformedCsvNamesTheLine) {
  EXPECT_EQ(ErrorOf([] { ReadCsvText("a,b\n1,2\n3,\"oops\n4,5\n"); }),
            "in.csv:3: unterminated quoted field in cell 2 (no closing quote before the end of the file)");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("a,b\n1,2\n3\n"); }), "in.csv:3: expected 2 cells as in the header, found 1");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("a,b\n1,2,3\n"); }), "in.csv:2: expected 2 cells as in the header, found 3");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("a,b\n\"x\"y,2\n"); }),
            "in.csv:2: expected a delimiter or line end after the closing quote of cell 1, found 'y'");
  EXPECT_EQ(ErrorOf([] { ReadCsvText(""); }), "in.csv:1: expected a header row, found an empty file");
  // Line numbers count physical lines, including those inside quoted cells and CRLF endings.
  EXPECT_EQ(ErrorOf([] { ReadCsvText("a,b\r\n\"x\r\ny\",1\r\n2,oops\r\n", WithSchema("a:utf8,b:int32")); }),
            "in.csv: row 4, column 'b': expected int32, found \"oops\"");
}

TEST(CsvReader, HeaderMustMatchAGivenSchema) {
  EXPECT_EQ(ErrorOf([] { ReadCsvText("a,c\n1,2\n", WithSchema("a:int32,b:int32")); }),
            "in.csv:1: header column 'c' is not in the given schema (" +
                Schema::Parse("a:int32,b:int32")->ToString() + ")");
  EXPECT_EQ(ErrorOf([] { ReadCsvText("a\n1\n", WithSchema("a:int32,b:int32")); }),
            "in.csv:1: schema field 'b' is missing from the header");
}

TEST(CsvReader, InfersTypes) {
  auto result = ReadCsvText(
      "i,f,b,d,t,tz,s,e,l,n,m,v\n"
      "1,1.5,true,2024-01-01,2024-01-01T10:00:00,2024-01-01T10:00:00Z,x,\"[0.5,1]\",\"[1,2,3]\",,1,\"[1.5]\"\n"
      "-2,2,False,2024-02-29,2024-01-01 10:00:00.123456,2024-01-01T10:00:00+01:00,y,\"[1,2.5]\",\"[4]\",,abc,"
      "\"[1,2]\"\n"
      "3,nan,,,,,,,,,,\n");
  EXPECT_EQ(FieldTypes(*result.schema),
            "i:int64\nf:float64\nb:bool\nd:date32\nt:timestamp<us>\ntz:timestamp<us,UTC>\ns:utf8\n"
            "e:fixed_size_list<float32,2>\nl:list<int64>\nn:utf8\nm:utf8\nv:list<float64>\n");
  EXPECT_EQ(Jsonl(*result.batch),
            "{\"i\":1,\"f\":1.5,\"b\":true,\"d\":\"2024-01-01\",\"t\":\"2024-01-01T10:00:00.000000\","
            "\"tz\":\"2024-01-01T10:00:00.000000Z\",\"s\":\"x\",\"e\":[0.5,1],\"l\":[1,2,3],\"n\":null,\"m\":\"1\","
            "\"v\":[1.5]}\n"
            "{\"i\":-2,\"f\":2,\"b\":false,\"d\":\"2024-02-29\",\"t\":\"2024-01-01T10:00:00.123456\","
            "\"tz\":\"2024-01-01T09:00:00.000000Z\",\"s\":\"y\",\"e\":[1,2.5],\"l\":[4],\"n\":null,\"m\":\"abc\","
            "\"v\":[1,2]}\n"
            "{\"i\":3,\"f\":\"NaN\",\"b\":null,\"d\":null,\"t\":null,\"tz\":null,\"s\":null,\"e\":null,\"l\":null,"
            "\"n\":null,\"m\":null,\"v\":null}\n");
}

// CSV cells are inferred as the JSON values they spell: the same data as CSV and as JSON
// Lines gives the same schema and the same rows.
TEST(CsvReader, InferenceAgreesWithJsonLines) {
  auto csv = ReadCsvText(
      "i,f,d,t,tz,big,e,b,s,n\n"
      "1,1.5,2024-01-01,2024-01-01 10:00:00,2024-01-01T10:00:00Z,18446744073709551615,\"[0.5,1]\",true,x,\n"
      "2,2,2024-01-02,2024-01-01T10:00:00.5,2024-01-01T11:00:00+01:00,1,\"[1,2]\",false,y,\n");
  auto json = text_test::ReadJsonText(
      "{\"i\":1,\"f\":1.5,\"d\":\"2024-01-01\",\"t\":\"2024-01-01 10:00:00\",\"tz\":\"2024-01-01T10:00:00Z\","
      "\"big\":18446744073709551615,\"e\":[0.5,1],\"b\":true,\"s\":\"x\",\"n\":null}\n"
      "{\"i\":2,\"f\":2,\"d\":\"2024-01-02\",\"t\":\"2024-01-01T10:00:00.5\",\"tz\":\"2024-01-01T11:00:00+01:00\","
      "\"big\":1,\"e\":[1,2],\"b\":false,\"s\":\"y\",\"n\":null}\n");
  EXPECT_EQ(FieldTypes(*csv.schema),
            "i:int64\nf:float64\nd:date32\nt:timestamp<us>\ntz:timestamp<us,UTC>\nbig:uint64\n"
            "e:fixed_size_list<float32,2>\nb:bool\ns:utf8\nn:utf8\n");
  EXPECT_EQ(FieldTypes(*json.schema), FieldTypes(*csv.schema));
  EXPECT_EQ(Jsonl(*json.batch), Jsonl(*csv.batch));
}

// An empty cell is NULL, quoted or not, and does not take part in inference.
TEST(CsvReader, EmptyCellsAreNullAndDecideNoType) {
  auto one_row = ReadCsvText("id,price,day\n1,\"\",\n2,2.5,2024-01-01\n");
  EXPECT_EQ(FieldTypes(*one_row.schema), "id:int64\nprice:float64\nday:date32\n");
  EXPECT_EQ(Jsonl(*one_row.batch),
            "{\"id\":1,\"price\":null,\"day\":null}\n{\"id\":2,\"price\":2.5,\"day\":\"2024-01-01\"}\n");
  // Read against a schema, an empty float / date / list field is NULL.
  auto given = ReadCsvText("id,price,v\n1,,\n", WithSchema("id:int32,price:float32,v:fixed_size_list<float32,2>"));
  EXPECT_EQ(Jsonl(*given.batch), "{\"id\":1,\"price\":null,\"v\":null}\n");
}

TEST(CsvReader, WithoutHeaderColumnsAreNumberedOrTheSchemas) {
  TextReadOptions options;
  options.header = false;
  options.delimiter = ';';
  auto inferred = ReadCsvText("1;a\n2;b\n", options);
  EXPECT_EQ(FieldTypes(*inferred.schema), "column0:int64\ncolumn1:utf8\n");
  EXPECT_EQ(Jsonl(*inferred.batch), "{\"column0\":1,\"column1\":\"a\"}\n{\"column0\":2,\"column1\":\"b\"}\n");
  options.schema = Schema::Parse("id:int32,name:utf8");
  auto given = ReadCsvText("1;a\n2;b\n", options);
  EXPECT_EQ(Jsonl(*given.batch), "{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"b\"}\n");
  EXPECT_EQ(ErrorOf([&] { ReadCsvText("1;a;x\n", options); }), "in.csv:1: expected 2 cells, found 3");
}

// column_types fixes the types of the columns it names; the others are inferred.
TEST(CsvReader, ColumnTypesOverrideInference) {
  TextReadOptions options;
  options.column_types = Schema::Parse("v:fixed_size_list<float32,2>,n:int8");
  auto result = ReadCsvText("id,v,n\n1,\"[1,2]\",\n2,,5\n", options);
  EXPECT_EQ(FieldTypes(*result.schema), "id:int64\nv:fixed_size_list<float32,2>\nn:int8\n");
  EXPECT_EQ(Jsonl(*result.batch), "{\"id\":1,\"v\":[1,2],\"n\":null}\n{\"id\":2,\"v\":null,\"n\":5}\n");
}

TEST(CsvReader, InferenceLooksOnlyAtTheFirstRows) {
  TextReadOptions options;
  options.infer_rows = 2;
  EXPECT_EQ(ErrorOf([&] { ReadCsvText("x\n1\n2\nabc\n", options); }),
            "in.csv: row 4, column 'x': expected int64, found \"abc\"");
  options.infer_rows = 3;
  EXPECT_EQ(FieldTypes(*ReadCsvText("x\n1\n2\nabc\n", options).schema), "x:utf8\n");
}

TEST(CsvReader, StreamsBatchesOfAtMostBatchRows) {
  TextReadOptions options;
  options.batch_rows = 2;
  options.infer_rows = 3;  // inference buffers 3 rows, which still come out 2 at a time
  auto reader = ReadCsv(text_test::Input("x\n1\n2\n3\n4\n5\n"), "in.csv", options);
  std::vector<int64_t> sizes;
  while (auto batch = reader->Next()) sizes.push_back(batch->num_rows());
  EXPECT_EQ(sizes, (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(reader->Next(), nullptr);
}

TEST(CsvReader, DefaultBatchSizeIs65536Rows) {
  std::string text = "n\n";
  for (int i = 0; i < 70000; ++i) text += std::to_string(i) + "\n";
  auto reader = ReadCsv(text_test::Input(text), "in.csv");
  EXPECT_EQ(reader->Next()->num_rows(), 65536);
  auto last = reader->Next();
  EXPECT_EQ(last->num_rows(), 70000 - 65536);
  EXPECT_EQ(FormatValue(*last->column(0), last->num_rows() - 1, ValueStyle::kJson), "69999");
  EXPECT_EQ(reader->Next(), nullptr);
}

TEST(CsvReader, DelimitersBlankLinesAndByteOrderMark) {
  TextReadOptions options;
  options.delimiter = ';';
  EXPECT_EQ(Jsonl(*ReadCsvText("\xEF\xBB\xBF" "a;b\n1,5;\"x;y\"\n\n2;z\n", options).batch),
            "{\"a\":\"1,5\",\"b\":\"x;y\"}\n{\"a\":\"2\",\"b\":\"z\"}\n");
  options.delimiter = '\t';
  EXPECT_EQ(Jsonl(*ReadCsvText("a\tb\n1\t2\n", options).batch), "{\"a\":1,\"b\":2}\n");
  // A delimiter byte past ASCII (0xA7, Latin-1's section sign), also after a quoted cell.
  options.delimiter = '\xA7';
  EXPECT_EQ(Jsonl(*ReadCsvText("a\xA7" "b\n1\xA7\"x\"\n", options).batch), "{\"a\":1,\"b\":\"x\"}\n");
  std::string many = "a\xA7" "b\n";  // past the 1000 inference rows: split into chunks as well
  for (int i = 0; i < 1500; ++i) many += std::to_string(i) + "\xA7\"x\"\n";
  SetReadAheadThreads(2);
  const auto chunked = ReadCsvText(many, options);
  SetReadAheadThreads(0);
  ASSERT_EQ(chunked.batch->num_rows(), 1500);
  EXPECT_EQ(Jsonl(*chunked.batch->Slice(1499, 1)), "{\"a\":1499,\"b\":\"x\"}\n");
  // A single-column file: a blank line is a NULL row.
  EXPECT_EQ(Jsonl(*ReadCsvText("a\n1\n\n3\n").batch), "{\"a\":1}\n{\"a\":null}\n{\"a\":3}\n");
  // No trailing newline; CR-only line ends.
  EXPECT_EQ(Jsonl(*ReadCsvText("a,b\r1,2\r3,4").batch), "{\"a\":1,\"b\":2}\n{\"a\":3,\"b\":4}\n");
  // Header only.
  auto empty = ReadCsvText("a,b\n");
  EXPECT_EQ(empty.batches, 0);
  EXPECT_EQ(FieldTypes(*empty.schema), "a:utf8\nb:utf8\n");
}

TEST(CsvReader, RoundTripsWhatTheCsvWriterWrites) {
  auto schema = Schema::Parse(
      "i8:int8,u64:uint64,f16:float16,f32:float32,f64:float64,s:utf8,b:binary,fb:fixed_size_binary<2>,"
      "d:date32,d64:date64,ts:timestamp<ns,UTC>,l:list<int32>,e:fixed_size_list<float32,2>,"
      "st:struct<a:int32,b:utf8>,flag:bool");
  auto type = [&](size_t i) { return schema->field(i)->type; };
  auto one = [&](size_t i, Scalar::Payload a, Scalar::Payload b) {
    return MakeArray(type(i), {Scalar{type(i), a}, Scalar{type(i), b}});
  };
  const double inf = std::numeric_limits<double>::infinity();
  auto batch = RecordBatch::Make(
      schema,
      {one(0, int64_t{-128}, std::monostate{}), one(1, std::numeric_limits<uint64_t>::max(), uint64_t{0}),
       one(2, 0.5, -inf), one(3, 0.1, std::nan("")), one(4, -0.0, 1e300),
       one(5, std::string("a,\"b\"\n\xC3\xA9"), std::string("")), one(6, std::string("\0\1", 2), std::string("")),
       one(7, std::string("xy"), std::monostate{}), one(8, int64_t{-1}, int64_t{0}),
       one(9, int64_t{-1}, int64_t{1}), one(10, int64_t{-1}, std::numeric_limits<int64_t>::max()),
       one(11, std::vector<Scalar>{Scalar{DataType::Int32(), int64_t{1}}, Scalar::Null(DataType::Int32())},
           std::vector<Scalar>{}),
       one(12, std::vector<Scalar>{Scalar{DataType::Float32(), 0.25}, Scalar{DataType::Float32(), -1.0}},
           std::monostate{}),
       one(13, std::vector<Scalar>{Scalar{DataType::Int32(), int64_t{5}}, Scalar{DataType::Utf8(), std::string("q")}},
           std::monostate{}),
       one(14, true, false)});
  TextReadOptions options;
  options.schema = schema;
  auto back = ReadCsvText(text_test::Csv(*batch), options);
  EXPECT_TRUE(back.batch->Equals(*batch)) << Jsonl(*back.batch) << "\nvs\n" << Jsonl(*batch);
}

}  // namespace
}  // namespace lancelet
