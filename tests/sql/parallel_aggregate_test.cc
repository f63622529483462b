// GROUP BY on several threads (HashAggregate::AddAll): parts merged by key give what one
// thread gives, groups in order of first appearance; a part past its share of the
// budget ends the parallel phase and the rest spills as on one thread; aggregates that
// follow row order stay on one thread. And ORDER BY's parallel sort (sql/sort_keys.cc).
#include <gtest/gtest.h>

#include <iomanip>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "lancelet/record_batch.h"
#include "lancelet/scalar.h"
#include "lancelet/sql.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

std::string Text(const Scalar& v) {
  if (v.is_null()) return "NULL";
  if (std::holds_alternative<bool>(v.value)) return v.as_bool() ? "true" : "false";
  if (std::holds_alternative<int64_t>(v.value)) return std::to_string(std::get<int64_t>(v.value));
  if (std::holds_alternative<uint64_t>(v.value)) return std::to_string(std::get<uint64_t>(v.value));
  if (std::holds_alternative<double>(v.value)) {
    std::ostringstream text;
    text << std::setprecision(17) << v.as_double();
    return text.str();
  }
  if (std::holds_alternative<std::string>(v.value)) return v.as_string();
  std::string items = "[";
  for (const Scalar& item : v.as_list()) items += Text(item) + ",";
  return items + "]";
}

std::vector<std::string> Cells(const RecordBatch& rows) {
  std::vector<std::string> out;
  for (int64_t r = 0; r < rows.num_rows(); ++r) {
    std::string row;
    for (const auto& column : rows.columns()) row += Text(GetScalar(*column, r)) + "|";
    out.push_back(row);
  }
  return out;
}

class ParallelAggregateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    SqlSession session(dir_->RootUri());
    // 300k rows in 37 batches or more: k, g = k * 7919 % 5003 (groups first seen out of
    // order), s a string of 1,000 values, x = k % 97 - 40 (negatives and zeros).
    session.Execute("CREATE TABLE t AS SELECT range AS k, range * 7919 % 5003 AS g, 'v' || (range % 1000) AS s, "
                    "range % 97 - 40 AS x FROM range(300000)");
  }
  static void TearDownTestSuite() {
    SetReadAheadThreads(0);
    delete dir_;
    dir_ = nullptr;
  }
  // The statement's rows at each thread count, under `memory`.
  static std::vector<std::vector<std::string>> AtThreads(const std::string& statement, const std::string& memory = "") {
    std::vector<std::vector<std::string>> results;
    for (int threads : {1, 2, 4, 8}) {
      SetReadAheadThreads(threads);
      SqlSession session(dir_->RootUri());
      if (!memory.empty()) session.Execute("SET memory_limit = '" + memory + "'");
      results.push_back(Cells(*session.Execute(statement).rows));
    }
    SetReadAheadThreads(0);
    return results;
  }
  static TempDir* dir_;
};
TempDir* ParallelAggregateTest::dir_ = nullptr;

TEST_F(ParallelAggregateTest, MergedPartsGiveOneThreadsGroupsInFirstAppearanceOrder) {
  const auto results = AtThreads(
      "SELECT g, count(*), count(x), sum(x), min(s), max(k), avg(x), bool_or(x > 55), "
      "count(DISTINCT s), sum(DISTINCT x), median(x), round(stddev(x), 6) FROM t GROUP BY g");
  ASSERT_EQ(results[0].size(), 5003u);
  EXPECT_EQ(results[0][0].substr(0, 2), "0|");  // k = 0 is the first row
  for (size_t t = 1; t < results.size(); ++t) EXPECT_EQ(results[t], results[0]) << "thread count #" << t;
  // Groups that first appear in later batches, which other threads' parts hold: still in
  // order of first appearance after the merge.
  const auto later = AtThreads("SELECT k - k % 1000 AS b, count(*), max(s) FROM t GROUP BY b");
  ASSERT_EQ(later[0].size(), 300u);
  EXPECT_EQ(later[0][299], "299000|1000|v999|");
  for (size_t t = 1; t < later.size(); ++t) EXPECT_EQ(later[t], later[0]) << "thread count #" << t;
}

TEST_F(ParallelAggregateTest, WithoutGroupByTheOneGroupMerges) {
  const auto results = AtThreads("SELECT count(*), sum(k), min(s), max(s), count(DISTINCT g), median(k) FROM t");
  ASSERT_EQ(results[0].size(), 1u);
  EXPECT_EQ(results[0][0], "300000|44999850000|v0|v999|5003|149999.5|");
  for (size_t t = 1; t < results.size(); ++t) EXPECT_EQ(results[t], results[0]);
}

// count(DISTINCT) keeps its pairs in tables by value, merged table by table on several
// threads when there are few groups (CountDistinctAccumulator), on one when there are many.
TEST_F(ParallelAggregateTest, CountDistinctMergesTableByTable) {
  const auto one_group = AtThreads("SELECT count(DISTINCT k), count(DISTINCT s), count(DISTINCT x), "
                                   "count(DISTINCT k % 1000 || s) FROM t");
  EXPECT_EQ(one_group[0], std::vector<std::string>{"300000|1000|97|1000|"});
  const auto many_groups = AtThreads("SELECT k % 100000 AS b, count(DISTINCT x), count(DISTINCT s) FROM t GROUP BY b");
  ASSERT_EQ(many_groups[0].size(), 100'000u);
  EXPECT_EQ(many_groups[0][99'999], "99999|3|1|");  // k = 99999, 199999, 299999
  for (size_t t = 1; t < 4; ++t) {
    EXPECT_EQ(one_group[t], one_group[0]) << "thread count #" << t;
    EXPECT_EQ(many_groups[t], many_groups[0]) << "thread count #" << t;
  }
}

TEST_F(ParallelAggregateTest, APartPastItsShareOfTheBudgetEndsTheParallelPhaseAndTheRestSpills) {
  // 300k groups under 8 MB: every thread count spills partitions, in the same groups.
  const auto results = AtThreads("SELECT k % 150000 AS b, count(*), sum(x) FROM t GROUP BY b ORDER BY b", "8MB");
  ASSERT_EQ(results[0].size(), 150'000u);
  for (size_t t = 1; t < results.size(); ++t) EXPECT_EQ(results[t], results[0]);
}

TEST_F(ParallelAggregateTest, APartPastItsShareWithinTheBudgetKeepsFirstAppearanceOrder) {
  // 150k groups (some 23 MB held) under 64 MB: past a part's share at 2 threads or more,
  // within the budget. A table's scan is read by the threads themselves, a piece each:
  // the batches of pieces not yet added when the parts stopped are added after the merge,
  // and a group that first appears among them (the keys recur at scattered rows) must
  // still come out where its first row puts it.
  const auto results = AtThreads("SELECT k * 7919 % 150001 AS b, count(*), sum(x) FROM t GROUP BY b", "64MB");
  ASSERT_EQ(results[0].size(), 150'001u);
  EXPECT_EQ(results[0][0], "0|2|-41|");  // k = 0 and 150001
  for (size_t t = 1; t < results.size(); ++t) EXPECT_EQ(results[t], results[0]) << "thread count #" << t;
}

TEST_F(ParallelAggregateTest, AggregatesThatFollowRowOrderStayOnOneThread) {
  const auto results =
      AtThreads("SELECT g, string_agg(s, ','), list(k), arg_min(k, x) FROM t WHERE g < 40 GROUP BY g");
  ASSERT_EQ(results[0].size(), 40u);
  for (size_t t = 1; t < results.size(); ++t) EXPECT_EQ(results[t], results[0]);
}

// Window functions sort their input in parts on several threads (Sorter): small
// partitions, large streamed ones and one whole-table partition give one thread's values.
TEST_F(ParallelAggregateTest, WindowsOverPartsSortedInParallelGiveOneThreadsValues) {
  const auto small = AtThreads(
      "SELECT k, row_number() OVER (PARTITION BY g ORDER BY k) AS rn, lag(k) OVER (PARTITION BY g ORDER BY k) AS prev, "
      "sum(x) OVER (PARTITION BY g) AS total FROM t");
  const auto streamed = AtThreads("SELECT k, sum(x) OVER (PARTITION BY k % 3 ORDER BY k) AS run, "
                                  "rank() OVER (ORDER BY s) AS r FROM t");
  const auto whole = AtThreads("SELECT k, percent_rank() OVER (ORDER BY x, k) AS pr FROM t WHERE k < 50000");
  ASSERT_EQ(small[0].size(), 300'000u);
  ASSERT_EQ(streamed[0].size(), 300'000u);
  ASSERT_EQ(whole[0].size(), 50'000u);
  EXPECT_EQ(small[0][0], "0|1|NULL|399|");  // g = 0: the 60 multiples of 5003
  EXPECT_EQ(whole[0][0], "0|0|");  // rows come in window order
  for (size_t t = 1; t < 4; ++t) {
    EXPECT_EQ(small[t], small[0]) << "thread count #" << t;
    EXPECT_EQ(streamed[t], streamed[0]) << "thread count #" << t;
    EXPECT_EQ(whole[t], whole[0]) << "thread count #" << t;
  }
}

TEST_F(ParallelAggregateTest, SortsInPartsGiveOneThreadsOrder) {
  const auto all = AtThreads("SELECT k, s, x FROM t ORDER BY s DESC, x, k DESC");
  const auto top = AtThreads("SELECT k FROM t ORDER BY x, s LIMIT 1000 OFFSET 70000");
  ASSERT_EQ(all[0].size(), 300'000u);
  EXPECT_EQ(all[0][0], "248999|v999|-40|");
  ASSERT_EQ(top[0].size(), 1000u);
  for (size_t t = 1; t < all.size(); ++t) {
    EXPECT_EQ(all[t], all[0]);
    EXPECT_EQ(top[t], top[0]);
  }
}

}  // namespace
}  // namespace lancelet::testing
