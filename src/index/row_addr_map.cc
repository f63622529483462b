#include "index/row_addr_map.h"

#include <algorithm>

#include "format/little_endian.h"
#include "lancelet/error.h"

namespace lancelet::index {

namespace {

// Sorts offsets ascending: an LSD radix sort in three 11-bit passes once there are enough
// of them to pay for the counters (an index range query hands over thousands per
// fragment, in value order).
void SortOffsets(std::vector<uint32_t>& v) {
  if (v.size() < 256) {
    std::sort(v.begin(), v.end());
    return;
  }
  std::vector<uint32_t> scratch(v.size());
  for (int shift = 0; shift < 33; shift += 11) {
    uint32_t counts[2049] = {};
    for (uint32_t x : v) ++counts[((x >> shift) & 2047) + 1];
    if (counts[((v[0] >> shift) & 2047) + 1] == v.size()) continue;  // one digit value: already in order
    for (size_t d = 1; d < 2049; ++d) counts[d] += counts[d - 1];
    for (uint32_t x : v) scratch[counts[(x >> shift) & 2047]++] = x;
    v.swap(scratch);
  }
}

}  // namespace

RowAddrMap RowAddrMap::Deserialize(std::string_view bytes, std::string_view context) {
  RowAddrMap out;
  size_t pos = 0;
  auto u32 = [&](const char* what) {
    if (bytes.size() - pos < 4)
      ThrowCorrupt("{}: row address map ends at byte {} inside {} (expected 4 more bytes)", context, bytes.size(), what);
    uint32_t v = format::LoadLE<uint32_t>(bytes.data() + pos);
    pos += 4;
    return v;
  };
  const uint32_t entries = u32("the entry count");
  for (uint32_t e = 0; e < entries; ++e) {
    const uint32_t fragment = u32("an entry's fragment id");
    const uint32_t size = u32("an entry's size");
    if (bytes.size() - pos < size)
      ThrowCorrupt("{}: row address map entry {} (fragment {}) needs {} bytes at offset {}, but only {} remain",
                   context, e, fragment, size, pos, bytes.size() - pos);
    if (!out.fragments.empty() && out.fragments.rbegin()->first >= fragment)
      ThrowCorrupt("{}: row address map fragments are not ascending ({} after {})", context, fragment,
                   out.fragments.rbegin()->first);
    if (size == 0) {
      out.fragments.emplace(fragment, std::nullopt);
    } else {
      out.fragments.emplace(fragment, format::RoaringBitmap::DeserializePortable(
                                          bytes.substr(pos, size), std::string(context) + " fragment " +
                                                                       std::to_string(fragment)));
    }
    pos += size;
  }
  if (pos != bytes.size())
    ThrowCorrupt("{}: {} bytes follow the row address map's {} entries", context, bytes.size() - pos, entries);
  return out;
}

std::string RowAddrMap::Serialize() const {
  std::string out;
  auto put = [&](uint32_t v) {
    char b[4];
    format::StoreLE<uint32_t>(b, v);
    out.append(b, 4);
  };
  put(uint32_t(fragments.size()));
  for (const auto& [fragment, rows] : fragments) {
    put(fragment);
    if (!rows) {
      put(0);
      continue;
    }
    std::string bitmap = rows->SerializePortable();
    put(uint32_t(bitmap.size()));
    out += bitmap;
  }
  return out;
}

RowAddrMap RowAddrMap::FromAddresses(std::vector<uint64_t> addresses, std::optional<uint64_t>* repeated) {
  // Bucketed by fragment, then added in bulk: no sort of the whole list.
  std::map<uint32_t, std::vector<uint32_t>> by_fragment;
  for (uint64_t a : addresses) by_fragment[uint32_t(a >> 32)].push_back(uint32_t(a));
  RowAddrMap out;
  for (auto& [fragment, offsets] : by_fragment) {
    // Ascending, so that the bitmap appends instead of inserting into its containers.
    SortOffsets(offsets);
    if (repeated && !*repeated) {
      auto twice = std::adjacent_find(offsets.begin(), offsets.end());
      if (twice != offsets.end()) *repeated = uint64_t(fragment) << 32 | *twice;
    }
    out.fragments.emplace(fragment, format::RoaringBitmap::FromValues(offsets));
  }
  return out;
}

void RowAddrMap::Add(uint64_t address) {
  auto [it, inserted] = fragments.try_emplace(uint32_t(address >> 32), format::RoaringBitmap());
  if (it->second) it->second->Add(uint32_t(address));  // nullopt: the whole fragment already
}

RowAddrMap& RowAddrMap::operator|=(const RowAddrMap& other) {
  for (const auto& [fragment, rows] : other.fragments) {
    auto [it, inserted] = fragments.emplace(fragment, rows);
    if (inserted || !it->second) continue;
    if (!rows) it->second = std::nullopt;
    else *it->second |= *rows;
  }
  return *this;
}

}  // namespace lancelet::index
