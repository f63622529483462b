// Storage options: the reference's keys, checked once where a URI is opened.
#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "array/ascii_case.h"
#include "io/object_store.h"
#include "lancelet/error.h"

namespace lancelet::io {
namespace {

// Keys any store of the reference reads: the HTTP client's, lance's own retry settings,
// and the unprefixed aliases its object stores accept beside their prefixed names.
constexpr std::array<std::string_view, 40> kKnownKeys = {
    "allow_http", "allow_invalid_certificates", "connect_timeout", "timeout", "request_timeout", "user_agent",
    "default_content_type", "http1_only", "http2_only", "http2_keep_alive_interval", "http2_keep_alive_timeout",
    "http2_keep_alive_while_idle", "pool_idle_timeout", "pool_max_idle_per_host", "proxy_url",
    "proxy_ca_certificate", "proxy_excludes", "download_retry_count", "client_max_retries", "client_retry_timeout",
    "region", "endpoint", "bucket", "bucket_name", "access_key_id", "secret_access_key", "session_token", "token",
    "skip_signature", "imdsv1_fallback", "virtual_hosted_style_request", "unsigned_payload", "checksum_algorithm",
    "conditional_put", "service_account", "service_account_key", "application_credentials", "account_name",
    "account_key", "use_emulator"};
// Each cloud's own keys, and lancelet's own; which of them a store honours is that
// store's business.
constexpr std::array<std::string_view, 6> kKnownPrefixes = {"aws_", "s3_", "google_", "gcs_", "azure_", "lancelet_"};

bool Known(std::string_view key) {
  return std::find(kKnownKeys.begin(), kKnownKeys.end(), key) != kKnownKeys.end() ||
         std::any_of(kKnownPrefixes.begin(), kKnownPrefixes.end(), [&](std::string_view p) { return key.starts_with(p); });
}

}  // namespace

StorageOptions CheckStorageOptions(const StorageOptions& options) {
  StorageOptions out;
  for (const auto& [given, value] : options) {
    const std::string key = AsciiLower(given);
    if (!Known(key))
      ThrowInvalid("storage option '{}' is not one the reference knows (general keys such as allow_http, timeout, "
                   "client_max_retries, or a store's own aws_*, google_* or azure_* keys)",
                   given);
    if (!out.emplace(key, value).second) ThrowInvalid("storage option '{}' is given twice (keys ignore case)", key);
  }
  return out;
}

}  // namespace lancelet::io
