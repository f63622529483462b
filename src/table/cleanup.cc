// Dataset::Cleanup: removing old versions and the files only they used.
//
// A file is deleted only when no kept version references it. What a version references:
// its manifest; its transaction file; per fragment every data file and every overlay
// data file (the reference once forgot overlays and silently reverted updated cells),
// and its deletion file; every index segment directory. A data file's blob v2 sidecars
// (data/<stem>/*.blob) go with data/<stem>.lance. Files under a base path (a shallow
// clone's source) belong to another dataset and are never touched.
//
// Safety window: a version superseded less than kCleanupSafetySeconds ago may still be
// read by a running scan, or be the read version of a running writer; it stays unless
// the caller forces it (a writer whose read version went recomputes or fails in one
// line, table/commit.cc, but a reader fails).
//
// Order: first a journal (_versions/cleanup-<uuid>.journal) listing everything to
// delete, then the removed manifests, oldest first, then their files, then the journal.
// Each version is thus whole or gone (never a manifest whose files are partly deleted),
// whenever the cleanup is killed or refused a delete; a later cleanup finishes what a
// journal left behind (the files no version it keeps references).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <set>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "table/commit.h"
#include "table/dataset_state.h"
#include "table/deletions.h"
#include "table/index_section.h"
#include "table/manifest_store.h"
#include "table/tags.h"

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

int64_t TimestampSeconds(const lance::table::Manifest& m) { return m.has_timestamp() ? m.timestamp().seconds() : 0; }

constexpr std::string_view kJournalPrefix = "cleanup-";
constexpr std::string_view kJournalSuffix = ".journal";
constexpr std::string_view kJournalHeader = "lancelet cleanup journal 1";

bool IsJournalName(const std::string& name) {
  return name.size() > kJournalPrefix.size() + kJournalSuffix.size() && name.starts_with(kJournalPrefix) &&
         name.ends_with(kJournalSuffix);
}

// A journal: its header line, then one path (relative to the dataset) per line.
std::string EncodeJournal(const std::vector<std::string>& paths) {
  std::string out = std::string(kJournalHeader) + "\n";
  for (const auto& p : paths) out += p + "\n";
  return out;
}

std::vector<std::string> DecodeJournal(const std::string& text, const std::string& path) {
  std::vector<std::string> out;
  size_t at = 0;
  bool header = true;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos)
      ThrowCorrupt("cleanup journal '{}' ends inside a line at byte {} (a write was cut short)", path, at);
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (header) {
      if (line != kJournalHeader) ThrowCorrupt("cleanup journal '{}' does not start with '{}'", path, kJournalHeader);
      header = false;
      continue;
    }
    // Only paths inside the dataset, never up and out of it.
    if (line.empty() || line.front() == '/' || line.find("..") != std::string::npos)
      ThrowCorrupt("cleanup journal '{}': '{}' at byte {} is not a path inside the dataset", path,
                   EscapeForMessage(line), at - line.size() - 1);
    out.push_back(std::move(line));
  }
  return out;
}

struct ListedVersion {
  table::ManifestLocation location;
  lance::table::Manifest manifest;
};

// Every version with its manifest, oldest first. Versions a concurrent cleanup removes
// while we read are simply gone.
std::vector<ListedVersion> ReadVersions(const io::ObjectStore& store, const std::string& uri) {
  std::vector<ListedVersion> versions;
  for (const auto& loc : table::ListManifests(store, uri)) {
    try {
      versions.push_back({loc, table::ReadManifest(store, loc.path)});
    } catch (const Error& e) {
      if (!table::RemovedMeanwhile(e, store, loc.path)) throw;
    }
  }
  return versions;
}

// The journals that killed or refused cleanups left in _versions/ (dataset-relative),
// with the files they name that no kept version uses appended to `doomed`. Not their
// manifests: a version whose manifest such a cleanup did not get to is whole, and this
// cleanup's rule decides about it.
std::vector<std::string> UnfinishedJournals(const io::ObjectStore& store, const std::string& uri,
                                            const std::set<std::string>& kept_paths, std::vector<std::string>& doomed) {
  const std::string versions_dir = io::JoinPath(uri, kVersionsDir);
  std::vector<std::string> journals;
  for (const auto& name : store.List(versions_dir)) {
    if (!IsJournalName(name)) continue;
    const std::string path = io::JoinPath(versions_dir, name);
    std::string text;
    try {
      text = store.ReadObject(path);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kNotFound) continue;  // its cleanup just finished
      throw;
    }
    for (auto& p : DecodeJournal(text, path))
      if (!kept_paths.count(p) && !p.starts_with(std::string(kVersionsDir) + "/")) doomed.push_back(std::move(p));
    journals.push_back(io::JoinPath(kVersionsDir, name));
  }
  return journals;
}

constexpr std::string_view kDataSuffix = ".lance";

bool IsDataFile(const std::string& relative) {
  return relative.rfind(std::string(kDataDir) + "/", 0) == 0 && relative.size() > kDataSuffix.size() &&
         relative.compare(relative.size() - kDataSuffix.size(), kDataSuffix.size(), kDataSuffix) == 0;
}

// Deletes, counting into `stats` (a dry run only counts): first a journal naming all of
// it, then the removed manifests, oldest first (under the lock that keeps them from
// landing between a writer's check and its put), then the doomed files (an index
// segment's directory whole, a data file with its sidecar directory), then the journals.
void RemoveInOrder(io::ObjectStore& store, const std::string& uri, bool dry_run,
                   const std::vector<std::string>& removed_manifests, const std::vector<std::string>& doomed,
                   const std::vector<std::string>& journals, CleanupStats& stats) {
  auto remove_file = [&](const std::string& relative) {
    std::string path = io::JoinPath(uri, relative);
    auto info = store.Head(path);
    if (!info) return;
    if (!dry_run) store.Delete(path);
    ++stats.files_removed;
    stats.bytes_freed += info->size;
    stats.removed.push_back(relative);
  };
  // Every file of the directory `relative`, then the directory.
  auto remove_dir = [&](const std::string& relative) {
    const std::string dir = io::JoinPath(uri, relative);
    for (const auto& name : store.List(dir)) remove_file(io::JoinPath(relative, name));
    if (!dry_run) store.DeleteDirIfEmpty(dir);
  };
  std::string journal;
  if (!dry_run && (!removed_manifests.empty() || !doomed.empty())) {
    std::vector<std::string> listed = removed_manifests;
    listed.insert(listed.end(), doomed.begin(), doomed.end());
    journal = io::JoinPath(kVersionsDir, std::string(kJournalPrefix) + table::NewUuid() + std::string(kJournalSuffix));
    store.Put(io::JoinPath(uri, journal), EncodeJournal(listed));
  }
  {
    // Not between a writer's last check and its put (see PublishManifest).
    const auto lock = removed_manifests.empty() || dry_run
                          ? nullptr
                          : store.LockDirectory(io::JoinPath(uri, kVersionsDir), io::ObjectStore::LockMode::kExclusive);
    for (const auto& relative : removed_manifests) remove_file(relative);
  }
  for (const auto& relative : doomed) {
    if (relative.rfind(std::string(kIndicesDir) + "/", 0) == 0) {
      remove_dir(relative);  // an index segment
    } else {
      remove_file(relative);
      if (IsDataFile(relative)) remove_dir(relative.substr(0, relative.size() - kDataSuffix.size()));
    }
  }
  if (!dry_run) {
    for (const auto& j : journals) store.Delete(io::JoinPath(uri, j));
    if (!journal.empty()) store.Delete(io::JoinPath(uri, journal));
  }
}

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
  const std::vector<ListedVersion> versions = ReadVersions(store, uri);
  if (versions.empty()) ThrowNotFound("cleanup: no dataset at '{}'", uri);
  const std::set<uint64_t> tagged = table::TaggedVersions(store, uri);
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();

  std::set<std::string> kept_paths, removed_paths;
  std::vector<std::string> removed_manifests;  // oldest first
  CleanupStats stats;
  for (size_t i = 0; i < versions.size(); ++i) {
    const auto& [loc, manifest] = versions[i];
    const uint64_t newer = versions.size() - 1 - i;  // versions after this one
    bool remove = newer > 0 && !tagged.count(loc.version);
    if (options.keep_versions) remove &= newer >= *options.keep_versions;
    if (options.older_than_seconds) remove &= now - TimestampSeconds(manifest) > *options.older_than_seconds;
    if (remove && !options.force && now - TimestampSeconds(versions[i + 1].manifest) < kCleanupSafetySeconds) {
      remove = false;
      ++stats.versions_kept_recent;
    }
    auto paths = ReferencedPaths(store, loc, manifest, uri);
    if (remove) {
      ++stats.versions_removed;
      removed_manifests.push_back(loc.path.substr(uri.size() + 1));
      removed_paths.insert(paths.begin(), paths.end());
    } else {
      kept_paths.insert(paths.begin(), paths.end());
    }
  }

  // Files to delete: those only removed versions reference, those a killed cleanup's
  // journal names and no kept version does, and unreferenced ones old enough (or any
  // age, when asked) that no commit in progress can be writing them.
  std::vector<std::string> doomed;
  std::set<std::string> manifests(removed_manifests.begin(), removed_manifests.end());
  for (const auto& p : removed_paths)
    if (!kept_paths.count(p) && !manifests.count(p)) doomed.push_back(p);
  const std::vector<std::string> journals = UnfinishedJournals(store, uri, kept_paths, doomed);
  auto unverified = [&](const std::string& relative) {
    if (kept_paths.count(relative) || removed_paths.count(relative)) return false;
    if (options.delete_unverified) return true;
    auto info = store.Head(io::JoinPath(uri, relative));
    return info && now - info->modified_seconds > kUnverifiedAgeSeconds;
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
  std::sort(doomed.begin(), doomed.end());
  doomed.erase(std::unique(doomed.begin(), doomed.end()), doomed.end());

  RemoveInOrder(store, uri, options.dry_run, removed_manifests, doomed, journals, stats);
  if (!options.dry_run)
    stats.uploads_aborted = store.AbortUploads(uri, options.delete_unverified ? now + 1 : now - kUnverifiedAgeSeconds);
  return stats;
}

}  // namespace lancelet
