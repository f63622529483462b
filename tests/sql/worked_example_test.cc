// The spec's worked example (data_overlay_files.md, steps 1, 2, 4 and 5) as SQL through
// the CLI, with exact outputs and the change feed of its writes; and a multi-fragment, multi-branch MERGE whose result is
// one sparse overlay per fragment plus deletions and an appended fragment in one
// version. The reference (with overlays enabled) must read both datasets identically.
#include <gtest/gtest.h>

#include "lancelet/ipc.h"
#include "support/json_rows.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

const char* kOverlayEnv = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1";

CommandResult Sql(const std::string& db, const std::string& statements) {
  return RunLancelet({"sql", "--db", db, statements});
}

std::string SqlOk(const std::string& db, const std::string& statements) {
  auto r = Sql(db, statements);
  EXPECT_EQ(r.exit_code, 0) << statements << "\n" << r.err;
  return r.out;
}

std::string Inspect(const std::string& ds) {
  auto r = RunLancelet({"inspect", ds});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

// The lines of `text` that contain `needle`.
std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  for (const auto& l : SplitLines(text))
    if (l.find(needle) != std::string::npos) out.push_back(l);
  return out;
}

void ExpectReferenceAgrees(const std::string& ds) {
  if (!OracleAvailable()) return;
  auto ours = RunLancelet({"scan", ds, "--format", "jsonl", "--with-rowaddr"});
  auto theirs = RunOracle({"dump", ds, "--with-rowaddr"}, kOverlayEnv);
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  EXPECT_FALSE(ours.out.empty());
  EXPECT_EQ(DiffJsonLines(ours.out, theirs.out), "");
}

TEST(WorkedExampleTest, StepsOneTwoFourFiveAsSql) {
  TempDir dir;
  std::string db = dir.path();
  EXPECT_EQ(SqlOk(db,
                  "CREATE TABLE users (id int32, name utf8, age int32, embedding fixed_size_list<float32,4>) "
                  "WITH (stable_row_ids = true) AS VALUES "
                  "(1, 'Alice', 30, [0.1, 0.2, 0.3, 0.4]), (2, 'Bob', 25, [0.5, 0.6, 0.7, 0.8]), "
                  "(3, 'Carol', 40, [0.9, 1.0, 1.1, 1.2]), (4, 'Dave', 22, [1.3, 1.4, 1.5, 1.6])"),
            "CREATE TABLE users: 4 rows; version 1\n");
  std::string ds = dir.Join("users.lance");

  // Step 1: a dense overlay on age for offsets {1, 3}, committed as version 2.
  EXPECT_EQ(SqlOk(db, "UPDATE users SET age = age + 1 WHERE id IN (2, 4)"),
            "UPDATE 2 rows; users is now at version 2\nnote: users now has data overlay files (reader feature flag 64); LanceDB and lance read it only with LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1 until `lancelet optimize` (SQL: OPTIMIZE) folds them into base columns\n");
  auto v2 = Inspect(ds);
  EXPECT_EQ(LinesWith(v2, "overlay 0:").size(), 1u);
  EXPECT_NE(v2.find("committed_version 2, dense"), std::string::npos) << v2;
  EXPECT_NE(v2.find("field age [id 2]: 2 cells"), std::string::npos) << v2;

  // Step 2.
  EXPECT_EQ(SqlOk(db, "SELECT id, age FROM users"),
            "id | age\n"
            "---+----\n"
            " 1 |  30\n"
            " 2 |  26\n"
            " 3 |  40\n"
            " 4 |  23\n"
            "(4 rows)\n");

  // Step 4: two branches touch different fields of different rows: one sparse overlay.
  WriteStringToFile(dir.Join("staged.csv"),
                    "id,kind,name,embedding\n"
                    "2,embed,,\"[2.5, 2.5, 2.5, 2.5]\"\n"
                    "3,rename,Caroline,\n"
                    "4,rename,David,\n");
  EXPECT_EQ(SqlOk(db, "MERGE INTO users USING read_csv('" + dir.Join("staged.csv") +
                          "') AS staged ON users.id = staged.id "
                          "WHEN MATCHED AND staged.kind = 'rename' THEN UPDATE SET name = staged.name "
                          "WHEN MATCHED AND staged.kind = 'embed' THEN UPDATE SET embedding = staged.embedding"),
            "MERGE 3 rows updated, 0 deleted, 0 inserted; users is now at version 3\n");
  auto v3 = Inspect(ds);
  EXPECT_NE(v3.find("overlay 1: committed_version 3, sparse"), std::string::npos) << v3;
  EXPECT_NE(v3.find("field name [id 1]: 2 cells"), std::string::npos) << v3;
  EXPECT_EQ(LinesWith(v3, "field "),
            (std::vector<std::string>{"      field age [id 2]: 2 cells", "      field name [id 1]: 2 cells",
                                      "      field embedding [id 3]: 1 cells"}))
      << v3;

  // Step 5.
  EXPECT_EQ(SqlOk(db, "SELECT name, age, embedding FROM users"),
            "name     | age | embedding\n"
            "---------+-----+----------------------------\n"
            "Alice    |  30 | [0.1, 0.2, 0.3, \u2026 4 values]\n"
            "Bob      |  26 | [2.5, 2.5, 2.5, \u2026 4 values]\n"
            "Caroline |  40 | [0.9, 1, 1.1, \u2026 4 values]\n"
            "David    |  23 | [1.3, 1.4, 1.5, \u2026 4 values]\n"
            "(4 rows)\n");
  ExpectReferenceAgrees(ds);

  // The change feed: steps 1 and 4 as update pairs naming the columns each wrote.
  EXPECT_EQ(SqlOk(db, "SELECT _commit_version AS v, _change_type AS kind, _rowid, _changed_columns AS cols, name, age "
                      "FROM table_changes('users', 1)"),
            "v | kind             | _rowid | cols          | name     | age\n"
            "--+------------------+--------+---------------+----------+----\n"
            "2 | update_preimage  |      1 | [\"age\"]       | Bob      |  25\n"
            "2 | update_postimage |      1 | [\"age\"]       | Bob      |  26\n"
            "2 | update_preimage  |      3 | [\"age\"]       | Dave     |  22\n"
            "2 | update_postimage |      3 | [\"age\"]       | Dave     |  23\n"
            "3 | update_preimage  |      1 | [\"embedding\"] | Bob      |  26\n"
            "3 | update_postimage |      1 | [\"embedding\"] | Bob      |  26\n"
            "3 | update_preimage  |      2 | [\"name\"]      | Carol    |  40\n"
            "3 | update_postimage |      2 | [\"name\"]      | Caroline |  40\n"
            "3 | update_preimage  |      3 | [\"name\"]      | Dave     |  23\n"
            "3 | update_postimage |      3 | [\"name\"]      | David    |  23\n"
            "(10 rows)\n");
}

TEST(WorkedExampleTest, MultiBranchMergeIsOneSparseOverlayPerFragmentInOneVersion) {
  TempDir dir;
  std::string db = dir.path();
  SqlOk(db,
        "CREATE TABLE items (id int32, label utf8, qty int64, v fixed_size_list<float32,2>) "
        "WITH (max_rows_per_file = 4, file_version = '2.1') AS VALUES "
        "(1, 'a', 10, [1, 1]), (2, 'b', 20, [2, 2]), (3, 'c', 30, [3, 3]), (4, 'd', 40, [4, 4]), "
        "(5, 'e', 50, [5, 5]), (6, 'f', 60, [6, 6]), (7, 'g', 70, [7, 7]), (8, 'h', 80, [8, 8])");
  SqlOk(db,
        "CREATE TABLE delta (id int32, op utf8, label utf8, qty int64, v fixed_size_list<float32,2>) AS VALUES "
        "(1, 'relabel', 'A', NULL, NULL), (2, 'count', NULL, 21, NULL), (3, 'both', 'C', 31, [0, 0]), "
        "(6, 'relabel', 'F', NULL, NULL), (7, 'count', NULL, 71, NULL), (8, 'drop', NULL, NULL, NULL), "
        "(4, 'drop', NULL, NULL, NULL), (9, 'new', 'i', 90, [9, 9])");
  std::string ds = dir.Join("items.lance");
  EXPECT_EQ(SqlOk(db, "MERGE INTO items USING delta AS d ON items.id = d.id "
                      "WHEN MATCHED AND d.op = 'relabel' THEN UPDATE SET label = d.label "
                      "WHEN MATCHED AND d.op = 'count' THEN UPDATE SET qty = d.qty "
                      "WHEN MATCHED AND d.op = 'both' THEN UPDATE SET label = d.label, qty = d.qty, v = d.v "
                      "WHEN MATCHED AND d.op = 'drop' THEN DELETE "
                      "WHEN NOT MATCHED THEN INSERT VALUES (d.id, d.label, d.qty, d.v)"),
            "MERGE 5 rows updated, 2 deleted, 1 inserted; items is now at version 2\nnote: items now has data overlay files (reader feature flag 64); LanceDB and lance read it only with LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1 until `lancelet optimize` (SQL: OPTIMIZE) folds them into base columns\n");
  auto out = Inspect(ds);
  // Both old fragments got exactly one sparse overlay, stamped with the MERGE's version.
  auto overlays = LinesWith(out, "overlay ");
  ASSERT_EQ(overlays.size(), 2u) << out;
  for (const auto& l : overlays) EXPECT_NE(l.find("committed_version 2, sparse"), std::string::npos) << l;
  // Fragment 0: label {0, 2}, qty {1, 2}, v {2}; fragment 1: label {1}, qty {2}.
  EXPECT_EQ(LinesWith(out, "field "),
            (std::vector<std::string>{"      field label [id 1]: 2 cells", "      field qty [id 2]: 2 cells",
                                      "      field v [id 3]: 1 cells", "      field label [id 1]: 1 cells",
                                      "      field qty [id 2]: 1 cells"}))
      << out;
  EXPECT_EQ(LinesWith(out, "deleted, ").size(), 3u) << out;
  EXPECT_NE(out.find("fragment 0: 4 physical rows, 1 deleted, 3 live"), std::string::npos) << out;
  EXPECT_NE(out.find("fragment 1: 4 physical rows, 1 deleted, 3 live"), std::string::npos) << out;
  EXPECT_NE(out.find("fragment 2: 1 physical rows, 0 deleted, 1 live"), std::string::npos) << out;
  auto versions = RunLancelet({"versions", ds});
  EXPECT_EQ(LinesWith(versions.out, "\tUpdate").size(), 1u) << versions.out;

  EXPECT_EQ(SqlOk(db, "SELECT id, label, qty, v FROM items"),
            "id | label | qty | v\n"
            "---+-------+-----+-------\n"
            " 1 | A     |  10 | [1, 1]\n"
            " 2 | b     |  21 | [2, 2]\n"
            " 3 | C     |  31 | [0, 0]\n"
            " 5 | e     |  50 | [5, 5]\n"
            " 6 | F     |  60 | [6, 6]\n"
            " 7 | g     |  71 | [7, 7]\n"
            " 9 | i     |  90 | [9, 9]\n"
            "(7 rows)\n");
  // The version before is still there, unchanged.
  EXPECT_EQ(SqlOk(db, "SELECT count(*) AS n, sum(qty) AS q FROM items VERSION AS OF 1"),
            "n |   q\n--+----\n8 | 360\n(1 row)\n");
  ExpectReferenceAgrees(ds);
}

TEST(SqlCliTest, ReadsStatementsFromStdinAndReportsErrorsWithACaret) {
  TempDir dir;
  std::string script = dir.Join("script.sql");
  WriteStringToFile(script,
                    "CREATE TABLE t (id int32);\n"
                    "INSERT INTO t VALUES (1),\n  (2);\n"
                    "SELECT id FROM t WHERE idd = 1;\n"
                    "SELECT count(*) AS n FROM t;\n");
  auto r = RunCommand(ShellQuote(LanceletBinary()) + " sql --db " + ShellQuote(dir.path()) + " --format csv < " +
                      ShellQuote(script));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "n\n2\n");
  EXPECT_NE(r.err.find("lancelet: unknown column"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\n  SELECT id FROM t WHERE idd = 1\n                         ^\n"), std::string::npos) << r.err;
}

TEST(SqlCliTest, WritesJsonLinesCsvAndArrowWithMessagesOnStderr) {
  TempDir dir;
  SqlOk(dir.path(), "CREATE TABLE t (id int32, v utf8) AS VALUES (1, 'a'), (2, NULL)");
  auto jsonl = RunLancelet({"sql", "--db", dir.path(), "--format", "jsonl", "INSERT INTO t VALUES (3, 'c'); "
                                                                          "SELECT * FROM t ORDER BY id DESC"});
  EXPECT_EQ(jsonl.exit_code, 0) << jsonl.err;
  EXPECT_EQ(jsonl.out, "{\"id\":3,\"v\":\"c\"}\n{\"id\":2,\"v\":null}\n{\"id\":1,\"v\":\"a\"}\n");
  EXPECT_EQ(jsonl.err, "INSERT 1 row; t is now at version 2\n");
  auto csv = RunLancelet({"sql", "--db", dir.path(), "--format", "csv", "SELECT v, id FROM t WHERE id < 3"});
  EXPECT_EQ(csv.out, "v,id\na,1\n,2\n");
  auto arrow = RunLancelet({"sql", "--db", dir.path(), "--format", "arrow", "SELECT id FROM t"});
  ASSERT_EQ(arrow.exit_code, 0) << arrow.err;
  auto reader = ReadIpc(arrow.out, "stdout");
  EXPECT_EQ(reader->schema()->ToString(), "id:int32");
  int64_t rows = 0;
  while (auto b = reader->Next()) rows += b->num_rows();
  EXPECT_EQ(rows, 3);
}

}  // namespace
}  // namespace lancelet::testing
