#pragma once

#include <algorithm>
#include <cstddef>
#include <span>

namespace lancelet::format {

// The first index at or after `from` whose key is not less than `value`, by galloping:
// the cost grows with the log of the distance travelled, so walking two ascending
// sequences together costs little however their densities differ.
template <typename T, typename V, typename Key>
size_t Gallop(std::span<const T> sorted, size_t from, V value, Key key) {
  size_t step = 1, lo = from;
  if (lo >= sorted.size() || !(key(sorted[lo]) < value)) return lo;
  while (lo + step < sorted.size() && key(sorted[lo + step]) < value) {
    lo += step;
    step *= 2;
  }
  const size_t hi = std::min(sorted.size(), lo + step + 1);
  return size_t(std::partition_point(sorted.begin() + std::ptrdiff_t(lo), sorted.begin() + std::ptrdiff_t(hi),
                                     [&](const T& x) { return key(x) < value; }) -
                sorted.begin());
}

template <typename T, typename V>
size_t Gallop(std::span<const T> sorted, size_t from, V value) {
  return Gallop(sorted, from, value, [](const T& x) { return x; });
}

}  // namespace lancelet::format
