// Arithmetic kernels (+ - * / % and unary minus) over numeric columns.
#pragma once

#include "expr/datum.h"
#include "lancelet/expr.h"

namespace lancelet {

// Both operands already have the result type `type` (the binder inserts the casts):
// an integer type, float32 or float64. Integer overflow and integer division by zero
// raise ParseError at `origin`; NULL rows never raise.
ArrayPtr Arithmetic(BinaryOp op, const Datum& left, const Datum& right, int64_t length,
                    const TypePtr& type, const Expr* origin);

// Unary minus of a signed integer or float datum; negating the minimum integer raises.
ArrayPtr Negate(const Datum& operand, int64_t length, const Expr* origin);

}  // namespace lancelet
