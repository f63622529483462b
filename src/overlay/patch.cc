#include "overlay/patch.h"

#include <cstring>

#include "lancelet/error.h"

namespace lancelet::overlay {

namespace {

// Fixed-width values: copy the base buffers once and write each value in place.
ArrayPtr PatchFixedWidth(const ArrayPtr& base, const std::vector<Replacement>& replacements) {
  const DataType& type = *base->type;
  auto out = std::make_shared<ArrayData>(*base);
  size_t width = type.id() == TypeId::kFixedSizeBinary ? size_t(type.fixed_size()) : size_t(type.bit_width() / 8);
  auto values = Buffer::Copy(base->buffers[1]->data(), base->buffers[1]->size());
  bool need_validity = base->null_count > 0;
  for (const auto& r : replacements) need_validity |= r.values->null_count > 0;
  BufferPtr validity;
  if (need_validity) {
    validity = Buffer::Allocate(size_t((base->length + 7) / 8));
    if (base->buffers[0]) std::memcpy(validity->mutable_data(), base->buffers[0]->data(), validity->size());
    else std::memset(validity->mutable_data(), 0xff, validity->size());
  }
  for (const auto& r : replacements) {
    const uint8_t* src = r.values->buffers[1]->data();
    for (size_t k = 0; k < r.positions.size(); ++k) {
      int64_t pos = r.positions[k];
      std::memcpy(values->mutable_data() + size_t(pos) * width, src + k * width, width);
      if (validity) SetBitTo(validity->mutable_data(), pos, r.values->IsValid(int64_t(k)));
    }
  }
  out->buffers[1] = values;
  out->buffers[0] = validity;
  out->null_count = CountNulls(validity ? validity->data() : nullptr, base->length);
  if (out->null_count == 0) out->buffers[0] = nullptr;
  return out;
}

}  // namespace

ArrayPtr ApplyReplacements(const ArrayPtr& base, const std::vector<Replacement>& replacements) {
  if (replacements.empty()) return base;
  const DataType& type = *base->type;
  for (const auto& r : replacements)
    if (!r.values->type->Equals(type))
      ThrowCorrupt("overlay values of type {} cannot replace a {} column", r.values->type->ToString(),
                   type.ToString());
  if ((type.is_fixed_width() && type.id() != TypeId::kBool) || type.id() == TypeId::kFixedSizeBinary)
    return PatchFixedWidth(base, replacements);
  // Everything else: one gather over [base, values...].
  std::vector<ArrayPtr> parts = {base};
  std::vector<int64_t> source(size_t(base->length));
  for (int64_t i = 0; i < base->length; ++i) source[size_t(i)] = i;
  int64_t next = base->length;
  for (const auto& r : replacements) {
    for (size_t k = 0; k < r.positions.size(); ++k) source[size_t(r.positions[k])] = next + int64_t(k);
    next += r.values->length;
    parts.push_back(r.values);
  }
  return Take(*Concatenate(parts), source);
}

}  // namespace lancelet::overlay
