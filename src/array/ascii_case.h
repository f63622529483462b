// ASCII case folding, for what SQL and the formats compare without case: keywords,
// function and type names, option keys, metadata values, file extensions. Never for user
// data. Bytes outside A-Z are kept, so UTF-8 text passes through unchanged, and the
// result does not depend on the C locale (std::tolower does).
#pragma once

#include <string>
#include <string_view>

namespace lancelet {

inline char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

inline std::string AsciiLower(std::string s) {
  for (char& c : s) c = AsciiLower(c);
  return s;
}

inline std::string AsciiUpper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
  return s;
}

inline bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  return true;
}

}  // namespace lancelet
