// The CLI on corrupt files and bad input: exit 1 with exactly one "lancelet: ..." line,
// valid UTF-8, naming the file; a failed create leaves no directory.
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;

// Rows id = 0..n-1 and name = "n<id>".
std::string IdNameCsv(int n) {
  std::string csv = "id,name\n";
  for (int i = 0; i < n; ++i) csv += std::to_string(i) + ",n" + std::to_string(i) + "\n";
  return csv;
}

// True when `s` holds no byte outside printable ASCII but the final newline: the
// messages below quote only ASCII or escaped bytes, so this is stricter than UTF-8.
bool PrintableAsciiLine(const std::string& s) {
  if (s.empty() || s.back() != '\n') return false;
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if (static_cast<unsigned char>(s[i]) < 0x20 || static_cast<unsigned char>(s[i]) >= 0x7F) return false;
  return true;
}

class CliValidationTest : public ::testing::Test {
 protected:
  void Create(int rows) {
    WriteStringToFile(dir_.Join("in.csv"), IdNameCsv(rows));
    auto r = RunLancelet({"create", ds_, "--from", dir_.Join("in.csv"), "--schema", "id:int64,name:utf8"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Exit code 1, no stdout, and stderr exactly "lancelet: " + message + "\n".
  void ExpectError(const CommandResult& r, const std::string& message) {
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "lancelet: " + message + "\n");
  }
  std::string OnlyFile(const std::string& sub) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(ds_ + "/" + sub)) files.push_back(e.path().string());
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? "" : files[0];
  }
  TempDir dir_;
  std::string ds_ = dir_.Join("t.lance");
};

TEST_F(CliValidationTest, BitFlippedArrowDeletionFileFailsCountAndScan) {
  Create(100);
  ASSERT_EQ(RunLancelet({"delete", ds_, "--where", "id < 10"}).exit_code, 0);
  EXPECT_EQ(RunLancelet({"count", ds_}).out, "90\n");
  const std::string path = OnlyFile("_deletions");
  ASSERT_EQ(path.substr(path.size() - 6), ".arrow");
  // Flip the 16 bytes of offsets 0..3 (lancelet writes them ascending, uncompressed).
  std::string bytes = ReadFileToString(path);
  std::string ascending(40, '\0');
  for (uint32_t i = 0; i < 10; ++i) std::memcpy(ascending.data() + 4 * i, &i, 4);
  size_t at = bytes.find(ascending);
  ASSERT_NE(at, std::string::npos);
  for (size_t k = at; k < at + 16; ++k) bytes[k] = char(~bytes[k]);
  WriteStringToFile(path, bytes);

  const std::string message =
      "deletion file '" + path + "' of fragment 0: offset 4294967295 at position 0 is beyond the fragment's 100 rows";
  ExpectError(RunLancelet({"count", ds_}), message);
  auto scan = RunLancelet({"scan", ds_, "--format", "csv"});
  EXPECT_EQ(scan.exit_code, 1);
  EXPECT_EQ(scan.out, "id,name\n");  // the header is streamed before the first batch; no rows
  EXPECT_EQ(scan.err, "lancelet: " + message + "\n");
  ExpectError(RunLancelet({"count", ds_, "--where", "id > 50"}), message);
}

TEST_F(CliValidationTest, CorruptManifestPrintsOnlyOurLine) {
  Create(3);
  std::string manifest;
  for (const auto& e : fs::directory_iterator(ds_ + "/_versions"))
    if (e.path().extension() == ".manifest") manifest = e.path().string();
  ASSERT_FALSE(manifest.empty());
  // Invalid UTF-8 in a string field (the data file's path) fails the proto3 parse, on
  // which protobuf logs its own "[libprotobuf ERROR ...]" line unless silenced. The
  // manifest message is last in the file, after the transaction.
  std::string bytes = ReadFileToString(manifest);
  size_t at = bytes.rfind(".lance");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = '\xff';
  WriteStringToFile(manifest, bytes);
  auto r = RunLancelet({"count", ds_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find("libprotobuf"), std::string::npos) << r.err;
  EXPECT_EQ(SplitLines(r.err).size(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("lancelet: manifest '" + manifest + "': the manifest message at offset ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" does not parse\n"), std::string::npos) << r.err;
}

TEST_F(CliValidationTest, ErrorsQuotingBinaryInputStayValidUtf8) {
  Create(3);
  // Bytes >= 0x80 may start an identifier; a control byte is unexpected.
  auto lexer = RunLancelet({"count", ds_, "--where", "id = \x01\xff"});
  EXPECT_EQ(lexer.exit_code, 1);
  EXPECT_TRUE(PrintableAsciiLine(lexer.err)) << lexer.err;
  EXPECT_NE(lexer.err.find("unexpected character '\\x01' at position 6 in \"id = \\x01\\xFF\""), std::string::npos)
      << lexer.err;

  WriteStringToFile(dir_.Join("bad.csv"), "id\n1\n\xfe\xff\x07\n");
  auto csv = RunLancelet({"create", dir_.Join("bad.lance"), "--from", dir_.Join("bad.csv"), "--schema", "id:int32"});
  EXPECT_EQ(csv.exit_code, 1);
  // The cell is shown as a JSON string: invalid bytes as U+FFFD, the control byte as \u0007.
  EXPECT_NE(csv.err.find("bad.csv: row 3, column 'id': expected int32, found \"\xEF\xBF\xBD\xEF\xBF\xBD\\u0007\"\n"),
            std::string::npos)
      << csv.err;
  EXPECT_EQ(EscapeForMessage(csv.err.substr(0, csv.err.size() - 1)), csv.err.substr(0, csv.err.size() - 1));
}

TEST_F(CliValidationTest, FailedCreateLeavesNoDirectory) {
  // The bad row comes after many good ones, so data files may be written before it.
  std::string csv = IdNameCsv(5000) + "oops,x\n";
  WriteStringToFile(dir_.Join("late.csv"), csv);
  auto r = RunLancelet({"create", ds_, "--from", dir_.Join("late.csv"), "--schema", "id:int64,name:utf8",
                        "--max-rows-per-file", "100"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("oops"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(ds_));
}

TEST_F(CliValidationTest, UnknownColumnsListTheDatasetColumns) {
  Create(3);
  for (auto args : std::vector<std::vector<std::string>>{
           {"delete", ds_, "--where", "nope = 1 AND id = 2"},
           {"update", ds_, "--set", "name = 'x'", "--where", "nope = 1"},
           {"count", ds_, "--where", "nope = 1"},
       }) {
    auto r = RunLancelet(args);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("unknown column 'nope' (columns: id, name)"), std::string::npos) << args[0] << ": " << r.err;
  }
}

// Every numeric option is range-checked in one place, and the error names the option
// as typed; --plan takes the same rule as the run.
TEST_F(CliValidationTest, NumericOptionsAreRangeCheckedByTheNameTyped) {
  Create(10);
  const std::string whole_rows = "expected a whole number from 1 to 4294967295";
  for (const char* v : {"-1", "0", "18446744073709551615", "4294967296", "1e3", ""}) {
    for (bool plan : {false, true}) {
      std::vector<std::string> args = {"optimize", ds_, "--target-rows-per-fragment", v};
      if (plan) args.push_back("--plan");
      ExpectError(RunLancelet(args), fmt::format("--target-rows-per-fragment '{}': {}", v, whole_rows));
    }
  }
  for (const char* v : {"-1", "2", "nan", "inf", "0.5x", "-0.01"})
    ExpectError(RunLancelet({"optimize", ds_, "--materialize-deletions-threshold", v, "--plan"}),
                fmt::format("--materialize-deletions-threshold '{}': expected a number from 0 to 1", v));
  EXPECT_EQ(RunLancelet({"optimize", ds_, "--materialize-deletions-threshold", "1", "--plan"}).exit_code, 0);
  ExpectError(RunLancelet({"create", dir_.Join("u.lance"), "--from", dir_.Join("in.csv"), "--max-rows-per-file", "0"}),
              "--max-rows-per-file '0': " + whole_rows);
  EXPECT_FALSE(fs::exists(dir_.Join("u.lance")));
  ExpectError(RunLancelet({"scan", ds_, "--limit", "-1"}),
              "--limit '-1': expected a whole number from 0 to 9223372036854775807");
  ExpectError(RunLancelet({"count", ds_, "--version", "0"}),
              "--version '0': expected a whole number from 1 to 18446744073709551615");
  EXPECT_EQ(RunLancelet({"scan", ds_, "--limit", "2", "--offset", "3", "--format", "csv"}).out, "id,name\n3,n3\n4,n4\n");
}

// explain binds its filter as a scan does: a filter a scan refuses is refused.
TEST_F(CliValidationTest, ExplainRefusesAFilterAScanRefuses) {
  Create(10);
  auto scan = RunLancelet({"scan", ds_, "--where", "nosuch = 1"});
  EXPECT_EQ(scan.exit_code, 1);
  ASSERT_NE(scan.err, "");
  ExpectError(RunLancelet({"explain", ds_, "--where", "nosuch = 1"}), scan.err.substr(10, scan.err.size() - 11));
}

// An index name is an identifier (dotted parts allowed, as a default name on a struct
// field); anything that reads like a path is refused, and nothing is committed.
TEST_F(CliValidationTest, IndexNamesAreIdentifiers) {
  Create(10);
  for (const char* name : {"a/b", "../../x", "1st", "a..b", ".a", "a.", "a b", "caf\xc3\xa9"}) {
    ExpectError(RunLancelet({"index", "create", ds_, "id", "--name", name}),
                fmt::format("index name '{}': expected an identifier (letters, digits and '_', not starting with a "
                            "digit; parts joined by '.'), at most 128 characters",
                            name));
  }
  EXPECT_EQ(RunLancelet({"index", "list", ds_}).out, "");
  EXPECT_EQ(RunLancelet({"index", "create", ds_, "id", "--name", "by_id.v2"}).exit_code, 0);
  EXPECT_EQ(RunLancelet({"sql", "--db", dir_.path(), "CREATE INDEX \"x/y\" ON t (name)"}).exit_code, 1);
}

// An update that crosses lance.compaction.max_overlays_per_fragment says which version
// holds it and which merged the layers after it.
TEST_F(CliValidationTest, AnUpdateCrossingTheLayerBoundNamesBothVersions) {
  Create(10);
  ASSERT_EQ(RunLancelet({"config", ds_, "--set", "lance.compaction.max_overlays_per_fragment=2"}).exit_code, 0);
  EXPECT_EQ(RunLancelet({"update", ds_, "--set", "name = 'a'", "--where", "id = 1", "--mode", "overlay"}).out,
            "updated 1 rows of " + ds_ + "; now version 3\n");
  EXPECT_EQ(RunLancelet({"update", ds_, "--set", "name = 'b'", "--where", "id = 2", "--mode", "overlay"}).out,
            "updated 1 rows of " + ds_ + "; now version 4\n");
  EXPECT_EQ(RunLancelet({"update", ds_, "--set", "name = 'c'", "--where", "id = 3", "--mode", "overlay"}).out,
            "updated 1 rows of " + ds_ +
                "; now version 6 (version 5 holds the change; version 6 merged the overlays of fragments past "
                "lance.compaction.max_overlays_per_fragment)\n");
  const std::string db = dir_.path();
  EXPECT_EQ(RunLancelet({"sql", "--db", db, "UPDATE t SET name = 'd' WHERE id = 4"}).out,
            "UPDATE 1 row; t is now at version 7\n");
  EXPECT_EQ(RunLancelet({"sql", "--db", db, "UPDATE t SET name = 'e' WHERE id = 5"}).out,
            "UPDATE 1 row; t is now at version 9 (version 8 holds the change; version 9 merged the overlays of "
            "fragments past lance.compaction.max_overlays_per_fragment)\n");
  EXPECT_EQ(RunLancelet({"count", ds_, "--where", "name IN ('a', 'b', 'c', 'd', 'e')"}).out, "5\n");
}

}  // namespace
}  // namespace lancelet::testing
