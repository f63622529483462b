// Lance stores integers little-endian. These read them from, and write them to, bytes at
// any alignment, with the same result on any host.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace lancelet::format {

// The first `width` (at most 8) bytes at `p`, as an unsigned little-endian integer.
inline uint64_t LoadLE(const void* p, size_t width) {
  const auto* bytes = static_cast<const uint8_t*>(p);
  uint64_t v = 0;
  for (size_t k = 0; k < width; ++k) v |= uint64_t(bytes[k]) << (8 * k);
  return v;
}

// The T stored little-endian at `p`.
template <typename T>
T LoadLE(const void* p) {
  static_assert(std::is_integral_v<T>);
  if constexpr (std::endian::native == std::endian::little) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  } else {
    return T(LoadLE(p, sizeof(T)));
  }
}

// Stores `v` little-endian at `p`.
template <typename T>
void StoreLE(void* p, T v) {
  static_assert(std::is_integral_v<T>);
  auto* bytes = static_cast<uint8_t*>(p);
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(bytes, &v, sizeof(T));
  } else {
    for (size_t k = 0; k < sizeof(T); ++k) bytes[k] = uint8_t(uint64_t(v) >> (8 * k));
  }
}

// Appends `v` to `out`, little-endian.
template <typename T>
void AppendLE(std::string& out, T v) {
  char bytes[sizeof(T)];
  StoreLE(bytes, v);
  out.append(bytes, sizeof(T));
}

}  // namespace lancelet::format
