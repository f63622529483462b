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

// .import makes a table from a file, then appends to it; .once and .output send results
// to files; .read runs a file's statements and dot commands; markdown and line modes.
TEST(SqlShellTest, ImportReadOutputOnceAndTheMarkdownAndLineModes) {
  TempDir dir;
  TempDir local(TempDir::Use::kLocalScratch);  // the shell's own files
  const std::string csv = local.Join("p.csv"), inner = local.Join("inner.sql");
  WriteStringToFile(csv, "id,name\n1,a\n2,b|c\n");
  WriteStringToFile(inner, "SELECT 5 AS five;\n.mode line\nSELECT 1 AS a, 'x' AS long_name;\n");
  std::istringstream in(".import " + csv + " people\n.import " + csv + " people\n.mode markdown\n" +
                        "SELECT * FROM people ORDER BY id, name;\n.once " + local.Join("once.txt") +
                        "\nSELECT count(*) AS n FROM people;\nSELECT 3 AS three;\n.output " + local.Join("all.txt") +
                        "\nSELECT 4 AS four;\nSELECT 6 AS six;\n.output\n.read " + inner + "\n.read " +
                        local.Join("nope.sql") + "\n.import " + csv + "\n");
  std::ostringstream out, err;
  SqlShellOptions options;
  EXPECT_EQ(RunSqlShell(dir.RootUri(), "", in, out, err, options), 1);
  EXPECT_EQ(out.str(),
            "CREATE TABLE people: 2 rows; version 1\n"
            "INSERT 2 rows; people is now at version 2\n"
            "| id | name |\n|---|---|\n| 1 | a |\n| 1 | a |\n| 2 | b\\|c |\n| 2 | b\\|c |\n"
            "| three |\n|---|\n| 3 |\n"
            "| five |\n|---|\n| 5 |\n"
            "        a = 1\nlong_name = x\n");
  EXPECT_EQ(ReadFileToString(local.Join("once.txt")), "| n |\n|---|\n| 4 |\n");
  EXPECT_EQ(ReadFileToString(local.Join("all.txt")), "| four |\n|---|\n| 4 |\n| six |\n|---|\n| 6 |\n");
  EXPECT_EQ(err.str(), "lancelet: .read: " + local.Join("nope.sql") +
                           ": no such file\n"
                           "lancelet: .import takes a file and a table: .import FILE TABLE\n");
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
