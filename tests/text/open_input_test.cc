// Opening inputs by path and extension.
#include <gtest/gtest.h>

#include <fstream>

#include "io/object_store.h"
#include "lancelet/ipc.h"
#include "support/test_env.h"
#include "text/text_test_util.h"

namespace lancelet {
namespace {

using text_test::ErrorOf;

TEST(OpenTextInput, DetectsFormatByExtension) {
  EXPECT_EQ(DetectInputFormat("a/b.CSV"), InputFormat::kCsv);
  EXPECT_EQ(DetectInputFormat("x.json"), InputFormat::kJsonLines);
  EXPECT_EQ(DetectInputFormat("x.jsonl"), InputFormat::kJsonLines);
  EXPECT_EQ(DetectInputFormat("x.ndjson"), InputFormat::kJsonLines);
  EXPECT_EQ(DetectInputFormat("x.arrow"), InputFormat::kArrowIpc);
  EXPECT_EQ(DetectInputFormat("x.arrows"), InputFormat::kArrowIpc);
  EXPECT_EQ(DetectInputFormat("x.ipc"), InputFormat::kArrowIpc);
  EXPECT_EQ(DetectInputFormat("x.txt"), InputFormat::kUnknown);
  EXPECT_EQ(DetectInputFormat("csv"), InputFormat::kUnknown);
}

TEST(OpenTextInput, ReadsFilesAndNamesThemInErrors) {
  testing::TempDir dir;
  testing::WriteStringToFile(dir.Join("a.csv"), "x,y\n1,2\n");
  testing::WriteStringToFile(dir.Join("b.ndjson"), "{\"x\": 1}\n{\"x\": }\n");
  auto csv = OpenTextInput(dir.Join("a.csv"));
  EXPECT_EQ(text_test::Jsonl(*csv->Next()), "{\"x\":1,\"y\":2}\n");
  EXPECT_EQ(ErrorOf([&] { text_test::ReadAll(*OpenTextInput(dir.Join("b.ndjson"))); }).substr(0, dir.Join("b.ndjson").size() + 19),
            dir.Join("b.ndjson") + ":2: malformed JSON ");
  EXPECT_EQ(ErrorOf([&] { OpenTextInput(dir.Join("missing.csv")); }), dir.Join("missing.csv") + ": no such file");
  EXPECT_EQ(ErrorOf([&] { OpenTextInput(dir.Join("a.txt")); }),
            dir.Join("a.txt") + ": unknown input format; expected a .csv, .json, .jsonl, .ndjson, .arrow, .arrows or "
                                ".ipc file (or say which with --input-format)");
  TextReadOptions as_csv;
  as_csv.format = InputFormat::kCsv;
  testing::WriteStringToFile(dir.Join("a.txt"), "x\n5\n");
  EXPECT_EQ(text_test::Jsonl(*OpenTextInput(dir.Join("a.txt"), as_csv)->Next()), "{\"x\":5}\n");
}

// Arrow IPC files and streams are read by the library itself: a local file mapped, a
// file of another store read whole, either conformed to a schema when one is given.
TEST(OpenTextInput, ReadsArrowIpcFilesAndStreamsFromAnyStore) {
  auto schema = Schema::Parse("x:int64,s:utf8");
  auto batch = text_test::ReadAll(*ReadCsv(text_test::Input("x,s\n1,a\n2,b\n"), "in.csv",
                                           TextReadOptions{.schema = schema})).batch;
  testing::TempDir dir;
  testing::WriteStringToFile(dir.Join("a.arrow"), WriteIpcFile(*schema, {batch}));
  testing::WriteStringToFile(dir.Join("b.arrows"), WriteIpcStream(*schema, {batch}));
  auto [memory, within] = io::OpenStore("memory://open_input_test/c.ipc");
  memory->Put(within, WriteIpcStream(*schema, {batch}));
  for (const std::string& path : {dir.Join("a.arrow"), dir.Join("b.arrows"), std::string("memory://open_input_test/c.ipc")}) {
    auto read = text_test::ReadAll(*OpenTextInput(path));
    EXPECT_EQ(read.schema->ToString(), schema->ToString()) << path;
    EXPECT_EQ(text_test::Jsonl(*read.batch), "{\"x\":1,\"s\":\"a\"}\n{\"x\":2,\"s\":\"b\"}\n") << path;
  }
  TextReadOptions as_text;
  as_text.schema = Schema::Parse("s:utf8,x:utf8");
  EXPECT_EQ(text_test::Jsonl(*text_test::ReadAll(*OpenTextInput(dir.Join("a.arrow"), as_text)).batch),
            "{\"s\":\"a\",\"x\":\"1\"}\n{\"s\":\"b\",\"x\":\"2\"}\n");
  EXPECT_EQ(ErrorOf([&] { OpenTextInput(dir.Join("missing.arrow")); }).substr(0, 14), "cannot open '/");
}

// Inputs are read through the store their path names, opened with the options given:
// a memory:// file reads, and a key no store knows is refused by name (so the options
// reach io::OpenStore), for CSV, JSON Lines and Arrow IPC alike.
TEST(OpenTextInput, PathsOpenThroughTheirStoreWithTheStorageOptions) {
  const std::string dir = "memory://open_input_test";
  io::DefaultMemoryStore()->Put(dir + "/a.csv", "x\n7\n");
  io::DefaultMemoryStore()->Put(dir + "/a.jsonl", "{\"x\": 8}\n");
  TextReadOptions options;
  options.storage_options = {{"timeout", "5s"}};
  EXPECT_EQ(text_test::Jsonl(*OpenTextInput(dir + "/a.csv", options)->Next()), "{\"x\":7}\n");
  EXPECT_EQ(text_test::Jsonl(*OpenTextInput(dir + "/a.jsonl", options)->Next()), "{\"x\":8}\n");
  auto x = Schema::Parse("x:int64");
  io::DefaultMemoryStore()->Put(
      dir + "/a.arrow", WriteIpcFile(*x, {text_test::ReadAll(*ReadCsv(text_test::Input("x\n9\n"), "in.csv",
                                                                   TextReadOptions{.schema = x})).batch}));
  options.schema = Schema::Parse("x:utf8");  // read as written, then conformed: the options still go along
  EXPECT_EQ(text_test::Jsonl(*OpenTextInput(dir + "/a.arrow", options)->Next()), "{\"x\":\"9\"}\n");
  options.schema = nullptr;
  options.storage_options = {{"nope", "1"}};
  for (const char* name : {"/a.csv", "/a.jsonl", "/a.arrow"})
    EXPECT_EQ(ErrorOf([&] { OpenTextInput(dir + name, options); }).rfind("storage option 'nope' is not one the reference knows", 0),
              0u);
  io::DefaultMemoryStore()->DeleteTree(dir);
}

// ConformInput assigns a reader's columns to a schema by name (what Arrow IPC input gets
// when read against a dataset): exact conversions only, the first bad value named by
// record number and column.
TEST(ConformInput, AssignsColumnsByNameAndNamesTheFirstBadRow) {
  auto target = Schema::Parse("id:int32,f:float32,d:date32");
  auto conform = [&](const std::string& csv) {
    TextReadOptions options;
    options.batch_rows = 1;  // row numbers count across batches
    return ConformInput(ReadCsv(text_test::Input(csv), "in.csv", options), target, "in.arrow");
  };
  auto ok = text_test::ReadAll(*conform("d,f,id\n2024-01-02,1.5,7\n,2,8\n"));
  EXPECT_EQ(ok.schema->ToString(), target->ToString());
  EXPECT_EQ(text_test::Jsonl(*ok.batch),
            "{\"id\":7,\"f\":1.5,\"d\":\"2024-01-02\"}\n{\"id\":8,\"f\":2,\"d\":null}\n");
  EXPECT_EQ(ErrorOf([&] { text_test::ReadAll(*conform("id,f,d\n1,1,\n2,2,\n3000000000,3,\n")); }),
            "in.arrow: row 3, column 'id': cannot cast 3000000000 to int32 (out of range)");
  EXPECT_EQ(ErrorOf([&] { text_test::ReadAll(*conform("id,f,d\n1.5,1,\n")); }),
            "in.arrow: row 1, column 'id': cannot assign 1.5 to int32 (not an integer)");
  EXPECT_EQ(ErrorOf([&] { conform("id,f\n1,1\n"); }), "in.arrow: no column 'd' (schema: " + target->ToString() + ")");
  EXPECT_EQ(ErrorOf([&] { conform("id,f,d,x\n1,1,,\n"); }),
            "in.arrow: column 'x' is not in the schema (" + target->ToString() + ")");
}

}  // namespace
}  // namespace lancelet
