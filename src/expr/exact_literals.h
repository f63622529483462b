// Arithmetic of two number literals as DuckDB does it, where a literal with a decimal
// point is a DECIMAL: exact, then rounded once to the nearest double. So 0.06 + 0.01 is
// the double nearest 0.07 (the same as the literal 0.07), where adding the two doubles
// gives 0.06999999999999999 and moves a BETWEEN's bound past rows that hold 0.07.
#pragma once

#include <optional>

#include "lancelet/expr.h"
#include "lancelet/scalar.h"

namespace lancelet {

// a op b (+, - or *) exactly, when a and b are float64 or integer literals, at least one
// float64, both finite with at most 30 significant digits and the result within that
// too; nullopt otherwise (the operation is then evaluated as usual). A float64 literal
// stands for the decimal its shortest round-trip text spells: the literal as written.
std::optional<double> ExactLiteralArithmetic(BinaryOp op, const Scalar& a, const Scalar& b);

// Whether `e` is a number as written (a literal, not a CAST of one: 0.1::DOUBLE is a
// double), or +, - or * of two such.
bool AsWritten(const ExprPtr& e);

}  // namespace lancelet
