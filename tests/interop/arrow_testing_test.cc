// The Apache Arrow integration IPC files (tests/data/arrow-testing, provenance there) go
// through `lancelet create --from`, in both byte orders, and read back as the rows
// apache-arrow (JS, in the oracle) reads from the little-endian file; the reference reads
// lancelet's dataset equal too. Dictionary-encoded fields arrive as their values. Files of
// types lancelet does not store are refused with the type named.
#include <filesystem>

#include <gtest/gtest.h>

#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;

const std::string kDataDir = std::string(LANCELET_SOURCE_DIR) + "/tests/data/arrow-testing/";

// Unpacks DATA/NAME.gz into `dir` as `as`; returns the path.
std::string Unpack(const TempDir& dir, const std::string& name, const std::string& as) {
  const std::string out = dir.Join(as);
  auto r = RunCommand("gzip -dc '" + kDataDir + name + ".gz' > '" + out + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

class ArrowTestingTest : public ::testing::TestWithParam<std::string> {
 protected:
  TempDir dir_;
};

// The rows of an integration file as apache-arrow reads them (`arrow-js-cat`). Two files
// apache-arrow JS 18 cannot give back as they are: it has no LargeList, and it names a map's
// entries key/value whatever the file says. For those the oracle's own IPC decoder speaks.
std::string ApacheArrowRows(const std::string& name, const std::string& file) {
  if (name == "nested_large_offsets" || name == "map_non_canonical") return Oracle({"cat", file});
  return Oracle({"arrow-js-cat", file});
}

TEST_P(ArrowTestingTest, BothByteOrdersReadAsApacheArrowReadsThem) {
  REQUIRE_ORACLE();
  const std::string name = GetParam();
  const std::string little = Unpack(dir_, name + ".little.arrow_file", "little.arrow");
  const std::string big = Unpack(dir_, name + ".big.arrow_file", "big.arrow");
  const std::string expected = ApacheArrowRows(name, little);

  for (const auto& [input, ds] : {std::pair{little, dir_.Join("little.lance")}, std::pair{big, dir_.Join("big.lance")}}) {
    SCOPED_TRACE(input);
    Lancelet({"create", ds, "--from", input, "--file-version", "2.2"});
    EXPECT_EQ(DiffJsonLines(expected, Lancelet({"scan", ds, "--format", "jsonl"})), "");
    EXPECT_EQ(DiffJsonLines(expected, Oracle({"dump", ds})), "") << "the reference reads lancelet's dataset";
  }
}

INSTANTIATE_TEST_SUITE_P(Files, ArrowTestingTest,
                         ::testing::Values("primitive", "primitive_large_offsets", "primitive_no_batches",
                                           "primitive_zerolength", "datetime", "decimal", "decimal256", "map",
                                           "map_non_canonical", "nested", "nested_large_offsets",
                                           "recursive_nested", "null", "null_trivial", "custom_metadata",
                                           // Dictionary-encoded fields arrive as their values.
                                           "dictionary", "dictionary_unsigned", "nested_dictionary", "extension"),
                         [](const auto& info) { return info.param; });

TEST(ArrowTesting, BigEndianStreamsReadLikeTheFiles) {
  REQUIRE_ORACLE();
  for (const std::string name : {"primitive", "nested_dictionary"}) {  // dictionary batches in a stream
    SCOPED_TRACE(name);
    TempDir dir;
    const std::string stream = Unpack(dir, name + ".big.stream", "big.arrows");
    const std::string little = Unpack(dir, name + ".little.arrow_file", "little.arrow");
    Lancelet({"create", dir.Join("s.lance"), "--from", stream, "--file-version", "2.2"});
    EXPECT_EQ(DiffJsonLines(ApacheArrowRows(name, little), Lancelet({"scan", dir.Join("s.lance"), "--format", "jsonl"})),
              "");
  }
}

TEST(ArrowTesting, TypesLanceletDoesNotStoreAreRefusedByName) {
  TempDir dir;
  for (const auto& [name, message] : std::vector<std::pair<std::string, std::string>>{
           {"interval", "Arrow field 'f5' at byte 2180 has type Interval, which lancelet does not support"},
           {"union", "Arrow field 'sparse' at byte 3372 has type Union, which lancelet does not support"},
           {"duplicate_fieldnames", "duplicate column name 'ints'"}}) {
    SCOPED_TRACE(name);
    const std::string input = Unpack(dir, name + ".little.arrow_file", name + ".arrow");
    auto r = RunLancelet({"create", dir.Join(name + ".lance"), "--from", input});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.Join(name + ".lance")));
  }
}

}  // namespace
}  // namespace lancelet::testing
