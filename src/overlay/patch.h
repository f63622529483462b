// Scattering overlay values into a base array.
#pragma once

#include <span>
#include <vector>

#include "lancelet/array.h"

namespace lancelet::overlay {

struct Replacement {
  std::span<const int64_t> positions;  // ascending, unique across all replacements
  ArrayPtr values;                     // values[i] goes to positions[i]
};

// A copy of `base` with the given positions replaced (NULL values make NULL cells).
ArrayPtr ApplyReplacements(const ArrayPtr& base, const std::vector<Replacement>& replacements);

}  // namespace lancelet::overlay
