#include "format/dictionary_keys.h"

#include <fmt/format.h>

#include "format/little_endian.h"
#include "lancelet/error.h"

namespace lancelet::format {

bool WritesDictionaryOf(const DataType& keys, const DataType& values) {
  const bool byte_wide = values.byte_width() > 0 && values.id() != TypeId::kFixedSizeList;
  return keys.is_integer() && (byte_wide || values.is_variable_binary());
}

void CheckWritableDictionaryField(const LanceField& field) {
  const DataType& values = *field.type;
  if (!field.dictionary_index || !WritesDictionaryOf(*field.dictionary_index, values))
    ThrowNotSupported("field '{}' is dictionary-encoded (dictionary<{},{}>); lancelet writes dictionaries of "
                      "integer keys over fixed-width or utf8/binary values only",
                      field.name, field.dictionary_index ? field.dictionary_index->ToString() : "?",
                      values.ToString());
}

DictionaryKeyer::DictionaryKeyer(const LanceField& field)
    : field_(field), key_bits_(field.dictionary_index->bit_width()) {
  const int index_bits = key_bits_ - (field.dictionary_index->is_signed_integer() ? 1 : 0);
  max_items_ = index_bits >= 64 ? UINT64_MAX : uint64_t(1) << index_bits;
}

uint64_t DictionaryKeyer::AddItem(int64_t source) {
  if (item_sources_.size() == max_items_)
    ThrowInvalid("field '{}' (dictionary<{},{}>): a page holds more than {} distinct values, more than {} keys "
                 "can index",
                 field_.name, field_.dictionary_index->ToString(), field_.type->ToString(), max_items_,
                 field_.dictionary_index->ToString());
  item_sources_.push_back(source);
  return item_sources_.size() - 1;
}

uint64_t DictionaryKeyer::KeyOf(std::string_view value, int64_t source) {
  auto it = key_of_.find(value);
  if (it != key_of_.end()) return it->second;
  const uint64_t key = AddItem(source);
  key_of_.emplace(value, key);
  return key;
}

uint64_t DictionaryKeyer::NullKey(int64_t source) {
  if (null_key_ < 0) null_key_ = int64_t(AddItem(source));
  return uint64_t(null_key_);
}

std::string DictionaryKeyer::KeyBytes(const std::vector<uint64_t>& keys) const {
  std::string out;
  out.reserve(keys.size() * size_t(key_bits_ / 8));
  for (uint64_t key : keys) {
    switch (key_bits_) {
      case 8: out.push_back(char(key)); break;
      case 16: AppendLE<uint16_t>(out, uint16_t(key)); break;
      case 32: AppendLE<uint32_t>(out, uint32_t(key)); break;
      default: AppendLE<uint64_t>(out, key); break;
    }
  }
  return out;
}

}  // namespace lancelet::format
