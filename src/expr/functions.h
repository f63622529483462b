// Scalar functions callable from expressions: abs, lower, upper, length (char_length,
// character_length), octet_length, coalesce, round.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "expr/datum.h"
#include "lancelet/builder.h"
#include "lancelet/expr.h"

namespace lancelet {

// Checks a call's arguments. `arg_types` holds each argument's type (null for an untyped
// NULL) and is rewritten to the type each argument must be cast to. Returns the result
// type. Throws ParseError at `origin` for unknown functions and bad arguments.
TypePtr ResolveFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin);
// A function whose every call gives new values (random()): evaluated per row even when
// its arguments are constants.
bool IsVolatileFunction(const std::string& name);

// Evaluates a call whose arguments already have the types ResolveFunction asked for.
ArrayPtr CallFunction(const std::string& name, const std::vector<Datum>& args, int64_t length,
                      const TypePtr& type, const Expr* origin);

// What the function files share.
// Each code point of valid UTF-8 in upper or lower case, as DuckDB's upper / lower (one
// code point for one: ß upper is ẞ); `ascii` false leaves ASCII bytes as they are. A
// byte that starts no valid sequence is copied.
std::string ChangeCase(std::string_view s, bool up, bool ascii);
std::string TypeName(const TypePtr& t);  // "NULL" for an untyped NULL
// Throws "<name>() takes N argument(s), got M" unless min <= arguments <= max.
void ExpectArgCount(const std::string& name, const std::vector<TypePtr>& types, size_t min, size_t max,
                    const Expr* origin);
// Row i of an argument (a literal stands for every row).
Scalar RowValue(const Datum& d, int64_t i);
// An array of `type` from row(i) for each of n rows.
template <typename RowFn>
ArrayPtr RowWise(const TypePtr& type, int64_t n, RowFn&& row) {
  auto builder = ArrayBuilder::Make(type);
  for (int64_t i = 0; i < n; ++i) builder->AppendScalar(row(i));
  return builder->Finish();
}

// list, large_list or fixed_size_list (not map).
bool IsListLike(const DataType& t);
// Row r's items in a list-like array's child: the first and how many (r not NULL).
std::pair<int64_t, int64_t> ListSpan(const ArrayData& lists, int64_t r);

// The vector functions, by the name they are called, of two lists of numbers, as float64:
// DuckDB's Euclidean distance, inner product (and its negation), cosine similarity and
// distance, and Lance's l2 (l2_distance: the squared Euclidean distance). sql/nearest.cc
// maps each to the metric an index ranks by.
enum class VectorMeasure {
  kDistance, kL2Squared, kInnerProduct, kNegativeInnerProduct, kCosineSimilarity, kCosineDistance
};
// The measure a function name computes, or nullopt when it is none of them.
std::optional<VectorMeasure> VectorMeasureOf(const std::string& name);

// The functions of more_functions.cc (dates and times, lists, patterns): as above, or
// null when `name` is none of them.
TypePtr ResolveMoreFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin);
ArrayPtr CallMoreFunction(const std::string& name, const std::vector<Datum>& args, int64_t length,
                          const TypePtr& type, const Expr* origin);

// The functions of string_functions.cc (left, right, concat_ws, regexp_replace,
// regexp_extract): as above, or null when `name` is none of them.
TypePtr ResolveStringFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin);
ArrayPtr CallStringFunction(const std::string& name, const std::vector<Datum>& args, int64_t length,
                            const TypePtr& type, const Expr* origin);

// The functions of list_functions.cc (searching, aggregating, slicing, concatenating,
// sorting, building and printing lists, and || on two lists): as above, or null when
// `name` is none of them.
TypePtr ResolveListFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin);
ArrayPtr CallListFunction(const std::string& name, const std::vector<Datum>& args, int64_t length,
                          const TypePtr& type, const Expr* origin);

}  // namespace lancelet
