// ParallelStableSort (array/parallel_sort.h) gives std::stable_sort's order at any thread
// count, ties in their first order, for part counts that merge in uneven rounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
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

}  // namespace
}  // namespace lancelet
