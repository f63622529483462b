// Typed access to fixed-width numeric columns for the kernels: dispatch from a TypeId to
// the C type of its values buffer, and widening to one of three comparison domains
// (int64, uint64, double) in which mixed-type comparisons are exact.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "lancelet/array.h"
#include "lancelet/error.h"
#include "lancelet/float16.h"

namespace lancelet {

// Marks float16 storage (uint16 bits) in dispatch.
struct Half { uint16_t bits; };

// Calls f(T{}) with T the C type of the values buffer of `id`: integers, float, double,
// Half; date32 -> int32_t; date64, timestamp -> int64_t. bool is not covered (bitmap).
template <typename F>
decltype(auto) VisitStorage(TypeId id, F&& f) {
  switch (id) {
    case TypeId::kInt8: return f(int8_t{});
    case TypeId::kInt16: return f(int16_t{});
    case TypeId::kInt32: case TypeId::kDate32: return f(int32_t{});
    case TypeId::kInt64: case TypeId::kDate64: case TypeId::kTimestamp: return f(int64_t{});
    case TypeId::kUInt8: return f(uint8_t{});
    case TypeId::kUInt16: return f(uint16_t{});
    case TypeId::kUInt32: return f(uint32_t{});
    case TypeId::kUInt64: return f(uint64_t{});
    case TypeId::kFloat16: return f(Half{});
    case TypeId::kFloat32: return f(float{});
    case TypeId::kFloat64: return f(double{});
    default: ThrowNotSupported("no numeric storage for type id {}", int(id));
  }
}

enum class Domain : uint8_t { kSigned, kUnsigned, kFloat };

inline Domain DomainOf(const DataType& t) {
  if (t.is_floating()) return Domain::kFloat;
  if (t.is_integer() && !t.is_signed_integer()) return Domain::kUnsigned;
  return Domain::kSigned;  // signed ints, bool, dates, timestamps
}

// Exact three-way comparison of numbers of any of the domain types. NaN is equal to NaN
// and greater than everything else.
inline int Cmp3(int64_t a, int64_t b) { return (a > b) - (a < b); }
inline int Cmp3(uint64_t a, uint64_t b) { return (a > b) - (a < b); }
inline int Cmp3(double a, double b) {
  if (std::isnan(a)) return std::isnan(b) ? 0 : 1;
  if (std::isnan(b)) return -1;
  return (a > b) - (a < b);
}
inline int Cmp3(int64_t a, uint64_t b) { return a < 0 ? -1 : Cmp3(uint64_t(a), b); }
inline int Cmp3(uint64_t a, int64_t b) { return -Cmp3(b, a); }
inline int Cmp3(int64_t a, double b) {
  if (std::isnan(b)) return -1;
  if (b >= 9223372036854775808.0) return -1;
  if (b < -9223372036854775808.0) return 1;
  double whole = std::trunc(b);
  int c = Cmp3(a, int64_t(whole));
  if (c != 0) return c;
  double frac = b - whole;
  return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}
inline int Cmp3(uint64_t a, double b) {
  if (std::isnan(b)) return -1;
  if (b >= 18446744073709551616.0) return -1;
  if (b < 0) return 1;
  double whole = std::trunc(b);
  int c = Cmp3(a, uint64_t(whole));
  if (c != 0) return c;
  return b - whole > 0 ? -1 : 0;
}
inline int Cmp3(double a, int64_t b) { return -Cmp3(b, a); }
inline int Cmp3(double a, uint64_t b) { return -Cmp3(b, a); }

// The storage value as its domain type.
template <typename D, typename T>
inline D ToDomain(T v) {
  if constexpr (std::is_same_v<T, Half>) return D(HalfToFloat(v.bits));
  else return D(v);
}

// A column's values as a contiguous D[] (D = int64_t, uint64_t or double): a view of the
// values buffer when it already holds D, else a converted copy. Null slots hold
// unspecified values.
template <typename D>
class Widened {
 public:
  explicit Widened(const ArrayData& a) {
    if (a.type->id() == TypeId::kBool) {
      owned_.resize(size_t(a.length));
      const uint8_t* bits = a.buffers[1]->data();
      for (int64_t i = 0; i < a.length; ++i) owned_[size_t(i)] = D(GetBit(bits, i));
      data_ = owned_.data();
      return;
    }
    VisitStorage(a.type->id(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, D>) {
        data_ = a.values<D>();
      } else {
        const T* src = a.values<T>();
        owned_.resize(size_t(a.length));
        for (int64_t i = 0; i < a.length; ++i) owned_[size_t(i)] = ToDomain<D>(src[i]);
        data_ = owned_.data();
      }
    });
  }
  const D* data() const { return data_; }

 private:
  std::vector<D> owned_;
  const D* data_ = nullptr;
};

// Calls f(D{}) with D the domain type of `t`.
template <typename F>
decltype(auto) VisitDomain(const DataType& t, F&& f) {
  switch (DomainOf(t)) {
    case Domain::kSigned: return f(int64_t{});
    case Domain::kUnsigned: return f(uint64_t{});
    case Domain::kFloat: return f(double{});
  }
  return f(int64_t{});
}

}  // namespace lancelet
