#include "expr/functions.h"

#include <algorithm>
#include <cmath>

#include "expr/cast.h"
#include "expr/compare.h"
#include "expr/errors.h"
#include "expr/type_rules.h"
#include "lancelet/builder.h"

namespace lancelet {

namespace {

bool IsBytes(const DataType& t) { return t.is_variable_binary() || t.id() == TypeId::kFixedSizeBinary; }

[[noreturn]] void BadArgument(const std::string& name, const char* want, const TypePtr& got, const Expr* origin) {
  ThrowAt(origin, fmt::format("{}() expects {}, got {}", name, want, TypeName(got)));
}

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

}  // namespace

std::string TypeName(const TypePtr& t) { return t ? t->ToString() : "NULL"; }

Scalar RowValue(const Datum& d, int64_t i) { return d.is_array() ? GetScalar(*d.array, i) : d.scalar; }

void ExpectArgCount(const std::string& name, const std::vector<TypePtr>& types, size_t min, size_t max,
                    const Expr* origin) {
  if (types.size() < min || types.size() > max) {
    std::string want = min == max ? std::to_string(min) : fmt::format("{} to {}", min, max);
    ThrowAt(origin, fmt::format("{}() takes {} argument{}, got {}", name, want, max == 1 ? "" : "s", types.size()));
  }
}

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
  if (name == "floor" || name == "ceil" || name == "ceiling") {
    ExpectArgCount(name, types, 1, 1, origin);
    if (!types[0]) types[0] = DataType::Float64();
    if (!types[0]->is_numeric()) BadArgument(name, "a number", types[0], origin);
    if (types[0]->id() == TypeId::kFloat16) types[0] = DataType::Float32();
    return types[0];
  }
  if (name == "sqrt" || name == "ln" || name == "exp" || name == "power" || name == "pow") {
    const size_t arity = name == "power" || name == "pow" ? 2 : 1;
    ExpectArgCount(name, types, arity, arity, origin);
    for (auto& t : types) {
      if (t && !t->is_numeric()) BadArgument(name, "numbers", t, origin);
      t = DataType::Float64();
    }
    return DataType::Float64();
  }
  if (name == "greatest" || name == "least") {
    if (types.empty()) ThrowAt(origin, fmt::format("{}() needs at least one argument", name));
    TypePtr common;
    for (const auto& t : types) {
      TypePtr next = CommonType(common, t);
      if (!next && t)
        ThrowAt(origin, fmt::format("{}() arguments have no common type: {} and {}", name, TypeName(common), TypeName(t)));
      common = next;
    }
    if (!common) common = DataType::Int64();
    for (auto& t : types) t = common;
    return common;
  }
  if (name == "nullif") {
    ExpectArgCount(name, types, 2, 2, origin);
    TypePtr common = CommonType(types[0], types[1]);
    if (!common && types[0] && types[1])
      ThrowAt(origin, fmt::format("nullif() arguments have no common type: {} and {}", TypeName(types[0]),
                                  TypeName(types[1])));
    if (!common) common = DataType::Int64();
    types[0] = types[1] = common;
    return common;
  }
  if (name == "substr" || name == "substring") {  // substr(s, start[, length]), from 1, in characters
    ExpectArgCount(name, types, 2, 3, origin);
    if (!types[0]) types[0] = DataType::Utf8();
    if (!types[0]->is_string()) BadArgument(name, "a string", types[0], origin);
    for (size_t k = 1; k < types.size(); ++k) {
      if (types[k] && !types[k]->is_integer()) BadArgument(name, "integer positions", types[k], origin);
      types[k] = DataType::Int64();
    }
    return types[0];
  }
  if (name == "replace" || name == "starts_with" || name == "contains" || name == "trim" || name == "ltrim" ||
      name == "rtrim") {
    const bool trim = name == "trim" || name == "ltrim" || name == "rtrim";
    const size_t arity = name == "replace" ? 3 : 2;
    ExpectArgCount(name, types, trim ? 1 : arity, trim ? 2 : arity, origin);
    const bool large = std::any_of(types.begin(), types.end(), [](const TypePtr& t) {
      return t && t->id() == TypeId::kLargeUtf8;
    });
    for (auto& t : types) {
      if (t && !t->is_string()) BadArgument(name, "strings", t, origin);
      t = large ? DataType::LargeUtf8() : DataType::Utf8();
    }
    return name == "starts_with" || name == "contains" ? DataType::Bool() : types[0];
  }
  if (name == "case") {  // (condition, value)... [, else]; the evaluator runs it (EvaluateCase)
    TypePtr common;
    for (size_t k = 0; k < types.size(); ++k) {
      const bool condition = k % 2 == 0 && k + 1 < types.size();
      if (condition) {
        if (types[k] && types[k]->id() != TypeId::kBool)
          ThrowAt(origin, fmt::format("CASE WHEN needs a boolean condition, got {}", TypeName(types[k])));
        types[k] = DataType::Bool();
        continue;
      }
      TypePtr next = CommonType(common, types[k]);
      if (!next && types[k])
        ThrowAt(origin, fmt::format("CASE results have no common type: {} and {}", TypeName(common), TypeName(types[k])));
      common = next;
    }
    if (!common) common = DataType::Int64();
    for (size_t k = 0; k < types.size(); ++k)
      if (!(k % 2 == 0 && k + 1 < types.size())) types[k] = common;
    return common;
  }
  if (name == "||") {  // the concatenation operator: NULL when either side is
    if (std::any_of(types.begin(), types.end(), [](const TypePtr& t) { return t && IsListLike(*t); }))
      return ResolveListFunction(name, arg_types, origin);
    const bool large = std::any_of(types.begin(), types.end(), [](const TypePtr& t) {
      return t && t->id() == TypeId::kLargeUtf8;
    });
    for (auto& t : types) {
      if (t && !t->is_string())
        ThrowAt(origin, fmt::format("|| concatenates two strings or two lists, got {} and {}", TypeName(types[0]),
                                    TypeName(types[1])));
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
  if (TypePtr type = ResolveMoreFunction(name, arg_types, origin)) return type;
  // The aggregates are the SQL layer's, named here so that one message lists every function.
  ThrowAt(origin, fmt::format("unknown function '{}' (known: abs, array_cat, array_concat, array_contains, "
                              "array_cosine_similarity, array_distance, array_distinct, array_has, "
                              "array_indexof, array_inner_product, array_length, array_position, array_reverse, "
                              "array_reverse_sort, array_slice, array_sort, array_to_string, array_unique, ceil, "
                              "char_length, coalesce, contains, date_part, date_trunc, exp, extract, floor, "
                              "greatest, least, len, length, list_avg, list_cat, list_concat, list_contains, "
                              "list_cosine_similarity, list_distance, list_distinct, list_element, list_has, "
                              "list_indexof, list_inner_product, list_max, list_min, list_pack, list_position, "
                              "list_product, list_reverse, list_reverse_sort, list_slice, list_sort, list_sum, "
                              "list_to_string, list_unique, list_value, ln, lower, ltrim, nullif, octet_length, "
                              "power, regexp_matches, replace, round, rtrim, split, sqrt, starts_with, strftime, "
                              "substr, trim, upper; aggregates in a "
                              "SELECT: avg, bool_and, bool_or, count, max, median, min, stddev, stddev_pop, "
                              "string_agg, sum, var_pop, variance; window functions, with OVER (...): "
                              "cume_dist, dense_rank, first_value, lag, last_value, lead, nth_value, ntile, "
                              "percent_rank, rank, row_number)",
                              name));
}

ArrayPtr CallFunction(const std::string& name, const std::vector<Datum>& args, int64_t n, const TypePtr& type,
                      const Expr* origin) {
  if (ArrayPtr out = CallMoreFunction(name, args, n, type, origin)) return out;
  if (name == "coalesce") {
    return RowWise(type, n, [&](int64_t i) {
      for (const auto& a : args) {
        Scalar v = RowValue(a, i);
        if (!v.is_null()) return v;
      }
      return Scalar::Null(type);
    });
  }
  if (name == "greatest" || name == "least") {  // NULLs are skipped, as DuckDB does
    const bool greatest = name == "greatest";
    return RowWise(type, n, [&](int64_t i) {
      Scalar best = Scalar::Null(type);
      for (const auto& a : args) {
        Scalar v = RowValue(a, i);
        if (v.is_null()) continue;
        if (best.is_null()) {
          best = v;
          continue;
        }
        const std::optional<int> c = CompareScalars(v, best);
        if (c && (greatest ? *c > 0 : *c < 0)) best = v;
      }
      return best;
    });
  }
  if (name == "nullif") {
    return RowWise(type, n, [&](int64_t i) {
      Scalar a = RowValue(args[0], i), b = RowValue(args[1], i);
      if (!a.is_null() && !b.is_null() && CompareScalars(a, b) == 0) return Scalar::Null(type);
      return a;
    });
  }
  if (name == "sqrt" || name == "ln" || name == "exp" || name == "power" || name == "pow") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      std::vector<double> v;
      for (const auto& a : args) {
        Scalar x = RowValue(a, i);
        if (x.is_null()) return Scalar::Null(type);
        v.push_back(x.as_double());
      }
      if (name == "sqrt") {
        if (v[0] < 0) ThrowAt(origin, fmt::format("sqrt() of a negative number: {}", v[0]));
        return {type, std::sqrt(v[0])};
      }
      if (name == "ln") {
        if (v[0] <= 0) ThrowAt(origin, fmt::format("ln() of a number that is not positive: {}", v[0]));
        return {type, std::log(v[0])};
      }
      if (name == "exp") return {type, std::exp(v[0])};
      return {type, std::pow(v[0], v[1])};
    });
  }
  if (name == "floor" || name == "ceil" || name == "ceiling") {
    const bool up = name != "floor";
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar v = RowValue(args[0], i);
      if (auto* d = std::get_if<double>(&v.value)) return {type, up ? std::ceil(*d) : std::floor(*d)};
      return v;  // integers and NULL as they are
    });
  }
  if (name == "substr" || name == "substring") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      Scalar s = RowValue(args[0], i), start = RowValue(args[1], i);
      Scalar count = args.size() == 3 ? RowValue(args[2], i) : Scalar{DataType::Int64(), INT64_MAX};
      if (s.is_null() || start.is_null() || count.is_null()) return Scalar::Null(type);
      // Characters [start, start + count), counted from 1 (0 and negatives count as DuckDB's:
      // start before the string shortens the count).
      const std::string& text = s.as_string();
      std::vector<size_t> starts;  // byte offset of each character
      for (size_t b = 0; b < text.size(); ++b)
        if ((static_cast<unsigned char>(text[b]) & 0xC0) != 0x80) starts.push_back(b);
      const int64_t chars = int64_t(starts.size());
      int64_t first = start.as_int();
      if (first < 0) first = chars + first + 1;  // from the end
      int64_t length = count.as_int();
      if (length < 0) return {type, std::string()};
      int64_t from = first - 1;  // 0-based; negative when the start is before the string
      int64_t to = from > 0 && length > INT64_MAX - from ? INT64_MAX : from + length;
      from = std::clamp<int64_t>(from, 0, chars);
      to = std::clamp<int64_t>(to, from, chars);
      const size_t begin = from < chars ? starts[size_t(from)] : text.size();
      const size_t end = to < chars ? starts[size_t(to)] : text.size();
      return {type, text.substr(begin, end - begin)};
    });
  }
  if (name == "replace" || name == "starts_with" || name == "contains" || name == "trim" || name == "ltrim" ||
      name == "rtrim") {
    return RowWise(type, n, [&](int64_t i) -> Scalar {
      std::vector<std::string> v;
      for (const auto& a : args) {
        Scalar x = RowValue(a, i);
        if (x.is_null()) return Scalar::Null(type);
        v.push_back(x.as_string());
      }
      if (name == "starts_with") return {type, v[0].starts_with(v[1])};
      if (name == "contains") return {type, v[0].find(v[1]) != std::string::npos};
      if (name == "replace") {
        if (v[1].empty()) return {type, v[0]};
        std::string out;
        for (size_t at = 0;;) {
          const size_t hit = v[0].find(v[1], at);
          out.append(v[0], at, hit == std::string::npos ? std::string::npos : hit - at);
          if (hit == std::string::npos) break;
          out += v[2];
          at = hit + v[1].size();
        }
        return {type, out};
      }
      // trim: the characters of the second argument (a space without one), whole UTF-8
      // sequences, from the start, the end or both.
      std::vector<std::string_view> set;
      const std::string_view chars = v.size() == 2 ? std::string_view(v[1]) : std::string_view(" ");
      for (size_t b = 0; b < chars.size();) {
        size_t e = b + 1;
        while (e < chars.size() && (static_cast<unsigned char>(chars[e]) & 0xC0) == 0x80) ++e;
        set.push_back(chars.substr(b, e - b));
        b = e;
      }
      std::string_view text = v[0];
      auto trims = [&](bool front) {
        for (std::string_view c : set)
          if (front ? text.starts_with(c) : text.ends_with(c)) {
            text.remove_prefix(front ? c.size() : 0);
            text.remove_suffix(front ? 0 : c.size());
            return true;
          }
        return false;
      };
      if (name != "rtrim")
        while (!text.empty() && trims(true)) {
        }
      if (name != "ltrim")
        while (!text.empty() && trims(false)) {
        }
      return {type, std::string(text)};
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
