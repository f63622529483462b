#include "format/plain_rows.h"

namespace lancelet::format {

namespace {

// Bytes per value of a non-nested fixed-width type; 0 when it is not one (or is bool).
uint64_t ValueBytes(const DataType& type) {
  if (type.id() == TypeId::kFixedSizeBinary) return type.fixed_size() > 0 ? uint64_t(type.fixed_size()) : 0;
  const int bits = type.bit_width();
  return bits >= 8 ? uint64_t(bits / 8) : 0;
}

}  // namespace

uint64_t PlainRowBytes(const DataType& type) {
  if (type.id() == TypeId::kFixedSizeList) {
    if (type.fixed_size() <= 0 || type.children().size() != 1) return 0;
    return uint64_t(type.fixed_size()) * ValueBytes(*type.child(0)->type);
  }
  return ValueBytes(type);
}

ArrayPtr MakePlainArray(const TypePtr& type, int64_t length, BufferPtr values) {
  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = length;
  if (type->id() == TypeId::kFixedSizeList) {
    out->buffers = {nullptr};
    out->children = {MakePlainArray(type->child(0)->type, length * type->fixed_size(), std::move(values))};
  } else {
    out->buffers = {nullptr, std::move(values)};
  }
  return out;
}

}  // namespace lancelet::format
