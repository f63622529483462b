// Scattering overlay values into a base array.
#pragma once

#include <span>
#include <vector>

#include "lancelet/array.h"

namespace lancelet::overlay {

// values[first + k] goes to position cells[k] - origin. Cells are ascending and unique
// across all replacements; `origin` lets a caller pass physical offsets straight from a
// cached list instead of rebasing them into a copy.
struct Replacement {
  std::span<const uint32_t> cells;
  ArrayPtr values;
  int64_t first = 0;
  uint32_t origin = 0;
};

// `base` with the given positions replaced (NULL values make NULL cells). Fixed-layout
// columns (fixed-width values and fixed-size lists of them) are patched in place when
// the caller hands over the only reference to `base` and its buffers, so a scan pays
// for the covered cells, not for a copy of the batch; shared buffers are copied first.
ArrayPtr ApplyReplacements(ArrayPtr base, std::span<const Replacement> replacements);
inline ArrayPtr ApplyReplacements(ArrayPtr base, const std::vector<Replacement>& replacements) {
  return ApplyReplacements(std::move(base), std::span<const Replacement>(replacements));
}

// One field's overlay cells in a fragment, every layer merged and resolved: values[k]
// replaces the base value at physical offset cells[k]. Cells ascend. Built once per
// fragment version (MergeSupplied, then one gather of the values) and shared, so a
// batch of a scan costs two binary searches and one pass over its cells, however many
// overlays there are.
struct ResolvedColumn {
  std::vector<uint32_t> cells;
  ArrayPtr values;

  // `base` holds physical rows [start, start + base->length): returns it with the
  // resolved cells in that range replaced.
  ArrayPtr Apply(ArrayPtr base, uint64_t start) const;
  // `base` holds the physical rows `offsets` (ascending is cheapest: one merge walk;
  // any order works): returns it with the resolved cells among them replaced.
  ArrayPtr ApplyAt(ArrayPtr base, std::span<const uint64_t> offsets) const;
  uint64_t MemoryBytes() const;
};

}  // namespace lancelet::overlay
