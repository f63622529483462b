// Writing dictionary-encoded fields (Lance logical type "dict:<values>:<keys>:false"). Every
// page of such a field holds its own dictionary: the page's distinct values, in order of
// first appearance, and one key per value into it. The reference's readers refuse a page
// of a dictionary field that has no dictionary, so there is no plain fallback.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/lance_schema.h"

namespace lancelet::format {

// Whether lancelet writes dictionaries of these keys and values: integer keys over values of
// a byte-wide fixed-width type or of utf8/binary (large or not).
bool WritesDictionaryOf(const DataType& keys, const DataType& values);
// Throws NotSupported unless WritesDictionaryOf this field's keys and values.
void CheckWritableDictionaryField(const LanceField& field);

// Assigns keys to a page's values by first appearance. Views passed to KeyOf must stay
// valid while the keyer lives.
class DictionaryKeyer {
 public:
  explicit DictionaryKeyer(const LanceField& field);

  // The key of `value`; an unseen value becomes the next item, taken from `source` (the
  // caller's index of the value). Throws Invalid when the key type cannot index one more.
  uint64_t KeyOf(std::string_view value, int64_t source);
  // A key of its own for NULL (2.0 pages store NULL rows as a key to a NULL item).
  uint64_t NullKey(int64_t source);

  // The source index of every item, in key order.
  const std::vector<int64_t>& item_sources() const { return item_sources_; }
  int key_bits() const { return key_bits_; }
  // The keys little-endian at key_bits() each.
  std::string KeyBytes(const std::vector<uint64_t>& keys) const;

 private:
  uint64_t AddItem(int64_t source);

  const LanceField& field_;
  int key_bits_;
  uint64_t max_items_;
  std::unordered_map<std::string_view, uint64_t> key_of_;
  std::vector<int64_t> item_sources_;
  int64_t null_key_ = -1;
};

}  // namespace lancelet::format
