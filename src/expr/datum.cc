#include "expr/datum.h"

namespace lancelet {

ArrayPtr Materialize(const Datum& datum, int64_t length) {
  if (datum.is_array()) return datum.array;
  if (datum.scalar.is_null()) return MakeNullArray(datum.scalar.type, length);
  return MakeArray(datum.scalar.type, std::vector<Scalar>(size_t(length), datum.scalar));
}

ArrayPtr MakeFixedWidthArray(TypePtr type, int64_t length, BufferPtr validity, BufferPtr values) {
  auto out = std::make_shared<ArrayData>();
  out->type = std::move(type);
  out->length = length;
  out->null_count = validity ? CountNulls(validity->data(), length) : 0;
  if (out->null_count == 0) validity = nullptr;
  out->buffers = {std::move(validity), std::move(values)};
  return out;
}

BufferPtr IntersectValidity(const std::vector<const Datum*>& inputs, int64_t length) {
  BufferPtr out;
  size_t bytes = BitmapBytes(length);
  for (const Datum* d : inputs) {
    if (!d->is_array()) {
      if (d->scalar.is_null()) return Buffer::Allocate(bytes);
      continue;
    }
    const uint8_t* bits = d->array->validity();
    if (!bits) continue;
    if (!out) {
      out = Buffer::Copy(bits, bytes);
    } else {
      uint8_t* o = out->mutable_data();
      for (size_t i = 0; i < bytes; ++i) o[i] &= bits[i];
    }
  }
  return out;
}

}  // namespace lancelet
