// ParallelStableSort (array/parallel_sort.h) gives std::stable_sort's order at any thread
// count, ties in their first order, for part counts that merge in uneven rounds; and
// ParallelMerge, its rounds' merge on several threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "array/parallel_sort.h"
#include "lancelet/record_batch.h"

namespace lancelet {
namespace {

TEST(ParallelStableSort, GivesStableSortsOrderAtEveryThreadCount) {
  // 400k (key, position) pairs with keys from 1000 values: every key has ties.
  std::vector<std::pair<int, int>> rows;
  for (int i = 0; i < 400'000; ++i) rows.push_back({int((uint32_t(i) * 2654435761u) % 1000), i});
  auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::vector<std::pair<int, int>> expected = rows;
  std::stable_sort(expected.begin(), expected.end(), by_key);
  for (const int threads : {1, 2, 3, 5, 8}) {
    SetReadAheadThreads(threads);
    std::vector<std::pair<int, int>> sorted = rows;
    ParallelStableSort(sorted.begin(), sorted.end(), by_key);
    EXPECT_EQ(sorted, expected) << threads << " threads";
  }
  SetReadAheadThreads(0);
  EXPECT_EQ(expected.front(), std::make_pair(0, 0));
  EXPECT_EQ(expected.back().first, 999);
}

// ParallelMerge cuts the output at merge-path bounds: every slice count gives
// std::inplace_merge's result, ties from the first run first, runs of any lengths.
TEST(ParallelMerge, GivesInplaceMergesOrderAtEverySliceCount) {
  auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
  for (const auto& [na, nb, keys] : {std::tuple{size_t(50'000), size_t(70'000), 300}, std::tuple{size_t(0), size_t(1000), 10},
                                     std::tuple{size_t(1000), size_t(0), 10}, std::tuple{size_t(999), size_t(1), 1},
                                     std::tuple{size_t(20'000), size_t(20'000), 1}}) {
    std::vector<std::pair<int, int>> rows;
    for (size_t i = 0; i < na + nb; ++i) rows.push_back({int((uint32_t(i) * 2654435761u) % uint32_t(keys)), int(i)});
    std::stable_sort(rows.begin(), rows.begin() + na, by_key);
    std::stable_sort(rows.begin() + na, rows.end(), by_key);
    std::vector<std::pair<int, int>> expected = rows;
    std::inplace_merge(expected.begin(), expected.begin() + na, expected.end(), by_key);
    for (const size_t slices : {1, 2, 3, 7}) {
      std::vector<std::pair<int, int>> merged = rows;
      ParallelMerge(merged.begin(), merged.begin() + na, merged.end(), by_key, slices);
      EXPECT_EQ(merged, expected) << na << " + " << nb << " in " << slices << " slices";
    }
  }
}

}  // namespace
}  // namespace lancelet
