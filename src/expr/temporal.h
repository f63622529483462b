// Dates and timestamps as text and as counts of units since 1970-01-01 00:00:00 UTC.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lancelet/type.h"

namespace lancelet {

struct ParsedTimestamp {
  int64_t value;  // in `unit`
  TimeUnit unit;  // kMicro, or kNano when the text had more than 6 fraction digits
};

// "YYYY-MM-DD" -> days since the epoch; nullopt if malformed or not a real date.
std::optional<int64_t> ParseDate(std::string_view text);
// "YYYY-MM-DD[( |T)HH:MM[:SS[.fraction]]][Z|+HH:MM|-HH:MM]"; an offset converts to UTC.
std::optional<ParsedTimestamp> ParseTimestamp(std::string_view text);

int64_t UnitsPerSecond(TimeUnit unit);
const char* TimeUnitSuffix(TimeUnit unit);  // s, ms, us, ns

// Converts between units exactly: to a finer unit multiplies (nullopt on overflow), to a
// coarser unit floors.
std::optional<int64_t> ConvertTimeUnit(int64_t value, TimeUnit from, TimeUnit to);

// The value of a date32/date64/timestamp as a count of `unit` (nullopt on overflow).
std::optional<int64_t> TemporalToUnit(int64_t value, const DataType& type, TimeUnit unit);
// The finest unit either temporal type needs to be compared exactly.
TimeUnit CommonTimeUnit(const DataType& a, const DataType& b);

// "2024-01-02".
std::string FormatDate(int64_t days);
// "2024-01-02 03:04:05" plus the fraction digits the unit has (.123 for ms, ...), with
// `separator` between date and time.
std::string FormatTimestamp(int64_t value, TimeUnit unit, char separator = ' ');

constexpr int64_t kMicrosPerDay = 86'400'000'000;

// The units of an INTERVAL, by singular name: a fixed length in microseconds, or (month,
// quarter, year) a number of calendar months.
struct IntervalUnit {
  const char* name;
  int64_t micros;  // 0 for calendar units
  int64_t months;
};
const std::vector<IntervalUnit>& IntervalUnits();
const IntervalUnit* FindIntervalUnit(std::string_view name);

}  // namespace lancelet
