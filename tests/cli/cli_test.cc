#include <sys/stat.h>

#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "io/object_store.h"
#include "support/test_env.h"
#include "table/manifest_store.h"

namespace lancelet::testing {
namespace {

namespace fs = std::filesystem;

const char* kPeopleCsv =
    "id,name,age,score\n"
    "1,Alice,30,1.5\n"
    "2,Bob,25,\n"
    "3,\"Carol, Jr.\",40,-2.25\n"
    "4,Dave,22,0\n";

// Every file below `dir` with its size: "unchanged" means this is equal before and after.
std::map<std::string, uintmax_t> Snapshot(const std::string& dir) {
  std::map<std::string, uintmax_t> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[e.path().string()] = e.file_size();
  return out;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteStringToFile(dir_.Join("people.csv"), kPeopleCsv);
    auto r = RunLancelet({"create", ds_, "--from", dir_.Join("people.csv")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Expects a one-line error on stderr containing `needle`, exit code 1, no stdout.
  void ExpectError(const CommandResult& r, const std::string& needle) {
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_EQ(SplitLines(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr: " << r.err;
    EXPECT_EQ(r.err.rfind("lancelet: ", 0), 0u) << r.err;
  }
  std::string FirstFile(const std::string& sub) {
    for (const auto& e : fs::directory_iterator(ds_ + "/" + sub)) return e.path().string();
    return "";
  }
  TempDir dir_;
  std::string ds_ = dir_.Join("people.lance");
};

TEST_F(CliTest, StorageOptionsAreCheckedAndGoToEveryStoreACommandOpens) {
  // Before or after the subcommand, repeatable, any case; local datasets use none.
  auto count = RunLancelet({"--storage-option", "timeout=60s", "count", ds_, "--storage-option", "AWS_REGION=x"});
  EXPECT_EQ(count.exit_code, 0) << count.err;
  EXPECT_EQ(count.out, "4\n");
  auto sql = RunLancelet({"sql", "--db", dir_.path(), "SELECT count(*) AS n FROM people", "--format", "csv",
                          "--storage-option", "allow_http=true"});
  EXPECT_EQ(sql.exit_code, 0) << sql.err;
  EXPECT_EQ(sql.out, "n\n4\n");
  ExpectError(RunLancelet({"scan", ds_, "--storage-option", "timout=60s"}),
              "storage option 'timout' is not one the reference knows");
  ExpectError(RunLancelet({"scan", ds_, "--storage-option", "timeout"}),
              "--storage-option 'timeout': expected KEY=VALUE (e.g. timeout=60s)");
  ExpectError(RunLancelet({"create", dir_.Join("new.lance"), "--from", dir_.Join("people.csv"), "--storage-option",
                           "bogus=1"}),
              "storage option 'bogus'");
  EXPECT_FALSE(fs::exists(dir_.Join("new.lance")));
}

// `lancelet sql` reads the current directory without --db, and refuses a --db that is
// not a directory instead of showing no tables.
TEST_F(CliTest, SqlUsesTheCurrentDirectoryAndRefusesAMissingOne) {
  auto here = RunCommand("cd " + ShellQuote(dir_.path()) + " && " + ShellQuote(LanceletBinary()) +
                         " sql 'SELECT count(*) AS n FROM people' --format csv");
  EXPECT_EQ(here.exit_code, 0) << here.err;
  EXPECT_EQ(here.out, "n\n4\n");
  ExpectError(RunLancelet({"sql", "--db", dir_.Join("nope"), "SHOW TABLES"}),
              "--db '" + dir_.Join("nope") + "' is not a directory (to start a new database, create it first)");
  EXPECT_FALSE(fs::exists(dir_.Join("nope")));
}

TEST_F(CliTest, SchemaChangesAddDropAndAlterColumns) {
  auto r = RunLancelet({"add-columns", ds_, "--expr", " older = age + 1 ", "--expr", "\"shout\" = upper(name)"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunLancelet({"drop-columns", ds_, "score"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunLancelet({"alter-columns", ds_, "--rename", "older=next_age", "--not-null", "id"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, ds_ + " now at version 4: id:int64 not null, name:utf8, age:int64, next_age:int64, shout:utf8\n");
  EXPECT_EQ(RunLancelet({"scan", ds_, "--columns", "next_age,shout", "--where", "id = 2", "--format", "csv"}).out,
            "next_age,shout\n26,BOB\n");
  ExpectError(RunLancelet({"add-columns", ds_, "--expr", "x ="}), "--expr 'x =': expected 'column = expression'");
  ExpectError(RunLancelet({"update", ds_, "--set", "age="}), "--set 'age=': expected 'column = expression'");
  ExpectError(RunLancelet({"alter-columns", ds_, "--rename", "id"}), "--rename 'id': expected old=new");
  ExpectError(RunLancelet({"drop-columns", ds_, "nope"}), "no column 'nope'");
}

TEST_F(CliTest, MergeInsertUpdatesInsertsAndDeletesInOneVersion) {
  WriteStringToFile(dir_.Join("changes.csv"), "id,age\n2,26\n3,41\n7,70\n");
  auto r = RunLancelet({"merge-insert", ds_, "--from", dir_.Join("changes.csv"), "--on", "id",
                        "--when-matched-update-all", "--when-not-matched-insert-all",
                        "--when-not-matched-by-source-delete", "--by-source-condition", "age < 30"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "merge-insert: 2 updated, 1 deleted, 1 inserted; " + ds_ + " now at version 2\n");
  EXPECT_EQ(RunLancelet({"scan", ds_, "--columns", "id,name,age", "--format", "csv"}).out,
            "id,name,age\n1,Alice,30\n2,Bob,26\n3,\"Carol, Jr.\",41\n7,,70\n");
  ExpectError(RunLancelet({"merge-insert", ds_, "--from", dir_.Join("changes.csv"), "--on", "id"}),
              "merge_insert: no clause");
  WriteStringToFile(dir_.Join("bad.csv"), "id,agee\n2,1\n");
  ExpectError(RunLancelet({"merge-insert", ds_, "--from", dir_.Join("bad.csv"), "--on", "id",
                           "--when-matched-update-all"}),
              "merge_insert: the source's column 'agee' is not a column of the dataset");
  EXPECT_EQ(RunLancelet({"count", ds_}).out, "4\n");
}

// `changes` prints the feed: an overlay UPDATE's pair naming the column it wrote, a
// DELETE's row as it was, in the format asked for; its options narrow it.
TEST_F(CliTest, ChangesPrintsWhatEachCommitChanged) {
  ASSERT_EQ(RunLancelet({"update", ds_, "--set", "age = age + 1", "--where", "id = 2", "--mode", "overlay"}).exit_code, 0);
  ASSERT_EQ(RunLancelet({"delete", ds_, "--where", "id = 4"}).exit_code, 0);
  auto r = RunLancelet({"changes", ds_, "--from", "1", "--columns", "id,age", "--format", "jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = SplitLines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  // the timestamps differ per run: everything around them is exact
  auto cut = [](const std::string& line) {
    const size_t at = line.find("\"_commit_timestamp\":\"");
    const size_t end = line.find('"', at + 21);
    return line.substr(0, at) + line.substr(end + 2);
  };
  EXPECT_EQ(cut(lines[0]), R"({"_change_type":"update_preimage","_commit_version":2,"_rowid":1,"_changed_columns":["age"],"id":2,"age":25})");
  EXPECT_EQ(cut(lines[1]), R"({"_change_type":"update_postimage","_commit_version":2,"_rowid":1,"_changed_columns":["age"],"id":2,"age":26})");
  EXPECT_EQ(cut(lines[2]), R"({"_change_type":"delete","_commit_version":3,"_rowid":3,"_changed_columns":null,"id":4,"age":22})");
  auto deletes = RunLancelet({"changes", ds_, "--from", "0", "--to", "3", "--change-types", "delete",
                              "--columns", "name", "--format", "csv"});
  ASSERT_EQ(deletes.exit_code, 0) << deletes.err;
  EXPECT_EQ(deletes.out.substr(deletes.out.find('\n') + 1).substr(0, 7), "delete,");
  EXPECT_EQ(SplitLines(deletes.out).size(), 2u) << deletes.out;
  ExpectError(RunLancelet({"changes", ds_, "--from", "3", "--to", "2"}), "from version 3 is after to version 2");
  ExpectError(RunLancelet({"changes", ds_, "--from", "1", "--columns", "nope"}), "no column 'nope' at version 3");
}

TEST_F(CliTest, ScanFormats) {
  auto jsonl = RunLancelet({"scan", ds_, "--format", "jsonl"});
  ASSERT_EQ(jsonl.exit_code, 0) << jsonl.err;
  EXPECT_EQ(jsonl.out,
            "{\"id\":1,\"name\":\"Alice\",\"age\":30,\"score\":1.5}\n"
            "{\"id\":2,\"name\":\"Bob\",\"age\":25,\"score\":null}\n"
            "{\"id\":3,\"name\":\"Carol, Jr.\",\"age\":40,\"score\":-2.25}\n"
            "{\"id\":4,\"name\":\"Dave\",\"age\":22,\"score\":0}\n");
  auto csv = RunLancelet({"scan", ds_, "--format", "csv", "--columns", "name,id", "--where", "age < 30"});
  EXPECT_EQ(csv.out, "name,id\nBob,2\nDave,4\n");
  auto table = RunLancelet({"scan", ds_, "--columns", "id,name", "--limit", "2"});
  EXPECT_NE(table.out.find("Alice"), std::string::npos);
  EXPECT_NE(table.out.find("(2 rows)"), std::string::npos) << table.out;
}

TEST_F(CliTest, CountTakeDeleteVersionsInspect) {
  EXPECT_EQ(RunLancelet({"count", ds_}).out, "4\n");
  EXPECT_EQ(RunLancelet({"count", ds_, "--where", "score IS NULL"}).out, "1\n");
  EXPECT_EQ(RunLancelet({"take", ds_, "--rows", "3,0", "--columns", "name", "--format", "csv"}).out,
            "name\nDave\nAlice\n");
  auto del = RunLancelet({"delete", ds_, "--where", "id IN (2, 3)"});
  EXPECT_EQ(del.out, "deleted 2 rows from " + ds_ + "; now version 2\n") << del.err;
  EXPECT_EQ(RunLancelet({"count", ds_}).out, "2\n");
  EXPECT_EQ(RunLancelet({"count", ds_, "--version", "1"}).out, "4\n");
  auto versions = SplitLines(RunLancelet({"versions", ds_}).out);
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_NE(versions[1].find("Delete"), std::string::npos);
  auto inspect = RunLancelet({"inspect", ds_});
  EXPECT_NE(inspect.out.find("version: 2\n"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("reader feature flags: 1 (deletion_files)"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("  name [id 1]: utf8\n"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("fragment 0: 4 physical rows, 2 deleted, 2 live"), std::string::npos) << inspect.out;
}

TEST_F(CliTest, RestoreAndTags) {
  ASSERT_EQ(RunLancelet({"delete", ds_, "--where", "id < 3"}).exit_code, 0);
  EXPECT_EQ(RunLancelet({"tag", "create", ds_, "start", "--version", "1"}).out,
            "tagged version 1 of " + ds_ + " as start\n");
  EXPECT_EQ(RunLancelet({"tag", "create", ds_, "now"}).out, "tagged version 2 of " + ds_ + " as now\n");
  ExpectError(RunLancelet({"tag", "create", ds_, "now", "--version", "1"}), "tag 'now' already exists");
  ExpectError(RunLancelet({"tag", "create", ds_, "bad/name"}), "tag name 'bad/name' may hold only");
  ExpectError(RunLancelet({"tag", "delete", ds_, "missing"}), "tag 'missing' does not exist");
  ExpectError(RunLancelet({"count", ds_, "--tag", "missing"}), "tag 'missing' does not exist");
  auto both = RunLancelet({"count", ds_, "--tag", "now", "--version", "1"});  // CLI11's own usage error
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE(both.err.find("--version excludes --tag"), std::string::npos) << both.err;
  ExpectError(RunLancelet({"restore", ds_}), "restore: name the version to restore with --version N or --tag NAME");
  EXPECT_EQ(RunLancelet({"count", ds_, "--tag", "start"}).out, "4\n");
  EXPECT_EQ(RunLancelet({"restore", ds_, "--tag", "start"}).out, "restored version 1 of " + ds_ + "; now version 3\n");
  EXPECT_EQ(RunLancelet({"count", ds_}).out, "4\n");
  EXPECT_EQ(RunLancelet({"tag", "update", ds_, "now"}).out, "tag now of " + ds_ + " now names version 3\n");
  EXPECT_EQ(RunLancelet({"tag", "delete", ds_, "start"}).out, "deleted tag start of " + ds_ + "\n");
  const auto listed = SplitLines(RunLancelet({"tag", "list", ds_}).out);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].rfind("now\t3\t", 0), 0u) << listed[0];
}

TEST_F(CliTest, ArrowOutputIsReadByApacheArrow) {
  if (!OracleAvailable()) GTEST_SKIP() << "apache-arrow (tests/oracle/node_modules) is not installed";
  auto r = RunCommand(ShellQuote(LanceletBinary()) + " scan " + ShellQuote(ds_) + " --format arrow > " +
                      ShellQuote(dir_.Join("out.arrows")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto js = RunCommand("node " + ShellQuote(std::string(LANCELET_SOURCE_DIR) + "/tests/cli/read_arrow_stream.mjs") +
                       " " + ShellQuote(dir_.Join("out.arrows")));
  ASSERT_EQ(js.exit_code, 0) << js.err;
  auto lines = SplitLines(js.out);
  ASSERT_EQ(lines.size(), 5u) << js.out;
  EXPECT_EQ(lines[0], R"({"rows":4,"fields":["id:Int64","name:Utf8","age:Int64","score:Float64"]})");
  EXPECT_EQ(lines[3], R"({"id":"3","name":"Carol, Jr.","age":"40","score":-2.25})");
}

TEST_F(CliTest, CreateWithSchemaAndFileVersion) {
  std::string ds = dir_.Join("typed.lance");
  auto r = RunLancelet({"create", ds, "--from", dir_.Join("people.csv"), "--schema",
                        "id:int32,name:utf8,age:int16,score:float32", "--file-version", "2.1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto inspect = RunLancelet({"inspect", ds});
  EXPECT_NE(inspect.out.find("data storage: lance 2.1"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("age [id 2]: int16"), std::string::npos) << inspect.out;
  EXPECT_EQ(RunLancelet({"scan", ds, "--format", "jsonl", "--where", "id = 3"}).out,
            "{\"id\":3,\"name\":\"Carol, Jr.\",\"age\":40,\"score\":-2.25}\n");
}

// --schema takes SQL's type names as CREATE TABLE does; --input-format names its values
// in the help and in its error.
TEST_F(CliTest, SchemaTakesSqlTypeNamesAndInputFormatSpeaksPlainly) {
  std::string ds = dir_.Join("sql_typed.lance");
  auto r = RunLancelet({"create", ds, "--from", dir_.Join("people.csv"), "--schema",
                        "id:INTEGER,name:VARCHAR,age:SMALLINT,score:DOUBLE"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto inspect = RunLancelet({"inspect", ds});
  EXPECT_NE(inspect.out.find("id [id 0]: int32"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("name [id 1]: utf8"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("score [id 3]: float64"), std::string::npos) << inspect.out;
  EXPECT_NE(RunLancelet({"create", "--help"}).out.find("--input-format csv|jsonl|arrow"), std::string::npos);
  auto bad = RunLancelet({"create", dir_.Join("x.lance"), "--from", "-", "--input-format", "parquet"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--input-format: 'parquet' is not an input format (csv, jsonl, arrow)"), std::string::npos)
      << bad.err;
}

// `lancelet completion bash` completes commands, nested commands and each one's options.
TEST_F(CliTest, CompletionScriptCompletesCommandsAndOptions) {
  const std::string script = dir_.Join("complete.sh");
  WriteStringToFile(script,
                    "eval \"$(" + ShellQuote(LanceletBinary()) + " completion bash)\"\n"
                    "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _lancelet; "
                    "echo \"${COMPREPLY[*]}\"; }\n"
                    "t lancelet cr\nt lancelet create x.lance --fr\nt lancelet index ''\n"
                    "t lancelet index create ds --ty\nt lancelet sql --f\n");
  auto r = RunCommand("bash " + ShellQuote(script));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "create\n--from\ncreate list optimize stats drop\n--type\n--format\n");
  EXPECT_EQ(RunLancelet({"completion", "zsh"}).out.rfind("autoload -U +X bashcompinit && bashcompinit\n", 0), 0u);
}

// Without --file-version a new dataset is written at 2.2, the reference's default.
TEST_F(CliTest, NewDatasetsDefaultToFileVersion22) {
  std::string ds = dir_.Join("default.lance");
  auto r = RunLancelet({"create", ds, "--from", dir_.Join("people.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto inspect = RunLancelet({"inspect", ds});
  EXPECT_NE(inspect.out.find("data storage: lance 2.2"), std::string::npos) << inspect.out;
  EXPECT_NE(inspect.out.find("(format 2.2,"), std::string::npos) << inspect.out;
}

// An Arrow stream from a pipe (a FIFO named *.arrows, or stdin with --input-format) is
// read as it arrives; the rows equal those written from the same stream stored as a file. A stream cut short fails
// naming the byte where it ends, and commits nothing.
TEST_F(CliTest, ArrowStreamFromAPipe) {
  const std::string file = dir_.Join("people.arrows");
  ASSERT_EQ(RunCommand(ShellQuote(LanceletBinary()) + " scan " + ShellQuote(ds_) + " --format arrow > " +
                       ShellQuote(file))
                .exit_code,
            0);
  const std::string fifo = dir_.Join("pipe.arrows");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string from_pipe = dir_.Join("from_pipe.lance");
  auto r = RunCommand("cat " + ShellQuote(file) + " > " + ShellQuote(fifo) + " & " + ShellQuote(LanceletBinary()) +
                      " create " + ShellQuote(from_pipe) + " --from " + ShellQuote(fifo));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(RunLancelet({"scan", from_pipe, "--format", "jsonl"}).out, RunLancelet({"scan", ds_, "--format", "jsonl"}).out);

  // Standard input, its format named: Arrow and CSV.
  const std::string from_stdin = dir_.Join("from_stdin.lance");
  r = RunCommand("cat " + ShellQuote(file) + " | " + ShellQuote(LanceletBinary()) + " create " +
                 ShellQuote(from_stdin) + " --from - --input-format arrow");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(RunLancelet({"scan", from_stdin, "--format", "jsonl"}).out, RunLancelet({"scan", ds_, "--format", "jsonl"}).out);
  r = RunCommand("printf 'id,name\\n9,Zed\\n' | " + ShellQuote(LanceletBinary()) + " create " +
                 ShellQuote(dir_.Join("csv_stdin.lance")) + " --from - --input-format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(RunLancelet({"scan", dir_.Join("csv_stdin.lance"), "--format", "jsonl"}).out, "{\"id\":9,\"name\":\"Zed\"}\n");

  const std::string cut = dir_.Join("cut.lance");
  r = RunCommand("head -c 300 " + ShellQuote(file) + " > " + ShellQuote(fifo) + " & " + ShellQuote(LanceletBinary()) +
                 " create " + ShellQuote(cut) + " --from " + ShellQuote(fifo));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(fifo + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("runs past the end (300 bytes)"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(cut + "/_versions"));
}

TEST_F(CliTest, JsonLinesInputAndAppend) {
  WriteStringToFile(dir_.Join("more.jsonl"),
                    "{\"id\":5,\"name\":\"Eve\",\"age\":50,\"score\":9.5}\n{\"id\":6,\"name\":null,\"age\":1}\n");
  auto r = RunLancelet({"append", ds_, "--from", dir_.Join("more.jsonl")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(RunLancelet({"scan", ds_, "--format", "csv", "--where", "id > 4"}).out,
            "id,name,age,score\n5,Eve,50,9.5\n6,,1,\n");
}

// Append reads its input against the dataset's schema, whatever the format: ints narrow
// with a range check, strings become dates and timestamps, arrays fixed-size lists, empty
// CSV fields NULL. The first value that does not fit is named with file, row and column.
TEST_F(CliTest, AppendReadsInputAgainstTheDatasetSchema) {
  std::string ds = dir_.Join("typed.lance");
  WriteStringToFile(dir_.Join("first.csv"), "id,a,d,t,v\n1,10,2024-01-01,2024-01-01 10:00:00,\"[0.5,1]\"\n");
  auto r = RunLancelet({"create", ds, "--from", dir_.Join("first.csv"), "--schema",
                        "id:int64,a:int32,d:date32,t:timestamp<us>,v:fixed_size_list<float32,2>"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteStringToFile(dir_.Join("rows.jsonl"),
                    "{\"id\":2,\"a\":20,\"d\":\"2024-01-02\",\"t\":\"2024-01-02T11:00:00Z\",\"v\":[1,2]}\n");
  r = RunLancelet({"append", ds, "--from", dir_.Join("rows.jsonl")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteStringToFile(dir_.Join("rows.csv"), "id,a,d,t,v\n3,,2024-01-03,,\n");
  r = RunLancelet({"append", ds, "--from", dir_.Join("rows.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Arrow IPC: columns assigned by name (int64 to int32, utf8 to date and timestamp,
  // list<float64> to fixed_size_list<float32,2>).
  std::string arrows = dir_.Join("ids.arrows");
  ASSERT_EQ(RunCommand(ShellQuote(LanceletBinary()) + " sql --db " + ShellQuote(dir_.path()) +
                       " --format arrow \"SELECT id + 3 AS id, age AS a, '2024-01-04' AS d, '2024-01-04 05:06:07' AS t, "
                       "[0.5, 2] AS v FROM people WHERE id = 1\" > " +
                       ShellQuote(arrows))
                .exit_code,
            0);
  r = RunLancelet({"append", ds, "--from", arrows});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(RunLancelet({"scan", ds, "--format", "jsonl"}).out,
            "{\"id\":1,\"a\":10,\"d\":\"2024-01-01\",\"t\":\"2024-01-01T10:00:00.000000\",\"v\":[0.5,1]}\n"
            "{\"id\":2,\"a\":20,\"d\":\"2024-01-02\",\"t\":\"2024-01-02T11:00:00.000000\",\"v\":[1,2]}\n"
            "{\"id\":3,\"a\":null,\"d\":\"2024-01-03\",\"t\":null,\"v\":null}\n"
            "{\"id\":4,\"a\":30,\"d\":\"2024-01-04\",\"t\":\"2024-01-04T05:06:07.000000\",\"v\":[0.5,2]}\n");

  WriteStringToFile(dir_.Join("big.jsonl"), "{\"id\":5,\"a\":1}\n{\"id\":6,\"a\":2}\n{\"id\":7,\"a\":3000000000}\n");
  r = RunLancelet({"append", ds, "--from", dir_.Join("big.jsonl")});
  ExpectError(r, dir_.Join("big.jsonl") + ": row 3, column 'a': 3000000000 does not fit int32");
  WriteStringToFile(dir_.Join("big.csv"), "id,a,d,t,v\n5,1,,,\n6,3000000000,,,\n");
  ExpectError(RunLancelet({"append", ds, "--from", dir_.Join("big.csv")}),
              dir_.Join("big.csv") + ": row 3, column 'a': 3000000000 does not fit int32");
  WriteStringToFile(dir_.Join("day.csv"), "id,a,d,t,v\n5,1,soon,,\n");
  ExpectError(RunLancelet({"append", ds, "--from", dir_.Join("day.csv")}),
              dir_.Join("day.csv") + ": row 2, column 'd': expected date32, found \"soon\"");
  EXPECT_EQ(RunLancelet({"count", ds}).out, "4\n");
}

TEST_F(CliTest, BadInputFilesGiveOneLineErrorsAndCreateNothing) {
  WriteStringToFile(dir_.Join("bad.csv"), "id,name\n1,\"unterminated\n");
  std::string ds = dir_.Join("bad.lance");
  auto r = RunLancelet({"create", ds, "--from", dir_.Join("bad.csv")});
  ExpectError(r, "bad.csv");
  EXPECT_FALSE(fs::exists(ds + "/_versions"));

  WriteStringToFile(dir_.Join("bad.jsonl"), "{\"id\": 1}\n{\"id\": \n");
  ExpectError(RunLancelet({"create", ds, "--from", dir_.Join("bad.jsonl")}), "bad.jsonl");
  EXPECT_FALSE(fs::exists(ds + "/_versions"));

  // Values that do not fit --schema.
  ExpectError(RunLancelet({"create", ds, "--from", dir_.Join("people.csv"), "--schema",
                           "id:int32,name:int32,age:int32,score:float64"}),
              "name");
  EXPECT_FALSE(fs::exists(ds + "/_versions"));
  // A --schema that does not parse.
  ExpectError(RunLancelet({"create", ds, "--from", dir_.Join("people.csv"), "--schema", "id:int33"}), "position");
  ExpectError(RunLancelet({"create", ds, "--from", dir_.Join("nope.csv")}), "nope.csv");
}

TEST_F(CliTest, MissingDatasetAndBadPredicate) {
  ExpectError(RunLancelet({"scan", dir_.Join("nowhere.lance")}), "nowhere.lance");
  auto before = Snapshot(ds_);
  ExpectError(RunLancelet({"delete", ds_, "--where", "id = "}), "position");
  ExpectError(RunLancelet({"delete", ds_, "--where", "nosuch = 1"}), "nosuch");
  EXPECT_EQ(Snapshot(ds_), before);
}

TEST_F(CliTest, CorruptManifestIsReported) {
  std::string manifest = ds_ + "/_versions/" + table::ManifestFileNameV2(1);
  std::string bytes = ReadFileToString(manifest);
  WriteStringToFile(manifest, bytes.substr(0, bytes.size() - 7));
  ExpectError(RunLancelet({"scan", ds_}), manifest);
  // Bit rot inside the message (the footer still says LANC).
  std::string flipped = bytes;
  int64_t position;
  std::memcpy(&position, bytes.data() + bytes.size() - 16, 8);
  for (size_t i = size_t(position) + 4; i < size_t(position) + 36; ++i) flipped[i] = char(0xff);
  WriteStringToFile(manifest, flipped);
  auto r = RunLancelet({"scan", ds_});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(manifest), std::string::npos) << r.err;
}

TEST_F(CliTest, CorruptDataFileIsReported) {
  std::string data = FirstFile("data");
  std::string bytes = ReadFileToString(data);
  WriteStringToFile(data, bytes.substr(0, bytes.size() / 2));
  ExpectError(RunLancelet({"scan", ds_}), fs::path(data).filename().string());
}

TEST_F(CliTest, CorruptDeletionFileIsReportedAndDeleteLeavesNoTrace) {
  ASSERT_EQ(RunLancelet({"delete", ds_, "--where", "id = 1"}).exit_code, 0);
  std::string del = FirstFile("_deletions");
  WriteStringToFile(del, "garbage");
  ExpectError(RunLancelet({"scan", ds_}), fs::path(del).filename().string());
  // A delete that cannot read the old deletion file changes nothing.
  auto before = Snapshot(ds_);
  EXPECT_EQ(RunLancelet({"delete", ds_, "--where", "id = 2"}).exit_code, 1);
  EXPECT_EQ(Snapshot(ds_), before);
}

TEST_F(CliTest, UnknownFeatureFlagsAreRefusedByBit) {
  auto store = io::MakeLocalStore();
  std::string manifest_path = ds_ + "/_versions/" + table::ManifestFileNameV2(1);
  auto manifest = table::ReadManifest(*store, manifest_path);
  manifest.set_reader_feature_flags(manifest.reader_feature_flags() | 512);
  store->Put(manifest_path, table::EncodeManifestFile(manifest, nullptr));
  ExpectError(RunLancelet({"scan", ds_}), "reader feature flag 512 (bit 9)");

  manifest.set_reader_feature_flags(0);
  manifest.set_writer_feature_flags(128);
  store->Put(manifest_path, table::EncodeManifestFile(manifest, nullptr));
  EXPECT_EQ(RunLancelet({"count", ds_}).out, "4\n");  // reading is fine
  auto before = Snapshot(ds_);
  ExpectError(RunLancelet({"delete", ds_, "--where", "id = 1"}), "writer feature flag 128 (bit 7)");
  EXPECT_EQ(Snapshot(ds_), before);
}

}  // namespace
}  // namespace lancelet::testing

namespace lancelet::testing {
namespace {

TEST(ReadmeExample, BuildsAndRuns) {
  TempDir dir;
  WriteStringToFile(dir.Join("t.csv"), "id\n1\n2\n3\n4\n");
  std::string ds = dir.Join("t.lance");
  ASSERT_EQ(RunLancelet({"create", ds, "--from", dir.Join("t.csv")}).exit_code, 0);
  auto r = RunCommand(ShellQuote(std::string(LANCELET_BINARY_DIR) + "/readme_example") + " " + ShellQuote(ds));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "version 1, 4 rows\n2 rows in a batch\nnow version 2\n");
}

TEST(ReadmeExample, PrintsTheErrorOfAMissingDataset) {
  auto r = RunCommand(ShellQuote(std::string(LANCELET_BINARY_DIR) + "/readme_example") + " /no/such");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "not found: dataset '/no/such' does not exist\n");
}

// README.md shows examples/readme_example.cc verbatim, as its first cpp block.
TEST(ReadmeExample, ReadmeCopyIsTheFile) {
  std::string readme = ReadFileToString(std::string(LANCELET_SOURCE_DIR) + "/README.md");
  size_t start = readme.find("```cpp\n");
  ASSERT_NE(start, std::string::npos);
  start += 7;
  size_t end = readme.find("```\n", start);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(readme.substr(start, end - start),
            ReadFileToString(std::string(LANCELET_SOURCE_DIR) + "/examples/readme_example.cc"));
}

}  // namespace
}  // namespace lancelet::testing
