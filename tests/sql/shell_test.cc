// The shell's dot commands read the tables through the SQL session: its database's store
// and its storage options, as statements do (in the memory: run, a memory:// database).
#include <sstream>

#include <gtest/gtest.h>

#include "lancelet/dataset.h"
#include "lancelet/sql.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

const StorageOptions kOptions = {{"timeout", "30s"}, {"AWS_REGION", "us-east-1"}};

TEST(SqlShellTest, TablesAndSchemaGoThroughTheSessionsStoreAndOptions) {
  TempDir dir;
  const std::string db = dir.RootUri();
  SqlSession session(db, kOptions);
  session.ExecuteScript("CREATE TABLE b (id int64, name utf8); CREATE TABLE a (x float64)");
  std::istringstream in(".tables\n.schema\n.schema b\n.schema nope\n");
  std::ostringstream out, err;
  SqlShellOptions options;
  options.format = "csv";
  options.storage_options = kOptions;
  EXPECT_EQ(RunSqlShell(db, "", in, out, err, options), 1);  // .schema nope failed
  EXPECT_EQ(out.str(), "a\nb\na(x float64)\nb(id int64, name utf8)\nb(id int64, name utf8)\n");
  EXPECT_EQ(err.str(), "lancelet: no table 'nope' in " + db + "\n");
}

TEST(SqlShellTest, TheSessionOpensItsTablesWithItsOptions) {
  TempDir dir;
  SqlSession session(dir.RootUri(), kOptions);
  EXPECT_EQ(session.Tables(), std::vector<std::string>{});
  session.Execute("CREATE TABLE t (id int64) AS VALUES (1), (2)");
  EXPECT_EQ(session.Tables(), std::vector<std::string>{"t"});
  const DatasetPtr t = session.OpenTable("t");
  EXPECT_EQ(t->uri(), dir.Uri("t.lance"));
  EXPECT_EQ(t->CountRows(), 2u);
  auto missing = ThrownError([&] { session.OpenTable("u"); });
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->kind(), ErrorKind::kNotFound);
  EXPECT_EQ(std::string(missing->what()), "no table 'u' in " + dir.RootUri());
}

}  // namespace
}  // namespace lancelet::testing
