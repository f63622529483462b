// Opening inputs by path and extension.
#include <gtest/gtest.h>

#include <fstream>

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
                                ".ipc file");
}

TEST(OpenTextInput, ArrowIpcGoesThroughTheRegisteredOpener) {
  SetArrowIpcOpener(nullptr);
  try {
    OpenTextInput("x.arrow");
    FAIL() << "expected NotSupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotSupported);
    EXPECT_STREQ(e.what(), "x.arrow: Arrow IPC input is not available in this build");
  }
  std::string seen;
  SetArrowIpcOpener([&](const std::string& path, const TextReadOptions&) -> std::unique_ptr<RecordBatchReader> {
    seen = path;
    return nullptr;
  });
  EXPECT_EQ(OpenTextInput("y.ipc"), nullptr);
  EXPECT_EQ(seen, "y.ipc");
  SetArrowIpcOpener(nullptr);
}

}  // namespace
}  // namespace lancelet
