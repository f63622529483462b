#include "expr/logic.h"

#include <cstring>

namespace lancelet {

namespace {

// A bool datum as two bitmaps of `length` bits: valid, and value (already masked by valid).
struct Bits {
  std::vector<uint8_t> valid;
  std::vector<uint8_t> value;
};

Bits ToBits(const Datum& d, int64_t length) {
  size_t bytes = BitmapBytes(length);
  Bits b{std::vector<uint8_t>(bytes, 0xFF), std::vector<uint8_t>(bytes, 0)};
  if (!d.is_array()) {
    if (d.scalar.is_null()) std::fill(b.valid.begin(), b.valid.end(), 0);
    else if (d.scalar.as_bool()) std::fill(b.value.begin(), b.value.end(), 0xFF);
    return b;
  }
  const ArrayData& a = *d.array;
  if (const uint8_t* v = a.validity()) std::memcpy(b.valid.data(), v, bytes);
  const uint8_t* data = a.buffers[1]->data();
  for (size_t i = 0; i < bytes; ++i) b.value[i] = data[i] & b.valid[i];
  return b;
}

template <typename Combine>
ArrayPtr Kleene(const Datum& left, const Datum& right, int64_t length, Combine combine) {
  Bits a = ToBits(left, length), b = ToBits(right, length);
  size_t bytes = BitmapBytes(length);
  BufferPtr valid = Buffer::Allocate(bytes), value = Buffer::Allocate(bytes);
  uint8_t* vo = valid->mutable_data();
  uint8_t* xo = value->mutable_data();
  for (size_t i = 0; i < bytes; ++i) combine(a.valid[i], a.value[i], b.valid[i], b.value[i], &vo[i], &xo[i]);
  if (length % 8) {  // keep bits past the end clear
    uint8_t mask = uint8_t((1u << (length % 8)) - 1);
    vo[bytes - 1] &= mask;
    xo[bytes - 1] &= mask;
  }
  return MakeBoolArray(length, std::move(valid), std::move(value));
}

}  // namespace

ArrayPtr And(const Datum& left, const Datum& right, int64_t length) {
  return Kleene(left, right, length, [](uint8_t av, uint8_t ax, uint8_t bv, uint8_t bx, uint8_t* v, uint8_t* x) {
    uint8_t a_false = av & uint8_t(~ax), b_false = bv & uint8_t(~bx);
    *v = (av & bv) | a_false | b_false;
    *x = ax & bx;
  });
}

ArrayPtr Or(const Datum& left, const Datum& right, int64_t length) {
  return Kleene(left, right, length, [](uint8_t av, uint8_t ax, uint8_t bv, uint8_t bx, uint8_t* v, uint8_t* x) {
    *v = (av & bv) | ax | bx;
    *x = ax | bx;
  });
}

ArrayPtr Not(const Datum& operand, int64_t length) {
  Datum always_true(Scalar{DataType::Bool(), true});
  return Kleene(operand, always_true, length, [](uint8_t av, uint8_t ax, uint8_t, uint8_t, uint8_t* v, uint8_t* x) {
    *v = av;
    *x = uint8_t(~ax) & av;
  });
}

ArrayPtr IsNull(const Datum& operand, int64_t length, bool negated) {
  bool scalar_null = !operand.is_array() && operand.scalar.is_null();
  const uint8_t* validity = operand.is_array() ? operand.array->validity() : nullptr;
  BufferPtr values = BuildBitmap(length, [&](int64_t i) {
    bool is_null = operand.is_array() ? (validity && !GetBit(validity, i)) : scalar_null;
    return is_null != negated;
  });
  return MakeBoolArray(length, nullptr, std::move(values));
}

}  // namespace lancelet
