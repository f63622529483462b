// Dataset::Cleanup: removing old versions and the files only they used.
//
// A file is deleted only when no kept version references it. What a version references:
// its manifest; its transaction file; per fragment every data file and every overlay
// data file (the reference once forgot overlays and silently reverted updated cells),
// and its deletion file; every index segment directory. A data file's blob v2 sidecars
// (data/<stem>/*.blob) go with data/<stem>.lance. Files under a base path (a shallow
// clone's source) belong to another dataset and are never touched.
//
// Deletion order: data, deletion, transaction and index files first, the removed
// manifests last. A cleanup killed midway leaves every kept version whole; a removed
// version may have lost files, and running cleanup again finishes removing it.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <set>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "table/dataset_state.h"
#include "table/deletions.h"
#include "table/index_section.h"
#include "table/manifest_store.h"

namespace lancelet {

namespace {

using table::kDataDir;
using table::kDeletionsDir;
using table::kIndicesDir;
using table::kTransactionsDir;
using table::kVersionsDir;

// Unreferenced files younger than this may belong to a commit in progress (the
// reference's UNVERIFIED_THRESHOLD_DAYS).
constexpr int64_t kUnverifiedAgeSeconds = 7 * 24 * 3600;

// Paths relative to the dataset root that a version references; index segments as
// "_indices/<uuid>" (the whole directory).
std::set<std::string> ReferencedPaths(const io::ObjectStore& store, const table::ManifestLocation& location,
                                      const lance::table::Manifest& manifest, const std::string& uri) {
  std::set<std::string> out;
  out.insert(location.path.substr(uri.size() + 1));
  if (!manifest.transaction_file().empty())
    out.insert(io::JoinPath(kTransactionsDir, manifest.transaction_file()));
  auto data_file = [&](const lance::table::DataFile& file) {
    if (!file.has_base_id()) out.insert(io::JoinPath(kDataDir, file.path()));
  };
  for (const auto& f : manifest.fragments()) {
    for (const auto& file : f.files()) data_file(file);
    for (const auto& o : f.overlays()) data_file(o.data_file());
    if (f.has_deletion_file() && !f.deletion_file().has_base_id())
      out.insert(io::JoinPath(kDeletionsDir, table::DeletionFileName(f.id(), f.deletion_file())));
  }
  const auto indices = table::ReadIndexSection(store, location.path, manifest);
  for (const auto& index : indices.indices())
    if (!index.has_base_id()) out.insert(io::JoinPath(kIndicesDir, table::UuidText(index.uuid().uuid())));
  return out;
}

// Versions named by tags (_refs/tags/<name>.json holds {"version": N, ...}).
std::set<uint64_t> TaggedVersions(const io::ObjectStore& store, const std::string& uri) {
  std::set<uint64_t> out;
  std::string dir = io::JoinPath(io::JoinPath(uri, "_refs"), "tags");
  for (const auto& name : store.List(dir)) {
    std::string path = io::JoinPath(dir, name);
    std::string text = store.OpenRead(path)->ReadAll();
    size_t at = text.find("\"version\"");
    if (at != std::string::npos) at = text.find_first_not_of(" \t\r\n", at + 9);
    if (at != std::string::npos && text[at] == ':') at = text.find_first_not_of(" \t\r\n", at + 1);
    if (at == std::string::npos || !std::isdigit(static_cast<unsigned char>(text[at])))
      ThrowCorrupt("tag file '{}' names no version (expected {{\"version\": N, ...}})", path);
    out.insert(std::stoull(text.substr(at)));
  }
  return out;
}

int64_t TimestampSeconds(const lance::table::Manifest& m) { return m.has_timestamp() ? m.timestamp().seconds() : 0; }

}  // namespace

CleanupStats Dataset::Cleanup(const CleanupOptions& options) const {
  if (!options.older_than_seconds && !options.keep_versions)
    ThrowInvalid("cleanup of '{}' needs an age (older than) or a number of versions to keep", state_->uri);
  if (options.keep_versions && *options.keep_versions == 0)
    ThrowInvalid("cleanup of '{}': the number of versions to keep must be at least 1", state_->uri);
  if (options.older_than_seconds && *options.older_than_seconds < 0)
    ThrowInvalid("cleanup of '{}': the age must not be negative", state_->uri);
  io::ObjectStore& store = *state_->store;
  const std::string& uri = state_->uri;
  const auto locations = table::ListManifests(store, uri);
  if (locations.empty()) ThrowNotFound("cleanup: no dataset at '{}'", uri);
  const std::set<uint64_t> tagged = TaggedVersions(store, uri);
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();

  std::set<std::string> kept_paths, removed_paths;
  std::vector<std::string> removed_manifests;
  CleanupStats stats;
  for (size_t i = 0; i < locations.size(); ++i) {
    const auto& loc = locations[i];
    auto manifest = table::ReadManifest(store, loc.path);
    const uint64_t newer = locations.size() - 1 - i;  // versions after this one
    bool remove = newer > 0 && !tagged.count(loc.version);
    if (options.keep_versions) remove &= newer >= *options.keep_versions;
    if (options.older_than_seconds) remove &= now - TimestampSeconds(manifest) > *options.older_than_seconds;
    auto paths = ReferencedPaths(store, loc, manifest, uri);
    if (remove) {
      ++stats.versions_removed;
      removed_manifests.push_back(loc.path.substr(uri.size() + 1));
      removed_paths.insert(paths.begin(), paths.end());
    } else {
      kept_paths.insert(paths.begin(), paths.end());
    }
  }

  // Files to delete: those only removed versions reference, and unreferenced ones old
  // enough (or any age, when asked) that no commit in progress can be writing them.
  std::vector<std::string> doomed;
  std::set<std::string> manifests(removed_manifests.begin(), removed_manifests.end());
  for (const auto& p : removed_paths)
    if (!kept_paths.count(p) && !manifests.count(p)) doomed.push_back(p);
  auto unverified = [&](const std::string& relative) {
    if (kept_paths.count(relative) || removed_paths.count(relative)) return false;
    if (options.delete_unverified) return true;
    auto info = store.Head(io::JoinPath(uri, relative));
    return info && now - info->modified_seconds > kUnverifiedAgeSeconds;
  };
  constexpr std::string_view kDataSuffix = ".lance";
  auto is_data_file = [&](const std::string& relative) {
    return relative.rfind(std::string(kDataDir) + "/", 0) == 0 && relative.size() > kDataSuffix.size() &&
           relative.compare(relative.size() - kDataSuffix.size(), kDataSuffix.size(), kDataSuffix) == 0;
  };
  for (const char* dir : {kDataDir, kDeletionsDir, kTransactionsDir})
    for (const auto& name : store.List(io::JoinPath(uri, dir))) {
      std::string relative = io::JoinPath(dir, name);
      if (std::string_view(dir) == kDataDir && name.find('.') == std::string::npos) {
        // A sidecar directory (data files are <stem>.lance, temporary files <name>.tmp-<n>):
        // judged as its data file, which may be gone already.
        const std::string data_file = relative + std::string(kDataSuffix);
        if (!kept_paths.count(data_file) && !removed_paths.count(data_file) && unverified(relative))
          doomed.push_back(data_file);
        continue;
      }
      if (unverified(relative)) doomed.push_back(relative);
    }
  for (const auto& name : store.List(io::JoinPath(uri, kIndicesDir))) {
    std::string relative = io::JoinPath(kIndicesDir, name);
    if (unverified(relative)) doomed.push_back(relative);
  }

  auto remove_file = [&](const std::string& relative) {
    std::string path = io::JoinPath(uri, relative);
    auto info = store.Head(path);
    if (!info) return;
    if (!options.dry_run) store.Delete(path);
    ++stats.files_removed;
    stats.bytes_freed += info->size;
    stats.removed.push_back(relative);
  };
  // Every file of the directory `relative`, then the directory.
  auto remove_dir = [&](const std::string& relative) {
    const std::string dir = io::JoinPath(uri, relative);
    for (const auto& name : store.List(dir)) remove_file(io::JoinPath(relative, name));
    if (!options.dry_run) store.DeleteDirIfEmpty(dir);
  };
  std::sort(doomed.begin(), doomed.end());
  doomed.erase(std::unique(doomed.begin(), doomed.end()), doomed.end());
  for (const auto& relative : doomed) {
    if (relative.rfind(std::string(kIndicesDir) + "/", 0) == 0) {
      remove_dir(relative);  // an index segment
    } else {
      remove_file(relative);
      if (is_data_file(relative)) remove_dir(relative.substr(0, relative.size() - kDataSuffix.size()));
    }
  }
  for (const auto& relative : removed_manifests) remove_file(relative);
  return stats;
}

}  // namespace lancelet
