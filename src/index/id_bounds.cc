#include "index/id_bounds.h"

#include <algorithm>

#include <fmt/format.h>

namespace lancelet::index {

std::string IdBounds::Problem(uint64_t id) const {
  if (row_ids) {
    if (next_row_id != 0 && id >= next_row_id)
      return fmt::format("row id {} is not below the dataset's next row id {}", id, next_row_id);
    return "";
  }
  const uint32_t fragment = uint32_t(id >> 32), offset = uint32_t(id);
  if (max_fragment && fragment > *max_fragment)
    return fmt::format("row address {} names fragment {}, above the dataset's highest fragment id {}", id, fragment,
                       *max_fragment);
  auto live = std::lower_bound(fragment_rows.begin(), fragment_rows.end(), std::make_pair(fragment, uint64_t(0)));
  if (live != fragment_rows.end() && live->first == fragment && offset >= live->second)
    return fmt::format("row address {} names row {} of fragment {}, which has {} rows", id, offset, fragment,
                       live->second);
  return "";
}

std::optional<uint64_t> IdBounds::AnInvalid(const RowAddrMap& ids) const {
  for (const auto& [fragment, rows] : ids.fragments) {
    const uint64_t largest = uint64_t(fragment) << 32 | (rows && !rows->IsEmpty() ? rows->Max() : 0);
    if (!Problem(largest).empty()) return largest;
  }
  return std::nullopt;
}

}  // namespace lancelet::index
