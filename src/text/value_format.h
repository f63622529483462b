// Per-value text used by the writers (FormatValue in lancelet/text.h is the public face).
#pragma once

#include <cstdint>
#include <string>

#include "lancelet/array.h"
#include "lancelet/text.h"

namespace lancelet::text {

// Appends element `row` as compact JSON (the JSON Lines spelling).
void AppendJsonValue(std::string& out, const ArrayData& array, int64_t row);
// Appends element `row` in the given style (see ValueStyle).
void AppendValue(std::string& out, const ArrayData& array, int64_t row, ValueStyle style);

// Table style shows at most this many list items, then "… N values".
inline constexpr int64_t kTableListItems = 3;
// Table style keeps this many code points of a longer string, then "…".
inline constexpr size_t kTableStringChars = 40;

}  // namespace lancelet::text
