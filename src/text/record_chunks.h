// What the CSV and JSON lines readers share to parse chunks of records on several threads.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>

namespace lancelet::text {

// Up to `count` records taken from the front of `buffered` (the records read while a
// schema was inferred) for a chunk to parse first: shared, as the chunk's task copies.
template <typename Record>
std::shared_ptr<std::deque<Record>> TakeBuffered(std::deque<Record>& buffered, size_t count) {
  auto head = std::make_shared<std::deque<Record>>();
  while (!buffered.empty() && head->size() < count) {
    head->push_back(std::move(buffered.front()));
    buffered.pop_front();
  }
  return head;
}

}  // namespace lancelet::text
