// Store by URI: the one place that maps a dataset's URI to the store that holds it.
#include "io/object_store.h"
#include "io/s3_store.h"
#include "lancelet/error.h"

namespace lancelet::io {

StoreAndPath OpenStore(const std::string& given, const StorageOptions& options) {
  // Checked for every scheme, so that a misspelt key fails wherever the dataset lives.
  const StorageOptions checked = CheckStorageOptions(options);
  std::string uri = given;
  // Trailing slashes go, but not into a scheme's "://".
  const size_t scheme_end = uri.find("://") == std::string::npos ? 1 : uri.find("://") + 3;
  while (uri.size() > scheme_end && uri.back() == '/') uri.pop_back();
  constexpr std::string_view kFile = "file://", kMemory = "memory://";
  if (uri.starts_with(kFile)) {
    if (uri.size() == kFile.size()) ThrowInvalid("'{}': a file:// URI needs a path after the scheme", given);
    return {DefaultLocalStore(), uri.substr(kFile.size())};
  }
  if (uri.starts_with(kMemory)) {
    if (uri.size() == kMemory.size()) ThrowInvalid("'{}': a memory:// URI needs a name after the scheme", given);
    return {DefaultMemoryStore(), uri};
  }
  constexpr std::string_view kS3 = "s3://";
  if (uri.starts_with(kS3)) {
    const std::string bucket = uri.substr(kS3.size(), uri.find('/', kS3.size()) - kS3.size());
    if (bucket.empty()) ThrowInvalid("'{}': an s3:// URI needs a bucket after the scheme", given);
    return {S3StoreFor(bucket, S3Config::From(checked)), uri};
  }
  if (const size_t scheme = uri.find("://"); scheme != std::string::npos)
    ThrowNotSupported("'{}': the {}:// scheme is not supported yet (lancelet reads local paths, file://, memory:// and s3://)",
                      given, uri.substr(0, scheme));
  if (uri.empty()) ThrowInvalid("an empty path names no dataset");
  return {DefaultLocalStore(), uri};
}

}  // namespace lancelet::io
