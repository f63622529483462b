#include "text/temporal_text.h"

#include <fmt/format.h>

namespace lancelet::text {
namespace {

// Civil-calendar <-> day-count conversion, counting in 400-year eras of 146097 days so
// that negative years work with plain integer arithmetic.
struct CivilDate {
  int64_t year;
  int month;  // 1..12
  int day;    // 1..31
};

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

CivilDate CivilFromDays(int64_t days) {
  // Shift the epoch to 0000-03-01 so leap days fall at the end of the year.
  const int64_t z = days + 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t day_of_era = z - era * 146097;                                        // [0, 146096]
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;  // [0, 399]
  const int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t shifted_month = (5 * day_of_year + 2) / 153;  // 0 = March
  const int day = static_cast<int>(day_of_year - (153 * shifted_month + 2) / 5 + 1);
  const int month = static_cast<int>(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
  const int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  return {year, month, day};
}

int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = FloorDiv(year, 400);
  const int64_t year_of_era = year - era * 400;
  const int64_t shifted_month = month > 2 ? month - 3 : month + 9;
  const int64_t day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

bool IsLeap(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeap(year) ? 29 : kDays[month - 1];
}

std::string FormatYear(int64_t year) {
  if (year >= 0 && year <= 9999) return fmt::format("{:04}", year);
  return fmt::format("{}{:04}", year < 0 ? '-' : '+', year < 0 ? -year : year);
}

std::string FormatCivil(const CivilDate& d) {
  return fmt::format("{}-{:02}-{:02}", FormatYear(d.year), d.month, d.day);
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

int FractionDigits(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return 0;
    case TimeUnit::kMilli: return 3;
    case TimeUnit::kMicro: return 6;
    case TimeUnit::kNano: return 9;
  }
  return 0;
}

// Reads exactly `count` digits at text[pos...]; advances pos.
std::optional<int> Digits(std::string_view text, size_t& pos, int count) {
  if (pos + count > text.size()) return std::nullopt;
  int v = 0;
  for (int i = 0; i < count; ++i) {
    char c = text[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  pos += count;
  return v;
}

bool Expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

// The year as FormatYear writes it: four digits, or a sign and four to six digits.
std::optional<int64_t> ParseYear(std::string_view text, size_t& pos) {
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int64_t sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int64_t year = 0;
    int count = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && count < 6) {
      year = year * 10 + (text[pos++] - '0');
      ++count;
    }
    if (count < 4) return std::nullopt;
    return sign * year;
  }
  auto year = Digits(text, pos, 4);
  if (!year) return std::nullopt;
  return *year;
}

// "YYYY-MM-DD" at the start of text; returns days since epoch.
std::optional<int64_t> ParseDatePrefix(std::string_view text, size_t& pos) {
  auto year = ParseYear(text, pos);
  if (!year || !Expect(text, pos, '-')) return std::nullopt;
  auto month = Digits(text, pos, 2);
  if (!month || *month < 1 || *month > 12 || !Expect(text, pos, '-')) return std::nullopt;
  auto day = Digits(text, pos, 2);
  if (!day || *day < 1 || *day > DaysInMonth(*year, *month)) return std::nullopt;
  return DaysFromCivil(*year, *month, *day);
}

}  // namespace

std::string FormatDate(int64_t days) { return FormatCivil(CivilFromDays(days)); }

namespace {

// HH:MM[:SS[.fraction]] at `pos`: the second of the day and the fraction in `unit`.
// False when malformed or when the fraction is finer than `unit` (nonzero digits past it).
bool ParseClock(std::string_view text, size_t& pos, TimeUnit unit, int64_t& second_of_day, int64_t& fraction) {
  auto hour = Digits(text, pos, 2);
  if (!hour || *hour > 23 || !Expect(text, pos, ':')) return false;
  auto minute = Digits(text, pos, 2);
  if (!minute || *minute > 59) return false;
  int second = 0;
  fraction = 0;
  if (pos < text.size() && text[pos] == ':') {
    ++pos;
    auto s = Digits(text, pos, 2);
    if (!s || *s > 59) return false;
    second = *s;
    if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
      ++pos;
      const int keep = FractionDigits(unit);
      int seen = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        if (seen < keep) {
          fraction = fraction * 10 + (text[pos] - '0');
        } else if (text[pos] != '0') {
          return false;
        }
        ++seen;
        ++pos;
      }
      if (seen == 0) return false;
      for (int i = seen; i < keep; ++i) fraction *= 10;
    }
  }
  second_of_day = *hour * 3600 + *minute * 60 + second;
  return true;
}

}  // namespace

std::string FormatTimeOfDay(int64_t value, TimeUnit unit) {
  const int64_t per_second = UnitsPerSecond(unit);
  const bool negative = value < 0;
  // The magnitude, without negating INT64_MIN.
  const uint64_t magnitude = negative ? uint64_t(0) - uint64_t(value) : uint64_t(value);
  const uint64_t seconds = magnitude / uint64_t(per_second), fraction = magnitude % uint64_t(per_second);
  std::string out = fmt::format("{}{:02}:{:02}:{:02}", negative ? "-" : "", seconds / 3600, seconds / 60 % 60,
                                seconds % 60);
  if (int digits = FractionDigits(unit); digits > 0) out += fmt::format(".{:0{}}", fraction, digits);
  return out;
}

std::optional<int64_t> ParseTimeOfDay(std::string_view text, TimeUnit unit) {
  size_t pos = 0;
  int64_t second_of_day = 0, fraction = 0;
  if (!ParseClock(text, pos, unit, second_of_day, fraction) || pos != text.size()) return std::nullopt;
  return second_of_day * UnitsPerSecond(unit) + fraction;
}

std::string FormatDate64(int64_t millis) { return FormatTimestamp(millis, TimeUnit::kMilli, false); }

std::string FormatTimestamp(int64_t value, TimeUnit unit, bool utc) {
  const int64_t per_second = UnitsPerSecond(unit);
  // Floor division keeps the fraction non-negative for instants before 1970.
  // (Written without seconds * per_second, which overflows near INT64_MIN.)
  const int64_t remainder = value % per_second;
  const int64_t seconds = value / per_second - (remainder < 0 ? 1 : 0);
  const int64_t fraction = remainder < 0 ? remainder + per_second : remainder;
  const int64_t days = FloorDiv(seconds, 86400);
  const int64_t second_of_day = seconds - days * 86400;
  std::string out = fmt::format("{}T{:02}:{:02}:{:02}", FormatCivil(CivilFromDays(days)),
                                second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60);
  if (int digits = FractionDigits(unit); digits > 0) out += fmt::format(".{:0{}}", fraction, digits);
  if (utc) out += 'Z';
  return out;
}

std::optional<int64_t> ParseDate(std::string_view text) {
  size_t pos = 0;
  auto days = ParseDatePrefix(text, pos);
  if (!days || pos != text.size()) return std::nullopt;
  return days;
}

std::optional<ParsedDateTime> ParseDateTime(std::string_view text, TimeUnit unit) {
  size_t pos = 0;
  auto days = ParseDatePrefix(text, pos);
  if (!days) return std::nullopt;
  int64_t second_of_day = 0;
  int64_t fraction = 0;  // in `unit`
  ParsedDateTime parsed;
  if (pos < text.size()) {
    if (text[pos] != 'T' && text[pos] != ' ') return std::nullopt;
    ++pos;
    if (!ParseClock(text, pos, unit, second_of_day, fraction)) return std::nullopt;
    if (pos < text.size()) {
      if (text[pos] == 'Z' || text[pos] == 'z') {
        ++pos;
      } else if (text[pos] == '+' || text[pos] == '-') {
        const int sign = text[pos] == '-' ? -1 : 1;
        ++pos;
        auto oh = Digits(text, pos, 2);
        if (!oh || *oh > 23) return std::nullopt;
        if (pos < text.size() && text[pos] == ':') ++pos;
        auto om = Digits(text, pos, 2);
        if (!om || *om > 59) return std::nullopt;
        // Local time = UTC + offset.
        second_of_day -= sign * (*oh * 3600 + *om * 60);
      } else {
        return std::nullopt;
      }
      parsed.has_offset = true;
    }
    if (pos != text.size()) return std::nullopt;
  }
  const int64_t per_second = UnitsPerSecond(unit);
  int64_t seconds, value;
  if (__builtin_mul_overflow(*days, int64_t{86400}, &seconds) ||
      __builtin_add_overflow(seconds, second_of_day, &seconds) ||
      __builtin_mul_overflow(seconds, per_second, &value) ||
      __builtin_add_overflow(value, fraction, &value)) {
    return std::nullopt;
  }
  parsed.value = value;
  return parsed;
}

bool LooksLikeDate(std::string_view text) { return ParseDate(text).has_value(); }

bool LooksLikeDateTime(std::string_view text) {
  return text.size() > 10 && ParseDateTime(text, TimeUnit::kMicro).has_value();
}

}  // namespace lancelet::text
