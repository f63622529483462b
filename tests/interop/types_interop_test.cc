// Issue 14's types against the reference: time32/time64, duration, decimal128/256, null
// and large offsets nested anywhere, with nulls and edge values, at file versions 2.0, 2.1
// and 2.2 (maps at 2.2). The reference writes and lancelet reads; lancelet writes and the
// reference reads; an overlay on these columns reads the same on both sides.
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lancelet/dataset.h"
#include "support/json_rows.h"
#include "support/test_env.h"
#include "table/dataset_state.h"
#include "table/manifest_store.h"

namespace lancelet::testing {
namespace {

const char* kOverlayEnv = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1";

constexpr const char* kTypes =
    "int32,time32<s>,time32<ms>,time64<us>,time64<ns>,duration<s>,duration<ms>,duration<us>,duration<ns>,"
    "decimal128<10,2>,decimal128<38,-3>,decimal128<1,0>,decimal256<40,5>,decimal256<76,0>,null,"
    "list<decimal128<12,4>>,struct<t:time64<us>,d:decimal128<9,3>>,"
    // Large offsets in every position.
    "list<large_utf8>,struct<a:large_binary,b:large_utf8>,large_list<struct<x:large_utf8>>,large_list<large_list<int32>>";

class TypesInteropTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string version() const { return GetParam(); }
  // 2.0 stores no struct validity.
  std::vector<std::string> Gen(const std::string& out, int rows, int seed) const {
    std::vector<std::string> args = {"gen", out, "--rows", std::to_string(rows), "--seed", std::to_string(seed),
                                     "--types", kTypes};
    if (version() == "2.0") args.push_back("--no-null-structs");
    return args;
  }
  TempDir dir_;
};

TEST_P(TypesInteropTest, LanceletReadsWhatTheReferenceWrote) {
  REQUIRE_ORACLE();
  const std::string ds = dir_.Join("ref.lance"), a = dir_.Join("a.arrow"), b = dir_.Join("b.arrow");
  Oracle(Gen(a, 700, 31));
  Oracle(Gen(b, 90, 32));
  Oracle({"create", ds, "--data", a, "--file-version", version(), "--max-rows-per-file", "400"});
  Oracle({"append", ds, "--data", b});
  Oracle({"delete", ds, "--where", "c_int32 < -1500000000"});

  const std::string expected = Oracle({"dump", ds});
  ASSERT_GT(SplitLines(expected).size(), 600u);
  EXPECT_EQ(DiffJsonLines(expected, Lancelet({"scan", ds, "--format", "jsonl"})), "");
  EXPECT_EQ(Lancelet({"count", ds}), Oracle({"count", ds}));
  const auto rows = SplitLines(expected);
  std::string picked;
  for (size_t p : {size_t(0), size_t(401), rows.size() - 1}) picked += rows[p] + "\n";
  EXPECT_EQ(DiffJsonLines(picked, Lancelet({"take", ds, "--rows", "0,401," + std::to_string(rows.size() - 1),
                                            "--format", "jsonl"})),
            "");
  // The reference stored the input's schema (names, types, nullability) unchanged.
  EXPECT_EQ(nlohmann::json::parse(Oracle({"schema", ds})), nlohmann::json::parse(Oracle({"arrow-schema", a})));
}

TEST_P(TypesInteropTest, TheReferenceReadsWhatLanceletWrote) {
  REQUIRE_ORACLE();
  const std::string ds = dir_.Join("ours.lance"), a = dir_.Join("a.arrow"), b = dir_.Join("b.arrow");
  Oracle(Gen(a, 500, 41));
  Oracle(Gen(b, 70, 42));
  Lancelet({"create", ds, "--from", a, "--file-version", version(), "--max-rows-per-file", "300"});
  Lancelet({"append", ds, "--from", b});

  EXPECT_EQ(nlohmann::json::parse(Oracle({"schema", ds})), nlohmann::json::parse(Oracle({"arrow-schema", a})));
  const std::string ours = Lancelet({"scan", ds, "--format", "jsonl"});
  EXPECT_EQ(SplitLines(ours).size(), 570u);
  EXPECT_EQ(DiffJsonLines(ours, Oracle({"dump", ds})), "");
  // The input's own rows, as the oracle renders them, are what both sides read.
  EXPECT_EQ(DiffJsonLines(Oracle({"cat", a}) + Oracle({"cat", b}), ours), "");
}

TEST_P(TypesInteropTest, AnOverlayOnTheseColumnsReadsTheSameOnBothSides) {
  REQUIRE_ORACLE();
  const std::string ds = dir_.Join("ov.lance"), a = dir_.Join("a.arrow");
  Oracle(Gen(a, 400, 51));
  Lancelet({"create", ds, "--from", a, "--file-version", version()});
  Lancelet({"update", ds, "--mode", "overlay", "--where", "c_int32 % 3 = 0", "--set", "c_decimal128_10_2 = '-12.345'",
            "--set", "c_decimal256_76_0 = 9", "--set", "c_time64_us = '23:59:59.5'", "--set", "c_time32_s = 3600",
            "--set", "c_duration_ms = -7", "--set", "c_decimal128_1_0 = NULL"});
  const std::string ours = Lancelet({"scan", ds, "--format", "jsonl"});
  EXPECT_NE(ours.find("\"c_decimal128_10_2\":-12.35"), std::string::npos) << "rounded half away from zero";
  EXPECT_NE(ours.find("\"c_time64_us\":\"23:59:59.500000\""), std::string::npos);
  EXPECT_NE(ours.find("\"c_time32_s\":\"01:00:00\""), std::string::npos);
  EXPECT_EQ(DiffJsonLines(ours, Oracle({"dump", ds}, kOverlayEnv)), "");
  EXPECT_EQ(Lancelet({"count", ds, "--where", "c_duration_ms IS NOT NULL"}),
            Oracle({"count", ds, "--where", "c_duration_ms IS NOT NULL"}, kOverlayEnv));
}

// Low-cardinality large strings get a dictionary at 2.1 and 2.2; the reference reads its
// 64-bit offsets (it refused the 32-bit ones lancelet once wrote: "invalid variable-width
// layout for LargeUtf8: expected 64-bit offsets but got 32-bit offsets").
TEST_P(TypesInteropTest, TheReferenceReadsLowCardinalityLargeStrings) {
  REQUIRE_ORACLE();
  const std::string ds = dir_.Join("ls.lance"), in = dir_.Join("in.jsonl");
  std::string rows;
  for (int k = 0; k < 600; ++k)
    rows += fmt::format("{{\"id\":{},\"s\":{},\"l\":[\"t{}\",\"t{}\"]}}\n", k,
                        k % 7 == 0 ? "null" : fmt::format("\"colour-{}\"", k % 5), k % 3, k % 4);
  WriteStringToFile(in, rows);
  Lancelet({"create", ds, "--from", in, "--file-version", version(), "--schema", "id:int64,s:large_utf8,l:list<large_utf8>"});
  const std::string ours = Lancelet({"scan", ds, "--format", "jsonl"});
  ASSERT_EQ(SplitLines(ours).size(), 600u);
  EXPECT_EQ(DiffJsonLines(ours, Oracle({"dump", ds})), "");
}

// Maps need file version 2.2 on both sides; at 2.0 and 2.1 both refuse them.
TEST_P(TypesInteropTest, MapsRoundTripAt22AndAreRefusedBelow) {
  REQUIRE_ORACLE();
  const std::string a = dir_.Join("a.arrow"), ref = dir_.Join("ref.lance"), ours = dir_.Join("ours.lance");
  Oracle({"gen", a, "--rows", "300", "--seed", "61", "--types",
          "int32,map<utf8,int32>,map<int64,list<utf8>>,list<map<utf8,decimal128<5,1>>>,struct<m:map<utf8,utf8>>"});
  auto ours_result = RunLancelet({"create", ours, "--from", a, "--file-version", version()});
  auto ref_result = RunOracle({"create", ref, "--data", a, "--file-version", version()});
  if (version() != "2.2") {
    EXPECT_NE(ours_result.exit_code, 0);
    EXPECT_NE(ours_result.err.find("Lance file version " + version() + " cannot store maps; use file version 2.2"),
              std::string::npos)
        << ours_result.err;
    EXPECT_FALSE(std::filesystem::exists(ours)) << "a refused create leaves nothing behind";
    EXPECT_NE(ref_result.exit_code, 0) << "the reference refuses maps below 2.2 too";
    return;
  }
  ASSERT_EQ(ours_result.exit_code, 0) << ours_result.err;
  ASSERT_EQ(ref_result.exit_code, 0) << ref_result.err;
  const std::string expected = Oracle({"cat", a});
  EXPECT_EQ(DiffJsonLines(expected, Lancelet({"scan", ref, "--format", "jsonl"})), "");
  EXPECT_EQ(DiffJsonLines(expected, Oracle({"dump", ours})), "");
  EXPECT_EQ(nlohmann::json::parse(Oracle({"schema", ours})), nlohmann::json::parse(Oracle({"arrow-schema", a})));
  // An overlay that sets a map column to NULL in some rows.
  Lancelet({"update", ours, "--mode", "overlay", "--where", "c_int32 % 2 = 0", "--set", "c_map_utf8_int32 = NULL"});
  const std::string updated = Lancelet({"scan", ours, "--format", "jsonl"});
  EXPECT_NE(updated, expected);
  EXPECT_EQ(DiffJsonLines(updated, Oracle({"dump", ours}, kOverlayEnv)), "");
}

// Dictionary-encoded columns (Lance "dict:<values>:<keys>:false") read as their values,
// whatever the reference's pages: 2.0 Dictionary pages of Arrow keys, 2.1/2.2 dictionary
// mini-blocks.
TEST_P(TypesInteropTest, DictionaryColumnsReadAsTheirValues) {
  REQUIRE_ORACLE();
  const std::string ds = dir_.Join("dict.lance"), a = dir_.Join("a.arrow"), b = dir_.Join("b.arrow");
  Oracle({"gen-dict", a, "--rows", "600", "--seed", "81"});
  Oracle({"gen-dict", b, "--rows", "100", "--seed", "82"});
  Oracle({"create", ds, "--data", a, "--file-version", version()});
  Oracle({"append", ds, "--data", b});  // a second fragment with its own dictionaries
  Oracle({"delete", ds, "--where", "id % 50 = 3"});
  const std::string expected = Oracle({"dump", ds});
  EXPECT_EQ(DiffJsonLines(expected, Lancelet({"scan", ds, "--format", "jsonl"})), "");
  EXPECT_EQ(DiffJsonLines(expected, Oracle({"cat", a})).empty(), false) << "the delete removed rows";
  for (const char* where : {"c_dict_utf8 = 'red'", "c_dict_i64 > 0 AND c_dict_f64 IS NULL", "c_dict_i8_utf8 IS NULL"})
    EXPECT_EQ(Lancelet({"count", ds, "--where", where}), Oracle({"count", ds, "--where", where})) << where;
  const auto rows = SplitLines(expected);
  EXPECT_EQ(DiffJsonLines(rows[5] + "\n" + rows[500] + "\n", Lancelet({"take", ds, "--rows", "5,500", "--format", "jsonl"})),
            "");
  // Arrow output keeps the dictionary encoding, as the reference's toArrow() does; apache-arrow
  // reads it.
  const std::string arrow = dir_.Join("out.arrows");
  auto r = RunCommand(ShellQuote(LanceletBinary()) + " scan " + ShellQuote(ds) + " --format arrow > " + ShellQuote(arrow));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(Oracle({"arrow-schema", arrow}).find("{\"name\":\"c_dict_i8_utf8\",\"type\":\"dictionary<int8,utf8>\""),
            std::string::npos);
  EXPECT_EQ(DiffJsonLines(expected, Oracle({"arrow-js-cat", arrow})), "");
}

// lancelet writes dictionary columns as the reference does (every page with its own
// dictionary, keys of the field's key type): appends, overlays on them and their fold, read
// back equal by the reference, which refuses a dictionary field's page without one.
TEST_P(TypesInteropTest, DictionaryColumnsAreWrittenWithDictionaries) {
  REQUIRE_ORACLE();
  const std::string ds = dir_.Join("dict.lance"), a = dir_.Join("a.arrow"), rows = dir_.Join("rows.jsonl");
  Oracle({"gen-dict", a, "--rows", "300", "--seed", "83"});
  Oracle({"create", ds, "--data", a, "--file-version", version()});
  // New values, NULL rows, a value already in the reference's dictionary; then a page of
  // NULLs only.
  WriteStringToFile(rows,
                    "{\"id\":1000,\"c_dict_utf8\":\"new\",\"c_dict_i8_utf8\":null,\"c_dict_i64\":77,\"c_dict_f64\":null}\n"
                    "{\"id\":1001,\"c_dict_utf8\":\"red\",\"c_dict_i8_utf8\":\"zz\",\"c_dict_i64\":null,\"c_dict_f64\":2.5}\n"
                    "{\"id\":1002,\"c_dict_utf8\":\"new\",\"c_dict_i8_utf8\":\"zz\",\"c_dict_i64\":77,\"c_dict_f64\":-0.0}\n");
  Lancelet({"append", ds, "--from", rows});
  WriteStringToFile(rows, "{\"id\":1003,\"c_dict_utf8\":null,\"c_dict_i8_utf8\":null,\"c_dict_i64\":null,\"c_dict_f64\":null}\n");
  Lancelet({"append", ds, "--from", rows});
  std::string ours = Lancelet({"scan", ds, "--format", "jsonl"});
  EXPECT_EQ(SplitLines(ours).size(), 304u);
  EXPECT_EQ(DiffJsonLines(ours, Oracle({"dump", ds})), "");

  Lancelet({"update", ds, "--mode", "overlay", "--where", "id % 7 = 0", "--set", "c_dict_utf8 = 'seven'", "--set",
            "c_dict_f64 = NULL"});
  ours = Lancelet({"scan", ds, "--format", "jsonl"});
  EXPECT_EQ(Lancelet({"count", ds, "--where", "c_dict_utf8 = 'seven'"}), "44\n");
  EXPECT_EQ(DiffJsonLines(ours, Oracle({"dump", ds}, kOverlayEnv)), "");
  Lancelet({"optimize", ds});
  EXPECT_EQ(DiffJsonLines(ours, Oracle({"dump", ds})), "") << "folded into dictionary columns";
  // The reference goes on appending its own dictionaries to lancelet's dataset.
  Oracle({"append", ds, "--data", a});
  EXPECT_EQ(DiffJsonLines(Oracle({"dump", ds}), Lancelet({"scan", ds, "--format", "jsonl"})), "");

  // More distinct values on a page than int8 keys index: refused, nothing written.
  std::string many;
  for (int i = 0; i < 129; ++i) many += fmt::format("{{\"id\":{},\"c_dict_i8_utf8\":\"v{}\"}}\n", 2000 + i, i);
  WriteStringToFile(rows, many);
  const std::string before = Oracle({"dump", ds});
  auto refused = RunLancelet({"append", ds, "--from", rows});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("field 'c_dict_i8_utf8' (dictionary<int8,utf8>): a page holds more than 128 distinct "
                             "values, more than int8 keys can index"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(DiffJsonLines(before, Oracle({"dump", ds})), "") << "the refused append changed nothing";
  many.resize(many.rfind("{\"id\":2128"));  // 128 distinct fit
  WriteStringToFile(rows, many);
  Lancelet({"append", ds, "--from", rows});
  EXPECT_EQ(DiffJsonLines(Lancelet({"scan", ds, "--format", "jsonl"}), Oracle({"dump", ds})), "");
}

// Legacy (0.1/0.2) data files of these types: plain pages, a null column stores nothing.
TEST(TypesInterop, LegacyFilesOfTheseTypesRead) {
  REQUIRE_ORACLE();
  TempDir dir;
  const std::string ds = dir.Join("legacy.lance"), a = dir.Join("a.arrow");
  Oracle({"gen", a, "--rows", "300", "--seed", "71", "--no-null-structs", "--types",
          "int32,time32<s>,time64<ns>,duration<ms>,decimal128<10,2>,decimal256<40,5>,null,list<decimal128<12,4>>"});
  Oracle({"create", ds, "--data", a, "--file-version", "legacy"});
  EXPECT_EQ(DiffJsonLines(Oracle({"dump", ds}), Lancelet({"scan", ds, "--format", "jsonl"})), "");
}

// A legacy (0.1) dataset keeps its dictionaries in the manifest file and the keys in the
// data files. lancelet reads them, and its commits (deletes) write the dictionaries into
// the new manifest, where the reference finds them again. (The reference itself refuses
// to append to such a dataset: "dictionary for `c_dict_utf8` did not match".)
TEST(TypesInterop, LegacyDictionaryColumnsReadAndSurviveACommit) {
  REQUIRE_ORACLE();
  TempDir dir;
  const std::string ds = dir.Join("legacy.lance"), a = dir.Join("a.arrow");
  // The reference refuses float dictionaries in legacy files ("v1 dictionary values do not
  // support data type Float64"), so c_dict_f64 stays out.
  Oracle({"gen-dict", a, "--rows", "300", "--seed", "72", "--columns", "id,c_dict_utf8,c_dict_i8_utf8,c_dict_i64"});
  Oracle({"create", ds, "--data", a, "--file-version", "legacy"});
  const std::string expected = Oracle({"dump", ds});
  EXPECT_EQ(DiffJsonLines(expected, Lancelet({"scan", ds, "--format", "jsonl"})), "");
  for (const char* where : {"c_dict_utf8 = 'green'", "c_dict_i64 = 5 AND c_dict_i8_utf8 = 'red'", "c_dict_utf8 IS NULL"})
    EXPECT_EQ(Lancelet({"count", ds, "--where", where}), Oracle({"count", ds, "--where", where})) << where;
  const auto rows = SplitLines(expected);
  ASSERT_EQ(rows.size(), 300u);
  EXPECT_EQ(DiffJsonLines(rows[7] + "\n" + rows[250] + "\n", Lancelet({"take", ds, "--rows", "7,250", "--format", "jsonl"})),
            "");

  Lancelet({"delete", ds, "--where", "id % 10 = 4"});
  const std::string after = Lancelet({"scan", ds, "--format", "jsonl"});
  EXPECT_EQ(SplitLines(after).size(), 270u);
  EXPECT_EQ(DiffJsonLines(after, Oracle({"dump", ds})), "") << "the reference finds the dictionaries lancelet carried";
  Lancelet({"delete", ds, "--where", "id % 10 = 5"});  // a manifest written from one lancelet wrote
  EXPECT_EQ(DiffJsonLines(Lancelet({"scan", ds, "--format", "jsonl"}), Oracle({"dump", ds})), "");
  // The dataset a commit returns reads the dictionaries it carried, without reading them again.
  auto deleted = Dataset::Open(ds)->Delete("id % 10 = 6");
  for (const char* where : {"c_dict_utf8 = 'green'", "c_dict_i64 = 5", "c_dict_utf8 IS NULL"})
    EXPECT_EQ(std::to_string(deleted->CountRows(where)) + "\n", Oracle({"count", ds, "--where", where})) << where;

  // A key past the dictionary is refused with the file, field, batch and row.
  auto dataset = Dataset::Open(ds);
  const auto& state = table::StateOf(dataset);
  format::LanceSchema schema = state.schema;
  for (auto& field : schema.mutable_fields())
    if (field.name == "c_dict_utf8") field.legacy_dictionary = Slice(*field.legacy_dictionary, 0, 1);
  lance::table::Manifest m = state.manifest;
  m.set_version(m.version() + 1);
  WriteStringToFile(ds + "/_versions/" + table::ManifestFileNameV2(m.version()),
                    table::EncodeManifestFile(m, nullptr, nullptr, &schema));
  auto refused = RunLancelet({"scan", ds, "--columns", "c_dict_utf8"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find(": field 'c_dict_utf8' (id 1) batch 0: key "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find(" is outside the 1 dictionary values"), std::string::npos) << refused.err;
}

INSTANTIATE_TEST_SUITE_P(FileVersions, TypesInteropTest, ::testing::Values("2.0", "2.1", "2.2"),
                         [](const auto& info) { return "v" + std::string(1, info.param[0]) + "_" + info.param[2]; });

}  // namespace
}  // namespace lancelet::testing
