// A stable sort on several threads: parts sorted at once, then merged pairwise.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

#include "array/worker_thread.h"
#include "lancelet/record_batch.h"

namespace lancelet {

// Sorts [first, last) by `less` as std::stable_sort does, on up to ReadAheadThreads()
// threads when there are 64k elements or more per thread: each thread sorts a part, then
// neighbouring parts merge, the pairs of a round on threads of their own. A merge takes
// the earlier part's element first on ties, so the order of equal elements is kept.
// `less` must be safe to call from several threads at once.
template <typename It, typename Less>
void ParallelStableSort(It first, It last, Less less) {
  constexpr size_t kMinPart = 1 << 16;
  const size_t n = size_t(std::distance(first, last));
  const size_t parts = std::min(size_t(std::max(ReadAheadThreads(), 1)), n / kMinPart);
  if (parts < 2) return std::stable_sort(first, last, less);
  std::vector<size_t> bounds;  // part p is [bounds[p], bounds[p + 1])
  for (size_t p = 0; p <= parts; ++p) bounds.push_back(n * p / parts);
  RunOnThreads(parts, [&](size_t p) { std::stable_sort(first + bounds[p], first + bounds[p + 1], less); });
  while (bounds.size() > 2) {
    const size_t pairs = (bounds.size() - 1) / 2;
    RunOnThreads(pairs, [&](size_t i) {
      std::inplace_merge(first + bounds[2 * i], first + bounds[2 * i + 1], first + bounds[2 * i + 2], less);
    });
    std::vector<size_t> merged;
    for (size_t b = 0; b < bounds.size(); b += 2) merged.push_back(bounds[b]);
    if (merged.back() != bounds.back()) merged.push_back(bounds.back());
    bounds = std::move(merged);
  }
}

}  // namespace lancelet
