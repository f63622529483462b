#include "expr/temporal.h"

#include <chrono>

#include <fmt/format.h>

namespace lancelet {

namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Reads exactly `n` digits at text[*i] into *out.
bool ReadDigits(std::string_view text, size_t* i, size_t n, int64_t* out) {
  if (*i + n > text.size()) return false;
  int64_t v = 0;
  for (size_t k = 0; k < n; ++k) {
    char c = text[*i + k];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *i += n;
  *out = v;
  return true;
}

bool ReadChar(std::string_view text, size_t* i, char c) {
  if (*i < text.size() && text[*i] == c) {
    ++*i;
    return true;
  }
  return false;
}

std::optional<int64_t> ReadDate(std::string_view text, size_t* i) {
  int64_t y, m, d;
  if (!ReadDigits(text, i, 4, &y) || !ReadChar(text, i, '-') || !ReadDigits(text, i, 2, &m) ||
      !ReadChar(text, i, '-') || !ReadDigits(text, i, 2, &d))
    return std::nullopt;
  std::chrono::year_month_day ymd{std::chrono::year(int(y)), std::chrono::month(unsigned(m)),
                                  std::chrono::day(unsigned(d))};
  if (!ymd.ok()) return std::nullopt;
  return std::chrono::sys_days(ymd).time_since_epoch().count();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<int64_t> ParseDate(std::string_view text) {
  text = Trim(text);
  size_t i = 0;
  auto days = ReadDate(text, &i);
  if (!days || i != text.size()) return std::nullopt;
  return days;
}

std::optional<ParsedTimestamp> ParseTimestamp(std::string_view text) {
  text = Trim(text);
  size_t i = 0;
  auto days = ReadDate(text, &i);
  if (!days) return std::nullopt;
  int64_t hh = 0, mm = 0, ss = 0, fraction = 0;
  int fraction_digits = 0;
  if (i < text.size() && (text[i] == ' ' || text[i] == 'T' || text[i] == 't')) {
    ++i;
    if (!ReadDigits(text, &i, 2, &hh) || !ReadChar(text, &i, ':') || !ReadDigits(text, &i, 2, &mm))
      return std::nullopt;
    if (ReadChar(text, &i, ':')) {
      if (!ReadDigits(text, &i, 2, &ss)) return std::nullopt;
      if (ReadChar(text, &i, '.')) {
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
          if (fraction_digits == 9) return std::nullopt;
          fraction = fraction * 10 + (text[i++] - '0');
          ++fraction_digits;
        }
        if (fraction_digits == 0) return std::nullopt;
      }
    }
    if (hh > 23 || mm > 59 || ss > 60) return std::nullopt;
  }
  int64_t offset_seconds = 0;
  if (i < text.size()) {
    if (text[i] == 'Z' || text[i] == 'z') {
      ++i;
    } else if (text[i] == '+' || text[i] == '-') {
      int sign = text[i++] == '-' ? -1 : 1;
      int64_t oh, om = 0;
      if (!ReadDigits(text, &i, 2, &oh)) return std::nullopt;
      if (ReadChar(text, &i, ':') || (i < text.size())) {
        if (!ReadDigits(text, &i, 2, &om)) return std::nullopt;
      }
      offset_seconds = sign * (oh * 3600 + om * 60);
    }
  }
  if (i != text.size()) return std::nullopt;
  ParsedTimestamp out;
  out.unit = fraction_digits > 6 ? TimeUnit::kNano : TimeUnit::kMicro;
  int target_digits = fraction_digits > 6 ? 9 : 6;
  for (int k = fraction_digits; k < target_digits; ++k) fraction *= 10;
  int64_t seconds = *days * 86400 + hh * 3600 + mm * 60 + ss - offset_seconds;
  int64_t per_second = UnitsPerSecond(out.unit);
  if (__builtin_mul_overflow(seconds, per_second, &out.value) ||
      __builtin_add_overflow(out.value, fraction, &out.value))
    return std::nullopt;
  return out;
}

int64_t UnitsPerSecond(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return 1;
    case TimeUnit::kMilli: return 1000;
    case TimeUnit::kMicro: return 1000000;
    case TimeUnit::kNano: return 1000000000;
  }
  return 1;
}

const char* TimeUnitSuffix(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return "s";
    case TimeUnit::kMilli: return "ms";
    case TimeUnit::kMicro: return "us";
    case TimeUnit::kNano: return "ns";
  }
  return "?";
}

std::optional<int64_t> ConvertTimeUnit(int64_t value, TimeUnit from, TimeUnit to) {
  int64_t f = UnitsPerSecond(from), t = UnitsPerSecond(to);
  if (f == t) return value;
  if (t > f) {
    int64_t out;
    if (__builtin_mul_overflow(value, t / f, &out)) return std::nullopt;
    return out;
  }
  return FloorDiv(value, f / t);
}

std::optional<int64_t> TemporalToUnit(int64_t value, const DataType& type, TimeUnit unit) {
  switch (type.id()) {
    case TypeId::kDate32: {
      int64_t seconds = value * 86400;  // |date32| * 86400 fits int64
      return ConvertTimeUnit(seconds, TimeUnit::kSecond, unit);
    }
    case TypeId::kDate64: return ConvertTimeUnit(value, TimeUnit::kMilli, unit);
    default: return ConvertTimeUnit(value, type.unit(), unit);
  }
}

TimeUnit CommonTimeUnit(const DataType& a, const DataType& b) {
  auto unit_of = [](const DataType& t) {
    if (t.id() == TypeId::kDate32) return TimeUnit::kSecond;
    if (t.id() == TypeId::kDate64) return TimeUnit::kMilli;
    return t.unit();
  };
  TimeUnit ua = unit_of(a), ub = unit_of(b);
  return UnitsPerSecond(ua) >= UnitsPerSecond(ub) ? ua : ub;
}

std::string FormatDate(int64_t days) {
  std::chrono::year_month_day ymd{std::chrono::sys_days(std::chrono::days(days))};
  return fmt::format("{:04}-{:02}-{:02}", int(ymd.year()), unsigned(ymd.month()), unsigned(ymd.day()));
}

std::string FormatTimestamp(int64_t value, TimeUnit unit, char separator) {
  int64_t per_second = UnitsPerSecond(unit);
  int64_t seconds = FloorDiv(value, per_second);
  int64_t fraction = value - seconds * per_second;
  int64_t days = FloorDiv(seconds, 86400);
  int64_t in_day = seconds - days * 86400;
  std::string out = fmt::format("{}{}{:02}:{:02}:{:02}", FormatDate(days), separator, in_day / 3600,
                                in_day / 60 % 60, in_day % 60);
  switch (unit) {
    case TimeUnit::kSecond: break;
    case TimeUnit::kMilli: out += fmt::format(".{:03}", fraction); break;
    case TimeUnit::kMicro: out += fmt::format(".{:06}", fraction); break;
    case TimeUnit::kNano: out += fmt::format(".{:09}", fraction); break;
  }
  return out;
}

const std::vector<IntervalUnit>& IntervalUnits() {
  static const std::vector<IntervalUnit> kUnits = {
      {"microsecond", 1, 0},       {"millisecond", 1000, 0},          {"second", 1'000'000, 0},
      {"minute", 60'000'000, 0},   {"hour", 3'600'000'000, 0},        {"day", kMicrosPerDay, 0},
      {"week", 7 * kMicrosPerDay, 0}, {"month", 0, 1},                 {"quarter", 0, 3},
      {"year", 0, 12}};
  return kUnits;
}

const IntervalUnit* FindIntervalUnit(std::string_view name) {
  for (const auto& unit : IntervalUnits())
    if (name == unit.name) return &unit;
  return nullptr;
}

}  // namespace lancelet
