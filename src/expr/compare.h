// Comparison kernels (= <> < <= > >) producing bool arrays with SQL NULL semantics.
#pragma once

#include <optional>

#include "expr/datum.h"
#include "lancelet/expr.h"

namespace lancelet {

// Compares row by row. The binder guarantees comparable types: numbers of any widths
// and signedness, bools, the same temporal type, string/binary kinds, or list kinds
// (= and <> only). A row is NULL when either side is NULL.
ArrayPtr Compare(BinaryOp op, const Datum& left, const Datum& right, int64_t length);

// Three-way comparison of two non-null scalars with the kernels' semantics; nullopt when
// either is NULL, or for lists when the result depends on a NULL item. Lists compare
// equal or not (never ordered): the result is 0 or 1.
std::optional<int> CompareScalars(const Scalar& a, const Scalar& b);

// Whether a three-way result satisfies a comparison operator.
bool Satisfies(BinaryOp op, int cmp);
BinaryOp SwapSides(BinaryOp op);  // a < b  <=>  b > a

}  // namespace lancelet
