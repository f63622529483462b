// Byte ranges of immutable objects recently fetched from a high-latency store, bounded in
// bytes, the least recently used dropped first. A store that fetches a whole block for a
// small read keeps the block here, so that the reads after it (a page's metadata, then
// its values; a footer, then the column metadata before it) cost no request.
#pragma once

#include <cstdint>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace lancelet::io {

class RangeCache {
 public:
  explicit RangeCache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}
  RangeCache(const RangeCache&) = delete;
  RangeCache& operator=(const RangeCache&) = delete;

  // Copies [offset, offset + length) of `path` to `out` when cached ranges hold all of it
  // (one, or a few that meet); false otherwise.
  bool Lookup(const std::string& path, uint64_t offset, uint64_t length, void* out);
  // [start, end) of `path` less what cached ranges hold at its start and at its end: the
  // bytes a fetch of it still needs (start == end when they hold it all).
  std::pair<uint64_t, uint64_t> Uncovered(const std::string& path, uint64_t start, uint64_t end) const;
  // Keeps `bytes`, the object's bytes from `offset` on (nothing when they exceed the
  // capacity).
  void Insert(const std::string& path, uint64_t offset, std::string bytes);
  // Drops every range of the objects whose names start with `prefix`.
  void Forget(const std::string& prefix);
  uint64_t bytes() const;

  // Single flight: reads of a range that another thread is already fetching wait for it
  // instead of asking again (fields read side by side meet in the same blocks).
  class Fetch;
  // Copies [offset, offset + length) of `path` to `out` from the cache, waiting first for
  // a fetch in flight that will hold it; false when neither has it. Otherwise `*claim` is
  // made the fetch of [start, end) (which must hold the range) that the caller now owes:
  // Fetch::Done(bytes) keeps its bytes and wakes those waiting.
  bool LookupOrClaim(const std::string& path, uint64_t offset, uint64_t length, void* out, uint64_t start,
                     uint64_t end, std::unique_ptr<Fetch>* claim);

 private:
  struct Entry {
    std::string path;
    uint64_t offset;
    std::string bytes;
  };
  using Key = std::pair<std::string, uint64_t>;
  using Index = std::map<Key, std::list<struct Entry>::iterator>;
  // The entry holding the range, among the few that start last at or before it (ranges
  // may overlap: a block, then a larger prefetched range around it); end() if none.
  Index::const_iterator Find(const std::string& path, uint64_t offset, uint64_t length) const;
  // Lookup with mutex_ held.
  bool CopyLocked(const std::string& path, uint64_t offset, uint64_t length, void* out);
  struct InFlight {
    std::string path;
    uint64_t start, end;
    std::shared_future<void> done;
  };
  void Finish(const InFlight* fetch);
  mutable std::mutex mutex_;
  std::list<InFlight> in_flight_;
  std::list<Entry> recent_;  // most recently used first
  Index by_start_;
  uint64_t bytes_ = 0;
  const uint64_t capacity_;
};

// A claimed fetch: Done once its bytes are in, or, destroyed without (the fetch failed),
// it wakes the waiters, who then fetch for themselves.
class RangeCache::Fetch {
 public:
  ~Fetch();
  void Done(std::string bytes);

 private:
  friend class RangeCache;
  Fetch(RangeCache& cache, const InFlight* entry, std::promise<void> done)
      : cache_(cache), entry_(entry), done_(std::move(done)) {}
  RangeCache& cache_;
  const InFlight* entry_;
  std::promise<void> done_;
  bool finished_ = false;
};

}  // namespace lancelet::io
