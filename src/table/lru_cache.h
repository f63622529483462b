// A thread-safe least-recently-used cache of shared immutable values, bounded by a cost
// (entries, bytes: the caller decides). Used for what a dataset version reads again and
// again: opened data files and small overlay value columns.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <functional>
#include <unordered_map>
#include <utility>

namespace lancelet::table {

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class LruCache {
 public:
  explicit LruCache(uint64_t capacity) : capacity_(capacity) {}

  // The value under `key`; on a miss, load() -> std::pair<Value, uint64_t cost> makes it.
  // load runs outside the lock, so two threads may both load a key; the first to finish
  // is kept. A value costing more than the whole capacity is returned but not kept.
  template <typename Load>
  Value GetOrLoad(const Key& key, Load&& load) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = index_.find(key); it != index_.end()) {
        recent_.splice(recent_.begin(), recent_, it->second);
        return it->second->value;
      }
    }
    auto [value, cost] = load();
    std::lock_guard lock(mutex_);
    if (cost > capacity_) {
      if (auto it = index_.find(key); it != index_.end()) return it->second->value;
      return value;
    }
    recent_.push_front(Entry{key, value, cost});
    auto [slot, added] = index_.try_emplace(key, recent_.begin());  // one hash for the check and the insert
    if (!added) {  // another thread loaded it meanwhile: theirs is kept
      recent_.pop_front();
      return slot->second->value;
    }
    used_ += cost;
    while (used_ > capacity_) {
      used_ -= recent_.back().cost;
      index_.erase(recent_.back().key);
      recent_.pop_back();
    }
    return value;
  }

  void Clear() {
    std::lock_guard lock(mutex_);
    index_.clear();
    recent_.clear();
    used_ = 0;
  }

  // Entries kept now.
  size_t size() const {
    std::lock_guard lock(mutex_);
    return recent_.size();
  }

 private:
  struct Entry {
    Key key;
    Value value;
    uint64_t cost;
  };
  const uint64_t capacity_;
  uint64_t used_ = 0;
  mutable std::mutex mutex_;
  std::list<Entry> recent_;  // most recently used first
  std::unordered_map<Key, typename std::list<Entry>::iterator, Hash> index_;
};

}  // namespace lancelet::table
