#include "array/dictionary_array.h"

#include <fmt/format.h>

#include "lancelet/error.h"

namespace lancelet {
namespace {

template <typename T>
void AppendLittleEndian(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));  // little-endian hosts only
}

std::string_view ValueBytes(const ArrayData& values, int64_t i, size_t width) {
  if (width == 0) return values.GetView(i);
  return {reinterpret_cast<const char*>(values.buffers[1]->data()) + size_t(i) * width, width};
}

}  // namespace

bool CanDictionaryEncode(const DataType& keys, const DataType& values) {
  const bool byte_wide = values.byte_width() > 0 && values.id() != TypeId::kFixedSizeList;
  return keys.is_integer() && (byte_wide || values.is_variable_binary());
}

DictionaryKeyer::DictionaryKeyer(const DataType& key_type, std::string what)
    : what_(std::move(what)), key_name_(key_type.ToString()), key_bits_(key_type.bit_width()) {
  const int index_bits = key_bits_ - (key_type.is_signed_integer() ? 1 : 0);
  max_items_ = index_bits >= 64 ? UINT64_MAX : uint64_t(1) << index_bits;
}

uint64_t DictionaryKeyer::AddItem(int64_t source, std::string_view value) {
  if (item_sources_.size() == max_items_)
    ThrowInvalid("{} holds more than {} distinct values, more than {} keys can index", what_, max_items_, key_name_);
  item_sources_.push_back(source);
  items_.push_back(value);
  return item_sources_.size() - 1;
}

uint64_t DictionaryKeyer::KeyOf(std::string_view value, int64_t source) {
  if (2 * (items_.size() + 1) > slots_.size()) Grow();
  const uint64_t hash = std::hash<std::string_view>{}(value);
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.key_plus_one == 0) {
      const uint64_t key = AddItem(source, value);
      slot = {hash, key + 1};
      return key;
    }
    if (slot.hash == hash && items_[slot.key_plus_one - 1] == value) return slot.key_plus_one - 1;
  }
}

void DictionaryKeyer::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(std::max<size_t>(64, old.size() * 2), Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.key_plus_one == 0) continue;
    size_t i = slot.hash & mask;
    while (slots_[i].key_plus_one != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

uint64_t DictionaryKeyer::NullKey(int64_t source) {
  if (null_key_ < 0) null_key_ = int64_t(AddItem(source, {}));  // never in slots_, never compared
  return uint64_t(null_key_);
}

std::string DictionaryKeyer::KeyBytes(const std::vector<uint64_t>& keys) const {
  std::string out;
  out.reserve(keys.size() * size_t(key_bits_ / 8));
  for (uint64_t key : keys) {
    switch (key_bits_) {
      case 8: out.push_back(char(key)); break;
      case 16: AppendLittleEndian<uint16_t>(out, uint16_t(key)); break;
      case 32: AppendLittleEndian<uint32_t>(out, uint32_t(key)); break;
      default: AppendLittleEndian<uint64_t>(out, key); break;
    }
  }
  return out;
}

DictionaryArrays EncodeDictionary(const ArrayData& values, const TypePtr& key_type, std::string what) {
  if (!CanDictionaryEncode(*key_type, *values.type))
    ThrowNotSupported("{}: lancelet does not dictionary-encode {} values with {} keys", what,
                      values.type->ToString(), key_type->ToString());
  DictionaryKeyer keyer(*key_type, std::move(what));
  const size_t width = values.type->is_variable_binary() ? 0 : size_t(values.type->byte_width());
  std::vector<uint64_t> keys(size_t(values.length), 0);
  for (int64_t i = 0; i < values.length; ++i)
    if (values.IsValid(i)) keys[size_t(i)] = keyer.KeyOf(ValueBytes(values, i, width), i);
  const std::string bytes = keyer.KeyBytes(keys);
  auto out = std::make_shared<ArrayData>();
  out->type = key_type;
  out->length = values.length;
  out->null_count = values.null_count;
  out->buffers = {values.null_count > 0 ? values.buffers[0] : nullptr, Buffer::Copy(bytes.data(), bytes.size())};
  return {std::move(out), Take(values, keyer.item_sources())};
}

ArrayPtr DecodeDictionary(const ArrayData& keys, const ArrayData& values) {
  if (keys.null_count == keys.length) return MakeNullArray(values.type, keys.length);
  // Rows of `values` to take; a NULL key takes row 0 and is masked below.
  std::vector<int64_t> rows(size_t(keys.length));
  auto widen = [&]<typename T>(const T* k) {
    for (int64_t i = 0; i < keys.length; ++i) {
      if (keys.IsNull(i)) continue;
      if (k[i] < 0 || uint64_t(k[i]) >= uint64_t(values.length))
        ThrowInvalid("dictionary key {} at row {} is outside the {} values", k[i], i, values.length);
      rows[size_t(i)] = int64_t(k[i]);
    }
  };
  switch (keys.type->id()) {
    case TypeId::kInt8: widen(keys.values<int8_t>()); break;
    case TypeId::kInt16: widen(keys.values<int16_t>()); break;
    case TypeId::kInt32: widen(keys.values<int32_t>()); break;
    case TypeId::kInt64: widen(keys.values<int64_t>()); break;
    case TypeId::kUInt8: widen(keys.values<uint8_t>()); break;
    case TypeId::kUInt16: widen(keys.values<uint16_t>()); break;
    case TypeId::kUInt32: widen(keys.values<uint32_t>()); break;
    case TypeId::kUInt64: widen(keys.values<uint64_t>()); break;
    default: ThrowInvalid("dictionary keys of type {} are not integers", keys.type->ToString());
  }
  ArrayPtr out = Take(values, rows);
  if (keys.null_count == 0) return out;
  // NULL where the key is NULL, as well as where the value is.
  auto validity = Buffer::Allocate(size_t((out->length + 7) / 8));
  int64_t nulls = 0;
  for (int64_t i = 0; i < out->length; ++i) {
    if (keys.IsValid(i) && out->IsValid(i)) SetBit(validity->mutable_data(), i);
    else ++nulls;
  }
  if (out->buffers.empty()) out->buffers.resize(1);
  out->buffers[0] = validity;
  out->null_count = nulls;
  return out;
}

}  // namespace lancelet
