// Conversions between types (CAST and the binder's implicit conversions).
//
//   numbers <-> numbers   integers range-checked; float -> integer rounds half to even
//                         (CAST(2.5 AS int32) = 2, CAST(-3.5 AS int32) = -4), as DuckDB
//                         and PostgreSQL round a DOUBLE
//   strings  -> anything  parsed (integers strictly, floats also NaN/Infinity, bools as
//                         true/false/t/f/yes/no/1/0, dates, timestamps)
//   anything -> utf8      printed as DuckDB prints (floats 848.0 / 1e+16, timestamps
//                         2024-01-02 03:04:05.12)
//   utf8 <-> binary, bool <-> numbers, date <-> timestamp (flooring), timestamp units,
//   integers -> timestamp (raw count), lists -> lists item by item (fixed sizes must agree)
#pragma once

#include <string>

#include "lancelet/array.h"
#include "lancelet/scalar.h"

namespace lancelet {

bool CanCast(const DataType& from, const DataType& to);

// Throws InvalidArgument "cannot cast 'abc' to int32" / "cannot cast 300 to int8 (out of
// range)". NULL casts to NULL of `to`.
Scalar CastScalar(const Scalar& value, const TypePtr& to);
ArrayPtr CastArray(const ArrayData& array, const TypePtr& to);

// Assignment (SET, INSERT, MERGE, reading input into a dataset's column): only exact
// conversions. Integers range-checked, integers to floats, floats between widths, a float
// with an integral value to an integer, strings parsed as dates / timestamps, temporal
// types when nothing is floored, anything to utf8, lists item by item. Refused: a float
// with a fraction to an integer ("cannot assign 1.5 to int32 (not an integer)"), strings
// to numbers or bools, bools to numbers ("cannot assign 'yes' (utf8) to bool").
bool CanAssign(const DataType& from, const DataType& to);
Scalar AssignScalar(const Scalar& value, const TypePtr& to);
ArrayPtr AssignArray(const ArrayData& array, const TypePtr& to);

// A value as it reads in a message: 'text', 12, 1.5, NULL.
std::string DescribeValue(const Scalar& value);

}  // namespace lancelet
