// Boolean kernels with SQL three-valued (Kleene) logic, working a byte of bits at a time.
#pragma once

#include "expr/datum.h"

namespace lancelet {

// FALSE AND x = FALSE, TRUE AND NULL = NULL.
ArrayPtr And(const Datum& left, const Datum& right, int64_t length);
// TRUE OR x = TRUE, FALSE OR NULL = NULL.
ArrayPtr Or(const Datum& left, const Datum& right, int64_t length);
// NOT NULL = NULL.
ArrayPtr Not(const Datum& operand, int64_t length);
// Never NULL.
ArrayPtr IsNull(const Datum& operand, int64_t length, bool negated);

}  // namespace lancelet
