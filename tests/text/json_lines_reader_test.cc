// JSON Lines parsing with given and inferred schemas, and error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>

#include <fmt/format.h>

#include "text/text_test_util.h"

namespace lancelet {
namespace {

using text_test::ErrorOf;
using text_test::Jsonl;
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

TEST(JsonLinesReader, GivenSchemaParsesEveryKind) {
  auto result = ReadJsonText(
      "{\"id\": 9007199254740993, \"u\": 18446744073709551615, \"f\": 0.1, \"h\": 0.1, \"s\": \"x\","
      " \"d\": \"2024-01-01\", \"ts\": \"2024-01-01T00:00:00.123Z\", \"bin\": \"AP8=\", \"l\": [1, null],"
      " \"st\": {\"a\": 1, \"zz\": 3}, \"extra\": true}\n"
      "{\"id\": null}\n"
      "\n"
      "{\"f\": \"NaN\", \"h\": \"-Infinity\", \"s\": 12, \"d\": -1, \"ts\": -1, \"l\": [], \"st\": {}}\n",
      WithSchema("id:int64,u:uint64,f:float32,h:float16,s:utf8,d:date32,ts:timestamp<ns>,bin:binary,"
                 "l:list<int32>,st:struct<a:int8,b:utf8>"));
  EXPECT_EQ(Jsonl(*result.batch),
            "{\"id\":9007199254740993,\"u\":18446744073709551615,\"f\":0.1,\"h\":0.1,\"s\":\"x\","
            "\"d\":\"2024-01-01\",\"ts\":\"2024-01-01T00:00:00.123000000\",\"bin\":\"AP8=\",\"l\":[1,null],"
            "\"st\":{\"a\":1,\"b\":null}}\n"
            "{\"id\":null,\"u\":null,\"f\":null,\"h\":null,\"s\":null,\"d\":null,\"ts\":null,\"bin\":null,"
            "\"l\":null,\"st\":null}\n"
            "{\"id\":null,\"u\":null,\"f\":\"NaN\",\"h\":\"-Infinity\",\"s\":\"12\",\"d\":\"1969-12-31\","
            "\"ts\":\"1969-12-31T23:59:59.999999999\",\"bin\":null,\"l\":[],\"st\":{\"a\":null,\"b\":null}}\n");
}

TEST(JsonLinesReader, TimesDurationsDecimalsAndNullReadAgainstTheSchema) {
  auto result = ReadJsonText(
      "{\"t\": \"12:34:56.789\", \"u\": 45296789012, \"du\": -5, \"d\": \"-123.455\", \"w\": 1e-3, \"n\": null}\n"
      "{\"t\": 0, \"u\": \"00:00\", \"du\": \"7\", \"d\": 12, \"w\": \"99999999999999999999999999999999999999\"}\n",
      WithSchema("t:time32<ms>,u:time64<us>,du:duration<ns>,d:decimal128<6,2>,w:decimal256<40,2>,n:null"));
  EXPECT_EQ(Jsonl(*result.batch),
            "{\"t\":\"12:34:56.789\",\"u\":\"12:34:56.789012\",\"du\":-5,\"d\":-123.46,\"w\":0.00,\"n\":null}\n"
            "{\"t\":\"00:00:00.000\",\"u\":\"00:00:00.000000\",\"du\":7,\"d\":12.00,"
            "\"w\":99999999999999999999999999999999999999.00,\"n\":null}\n");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"d\": \"10000\"}\n", WithSchema("d:decimal128<6,2>")); }),
            "in.jsonl: row 1, column 'd': expected decimal128<6,2>, found \"10000\"");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"t\": \"25:00:00\"}\n", WithSchema("t:time32<s>")); }),
            "in.jsonl: row 1, column 't': expected time32<s>, found \"25:00:00\"");
  auto maps = ReadJsonText("{\"m\": {\"a\": 1, \"b\": null}}\n{\"m\": [{\"key\": \"c\", \"value\": 3}]}\n{\"m\": {}}\n",
                           WithSchema("m:map<utf8,int64>"));
  EXPECT_EQ(Jsonl(*maps.batch), "{\"m\":[{\"key\":\"a\",\"value\":1},{\"key\":\"b\",\"value\":null}]}\n"
                                "{\"m\":[{\"key\":\"c\",\"value\":3}]}\n{\"m\":[]}\n");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"n\": 1}\n", WithSchema("n:null")); }),
            "in.jsonl: row 1, column 'n': expected null, found 1");
}

TEST(JsonLinesReader, Int64ExtremesStayExact) {
  auto result = ReadJsonText("{\"a\": -9223372036854775808, \"b\": 9223372036854775807}\n",
                             WithSchema("a:int64,b:int64"));
  EXPECT_EQ(Jsonl(*result.batch), "{\"a\":-9223372036854775808,\"b\":9223372036854775807}\n");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"b\": 9223372036854775808}\n", WithSchema("b:int64")); }),
            "in.jsonl: row 1, column 'b': 9223372036854775808 does not fit int64");
}

TEST(JsonLinesReader, ValueNotFittingTheTypeNamesFileLineKeyAndType) {
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"n\": 1}\n{\"n\": \"abc\"}\n", WithSchema("n:int32")); }),
            "in.jsonl: row 2, column 'n': expected int32, found \"abc\"");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"n\": 1.5}\n", WithSchema("n:int32")); }),
            "in.jsonl: row 1, column 'n': expected int32, found 1.5");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"st\": {\"a\": 300}}\n", WithSchema("st:struct<a:int8>")); }),
            "in.jsonl: row 1, column 'st.a': 300 does not fit int8");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"l\": [[1], [2, \"x\"]]}\n", WithSchema("l:list<list<int32>>")); }),
            "in.jsonl: row 1, column 'l[1][1]': expected int32, found \"x\"");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"b\": 1}\n", WithSchema("b:bool")); }),
            "in.jsonl: row 1, column 'b': expected bool, found 1");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"d\": \"01/02/2024\"}\n", WithSchema("d:date32")); }),
            "in.jsonl: row 1, column 'd': expected date32, found \"01/02/2024\"");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"b\": \"not base64\"}\n", WithSchema("b:large_binary")); }),
            "in.jsonl: row 1, column 'b': expected large_binary (base64), found \"not base64\"");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"e\": [1]}\n", WithSchema("e:fixed_size_list<float32,2>")); }),
            "in.jsonl: row 1, column 'e': expected fixed_size_list<float32,2> (2 items), got 1 items, found [1]");
}

// Past the inference rows, lines are cut into chunks of about 2 MiB that threads parse
// at once (json_lines_reader.cc): the rows, and the line an error names, must be one
// thread's, with blank lines and CRLF line ends on both sides of the chunks' ends.
TEST(JsonLinesReader, ChunksParsedInParallelGiveOneThreadsRowsAndErrors) {
  std::string text;
  for (int i = 0; i < 150000; ++i)
    text += fmt::format("{{\"id\":{},\"s\":\"row {}\",\"e\":[{},{}.5]}}{}", i, i, i, i, i % 7 == 0 ? "\r\n\n" : "\n");
  ASSERT_GT(text.size(), size_t(6) << 20);
  std::string broken = text;  // row 120000 is on line 120000 + 17143 (the blank lines before it) + 1
  broken.replace(broken.find("[120000,120000.5]"), 17, "[120000,x]");
  std::string one_thread, one_thread_error;
  for (const int threads : {1, 2, 8}) {
    SetReadAheadThreads(threads);
    const auto result = ReadJsonText(text);
    ASSERT_EQ(result.batch->num_rows(), 150000);
    const std::string rows = Jsonl(*result.batch);
    const std::string error = ErrorOf([&] { ReadJsonText(broken); });
    if (threads == 1) {
      one_thread = rows, one_thread_error = error;
    } else {
      EXPECT_EQ(rows, one_thread) << threads << " threads";
      EXPECT_EQ(error, one_thread_error) << threads << " threads";
      EXPECT_GT(result.batches, 3) << threads << " threads";
    }
  }
  SetReadAheadThreads(0);
  EXPECT_EQ(one_thread.substr(0, one_thread.find('\n')), R"({"id":0,"s":"row 0","e":[0,0.5]})");
  EXPECT_EQ(one_thread_error.substr(0, 38), "in.jsonl:137144: malformed JSON at col");
}

// A reader that began handing out chunks keeps reading through them when the thread count
// drops to one meanwhile: no record is lost or read twice.
TEST(JsonLinesReader, AThreadCountChangedWhileReadingLosesNoRecord) {
  std::string text;
  for (int i = 0; i < 200'000; ++i) text += "{\"id\":" + std::to_string(i) + "}\n";
  TextReadOptions options;
  options.batch_rows = 50'000;
  SetReadAheadThreads(2);
  auto reader = ReadJsonLines(text_test::Input(text), "in.jsonl", options);
  EXPECT_EQ(text_test::RowsAndSumWhileThreadsDrop(*reader), std::make_pair(int64_t(200'000), int64_t(199'999) * 200'000 / 2));
}

TEST(JsonLinesReader, MalformedJsonNamesTheLine) {
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"a\": 1}\n\n{\"a\": tru}\n"); }),
            "in.jsonl:3: malformed JSON at column 10: syntax error while parsing value - invalid literal; "
            "last read: '\"a\": tru}'");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"a\": 1}\n[1, 2]\n"); }),
            "in.jsonl:2: expected a JSON object, found [1,2]");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"a\": \"x\xFF\"}\n"); }).substr(0, 29),
            "in.jsonl:1: malformed JSON at");
}

TEST(JsonLinesReader, InfersTypes) {
  auto result = ReadJsonText(
      "{\"i\": 1, \"f\": 1.5, \"s\": \"x\", \"b\": true, \"l\": [1, 2], \"e\": [0.5, 1], \"o\": {\"x\": 1, \"y\": \"z\"},"
      " \"n\": null, \"big\": 18446744073709551615, \"mix\": 1, \"v\": [0.5]}\n"
      "{\"i\": 2, \"f\": 2, \"e\": [1, 2.5], \"l\": [3], \"o\": {\"x\": 2, \"w\": [true]}, \"mix\": \"a\","
      " \"late\": -1, \"v\": [0.5, 1]}\n");
  EXPECT_EQ(FieldTypes(*result.schema),
            "i:int64\nf:float64\ns:utf8\nb:bool\nl:list<int64>\ne:fixed_size_list<float32,2>\n"
            "o:struct<x:int64,y:utf8,w:list<bool>>\nn:utf8\nbig:uint64\nmix:utf8\nv:list<float64>\nlate:int64\n");
  EXPECT_EQ(Jsonl(*result.batch),
            "{\"i\":1,\"f\":1.5,\"s\":\"x\",\"b\":true,\"l\":[1,2],\"e\":[0.5,1],\"o\":{\"x\":1,\"y\":\"z\",\"w\":null},"
            "\"n\":null,\"big\":18446744073709551615,\"mix\":\"1\",\"v\":[0.5],\"late\":null}\n"
            "{\"i\":2,\"f\":2,\"s\":null,\"b\":null,\"l\":[3],\"e\":[1,2.5],\"o\":{\"x\":2,\"y\":null,\"w\":[true]},"
            "\"n\":null,\"big\":null,\"mix\":\"a\",\"v\":[0.5,1],\"late\":-1}\n");
}

// Strings that are all dates or all date-times infer like CSV cells do.
TEST(JsonLinesReader, InfersDatesAndTimestampsFromStrings) {
  auto result = ReadJsonText(
      "{\"d\": \"2024-01-01\", \"t\": \"2024-01-01T10:00:00\", \"mixed\": \"2024-01-01\", \"x\": \"NaN\"}\n"
      "{\"d\": null, \"t\": \"2024-01-01 10:00:00.25\", \"mixed\": \"soon\", \"x\": 1.5}\n");
  EXPECT_EQ(FieldTypes(*result.schema), "d:date32\nt:timestamp<us>\nmixed:utf8\nx:float64\n");
  EXPECT_EQ(Jsonl(*result.batch),
            "{\"d\":\"2024-01-01\",\"t\":\"2024-01-01T10:00:00.000000\",\"mixed\":\"2024-01-01\",\"x\":\"NaN\"}\n"
            "{\"d\":null,\"t\":\"2024-01-01T10:00:00.250000\",\"mixed\":\"soon\",\"x\":1.5}\n");
}

// Read against a dataset's schema: integers narrow with a range check, integral floats
// are integers, strings become dates and timestamps, arrays fixed-size lists.
TEST(JsonLinesReader, ReadsAgainstASchema) {
  auto result = ReadJsonText(
      "{\"id\": 1, \"a\": 2.0, \"d\": \"2024-01-02\", \"t\": \"2024-01-02 03:04:05\", \"v\": [1, 2.5]}\n",
      WithSchema("id:int64,a:int32,d:date32,t:timestamp<us>,v:fixed_size_list<float32,2>"));
  EXPECT_EQ(Jsonl(*result.batch),
            "{\"id\":1,\"a\":2,\"d\":\"2024-01-02\",\"t\":\"2024-01-02T03:04:05.000000\",\"v\":[1,2.5]}\n");
  EXPECT_EQ(ErrorOf([] { ReadJsonText("{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3000000000}\n", WithSchema("a:int32")); }),
            "in.jsonl: row 3, column 'a': 3000000000 does not fit int32");
}

// Past inference (or under a given schema) a line's members are found by a scan and each
// value parsed on its own (ScanMembers); inferred rows are parsed whole. Both give the same
// values, for lines the scan takes and those it leaves to the whole-line parse.
TEST(JsonLinesReader, MembersReadOneByOneGiveWhatAWholeLineParseGives) {
  const std::string lines =
      "{\"s\": \"first\", \"l\": [1, 2], \"st\": {\"b\": \"x\"}, \"v\": [0.5, -1]}\n"
      "{ \"s\" : \"a\\\"}{[\" , \"l\" : [ 3 , 4 ] ,\"st\":{\"b\":\"]}\"} ,\"v\":[1e-3,\t2E2] }\n"
      "{\"\\u0073\": \"escaped key\", \"l\": [5, null]}\n"
      "{\"s\": \"twice\", \"s\": \"again\", \"v\": [-0, 1.5]}\n"
      "{\"unused\": {\"deep\": [[{\"x\": \"}\"}]]}, \"l\": []}\n"
      "{}\n"
      "{\"v\": [1.00000001, 3], \"st\": null, \"l\": null}\r\n";
  const std::string schema = "s:utf8,l:list<int64>,st:struct<b:utf8>,v:fixed_size_list<float32,2>";
  const auto scanned = ReadJsonText(lines, WithSchema(schema));
  TextReadOptions whole;  // every line read during inference, so parsed whole
  whole.column_types = Schema::Parse(schema);
  const auto parsed = ReadJsonText(lines, whole);
  std::string parsed_rows = Jsonl(*parsed.batch);  // inference made a column of "unused" too
  for (const std::string unused : {",\"unused\":null", ",\"unused\":{\"deep\":[[{\"x\":\"}\"}]]}"})
    for (size_t at; (at = parsed_rows.find(unused)) != std::string::npos;) parsed_rows.erase(at, unused.size());
  EXPECT_EQ(Jsonl(*scanned.batch), parsed_rows);
  EXPECT_EQ(Jsonl(*scanned.batch),
            "{\"s\":\"first\",\"l\":[1,2],\"st\":{\"b\":\"x\"},\"v\":[0.5,-1]}\n"
            "{\"s\":\"a\\\"}{[\",\"l\":[3,4],\"st\":{\"b\":\"]}\"},\"v\":[0.001,200]}\n"
            "{\"s\":\"escaped key\",\"l\":[5,null],\"st\":null,\"v\":null}\n"
            "{\"s\":\"again\",\"l\":null,\"st\":null,\"v\":[-0,1.5]}\n"
            "{\"s\":null,\"l\":[],\"st\":null,\"v\":null}\n"
            "{\"s\":null,\"l\":null,\"st\":null,\"v\":null}\n"
            "{\"s\":null,\"l\":null,\"st\":null,\"v\":[1,3]}\n");
  // A member no column reads, or text after the object, is still an error, reported as the
  // whole line's parse reports it.
  for (const std::string line : {"{\"s\": \"x\", \"zz\": [1,}\n", "{\"s\": \"x\"} 7\n"})
    EXPECT_EQ(ErrorOf([&] { ReadJsonText(line, WithSchema(schema)); }), ErrorOf([&] { ReadJsonText(line); }));
  EXPECT_EQ(ErrorOf([&] { ReadJsonText("{\"s\": \"x\", \"zz\": [1,}\n", WithSchema(schema)); }),
            "in.jsonl:1: malformed JSON at column 21: syntax error while parsing value - unexpected '}'; expected "
            "'[', '{', or a literal");
}

// The same, over thousands of lines made at random (scalars that take the direct path and
// those it leaves to the parser: escapes, control characters, invalid UTF-8, -0, values out
// of range) and then damaged at random (a character dropped, doubled or replaced by one of
// JSON's structural ones): each line, after a header line naming every column, read by the
// member scan and parsed whole gives the same rows, or the same error.
TEST(JsonLinesReader, MembersReadOneByOneMatchWholeLineParsesOnDamagedLines) {
  const std::string schema =
      "s:utf8,l:list<int64>,st:struct<b:utf8>,v:fixed_size_list<float32,2>,i:int64,f:float64,b:bool,g:float32,n:int8";
  const std::string header =
      "{\"s\":\"h\",\"l\":[0],\"st\":{\"b\":\"h\"},\"v\":[0,0],\"i\":1,\"f\":0.5,\"b\":true,\"g\":1.5,\"n\":1}\n";
  const std::vector<std::string> values = {
      "\"plain\"", "\"q\\\"}]\"", "[1, 2]", "[]", "[-0, 7]", "[1.5, 2]", "[1e2, -3]", "[1, null]", "null", "12",
      "{\"b\": \"x\"}", "{\"b\": [1, {\"c\": \"]\"}]}", "true", "[[1], [2]]", "\"\\u00e9\"", "-0", "-0.0", "1e999",
      "3.5", "1.0", "9007199254740993", "-7", "300", "0.1", "1e2", "\"t\\tab\"", "\"ctl\x01\"", "\"bad\xff\"",
      "\"caf\xc3\xa9\"", "false", "\"NaN\"", "-12345678901234567"};
  const std::vector<std::string> keys = {"s", "l", "st", "v", "zz", "s", "i", "f", "b", "g", "n"};
  // Values each key's column takes (most often chosen, so that many lines read whole).
  const std::map<std::string, std::vector<std::string>> fitting = {
      {"s", {"\"plain\"", "\"caf\xc3\xa9\"", "\"t\\tab\"", "null"}}, {"l", {"[1, 2]", "[]", "[1, null]"}},
      {"st", {"{\"b\": \"x\"}", "null"}}, {"v", {"[0.5, -1]", "[1e2, -3]", "[-0, 7]"}},
      {"zz", {"[[1], [2]]", "{\"b\": [1, {\"c\": \"]\"}]}", "true"}}, {"i", {"12", "-7", "-12345678901234567", "1.0"}},
      {"f", {"3.5", "0.1", "-0", "1e2", "\"NaN\""}}, {"b", {"true", "false", "null"}},
      {"g", {"0.1", "-0.0", "12", "9007199254740993"}}, {"n", {"-7", "12", "1e2"}}};
  const std::string damage = "{}[],:\" \\0e-";
  std::mt19937 random(46);
  auto pick = [&](size_t n) { return size_t(random() % n); };
  TextReadOptions whole;
  whole.column_types = Schema::Parse(schema);
  int errors = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string line = "{";
    for (size_t m = 0, count = pick(7); m < count; ++m) {
      const std::string& key = keys[pick(keys.size())];
      const std::vector<std::string>& choices = pick(4) ? fitting.at(key) : values;
      line += fmt::format("{}\"{}\"{}:{}{}", m ? "," : "", key, pick(2) ? " " : "", pick(3) ? "" : " ",
                          choices[pick(choices.size())]);
    }
    line += "}";
    if (i % 4 != 0) {  // three lines in four damaged
      const size_t at = pick(line.size());
      switch (pick(3)) {
        case 0: line.erase(at, 1); break;
        case 1: line.insert(at, 1, line[at]); break;
        default: line[at] = damage[pick(damage.size())]; break;
      }
    }
    const std::string text = header + line + "\n";
    text_test::ReadResult scanned, parsed;
    const std::string scanned_error = ErrorOf([&] { scanned = ReadJsonText(text, WithSchema(schema)); });
    const std::string parsed_error = ErrorOf([&] { parsed = ReadJsonText(text, whole); });
    ASSERT_EQ(scanned_error, parsed_error) << line;
    if (!scanned_error.empty()) {
      ++errors;
      continue;
    }
    const size_t width = scanned.schema->num_fields();
    std::vector<ArrayPtr> columns(parsed.batch->columns().begin(), parsed.batch->columns().begin() + width);
    const RecordBatch schema_columns(scanned.schema, columns, parsed.batch->num_rows());
    ASSERT_EQ(Jsonl(*scanned.batch), Jsonl(schema_columns)) << line;
  }
  EXPECT_GT(errors, 1000);  // the damage and the values made errors often, and left many lines whole
  EXPECT_LT(errors, 4500);
}

TEST(JsonLinesReader, NegativeZeroKeepsItsSignInFloatColumns) {
  auto result = ReadJsonText("{\"f\": -0, \"g\": [-0, 1.5], \"i\": -0, \"s\": \"-0\"}\n",
                             WithSchema("f:float64,g:list<float32>,i:int32,s:utf8"));
  EXPECT_EQ(Jsonl(*result.batch), "{\"f\":-0,\"g\":[-0,1.5],\"i\":0,\"s\":\"-0\"}\n");
  EXPECT_EQ(FieldTypes(*ReadJsonText("{\"a\": -0}\n{\"a\": 2}\n").schema), "a:int64\n");
  EXPECT_EQ(FieldTypes(*ReadJsonText("{\"a\": -0}\n{\"a\": 2.5}\n").schema), "a:float64\n");
}

TEST(JsonLinesReader, MixedSignsBeyondInt64InferFloat64) {
  auto result = ReadJsonText("{\"a\": 18446744073709551615}\n{\"a\": -1}\n");
  EXPECT_EQ(FieldTypes(*result.schema), "a:float64\n");
}

TEST(JsonLinesReader, StreamsBatchesOfAtMostBatchRows) {
  TextReadOptions options;
  options.batch_rows = 2;
  auto reader = ReadJsonLines(text_test::Input("{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n"), "in.jsonl", options);
  std::vector<int64_t> sizes;
  while (auto batch = reader->Next()) sizes.push_back(batch->num_rows());
  EXPECT_EQ(sizes, (std::vector<int64_t>{2, 1}));
}

TEST(JsonLinesReader, RoundTripsWhatTheJsonLinesWriterWrites) {
  auto schema = Schema::Parse(
      "i64:int64,u64:uint64,f16:float16,f32:float32,f64:float64,s:large_utf8,b:binary,fb:fixed_size_binary<2>,"
      "d:date32,d64:date64,ts:timestamp<s>,l:large_list<int16>,e:fixed_size_list<float32,2>,"
      "st:struct<a:int32,b:utf8>,flag:bool");
  auto type = [&](size_t i) { return schema->field(i)->type; };
  auto one = [&](size_t i, Scalar::Payload a, Scalar::Payload b) {
    return MakeArray(type(i), {Scalar{type(i), a}, Scalar{type(i), b}});
  };
  const double inf = std::numeric_limits<double>::infinity();
  auto batch = RecordBatch::Make(
      schema,
      {one(0, std::numeric_limits<int64_t>::min(), std::monostate{}),
       one(1, std::numeric_limits<uint64_t>::max(), uint64_t{0}), one(2, 0.5, -inf), one(3, 0.1, std::nan("")),
       one(4, -0.0, 1e300), one(5, std::string("a,\"b\"\n\xC3\xA9\x01"), std::string("")),
       one(6, std::string("\0\1", 2), std::string("")), one(7, std::string("xy"), std::monostate{}),
       one(8, int64_t{-1}, int64_t{0}), one(9, int64_t{-1}, int64_t{1}), one(10, int64_t{-1}, int64_t{1} << 40),
       one(11, std::vector<Scalar>{Scalar{DataType::Int16(), int64_t{1}}, Scalar::Null(DataType::Int16())},
           std::vector<Scalar>{}),
       one(12, std::vector<Scalar>{Scalar{DataType::Float32(), 0.25}, Scalar{DataType::Float32(), -1.0}},
           std::monostate{}),
       one(13, std::vector<Scalar>{Scalar{DataType::Int32(), int64_t{5}}, Scalar{DataType::Utf8(), std::string("q")}},
           std::monostate{}),
       one(14, true, false)});
  TextReadOptions options;
  options.schema = schema;
  auto back = ReadJsonText(Jsonl(*batch), options);
  EXPECT_TRUE(back.batch->Equals(*batch)) << Jsonl(*back.batch) << "\nvs\n" << Jsonl(*batch);
}

}  // namespace
}  // namespace lancelet
