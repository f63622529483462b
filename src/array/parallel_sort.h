// A stable sort on several threads: parts sorted at once, then merged pairwise.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

#include "array/worker_thread.h"
#include "lancelet/record_batch.h"

namespace lancelet {

// Merges the sorted runs [first, middle) and [middle, last) in place, as std::inplace_merge
// does (the first run's element first on ties), on `slices` threads: the output is cut into
// slices whose first elements' sources are found by binary search (the merge path: slice
// bound k takes the first i elements of the first run and k - i of the second), each slice
// merged by a thread into a buffer, then moved back. The elements must be
// default-constructible.
template <typename It, typename Less>
void ParallelMerge(It first, It middle, It last, Less less, size_t slices) {
  const size_t na = size_t(middle - first), nb = size_t(last - middle), n = na + nb;
  if (slices < 2 || n < 2 * slices) return std::inplace_merge(first, middle, last, less);
  // How many of the first k outputs come from the first run: the fewest i for which the
  // first run's element i does not precede the second run's element k - i - 1.
  auto from_first = [&](size_t k) {
    size_t lo = k > nb ? k - nb : 0, hi = std::min(k, na);
    while (lo < hi) {
      const size_t i = (lo + hi) / 2;
      if (!less(middle[k - i - 1], first[i])) lo = i + 1;  // first[i] goes out before it
      else hi = i;
    }
    return lo;
  };
  std::vector<typename std::iterator_traits<It>::value_type> merged(n);
  RunOnThreads(slices, [&](size_t s) {
    const size_t k0 = n * s / slices, k1 = n * (s + 1) / slices;
    const size_t i0 = from_first(k0), i1 = from_first(k1);
    std::merge(std::make_move_iterator(first + i0), std::make_move_iterator(first + i1),
               std::make_move_iterator(middle + (k0 - i0)), std::make_move_iterator(middle + (k1 - i1)),
               merged.begin() + k0, less);
  });
  RunOnThreads(slices, [&](size_t s) {
    const size_t k0 = n * s / slices, k1 = n * (s + 1) / slices;
    std::move(merged.begin() + k0, merged.begin() + k1, first + k0);
  });
}

// Sorts [first, last) by `less` as std::stable_sort does, on up to ReadAheadThreads()
// threads when there are 64k elements or more per thread: each thread sorts a part, then
// neighbouring parts merge, the pairs of a round on threads of their own, and a round of
// fewer pairs than threads merging each pair on several (ParallelMerge). A merge takes
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
      ParallelMerge(first + bounds[2 * i], first + bounds[2 * i + 1], first + bounds[2 * i + 2], less, parts / pairs);
    });
    std::vector<size_t> merged;
    for (size_t b = 0; b < bounds.size(); b += 2) merged.push_back(bounds[b]);
    if (merged.back() != bounds.back()) merged.push_back(bounds.back());
    bounds = std::move(merged);
  }
}

}  // namespace lancelet
