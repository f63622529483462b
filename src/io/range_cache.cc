#include "io/range_cache.h"

#include <algorithm>
#include <cstring>

namespace lancelet::io {

RangeCache::Index::const_iterator RangeCache::Find(const std::string& path, uint64_t offset, uint64_t length) const {
  // A covering range further back is missed, which costs a request, not a wrong answer.
  constexpr int kLookBack = 8;
  auto it = by_start_.upper_bound({path, offset});
  for (int k = 0; k < kLookBack && it != by_start_.begin(); ++k) {
    --it;
    const Entry& e = *it->second;
    if (e.path != path) break;
    if (offset + length <= e.offset + e.bytes.size()) return it;
  }
  return by_start_.end();
}

bool RangeCache::CopyLocked(const std::string& path, uint64_t offset, uint64_t length, void* out) {
  // One range that holds it all, else up to kPieces ranges that meet (a prefetch stopped
  // where a block fetched earlier begins).
  constexpr size_t kPieces = 4;
  Index::const_iterator pieces[kPieces];
  size_t n = 0;
  for (uint64_t at = offset, end = offset + length; at < end; ++n) {
    auto it = Find(path, at, end - at);
    if (it == by_start_.end()) it = Find(path, at, 1);
    if (it == by_start_.end() || n == kPieces) return false;
    pieces[n] = it;
    at = it->second->offset + it->second->bytes.size();
  }
  for (size_t k = 0; k < n; ++k) {
    const Entry& e = *pieces[k]->second;
    const uint64_t from = std::max(offset, e.offset), to = std::min(offset + length, e.offset + e.bytes.size());
    std::memcpy(static_cast<char*>(out) + (from - offset), e.bytes.data() + (from - e.offset), to - from);
    recent_.splice(recent_.begin(), recent_, pieces[k]->second);
  }
  return true;
}

bool RangeCache::Lookup(const std::string& path, uint64_t offset, uint64_t length, void* out) {
  std::lock_guard lock(mutex_);
  return CopyLocked(path, offset, length, out);
}

bool RangeCache::LookupOrClaim(const std::string& path, uint64_t offset, uint64_t length, void* out, uint64_t start,
                               uint64_t end, std::unique_ptr<Fetch>* claim) {
  std::shared_future<void> wait;
  {
    std::lock_guard lock(mutex_);
    if (CopyLocked(path, offset, length, out)) return true;
    for (const InFlight& f : in_flight_)
      if (f.path == path && f.start <= offset && offset + length <= f.end) {
        wait = f.done;
        break;
      }
    if (!wait.valid()) {
      std::promise<void> done;
      in_flight_.push_back({path, start, end, done.get_future().share()});
      claim->reset(new Fetch(*this, &in_flight_.back(), std::move(done)));
      return false;
    }
  }
  wait.wait();
  return Lookup(path, offset, length, out);
}

void RangeCache::Finish(const InFlight* fetch) {
  std::lock_guard lock(mutex_);
  in_flight_.remove_if([&](const InFlight& f) { return &f == fetch; });
}

RangeCache::Fetch::~Fetch() {
  if (finished_) return;
  cache_.Finish(entry_);
  done_.set_value();
}

void RangeCache::Fetch::Done(std::string bytes) {
  cache_.Insert(entry_->path, entry_->start, std::move(bytes));
  cache_.Finish(entry_);
  finished_ = true;
  done_.set_value();
}

std::pair<uint64_t, uint64_t> RangeCache::Uncovered(const std::string& path, uint64_t start, uint64_t end) const {
  std::lock_guard lock(mutex_);
  for (int k = 0; k < 4 && start < end; ++k) {  // ranges holding the first byte
    auto it = Find(path, start, 1);
    if (it == by_start_.end()) break;
    start = std::min(end, it->second->offset + it->second->bytes.size());
  }
  for (int k = 0; k < 4 && start < end; ++k) {  // ranges holding the last byte
    auto it = Find(path, end - 1, 1);
    if (it == by_start_.end()) break;
    end = std::max(start, it->second->offset);
  }
  return {start, end};
}

void RangeCache::Insert(const std::string& path, uint64_t offset, std::string bytes) {
  if (bytes.size() > capacity_) return;
  std::lock_guard lock(mutex_);
  if (auto it = by_start_.find({path, offset}); it != by_start_.end()) {
    bytes_ -= it->second->bytes.size();
    recent_.erase(it->second);
    by_start_.erase(it);
  }
  bytes_ += bytes.size();
  recent_.push_front(Entry{path, offset, std::move(bytes)});
  by_start_[{path, offset}] = recent_.begin();
  while (bytes_ > capacity_) {
    const Entry& last = recent_.back();
    bytes_ -= last.bytes.size();
    by_start_.erase({last.path, last.offset});
    recent_.pop_back();
  }
}

void RangeCache::Forget(const std::string& prefix) {
  std::lock_guard lock(mutex_);
  for (auto it = by_start_.lower_bound({prefix, 0}); it != by_start_.end() && it->first.first.starts_with(prefix);) {
    bytes_ -= it->second->bytes.size();
    recent_.erase(it->second);
    it = by_start_.erase(it);
  }
}

uint64_t RangeCache::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace lancelet::io
