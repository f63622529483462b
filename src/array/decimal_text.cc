#include "lancelet/decimal.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace lancelet {
namespace {

// A decimal's integer as 32-bit limbs, least significant first: 4 for decimal128, 8 for
// decimal256.
using Limbs = std::array<uint32_t, 8>;

void Negate(Limbs& limbs, size_t count) {
  uint64_t carry = 1;
  for (size_t i = 0; i < count; ++i) {
    uint64_t v = uint64_t(uint32_t(~limbs[i])) + carry;
    limbs[i] = uint32_t(v);
    carry = v >> 32;
  }
}

// Divides the magnitude by `divisor` in place; returns the remainder.
uint32_t DivideBy(Limbs& limbs, size_t count, uint32_t divisor) {
  uint64_t remainder = 0;
  for (size_t i = count; i-- > 0;) {
    uint64_t v = (remainder << 32) | limbs[i];
    limbs[i] = uint32_t(v / divisor);
    remainder = v % divisor;
  }
  return uint32_t(remainder);
}

bool IsZero(const Limbs& limbs, size_t count) {
  return std::all_of(limbs.begin(), limbs.begin() + count, [](uint32_t l) { return l == 0; });
}

}  // namespace

std::string FormatDecimal(std::string_view bytes, const DataType& type) {
  const size_t count = bytes.size() / 4;
  Limbs limbs{};
  std::memcpy(limbs.data(), bytes.data(), count * 4);
  const bool negative = limbs[count - 1] >> 31;
  if (negative) Negate(limbs, count);
  // Nine digits at a time, least significant first.
  std::string digits;
  do {
    uint32_t chunk = DivideBy(limbs, count, 1000000000u);
    for (int i = 0; i < 9; ++i, chunk /= 10) digits += char('0' + chunk % 10);
  } while (!IsZero(limbs, count));
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::reverse(digits.begin(), digits.end());

  const int32_t scale = type.scale();
  if (scale < 0 && digits != "0") digits.append(size_t(-scale), '0');
  if (scale > 0) {
    if (digits.size() <= size_t(scale)) digits.insert(0, size_t(scale) + 1 - digits.size(), '0');
    digits.insert(digits.size() - size_t(scale), 1, '.');
  }
  return negative ? "-" + digits : digits;
}

std::optional<std::string> ParseDecimal(std::string_view text, const DataType& type, bool* rounded) {
  if (rounded) *rounded = false;
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) negative = text[pos++] == '-';
  std::string digits;  // every mantissa digit; value = digits * 10^exponent
  int64_t exponent = 0;
  bool any_digit = false, seen_point = false;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c >= '0' && c <= '9') {
      digits += c;
      any_digit = true;
      if (seen_point) --exponent;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!any_digit) return std::nullopt;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    bool exp_negative = false;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) exp_negative = text[pos++] == '-';
    int64_t e = 0;
    size_t start = pos;
    for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos) e = std::min<int64_t>(e * 10 + (text[pos] - '0'), 1000000);
    if (pos == start) return std::nullopt;
    exponent += exp_negative ? -e : e;
  }
  if (pos != text.size()) return std::nullopt;

  // Scale to the stored integer: digits * 10^(exponent + scale).
  const int64_t shift = exponent + type.scale();
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  if (shift >= 0) {
    if (!digits.empty()) {
      if (shift > type.precision()) return std::nullopt;
      digits.append(size_t(shift), '0');
    }
  } else {
    const size_t drop = size_t(std::min<int64_t>(-shift, int64_t(digits.size()) + 1));
    bool round_up = drop <= digits.size() && digits[digits.size() - drop] >= '5';
    const size_t keep = digits.size() - std::min(drop, digits.size());
    if (rounded) *rounded = digits.find_first_not_of('0', keep) != std::string::npos;
    digits.resize(keep);
    if (round_up) {
      size_t i = digits.size();
      while (i > 0 && digits[i - 1] == '9') digits[--i] = '0';
      if (i == 0) digits.insert(0, 1, '1');
      else ++digits[i - 1];
    }
  }
  if (digits.size() > size_t(type.precision())) return std::nullopt;

  const size_t count = size_t(type.byte_width()) / 4;
  Limbs limbs{};
  for (char c : digits) {
    uint64_t carry = uint64_t(c - '0');
    for (size_t i = 0; i < count; ++i) {
      uint64_t v = uint64_t(limbs[i]) * 10 + carry;
      limbs[i] = uint32_t(v);
      carry = v >> 32;
    }
  }
  if (negative && !IsZero(limbs, count)) Negate(limbs, count);
  return std::string(reinterpret_cast<const char*>(limbs.data()), count * 4);
}

int CompareDecimals(std::string_view a, std::string_view b) {
  // Two's complement: the sign bit decides first; equal signs order as unsigned, from the
  // most significant byte (the last) down.
  const bool a_negative = uint8_t(a.back()) >> 7, b_negative = uint8_t(b.back()) >> 7;
  if (a_negative != b_negative) return a_negative ? -1 : 1;
  for (size_t i = a.size(); i-- > 0;) {
    if (a[i] != b[i]) return uint8_t(a[i]) < uint8_t(b[i]) ? -1 : 1;
  }
  return 0;
}

}  // namespace lancelet
