// A transaction left open when the session or the shell's input ends is rolled back.
#include <sstream>

#include <gtest/gtest.h>

#include "lancelet/sql.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

int64_t Count(const std::string& db) {
  SqlSession session(db);
  return GetScalar(*session.Execute("SELECT count(*) FROM t").rows->column(0), 0).as_int();
}

TEST(TransactionTest, ASessionThatEndsInsideATransactionRollsItBack) {
  TempDir dir;
  const std::string db = dir.RootUri();
  SqlSession(db).Execute("CREATE TABLE t AS SELECT range AS id FROM range(10)");
  {
    SqlSession session(db);
    session.ExecuteScript("BEGIN; DELETE FROM t WHERE id < 4; INSERT INTO t VALUES (100)");
    EXPECT_TRUE(session.InTransaction());
    EXPECT_EQ(Count(db), 7);  // committed as it ran: others see it
  }
  EXPECT_EQ(Count(db), 10);
}

TEST(TransactionTest, TheShellSaysItRollsBackWhenTheInputEndsInsideOne) {
  TempDir dir;
  const std::string db = dir.RootUri();
  SqlSession(db).Execute("CREATE TABLE t AS SELECT range AS id FROM range(3)");
  std::istringstream in("BEGIN;\nDELETE FROM t;\n");
  std::ostringstream out, err;
  SqlShellOptions options;
  options.format = "csv";
  EXPECT_EQ(RunSqlShell(db, "", in, out, err, options), 0);
  EXPECT_EQ(err.str(), "BEGIN\nDELETE 3 rows; t is now at version 2\nlancelet: the input ended inside a transaction "
                       "without COMMIT: ROLLBACK: t restored to version 1 (as version 3)\n");
  EXPECT_EQ(Count(db), 3);
  std::istringstream none;
  EXPECT_EQ(RunSqlShell(db, "BEGIN; INSERT INTO t VALUES (4); COMMIT", none, out, err, options), 0);
  EXPECT_EQ(Count(db), 4);
}

}  // namespace
}  // namespace lancelet::testing
