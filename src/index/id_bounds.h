// What an id in an index file may be, given the dataset version the index is read with.
//
// Row addresses (fragment << 32 | offset): fragment ids are never reused, so no address
// names a fragment above the manifest's max_fragment_id, and an address in a live
// fragment has an offset below its physical_rows (physical rows never change). An
// address in a fragment that is gone (deleted, or rewritten by compaction) is valid
// and cannot be checked further: indexes keep such rows until they are rebuilt.
// Stable row ids: every id is below the manifest's next_row_id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "index/row_addr_map.h"

namespace lancelet::index {

struct IdBounds {
  bool row_ids = false;          // ids are stable row ids
  uint64_t next_row_id = 0;      // row ids: every id is below it (0: not known)
  std::optional<uint32_t> max_fragment;        // addresses: the highest fragment id ever given
  // Addresses: (live fragment id, its physical rows), ascending by id.
  std::vector<std::pair<uint32_t, uint64_t>> fragment_rows;

  // Why `id` cannot be an id of the dataset ("" when it can).
  std::string Problem(uint64_t id) const;
  // A member of `ids` that cannot be an id (the largest of the first fragment entry
  // holding one: an entry is checked by its largest member), or nullopt. A
  // whole-fragment entry is judged by its fragment id.
  std::optional<uint64_t> AnInvalid(const RowAddrMap& ids) const;
};

}  // namespace lancelet::index
