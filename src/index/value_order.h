// Comparing the values of one array by row, for sorting and grouping index keys.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "lancelet/array.h"
#include "lancelet/error.h"

namespace lancelet::index {

// Calls fn(get) where get(i) returns row i as a value with a total order: the native
// number (floats as a key where NaN is greatest and -0.0 == 0.0) or the bytes of a string.
template <typename Fn>
decltype(auto) WithValueKey(const ArrayData& a, Fn&& fn) {
  auto fixed = [&]<typename T>(T*) {
    const T* v = a.buffers[1]->template as<T>();
    return fn([v](int64_t i) { return v[i]; });
  };
  auto floating = [&]<typename T>(T*) {
    const T* v = a.buffers[1]->template as<T>();
    // (NaN?, value) pairs order NaN last; adding 0 turns -0.0 into 0.0.
    return fn([v](int64_t i) { return std::make_pair(std::isnan(v[i]), std::isnan(v[i]) ? T(0) : v[i] + T(0)); });
  };
  auto binary = [&]<typename O>(O*) {
    const O* off = a.buffers[1]->template as<O>();
    const char* bytes = reinterpret_cast<const char*>(a.buffers[2]->data());
    return fn([off, bytes](int64_t i) { return std::string_view(bytes + off[i], size_t(off[i + 1] - off[i])); });
  };
  switch (a.type->id()) {
    case TypeId::kBool: return fn([&a](int64_t i) { return GetBit(a.buffers[1]->data(), i); });
    case TypeId::kInt8: return fixed((int8_t*)nullptr);
    case TypeId::kInt16: return fixed((int16_t*)nullptr);
    case TypeId::kInt32: case TypeId::kDate32: return fixed((int32_t*)nullptr);
    case TypeId::kInt64: case TypeId::kDate64: case TypeId::kTimestamp: return fixed((int64_t*)nullptr);
    case TypeId::kUInt8: return fixed((uint8_t*)nullptr);
    case TypeId::kUInt16: return fixed((uint16_t*)nullptr);
    case TypeId::kUInt32: return fixed((uint32_t*)nullptr);
    case TypeId::kUInt64: return fixed((uint64_t*)nullptr);
    case TypeId::kFloat32: return floating((float*)nullptr);
    case TypeId::kFloat64: return floating((double*)nullptr);
    case TypeId::kUtf8: case TypeId::kBinary: return binary((int32_t*)nullptr);
    case TypeId::kLargeUtf8: case TypeId::kLargeBinary: return binary((int64_t*)nullptr);
    default: ThrowNotSupported("a scalar index cannot hold values of type {}", a.type->ToString());
  }
}

// Whether a WithValueKey key is a float's NaN. Order checks of index files skip NaN: the
// reference orders -NaN first and NaN last, lancelet every NaN last.
template <typename K>
bool IsNanKey(const K&) {
  return false;
}
template <typename T>
bool IsNanKey(const std::pair<bool, T>& key) {
  return key.first;
}

}  // namespace lancelet::index
