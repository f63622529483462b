#include "table/tags.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "lancelet/error.h"
#include "table/manifest_store.h"

namespace lancelet::table {

namespace {

std::string TagsDir(const std::string& uri) { return io::JoinPath(io::JoinPath(uri, "_refs"), "tags"); }
std::string TagPath(const std::string& uri, const std::string& name) {
  return io::JoinPath(TagsDir(uri), name + ".json");
}

bool IsTagChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
         c == '_';
}

TagInfo ParseTag(const std::string& path, const std::string& name, const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    ThrowCorrupt("tag file '{}' is not a JSON object (expected {{\"version\": N, \"manifestSize\": B}})", path);
  auto version = j.find("version");
  if (version == j.end() || !version->is_number_unsigned())
    ThrowCorrupt("tag file '{}' names no version (expected {{\"version\": N, ...}})", path);
  TagInfo tag{name, version->get<uint64_t>(), 0};
  // lance writes manifestSize; an older spelling is read too.
  for (const char* key : {"manifestSize", "manifest_size"}) {
    auto size = j.find(key);
    if (size != j.end() && size->is_number_unsigned()) tag.manifest_size = size->get<uint64_t>();
  }
  return tag;
}

// Now as the reference writes its tag times: RFC 3339 UTC with nanoseconds.
std::string NowText() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  int64_t nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
  time_t secs = time_t(nanos / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char day[32];
  std::strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:09}Z", day, nanos % 1000000000);
}

// The tag file's text for `version`, which must exist, with the reference's keys and
// order. An update keeps the tag's createdAt and metadata (`before`, its old text).
std::string TagText(const io::ObjectStore& store, const std::string& uri, const std::string& name, uint64_t version,
                    const nlohmann::ordered_json* before = nullptr) {
  auto location = FindManifest(store, uri, version);
  auto info = location ? store.Head(location->path) : std::nullopt;
  if (!info) ThrowNotFound("cannot tag '{}' as version {} of '{}': there is no such version", name, version, uri);
  const std::string now = NowText();
  nlohmann::ordered_json j;
  j["branch"] = nullptr;
  j["version"] = version;
  j["createdAt"] = before && before->contains("createdAt") ? (*before)["createdAt"] : nlohmann::ordered_json(now);
  j["updatedAt"] = now;
  j["manifestSize"] = info->size;
  j["metadata"] = before && before->contains("metadata") ? (*before)["metadata"] : nlohmann::ordered_json::object();
  return j.dump(2);
}

void RequireTag(const io::ObjectStore& store, const std::string& uri, const std::string& name) {
  CheckTagName(name);
  if (!store.Head(TagPath(uri, name))) ThrowNotFound("tag '{}' does not exist in '{}'", name, uri);
}

}  // namespace

void CheckTagName(const std::string& name) {
  auto bad = [&](const char* why) { ThrowInvalid("tag name '{}' {}", EscapeForMessage(name), why); };
  if (name.empty()) ThrowInvalid("a tag name must not be empty");
  for (char c : name)
    if (!IsTagChar(c)) bad("may hold only letters, digits, '.', '-' and '_'");
  if (name.front() == '.' || name.back() == '.') bad("must not begin or end with '.'");
  if (name.find("..") != std::string::npos) bad("must not hold \"..\"");
  if (name.ends_with(".lock")) bad("must not end with \".lock\"");
}

std::vector<TagInfo> ListTags(const io::ObjectStore& store, const std::string& uri) {
  std::vector<TagInfo> out;
  const std::string dir = TagsDir(uri);
  for (const auto& file : store.List(dir)) {
    if (!file.ends_with(".json")) continue;
    std::string path = io::JoinPath(dir, file);
    out.push_back(ParseTag(path, file.substr(0, file.size() - 5), store.ReadObject(path)));
  }
  std::sort(out.begin(), out.end(), [](const TagInfo& a, const TagInfo& b) { return a.name < b.name; });
  return out;
}

TagInfo GetTag(const io::ObjectStore& store, const std::string& uri, const std::string& name) {
  RequireTag(store, uri, name);
  std::string path = TagPath(uri, name);
  return ParseTag(path, name, store.ReadObject(path));
}

std::set<uint64_t> TaggedVersions(const io::ObjectStore& store, const std::string& uri) {
  std::set<uint64_t> out;
  for (const auto& tag : ListTags(store, uri)) out.insert(tag.version);
  return out;
}

void CreateTag(io::ObjectStore& store, const std::string& uri, const std::string& name, uint64_t version) {
  CheckTagName(name);
  std::string text = TagText(store, uri, name, version);
  store.CreateDir(TagsDir(uri));
  if (!store.PutIfAbsent(TagPath(uri, name), text))
    ThrowInvalid("tag '{}' already exists in '{}' (update it, or delete it first)", name, uri);
}

void UpdateTag(io::ObjectStore& store, const std::string& uri, const std::string& name, uint64_t version) {
  RequireTag(store, uri, name);
  const std::string path = TagPath(uri, name);
  auto before = nlohmann::ordered_json::parse(store.ReadObject(path), nullptr, false);
  if (!before.is_object()) before = nlohmann::ordered_json::object();
  store.Put(path, TagText(store, uri, name, version, &before));
}

void DeleteTag(io::ObjectStore& store, const std::string& uri, const std::string& name) {
  RequireTag(store, uri, name);
  store.Delete(TagPath(uri, name));
}

}  // namespace lancelet::table
