// Decimal128 / decimal256 values as text. A value is the little-endian two's-complement
// integer of 16 or 32 bytes that Arrow stores, read as integer * 10^-scale.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lancelet/type.h"

namespace lancelet {

// "-123.45" for the integer -12345 at scale 2; "0.05" at scale 2 for 5; a negative scale
// appends zeros ("12300" for 123 at scale -2). `bytes` holds `type.byte_width()` bytes.
std::string FormatDecimal(std::string_view bytes, const DataType& type);

// The stored bytes of `text` ("-1.5", "+3", ".25", "1e3", "12.") at the type's scale and
// precision. Digits past the scale round half away from zero; `rounded`, when given, says
// whether a nonzero digit was dropped. Nullopt when the text is not a number or the value
// needs more digits than the precision allows.
std::optional<std::string> ParseDecimal(std::string_view text, const DataType& type, bool* rounded = nullptr);

// Three-way order (-1, 0, 1) of two stored values of one decimal type (same width).
int CompareDecimals(std::string_view a, std::string_view b);

}  // namespace lancelet
