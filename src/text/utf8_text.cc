#include "text/utf8_text.h"

#include <cstdint>

namespace lancelet::text {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence at bytes[i], or 0 when bytes[i] starts an invalid
// one; `invalid_length` then gets the length of the maximal invalid subpart (>= 1).
size_t ValidSequenceLength(std::string_view bytes, size_t i, size_t& invalid_length) {
  const uint8_t lead = static_cast<uint8_t>(bytes[i]);
  if (lead < 0x80) return 1;
  int needed;
  uint8_t lower = 0x80, upper = 0xBF;  // bounds of the first continuation byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    needed = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    needed = 2;
    if (lead == 0xE0) lower = 0xA0;   // no overlong forms
    if (lead == 0xED) upper = 0x9F;   // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    needed = 3;
    if (lead == 0xF0) lower = 0x90;   // no overlong forms
    if (lead == 0xF4) upper = 0x8F;   // nothing above U+10FFFF
  } else {
    invalid_length = 1;
    return 0;
  }
  size_t j = i + 1;
  for (int k = 0; k < needed; ++k, ++j) {
    if (j >= bytes.size()) {
      invalid_length = j - i;
      return 0;
    }
    const uint8_t c = static_cast<uint8_t>(bytes[j]);
    if (c < lower || c > upper) {
      invalid_length = j - i;
      return 0;
    }
    lower = 0x80;
    upper = 0xBF;
  }
  return j - i;
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t i = 0;
  while (i < bytes.size()) {
    const uint8_t c = static_cast<uint8_t>(bytes[i]);
    if (c >= 0x80) {
      size_t invalid = 0;
      size_t n = ValidSequenceLength(bytes, i, invalid);
      if (n == 0) {
        out += kReplacement;
        i += invalid;
      } else {
        out.append(bytes.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
}

std::string SanitizeUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    size_t invalid = 0;
    size_t n = ValidSequenceLength(bytes, i, invalid);
    if (n == 0) {
      out += kReplacement;
      i += invalid;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

bool IsValidUtf8(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    size_t invalid = 0;
    size_t n = ValidSequenceLength(bytes, i, invalid);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

size_t CountCodePoints(std::string_view utf8) {
  size_t count = 0;
  for (char c : utf8) count += (static_cast<uint8_t>(c) & 0xC0) != 0x80;
  return count;
}

std::string_view PrefixCodePoints(std::string_view utf8, size_t count) {
  size_t seen = 0;
  for (size_t i = 0; i < utf8.size(); ++i) {
    if ((static_cast<uint8_t>(utf8[i]) & 0xC0) != 0x80) {
      if (seen == count) return utf8.substr(0, i);
      ++seen;
    }
  }
  return utf8;
}

}  // namespace lancelet::text
