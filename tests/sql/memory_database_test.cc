// A SQL database at a memory:// URI: tables are created, listed, read, joined with a CSV
// file beside them and dropped through the store alone.
#include <filesystem>

#include <gtest/gtest.h>

#include "io/object_store.h"
#include "lancelet/dataset.h"
#include "lancelet/scalar.h"
#include "lancelet/sql.h"

namespace lancelet {
namespace {

TEST(MemoryDatabaseTest, TablesAndInputFilesLiveInTheStore) {
  const std::string db = "memory://memory_database_test/db";
  SqlSession session(db);
  session.Execute("CREATE TABLE t (id BIGINT, name VARCHAR)");
  session.Execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')");
  io::DefaultMemoryStore()->Put(db + "/extra.csv", "id,name\n3,c\n");
  session.Execute("INSERT INTO t SELECT * FROM read_csv('extra.csv')");
  EXPECT_EQ(Dataset::Open(db + "/t.lance")->CountRows(), 3u);
  EXPECT_EQ(GetScalar(*session.Execute("SELECT name FROM t WHERE id = 3").rows->column(0), 0).as_string(), "c");
  RecordBatchPtr tables = session.Execute("SHOW TABLES").rows;
  ASSERT_EQ(tables->num_rows(), 1);
  EXPECT_EQ(GetScalar(*tables->column(0), 0).as_string(), "t");

  EXPECT_EQ(session.Execute("DROP TABLE t").message, "DROP TABLE t");
  EXPECT_TRUE(io::DefaultMemoryStore()->List(db + "/t.lance").empty());
  EXPECT_EQ(session.Execute("SHOW TABLES").rows->num_rows(), 0);
  EXPECT_FALSE(std::filesystem::exists("memory:"));
}

}  // namespace
}  // namespace lancelet
