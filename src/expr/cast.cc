#include "expr/cast.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "array/ascii_case.h"
#include "lancelet/decimal.h"
#include "expr/numeric.h"
#include "expr/temporal.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"

namespace lancelet {

namespace {

bool IsBytes(const DataType& t) { return t.is_variable_binary() || t.id() == TypeId::kFixedSizeBinary; }
bool IsListKind(const DataType& t) { return t.is_list() || t.id() == TypeId::kFixedSizeList; }
bool IsDate(const DataType& t) { return t.id() == TypeId::kDate32 || t.id() == TypeId::kDate64; }

[[noreturn]] void CannotCast(const Scalar& v, const TypePtr& to, const char* why = nullptr) {
  if (why) ThrowInvalid("cannot cast {} to {} ({})", DescribeValue(v), to->ToString(), why);
  ThrowInvalid("cannot cast {} to {}", DescribeValue(v), to->ToString());
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string FormatDouble(double d, bool as_float32) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return as_float32 ? fmt::format("{}", float(d)) : fmt::format("{}", d);
}

// A float as CAST(x AS VARCHAR) spells it, as DuckDB: the shortest digits that read back
// as the same value, in positional notation for decimal exponents -5 < e < 16 (with ".0"
// when there is no fraction: 848.0), otherwise as 1.5e-07 or 1e+16; nan, inf, -inf.
std::string CastFloatText(double d, bool as_float32) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = as_float32 ? std::to_chars(buf, buf + sizeof buf, float(d), std::chars_format::scientific)
                            : std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);  // [-]d[.ddd]e[+-]XX
  const size_t e_at = sci.find('e');
  const int exponent = std::stoi(sci.substr(e_at + 1));
  const bool negative = sci[0] == '-';
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e_at; ++i)
    if (sci[i] != '.') digits += sci[i];
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    return out + fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  if (exponent < 0) return out + "0." + std::string(size_t(-exponent - 1), '0') + digits;
  const size_t whole = size_t(exponent) + 1;
  if (digits.size() <= whole) return out + digits + std::string(whole - digits.size(), '0') + ".0";
  return out + digits.substr(0, whole) + "." + digits.substr(whole);
}

// A timestamp as CAST(x AS VARCHAR) spells it, as DuckDB: a space between date and time,
// the fraction of a second without trailing zeros (none when whole), +00 when zoned.
std::string CastTimestampText(const Scalar& v) {
  std::string out = FormatTimestamp(std::get<int64_t>(v.value), v.type->unit(), ' ');
  if (out.find('.') != std::string::npos) {
    out.erase(out.find_last_not_of('0') + 1);
    if (out.back() == '.') out.pop_back();
  }
  return v.type->timezone().empty() ? out : out + "+00";
}

// The integer in the range of integer type `to`, as that type's payload.
template <typename V>
Scalar IntegerWithin(V v, const Scalar& original, const TypePtr& to) {
  int64_t min = 0;
  uint64_t max = 0;
  VisitStorage(to->id(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      min = int64_t(std::numeric_limits<T>::min());
      max = uint64_t(std::numeric_limits<T>::max());
    }
  });
  if (Cmp3(v, min) < 0 || Cmp3(v, max) > 0) CannotCast(original, to, "out of range");
  if (to->is_signed_integer()) return {to, int64_t(v)};
  return {to, uint64_t(v)};
}

Scalar ToInteger(const Scalar& v, const TypePtr& to) {
  if (auto* b = std::get_if<bool>(&v.value)) return IntegerWithin(int64_t(*b), v, to);
  if (auto* i = std::get_if<int64_t>(&v.value)) return IntegerWithin(*i, v, to);
  if (auto* u = std::get_if<uint64_t>(&v.value)) return IntegerWithin(*u, v, to);
  if (auto* d = std::get_if<double>(&v.value)) {
    if (std::isnan(*d)) CannotCast(v, to);
    return IntegerWithin(std::nearbyint(*d), v, to);  // half to even, as DuckDB / PostgreSQL for a DOUBLE
  }
  if (auto* s = std::get_if<std::string>(&v.value)) {
    std::string_view t = Trim(*s);
    if (!t.empty() && t[0] == '+') t.remove_prefix(1);
    if (!t.empty() && t[0] == '-') {
      int64_t x;
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
      if (ec == std::errc::result_out_of_range) CannotCast(v, to, "out of range");
      if (ec != std::errc() || end != t.data() + t.size()) CannotCast(v, to);
      return IntegerWithin(x, v, to);
    }
    uint64_t x;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
    if (ec == std::errc::result_out_of_range) CannotCast(v, to, "out of range");
    if (ec != std::errc() || end != t.data() + t.size() || t.empty()) CannotCast(v, to);
    return IntegerWithin(x, v, to);
  }
  CannotCast(v, to);
}

Scalar ToFloat(const Scalar& v, const TypePtr& to) {
  double d;
  if (auto* s = std::get_if<std::string>(&v.value)) {
    std::string_view t = Trim(*s);
    bool negative = !t.empty() && t[0] == '-';
    std::string_view word = (negative || (!t.empty() && t[0] == '+')) ? t.substr(1) : t;
    if (EqualsIgnoringAsciiCase(word, "nan")) {
      d = std::numeric_limits<double>::quiet_NaN();
    } else if (EqualsIgnoringAsciiCase(word, "inf") || EqualsIgnoringAsciiCase(word, "infinity")) {
      d = negative ? -INFINITY : INFINITY;
    } else {
      if (!t.empty() && t[0] == '+') t.remove_prefix(1);
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
      if (ec != std::errc() || end != t.data() + t.size() || t.empty()) CannotCast(v, to);
    }
  } else if (auto* b = std::get_if<bool>(&v.value)) {
    d = *b ? 1.0 : 0.0;
  } else if (std::holds_alternative<int64_t>(v.value) || std::holds_alternative<uint64_t>(v.value) ||
             std::holds_alternative<double>(v.value)) {
    d = v.as_double();
  } else {
    CannotCast(v, to);
  }
  if (to->id() != TypeId::kFloat64 && std::isfinite(d) && !std::isfinite(float(d))) CannotCast(v, to, "out of range");
  if (to->id() == TypeId::kFloat32) d = double(float(d));
  return {to, d};
}

Scalar ToBool(const Scalar& v, const TypePtr& to) {
  if (auto* b = std::get_if<bool>(&v.value)) return {to, *b};
  if (auto* i = std::get_if<int64_t>(&v.value)) return {to, *i != 0};
  if (auto* u = std::get_if<uint64_t>(&v.value)) return {to, *u != 0};
  if (auto* d = std::get_if<double>(&v.value)) return {to, *d != 0};
  if (auto* s = std::get_if<std::string>(&v.value)) {
    std::string_view t = Trim(*s);
    for (const char* yes : {"true", "t", "yes", "y", "1"})
      if (EqualsIgnoringAsciiCase(t, yes)) return {to, true};
    for (const char* no : {"false", "f", "no", "n", "0"})
      if (EqualsIgnoringAsciiCase(t, no)) return {to, false};
  }
  CannotCast(v, to);
}

std::string ToText(const Scalar& v) {
  const DataType& t = *v.type;
  if (auto* b = std::get_if<bool>(&v.value)) return *b ? "true" : "false";
  if (t.id() == TypeId::kDate32) return FormatDate(std::get<int64_t>(v.value));
  if (t.id() == TypeId::kDate64) return FormatTimestamp(std::get<int64_t>(v.value), TimeUnit::kMilli, 'T');
  if (t.id() == TypeId::kTimestamp)
    return FormatTimestamp(std::get<int64_t>(v.value), t.unit(), 'T') + (t.timezone().empty() ? "" : "Z");
  if (t.is_decimal()) return FormatDecimal(v.as_string(), t);
  if (t.id() == TypeId::kTime32 || t.id() == TypeId::kTime64) {
    // The clock part of the same count read as an instant on 1970-01-01.
    std::string instant = FormatTimestamp(std::get<int64_t>(v.value), t.unit(), 'T');
    int64_t ticks = std::get<int64_t>(v.value);
    if (ticks >= 0 && ticks < 86400 * UnitsPerSecond(t.unit())) return instant.substr(instant.find('T') + 1);
  }
  if (auto* i = std::get_if<int64_t>(&v.value)) return std::to_string(*i);
  if (auto* u = std::get_if<uint64_t>(&v.value)) return std::to_string(*u);
  if (auto* d = std::get_if<double>(&v.value)) return FormatDouble(*d, t.id() != TypeId::kFloat64);
  if (auto* s = std::get_if<std::string>(&v.value)) return *s;
  if (auto* l = std::get_if<std::vector<Scalar>>(&v.value)) {
    std::string out = "[";
    for (size_t i = 0; i < l->size(); ++i) {
      if (i) out += ", ";
      const Scalar& item = (*l)[i];
      if (item.is_null()) out += "null";
      else if (item.type->is_string()) out += "\"" + item.as_string() + "\"";
      else out += ToText(item);
    }
    return out + "]";
  }
  return "?";
}

Scalar ToTemporal(const Scalar& v, const TypePtr& to) {
  const DataType& from = *v.type;
  TimeUnit unit = to->id() == TypeId::kTimestamp ? to->unit()
                  : to->id() == TypeId::kDate64  ? TimeUnit::kMilli
                                                 : TimeUnit::kSecond;
  std::optional<int64_t> units;  // in `unit`
  if (from.is_temporal()) {
    units = TemporalToUnit(std::get<int64_t>(v.value), from, unit);
  } else if (from.is_integer() && to->id() == TypeId::kTimestamp) {
    units = v.as_int();
  } else if (auto* s = std::get_if<std::string>(&v.value)) {
    if (auto days = ParseDate(*s)) {
      units = TemporalToUnit(*days, *DataType::Date32(), unit);
    } else if (auto ts = ParseTimestamp(*s)) {
      units = ConvertTimeUnit(ts->value, ts->unit, unit);
    } else {
      CannotCast(v, to);
    }
  } else {
    CannotCast(v, to);
  }
  if (!units) CannotCast(v, to, "out of range");
  if (to->id() == TypeId::kDate32) {
    int64_t days = *units / 86400 - (*units % 86400 < 0 ? 1 : 0);
    if (days < INT32_MIN || days > INT32_MAX) CannotCast(v, to, "out of range");
    return {to, days};
  }
  return {to, *units};
}

Scalar ToList(const Scalar& v, const TypePtr& to) {
  if (!v.type || !IsListKind(*v.type)) CannotCast(v, to);
  const auto& items = v.as_list();
  if (to->id() == TypeId::kFixedSizeList && int64_t(items.size()) != to->fixed_size())
    ThrowInvalid("cannot cast a list of {} items to {}", items.size(), to->ToString());
  std::vector<Scalar> out;
  out.reserve(items.size());
  for (const auto& item : items) out.push_back(CastScalar(item, to->child(0)->type));
  return {to, std::move(out)};
}

// Numbers to numbers over whole buffers.
template <typename D>
ArrayPtr CastNumbers(const ArrayData& a, const TypePtr& to) {
  Widened<D> src(a);
  const D* in = src.data();
  int64_t n = a.length;
  BufferPtr values;
  VisitStorage(to->id(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half>) {
      values = Buffer::Allocate(size_t(n) * 2);
      for (int64_t i = 0; i < n; ++i) values->mutable_as<uint16_t>()[i] = FloatToHalf(float(in[i]));
    } else {
      values = Buffer::Allocate(size_t(n) * sizeof(T));
      T* out = values->mutable_as<T>();
      bool ok = true;
      for (int64_t i = 0; i < n; ++i) {
        D x = in[i];
        if constexpr (std::is_floating_point_v<T>) {
          out[i] = T(x);
          if constexpr (std::is_same_v<T, float>) ok &= !(std::isfinite(double(x)) && std::isinf(out[i]));
        } else {
          bool fits;
          if constexpr (std::is_floating_point_v<D>) {
            x = std::nearbyint(x);  // half to even, like ToInteger
            fits = !std::isnan(x) && Cmp3(x, int64_t(std::numeric_limits<T>::min())) >= 0 &&
                   Cmp3(x, uint64_t(std::numeric_limits<T>::max())) <= 0;
          } else {
            fits = Cmp3(x, int64_t(std::numeric_limits<T>::min())) >= 0 &&
                   Cmp3(x, uint64_t(std::numeric_limits<T>::max())) <= 0;
          }
          out[i] = fits ? T(x) : T{};
          ok &= fits;
        }
      }
      if (!ok) {
        for (int64_t i = 0; i < n; ++i)
          if (a.IsValid(i)) CastScalar(GetScalar(a, i), to);  // throws on the first bad row
      }
    }
  });
  BufferPtr validity = a.validity() ? Buffer::Copy(a.validity(), (size_t(n) + 7) / 8) : nullptr;
  auto out = std::make_shared<ArrayData>();
  out->type = to;
  out->length = n;
  out->null_count = a.null_count;
  out->buffers = {a.null_count ? validity : nullptr, values};
  return out;
}

}  // namespace

std::string DescribeValue(const Scalar& v) {
  if (v.is_null()) return "NULL";
  if (std::holds_alternative<std::string>(v.value)) {
    if (v.type && v.type->is_string()) return "'" + v.as_string() + "'";
    std::string hex = "X'";
    for (unsigned char c : v.as_string()) hex += fmt::format("{:02x}", c);
    return hex + "'";
  }
  return ToText(v);
}

bool CanCast(const DataType& from, const DataType& to) {
  if (from.Equals(to)) return true;
  bool from_scalar = from.is_numeric() || from.id() == TypeId::kBool;
  bool to_scalar = to.is_numeric() || to.id() == TypeId::kBool;
  if (from_scalar && to_scalar) return true;
  if (to.is_string()) return !from.is_nested() || IsListKind(from);
  if (from.is_string() || from.is_variable_binary()) {
    if (to_scalar || to.is_temporal() || IsBytes(to)) return true;
  }
  if (from.is_temporal() && to.is_temporal()) return true;
  if (from.is_integer() && to.id() == TypeId::kTimestamp) return true;
  if ((from.is_numeric() || from.is_decimal() || from.is_string()) && to.is_decimal()) return true;
  if (from.is_integer() && to.is_time_count()) return true;
  if (from.is_string() && (to.id() == TypeId::kTime32 || to.id() == TypeId::kTime64)) return true;
  if (IsListKind(from) && IsListKind(to)) return CanCast(*from.child(0)->type, *to.child(0)->type);
  return false;
}

Scalar CastScalar(const Scalar& v, const TypePtr& to) {
  if (v.is_null()) return Scalar::Null(to);
  if (v.type && v.type->Equals(*to)) return {to, v.value};
  switch (to->id()) {
    case TypeId::kBool: return ToBool(v, to);
    case TypeId::kInt8: case TypeId::kInt16: case TypeId::kInt32: case TypeId::kInt64:
    case TypeId::kUInt8: case TypeId::kUInt16: case TypeId::kUInt32: case TypeId::kUInt64:
      if (v.type && v.type->is_temporal()) CannotCast(v, to);
      return ToInteger(v, to);
    case TypeId::kFloat16: case TypeId::kFloat32: case TypeId::kFloat64: return ToFloat(v, to);
    case TypeId::kUtf8: case TypeId::kLargeUtf8:
      if (auto* d = std::get_if<double>(&v.value)) return {to, CastFloatText(*d, v.type && v.type->id() != TypeId::kFloat64)};
      if (v.type && v.type->id() == TypeId::kTimestamp) return {to, CastTimestampText(v)};
      return {to, ToText(v)};
    case TypeId::kBinary: case TypeId::kLargeBinary:
      if (!std::holds_alternative<std::string>(v.value)) CannotCast(v, to);
      return {to, v.as_string()};
    case TypeId::kFixedSizeBinary:
      if (!std::holds_alternative<std::string>(v.value)) CannotCast(v, to);
      if (int64_t(v.as_string().size()) != to->fixed_size()) CannotCast(v, to, "wrong length");
      return {to, v.as_string()};
    case TypeId::kDate32: case TypeId::kDate64: case TypeId::kTimestamp: return ToTemporal(v, to);
    case TypeId::kList: case TypeId::kLargeList: case TypeId::kFixedSizeList: case TypeId::kMap:
      return ToList(v, to);
    case TypeId::kDecimal128: case TypeId::kDecimal256: {
      // From text or an integer; a decimal of another scale goes through its text.
      std::string text;
      if (v.type && (v.type->is_numeric() || v.type->is_decimal() || v.type->is_string())) text = ToText(v);
      else CannotCast(v, to);
      auto bytes = ParseDecimal(text, *to);
      if (!bytes) CannotCast(v, to, "not a number of that precision");
      return {to, std::move(*bytes)};
    }
    case TypeId::kDuration: case TypeId::kTime32: case TypeId::kTime64:
      // An integer count of the unit.
      if (v.type && v.type->is_integer()) return {to, v.as_int()};
      if (to->id() != TypeId::kDuration && v.type && v.type->is_string()) {
        // "HH:MM[:SS[.fraction]]": the clock of an instant on 1970-01-01, in the type's unit.
        auto clock = ParseTimestamp("1970-01-01T" + std::string(Trim(v.as_string())));
        std::optional<int64_t> ticks = clock ? ConvertTimeUnit(clock->value, clock->unit, to->unit()) : std::nullopt;
        if (!ticks || *ticks < 0 || *ticks >= 86400 * UnitsPerSecond(to->unit())) CannotCast(v, to);
        return {to, *ticks};
      }
      break;
    case TypeId::kStruct: case TypeId::kNull: break;
  }
  CannotCast(v, to);
}

ArrayPtr CastArray(const ArrayData& a, const TypePtr& to) {
  if (a.type->Equals(*to)) {
    auto out = std::make_shared<ArrayData>(a);
    out->type = to;
    return out;
  }
  const DataType& from = *a.type;
  bool from_number = from.is_numeric() || from.id() == TypeId::kBool;
  if (from_number && to->is_numeric()) {
    return VisitDomain(from, [&](auto tag) { return CastNumbers<decltype(tag)>(a, to); });
  }
  if (from.is_temporal() && to->id() == TypeId::kTimestamp && !IsDate(*to)) {
    int64_t n = a.length;
    BufferPtr values = Buffer::Allocate(size_t(n) * 8);
    int64_t* out = values->mutable_as<int64_t>();
    Widened<int64_t> in(a);
    for (int64_t i = 0; i < n; ++i) {
      std::optional<int64_t> v = TemporalToUnit(in.data()[i], from, to->unit());
      if (!v && a.IsValid(i)) CastScalar(GetScalar(a, i), to);
      out[i] = v.value_or(0);
    }
    auto result = std::make_shared<ArrayData>();
    result->type = to;
    result->length = n;
    result->null_count = a.null_count;
    result->buffers = {a.null_count ? Buffer::Copy(a.validity(), (size_t(n) + 7) / 8) : nullptr, values};
    return result;
  }
  auto builder = ArrayBuilder::Make(to);
  for (int64_t i = 0; i < a.length; ++i) builder->AppendScalar(CastScalar(GetScalar(a, i), to));
  return builder->Finish();
}

namespace {

[[noreturn]] void CannotAssign(const Scalar& v, const TypePtr& to, const char* why = nullptr) {
  if (why) ThrowInvalid("cannot assign {} to {} ({})", DescribeValue(v), to->ToString(), why);
  ThrowInvalid("cannot assign {} ({}) to {}", DescribeValue(v), v.type->ToString(), to->ToString());
}

}  // namespace

bool CanAssign(const DataType& from, const DataType& to) {
  if (from.Equals(to)) return true;
  if (to.is_string()) return CanCast(from, to);  // printing loses nothing
  if (from.is_numeric() && to.is_numeric()) return true;
  if ((from.is_string() || from.is_temporal()) && to.is_temporal()) return true;
  if ((from.is_string() || from.is_variable_binary()) && IsBytes(to)) return true;
  // Decimals from their text or a number (digits past the scale round, as CAST does);
  // times of day from "HH:MM:SS[.fraction]" or a count; durations from a count.
  if ((from.is_string() || from.is_numeric() || from.is_decimal()) && to.is_decimal()) return true;
  if ((from.is_string() || from.is_integer()) && (to.id() == TypeId::kTime32 || to.id() == TypeId::kTime64))
    return true;
  if (from.is_integer() && to.id() == TypeId::kDuration) return true;
  if (IsListKind(from) && IsListKind(to)) return CanAssign(*from.child(0)->type, *to.child(0)->type);
  return false;
}

Scalar AssignScalar(const Scalar& v, const TypePtr& to) {
  if (v.is_null()) return Scalar::Null(to);
  const DataType& from = *v.type;
  if (from.Equals(*to)) return {to, v.value};
  if (!CanAssign(from, *to)) CannotAssign(v, to);
  if (IsListKind(from)) {
    const auto& items = v.as_list();
    if (to->id() == TypeId::kFixedSizeList && int64_t(items.size()) != to->fixed_size())
      ThrowInvalid("cannot assign a list of {} items to {}", items.size(), to->ToString());
    std::vector<Scalar> out;
    for (const auto& item : items) out.push_back(AssignScalar(item, to->child(0)->type));
    return {to, std::move(out)};
  }
  if (from.is_floating() && to->is_integer()) {
    const double d = v.as_double();
    if (!std::isfinite(d) || std::trunc(d) != d) CannotAssign(v, to, "not an integer");
  }
  Scalar out = CastScalar(v, to);
  // Between temporal types a cast floors (timestamp -> date, ns -> us): exact only when
  // casting back gives the value again.
  if (from.is_temporal() && to->is_temporal() && !CastScalar(out, v.type).Equals(v)) CannotAssign(v, to, "not exact");
  // A time of day from text: the unit must hold the fraction ('00:00:00.5' into time32<s> floors).
  if (from.is_string() && (to->id() == TypeId::kTime32 || to->id() == TypeId::kTime64)) {
    auto clock = ParseTimestamp("1970-01-01T" + std::string(Trim(v.as_string())));
    if (clock && ConvertTimeUnit(std::get<int64_t>(out.value), to->unit(), clock->unit) != clock->value)
      CannotAssign(v, to, "not exact");
  }
  return out;
}

ArrayPtr AssignArray(const ArrayData& a, const TypePtr& to) {
  const DataType& from = *a.type;
  // Integer range checks and float widths are CAST's; only float -> integer may round there.
  if (from.Equals(*to) || (from.is_numeric() && to->is_numeric() && !(from.is_floating() && to->is_integer())))
    return CastArray(a, to);
  if (!CanAssign(from, *to)) ThrowInvalid("cannot assign {} to {}", from.ToString(), to->ToString());
  auto builder = ArrayBuilder::Make(to);
  for (int64_t i = 0; i < a.length; ++i) builder->AppendScalar(AssignScalar(GetScalar(a, i), to));
  return builder->Finish();
}

}  // namespace lancelet
