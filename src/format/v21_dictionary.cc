// Mini-block dictionaries (MiniBlockLayout.dictionary): the page's distinct values are one
// block in the page buffer after the chunks, and the chunks hold indices into it (u32
// before compression).
#include "format/v21_compression.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

ValueBlock DecodeDictionary(const pb::CompressiveEncoding& e, std::string_view data, uint64_t num_items,
                            const std::string& where) {
  // Any block encoding: Flat / Variable (2.1), General(LZ4) of those, or bit-packed (2.2).
  return DecodeBlock(e, data, num_items, where + ", dictionary");
}

ValueBlock LookUpDictionary(const ValueBlock& dictionary, const ValueBlock& indices, const std::string& where) {
  if (indices.variable || indices.bits % 8 || indices.bits == 0 || indices.bits > 64)
    ThrowCorrupt("{}: dictionary indices of {} bits", where, indices.bits);
  const uint64_t index_bytes = indices.bits / 8;
  if (indices.data.size() < indices.count * index_bytes)
    ThrowCorrupt("{}: {} bytes of dictionary indices for {} values", where, indices.data.size(), indices.count);
  ValueBlock out;
  out.variable = dictionary.variable;
  out.bits = dictionary.bits;
  for (uint64_t k = 0; k < indices.count; ++k) {
    uint64_t index = 0;
    for (uint64_t b = 0; b < index_bytes; ++b) index |= uint64_t(uint8_t(indices.data[k * index_bytes + b])) << (8 * b);
    if (index >= dictionary.count)
      ThrowCorrupt("{}: dictionary index {} at value {} is past the {} dictionary items", where, index, k,
                   dictionary.count);
    out.AppendFrom(dictionary, index, 1);
  }
  return out;
}

}  // namespace lancelet::format::v21
