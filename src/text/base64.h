// Standard base64 (RFC 4648 alphabet "+/", "=" padding) for binary values in text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace lancelet::text {

std::string Base64Encode(std::string_view bytes);
// Decodes padded or unpadded base64; nullopt when the text is not base64.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace lancelet::text
