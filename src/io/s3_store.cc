#include "io/s3_store.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "array/ascii_case.h"
#include "io/range_cache.h"
#include "io/run_concurrently.h"
#include "lancelet/error.h"

namespace lancelet::io {

namespace {

// ------------------------------------------------------------------ libcurl, loaded late

struct CurlApi {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_reset)(CURL*);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

const CurlApi& Curl() {
  static const CurlApi api = [] {
    void* lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      ThrowNotSupported("s3:// needs libcurl (libcurl.so.4, Debian package libcurl4), which cannot be loaded: {}",
                        dlerror());
    auto get = [&](const char* name) {
      void* symbol = dlsym(lib, name);
      if (!symbol) ThrowNotSupported("s3://: libcurl.so.4 lacks {}", name);
      return symbol;
    };
    CurlApi a;
    a.global_init = reinterpret_cast<decltype(a.global_init)>(get("curl_global_init"));
    a.easy_init = reinterpret_cast<decltype(a.easy_init)>(get("curl_easy_init"));
    a.easy_setopt = reinterpret_cast<decltype(a.easy_setopt)>(get("curl_easy_setopt"));
    a.easy_perform = reinterpret_cast<decltype(a.easy_perform)>(get("curl_easy_perform"));
    a.easy_getinfo = reinterpret_cast<decltype(a.easy_getinfo)>(get("curl_easy_getinfo"));
    a.easy_reset = reinterpret_cast<decltype(a.easy_reset)>(get("curl_easy_reset"));
    a.easy_cleanup = reinterpret_cast<decltype(a.easy_cleanup)>(get("curl_easy_cleanup"));
    a.easy_strerror = reinterpret_cast<decltype(a.easy_strerror)>(get("curl_easy_strerror"));
    a.slist_append = reinterpret_cast<decltype(a.slist_append)>(get("curl_slist_append"));
    a.slist_free_all = reinterpret_cast<decltype(a.slist_free_all)>(get("curl_slist_free_all"));
    if (a.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) ThrowIo("s3://: libcurl failed to initialise");
    return a;
  }();
  return api;
}

// The hex SHA-256 of a request's body, for x-amz-content-sha256: S3 requires the header
// on every Signature V4 request, and libcurl before 8 signs the hash without sending it.
// From OpenSSL's libcrypto, loaded late as libcurl is (its OpenSSL build links it); where
// it cannot be loaded, UNSIGNED-PAYLOAD, which S3 accepts in its place.
std::string PayloadHash(std::string_view body) {
  static constexpr const char* kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  if (body.empty()) return kEmpty;
  using Digest = int (*)(const void*, size_t, unsigned char*, unsigned int*, const void*, void*);
  using Sha256 = const void* (*)();
  static const auto api = []() -> std::pair<Digest, Sha256> {
    void* lib = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return {nullptr, nullptr};
    return {reinterpret_cast<Digest>(dlsym(lib, "EVP_Digest")), reinterpret_cast<Sha256>(dlsym(lib, "EVP_sha256"))};
  }();
  unsigned char digest[32];
  unsigned int size = 0;
  if (!api.first || !api.second || api.first(body.data(), body.size(), digest, &size, api.second(), nullptr) != 1 ||
      size != sizeof(digest))
    return "UNSIGNED-PAYLOAD";
  std::string hex;
  for (unsigned char byte : digest) hex += fmt::format("{:02x}", byte);
  return hex;
}

// ------------------------------------------------------------------ configuration

bool Truthy(const std::string& value) {
  const std::string v = AsciiLower(value);
  return v == "true" || v == "1" || v == "yes";
}

// Seconds as the reference writes durations ("30s", "500ms", "2min") or a bare number.
long Millis(const std::string& key, const std::string& value) {
  char* end = nullptr;
  const double number = std::strtod(value.c_str(), &end);
  const std::string unit = AsciiLower(std::string(end ? end : ""));
  double ms = -1;
  if (unit.empty() || unit == "s") ms = number * 1000;
  else if (unit == "ms") ms = number;
  else if (unit == "min" || unit == "m") ms = number * 60000;
  if (end == value.c_str() || ms < 0) ThrowInvalid("storage option '{}' = '{}' is not a duration (e.g. 30s, 500ms)", key, value);
  return long(ms);
}

// "2026-12-06T02:50:00.000Z" as seconds since the epoch (0 when it is not one).
int64_t ParseIsoSeconds(const std::string& text) {
  std::tm tm{};
  if (!strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return 0;
  return int64_t(timegm(&tm));
}

// A byte count: a bare number, or one with KiB / MiB / GiB after it.
uint64_t Bytes(const std::string& key, const std::string& value) {
  char* end = nullptr;
  const unsigned long long number = std::strtoull(value.c_str(), &end, 10);
  const std::string unit = AsciiLower(std::string(end ? end : ""));
  const uint64_t scale = unit.empty() || unit == "b" ? 1 : unit == "kib" ? 1 << 10 : unit == "mib" ? 1 << 20
                         : unit == "gib" ? 1 << 30 : 0;
  if (end == value.c_str() || scale == 0 || value[0] == '-')
    ThrowInvalid("storage option '{}' = '{}' is not a byte count (e.g. 65536, 64KiB, 16MiB)", key, value);
  return uint64_t(number) * scale;
}

// The first of `keys` set in `options` (lower-case), else the first environment
// variable of `env` set, else "".
std::string Pick(const StorageOptions& options, std::initializer_list<const char*> keys,
                 std::initializer_list<const char*> env) {
  for (const char* k : keys)
    if (auto it = options.find(k); it != options.end()) return it->second;
  for (const char* e : env)
    if (const char* v = std::getenv(e); v && *v) return v;
  return "";
}

// AWS's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ as %XX, and '/' kept in keys.
std::string UriEncode(std::string_view s, bool keep_slash) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) out += char(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

// ------------------------------------------------------------------ requests

struct Response {
  long status = 0;
  std::string body;
  uint64_t content_length = 0;  // HEAD
  int64_t modified_seconds = 0;  // HEAD
  std::string etag;              // an uploaded part's
  std::string content_range;     // a ranged GET's: "bytes FIRST-LAST/SIZE"
};

// Keeps the answer's ETag and Content-Range headers.
size_t KeepHeaders(char* data, size_t size, size_t n, void* out) {
  const std::string_view line(data, size * n);
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  const std::string name = AsciiLower(std::string(line.substr(0, colon)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
  auto* r = static_cast<Response*>(out);
  if (name == "etag") r->etag = value;
  else if (name == "content-range") r->content_range = value;
  return size * n;
}

// Where a partial (206) answer's body lies in the object and the object's size, from its
// Content-Range "bytes FIRST-LAST/SIZE"; throws Io naming the header when it does not
// agree with the body.
std::pair<uint64_t, uint64_t> PartialAnswerRange(const Response& r, const std::string& path) {
  uint64_t first = 0, last = 0, size = 0;
  if (std::sscanf(r.content_range.c_str(), "bytes %" SCNu64 "-%" SCNu64 "/%" SCNu64, &first, &last, &size) != 3 ||
      last < first || last - first + 1 != r.body.size() || last >= size)
    ThrowIo("GET '{}': a partial answer of {} bytes with Content-Range '{}'", path, r.body.size(), r.content_range);
  return {first, size};
}

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// Transport failures worth another try: the server may be back, or the connection was
// dropped under us.
bool Transient(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_COULDNT_RESOLVE_HOST:
      return true;
    default:
      return false;
  }
}

// S3's error document: "Code: Message", or the start of the body when it is not one.
std::string ErrorText(const Response& r) {
  pugi::xml_document doc;
  if (doc.load_buffer(r.body.data(), r.body.size())) {
    auto error = doc.child("Error");
    if (error) return fmt::format("{}: {}", error.child_value("Code"), error.child_value("Message"));
  }
  return r.body.substr(0, 200);
}

class S3Store;

class S3ReadableFile final : public ReadableFile {
 public:
  S3ReadableFile(std::shared_ptr<const S3Store> store, std::string path, uint64_t size)
      : store_(std::move(store)), path_(std::move(path)), size_(size), cache_key_(CacheKey(path_, size_)) {}
  // Cached ranges are keyed by the object's name and size, and dropped when this process
  // replaces or deletes it (Lance replaces only small objects read whole, which are not
  // cached; a file another process replaced with one of the same size would be served
  // stale until it leaves the cache).
  static std::string CacheKey(const std::string& path, uint64_t size) { return path + '\n' + std::to_string(size); }
  const std::string& path() const override { return path_; }
  uint64_t size() const override { return size_; }
  void ReadAt(uint64_t offset, uint64_t length, void* out) const override;
  void ReadRanges(std::span<const ByteRange> ranges) const override;
  bool Prefetch(std::span<const ByteRange> ranges) const override;

 private:
  void Fetch(uint64_t offset, uint64_t length, void* out) const;  // one ranged GET
  // The range from the cache when one cached range holds it, else fetched as it is.
  void CachedOrFetch(uint64_t offset, uint64_t length, void* out) const;

  std::shared_ptr<const S3Store> store_;  // kept alive: a file may outlive every other user of its store
  std::string path_;
  uint64_t size_;
  std::string cache_key_;
};

// Nothing is visible before Finish. A file that outgrows a part (the store's
// upload_part_bytes) becomes a multipart upload whose parts go out as they fill, so a
// data file of any size holds one part in memory; Finish completes the upload, and a
// writer destroyed unfinished aborts it. A file that must not overwrite (a manifest) is
// small and always one conditional PUT.
class S3WritableFile final : public WritableFile {
 public:
  S3WritableFile(std::shared_ptr<S3Store> store, std::string path, bool no_overwrite)
      : store_(std::move(store)), path_(std::move(path)), no_overwrite_(no_overwrite) {}
  ~S3WritableFile() override;
  void Write(const void* data, uint64_t length) override;
  uint64_t position() const override { return written_; }
  void Finish() override;

 private:
  void SendPart();

  std::shared_ptr<S3Store> store_;
  std::string path_;
  bool no_overwrite_;
  std::string bytes_;  // not yet sent
  uint64_t written_ = 0;
  std::string upload_id_;            // of the multipart upload, once begun
  std::vector<std::string> etags_;   // of the parts sent, in order
  bool finished_ = false;
};

class S3Store final : public ObjectStore, public std::enable_shared_from_this<S3Store> {
 public:
  S3Store(std::string bucket, S3Config config)
      : bucket_(std::move(bucket)), config_(std::move(config)), read_cache_(config_.read_cache_bytes) {
    Curl();  // fails here, naming libcurl, when it is missing
    std::string endpoint = config_.endpoint;
    if (endpoint.empty()) endpoint = fmt::format("https://s3.{}.amazonaws.com", config_.region);
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
    if (endpoint.starts_with("http://") && !config_.allow_http)
      ThrowInvalid("s3://{}: the endpoint '{}' is plain HTTP; set allow_http=true (or AWS_ALLOW_HTTP=true) to use it",
                   bucket_, endpoint);
    if (config_.virtual_hosted_style) {
      const size_t host = endpoint.find("://") + 3;
      base_url_ = endpoint.substr(0, host) + bucket_ + "." + endpoint.substr(host) + "/";
    } else {
      base_url_ = endpoint + "/" + bucket_ + "/";
    }
    prefix_ = "s3://" + bucket_ + "/";
  }

  ~S3Store() override {
    for (CURL* h : idle_) Curl().easy_cleanup(h);
  }

  // A file of unknown size is opened by reading its last block (a suffix range), which a
  // reader of a Lance file asks for first anyway: the answer's Content-Range gives the
  // size, so no HEAD is needed.
  std::unique_ptr<ReadableFile> OpenRead(const std::string& path) const override {
    const uint64_t block = std::max<uint64_t>(1, config_.read_block_bytes);
    Response r = Send("GET", path, "", {fmt::format("Range: bytes=-{}", block)}, {}, true);
    if (r.status == 404) ThrowNotFound("open '{}': no such object", path);
    uint64_t size = 0, first = 0;  // the object's size; where the body's bytes start in it
    if (r.status == 200) {
      size = r.body.size();  // the whole object: a server that ignores ranges, or an empty one
    } else if (r.status == 206) {
      // The bytes are kept where the answer says they lie: s3rver answers a suffix range
      // with the object's first bytes.
      std::tie(first, size) = PartialAnswerRange(r, path);
    } else if (r.status == 416) {
      size = 0;  // an empty object has no last bytes
      r.body.clear();
    } else {
      Fail("GET", path, r);
    }
    if (r.body.size() > size) ThrowIo("GET '{}': {} bytes of a {}-byte object", path, r.body.size(), size);
    stats_.opens.fetch_add(1, std::memory_order_relaxed);
    CountRead(r.body.size());
    if (!r.body.empty()) read_cache_.Insert(S3ReadableFile::CacheKey(path, size), first, std::move(r.body));
    return std::make_unique<S3ReadableFile>(shared_from_this(), path, size);
  }
  std::unique_ptr<ReadableFile> OpenRead(const std::string& path, uint64_t known_size) const override {
    if (known_size == 0) return OpenRead(path);
    stats_.opens.fetch_add(1, std::memory_order_relaxed);
    return std::make_unique<S3ReadableFile>(shared_from_this(), path, known_size);
  }
  // One GET, where OpenRead would HEAD for the size first.
  std::string ReadObject(const std::string& path) const override {
    Response r = Send("GET", path, "", {}, {}, true);
    if (r.status == 404) ThrowNotFound("open '{}': no such object", path);
    if (r.status != 200) Fail("GET", path, r);
    stats_.opens.fetch_add(1, std::memory_order_relaxed);
    CountRead(r.body.size());
    return std::move(r.body);
  }

  std::unique_ptr<WritableFile> OpenWrite(const std::string& path, bool no_overwrite) override {
    Key(path);  // refuses a path outside the bucket now, not at Finish
    return std::make_unique<S3WritableFile>(shared_from_this(), path, no_overwrite);
  }

  bool PutIfAbsent(const std::string& path, std::string_view bytes) override {
    return PutObject(path, bytes, /*if_absent=*/true);
  }

  // Returns false when `if_absent` and the object exists (412).
  bool PutObject(const std::string& path, std::string_view bytes, bool if_absent) {
    if (if_absent && !config_.conditional_put) {
      if (Head(path)) return false;
      if_absent = false;
    } else if (if_absent) {
      CheckConditionalPut(path);
    }
    std::vector<std::string> headers = {"Content-Type: application/octet-stream"};
    if (if_absent) headers.push_back("If-None-Match: *");
    // A conditional PUT is idempotent too: a retry after a lost answer to our own success
    // sees 412, which reads as "someone else won". The commit then re-checks the manifest
    // it meant to publish, which is ours, through its usual conflict path.
    Response r = Send("PUT", path, "", headers, bytes, true);
    if (r.status == 200) read_cache_.Forget(path + '\n');
    stats_.bytes_written.fetch_add(bytes.size(), std::memory_order_relaxed);
    if (if_absent && r.status == 412) return false;
    if (r.status != 200) Fail("PUT", path, r);
    return true;
  }

  // ---- multipart uploads (S3WritableFile)
  std::string BeginUpload(const std::string& path) {
    Response r = Send("POST", path, "uploads=", {"Content-Type: application/octet-stream"}, {}, true);
    if (r.status != 200) Fail("POST (begin upload)", path, r);
    pugi::xml_document doc;
    doc.load_buffer(r.body.data(), r.body.size());
    std::string id = doc.child("InitiateMultipartUploadResult").child_value("UploadId");
    if (id.empty()) ThrowIo("POST (begin upload) '{}': no UploadId in the answer: {}", path, r.body.substr(0, 200));
    return id;
  }
  std::string UploadPart(const std::string& path, const std::string& id, int number, std::string_view bytes) {
    Response r = Send("PUT", path, fmt::format("partNumber={}&uploadId={}", number, UriEncode(id, false)),
                      {"Content-Type: application/octet-stream"}, bytes, true);
    if (r.status != 200 || r.etag.empty()) Fail("PUT (part)", path, r);
    stats_.bytes_written.fetch_add(bytes.size(), std::memory_order_relaxed);
    return r.etag;
  }
  void CompleteUpload(const std::string& path, const std::string& id, const std::vector<std::string>& etags) {
    std::string xml = "<CompleteMultipartUpload>";
    for (size_t i = 0; i < etags.size(); ++i)
      xml += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1, etags[i]);
    xml += "</CompleteMultipartUpload>";
    Response r = Send("POST", path, "uploadId=" + UriEncode(id, false), {"Content-Type: application/xml"}, xml, true);
    // S3 may answer 200 and put the failure in the body.
    if (r.status != 200 || r.body.find("<Error>") != std::string::npos) Fail("POST (complete upload)", path, r);
    read_cache_.Forget(path + '\n');
  }
  void AbortUpload(const std::string& path, const std::string& id) const {
    Response r = Send("DELETE", path, "uploadId=" + UriEncode(id, false), {}, {}, true);
    if (r.status != 204 && r.status != 200 && r.status != 404) Fail("DELETE (abort upload)", path, r);
  }

  // Uploads begun below `dir` before `started_before` (seconds since the epoch) and never
  // completed: a writer killed mid-file leaves one, holding its parts' bytes.
  size_t AbortUploads(const std::string& dir, int64_t started_before) override {
    const std::string prefix = DirKey(dir);
    std::vector<std::pair<std::string, std::string>> stale;  // key, upload id
    std::string key_marker, id_marker;
    for (;;) {
      std::string query = "prefix=" + UriEncode(prefix, false) + "&uploads=";
      if (!key_marker.empty())
        query += "&key-marker=" + UriEncode(key_marker, false) + "&upload-id-marker=" + UriEncode(id_marker, false);
      Response r = Send("GET", prefix_, query, {}, {}, true);
      // 501: a server that cannot list uploads (s3rver) names none to abort; its
      // incomplete uploads are then out of every client's reach.
      if (r.status == 404 || r.status == 501) return 0;
      if (r.status != 200) Fail("LIST (uploads)", prefix_ + prefix, r);
      pugi::xml_document doc;
      if (!doc.load_buffer(r.body.data(), r.body.size()))
        ThrowIo("LIST (uploads) '{}{}': the answer is not XML: {}", prefix_, prefix, r.body.substr(0, 200));
      auto result = doc.child("ListMultipartUploadsResult");
      for (auto u : result.children("Upload"))
        if (ParseIsoSeconds(u.child_value("Initiated")) < started_before)
          stale.emplace_back(u.child_value("Key"), u.child_value("UploadId"));
      if (std::string(result.child_value("IsTruncated")) != "true") break;
      key_marker = result.child_value("NextKeyMarker");
      id_marker = result.child_value("NextUploadIdMarker");
      if (key_marker.empty()) break;
    }
    for (const auto& [key, id] : stale) AbortUpload(prefix_ + key, id);
    return stale.size();
  }

  // A server that ignores If-None-Match would let two writers publish the same version,
  // each overwriting the other's manifest: before the first put-if-absent, a probe object
  // beside `path` is put twice, and the second put must be refused.
  void PrepareConditionalPut(const std::string& dir) override {
    if (!config_.conditional_put) return;
    try {
      CheckConditionalPut(dir + "/");
    } catch (const Error&) {
    }
  }
  void CheckConditionalPut(const std::string& path) {
    std::lock_guard lock(probe_mutex_);
    if (probe_ == Probe::kHonoured) return;
    if (probe_ == Probe::kIgnored) ThrowConditionalPutIgnored(path);
    const std::string dir = path.substr(0, path.rfind('/'));
    std::random_device random;
    const std::string probe =
        fmt::format("{}/.lancelet-conditional-put-probe-{:08x}{:08x}", dir, uint32_t(random()), uint32_t(random()));
    auto put = [&] {
      Response r = Send("PUT", probe, "", {"If-None-Match: *"}, {}, true);
      if (r.status != 200 && r.status != 412) Fail("PUT", probe, r);
      return r.status == 200;
    };
    const bool first = put(), second = put();
    Delete(probe);
    if (!first) ThrowIo("PUT '{}': a fresh probe object was refused as existing (HTTP 412)", probe);
    probe_ = second ? Probe::kIgnored : Probe::kHonoured;
    if (second) ThrowConditionalPutIgnored(path);
  }
  [[noreturn]] void ThrowConditionalPutIgnored(const std::string& path) const {
    ThrowNotSupported("cannot publish '{}': the server at {} ignores conditional writes (If-None-Match: *), so two "
                      "writers could both publish one version and lose a commit; if only one process ever writes "
                      "here, set the storage option conditional_put=disabled", path, base_url_);
  }

  // An object, or a "directory": a prefix with objects below it (the dataset's own
  // URI is one), as the local and memory stores answer for directories.
  bool Exists(const std::string& path) const override {
    if (Head(path)) return true;
    pugi::xml_document page;
    return ListPage(DirKey(path), "", "", 1, page) && page.child("ListBucketResult").child("Contents");
  }

  std::optional<ObjectInfo> Head(const std::string& path) const override {
    Response r = Send("HEAD", path, "", {}, {}, true);
    if (r.status == 404) return std::nullopt;
    if (r.status != 200) Fail("HEAD", path, r);
    return ObjectInfo{r.content_length, r.modified_seconds};
  }

  std::vector<std::string> List(const std::string& dir) const override {
    const std::string prefix = DirKey(dir);
    std::vector<std::string> names;
    ListKeys(prefix, "/", [&](const std::string& key) { names.push_back(key.substr(prefix.size())); },
             [&](const std::string& common) {
               std::string name = common.substr(prefix.size());
               if (!name.empty() && name.back() == '/') name.pop_back();
               names.push_back(name);
             });
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }

  void Delete(const std::string& path) override {
    read_cache_.Forget(path + '\n');
    Response r = Send("DELETE", path, "", {}, {}, true);
    if (r.status != 204 && r.status != 200 && r.status != 404) Fail("DELETE", path, r);
  }

  void DeleteTree(const std::string& dir) override {
    const std::string prefix = DirKey(dir);
    std::vector<std::string> keys;
    ListKeys(prefix, "", [&](const std::string& key) { keys.push_back(key); }, [](const std::string&) {});
    for (const auto& key : keys) Delete(prefix_ + key);
  }

  bool costly_requests() const override { return true; }
  void CreateDir(const std::string&) override {}  // prefixes need no creating
  void Sync(const std::string&) override {}       // a PUT that returned is durable

  // ---- used by the files
  const S3Config& config() const { return config_; }
  // One GET answered with `bytes` bytes, in the store's IoStats.
  void CountRead(uint64_t bytes) const {
    stats_.read_calls.fetch_add(1, std::memory_order_relaxed);
    stats_.bytes_read.fetch_add(bytes, std::memory_order_relaxed);
  }
  RangeCache& read_cache() const { return read_cache_; }

  Response Send(const std::string& method, const std::string& path, const std::string& query,
              const std::vector<std::string>& headers, std::string_view body, bool idempotent) const {
    const std::string url = base_url_ + UriEncode(Key(path), true) + (query.empty() ? "" : "?" + query);
    std::optional<std::mt19937_64> jitter;  // seeded at the first retry: most requests make none
    for (int attempt = 0;; ++attempt) {
      CURLcode code = CURLE_OK;
      Response r = Perform(method, url, headers, body, code);
      const bool retry = code != CURLE_OK ? Transient(code) : (r.status >= 500 || r.status == 429);
      if (!retry || !idempotent || attempt >= config_.max_retries) {
        if (code != CURLE_OK)
          ThrowIo("{} '{}': {} (after {} attempts)", method, path, Curl().easy_strerror(code), attempt + 1);
        return r;
      }
      // Exponential backoff with full jitter: 100 ms, 200 ms, ... capped at 5 s.
      const uint64_t cap = std::min<uint64_t>(5000, uint64_t(100) << std::min(attempt, 6));
      if (!jitter) jitter.emplace(std::random_device{}());
      std::this_thread::sleep_for(std::chrono::milliseconds((*jitter)() % (cap + 1)));
    }
  }

  [[noreturn]] void Fail(const char* method, const std::string& path, const Response& r) const {
    if (r.status == 404) ThrowNotFound("{} '{}': no such object", method, path);
    ThrowIo("{} '{}': HTTP {} {}", method, path, r.status, ErrorText(r));
  }

  // The key of a path: its URI without "s3://BUCKET/".
  std::string Key(const std::string& path) const {
    if (path.starts_with(prefix_)) return path.substr(prefix_.size());
    if (path == prefix_.substr(0, prefix_.size() - 1)) return "";
    ThrowInvalid("'{}' is not in the store of s3://{}", path, bucket_);
  }
  // The key prefix of the objects below a "directory" path: its key with a '/' after it
  // (none for the bucket's root).
  std::string DirKey(const std::string& path) const {
    std::string prefix = Key(path);
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    return prefix;
  }

 private:
  // ListObjectsV2 over every page: on_key for each object, on_prefix for each common
  // prefix (with a delimiter).
  template <typename OnKey, typename OnPrefix>
  void ListKeys(const std::string& prefix, const std::string& delimiter, OnKey on_key, OnPrefix on_prefix) const {
    std::string token;
    do {
      pugi::xml_document page;
      if (!ListPage(prefix, delimiter, token, 0, page)) return;
      auto result = page.child("ListBucketResult");
      for (auto c : result.children("Contents")) on_key(std::string(c.child_value("Key")));
      for (auto c : result.children("CommonPrefixes")) on_prefix(std::string(c.child_value("Prefix")));
      token = std::string(result.child_value("IsTruncated")) == "true" ? result.child_value("NextContinuationToken") : "";
    } while (!token.empty());
  }

  // One ListObjectsV2 page (at most `max_keys` keys when not 0) into `page`; false when
  // the bucket does not exist (nothing below).
  bool ListPage(const std::string& prefix, const std::string& delimiter, const std::string& token, int max_keys,
                pugi::xml_document& page) const {
    std::string query = "list-type=2&prefix=" + UriEncode(prefix, false);
    if (!delimiter.empty()) query += "&delimiter=" + UriEncode(delimiter, false);
    if (!token.empty()) query += "&continuation-token=" + UriEncode(token, false);
    if (max_keys > 0) query += fmt::format("&max-keys={}", max_keys);
    Response r = Send("GET", prefix_, query, {}, {}, true);
    if (r.status == 404) return false;
    if (r.status != 200) Fail("LIST", prefix_ + prefix, r);
    if (!page.load_buffer(r.body.data(), r.body.size()))
      ThrowIo("LIST '{}{}': the answer is not XML: {}", prefix_, prefix, r.body.substr(0, 200));
    return true;
  }

  Response Perform(const std::string& method, const std::string& url, const std::vector<std::string>& headers,
                 std::string_view body, CURLcode& code) const {
    const CurlApi& c = Curl();
    CURL* h = Borrow();
    struct Return {
      const S3Store& store;
      CURL* h;
      curl_slist* list = nullptr;
      ~Return() {
        Curl().slist_free_all(list);
        store.GiveBack(h);
      }
    } back{*this, h};
    for (const auto& header : headers) back.list = c.slist_append(back.list, header.c_str());
    if (!config_.session_token.empty())
      back.list = c.slist_append(back.list, ("x-amz-security-token: " + config_.session_token).c_str());
    if (!config_.access_key_id.empty())  // signed: libcurl signs this header with the others
      back.list = c.slist_append(back.list, ("x-amz-content-sha256: " + PayloadHash(body)).c_str());
    back.list = c.slist_append(back.list, "Expect:");  // no 100-continue round trip before a body
    Response r;
    c.easy_setopt(h, CURLOPT_URL, url.c_str());
    c.easy_setopt(h, CURLOPT_HTTPHEADER, back.list);
    c.easy_setopt(h, CURLOPT_WRITEFUNCTION, &AppendBody);
    c.easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
    c.easy_setopt(h, CURLOPT_HEADERFUNCTION, &KeepHeaders);
    c.easy_setopt(h, CURLOPT_HEADERDATA, &r);
    c.easy_setopt(h, CURLOPT_TIMEOUT_MS, config_.timeout_ms);
    c.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, config_.connect_timeout_ms);
    c.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (!config_.access_key_id.empty()) {
      const std::string sigv4 = "aws:amz:" + config_.region + ":s3";
      const std::string user = config_.access_key_id + ":" + config_.secret_access_key;
      c.easy_setopt(h, CURLOPT_AWS_SIGV4, sigv4.c_str());  // copied by libcurl
      c.easy_setopt(h, CURLOPT_USERPWD, user.c_str());
    }
    if (method == "HEAD") {
      c.easy_setopt(h, CURLOPT_NOBODY, 1L);
      c.easy_setopt(h, CURLOPT_FILETIME, 1L);
    } else if (method != "GET") {
      c.easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
      if (method == "PUT" || method == "POST") {
        // The body through POSTFIELDS, so that libcurl hashes it into the signature.
        c.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.size()));
        c.easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
      }
    }
    code = c.easy_perform(h);
    if (code != CURLE_OK) return r;
    c.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    if (method == "HEAD") {
      curl_off_t length = -1, modified = -1;
      c.easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
      c.easy_getinfo(h, CURLINFO_FILETIME_T, &modified);
      r.content_length = length < 0 ? 0 : uint64_t(length);
      r.modified_seconds = modified < 0 ? 0 : int64_t(modified);
    }
    return r;
  }

  // Handles are kept between requests, so that their connections are reused.
  CURL* Borrow() const {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        CURL* h = idle_.back();
        idle_.pop_back();
        return h;
      }
    }
    CURL* h = Curl().easy_init();
    if (!h) ThrowIo("s3://{}: libcurl could not make a handle", bucket_);
    return h;
  }
  void GiveBack(CURL* h) const {
    Curl().easy_reset(h);  // options go; the connection cache stays
    std::lock_guard lock(mutex_);
    idle_.push_back(h);
  }

  const std::string bucket_;
  const S3Config config_;
  std::string base_url_, prefix_;
  mutable std::mutex mutex_;
  mutable std::vector<CURL*> idle_;
  mutable RangeCache read_cache_;
  enum class Probe { kUnknown, kHonoured, kIgnored };
  std::mutex probe_mutex_;
  Probe probe_ = Probe::kUnknown;
};

void S3ReadableFile::CachedOrFetch(uint64_t offset, uint64_t length, void* out) const {
  if (!store_->read_cache().Lookup(cache_key_, offset, length, out)) Fetch(offset, length, out);
}

void S3ReadableFile::ReadAt(uint64_t offset, uint64_t length, void* out) const {
  if (length == 0) return;
  if (offset > size_ || length > size_ - offset)
    ThrowCorrupt("'{}': read of {} bytes at offset {} is past the end of the object ({} bytes)", path_, length, offset,
                 size_);
  RangeCache& cache = store_->read_cache();
  const uint64_t block = store_->config().read_block_bytes;
  if (length >= block) return CachedOrFetch(offset, length, out);
  // A small read fetches the block around it: from it onwards, or the object's last block
  // when it lies that near the end (a footer read brings the metadata before it).
  const uint64_t end = std::min(size_, offset + block);
  const uint64_t start = std::min(offset, end > block ? end - block : 0);
  std::unique_ptr<RangeCache::Fetch> claim;
  if (cache.LookupOrClaim(cache_key_, offset, length, out, start, end, &claim)) return;
  std::string bytes(end - start, '\0');
  Fetch(start, end - start, bytes.data());
  std::memcpy(out, bytes.data() + (offset - start), length);
  if (claim) claim->Done(std::move(bytes));
  else cache.Insert(cache_key_, start, std::move(bytes));
}

namespace {

// Ranges merged into one request: [start, end) and the ranges it serves.
struct MergedRange {
  uint64_t start, end;
  std::vector<const ByteRange*> parts;
};

// `ranges` sorted and merged where they lie at most `gap` apart, no merged range growing
// past `max_bytes` (unless one range alone does).
std::vector<MergedRange> MergeRanges(std::span<const ByteRange> ranges, uint64_t gap, uint64_t max_bytes) {
  std::vector<const ByteRange*> sorted;
  for (const ByteRange& r : ranges)
    if (r.length > 0) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  std::vector<MergedRange> merged;
  for (const ByteRange* r : sorted) {
    const uint64_t end = r->offset + r->length;
    if (!merged.empty() && r->offset <= merged.back().end + gap &&
        std::max(merged.back().end, end) - merged.back().start <= max_bytes) {
      merged.back().end = std::max(merged.back().end, end);
    } else {
      merged.push_back({r->offset, end, {}});
    }
    merged.back().parts.push_back(r);
  }
  return merged;
}

}  // namespace

// Ranges less than a gap apart are one request (the bytes between cost less than another
// round trip); the merged requests run concurrently. A caller that names its ranges (a
// page's buffers) knows what it needs: they are fetched as they are, not widened to
// blocks, which only a read of unknown reach (ReadAt's) is.
void S3ReadableFile::ReadRanges(std::span<const ByteRange> ranges) const {
  const S3Config& config = store_->config();
  const auto merged = MergeRanges(ranges, config.read_coalesce_gap_bytes, UINT64_MAX);
  RunConcurrently(merged.size(), config.max_concurrent_reads, [&](size_t i) {
    const MergedRange& m = merged[i];
    if (m.parts.size() == 1) return CachedOrFetch(m.start, m.end - m.start, m.parts[0]->out);  // in place
    std::string bytes(m.end - m.start, '\0');
    CachedOrFetch(m.start, bytes.size(), bytes.data());
    for (const ByteRange* r : m.parts) std::memcpy(r->out, bytes.data() + (r->offset - m.start), r->length);
  });
}

// The same merged requests, kept in the store's cache for the reads to come, none past
// half the cache, which would push out the others before they are read.
bool S3ReadableFile::Prefetch(std::span<const ByteRange> ranges) const {
  const S3Config& config = store_->config();
  RangeCache& cache = store_->read_cache();
  std::vector<ByteRange> missing;
  for (const ByteRange& r : ranges)
    if (r.offset <= size_ && r.length <= size_ - r.offset)
      if (const auto [start, end] = cache.Uncovered(cache_key_, r.offset, r.offset + r.length); start < end)
        missing.push_back({start, end - start, nullptr});  // not again what the cache holds
  const auto merged = MergeRanges(missing, config.read_coalesce_gap_bytes, config.read_cache_bytes / 2);
  RunConcurrently(merged.size(), config.max_concurrent_reads, [&](size_t i) {
    const uint64_t end = std::min(size_, merged[i].end);
    std::string bytes(end - merged[i].start, '\0');
    Fetch(merged[i].start, bytes.size(), bytes.data());
    cache.Insert(cache_key_, merged[i].start, std::move(bytes));
  });
  return true;
}

void S3ReadableFile::Fetch(uint64_t offset, uint64_t length, void* out) const {
  const std::string range = fmt::format("Range: bytes={}-{}", offset, offset + length - 1);
  auto r = store_->Send("GET", path_, "", {range}, {}, true);
  if (r.status != 206 && r.status != 200) store_->Fail("GET", path_, r);
  if (r.status == 206 && !r.content_range.empty() && PartialAnswerRange(r, path_).first != offset)
    ThrowIo("GET '{}': bytes from offset {} were asked for, the answer's Content-Range '{}' starts elsewhere", path_,
            offset, r.content_range);
  // A server that ignores ranges answers 200 with the whole object.
  const std::string_view got = r.status == 200 && r.body.size() == size_
                                   ? std::string_view(r.body).substr(size_t(offset), size_t(length))
                                   : std::string_view(r.body);
  if (got.size() != length)
    ThrowCorrupt("'{}': {} bytes at offset {} were asked for, the server sent {}", path_, length, offset, got.size());
  std::memcpy(out, got.data(), length);
  store_->CountRead(length);
}

void S3WritableFile::Write(const void* data, uint64_t length) {
  written_ += length;
  if (no_overwrite_) {
    bytes_.append(static_cast<const char*>(data), length);
    return;
  }
  // Parts of exactly the part size, however large the write: memory stays at one part.
  const uint64_t part = store_->config().upload_part_bytes;
  for (auto* p = static_cast<const char*>(data); length > 0;) {
    const uint64_t take = std::min<uint64_t>(length, part - std::min<uint64_t>(part, bytes_.size()));
    bytes_.append(p, take);
    p += take;
    length -= take;
    if (bytes_.size() >= part) SendPart();
  }
}

void S3WritableFile::SendPart() {
  if (upload_id_.empty()) upload_id_ = store_->BeginUpload(path_);
  etags_.push_back(store_->UploadPart(path_, upload_id_, int(etags_.size()) + 1, bytes_));
  bytes_.clear();
}

void S3WritableFile::Finish() {
  if (upload_id_.empty()) {
    if (!store_->PutObject(path_, bytes_, no_overwrite_)) ThrowConflict("'{}' exists already", path_);
  } else {
    if (!bytes_.empty()) SendPart();
    store_->CompleteUpload(path_, upload_id_, etags_);
  }
  finished_ = true;
  bytes_.clear();
}

S3WritableFile::~S3WritableFile() {
  if (finished_ || upload_id_.empty()) return;
  try {
    store_->AbortUpload(path_, upload_id_);
  } catch (...) {
    // The failure being unwound is the one to report; cleanup aborts what is left.
  }
}

}  // namespace

S3Config S3Config::From(const StorageOptions& options) {
  S3Config c;
  c.endpoint = Pick(options, {"aws_endpoint", "aws_endpoint_url", "endpoint", "aws_endpoint_url_s3"},
                    {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"});
  if (std::string region = Pick(options, {"aws_region", "region", "aws_default_region"},
                                {"AWS_REGION", "AWS_DEFAULT_REGION"});
      !region.empty())
    c.region = region;
  c.access_key_id = Pick(options, {"aws_access_key_id", "access_key_id"}, {"AWS_ACCESS_KEY_ID"});
  c.secret_access_key = Pick(options, {"aws_secret_access_key", "secret_access_key"}, {"AWS_SECRET_ACCESS_KEY"});
  c.session_token = Pick(options, {"aws_session_token", "session_token", "token", "aws_token"}, {"AWS_SESSION_TOKEN"});
  if (Truthy(Pick(options, {"aws_skip_signature", "skip_signature"}, {"AWS_SKIP_SIGNATURE"}))) c.access_key_id.clear();
  c.allow_http = Truthy(Pick(options, {"allow_http", "aws_allow_http"}, {"AWS_ALLOW_HTTP"}));
  c.virtual_hosted_style =
      Truthy(Pick(options, {"aws_virtual_hosted_style_request", "virtual_hosted_style_request"},
                  {"AWS_VIRTUAL_HOSTED_STYLE_REQUEST"}));
  if (std::string t = Pick(options, {"timeout", "request_timeout"}, {}); !t.empty()) c.timeout_ms = Millis("timeout", t);
  if (std::string t = Pick(options, {"connect_timeout"}, {}); !t.empty())
    c.connect_timeout_ms = Millis("connect_timeout", t);
  if (std::string n = Pick(options, {"client_max_retries"}, {}); !n.empty()) c.max_retries = std::atoi(n.c_str());
  c.conditional_put = AsciiLower(Pick(options, {"aws_conditional_put", "conditional_put"}, {"AWS_CONDITIONAL_PUT"})) !=
                      "disabled";
  if (std::string n = Pick(options, {"lancelet_upload_part_size"}, {}); !n.empty()) {
    c.upload_part_bytes = Bytes("lancelet_upload_part_size", n);
    if (c.upload_part_bytes < (5 << 20))
      ThrowInvalid("storage option 'lancelet_upload_part_size' = '{}' is below S3's 5 MiB minimum part", n);
  }
  if (std::string n = Pick(options, {"lancelet_read_block_size"}, {}); !n.empty())
    c.read_block_bytes = Bytes("lancelet_read_block_size", n);
  if (std::string n = Pick(options, {"lancelet_read_cache_size"}, {}); !n.empty())
    c.read_cache_bytes = Bytes("lancelet_read_cache_size", n);
  if (std::string n = Pick(options, {"lancelet_coalesce_gap"}, {}); !n.empty())
    c.read_coalesce_gap_bytes = Bytes("lancelet_coalesce_gap", n);
  if (std::string n = Pick(options, {"lancelet_max_concurrent_reads"}, {}); !n.empty())
    c.max_concurrent_reads = int(std::max<uint64_t>(1, Bytes("lancelet_max_concurrent_reads", n)));
  return c;
}

std::string S3Config::Fingerprint() const {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", endpoint, region, access_key_id,
                     secret_access_key, session_token, allow_http, virtual_hosted_style, timeout_ms,
                     connect_timeout_ms, max_retries, conditional_put, upload_part_bytes, read_block_bytes,
                     read_cache_bytes, read_coalesce_gap_bytes, max_concurrent_reads);
}

std::shared_ptr<ObjectStore> S3StoreFor(const std::string& bucket, const S3Config& config) {
  // Kept for the process, as the local store is: the session's caches are keyed by store,
  // and a store's handles keep their connections open for the next request.
  static std::mutex mutex;
  static auto* stores = new std::map<std::string, std::shared_ptr<ObjectStore>>;  // never destroyed
  const std::string key = bucket + "\n" + config.Fingerprint();
  std::lock_guard lock(mutex);
  auto& store = (*stores)[key];
  if (!store) store = std::make_shared<S3Store>(bucket, config);
  return store;
}

}  // namespace lancelet::io
