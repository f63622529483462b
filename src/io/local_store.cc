// LocalStore: the ObjectStore over a POSIX filesystem.
//
// Atomicity: objects are written to a unique temporary name in the same directory and
// then published. Put uses rename(2) (replace); PutIfAbsent and no-overwrite writers use
// link(2), which fails with EEXIST if the target exists, so exactly one of several
// racing writers creates a given path.
//
// Durability: like the reference implementation, lancelet relies on the operating system
// to write data back and does not fsync by default (an fsync per file costs more than a
// small overlay commit itself). With LANCELET_SYNC=1 in the environment every object is
// fsync'd before it is published and Sync() flushes the filesystem (syncfs(2)) before a
// manifest makes the new files visible.
//
// Small random reads: a file that has served kReadsBeforeMapping reads of at most
// kSmallReadBytes is mapped read-only, and later small reads copy from the mapping. A
// pread costs a system call and a page-cache lookup per call, several times the copy of
// a 3 KB vector; the mapping costs one mmap and, once its pages are mapped, nothing per
// read. Large reads stay on pread, which needs no page faults. This relies on what the
// format guarantees: data files are immutable, replaced only under new names and never
// truncated (a truncated mapped file would fault with SIGBUS). LANCELET_MMAP=0 keeps
// every read on pread, for filesystems where mapping is unwise.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>

#include "io/object_store.h"
#include "lancelet/error.h"

namespace lancelet::io {

namespace {

// Appends `part` after a '/' unless `out` is empty or already ends in one.
void AppendPathPart(std::string& out, std::string_view part) {
  if (!out.empty() && out.back() != '/') out += '/';
  out += part;
}

}  // namespace

// One allocation each: a scan builds a path for every overlay file it opens.
std::string JoinPath(std::string_view a, std::string_view b) {
  std::string out;
  out.reserve(a.size() + b.size() + 1);
  out += a;
  AppendPathPart(out, b);
  return out;
}

std::string JoinPath(std::string_view a, std::string_view b, std::string_view c) {
  std::string out;
  out.reserve(a.size() + b.size() + c.size() + 2);
  out += a;
  AppendPathPart(out, b);
  AppendPathPart(out, c);
  return out;
}

std::string ReadableFile::Read(uint64_t offset, uint64_t length) const {
  std::string out(length, '\0');
  ReadAt(offset, length, out.data());
  return out;
}

void ObjectStore::Put(const std::string& path, std::string_view bytes) {
  auto w = OpenWrite(path, /*no_overwrite=*/false);
  w->Write(bytes);
  w->Finish();
}

namespace {

[[noreturn]] void ThrowErrno(const char* what, const std::string& path) {
  int e = errno;
  if (e == ENOENT) ThrowNotFound("{} '{}': no such file or directory", what, path);
  ThrowIo("{} '{}': {}", what, path, std::strerror(e));
}

bool EnvFlag(const char* name, bool unset) {
  const char* v = std::getenv(name);
  if (!v || !*v) return unset;
  return std::string(v) != "0";
}

bool SyncEnabled() {
  static const bool enabled = EnvFlag("LANCELET_SYNC", false);
  return enabled;
}

bool MappingEnabled() {
  static const bool enabled = EnvFlag("LANCELET_MMAP", true);
  return enabled;
}

constexpr uint64_t kSmallReadBytes = 64 << 10;
constexpr uint64_t kReadsBeforeMapping = 64;

std::string TempName(const std::string& path) {
  thread_local std::mt19937_64 rng{std::random_device{}() ^ uint64_t(getpid())};
  return path + ".tmp-" + std::to_string(rng());
}

class LocalReadableFile final : public ReadableFile {
 public:
  // `size_known` says whether `size` came from the file itself (fstat) or from the caller.
  LocalReadableFile(std::string path, int fd, uint64_t size, IoStats& stats, bool size_known = true)
      : path_(std::move(path)), fd_(fd), size_(size), stats_(stats), size_checked_(size_known) {}
  ~LocalReadableFile() override {
    if (const char* map = map_.load()) ::munmap(const_cast<char*>(map), size_);
    ::close(fd_);
  }
  const std::string& path() const override { return path_; }
  uint64_t size() const override { return size_; }
  void ReadAt(uint64_t offset, uint64_t length, void* out) const override {
    if (offset > size_ || length > size_ - offset)
      ThrowCorrupt("'{}': read of {} bytes at offset {} is past the end of the file ({} bytes)", path_, length,
                   offset, size_);
    stats_.bytes_read += length;
    stats_.read_calls += 1;
    if (length <= kSmallReadBytes) {
      if (const char* map = Mapping()) {
        std::memcpy(out, map + offset, length);
        return;
      }
    }
    auto* dst = static_cast<char*>(out);
    uint64_t done = 0;
    while (done < length) {
      ssize_t n = ::pread(fd_, dst + done, length - done, off_t(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        ThrowErrno("reading", path_);
      }
      if (n == 0) ThrowCorrupt("'{}': file ended at offset {} while reading", path_, offset + done);
      done += uint64_t(n);
    }
  }

 private:
  // The whole file mapped, once it has had enough small reads; null before, or when
  // mapping is off or failed (reads then stay on pread).
  const char* Mapping() const {
    const char* map = map_.load(std::memory_order_acquire);
    if (map || size_ == 0 || !MappingEnabled()) return map;
    if (small_reads_.fetch_add(1, std::memory_order_relaxed) + 1 < kReadsBeforeMapping) return nullptr;
    std::lock_guard lock(map_mutex_);
    map = map_.load(std::memory_order_relaxed);
    if (map || map_failed_) return map;
    // A size taken on trust is checked before mapping: touching a mapped page past the
    // real end would raise SIGBUS, where pread reports a short file.
    struct stat st;
    if (!size_checked_ && (::fstat(fd_, &st) != 0 || uint64_t(st.st_size) < size_)) {
      map_failed_ = true;
      return nullptr;
    }
    void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
    if (mapped == MAP_FAILED) {
      map_failed_ = true;
      return nullptr;
    }
    map = static_cast<const char*>(mapped);
    map_.store(map, std::memory_order_release);
    return map;
  }

  std::string path_;
  int fd_;
  uint64_t size_;
  IoStats& stats_;
  mutable std::atomic<const char*> map_{nullptr};
  mutable std::atomic<uint64_t> small_reads_{0};
  mutable std::mutex map_mutex_;
  mutable bool map_failed_ = false;
  const bool size_checked_;
};

class LocalWritableFile final : public WritableFile {
 public:
  LocalWritableFile(std::string path, bool no_overwrite, IoStats& stats)
      : path_(std::move(path)), temp_(TempName(path_)), no_overwrite_(no_overwrite), stats_(stats) {
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) ThrowErrno("creating", temp_);
  }
  ~LocalWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
    if (!finished_) ::unlink(temp_.c_str());
  }
  void Write(const void* data, uint64_t length) override {
    const auto* src = static_cast<const char*>(data);
    uint64_t done = 0;
    while (done < length) {
      ssize_t n = ::write(fd_, src + done, length - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        ThrowErrno("writing", temp_);
      }
      done += uint64_t(n);
    }
    position_ += length;
    stats_.bytes_written += length;
  }
  uint64_t position() const override { return position_; }
  void Finish() override {
    if (SyncEnabled() && ::fsync(fd_) != 0) ThrowErrno("syncing", temp_);
    ::close(fd_);
    fd_ = -1;
    if (no_overwrite_) {
      if (::link(temp_.c_str(), path_.c_str()) != 0) {
        if (errno == EEXIST) ThrowConflict("'{}' already exists", path_);
        ThrowErrno("publishing", path_);
      }
      ::unlink(temp_.c_str());
    } else if (::rename(temp_.c_str(), path_.c_str()) != 0) {
      ThrowErrno("publishing", path_);
    }
    finished_ = true;
  }

 private:
  std::string path_, temp_;
  bool no_overwrite_;
  IoStats& stats_;
  int fd_ = -1;
  uint64_t position_ = 0;
  bool finished_ = false;
};

// flock(2) on the directory itself: no lock file for other tools to trip over, and the
// kernel drops the lock when its holder dies.
class FlockedDirectory final : public DirectoryLock {
 public:
  explicit FlockedDirectory(int fd) : fd_(fd) {}
  ~FlockedDirectory() override { ::close(fd_); }

 private:
  int fd_;
};

class LocalStore final : public ObjectStore {
  int OpenForReading(const std::string& path) const {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) ThrowErrno("opening", path);
    stats_.opens += 1;
    return fd;
  }

 public:
  std::unique_ptr<ReadableFile> OpenRead(const std::string& path) const override {
    const int fd = OpenForReading(path);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      ThrowErrno("inspecting", path);
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      ThrowInvalid("'{}' is a directory, not a file", path);
    }
    return std::make_unique<LocalReadableFile>(path, fd, uint64_t(st.st_size), stats_);
  }
  // No fstat: a file shorter than `known_size` fails its read past the end ("file ended
  // at offset"), and a directory fails its first read.
  std::unique_ptr<ReadableFile> OpenRead(const std::string& path, uint64_t known_size) const override {
    if (known_size == 0) return OpenRead(path);
    return std::make_unique<LocalReadableFile>(path, OpenForReading(path), known_size, stats_, /*size_known=*/false);
  }
  std::unique_ptr<WritableFile> OpenWrite(const std::string& path, bool no_overwrite) override {
    return std::make_unique<LocalWritableFile>(path, no_overwrite, stats_);
  }
  // A stream of the file itself, so that a pipe or a device reads too.
  std::unique_ptr<std::istream> OpenStream(const std::string& path) const override {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) ThrowNotFound("{}: no such file", path);
    auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
    if (!*file) ThrowIo("{}: cannot open: {}", path, std::strerror(errno));
    stats_.opens += 1;
    return file;
  }
  void DeleteTree(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) ThrowIo("removing '{}': {}", dir, ec.message());
  }
  bool PutIfAbsent(const std::string& path, std::string_view bytes) override {
    auto w = OpenWrite(path, /*no_overwrite=*/true);
    w->Write(bytes);
    try {
      w->Finish();
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kConflict) return false;
      throw;
    }
    return true;
  }
  bool Exists(const std::string& path) const override {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
  }
  std::vector<std::string> List(const std::string& dir) const override {
    std::vector<std::string> out;
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
      if (errno == ENOENT) return out;
      ThrowErrno("listing", dir);
    }
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") out.push_back(std::move(name));
    }
    ::closedir(d);
    return out;
  }
  std::optional<ObjectInfo> Head(const std::string& path) const override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return std::nullopt;
      ThrowErrno("inspecting", path);
    }
    return ObjectInfo{uint64_t(st.st_size), int64_t(st.st_mtime)};
  }
  void Delete(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) ThrowErrno("deleting", path);
  }
  void Sync(const std::string& dir) override {
    if (!SyncEnabled()) return;
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) ThrowErrno("opening", dir);
    int rc = ::syncfs(fd);
    ::close(fd);
    if (rc != 0) ThrowErrno("syncing", dir);
  }
  std::unique_ptr<DirectoryLock> LockDirectory(const std::string& dir, LockMode mode) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) ThrowErrno("opening", dir);
    int rc;
    do rc = ::flock(fd, mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int err = errno;
      ::close(fd);
      // Filesystems without flock (some network mounts) leave writers to their checks.
      if (err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS) return nullptr;
      errno = err;
      ThrowErrno("locking", dir);
    }
    return std::make_unique<FlockedDirectory>(fd);
  }
  bool DeleteDirIfEmpty(const std::string& dir) override {
    if (::rmdir(dir.c_str()) == 0) return true;
    if (errno == ENOENT || errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR) return false;
    ThrowErrno("removing directory", dir);
  }
  void CreateDir(const std::string& dir) override {
    std::string partial;
    size_t pos = 0;
    while (pos != std::string::npos) {
      pos = dir.find('/', pos + 1);
      partial = dir.substr(0, pos);
      if (partial.empty()) continue;
      if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) ThrowErrno("creating directory", partial);
    }
  }
};

}  // namespace

void RemoveQuietly(ObjectStore& store, const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    try {
      store.Delete(p);
    } catch (const Error&) {
    }
  }
}

std::shared_ptr<ObjectStore> MakeLocalStore() { return std::make_shared<LocalStore>(); }

const std::shared_ptr<ObjectStore>& DefaultLocalStore() {
  static const std::shared_ptr<ObjectStore> store = MakeLocalStore();
  return store;
}

}  // namespace lancelet::io
