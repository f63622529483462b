// Scattering overlay values into a base array.
#pragma once

#include <span>
#include <vector>

#include "format/roaring_bitmap.h"
#include "lancelet/array.h"

namespace lancelet::overlay {

// values[first + k] goes to position cells[k] - origin. Cells ascend, without repeats,
// within a replacement; replacements apply in order, so where two name one position the later
// one's value stands. `origin` lets a caller pass physical offsets straight from a
// cached list instead of rebasing them into a copy.
//
// The cells may instead be the members of `coverage` in [origin, end), `count` of them
// (an overlay's coverage over a scan's batch): fixed-width values are then scattered
// while walking the bitmap, with no list of the cells made.
struct Replacement {
  std::span<const uint32_t> cells;
  ArrayPtr values;
  int64_t first = 0;
  uint32_t origin = 0;
  const format::RoaringBitmap* coverage = nullptr;
  uint64_t end = 0;
  uint64_t count = 0;

  size_t size() const { return coverage ? size_t(count) : cells.size(); }
};

// `base` with the given positions replaced (NULL values make NULL cells). Fixed-layout
// columns (fixed-width values and fixed-size lists of them) are patched in place when
// the caller hands over the only reference to `base` and its buffers, so a scan pays
// for the covered cells, not for a copy of the batch; shared buffers are copied first.
ArrayPtr ApplyReplacements(ArrayPtr base, std::span<const Replacement> replacements);
inline ArrayPtr ApplyReplacements(ArrayPtr base, const std::vector<Replacement>& replacements) {
  return ApplyReplacements(std::move(base), std::span<const Replacement>(replacements));
}

}  // namespace lancelet::overlay
