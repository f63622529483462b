#include "format/value_bytes.h"

#include <algorithm>

namespace lancelet::format {

uint64_t EstimatedValueBytes(const DataType& type) {
  if (type.bit_width() > 0) return std::max(1, type.bit_width() / 8);
  if (type.id() == TypeId::kFixedSizeBinary) return uint64_t(type.fixed_size());
  if (type.id() == TypeId::kFixedSizeList)
    return uint64_t(type.fixed_size()) * EstimatedValueBytes(*type.child(0)->type);
  if (type.id() == TypeId::kStruct) {
    uint64_t sum = 0;
    for (const auto& c : type.children()) sum += EstimatedValueBytes(*c->type);
    return sum;
  }
  return 64;  // variable-width values: a guess
}

}  // namespace lancelet::format
