#include "expr/functions.h"

#include <algorithm>
#include <cmath>

#include "expr/cast.h"
#include "expr/errors.h"
#include "expr/type_rules.h"
#include "lancelet/builder.h"

namespace lancelet {

namespace {

bool IsBytes(const DataType& t) { return t.is_variable_binary() || t.id() == TypeId::kFixedSizeBinary; }

std::string TypeName(const TypePtr& t) { return t ? t->ToString() : "NULL"; }

void ExpectArgCount(const std::string& name, const std::vector<TypePtr>& types, size_t min, size_t max,
                    const Expr* origin) {
  if (types.size() < min || types.size() > max) {
    std::string want = min == max ? std::to_string(min) : fmt::format("{} to {}", min, max);
    ThrowAt(origin, fmt::format("{}() takes {} argument{}, got {}", name, want, max == 1 ? "" : "s", types.size()));
  }
}

[[noreturn]] void BadArgument(const std::string& name, const char* want, const TypePtr& got, const Expr* origin) {
  ThrowAt(origin, fmt::format("{}() expects {}, got {}", name, want, TypeName(got)));
}

Scalar RowValue(const Datum& d, int64_t i) { return d.is_array() ? GetScalar(*d.array, i) : d.scalar; }

int64_t Utf8Length(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

double RoundHalfAway(double x, int64_t digits) {
  if (!std::isfinite(x)) return x;
  double scale = std::pow(10.0, double(digits));
  if (!std::isfinite(scale) || scale == 0) return digits > 0 ? x : 0.0;
  return std::round(x * scale) / scale;
}

Scalar RoundInteger(const Scalar& v, int64_t digits, const TypePtr& type, const Expr* origin) {
  if (digits >= 0) return v;
  if (digits < -19) return CastScalar(Scalar{DataType::Int64(), int64_t(0)}, type);
  // Rounds half away from zero to a multiple of 10^-digits, in 128 bits.
  __int128 unit = 1;
  for (int64_t k = 0; k < -digits; ++k) unit *= 10;
  __int128 x = std::holds_alternative<int64_t>(v.value) ? __int128(std::get<int64_t>(v.value))
                                                         : __int128(std::get<uint64_t>(v.value));
  __int128 half = unit / 2;
  __int128 r = x >= 0 ? (x + half) / unit * unit : -((-x + half) / unit * unit);
  try {
    if (r < 0) return CastScalar(Scalar{DataType::Int64(), int64_t(r)}, type);
    if (r > __int128(UINT64_MAX)) ThrowInvalid("round() result is out of range for {}", type->ToString());
    return CastScalar(Scalar{DataType::UInt64(), uint64_t(r)}, type);
  } catch (const ParseError&) {
    throw;
  } catch (const Error& e) {
    ThrowAt(origin, e.what());
  }
}

template <typename RowFn>
ArrayPtr RowWise(const TypePtr& type, int64_t n, RowFn&& row) {
  auto builder = ArrayBuilder::Make(type);
  for (int64_t i = 0; i < n; ++i) builder->AppendScalar(row(i));
  return builder->Finish();
}

}  // namespace

TypePtr ResolveFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  if (name == "abs") {
    ExpectArgCount(name, types, 1, 1, origin);
    if (!types[0]) types[0] = DataType::Float64();
    if (!types[0]->is_numeric()) BadArgument(name, "a number", types[0], origin);
    if (types[0]->id() == TypeId::kFloat16) types[0] = DataType::Float32();
    return types[0];
  }
  if (name == "lower" || name == "upper") {
    ExpectArgCount(name, types, 1, 1, origin);
    if (!types[0]) types[0] = DataType::Utf8();
    if (!types[0]->is_string()) BadArgument(name, "a string", types[0], origin);
    return types[0];
  }
  if (name == "length" || name == "char_length" || name == "character_length" || name == "octet_length") {
    ExpectArgCount(name, types, 1, 1, origin);
    if (!types[0]) types[0] = DataType::Utf8();
    if (!IsBytes(*types[0])) BadArgument(name, "a string or binary value", types[0], origin);
    return DataType::Int64();
  }
  if (name == "||") {  // the concatenation operator: strings only, NULL when either side is
    const bool large = std::any_of(types.begin(), types.end(), [](const TypePtr& t) {
      return t && t->id() == TypeId::kLargeUtf8;
    });
    for (auto& t : types) {
      if (t && !t->is_string()) ThrowAt(origin, fmt::format("|| concatenates strings, got {}", TypeName(t)));
      t = large ? DataType::LargeUtf8() : DataType::Utf8();
    }
    return types[0];
  }
  if (name == "coalesce") {
    if (types.empty()) ThrowAt(origin, "coalesce() needs at least one argument");
    TypePtr common;
    for (const auto& t : types) {
      TypePtr next = CommonType(common, t);
      if (!next && t) {
        ThrowAt(origin, fmt::format("coalesce() arguments have no common type: {} and {}", TypeName(common),
                                    TypeName(t)));
      }
      common = next;
    }
    if (!common) common = DataType::Bool();
    for (auto& t : types) t = common;
    return common;
  }
  if (name == "round") {
    ExpectArgCount(name, types, 1, 2, origin);
    if (!types[0]) types[0] = DataType::Float64();
    if (!types[0]->is_numeric()) BadArgument(name, "a number", types[0], origin);
    if (types[0]->id() == TypeId::kFloat16) types[0] = DataType::Float32();
    if (types.size() == 2) {
      if (types[1] && !types[1]->is_integer()) BadArgument(name, "an integer number of digits", types[1], origin);
      types[1] = DataType::Int64();
    }
    return types[0];
  }
  // The aggregates are the SQL layer's, named here so that one message lists every function.
  ThrowAt(origin, fmt::format("unknown function '{}' (known: abs, char_length, coalesce, length, lower, "
                              "octet_length, round, upper; aggregates in a SELECT: avg, count, max, min, sum)",
                              name));
}

ArrayPtr CallFunction(const std::string& name, const std::vector<Datum>& args, int64_t n, const TypePtr& type,
                      const Expr* origin) {
  if (name == "coalesce") {
    return RowWise(type, n, [&](int64_t i) {
      for (const auto& a : args) {
        Scalar v = RowValue(a, i);
        if (!v.is_null()) return v;
      }
      return Scalar::Null(type);
    });
  }
  if (name == "||") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar a = RowValue(args[0], i), b = RowValue(args[1], i);
      if (a.is_null() || b.is_null()) return Scalar::Null(type);
      return {type, a.as_string() + b.as_string()};
    });
  }
  const Datum& x = args[0];
  if (name == "abs") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar v = RowValue(x, i);
      if (v.is_null()) return v;
      if (auto* d = std::get_if<double>(&v.value)) return {type, std::fabs(*d)};
      if (auto* s = std::get_if<int64_t>(&v.value)) {
        if (*s == INT64_MIN || (type->bit_width() < 64 && *s == -(int64_t(1) << (type->bit_width() - 1))))
          ThrowAt(origin, fmt::format("{} overflow: abs({})", type->ToString(), *s));
        return {type, *s < 0 ? -*s : *s};
      }
      return v;
    });
  }
  if (name == "lower" || name == "upper") {
    bool up = name == "upper";
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar v = RowValue(x, i);
      if (v.is_null()) return v;
      std::string s = v.as_string();
      for (auto& c : s) {
        if (up && c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
        if (!up && c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
      }
      return {type, std::move(s)};
    });
  }
  if (name == "length" || name == "char_length" || name == "character_length" || name == "octet_length") {
    bool chars = name != "octet_length" && x.type()->is_string();
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar v = RowValue(x, i);
      if (v.is_null()) return Scalar::Null(type);
      const std::string& s = v.as_string();
      return {type, chars ? Utf8Length(s) : int64_t(s.size())};
    });
  }
  if (name == "round") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar v = RowValue(x, i);
      int64_t digits = 0;
      if (args.size() == 2) {
        Scalar d = RowValue(args[1], i);
        if (d.is_null()) return Scalar::Null(type);
        digits = d.as_int();
      }
      if (v.is_null()) return v;
      if (auto* f = std::get_if<double>(&v.value)) {
        double r = RoundHalfAway(*f, digits);
        return {type, type->id() == TypeId::kFloat32 ? double(float(r)) : r};
      }
      return RoundInteger(v, digits, type, origin);
    });
  }
  ThrowAt(origin, fmt::format("unknown function '{}'", name));
}

}  // namespace lancelet
