// The storage boundary: the only code that touches files. Everything above it works on
// any ObjectStore, so an object-store backend can replace LocalStore later.
//
// Paths are '/'-separated strings. For LocalStore they are filesystem paths.
#pragma once

#include <atomic>
#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lancelet/storage_options.h"

namespace lancelet::io {

// One piece of a batched read: `length` bytes at `offset`, to `out`.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  void* out = nullptr;
};

// Random access to an immutable object.
class ReadableFile {
 public:
  virtual ~ReadableFile() = default;
  virtual const std::string& path() const = 0;
  virtual uint64_t size() const = 0;
  // Reads exactly `length` bytes at `offset`; throws Corrupt (naming the path) if the
  // object is shorter, Io on an OS error.
  virtual void ReadAt(uint64_t offset, uint64_t length, void* out) const = 0;
  // Every range, in any order, as ReadAt would. A store with costly requests merges
  // nearby ranges and fetches them concurrently; this default reads them one by one.
  virtual void ReadRanges(std::span<const ByteRange> ranges) const {
    for (const ByteRange& r : ranges) ReadAt(r.offset, r.length, r.out);
  }
  // A hint: these ranges (their `out` unused) will be read soon. A store with costly
  // requests fetches them now, merged and concurrently, keeps them for the reads and
  // returns true; this default does nothing and returns false. With no ranges it only
  // answers whether the store acts on hints.
  virtual bool Prefetch(std::span<const ByteRange> /*ranges*/) const { return false; }
  std::string Read(uint64_t offset, uint64_t length) const;
  std::string ReadAll() const { return Read(0, size()); }
};

// A new object written front to back. It becomes visible only on Finish(); until then
// readers see nothing. Destroying an unfinished writer removes what it wrote.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual void Write(const void* data, uint64_t length) = 0;
  void Write(std::string_view bytes) { Write(bytes.data(), bytes.size()); }
  virtual uint64_t position() const = 0;
  // Makes the object visible. Fails with Conflict if `no_overwrite` was requested at
  // open and the path now exists.
  virtual void Finish() = 0;
};

struct IoStats {
  std::atomic<uint64_t> opens{0};  // objects opened for reading
  std::atomic<uint64_t> bytes_read{0};
  std::atomic<uint64_t> read_calls{0};
  std::atomic<uint64_t> bytes_written{0};
};

// Held by its owner until destroyed (see ObjectStore::LockDirectory).
// An ostream over a WritableFile, through a buffer: text and IPC writers write files of
// any store with it. Finish() publishes the file; left unfinished it is abandoned, as its
// WritableFile is. A store error is thrown from the write that met it (badbit rethrows).
class ObjectOutputStream final : public std::ostream {
 public:
  explicit ObjectOutputStream(std::unique_ptr<WritableFile> file);
  ~ObjectOutputStream() override;
  void Finish();

 private:
  class Buffer;
  std::unique_ptr<Buffer> buffer_;
};

class DirectoryLock {
 public:
  virtual ~DirectoryLock() = default;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;
  virtual std::unique_ptr<ReadableFile> OpenRead(const std::string& path) const = 0;
  // The same for a caller that knows the object's size (a manifest records its data
  // files'): the store may then skip asking for it. Reads past the real end still fail.
  virtual std::unique_ptr<ReadableFile> OpenRead(const std::string& path, uint64_t known_size) const {
    (void)known_size;
    return OpenRead(path);
  }
  // A whole object's bytes (a manifest, a deletion file, a tag): NotFound as OpenRead
  // when it is missing. A store with costly requests reads it in one.
  virtual std::string ReadObject(const std::string& path) const { return OpenRead(path)->ReadAll(); }
  virtual std::unique_ptr<WritableFile> OpenWrite(const std::string& path, bool no_overwrite) = 0;
  // An object read front to back (text inputs): through OpenRead, in large reads, unless
  // the store has a better way. NotFound "PATH: no such file" when it is missing.
  virtual std::unique_ptr<std::istream> OpenStream(const std::string& path) const;
  // Writes a whole object atomically (readers see the old object or the new, never half).
  void Put(const std::string& path, std::string_view bytes);
  // Atomically creates `path` with `bytes` unless it exists. Returns false if it existed.
  virtual bool PutIfAbsent(const std::string& path, std::string_view bytes) = 0;
  // An object or a directory at `path`. For an object alone ask Head: on S3 a miss here
  // also lists the prefix, to answer for a directory.
  virtual bool Exists(const std::string& path) const = 0;
  // Names (not paths) of the entries directly below `dir`; empty if `dir` is missing.
  virtual std::vector<std::string> List(const std::string& dir) const = 0;
  virtual void Delete(const std::string& path) = 0;
  // Size and last modification time (seconds since the epoch) of an object, or nullopt
  // when it does not exist.
  struct ObjectInfo {
    uint64_t size = 0;
    int64_t modified_seconds = 0;
  };
  virtual std::optional<ObjectInfo> Head(const std::string& path) const = 0;
  // Aborts the unfinished uploads below `dir` begun before `started_before` (seconds since
  // the epoch), which a writer killed mid-file leaves on an object store; returns how many.
  // Stores whose writes are not uploads have none (the default).
  virtual size_t AbortUploads(const std::string& /*dir*/, int64_t /*started_before*/) { return 0; }
  virtual void CreateDir(const std::string& dir) = 0;
  // Removes `dir` if it is an empty directory and returns true; false when it is missing
  // or not empty. Stores without directories keep the default.
  virtual bool DeleteDirIfEmpty(const std::string& /*dir*/) { return false; }
  // Removes `dir` and everything below it (DROP TABLE); nothing when it is missing.
  virtual void DeleteTree(const std::string& dir);
  // Makes every object written so far under `dir` durable, when durability is enabled
  // (LANCELET_SYNC=1); a commit calls it once before publishing its manifest.
  virtual void Sync(const std::string& dir) = 0;
  // An advisory lock on `dir` among the processes of this machine, held until the
  // returned object is destroyed: shared locks coexist, an exclusive one waits for them
  // and excludes them. Commits hold a shared lock on `_versions/` from their last check
  // to their put, cleanups an exclusive one while they remove manifests, so a removal
  // never lands between a writer's check and its put. Stores without locks return null
  // (the default); their writers rely on the check alone.
  enum class LockMode { kShared, kExclusive };
  virtual std::unique_ptr<DirectoryLock> LockDirectory(const std::string& /*dir*/, LockMode /*mode*/) {
    return nullptr;
  }

  // A commit is about to publish into `dir` with PutIfAbsent: a store that must first check
  // the server (S3's probe of conditional writes) may do it now, while the commit writes
  // its other files. Never throws: a failed check is reported by PutIfAbsent.
  virtual void PrepareConditionalPut(const std::string& /*dir*/) {}

  // Whether a request costs a round trip worth hiding (an object store over the network):
  // readers then issue independent reads concurrently (RunConcurrently).
  virtual bool costly_requests() const { return false; }

  IoStats& stats() const { return stats_; }

 protected:
  mutable IoStats stats_;
};

std::shared_ptr<ObjectStore> MakeLocalStore();
// The local store every dataset opened by path shares (its IoStats count the whole
// process), so that what the session caches for one opening serves the next.
const std::shared_ptr<ObjectStore>& DefaultLocalStore();
// An empty store in memory (io/memory_store.cc), and the one `memory://` URIs name.
std::shared_ptr<ObjectStore> MakeMemoryStore();
const std::shared_ptr<ObjectStore>& DefaultMemoryStore();

// Where a URI points: the store that holds it and its path within that store.
struct StoreAndPath {
  std::shared_ptr<ObjectStore> store;
  std::string path;
};
// The store a dataset URI names: a bare path or `file://PATH` the local file system,
// `memory://NAME` the process's in-memory store (the path is the whole URI there, so
// each name is its own tree); trailing slashes are dropped. Any other scheme is refused
// in one line that names it, and so is an option key the reference does not know
// (CheckStorageOptions).
StoreAndPath OpenStore(const std::string& uri, const StorageOptions& options = {});

// `options` with lower-case keys; throws InvalidArgument naming the first key that no
// store of the reference knows (lancelet/storage_options.h).
StorageOptions CheckStorageOptions(const StorageOptions& options);

// Best-effort removal of the files a failed operation wrote: errors are ignored, since
// the operation's own error is the one to report.
void RemoveQuietly(ObjectStore& store, const std::vector<std::string>& paths);

// "a/b" + "c" -> "a/b/c" (an empty `a` gives "c"); the three-part form joins the
// first two, then the third.
std::string JoinPath(std::string_view a, std::string_view b);
std::string JoinPath(std::string_view a, std::string_view b, std::string_view c);

}  // namespace lancelet::io
