// Which type two operands meet at (arithmetic results, coalesce, IN lists, vector
// literals). A null TypePtr stands for an untyped NULL literal.
#pragma once

#include "lancelet/type.h"

namespace lancelet {

// Integers: the wider type; mixed signedness: a signed type wider than the unsigned one
// (at most int64); any float with an integer, or float64 with anything: float64;
// float32 (or float16) with float32 (or float16): float32. Null if either is not numeric.
TypePtr ArithmeticType(const DataType& a, const DataType& b);

// The type both values convert to without surprise: equal types, numbers (as above),
// string/binary kinds (large if either is, binary if either is), dates/timestamps (the
// finer), a string with a temporal (the temporal), lists (common item type; a
// fixed_size_list wins over a list). Null when there is none. Untyped NULL takes the
// other side's type.
TypePtr CommonType(const TypePtr& a, const TypePtr& b);

}  // namespace lancelet
