#include "text/number_text.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "array/ascii_case.h"

namespace lancelet::text {

double HalfToDouble(uint16_t bits) {
  const bool negative = bits & 0x8000;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  double magnitude;
  if (exponent == 0x1F) {
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);  // subnormal
  } else {
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  }
  return negative ? -magnitude : magnitude;
}

uint16_t DoubleToHalf(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value)) return sign | 0x7E00;
  double a = std::fabs(value);
  // 65520 is halfway between the largest finite half (65504) and 2^16; ties go to the
  // even neighbour, which is infinity.
  if (a >= 65520.0) return sign | 0x7C00;
  if (a < std::ldexp(1.0, -14)) {
    // Subnormal: units of 2^-24. A result of 1024 is the smallest normal, whose bits
    // are exactly 0x0400, so no special case is needed.
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  }
  int exp2;
  double fraction = std::frexp(a, &exp2);  // a = fraction * 2^exp2, fraction in [0.5, 1)
  const int exponent = exp2 - 1;           // a = (2 * fraction) * 2^exponent
  // Scaling by powers of two and subtracting 1 are exact, so nearbyint does the one rounding.
  const uint32_t mantissa = static_cast<uint32_t>(std::nearbyint((2 * fraction - 1) * 1024));
  // A mantissa rounded up to 1024 carries into the exponent, which is the right answer.
  const uint32_t bits = (uint32_t(exponent + 15) << 10) + mantissa;
  return sign | static_cast<uint16_t>(bits >= 0x7C00 ? 0x7C00 : bits);
}

namespace {

// The shortest round-trip digits of `value`, laid out the way JavaScript's
// Number.prototype.toString lays them out (the reference's canonical text): plain
// notation for decimal exponents in [-7, 21), else d[.ddd]e±x.
template <typename T>
std::string ShortestText(T value) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string_view sci(buffer, size_t(result.ptr - buffer));
  std::string out;
  if (!sci.empty() && sci[0] == '-') {
    out = "-";
    sci.remove_prefix(1);
  }
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  int exponent = std::stoi(std::string(sci.substr(e + 1)));
  int k = int(digits.size()), n = exponent + 1;
  if (digits == "0") return out + "0";
  if (k <= n && n <= 21) {
    out += digits + std::string(size_t(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, size_t(n)) + "." + digits.substr(size_t(n));
  } else if (-6 < n && n <= 0) {
    out += "0." + std::string(size_t(-n), '0') + digits;
  } else {
    out += digits.substr(0, 1);
    if (k > 1) out += "." + digits.substr(1);
    out += exponent < 0 ? "e-" : "e+";
    out += std::to_string(exponent < 0 ? -exponent : exponent);
  }
  return out;
}

// nan / inf / infinity (lower-case spellings given) after an optional sign.
std::optional<double> ParseNonFinite(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  double v;
  if (EqualsIgnoringAsciiCase(text, "nan")) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (EqualsIgnoringAsciiCase(text, "inf") || EqualsIgnoringAsciiCase(text, "infinity")) {
    v = std::numeric_limits<double>::infinity();
  } else {
    return std::nullopt;
  }
  return negative ? -v : v;
}

template <typename T>
std::optional<T> ParseFloating(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (auto special = ParseNonFinite(text)) return static_cast<T>(*special);
  // from_chars takes no leading '+'; a second sign after it must still fail.
  if (text[0] == '+') {
    text.remove_prefix(1);
    if (text.empty() || text[0] == '-' || text[0] == '+') return std::nullopt;
  }
  T value;
  auto result = std::from_chars(text.data(), text.data() + text.size(), value,
                                std::chars_format::general);
  // Out-of-range values are reported as result_out_of_range; treat them as malformed
  // rather than silently becoming infinity.
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

template <typename T>
std::optional<T> ParseInteger(std::string_view text) {
  if (!text.empty() && text[0] == '+') {
    text.remove_prefix(1);
    if (text.empty() || text[0] == '-') return std::nullopt;
  }
  if (text.empty()) return std::nullopt;
  T value;
  auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string FormatFloat64(double value) { return ShortestText(value); }

std::string FormatFloat32(float value) { return ShortestText(value); }

std::string FormatFloat16(uint16_t bits) {
  const double value = HalfToDouble(bits);
  // The nearest decimal with d significant digits lies inside the interval of reals
  // that round to this half whenever any d-digit decimal does, so trying the nearest one
  // for increasing d finds the shortest. Eleven bits of precision never need more than 5.
  for (int digits = 1; digits <= 17; ++digits) {
    char buffer[64];
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), value,
                                std::chars_format::scientific, digits - 1);
    double candidate = 0;
    std::from_chars(buffer, result.ptr, candidate);
    if (DoubleToHalf(candidate) == bits) return ShortestText(candidate);
  }
  return ShortestText(value);
}

std::optional<std::string_view> NonFiniteName(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return std::nullopt;
}

std::optional<double> ParseFloat64(std::string_view text) { return ParseFloating<double>(text); }
std::optional<float> ParseFloat32(std::string_view text) { return ParseFloating<float>(text); }
std::optional<int64_t> ParseInt64(std::string_view text) { return ParseInteger<int64_t>(text); }
std::optional<uint64_t> ParseUInt64(std::string_view text) { return ParseInteger<uint64_t>(text); }

}  // namespace lancelet::text
