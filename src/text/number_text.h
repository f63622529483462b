// Shortest round-trip decimal text for floats at each width, and half-precision
// conversions (Arrow float16 values are IEEE binary16 bits held in a uint16).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lancelet::text {

double HalfToDouble(uint16_t bits);
// Rounds to the nearest binary16 value, ties to even; overflow gives infinity.
uint16_t DoubleToHalf(double value);

// Finite values only: the shortest decimal that reads back as the same value at that
// width, in std::to_chars' shortest style ("0.1", "1e+21", "-0").
std::string FormatFloat64(double value);
std::string FormatFloat32(float value);
std::string FormatFloat16(uint16_t bits);

// "NaN", "Infinity", "-Infinity" for non-finite values, else nullopt.
std::optional<std::string_view> NonFiniteName(double value);

// Parses a decimal / scientific number, or nan / inf / infinity in any case, with an
// optional sign. The whole text must be consumed.
std::optional<double> ParseFloat64(std::string_view text);
std::optional<float> ParseFloat32(std::string_view text);
// Integers: optional sign, digits only, range-checked against the full 64-bit type.
std::optional<int64_t> ParseInt64(std::string_view text);
std::optional<uint64_t> ParseUInt64(std::string_view text);

}  // namespace lancelet::text
