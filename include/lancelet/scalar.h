// A single typed value (or NULL): literals, CSV/JSON input, printing.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "lancelet/array.h"

namespace lancelet {

struct Scalar {
  // Payload by type:
  //   bool -> bool; signed ints, date32/64, timestamp, time32/64, duration -> int64_t;
  //   unsigned ints -> uint64_t; float16/32/64 -> double; utf8/binary kinds -> std::string
  //   (raw bytes); decimals -> std::string (the little-endian two's-complement integer);
  //   lists -> std::vector<Scalar> (items); struct -> std::vector<Scalar> (fields).
  using Payload = std::variant<std::monostate, bool, int64_t, uint64_t, double, std::string,
                               std::vector<Scalar>>;
  TypePtr type;
  Payload value;  // monostate means NULL

  bool is_null() const { return std::holds_alternative<std::monostate>(value); }
  static Scalar Null(TypePtr type) { return Scalar{std::move(type), std::monostate{}}; }

  bool as_bool() const { return std::get<bool>(value); }
  int64_t as_int() const;      // signed or unsigned payload, range-checked
  uint64_t as_uint() const;
  double as_double() const;    // any numeric payload
  const std::string& as_string() const { return std::get<std::string>(value); }
  const std::vector<Scalar>& as_list() const { return std::get<std::vector<Scalar>>(value); }
  bool Equals(const Scalar& other) const;
};

// Element i of an array as a Scalar.
Scalar GetScalar(const ArrayData& array, int64_t i);
// An array of the given type from scalars (each must match the type or be null).
ArrayPtr MakeArray(const TypePtr& type, const std::vector<Scalar>& values);

}  // namespace lancelet
