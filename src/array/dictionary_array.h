// Dictionary encoding: keys (an integer array) into a dictionary of values. lancelet holds
// every array as its values; these convert at the edges (Arrow IPC and C data in and out,
// Lance dictionary pages).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lancelet/array.h"

namespace lancelet {

// Whether EncodeDictionary takes these keys and values: integer keys over values of a
// byte-wide fixed-width type or of utf8/binary (large or not).
bool CanDictionaryEncode(const DataType& keys, const DataType& values);

// Assigns keys to values by first appearance. Views passed to KeyOf must stay valid while
// the keyer lives.
class DictionaryKeyer {
 public:
  // `what` names the values in errors: "<what> holds more than 128 distinct values, ...",
  // e.g. "field 'c' (dictionary<int8,utf8>): a page".
  DictionaryKeyer(const DataType& key_type, std::string what);

  // The key of `value` (its bytes); an unseen value becomes the next item, taken from
  // `source` (the caller's index of the value). Throws Invalid when the key type cannot
  // index one more.
  uint64_t KeyOf(std::string_view value, int64_t source);
  // A key of its own for NULL, for layouts that store NULL as an item.
  uint64_t NullKey(int64_t source);

  // The source index of every item, in key order.
  const std::vector<int64_t>& item_sources() const { return item_sources_; }
  int key_bits() const { return key_bits_; }
  // The keys little-endian at key_bits() each.
  std::string KeyBytes(const std::vector<uint64_t>& keys) const;

 private:
  uint64_t AddItem(int64_t source, std::string_view value);
  void Grow();

  // An open-addressing table (linear probing, at most half full) from a value's hash to its
  // key: a node-based map spent a tenth of a `create` allocating, rehashing and freeing.
  struct Slot {
    uint64_t hash = 0;
    uint64_t key_plus_one = 0;  // 0: empty
  };

  std::string what_;
  std::string key_name_;
  int key_bits_;
  uint64_t max_items_;
  std::vector<Slot> slots_;
  std::vector<std::string_view> items_;  // the value of each key (empty for the null key)
  std::vector<int64_t> item_sources_;
  int64_t null_key_ = -1;
};

struct DictionaryArrays {
  ArrayPtr keys;    // of the key type; NULL where the value is
  ArrayPtr values;  // the distinct valid values, by first appearance
};
// Dictionary-encodes `values` (CanDictionaryEncode must hold); `what` as for the keyer.
DictionaryArrays EncodeDictionary(const ArrayData& values, const TypePtr& key_type, std::string what);

// The values the keys name: NULL where the key or the value is NULL. Throws Invalid,
// "dictionary key K at row R is outside the N values", for a key outside `values`.
ArrayPtr DecodeDictionary(const ArrayData& keys, const ArrayData& values);

}  // namespace lancelet
