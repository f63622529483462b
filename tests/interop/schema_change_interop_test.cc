// lancelet's schema changes (Dataset::DropColumns / AlterColumns, the reference's
// Project; AddColumns, its Merge) on a table the reference wrote with multi-file fragments and an index: the
// reference reads the result as lancelet does, lists the index under its new column
// name and drops the index of a dropped column, at file versions 2.0 and 2.2.
#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

class SchemaChangeInterop : public ::testing::TestWithParam<std::string> {};

TEST_P(SchemaChangeInterop, TheReferenceReadsWhatLanceletChanged) {
  REQUIRE_ORACLE();
  TempDir dir(TempDir::Use::kLocalScratch);
  const std::string arrow = dir.Join("base.arrow"), ds = dir.Join("t.lance");
  std::vector<std::string> gen = {"gen", arrow, "--rows", "900", "--seed", "7", "--types",
                                  "int64,int32,utf8,struct<a:int32,b:utf8>"};
  if (GetParam() == "2.0") gen.push_back("--no-null-structs");
  Oracle(gen);
  Oracle({"create", ds, "--data", arrow, "--file-version", GetParam(), "--max-rows-per-file", "300"});
  Oracle({"add-columns", ds, "--expr", "extra=c_int32 + 1"});  // a second data file per fragment
  Oracle({"create-index", ds, "c_int32", "--type", "btree"});
  Oracle({"create-index", ds, "extra", "--type", "btree"});

  auto changed = Dataset::Open(ds)
                     ->DropColumns({"extra", "c_struct_a_int32_b_utf8.b"})
                     ->AlterColumns({{"c_int32", "n", std::nullopt}, {"c_utf8", "text", std::nullopt}})
                     ->AddColumns({{"twice", "n * 2"}, {"shout", "upper(text)"}});
  EXPECT_EQ(changed->schema()->ToString(),
            "c_int64:int64, n:int32, text:utf8, c_struct_a_int32_b_utf8:struct<a:int32>, twice:int64, shout:utf8");
  const std::string expected = Oracle({"dump", ds, "--with-rowid"});
  EXPECT_EQ(DiffJsonLines(expected, Lancelet({"scan", ds, "--with-rowid", "--format", "jsonl"})), "");
  EXPECT_EQ(SplitLines(expected).size(), 900u);
  const std::string indices = Oracle({"indices", ds});
  EXPECT_NE(indices.find("\"columns\":[\"n\"]"), std::string::npos) << indices;
  EXPECT_EQ(indices.find("extra"), std::string::npos) << indices;
  EXPECT_EQ(Oracle({"count", ds, "--where", "n > 0"}), Lancelet({"count", ds, "--where", "n > 0"}));
}

INSTANTIATE_TEST_SUITE_P(Versions, SchemaChangeInterop, ::testing::Values("2.0", "2.2"),
                         [](const auto& info) { return "V" + std::string(info.param == "2.0" ? "2_0" : "2_2"); });

}  // namespace
}  // namespace lancelet::testing
