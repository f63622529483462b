// Errors raised while binding or evaluating, pointed at the expression that caused them.
#pragma once

#include <string>

#include "lancelet/expr.h"

namespace lancelet {

// Throws ParseError with `detail`, at origin's position in its source text when known,
// else naming the expression's normalized text.
[[noreturn]] void ThrowAt(const Expr* origin, const std::string& detail);

}  // namespace lancelet
