// EXPLAIN ANALYZE runs the query and gives a row per operator: its name (what it reads,
// filters, groups or sorts by), the rows it gave and the seconds spent in it, its inputs
// included; the output end first, after a row for the whole query.
#include <gtest/gtest.h>

#include "lancelet/sql.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

struct Line {
  std::string op;
  int64_t rows;
  double seconds;
};

std::vector<Line> Analyze(SqlSession& session, const std::string& query) {
  const SqlResult r = session.Execute("EXPLAIN ANALYZE " + query);
  std::vector<Line> lines;
  for (int64_t i = 0; i < r.rows->num_rows(); ++i)
    lines.push_back({GetScalar(*r.rows->column(0), i).as_string(), GetScalar(*r.rows->column(1), i).as_int(),
                     GetScalar(*r.rows->column(2), i).as_double()});
  return lines;
}

std::vector<std::pair<std::string, int64_t>> Counts(const std::vector<Line>& lines) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& l : lines) out.push_back({l.op, l.rows});
  return out;
}

using Counted = std::vector<std::pair<std::string, int64_t>>;

class ExplainAnalyzeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    session_.Execute("CREATE TABLE t AS SELECT range AS id, range % 10 AS g FROM range(1000)");
    session_.Execute("CREATE TABLE u AS SELECT range AS k, 'u' || range AS name FROM range(20)");
  }
  TempDir dir_;
  SqlSession session_{dir_.RootUri()};
};

TEST_F(ExplainAnalyzeTest, ScanFilterAggregateSortAndProject) {
  const auto lines = Analyze(session_, "SELECT g, count(*) AS n FROM t WHERE id < 500 GROUP BY g HAVING count(*) > 0 "
                                       "ORDER BY g DESC LIMIT 3");
  EXPECT_EQ(Counts(lines), (Counted{{"query", 3},
                                    {"  project LIMIT 3", 3},
                                    {"  sort g DESC (top 3)", 3},
                                    {"  filter HAVING", 10},
                                    {"  aggregate GROUP BY g", 10},
                                    {"  scan t WHERE id < 500 (id, g)", 500}}));
  for (const auto& l : lines) EXPECT_GE(l.seconds, 0) << l.op;
  // Each operator's time includes its inputs': the query's is the largest.
  for (const auto& l : lines) EXPECT_LE(l.seconds, lines[0].seconds) << l.op;
}

TEST_F(ExplainAnalyzeTest, JoinsWindowsUnionsAndViews) {
  session_.Execute("CREATE VIEW small AS SELECT * FROM t WHERE id < 30");
  EXPECT_EQ(Counts(Analyze(session_, "SELECT s.id, u.name, row_number() OVER (ORDER BY s.id) AS r FROM small s "
                                     "JOIN u ON u.k = s.id")),
            (Counted{{"query", 20},
                     {"  project", 20},
                     {"  window row_number() OVER (ORDER BY \"s.id\")", 20},  // the joined column
                     {"  join", 20},
                     {"  scan u (k, name)", 20},
                     {"  view small", 30},
                     {"  project", 30},
                     {"  scan t WHERE id < 30", 30}}));
  EXPECT_EQ(Counts(Analyze(session_, "SELECT k FROM u UNION ALL SELECT id FROM t WHERE id < 5")),
            (Counted{{"query", 25},
                     {"  project", 25},
                     {"  union all", 25},
                     {"  project", 5},
                     {"  scan t WHERE id < 5 (id)", 5},
                     {"  project", 20},
                     {"  scan u (k)", 20}}));
}

TEST_F(ExplainAnalyzeTest, NeedsASelectAndChangesNothing) {
  EXPECT_THROW(session_.Execute("EXPLAIN ANALYZE DELETE FROM t"), SqlError);
  EXPECT_EQ(Analyze(session_, "SELECT * FROM t")[0].rows, 1000);
  EXPECT_EQ(session_.OpenTable("t")->version(), 1u);
}

}  // namespace
}  // namespace lancelet::testing
