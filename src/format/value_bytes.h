// The size of a value by its type alone, for sizing batches, read windows and costs.
#pragma once

#include <cstdint>

#include "lancelet/type.h"

namespace lancelet::format {

// Bytes a value of `type` takes, roughly: fixed-width values their width (a bool 1),
// fixed-size lists and structs the sum of their items, variable-width values 64. A
// struct without children takes 0.
uint64_t EstimatedValueBytes(const DataType& type);

}  // namespace lancelet::format
