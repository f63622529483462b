// SQL scripts: every statement is parsed before any runs, so a syntax error anywhere
// changes nothing; statements then commit one by one.
#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "lancelet/sql.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

class ScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SqlSession(dir_.RootUri()).ExecuteScript("CREATE TABLE t (id int64, val int64); INSERT INTO t VALUES (1, 10), (2, 20)");
  }
  uint64_t Version() const { return Dataset::Open(dir_.Uri("t.lance"))->version(); }
  TempDir dir_;
};

TEST_F(ScriptTest, ASyntaxErrorAnywhereRunsNothing) {
  ASSERT_EQ(Version(), 2u);
  SqlSession session(dir_.RootUri());
  auto error = ThrownError([&] { session.ExecuteScript("UPDATE t SET val = 1 WHERE id < 5; SELEC 1"); });
  ASSERT_TRUE(error);
  EXPECT_EQ(std::string(error->what()),
            "expected a statement (SELECT, WITH, INSERT, UPDATE, DELETE, MERGE, CREATE TABLE, DROP TABLE, CREATE VIEW, DROP VIEW, CREATE INDEX, DROP INDEX, SHOW INDEXES, SHOW TABLES, DESCRIBE, SUMMARIZE, EXPLAIN, OPTIMIZE, ALTER TABLE, COPY, SET, BEGIN, COMMIT or ROLLBACK) at position 1");
  EXPECT_EQ(Version(), 2u);
}

TEST_F(ScriptTest, TheCliRefusesTheWholeScriptGivenOrPiped) {
  auto given = RunLancelet({"sql", "--db", dir_.path(), "UPDATE t SET val = 1; DELETE FROM t; SELECT FROM"});
  EXPECT_EQ(given.exit_code, 1);
  EXPECT_EQ(given.out, "");
  EXPECT_EQ(given.err.rfind("lancelet: expected an expression", 0), 0u) << given.err;
  std::string cmd = "printf 'UPDATE t SET val = 1;\\nSELEC 1;\\n' | " + ShellQuote(LanceletBinary()) + " sql --db " +
                    ShellQuote(dir_.path());
  auto piped = RunCommand(cmd);
  EXPECT_EQ(piped.exit_code, 1);
  EXPECT_EQ(piped.out, "");
  EXPECT_EQ(Version(), 2u);
}

TEST_F(ScriptTest, PipedInputTakesDotCommandsBetweenStatements) {
  // A dot command is a line of its own between statements; .quit stops the input there.
  std::string cmd = "printf '.mode csv\\nSELECT id FROM t\\n  WHERE id = 1;\\n.mode jsonl\\n"
                    "SELECT val FROM t ORDER BY val DESC;\\n  .tables\\n.quit\\nSELECT 3;\\n' | " +
                    ShellQuote(LanceletBinary()) + " sql --db " + ShellQuote(dir_.path());
  auto r = RunCommand(cmd);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "id\n1\n{\"val\":20}\n{\"val\":10}\nt\n");
  // Every statement is still parsed before anything runs.
  cmd = "printf '.mode csv\\nUPDATE t SET val = 0;\\n.tables\\nSELEC 1;\\n' | " + ShellQuote(LanceletBinary()) +
        " sql --db " + ShellQuote(dir_.path());
  r = RunCommand(cmd);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Version(), 2u);
}

TEST_F(ScriptTest, StatementsCommitOneByOneUpToARuntimeError) {
  auto r = RunLancelet({"sql", "--db", dir_.path(), "UPDATE t SET val = 1 WHERE id = 1; SELECT * FROM nope; "
                                                     "UPDATE t SET val = 2 WHERE id = 2"});
  EXPECT_EQ(r.exit_code, 1);
  // The first overlay says so, once.
  EXPECT_EQ(r.out, "UPDATE 1 row; t is now at version 3\nnote: t now has data overlay files (reader feature flag 64); LanceDB and lance read it only with LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES=1 until `lancelet optimize` (SQL: OPTIMIZE) folds them into base columns\n");
  EXPECT_EQ(Version(), 3u);
}

TEST(SqlIndexes, CreateIndexTakesAStructField) {
  TempDir dir;
  PutObject(dir.Uri("rows.jsonl"), "{\"id\": 1, \"s\": {\"a\": 5}}\n{\"id\": 2, \"s\": {\"a\": 6}}\n"
                                   "{\"id\": 3, \"s\": {\"a\": 5}}\n");
  SqlSession session(dir.RootUri());
  session.Execute("CREATE TABLE n AS SELECT * FROM read_json('rows.jsonl')");
  EXPECT_EQ(session.Execute("CREATE INDEX sa ON n (s.a)").message.rfind("CREATE INDEX sa", 0), 0u);
  const std::string plan = session.Execute("EXPLAIN SELECT id FROM n WHERE s.a = 5").message;
  EXPECT_NE(plan.find("index sa: s.a = 5: 2 hits in 1 fragments;"), std::string::npos) << plan;
  const RecordBatchPtr rows = session.Execute("SELECT id FROM n WHERE s.a = 5").rows;
  ASSERT_EQ(rows->num_rows(), 2);
  EXPECT_EQ(rows->column(0)->values<int64_t>()[0], 1);
  EXPECT_EQ(rows->column(0)->values<int64_t>()[1], 3);
  auto missing = ThrownError([&] { session.Execute("CREATE INDEX sb ON n (s.b)"); });
  ASSERT_TRUE(missing);
  EXPECT_NE(std::string(missing->what()).find("no column 's.b' in table 'n'"), std::string::npos) << missing->what();
}

}  // namespace
}  // namespace lancelet::testing
