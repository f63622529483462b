#include "expr/functions.h"

#include <algorithm>
#include <bit>
#include <clocale>
#include <cmath>
#include <cwctype>
#include <limits>
#include <type_traits>
#include <variant>

#include "expr/cast.h"
#include "expr/compare.h"
#include "expr/errors.h"
#include "expr/function_catalog.h"
#include "expr/type_rules.h"
#include "lancelet/builder.h"

// xxHash from its header alone (libxxhash-dev), for hash().
#define XXH_INLINE_ALL
#include <xxhash.h>

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

// Rounds the double's exact binary value half away from zero, as DuckDB: 877.65 is
// 877.6499999999999772... and rounds to 877.6 at one digit. The product with 10^digits is
// formed in long double (a 64-bit mantissa holds it exactly up to four digits), where a
// double product would round 8776.4999... up to 8776.5 first.
double RoundHalfAway(double x, int64_t digits) {
  if (!std::isfinite(x)) return x;
  const long double scale = std::pow(10.0L, (long double)digits);
  if (!std::isfinite(scale) || scale == 0) return digits > 0 ? x : 0.0;
  return double(std::round((long double)x * scale) / scale);
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

// --- type rules: check a call's argument types, set the types they are cast to, and
// return the result type (the argument count is checked before, from the table) ---

using TypeRule = TypePtr (*)(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin);

// A number, NULL read as float64; float16 computes as float32.
void ExpectNumber(const std::string& name, TypePtr& type, const Expr* origin) {
  if (!type) type = DataType::Float64();
  if (!type->is_numeric()) BadArgument(name, "a number", type, origin);
  if (type->id() == TypeId::kFloat16) type = DataType::Float32();
}

// abs, floor, ceil: a number, of the same type.
TypePtr SameNumberRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  ExpectNumber(name, types[0], origin);
  return types[0];
}

TypePtr RoundRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  ExpectNumber(name, types[0], origin);
  if (types.size() == 2) {
    if (types[1] && !types[1]->is_integer()) BadArgument(name, "an integer number of digits", types[1], origin);
    types[1] = DataType::Int64();
  }
  return types[0];
}

// lower, upper: a string, of the same type.
TypePtr SameStringRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  if (!types[0]) types[0] = DataType::Utf8();
  if (!types[0]->is_string()) BadArgument(name, "a string", types[0], origin);
  return types[0];
}

TypePtr LengthRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  if (!types[0]) types[0] = DataType::Utf8();
  if (!IsBytes(*types[0])) BadArgument(name, "a string or binary value", types[0], origin);
  return DataType::Int64();
}

// sqrt, ln, exp, power: numbers computed as float64.
TypePtr Float64MathRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  for (auto& t : *arg_types) {
    if (t && !t->is_numeric()) BadArgument(name, "numbers", t, origin);
    t = DataType::Float64();
  }
  return DataType::Float64();
}

// greatest, least and coalesce: one or more arguments of a common type (`all_null`
// when every argument is an untyped NULL).
TypePtr CommonTypeOfAll(const std::string& name, std::vector<TypePtr>* arg_types, const TypePtr& all_null,
                        const Expr* origin) {
  auto& types = *arg_types;
  if (types.empty()) ThrowAt(origin, fmt::format("{}() needs at least one argument", name));
  TypePtr common;
  for (const auto& t : types) {
    TypePtr next = CommonType(common, t);
    if (!next && t)
      ThrowAt(origin, fmt::format("{}() arguments have no common type: {} and {}", name, TypeName(common), TypeName(t)));
    common = next;
  }
  if (!common) common = all_null;
  for (auto& t : types) t = common;
  return common;
}

TypePtr GreatestLeastRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  return CommonTypeOfAll(name, arg_types, DataType::Int64(), origin);
}

TypePtr CoalesceRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  return CommonTypeOfAll(name, arg_types, DataType::Bool(), origin);
}

TypePtr NullifRule(const std::string&, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  TypePtr common = CommonType(types[0], types[1]);
  if (!common && types[0] && types[1])
    ThrowAt(origin, fmt::format("nullif() arguments have no common type: {} and {}", TypeName(types[0]),
                                TypeName(types[1])));
  if (!common) common = DataType::Int64();
  types[0] = types[1] = common;
  return common;
}

// substr(s, start[, length]), from 1, in characters.
TypePtr SubstrRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  if (!types[0]) types[0] = DataType::Utf8();
  if (!types[0]->is_string()) BadArgument(name, "a string", types[0], origin);
  for (size_t k = 1; k < types.size(); ++k) {
    if (types[k] && !types[k]->is_integer()) BadArgument(name, "integer positions", types[k], origin);
    types[k] = DataType::Int64();
  }
  return types[0];
}

bool AnyLargeUtf8(const std::vector<TypePtr>& types) {
  return std::any_of(types.begin(), types.end(), [](const TypePtr& t) { return t && t->id() == TypeId::kLargeUtf8; });
}

// replace, starts_with, contains, trim: strings, all large when one is.
TypePtr StringsRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  const bool large = AnyLargeUtf8(types);
  for (auto& t : types) {
    if (t && !t->is_string()) BadArgument(name, "strings", t, origin);
    t = large ? DataType::LargeUtf8() : DataType::Utf8();
  }
  return name == "starts_with" || name == "contains" ? DataType::Bool() : types[0];
}

// (condition, value)... [, else]; the evaluator runs it (EvaluateCase).
TypePtr CaseRule(const std::string&, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
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

// The concatenation operator on two strings (two lists are list_functions.cc's).
TypePtr ConcatRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  if (std::any_of(types.begin(), types.end(), [](const TypePtr& t) { return t && IsListLike(*t); }))
    return ResolveListFunction(name, arg_types, origin);
  // Other values join as text, CAST's spelling (DuckDB's 'a' || 1 = 'a1'); a NULL side
  // still makes the result NULL.
  const bool large = AnyLargeUtf8(types);
  for (auto& t : types) {
    if (t && (t->id() == TypeId::kStruct || t->id() == TypeId::kMap))
      ThrowAt(origin, fmt::format("|| concatenates strings, lists or values with a text form, got {} and {}",
                                  TypeName(types[0]), TypeName(types[1])));
    t = large ? DataType::LargeUtf8() : DataType::Utf8();
  }
  return types[0];
}

// concat(a, ...): every argument as text (CAST's spelling), as DuckDB; lists are refused.
TypePtr ConcatFunctionRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  auto& types = *arg_types;
  if (types.empty()) ThrowAt(origin, "concat() takes at least 1 argument, got 0");
  const bool large = AnyLargeUtf8(types);
  for (auto& t : types) {
    if (t && (IsListLike(*t) || t->id() == TypeId::kStruct)) BadArgument(name, "scalar values", t, origin);
    t = large ? DataType::LargeUtf8() : DataType::Utf8();
  }
  return types[0];
}

// --- kernels: evaluate a call whose arguments have the types its rule set ---

struct Call {
  const std::string& name;
  const std::vector<Datum>& args;
  int64_t n;
  const TypePtr& type;
  const Expr* origin;
};

using Kernel = ArrayPtr (*)(const Call& call);

ArrayPtr Coalesce(const Call& c) {
  return RowWise(c.type, c.n, [&](int64_t i) {
    for (const auto& a : c.args) {
      Scalar v = RowValue(a, i);
      if (!v.is_null()) return v;
    }
    return Scalar::Null(c.type);
  });
}

// NULLs are skipped, as DuckDB does.
ArrayPtr GreatestLeast(const Call& c) {
  const bool greatest = c.name == "greatest";
  return RowWise(c.type, c.n, [&](int64_t i) {
    Scalar best = Scalar::Null(c.type);
    for (const auto& a : c.args) {
      Scalar v = RowValue(a, i);
      if (v.is_null()) continue;
      if (best.is_null()) {
        best = v;
        continue;
      }
      const std::optional<int> order = CompareScalars(v, best);
      if (order && (greatest ? *order > 0 : *order < 0)) best = v;
    }
    return best;
  });
}

ArrayPtr Nullif(const Call& c) {
  return RowWise(c.type, c.n, [&](int64_t i) {
    Scalar a = RowValue(c.args[0], i), b = RowValue(c.args[1], i);
    if (!a.is_null() && !b.is_null() && CompareScalars(a, b) == 0) return Scalar::Null(c.type);
    return a;
  });
}

// Rows of fn(the arguments as Ts); NULL where any argument is.
template <typename T, typename Fn>
ArrayPtr ArgumentsRowWise(const Call& c, Fn&& fn) {
  return RowWise(c.type, c.n, [&](int64_t i) -> Scalar {
    std::vector<T> v;
    for (const auto& a : c.args) {
      Scalar x = RowValue(a, i);
      if (x.is_null()) return Scalar::Null(c.type);
      if constexpr (std::is_same_v<T, double>) v.push_back(x.as_double());
      else v.push_back(x.as_string());
    }
    return {c.type, fn(v)};
  });
}

template <typename Fn>
ArrayPtr Float64RowWise(const Call& c, Fn&& fn) {
  return ArgumentsRowWise<double>(c, std::forward<Fn>(fn));
}

ArrayPtr Sqrt(const Call& c) {
  return Float64RowWise(c, [&](const std::vector<double>& v) {
    if (v[0] < 0) ThrowAt(c.origin, fmt::format("sqrt() of a negative number: {}", v[0]));
    return std::sqrt(v[0]);
  });
}

ArrayPtr Ln(const Call& c) {
  return Float64RowWise(c, [&](const std::vector<double>& v) {
    if (v[0] <= 0) ThrowAt(c.origin, fmt::format("ln() of a number that is not positive: {}", v[0]));
    return std::log(v[0]);
  });
}

ArrayPtr Exp(const Call& c) {
  return Float64RowWise(c, [](const std::vector<double>& v) { return std::exp(v[0]); });
}

ArrayPtr Power(const Call& c) {
  return Float64RowWise(c, [](const std::vector<double>& v) { return std::pow(v[0], v[1]); });
}

ArrayPtr FloorCeil(const Call& c) {
  const bool up = c.name != "floor";
  return RowWise(c.type, c.n, [&](int64_t i) -> Scalar {
    Scalar v = RowValue(c.args[0], i);
    if (auto* d = std::get_if<double>(&v.value)) return {c.type, up ? std::ceil(*d) : std::floor(*d)};
    return v;  // integers and NULL as they are
  });
}

// Characters [start, start + count) of `text`, counted from 1 (0 and negatives count as
// DuckDB's: start before the string shortens the count, a negative count takes the
// characters before the start: substr('hello', 3, -1) is 'e').
std::string Substring(const std::string& text, int64_t first, int64_t length) {
  std::vector<size_t> starts;  // byte offset of each character
  for (size_t b = 0; b < text.size(); ++b)
    if ((static_cast<unsigned char>(text[b]) & 0xC0) != 0x80) starts.push_back(b);
  const int64_t chars = int64_t(starts.size());
  if (first < 0) first = chars + first + 1;  // from the end
  int64_t from = first - 1;  // 0-based; negative when the start is before the string
  int64_t to = from > 0 && length > INT64_MAX - from ? INT64_MAX : from + length;
  if (length < 0) {
    to = from;
    from = from < INT64_MIN - length ? INT64_MIN : from + length;
  }
  from = std::clamp<int64_t>(from, 0, chars);
  to = std::clamp<int64_t>(to, from, chars);
  const size_t begin = from < chars ? starts[size_t(from)] : text.size();
  const size_t end = to < chars ? starts[size_t(to)] : text.size();
  return text.substr(begin, end - begin);
}

ArrayPtr Substr(const Call& c) {
  return RowWise(c.type, c.n, [&](int64_t i) -> Scalar {
    Scalar s = RowValue(c.args[0], i), start = RowValue(c.args[1], i);
    Scalar count = c.args.size() == 3 ? RowValue(c.args[2], i) : Scalar{DataType::Int64(), INT64_MAX};
    if (s.is_null() || start.is_null() || count.is_null()) return Scalar::Null(c.type);
    return {c.type, Substring(s.as_string(), start.as_int(), count.as_int())};
  });
}

template <typename Fn>
ArrayPtr StringsRowWise(const Call& c, Fn&& fn) {
  return ArgumentsRowWise<std::string>(c, std::forward<Fn>(fn));
}

ArrayPtr StartsWith(const Call& c) {
  return StringsRowWise(c, [](const std::vector<std::string>& v) { return v[0].starts_with(v[1]); });
}

ArrayPtr Contains(const Call& c) {
  return StringsRowWise(c, [](const std::vector<std::string>& v) { return v[0].find(v[1]) != std::string::npos; });
}

ArrayPtr Replace(const Call& c) {
  return StringsRowWise(c, [](const std::vector<std::string>& v) {
    if (v[1].empty()) return v[0];
    std::string out;
    for (size_t at = 0;;) {
      const size_t hit = v[0].find(v[1], at);
      out.append(v[0], at, hit == std::string::npos ? std::string::npos : hit - at);
      if (hit == std::string::npos) break;
      out += v[2];
      at = hit + v[1].size();
    }
    return out;
  });
}

// `text` without the characters of `chars` (whole UTF-8 sequences) at its start, its end
// or both.
std::string TrimCharacters(std::string_view text, std::string_view chars, bool front, bool back) {
  std::vector<std::string_view> set;
  for (size_t b = 0; b < chars.size();) {
    size_t e = b + 1;
    while (e < chars.size() && (static_cast<unsigned char>(chars[e]) & 0xC0) == 0x80) ++e;
    set.push_back(chars.substr(b, e - b));
    b = e;
  }
  auto trims = [&](bool at_front) {
    for (std::string_view c : set)
      if (at_front ? text.starts_with(c) : text.ends_with(c)) {
        text.remove_prefix(at_front ? c.size() : 0);
        text.remove_suffix(at_front ? 0 : c.size());
        return true;
      }
    return false;
  };
  if (front)
    while (!text.empty() && trims(true)) {
    }
  if (back)
    while (!text.empty() && trims(false)) {
    }
  return std::string(text);
}

// trim, ltrim, rtrim: the characters of the second argument, a space without one.
ArrayPtr Trim(const Call& c) {
  const bool front = c.name != "rtrim", back = c.name != "ltrim";
  return StringsRowWise(c, [&](const std::vector<std::string>& v) {
    return TrimCharacters(v[0], v.size() == 2 ? std::string_view(v[1]) : std::string_view(" "), front, back);
  });
}

ArrayPtr Concat(const Call& c) {
  return RowWise(c.type, c.n, [&](int64_t i) -> Scalar {
    Scalar a = RowValue(c.args[0], i), b = RowValue(c.args[1], i);
    if (a.is_null() || b.is_null()) return Scalar::Null(c.type);
    return {c.type, a.as_string() + b.as_string()};
  });
}

// concat: NULL arguments are skipped (an empty string), so the result is never NULL.
ArrayPtr ConcatFunction(const Call& c) {
  return RowWise(c.type, c.n, [&](int64_t i) -> Scalar {
    std::string out;
    for (const Datum& arg : c.args) {
      Scalar v = RowValue(arg, i);
      if (!v.is_null()) out += v.as_string();
    }
    return {c.type, std::move(out)};
  });
}

ArrayPtr Abs(const Call& c) {
  const TypePtr& type = c.type;
  return RowWise(type, c.n, [&](int64_t i) -> Scalar {
    Scalar v = RowValue(c.args[0], i);
    if (v.is_null()) return v;
    if (auto* d = std::get_if<double>(&v.value)) return {type, std::fabs(*d)};
    if (auto* s = std::get_if<int64_t>(&v.value)) {
      if (*s == INT64_MIN || (type->bit_width() < 64 && *s == -(int64_t(1) << (type->bit_width() - 1))))
        ThrowAt(c.origin, fmt::format("{} overflow: abs({})", type->ToString(), *s));
      return {type, *s < 0 ? -*s : *s};
    }
    return v;
  });
}

// The C.UTF-8 locale's one-to-one case mapping of a code point, as DuckDB's lower/upper
// (no change of length). Over U+0080..U+1FFFF the two differ only in upper('ß'), which
// DuckDB maps to 'ẞ' (U+1E9E). Without that locale, ASCII letters only.
char32_t MapCase(char32_t cp, bool up) {
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t(0));
  if (up && cp == 0xDF) return 0x1E9E;
  if (cp < 0x80 || !utf8) {
    if (up && cp >= 'a' && cp <= 'z') return cp - 'a' + 'A';
    if (!up && cp >= 'A' && cp <= 'Z') return cp - 'A' + 'a';
    return cp;
  }
  return char32_t(up ? towupper_l(wint_t(cp), utf8) : towlower_l(wint_t(cp), utf8));
}

void AppendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::string ChangeCase(std::string_view s, bool up, bool ascii) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto lead = uint8_t(s[i]);
    const size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    bool valid = len > 0 && i + len <= s.size();
    char32_t cp = len == 1 ? lead : len == 2 ? lead & 0x1F : len == 3 ? lead & 0x0F : lead & 0x07;
    for (size_t k = 1; valid && k < len; ++k) {
      valid = (uint8_t(s[i + k]) & 0xC0) == 0x80;
      cp = (cp << 6) | (uint8_t(s[i + k]) & 0x3F);
    }
    if (!valid || (!ascii && len == 1)) {
      out += s[i++];
      continue;
    }
    AppendUtf8(out, MapCase(cp, up));
    i += len;
  }
  return out;
}

namespace {

ArrayPtr LowerUpper(const Call& c) {
  const bool up = c.name == "upper";
  return RowWise(c.type, c.n, [&](int64_t i) -> Scalar {
    Scalar v = RowValue(c.args[0], i);
    if (v.is_null()) return v;
    return {c.type, ChangeCase(v.as_string(), up, true)};
  });
}

// Characters of a string, bytes of binary values and of octet_length.
ArrayPtr Length(const Call& c) {
  const bool chars = c.name != "octet_length" && c.args[0].type()->is_string();
  return RowWise(c.type, c.n, [&](int64_t i) -> Scalar {
    Scalar v = RowValue(c.args[0], i);
    if (v.is_null()) return Scalar::Null(c.type);
    const std::string& s = v.as_string();
    return {c.type, chars ? Utf8Length(s) : int64_t(s.size())};
  });
}

ArrayPtr Round(const Call& c) {
  return RowWise(c.type, c.n, [&](int64_t i) -> Scalar {
    Scalar v = RowValue(c.args[0], i);
    int64_t digits = 0;
    if (c.args.size() == 2) {
      Scalar d = RowValue(c.args[1], i);
      if (d.is_null()) return Scalar::Null(c.type);
      digits = d.as_int();
    }
    if (v.is_null()) return v;
    if (auto* f = std::get_if<double>(&v.value)) {
      double r = RoundHalfAway(*f, digits);
      return {c.type, c.type->id() == TypeId::kFloat32 ? double(float(r)) : r};
    }
    return RoundInteger(v, digits, c.type, c.origin);
  });
}

// DuckDB's name of a type, as its typeof() gives it.
std::string DuckDbTypeName(const DataType& t) {
  switch (t.id()) {
    case TypeId::kBool: return "BOOLEAN";
    case TypeId::kInt8: return "TINYINT";
    case TypeId::kInt16: return "SMALLINT";
    case TypeId::kInt32: return "INTEGER";
    case TypeId::kInt64: return "BIGINT";
    case TypeId::kUInt8: return "UTINYINT";
    case TypeId::kUInt16: return "USMALLINT";
    case TypeId::kUInt32: return "UINTEGER";
    case TypeId::kUInt64: return "UBIGINT";
    case TypeId::kFloat16: return "FLOAT16";  // DuckDB has none
    case TypeId::kFloat32: return "FLOAT";
    case TypeId::kFloat64: return "DOUBLE";
    case TypeId::kUtf8: case TypeId::kLargeUtf8: return "VARCHAR";
    case TypeId::kBinary: case TypeId::kLargeBinary: case TypeId::kFixedSizeBinary: return "BLOB";
    case TypeId::kDate32: case TypeId::kDate64: return "DATE";
    case TypeId::kTimestamp:
      if (!t.timezone().empty()) return "TIMESTAMP WITH TIME ZONE";
      switch (t.unit()) {
        case TimeUnit::kSecond: return "TIMESTAMP_S";
        case TimeUnit::kMilli: return "TIMESTAMP_MS";
        case TimeUnit::kNano: return "TIMESTAMP_NS";
        case TimeUnit::kMicro: break;
      }
      return "TIMESTAMP";
    case TypeId::kTime32: case TypeId::kTime64: return "TIME";
    case TypeId::kDuration: return "INTERVAL";
    case TypeId::kDecimal128: case TypeId::kDecimal256: return fmt::format("DECIMAL({},{})", t.precision(), t.scale());
    case TypeId::kNull: return "\"NULL\"";
    case TypeId::kList: case TypeId::kLargeList: return DuckDbTypeName(*t.child(0)->type) + "[]";
    case TypeId::kFixedSizeList: return fmt::format("{}[{}]", DuckDbTypeName(*t.child(0)->type), t.fixed_size());
    case TypeId::kStruct: {
      std::string out = "STRUCT(";
      for (size_t i = 0; i < t.children().size(); ++i)
        out += (i ? ", " : "") + t.children()[i]->name + " " + DuckDbTypeName(*t.children()[i]->type);
      return out + ")";
    }
    default: return t.ToString();
  }
}

TypePtr TypeofRule(const std::string&, std::vector<TypePtr>* arg_types, const Expr*) {
  auto& types = *arg_types;
  if (!types[0]) types[0] = DataType::Null();  // a bare NULL: DuckDB's "NULL"
  return DataType::Utf8();
}

ArrayPtr Typeof(const Call& c) {
  const Scalar name{c.type, DuckDbTypeName(*c.args[0].type())};
  return RowWise(c.type, c.n, [&](int64_t) { return name; });
}

// __values(a, b, ...): several values of a row as one struct column {v0, v1, ...}, so that
// an aggregation carries a single argument per call (arg_min's value and comparand, an
// ordered aggregate's value and keys). Not a name users call (the catalog does not list it).
TypePtr ValuesRule(const std::string&, std::vector<TypePtr>* arg_types, const Expr*) {
  std::vector<FieldPtr> fields;
  for (size_t i = 0; i < arg_types->size(); ++i) {
    TypePtr& t = (*arg_types)[i];
    if (!t) t = DataType::Null();
    fields.push_back(Field::Make(fmt::format("v{}", i), t));
  }
  return DataType::Struct(std::move(fields));
}

ArrayPtr Values(const Call& c) {
  auto row = std::make_shared<ArrayData>();
  row->type = c.type;
  row->length = c.n;
  row->buffers = {nullptr};
  for (size_t i = 0; i < c.args.size(); ++i) {
    const Datum& d = c.args[i];
    row->children.push_back(d.is_array() ? d.array : RowWise(c.type->child(i)->type, c.n, [&](int64_t) {
      return d.scalar;
    }));
  }
  return row;
}

// hash(x, ...): XXH3 of the values' bytes in a canonical form, so that equal values hash
// alike across integer widths (and -0.0 as 0.0, every NaN alike); NULL hashes too.
void AppendHashBytes(std::string& out, const Scalar& v) {
  auto word = [&](char tag, uint64_t bits) {
    out += tag;
    for (int i = 0; i < 8; ++i) out += char(bits >> (8 * i));
  };
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          out += '\0';
        } else if constexpr (std::is_same_v<T, bool>) {
          out += x ? '\2' : '\1';
        } else if constexpr (std::is_same_v<T, int64_t>) {
          word('i', uint64_t(x));
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          word(x <= uint64_t(INT64_MAX) ? 'i' : 'u', x);
        } else if constexpr (std::is_same_v<T, double>) {
          const double d = std::isnan(x) ? std::numeric_limits<double>::quiet_NaN() : x == 0 ? 0.0 : x;
          word('d', std::bit_cast<uint64_t>(d));
        } else if constexpr (std::is_same_v<T, std::string>) {
          word('s', x.size());
          out += x;
        } else {
          word('l', x.size());
          for (const Scalar& item : x) AppendHashBytes(out, item);
        }
      },
      v.value);
}

TypePtr HashRule(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  if (arg_types->empty()) ThrowAt(origin, fmt::format("{}() takes at least 1 argument, got 0", name));
  for (auto& t : *arg_types)
    if (!t) t = DataType::Null();
  return DataType::UInt64();
}

ArrayPtr Hash(const Call& c) {
  std::string bytes;
  return RowWise(c.type, c.n, [&](int64_t i) {
    bytes.clear();
    for (const Datum& d : c.args) AppendHashBytes(bytes, RowValue(d, i));
    return Scalar{c.type, uint64_t(XXH3_64bits(bytes.data(), bytes.size()))};
  });
}

// --- the table ---

constexpr size_t kAnyCount = SIZE_MAX;  // the rule checks the argument count itself

struct FunctionDef {
  std::string_view name;
  size_t min_args, max_args;  // kAnyCount: not checked from the table
  TypeRule rule;
  Kernel kernel;  // null: evaluated elsewhere (CASE, by the evaluator)
};

constexpr FunctionDef kFunctions[] = {
    {"abs", 1, 1, SameNumberRule, Abs},
    {"lower", 1, 1, SameStringRule, LowerUpper},
    {"upper", 1, 1, SameStringRule, LowerUpper},
    {"length", 1, 1, LengthRule, Length},
    {"char_length", 1, 1, LengthRule, Length},
    {"character_length", 1, 1, LengthRule, Length},
    {"octet_length", 1, 1, LengthRule, Length},
    {"floor", 1, 1, SameNumberRule, FloorCeil},
    {"ceil", 1, 1, SameNumberRule, FloorCeil},
    {"ceiling", 1, 1, SameNumberRule, FloorCeil},
    {"sqrt", 1, 1, Float64MathRule, Sqrt},
    {"ln", 1, 1, Float64MathRule, Ln},
    {"exp", 1, 1, Float64MathRule, Exp},
    {"power", 2, 2, Float64MathRule, Power},
    {"pow", 2, 2, Float64MathRule, Power},
    {"greatest", kAnyCount, kAnyCount, GreatestLeastRule, GreatestLeast},
    {"least", kAnyCount, kAnyCount, GreatestLeastRule, GreatestLeast},
    {"nullif", 2, 2, NullifRule, Nullif},
    {"substr", 2, 3, SubstrRule, Substr},
    {"substring", 2, 3, SubstrRule, Substr},
    {"replace", 3, 3, StringsRule, Replace},
    {"starts_with", 2, 2, StringsRule, StartsWith},
    {"contains", 2, 2, StringsRule, Contains},
    {"trim", 1, 2, StringsRule, Trim},
    {"ltrim", 1, 2, StringsRule, Trim},
    {"rtrim", 1, 2, StringsRule, Trim},
    {"case", kAnyCount, kAnyCount, CaseRule, nullptr},
    {"||", kAnyCount, kAnyCount, ConcatRule, Concat},
    {"concat", kAnyCount, kAnyCount, ConcatFunctionRule, ConcatFunction},
    {"coalesce", kAnyCount, kAnyCount, CoalesceRule, Coalesce},
    {"round", 1, 2, RoundRule, Round},
    {"typeof", 1, 1, TypeofRule, Typeof},
    {"hash", kAnyCount, kAnyCount, HashRule, Hash},
    {"__values", kAnyCount, kAnyCount, ValuesRule, Values},
};

const FunctionDef* FindFunction(std::string_view name) {
  for (const FunctionDef& def : kFunctions)
    if (def.name == name) return &def;
  return nullptr;
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

bool IsVolatileFunction(const std::string& name) { return name == "random"; }

TypePtr ResolveFunction(const std::string& name, std::vector<TypePtr>* arg_types, const Expr* origin) {
  if (const FunctionDef* def = FindFunction(name)) {
    if (def->min_args != kAnyCount) ExpectArgCount(name, *arg_types, def->min_args, def->max_args, origin);
    return def->rule(name, arg_types, origin);
  }
  if (TypePtr type = ResolveMoreFunction(name, arg_types, origin)) return type;
  if (name == "unnest")  // the SQL layer's, which expands the rows
    ThrowAt(origin, "unnest() is allowed only as a whole item of a SELECT list (SELECT unnest(list) ...)");
  ThrowAt(origin, UnknownFunctionMessage(name));
}

ArrayPtr CallFunction(const std::string& name, const std::vector<Datum>& args, int64_t n, const TypePtr& type,
                      const Expr* origin) {
  if (ArrayPtr out = CallMoreFunction(name, args, n, type, origin)) return out;
  const FunctionDef* def = FindFunction(name);
  if (!def || !def->kernel) ThrowAt(origin, fmt::format("unknown function '{}'", name));
  return def->kernel(Call{name, args, n, type, origin});
}

}  // namespace lancelet
