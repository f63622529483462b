// A set of row addresses grouped by fragment: the reference's RowAddrTreeMap, which
// Bitmap and LabelList index files store per key.
//
// Serialized form (little-endian): u32 entry count, then per entry in ascending fragment
// order: u32 fragment id, u32 byte size, and that many bytes of a portable 32-bit Roaring
// bitmap of the fragment's row offsets. A size of 0 means every row of the fragment.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/roaring_bitmap.h"

namespace lancelet::index {

struct RowAddrMap {
  // Fragment id -> its offsets in the set; nullopt: every row of the fragment.
  std::map<uint32_t, std::optional<format::RoaringBitmap>> fragments;

  // Throws Corrupt naming `context` when `bytes` is not one whole serialized map.
  static RowAddrMap Deserialize(std::string_view bytes, std::string_view context);
  std::string Serialize() const;

  // The set of `addresses` (any order, duplicates allowed): bulk-built per fragment.
  // `repeated`, when given, is set to an address listed more than once (if any).
  static RowAddrMap FromAddresses(std::vector<uint64_t> addresses, std::optional<uint64_t>* repeated = nullptr);
  void Add(uint64_t address);
  RowAddrMap& operator|=(const RowAddrMap& other);
  bool empty() const { return fragments.empty(); }
  bool operator==(const RowAddrMap&) const = default;
};

}  // namespace lancelet::index
