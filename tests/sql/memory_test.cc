// Peak memory of SQL over a table far larger than what a statement may hold. A GROUP BY
// holds its groups (up to its budget, then spills them), a MERGE its source and matches, a SELECT one batch and ORDER BY ...
// LIMIT its top rows: none holds the table. Each statement runs as a `lancelet sql`
// process, and its peak RSS on a 3M-row table is compared with the same statement on a
// 60k-row one (a 640k-row one at several threads, see ExtraKb); a statement that held its
// input would differ by the table's 72 MB of read columns, or more. ctest runs them at 1,
// 2 and 8 threads (LANCELET_THREADS).
#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "lancelet/dataset.h"
#include "support/test_env.h"

namespace lancelet::testing {
namespace {

// k int64 = row, g int64 = row % 1000, v float64 = row / 2, in batches of 64k rows.
class RowsReader final : public RecordBatchReader {
 public:
  explicit RowsReader(int64_t rows) : rows_(rows) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    const int64_t n = std::min<int64_t>(65536, rows_ - next_);
    if (n <= 0) return nullptr;
    FixedWidthBuilder<int64_t> k(DataType::Int64()), g(DataType::Int64());
    FixedWidthBuilder<double> v(DataType::Float64());
    for (int64_t r = next_; r < next_ + n; ++r) {
      k.Append(r);
      g.Append(r % 1000);
      v.Append(double(r) / 2);
    }
    next_ += n;
    return std::make_shared<RecordBatch>(schema_, std::vector<ArrayPtr>{k.Finish(), g.Finish(), v.Finish()}, n);
  }

 private:
  SchemaPtr schema_ = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("k", DataType::Int64()), Field::Make("g", DataType::Int64()), Field::Make("v", DataType::Float64())});
  int64_t rows_, next_ = 0;
};

class SqlMemoryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    for (const auto& [name, rows] : {std::pair{"small", int64_t(60'000)}, std::pair{"medium", int64_t(640'000)},
                                     std::pair{"big", int64_t(3'000'000)}}) {
      RowsReader reader(rows);
      Dataset::Write(dir_->Join(std::string(name) + ".lance"), reader);
    }
    std::string staged = "k,v\n";  // 10k rows spread over the first 60k
    for (int64_t i = 0; i < 10'000; ++i) staged += fmt::format("{},{}\n", i * 6, -i);
    WriteStringToFile(dir_->Join("staged.csv"), staged);
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  // Peak RSS in KiB of `lancelet sql` running `statement` (output discarded). ASan's
  // quarantine would keep freed batches resident, so it is turned off, and its allocator
  // returns freed pages at once (by default it waits 5 s, so whether a spilling statement's
  // freed partitions counted depended on timing: 228-257 MB over runs at 8 threads, while
  // releasing at once measures 227 MB every time). Data files are
  // read with pread (LANCELET_MMAP=0): a file that served many small reads is mapped
  // (io/local_store.cc), and a parallel scan's morsels read small chunks where each
  // begins, so the pages of the table's files it touched would count in RSS. They are
  // the page cache's, shared and reclaimable, not memory the statement holds. The
  // statement runs at the test's LANCELET_THREADS (ctest runs these tests at 1, 2 and 8).
  static int64_t PeakRssKb(const std::string& statement, const std::string& env = "") {
    const char* threads = std::getenv("LANCELET_THREADS");
    auto r = RunCommand(fmt::format(
        "LANCELET_THREADS={} {} LANCELET_MMAP=0 ASAN_OPTIONS=quarantine_size_mb=0:allocator_release_to_os_interval_ms=0:detect_leaks=0:abort_on_error=1 /usr/bin/time -f 'peak_rss_kb=%M' {} "
        "sql --db {} --format csv {} >/dev/null",
        threads ? threads : "1", env, ShellQuote(LanceletBinary()), ShellQuote(dir_->path()), ShellQuote(statement)));
    EXPECT_EQ(r.exit_code, 0) << statement << "\n" << r.err;
    const size_t at = r.err.rfind("peak_rss_kb=");
    if (at == std::string::npos) {
      ADD_FAILURE() << "no peak RSS in: " << r.err;
      return 0;
    }
    return std::stoll(r.err.substr(at + 12));
  }

  // The extra peak RSS the 3M-row table costs over a smaller one, in KiB. {0} in
  // `statement_on_table` stands for the table. The smaller one is the 60k-row table at one
  // thread; at more, the 640k-row one: each thread holds a batch or a morsel of 64k rows
  // (1.5 MB of these columns) and its own state, a cost that grows with the threads, not
  // with the input, and the 60k-row table (one batch) reads on one thread. A statement
  // that held its input would still cost the difference's 57 MB of read columns more.
  static int64_t ExtraKb(const std::string& statement_on_table, const std::string& env = "") {
    const char* threads = std::getenv("LANCELET_THREADS");
    const bool parallel = threads && std::atoi(threads) > 1;
    const std::string baseline = parallel ? "medium" : "small";
    // At several threads the baseline's peak depends on how the threads happened to share
    // the table's pieces (197-212 MB under ASan at 8 threads for the spilling GROUP BY):
    // the larger of two runs.
    int64_t smaller = PeakRssKb(fmt::format(fmt::runtime(statement_on_table), baseline), env);
    if (parallel) smaller = std::max(smaller, PeakRssKb(fmt::format(fmt::runtime(statement_on_table), baseline), env));
    const int64_t big = PeakRssKb(fmt::format(fmt::runtime(statement_on_table), "big"), env);
    std::cout << fmt::format("{}: {} KiB on {} rows, {} KiB on 3M rows\n", statement_on_table, smaller,
                             parallel ? "640k" : "60k", big);
    return big - smaller;
  }

  // The CSV `statement` prints under a memory budget of `budget_mb`.
  static std::string Csv(const std::string& statement, int budget_mb) {
    auto r = RunCommand(fmt::format("LANCELET_SQL_MEMORY_MB={} {} sql --db {} --format csv {}", budget_mb,
                                    ShellQuote(LanceletBinary()), ShellQuote(dir_->path()), ShellQuote(statement)));
    EXPECT_EQ(r.exit_code, 0) << statement << "\n" << r.err;
    return r.out;
  }

  // The CSV `statement` prints under `budget_mb`, expected to be what it prints held
  // (a 1 GB budget).
  static std::string CsvAsHeld(const std::string& statement, int budget_mb) {
    const std::string under_budget = Csv(statement, budget_mb);
    EXPECT_EQ(under_budget, Csv(statement, 1024)) << statement;
    return under_budget;
  }

  static TempDir* dir_;
};

TempDir* SqlMemoryTest::dir_ = nullptr;

// The 3M-row table is 72 MB of values, so an operator that held its input would be far
// past this. Calibrated under ASan: a spilling GROUP BY with a 32 MB budget measured
// 18.4-19.3 MiB alone and 20.4 MiB once under a full parallel ctest (2026-12-05).
constexpr int64_t kAllowedExtraKb = 24 * 1024;

TEST_F(SqlMemoryTest, GroupByHoldsItsGroupsNotItsInput) {
  EXPECT_LT(ExtraKb("SELECT g, count(*) AS n, sum(k) AS total, max(v) AS top, stddev(v) AS sd FROM {0} GROUP BY g"),
            kAllowedExtraKb);
  EXPECT_EQ(Lancelet({"sql", "--db", dir_->path(), "--format", "csv",
                      "SELECT count(*) AS groups, sum(n) AS rows, max(top) AS top FROM "
                      "(SELECT g, count(*) AS n, max(v) AS top FROM big GROUP BY g)"}),
            "groups,rows,top\n1000,3000000,1499999.5\n");
}

TEST_F(SqlMemoryTest, GroupByWithMoreGroupsThanItsBudgetSpillsPartitions) {
  // 3M groups of 3 columns: held, they take some 500 MB; under an 8 MB budget, groups past
  // 4 MB spill their rows to 16 partitions, each grouped in turn (and split again when
  // still too large).
  EXPECT_LT(ExtraKb("SELECT k, count(*) AS n, sum(v) AS total FROM {0} GROUP BY k", "LANCELET_SQL_MEMORY_MB=8"),
            32 * 1024);
  // median and DISTINCT keep their groups' values, which count against the budget too
  // (when they did not, the groups made before the budget was reached took 32 MB more).
  EXPECT_LT(ExtraKb("SELECT k % 300000 AS b, median(v) AS m, count(DISTINCT g) AS d FROM {0} GROUP BY b",
                    "LANCELET_SQL_MEMORY_MB=32"),
            kAllowedExtraKb);
  // Spilled (1 MB: partitions of partitions) or held, the same groups: two keys, NULL
  // keys, string keys, and aggregates that keep state (median) or values (DISTINCT).
  const std::string two_keys =
      "SELECT k % 7919 AS b, g % 3 AS c, count(*) AS n, sum(k) AS s, max(v) AS top, median(v) AS med, "
      "count(DISTINCT g) AS gs FROM small GROUP BY b, c ORDER BY b, c";
  const std::string two_keys_spilled = CsvAsHeld(two_keys, 1);
  const auto lines = SplitLines(two_keys_spilled);
  ASSERT_EQ(lines.size(), 12212u + 1);  // the (b, c) pairs that occur
  EXPECT_EQ(lines[1], "0,0,1,0,0,0,1");
  EXPECT_EQ(lines[2], "0,1,7,221732,27716.5,15838,7");  // k = 7919 * i, i = 1..7
  const std::string null_keys =
      "SELECT CASE WHEN k % 10 = 0 THEN NULL ELSE k END AS b, count(*) AS n FROM small GROUP BY b "
      "ORDER BY n DESC, b LIMIT 2";
  EXPECT_EQ(Csv(null_keys, 1), "b,n\n,6000\n1,1\n");
  const std::string text_keys =
      "SELECT count(*) AS groups, sum(n) AS rows, max(n) AS most FROM "
      "(SELECT CAST(k % 20011 AS utf8) AS b, count(*) AS n FROM small GROUP BY b)";
  EXPECT_EQ(Csv(text_keys, 1), "groups,rows,most\n20011,60000,3\n");
}

TEST_F(SqlMemoryTest, JoinWithARightSidePastItsBudgetPartitionsBothSides) {
  // Held, the right side of 3M rows takes some 150 MB (its columns twice, and the hash);
  // under an 8 MB budget both sides are split into partitions on disk, joined in turn.
  EXPECT_LT(ExtraKb("SELECT count(*) AS n, sum(b.v) AS total FROM {0} a JOIN {0} b ON a.k = b.k",
                    "LANCELET_SQL_MEMORY_MB=8"),
            32 * 1024);
  EXPECT_EQ(Csv("SELECT count(*) AS n, sum(b.v) AS total FROM big a JOIN big b ON a.k = b.k", 8),
            "n,total\n3000000,2249999250000\n");
  // Partitioned (1 MB: partitions of partitions) or held, the same rows: NULL keys on both
  // sides under every outer join, and an ON clause with a condition besides its key.
  const std::string sides =
      "(SELECT CASE WHEN k % 10 = 0 THEN NULL ELSE k END AS x, v FROM small) a {} JOIN "
      "(SELECT CASE WHEN k % 7 = 0 THEN NULL ELSE k * 2 END AS y, g FROM small) b ON a.x = b.y";
  for (const std::string kind : {"INNER", "FULL"}) {  // FULL holds LEFT's and RIGHT's unmatched rows
    const std::string rows =
        fmt::format("SELECT a.x, a.v, b.y, b.g FROM {} ORDER BY a.x NULLS FIRST, a.v, b.y NULLS FIRST, b.g",
                    fmt::format(fmt::runtime(sides), kind));
    const std::string partitioned = CsvAsHeld(rows, 1);
    // Matches: x = k1 even, not a multiple of 10, with k1 / 2 not a multiple of 7.
    const size_t expected = kind == "INNER" ? 20572 : kind == "FULL" ? 99428 : 60000;
    EXPECT_EQ(SplitLines(partitioned).size(), expected + 1) << kind;
  }
  const std::string residual =
      "SELECT count(*) AS n, min(b.k) AS first FROM small a JOIN small b ON a.k = b.k AND b.v > 100";
  EXPECT_EQ(Csv(residual, 1), "n,first\n59799,201\n");
}

TEST_F(SqlMemoryTest, JoinWithoutAnEqualityKeySpillsItsRightSide) {
  // No equality to hash or partition by: held, the right side of 3M rows takes some 100 MB
  // (g and v, twice); under an 8 MB budget it goes to disk and is read back for each block
  // of left rows. For left row t (t = 0..2) the right rows with g < t are t * 3000, so
  // there are 3000 * 3 pairs; their v sum, sum over t of (t * 1000 * 2999 * 3000 / 2 +
  // 3000 * t * (t - 1) / 2) / 2, is 6747751500.
  const std::string band = "SELECT count(*) AS n, sum(b.v) AS total FROM (SELECT k FROM small WHERE k < 3) a "
                           "JOIN big b ON a.k > b.g";
  EXPECT_EQ(Csv(band, 8), "n,total\n9000,6747751500\n");
  const int64_t spilled = PeakRssKb(band, "LANCELET_SQL_MEMORY_MB=8");
  const int64_t held = PeakRssKb(band, "LANCELET_SQL_MEMORY_MB=1024");
  std::cout << fmt::format("{}: {} KiB spilled, {} KiB held\n", band, spilled, held);
  EXPECT_LT(spilled + 48 * 1024, held);

  // Spilled (1 MB: a right side of 2000 rows of some 220 bytes, 440 KB, against a share of
  // 256 KB) or held, the same rows under INNER and FULL joins. a.x is a multiple of 60
  // below 60000, NULL for multiples of 600 (1000 rows, 100 NULL), each row padded to some
  // 600 bytes so that the left side takes three blocks; b.y = 1, 31, 61, ..., 59971. Each
  // non-NULL x matches y = x + 1 alone: 900 pairs, 100 left rows and 1100 right rows
  // unmatched.
  const std::string sides =
      "(SELECT CASE WHEN k % 600 = 0 THEN NULL ELSE k END AS x, v, '" + std::string(600, 'p') +
      "' || CAST(k AS utf8) AS pad FROM small WHERE k % 60 = 0) a {} JOIN "
      "(SELECT k AS y, g, '" + std::string(200, 'q') + "' AS pad FROM small WHERE k % 30 = 1) b "
      "ON a.x < b.y AND b.y <= a.x + 30";
  for (const std::string kind : {"INNER", "FULL"}) {  // FULL holds LEFT's and RIGHT's unmatched rows
    const std::string rows = fmt::format(
        "SELECT a.x, a.v, length(a.pad) AS p, b.y, b.g FROM {} ORDER BY a.x NULLS FIRST, a.v, b.y NULLS FIRST, b.g",
        fmt::format(fmt::runtime(sides), kind));
    const std::string nested = CsvAsHeld(rows, 1);
    EXPECT_EQ(SplitLines(nested).size(), (kind == "INNER" ? 900u : 2100u) + 1) << kind;
  }
  // Every pair: 1000 * 2000 rows, 900 * 2000 of them with a non-NULL x; the y sum is 1000
  // times sum(30 j + 1, j < 2000) = 59972000, the g sum 1000 times sum(y % 1000) = 992000.
  const std::string cross =
      "SELECT count(*) AS n, count(a.x) AS xs, sum(b.y) AS ys, sum(b.g) AS gs FROM (SELECT CASE WHEN k % 600 = 0 "
      "THEN NULL ELSE k END AS x FROM small WHERE k % 60 = 0) a CROSS JOIN (SELECT k AS y, g, '" +
      std::string(200, 'q') + "' AS pad FROM small WHERE k % 30 = 1) b";
  EXPECT_EQ(Csv(cross, 1), "n,xs,ys,gs\n2000000,1800000,59972000000,992000000\n");
}

TEST_F(SqlMemoryTest, CrossJoinOutputComesInBoundedBatches) {
  // 60,000 left rows (one batch) against 250 or 1,000 right rows: 15M or 60M pairs. Joined
  // a whole left batch at a time they were one output batch, and memory grew with the
  // right side (some 100 MB and 314 MB); a slice of the left batch at a time, it does not.
  const std::string cross = "SELECT count(*) AS n, sum(b.k) AS s FROM small a CROSS JOIN "
                            "(SELECT k FROM small WHERE k < {}) b";
  EXPECT_EQ(Csv(fmt::format(fmt::runtime(cross), 1000), 256), "n,s\n60000000,29970000000\n");
  const int64_t fewer = PeakRssKb(fmt::format(fmt::runtime(cross), 250));
  const int64_t more = PeakRssKb(fmt::format(fmt::runtime(cross), 1000));
  std::cout << fmt::format("cross join peaks: {} KiB (15M pairs), {} KiB (60M pairs)\n", fewer, more);
  EXPECT_LT(more, fewer + 48 * 1024);
}

TEST_F(SqlMemoryTest, SelectStreamsItsRows) {
  EXPECT_LT(ExtraKb("SELECT k, v * 2 AS twice FROM {0} WHERE g <> 7"), kAllowedExtraKb);
  EXPECT_LT(ExtraKb("SELECT k, v FROM {0} ORDER BY v DESC LIMIT 10"), kAllowedExtraKb);
  EXPECT_EQ(Lancelet({"sql", "--db", dir_->path(), "--format", "csv",
                      "SELECT k FROM big WHERE g = 999 ORDER BY v DESC LIMIT 3 OFFSET 1"}),
            "k\n2998999\n2997999\n2996999\n");
  // The top rows of 3M, past the point where later rows are tested against the last
  // kept one: one numeric key, and two keys with ties on the first.
  EXPECT_EQ(Lancelet({"sql", "--db", dir_->path(), "--format", "csv",
                      "SELECT k FROM big ORDER BY v DESC LIMIT 2 OFFSET 1"}),
            "k\n2999998\n2999997\n");
  EXPECT_EQ(Lancelet({"sql", "--db", dir_->path(), "--format", "csv",
                      "SELECT k, g FROM big ORDER BY g DESC, k LIMIT 3"}),
            "k,g\n999,999\n1999,999\n2999,999\n");
}

TEST_F(SqlMemoryTest, OrderByWithoutLimitSpillsPastItsBudget) {
  // 3M rows of 32 bytes (two columns and two keys) under an 8 MB budget: sorted runs
  // spill to temporary files and are merged as the rows stream out. The merge holds a
  // batch and a comparator per pair of runs, so it is allowed more than the streaming
  // statements; holding the rows costs over 300 MB.
  EXPECT_LT(ExtraKb("SELECT k, v FROM {0} ORDER BY g DESC, v", "LANCELET_SQL_MEMORY_MB=8"), 32 * 1024);
  // Spilled (a 1 MB budget: dozens of runs) or held, the same rows in the same order
  // (ties in input order).
  auto sorted = [&](int budget_mb) {
    return RunCommand(fmt::format("LANCELET_SQL_MEMORY_MB={} {} sql --db {} --format csv {}", budget_mb,
                                  ShellQuote(LanceletBinary()), ShellQuote(dir_->path()),
                                  ShellQuote("SELECT k, g FROM big WHERE k % 6 = 0 ORDER BY g DESC, k % 7")));
  };
  const auto spilled = sorted(1), held = sorted(1024);
  ASSERT_EQ(spilled.exit_code, 0) << spilled.err;
  EXPECT_TRUE(spilled.out == held.out);
  const auto lines = SplitLines(spilled.out);
  ASSERT_EQ(lines.size(), 500'001u);
  // g = 998 first; among them k % 7 = 0 first, in k order: 4998, 25998, ...
  EXPECT_EQ(lines[1], "4998,998");
  EXPECT_EQ(lines[2], "25998,998");
  EXPECT_EQ(lines.back(), "2997000,0");  // g = 0, the largest k % 7 = 6 last: 2997000 % 7 = 6
}

TEST_F(SqlMemoryTest, WindowSortsPastItsBudgetAndHoldsOnePartition) {
  // 3M rows in 1000 partitions of 3000: under an 8 MB budget the window's sort spills
  // runs, and the rows are read back one partition at a time.
  const std::string partitioned = "SELECT k, sum(v) OVER (PARTITION BY g ORDER BY k) AS run FROM big";
  const int64_t spilled = PeakRssKb(partitioned, "LANCELET_SQL_MEMORY_MB=8");
  const int64_t held = PeakRssKb(partitioned, "LANCELET_SQL_MEMORY_MB=1024");  // the sort holds every row
  std::cout << fmt::format("{}: {} KiB under 8 MB, {} KiB held\n", partitioned, spilled, held);
  EXPECT_LT(spilled + 64 * 1024, held);
  // The running sum of v = k / 2 at partition g's last row (k = 2999000 + g) is the sum over
  // i < 3000 of (1000 i + g) / 2 = 2249250000 + 1500 g.
  EXPECT_EQ(Csv("SELECT k, run FROM (SELECT k, sum(v) OVER (PARTITION BY g ORDER BY k) AS run FROM big) "
                "WHERE k >= 2999998 ORDER BY k",
                8),
            "k,run\n2999998,2250747000\n2999999,2250748500\n");
  // Spilled (1 MB) or held, the same values: two windows over 60 rows per partition.
  const std::string two =
      "SELECT k, g, row_number() OVER (PARTITION BY g ORDER BY v DESC) AS rn, lag(k) OVER (PARTITION BY g ORDER BY k) "
      "AS prev FROM small ORDER BY k";
  const std::string two_spilled = CsvAsHeld(two, 1);
  const auto lines = SplitLines(two_spilled);
  ASSERT_EQ(lines.size(), 60'001u);
  EXPECT_EQ(lines[1], "0,0,60,");  // k = 1000 i + g is row 60 - i of its partition by v descending
  EXPECT_EQ(lines[60'000], "59999,999,1,58999");
}

TEST_F(SqlMemoryTest, RunningWindowsOverTheWholeTableStream) {
  // Without PARTITION BY the partition is the table. Ranking functions and frames from the
  // start to the current row are given in chunks of 64k rows that end at a peer group's
  // end, so the rows are not held; percent_rank needs the partition's size and holds it.
  const int64_t streamed = PeakRssKb("SELECT k, sum(k) OVER (ORDER BY k) AS run FROM big", "LANCELET_SQL_MEMORY_MB=8");
  const int64_t held =
      PeakRssKb("SELECT k, percent_rank() OVER (ORDER BY k) AS pr FROM big", "LANCELET_SQL_MEMORY_MB=8");
  std::cout << fmt::format("running sum over 3M rows: {} KiB; percent_rank: {} KiB\n", streamed, held);
  EXPECT_LT(streamed + 64 * 1024, held);
  // Exact values across chunks, over the 200k rows k < 200000 (200 of each g = k % 1000):
  // run = k (k + 1) / 2; rank by g 200 g + 1, count up to g's peers 200 (g + 1), dense rank
  // g + 1; the least k from k up is k; first_value over g then k descending is g = 0's
  // largest k.
  const std::string windows =
      "SELECT k, sum(k) OVER (ORDER BY k) AS run, rank() OVER (ORDER BY g) AS rg, min(k) OVER (ORDER BY k DESC ROWS "
      "BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS least_after, count(*) OVER (ORDER BY g) AS upto, dense_rank() "
      "OVER (ORDER BY g) AS dg, first_value(k) OVER (ORDER BY g, k DESC) AS top FROM big WHERE k < 200000";
  EXPECT_EQ(Csv("SELECT k, run, rg, least_after, upto, dg, top FROM (" + windows +
                    ") WHERE k IN (0, 1, 150000, 199999) ORDER BY k",
                8),
            "k,run,rg,least_after,upto,dg,top\n0,0,1,0,200,1,199000\n1,1,201,1,400,2,199000\n"
            "150000,11250075000,1,150000,200,1,199000\n199999,19999900000,199801,199999,200000,1000,199000\n");
  // One peer group of 200k rows: no chunk can end inside it, and every row ranks 1.
  EXPECT_EQ(Csv("SELECT max(r) AS top, count(*) AS n FROM (SELECT rank() OVER (ORDER BY g - g) AS r FROM big WHERE "
                "k < 200000)",
                8),
            "top,n\n1,200000\n");
}

TEST_F(SqlMemoryTest, CorrelatedSubqueriesRunOnceOverLargeInputs) {
  // Each runs its subquery once and looks 3M outer rows up in it.
  EXPECT_EQ(Csv("SELECT count(*) AS n FROM big b WHERE EXISTS (SELECT 1 FROM small s WHERE s.k = b.k)", 256),
            "n\n60000\n");
  EXPECT_EQ(Csv("SELECT count(*) AS n FROM big b WHERE NOT EXISTS (SELECT 1 FROM small s WHERE s.k = b.k)", 256),
            "n\n2940000\n");
  // small's largest v for g is (59000 + g) / 2, which big's rows of g pass from k = 60000 + g on.
  EXPECT_EQ(Csv("SELECT count(*) AS n FROM big b WHERE b.v > (SELECT max(v) FROM small s WHERE s.g = b.g)", 256),
            "n\n2940000\n");
  EXPECT_LT(ExtraKb("SELECT k FROM {0} b WHERE NOT EXISTS (SELECT 1 FROM small s WHERE s.k = b.k AND s.g < 500)"),
            kAllowedExtraKb);
}

TEST_F(SqlMemoryTest, CorrelatedSubqueryPastItsBudgetPartitionsBothSides) {
  // The subquery's table of 3M keys takes over 100 MB held; under 8 MB its rows and the
  // outer rows are split by key into partitions on disk, looked up one at a time.
  const std::string exists = "SELECT count(*) AS n FROM small s WHERE EXISTS (SELECT 1 FROM big b WHERE b.k = s.k * 50)";
  EXPECT_EQ(Csv(exists, 8), "n\n60000\n");
  const int64_t held = PeakRssKb(exists, "LANCELET_SQL_MEMORY_MB=1024");
  const int64_t partitioned = PeakRssKb(exists, "LANCELET_SQL_MEMORY_MB=8");
  std::cout << fmt::format("held {} KiB, partitioned {} KiB\n", held, partitioned);
  EXPECT_LT(partitioned + 48 * 1024, held);
  // Partitioned or held, the same answers for IN (with NULL items), a scalar value per key
  // and NOT EXISTS, and the counts worked out here: s's row k meets big's row 50 k, whose
  // g is 50 k % 1000.
  int64_t same_g = 0;
  for (int64_t k = 0; k < 60'000; ++k) same_g += (50 * k) % 1000 == k % 1000;
  const std::string in =
      "SELECT count(*) AS n FROM small s WHERE s.g NOT IN (SELECT CASE WHEN b.k % 7 = 0 THEN NULL ELSE b.g END "
      "FROM big b WHERE b.k = s.k * 50)";
  const std::string value = "SELECT count(*) AS n FROM small s WHERE (SELECT b.g FROM big b WHERE b.k = s.k * 50) = s.g";
  const std::string absent = "SELECT count(*) AS n FROM small s WHERE NOT EXISTS (SELECT 1 FROM big b WHERE b.k = s.k + 2999990)";
  int64_t not_in = 0;  // NOT IN holds when the value differs and is not NULL (50 k not a multiple of 7)
  for (int64_t k = 0; k < 60'000; ++k) not_in += (50 * k) % 1000 != k % 1000 && (50 * k) % 7 != 0;
  EXPECT_EQ(CsvAsHeld(in, 8), fmt::format("n\n{}\n", not_in));
  EXPECT_EQ(Csv(value, 8), fmt::format("n\n{}\n", same_g));
  EXPECT_EQ(Csv(absent, 8), "n\n59990\n");
}

// Last: it changes v in both tables, which the tests above read (run in one process,
// the fixture's tables are shared).
TEST_F(SqlMemoryTest, MergeStreamsItsTarget) {
  // 10k staged rows, all of which match in both tables.
  EXPECT_LT(ExtraKb("MERGE INTO {0} USING read_csv('" + dir_->Join("staged.csv") +
                    "') AS s ON {0}.k = s.k WHEN MATCHED THEN UPDATE SET v = s.v"),
            kAllowedExtraKb);
  EXPECT_EQ(Lancelet({"sql", "--db", dir_->path(), "--format", "csv",
                      "SELECT count(*) AS n, sum(v) AS total FROM big WHERE k < 60000 AND k % 6 = 0"}),
            "n,total\n10000,-49995000\n");
}

}  // namespace
}  // namespace lancelet::testing
