// Scalar functions callable from expressions: abs, lower, upper, length (char_length,
// character_length), octet_length, coalesce, round.
#pragma once

#include <string>
#include <vector>

#include "expr/datum.h"
#include "lancelet/expr.h"

namespace lancelet {

// Checks a call's arguments. `arg_types` holds each argument's type (null for an untyped
// NULL) and is rewritten to the type each argument must be cast to. Returns the result
// type. Throws ParseError at `origin` for unknown functions and bad arguments.
TypePtr ResolveFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin);

// Evaluates a call whose arguments already have the types ResolveFunction asked for.
ArrayPtr CallFunction(const std::string& name, const std::vector<Datum>& args, int64_t length,
                      const TypePtr& type, const Expr* origin);

// The functions of more_functions.cc (dates and times, lists, patterns): as above, or
// null when `name` is none of them.
TypePtr ResolveMoreFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin);
ArrayPtr CallMoreFunction(const std::string& name, const std::vector<Datum>& args, int64_t length,
                          const TypePtr& type, const Expr* origin);

}  // namespace lancelet
