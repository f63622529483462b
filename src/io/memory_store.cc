// An ObjectStore in the process's memory, for `memory://` URIs: objects are immutable
// byte strings under '/'-separated names, published whole (a writer buffers until
// Finish), so readers see an object entirely or not at all, as on the local store.
// Directories exist implicitly above every object, or explicitly once created, so that
// List and DeleteDirIfEmpty answer as a file system would. Thread-safe; the directory
// lock is a shared mutex per directory, so commits and cleanups of one process keep
// each other out as they do through flock(2) locally.
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "io/object_store.h"
#include "lancelet/error.h"

namespace lancelet::io {

namespace {

struct Object {
  std::shared_ptr<const std::string> bytes;
  int64_t modified_seconds = 0;
};

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class MemoryReadableFile final : public ReadableFile {
 public:
  MemoryReadableFile(std::string path, std::shared_ptr<const std::string> bytes, IoStats& stats)
      : path_(std::move(path)), bytes_(std::move(bytes)), stats_(stats) {}
  const std::string& path() const override { return path_; }
  uint64_t size() const override { return bytes_->size(); }
  void ReadAt(uint64_t offset, uint64_t length, void* out) const override {
    if (offset > bytes_->size() || length > bytes_->size() - offset)
      ThrowCorrupt("'{}': read of {} bytes at offset {} is past the end of the object ({} bytes)", path_, length,
                   offset, bytes_->size());
    if (length) std::memcpy(out, bytes_->data() + offset, length);
    stats_.read_calls += 1;
    stats_.bytes_read += length;
  }

 private:
  std::string path_;
  std::shared_ptr<const std::string> bytes_;
  IoStats& stats_;
};

class MemoryStore;

class MemoryWritableFile final : public WritableFile {
 public:
  MemoryWritableFile(MemoryStore& store, std::string path, bool no_overwrite)
      : store_(store), path_(std::move(path)), no_overwrite_(no_overwrite) {}
  void Write(const void* data, uint64_t length) override { bytes_.append(static_cast<const char*>(data), length); }
  uint64_t position() const override { return bytes_.size(); }
  void Finish() override;

 private:
  MemoryStore& store_;
  std::string path_;
  bool no_overwrite_;
  std::string bytes_;
};

class MemoryDirectoryLock final : public DirectoryLock {
 public:
  MemoryDirectoryLock(std::shared_ptr<std::shared_mutex> mutex, bool exclusive)
      : mutex_(std::move(mutex)), exclusive_(exclusive) {
    exclusive_ ? mutex_->lock() : mutex_->lock_shared();
  }
  ~MemoryDirectoryLock() override { exclusive_ ? mutex_->unlock() : mutex_->unlock_shared(); }

 private:
  std::shared_ptr<std::shared_mutex> mutex_;
  bool exclusive_;
};

class MemoryStore final : public ObjectStore {
 public:
  std::unique_ptr<ReadableFile> OpenRead(const std::string& path) const override {
    std::lock_guard lock(mutex_);
    auto it = objects_.find(path);
    if (it == objects_.end()) {
      if (IsDirectoryLocked(path)) ThrowInvalid("'{}' is a directory, not a file", path);
      ThrowNotFound("opening '{}': no such object", path);
    }
    stats_.opens += 1;
    return std::make_unique<MemoryReadableFile>(path, it->second.bytes, stats_);
  }
  std::unique_ptr<WritableFile> OpenWrite(const std::string& path, bool no_overwrite) override {
    return std::make_unique<MemoryWritableFile>(*this, path, no_overwrite);
  }
  bool PutIfAbsent(const std::string& path, std::string_view bytes) override {
    return Publish(path, std::string(bytes), /*no_overwrite=*/true);
  }
  bool Exists(const std::string& path) const override {
    std::lock_guard lock(mutex_);
    return objects_.count(path) > 0 || IsDirectoryLocked(path);
  }
  std::vector<std::string> List(const std::string& dir) const override {
    std::lock_guard lock(mutex_);
    const std::string prefix = Prefix(dir);
    std::set<std::string> names;
    auto collect = [&](const std::string& key) {
      const size_t slash = key.find('/', prefix.size());
      names.insert(key.substr(prefix.size(), slash == std::string::npos ? std::string::npos : slash - prefix.size()));
    };
    for (auto it = objects_.lower_bound(prefix); it != objects_.end() && it->first.starts_with(prefix); ++it)
      collect(it->first);
    for (auto it = directories_.lower_bound(prefix); it != directories_.end() && it->starts_with(prefix); ++it)
      collect(*it);
    return {names.begin(), names.end()};
  }
  void Delete(const std::string& path) override {
    std::lock_guard lock(mutex_);
    objects_.erase(path);
  }
  std::optional<ObjectInfo> Head(const std::string& path) const override {
    std::lock_guard lock(mutex_);
    auto it = objects_.find(path);
    if (it == objects_.end()) return std::nullopt;
    return ObjectInfo{it->second.bytes->size(), it->second.modified_seconds};
  }
  void CreateDir(const std::string& dir) override {
    std::lock_guard lock(mutex_);
    directories_.insert(Trimmed(dir));
  }
  bool DeleteDirIfEmpty(const std::string& dir) override {
    std::lock_guard lock(mutex_);
    const std::string prefix = Prefix(dir);
    auto object = objects_.lower_bound(prefix);
    if (object != objects_.end() && object->first.starts_with(prefix)) return false;
    auto below = directories_.lower_bound(prefix);
    if (below != directories_.end() && below->starts_with(prefix)) return false;
    return directories_.erase(Trimmed(dir)) > 0;
  }
  void Sync(const std::string&) override {}
  std::unique_ptr<DirectoryLock> LockDirectory(const std::string& dir, LockMode mode) override {
    std::shared_ptr<std::shared_mutex> mutex;
    {
      std::lock_guard lock(mutex_);
      auto& slot = locks_[Trimmed(dir)];
      if (!slot) slot = std::make_shared<std::shared_mutex>();
      mutex = slot;
    }
    return std::make_unique<MemoryDirectoryLock>(std::move(mutex), mode == LockMode::kExclusive);
  }

  bool Publish(const std::string& path, std::string bytes, bool no_overwrite) {
    std::lock_guard lock(mutex_);
    if (IsDirectoryLocked(path)) ThrowInvalid("writing '{}': it is a directory", path);
    auto [it, inserted] = objects_.try_emplace(path);
    if (!inserted && no_overwrite) return false;
    stats_.bytes_written += bytes.size();
    it->second = Object{std::make_shared<const std::string>(std::move(bytes)), NowSeconds()};
    return true;
  }

 private:
  static std::string Trimmed(std::string dir) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return dir;
  }
  static std::string Prefix(const std::string& dir) { return Trimmed(dir) + "/"; }
  // (mutex_ held)
  bool IsDirectoryLocked(const std::string& path) const {
    const std::string prefix = Prefix(path);
    if (directories_.count(Trimmed(path))) return true;
    auto it = objects_.lower_bound(prefix);
    return it != objects_.end() && it->first.starts_with(prefix);
  }

  mutable std::mutex mutex_;
  std::map<std::string, Object> objects_;
  std::set<std::string> directories_;
  std::map<std::string, std::shared_ptr<std::shared_mutex>> locks_;
};

void MemoryWritableFile::Finish() {
  if (!store_.Publish(path_, std::move(bytes_), no_overwrite_)) ThrowConflict("'{}' already exists", path_);
}

}  // namespace

std::shared_ptr<ObjectStore> MakeMemoryStore() { return std::make_shared<MemoryStore>(); }

const std::shared_ptr<ObjectStore>& DefaultMemoryStore() {
  static const std::shared_ptr<ObjectStore> store = MakeMemoryStore();
  return store;
}

}  // namespace lancelet::io
