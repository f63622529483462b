// Values flowing through the evaluator: a whole column, or one value standing for every
// row (a literal). Kernels take datums so that `column op literal` never materializes
// the literal.
#pragma once

#include <cstdint>
#include <vector>

#include "lancelet/array.h"
#include "lancelet/scalar.h"

namespace lancelet {

struct Datum {
  ArrayPtr array;  // set for a column-shaped value
  Scalar scalar;   // used when array is null

  Datum() = default;
  explicit Datum(ArrayPtr a) : array(std::move(a)) {}
  explicit Datum(Scalar s) : scalar(std::move(s)) {}

  bool is_array() const { return array != nullptr; }
  const TypePtr& type() const { return array ? array->type : scalar.type; }
  // NULL in every row (a null scalar or an all-null array).
  bool all_null() const { return array ? array->null_count == array->length : scalar.is_null(); }
};

// The datum as an array of `length` rows (a scalar is repeated).
ArrayPtr Materialize(const Datum& datum, int64_t length);

// Assembles an array from finished buffers; null_count is computed from the bitmap.
ArrayPtr MakeFixedWidthArray(TypePtr type, int64_t length, BufferPtr validity, BufferPtr values);

// The validity of rows where every given datum is valid: null when all rows are valid.
// A null scalar makes every row null (returns an all-zero bitmap).
BufferPtr IntersectValidity(const std::vector<const Datum*>& inputs, int64_t length);

// Bytes needed for a bitmap of `length` bits.
inline size_t BitmapBytes(int64_t length) { return size_t((length + 7) / 8); }

// A bitmap whose bit i is bit(i), written a byte at a time.
template <typename BitFn>
BufferPtr BuildBitmap(int64_t length, BitFn&& bit) {
  BufferPtr buffer = Buffer::Allocate(BitmapBytes(length));
  uint8_t* out = buffer->mutable_data();
  int64_t full = length / 8;
  for (int64_t b = 0; b < full; ++b) {
    uint8_t byte = 0;
    for (int k = 0; k < 8; ++k) byte |= uint8_t(uint8_t(bit(b * 8 + k)) << k);
    out[b] = byte;
  }
  for (int64_t i = full * 8; i < length; ++i) out[full] |= uint8_t(uint8_t(bit(i)) << (i & 7));
  return buffer;
}

// A bool array with the given value bits and validity (null: all valid).
inline ArrayPtr MakeBoolArray(int64_t length, BufferPtr validity, BufferPtr values) {
  return MakeFixedWidthArray(DataType::Bool(), length, std::move(validity), std::move(values));
}

}  // namespace lancelet
