// Comparing rows printed as canonical JSON lines by lancelet and by the reference.
#pragma once

#include <string>

namespace lancelet::testing {

// Compares two JSONL texts row by row. Integers must match exactly; floats match when
// equal or equal after rounding to float32 or float16 (the reference prints the shortest
// text at the column's width). Returns "" when equal, else a description of the first
// difference (row, key, both values).
std::string DiffJsonLines(const std::string& expected, const std::string& actual);

}  // namespace lancelet::testing
