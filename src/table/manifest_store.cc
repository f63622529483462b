#include "table/manifest_store.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "format/little_endian.h"
#include "format/protobuf_logging.h"
#include "lancelet/error.h"
#include "table/legacy_dictionaries.h"

namespace lancelet::table {

namespace {

constexpr char kMagic[4] = {'L', 'A', 'N', 'C'};
constexpr int16_t kManifestMajor = 0;
constexpr int16_t kManifestMinor = 2;
constexpr size_t kFooterSize = 16;
constexpr const char* kExtension = ".manifest";
constexpr size_t kV2Digits = 20;  // V2 names: u64::MAX - version, zero-padded to this width

void AppendMessage(std::string& out, const google::protobuf::MessageLite& message) {
  std::string bytes = message.SerializeAsString();
  format::AppendLE<uint32_t>(out, uint32_t(bytes.size()));
  out += bytes;
}

}  // namespace

std::string ManifestFileNameV2(uint64_t version) {
  return fmt::format("{:0{}}{}", std::numeric_limits<uint64_t>::max() - version, kV2Digits, kExtension);
}

std::string ManifestFileNameV1(uint64_t version) { return fmt::format("{}{}", version, kExtension); }

ManifestNaming NamingOf(const std::string& manifest_path) {
  const std::string name = manifest_path.substr(manifest_path.find_last_of('/') + 1);
  return name.size() == kV2Digits + std::strlen(kExtension) ? ManifestNaming::kV2 : ManifestNaming::kV1;
}

std::string ManifestFileName(uint64_t version, ManifestNaming naming) {
  return naming == ManifestNaming::kV1 ? ManifestFileNameV1(version) : ManifestFileNameV2(version);
}

std::optional<uint64_t> ParseManifestFileName(const std::string& name) {
  size_t ext = std::strlen(kExtension);
  if (name.size() <= ext || name.compare(name.size() - ext, ext, kExtension) != 0) return std::nullopt;
  std::string digits = name.substr(0, name.size() - ext);
  uint64_t number = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty()) return std::nullopt;
  // V2 names are exactly kV2Digits digits; anything else is V1.
  if (digits.size() == kV2Digits) return std::numeric_limits<uint64_t>::max() - number;
  return number;
}

std::vector<ManifestLocation> ListManifests(const io::ObjectStore& store, const std::string& uri) {
  std::string dir = io::JoinPath(uri, kVersionsDir);
  std::vector<ManifestLocation> out;
  for (const auto& name : store.List(dir)) {
    if (auto version = ParseManifestFileName(name)) out.push_back({*version, io::JoinPath(dir, name)});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
  // A dataset converted between naming schemes could hold both names of one version.
  out.erase(std::unique(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.version == b.version; }),
            out.end());
  return out;
}

std::optional<ManifestLocation> LatestManifest(const io::ObjectStore& store, const std::string& uri) {
  auto all = ListManifests(store, uri);
  if (all.empty()) return std::nullopt;
  return all.back();
}

std::optional<ManifestLocation> FindManifest(const io::ObjectStore& store, const std::string& uri,
                                             uint64_t version) {
  std::string dir = io::JoinPath(uri, kVersionsDir);
  for (const auto& name : {ManifestFileNameV2(version), ManifestFileNameV1(version)}) {
    std::string path = io::JoinPath(dir, name);
    if (store.Head(path)) return ManifestLocation{version, path};
  }
  return std::nullopt;
}

lance::table::Manifest ReadManifest(const io::ObjectStore& store, const std::string& path) {
  return ParseManifestFile(path, store.ReadObject(path));
}

lance::table::Manifest ParseManifestFile(const std::string& path, std::string_view file) {
  const uint64_t size = file.size();
  if (size < kFooterSize + 4)
    ThrowCorrupt("manifest '{}' is {} bytes, too short to hold a manifest and its 16-byte footer", path, size);
  const char* footer = file.data() + size - kFooterSize;
  if (std::memcmp(footer + 12, kMagic, 4) != 0)
    ThrowCorrupt("manifest '{}' does not end with the magic \"LANC\"; the file is truncated or not a manifest",
                 path);
  int64_t position = format::LoadLE<int64_t>(footer);
  if (position < 0 || uint64_t(position) + 4 > size - kFooterSize)
    ThrowCorrupt("manifest '{}': manifest position {} is outside the file ({} bytes)", path, position, size);
  const std::string_view body = file.substr(uint64_t(position), size - kFooterSize - uint64_t(position));
  uint32_t length = format::LoadLE<uint32_t>(body.data());
  if (length != body.size() - 4)
    ThrowCorrupt("manifest '{}': recorded length {} at offset {} does not match the {} bytes before the footer",
                 path, length, position, body.size() - 4);
  format::SilenceProtobufLogging();
  lance::table::Manifest manifest;
  if (!manifest.ParseFromArray(body.data() + 4, int(length)))
    ThrowCorrupt("manifest '{}': the manifest message at offset {} does not parse", path, position);
  return manifest;
}

std::string EncodeManifestFile(lance::table::Manifest manifest, const lance::table::Transaction* transaction,
                               const lance::table::IndexSection* indices, const format::LanceSchema* dictionaries) {
  std::string out;
  // The reference's order: legacy dictionaries, index section, transaction, manifest, footer.
  if (HasLegacyDictionaries(manifest)) {
    if (!dictionaries) ThrowInvalid("a manifest with legacy dictionary fields needs their values to be written");
    AppendLegacyDictionaries(*dictionaries, manifest, out);
  }
  manifest.clear_index_section();
  if (indices && indices->indices_size() > 0) {
    manifest.set_index_section(out.size());
    AppendMessage(out, *indices);
  }
  if (transaction) {
    manifest.set_transaction_section(out.size());
    AppendMessage(out, *transaction);
  }
  int64_t position = int64_t(out.size());
  AppendMessage(out, manifest);
  format::AppendLE<int64_t>(out, position);
  format::AppendLE<int16_t>(out, kManifestMajor);
  format::AppendLE<int16_t>(out, kManifestMinor);
  out.append(kMagic, 4);
  return out;
}

bool RemovedMeanwhile(const Error& e, const io::ObjectStore& store, const std::string& manifest_path) {
  return e.kind() == ErrorKind::kNotFound && !store.Head(manifest_path);
}

bool PublishManifest(io::ObjectStore& store, const std::string& uri, const lance::table::Manifest& manifest,
                     const lance::table::IndexSection& indices, const lance::table::Transaction* transaction,
                     ManifestNaming naming, const format::LanceSchema* dictionaries,
                     std::optional<uint64_t> newest_listed) {
  std::string dir = io::JoinPath(uri, kVersionsDir);
  store.CreateDir(dir);
  const std::string bytes = EncodeManifestFile(manifest, transaction, &indices, dictionaries);
  // Put-if-absent alone would publish into a number that a cleanup freed (it removes
  // version N only once a newer one exists), below the newest version, where no reader
  // looks. So, under the shared lock that keeps cleanups' removals out until the put is
  // done: version N - 1 must still be there and no version >= N (the newest never goes
  // away, so a freed N always leaves a newer one behind).
  const auto lock = store.LockDirectory(dir, io::ObjectStore::LockMode::kShared);
  const uint64_t n = manifest.version();
  uint64_t newest;
  if (newest_listed && !lock) {
    newest = *newest_listed;
  } else {
    const auto listed = ListManifests(store, uri);
    newest = listed.empty() ? 0 : listed.back().version;
  }
  if (newest != n - 1) return false;
  return store.PutIfAbsent(io::JoinPath(dir, ManifestFileName(n, naming)), bytes);
}

namespace {
constexpr const char* kVersionHintFile = "latest_version_hint.json";

std::optional<uint64_t> ReadVersionHint(const io::ObjectStore& store, const std::string& path) {
  try {
    std::string text = store.ReadObject(path);
    size_t at = text.find_first_of("0123456789");
    if (at == std::string::npos) return std::nullopt;
    return std::strtoull(text.c_str() + at, nullptr, 10);
  } catch (const Error&) {
    return std::nullopt;
  }
}
}  // namespace

void WriteVersionHint(io::ObjectStore& store, const std::string& uri, uint64_t version) {
  // Best effort, and never backwards: a hint at or past `version` stays. A writer of a
  // newer version may still put its hint between our read and our put; it published
  // before it did, so finding that version afterwards, we put the newest listed one.
  const std::string path = io::JoinPath(io::JoinPath(uri, kVersionsDir), kVersionHintFile);
  // On an object store, where one listing finds the newest version, the reference keeps
  // no hint, and neither does lancelet: it would cost a commit two to four requests.
  if (store.costly_requests()) return;
  try {
    // (A hint naming a version that does not exist is wrong, not newer.)
    if (auto current = ReadVersionHint(store, path);
        current && *current >= version && FindManifest(store, uri, *current))
      return;
    store.Put(path, fmt::format("{{\"version\":{}}}", version));
    if (FindManifest(store, uri, version + 1)) {
      if (auto latest = LatestManifest(store, uri))
        store.Put(path, fmt::format("{{\"version\":{}}}", latest->version));
    }
  } catch (const Error&) {
  }
}

}  // namespace lancelet::table
