// Parallel scans (table/parallel_scan.cc): read in morsels on several threads, a scan
// gives exactly the rows, in the order, that one thread gives: over fragments of many
// morsels, with deletions, overlays, a filter and row ids, and through count, update
// and delete.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/record_batch.h"
#include "support/sample_batches.h"
#include "support/test_env.h"

namespace lancelet {
namespace {

using testing::IdNameBatch;
using testing::TempDir;

// The rows of a scan as text, one string per row, in order.
std::vector<std::string> Rows(const RecordBatch& batch) {
  std::vector<std::string> rows(size_t(batch.num_rows()));
  for (const auto& column : batch.columns())
    for (int64_t r = 0; r < batch.num_rows(); ++r)
      rows[size_t(r)] += (column->IsNull(r) ? std::string("NULL")
                          : column->type->is_variable_binary() ? std::string(column->GetView(r))
                          : std::to_string(column->values<int64_t>()[r])) + "|";
  return rows;
}

class ParallelScanTest : public ::testing::Test {
 protected:
  void TearDown() override { SetReadAheadThreads(0); }
  TempDir dir_;
};

TEST_F(ParallelScanTest, EveryThreadCountGivesOneThreadsRowsInOrder) {
  WriteOptions options;
  options.max_rows_per_file = 60'000;  // fragments of 60k, 60k and 30k rows: many morsels each
  auto ds = Dataset::Write(dir_.Uri("t.lance"), {IdNameBatch(0, 150'000)}, options);
  ds = ds->Delete("id % 5 = 0");
  ds = ds->Update({{"name", "name || '!'"}}, "id % 11 = 0", nullptr, UpdateMode::kOverlay);
  ds = ds->Update({{"id", "id + 1000000"}}, "id % 13 = 0 AND id < 90000", nullptr, UpdateMode::kOverlay);

  auto read = [&](int threads) {
    SetReadAheadThreads(threads);
    return std::tuple{Rows(*ds->NewScan().Columns({"id", "name"}).WithRowId().ToBatch()),
                      Rows(*ds->NewScan().Columns({"name", "id"}).Filter("id % 3 <> 1 AND name LIKE '%!'").ToBatch()),
                      ds->CountRows("id > 1000000 OR id < 500")};
  };
  const auto [all, filtered, count] = read(1);
  ASSERT_EQ(all.size(), 120'000u);
  EXPECT_EQ(all.front(), "1|n1|1|");
  // Named with '!' (id % 11 = 0, not NULL: id % 7 <> 3), not deleted (id % 5 <> 0), and
  // the current id % 3 <> 1 (ids moved by 1,000,000 have id % 3 one more).
  EXPECT_EQ(filtered.size(), 6'234u);
  EXPECT_EQ(count, 5'908u);  // the 5,539 moved ids, and the 369 live ids below 500
  for (int threads : {2, 4, 8}) {
    const auto [all_n, filtered_n, count_n] = read(threads);
    EXPECT_EQ(all_n, all) << threads << " threads";
    EXPECT_EQ(filtered_n, filtered) << threads << " threads";
    EXPECT_EQ(count_n, count) << threads << " threads";
  }
}

TEST_F(ParallelScanTest, UpdatesAndDeletesReadInParallelChangeWhatOneThreadWould) {
  WriteOptions options;
  options.max_rows_per_file = 50'000;
  std::vector<std::vector<std::string>> results;
  for (int threads : {1, 4}) {
    SetReadAheadThreads(threads);
    auto ds = Dataset::Write(dir_.Uri("t" + std::to_string(threads) + ".lance"), {IdNameBatch(0, 120'000)}, options);
    uint64_t deleted = 0, updated = 0;
    ds = ds->Delete("id % 7 = 3", &deleted);
    ds = ds->Update({{"name", "'x' || name"}}, "id % 9 = 4", &updated);
    EXPECT_EQ(deleted, 17'143u);
    EXPECT_EQ(updated, 11'428u);  // 13,333 with id % 9 = 4, less the 1,905 of them deleted
    results.push_back(Rows(*ds->NewScan().Columns({"id", "name"}).ToBatch()));
  }
  EXPECT_EQ(results[0], results[1]);
}

}  // namespace
}  // namespace lancelet
