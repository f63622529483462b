// Dates and timestamps as ISO-8601 text, in the proleptic Gregorian calendar, UTC.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lancelet/type.h"

namespace lancelet::text {

// "YYYY-MM-DD" for days since 1970-01-01 (years outside 0..9999 get a sign / more digits).
std::string FormatDate(int64_t days);
// Milliseconds since the epoch as "YYYY-MM-DDTHH:MM:SS.mmm".
std::string FormatDate64(int64_t millis);
// "YYYY-MM-DDTHH:MM:SS" plus 0/3/6/9 fraction digits for s/ms/us/ns, and "Z" if `utc`.
std::string FormatTimestamp(int64_t value, TimeUnit unit, bool utc);

// A time of day (time32 / time64) as "HH:MM:SS" plus 0/3/6/9 fraction digits for
// s/ms/us/ns. A value outside one day (Arrow does not forbid it) keeps its sign and counts
// hours past 23 rather than wrapping.
std::string FormatTimeOfDay(int64_t value, TimeUnit unit);
// Exactly "HH:MM[:SS[.fraction]]" in `unit`; nullopt when malformed or finer than `unit`.
std::optional<int64_t> ParseTimeOfDay(std::string_view text, TimeUnit unit);

// Days since the epoch from exactly "YYYY-MM-DD" (or "±YYYYYY-MM-DD", as FormatDate writes
// years outside 0..9999).
std::optional<int64_t> ParseDate(std::string_view text);

struct ParsedDateTime {
  int64_t value = 0;        // in the requested unit, UTC
  bool has_offset = false;  // the text ended in Z or ±HH:MM
};
// "YYYY-MM-DD", optionally followed by 'T' or ' ' and HH:MM[:SS[.fraction]] and an
// optional Z / ±HH:MM / ±HHMM offset. Nullopt when malformed, when the fraction is finer
// than `unit` (nonzero digits past it), or when the value overflows int64.
std::optional<ParsedDateTime> ParseDateTime(std::string_view text, TimeUnit unit);

// Whole-text checks used by schema inference.
bool LooksLikeDate(std::string_view text);
bool LooksLikeDateTime(std::string_view text);  // needs a time part

}  // namespace lancelet::text
