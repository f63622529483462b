// UTF-8 handling for text output: invalid bytes become U+FFFD, decoding the way the
// WHATWG Encoding standard (and so JavaScript's TextDecoder) does — each maximal invalid
// subsequence is one replacement character.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lancelet::text {

// Appends `bytes` as a JSON string literal: quotes, \" \\ \b \f \n \r \t, other control
// characters below U+0020 as \u00xx (lower-case hex), everything else verbatim UTF-8.
void AppendJsonString(std::string& out, std::string_view bytes);

// `bytes` with every invalid sequence replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view bytes);

// Number of code points in valid UTF-8 text.
size_t CountCodePoints(std::string_view utf8);
// The first `count` code points of valid UTF-8 text.
std::string_view PrefixCodePoints(std::string_view utf8, size_t count);
bool IsValidUtf8(std::string_view bytes);

}  // namespace lancelet::text
