// Mini-block dictionaries (MiniBlockLayout.dictionary): the page's distinct values are one
// block in the page buffer after the chunks, and the chunks hold indices into it (u32
// before compression).
#include <cstring>

#include "format/v21_compression.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

ValueBlock DecodeDictionary(const pb::CompressiveEncoding& e, std::string_view data, uint64_t num_items,
                            const std::string& where) {
  // Any block encoding: Flat / Variable (2.1), General(LZ4) of those, or bit-packed (2.2).
  return DecodeBlock(e, data, num_items, where + ", dictionary");
}

namespace {

uint64_t LoadIndex(const char* p, uint64_t bytes) {
  uint64_t v = 0;
  std::memcpy(&v, p, bytes);  // little-endian: the low bytes of v
  return v;
}

}  // namespace

ValueBlock LookUpDictionary(const ValueBlock& dictionary, const ValueBlock& indices, const std::string& where) {
  if (indices.variable || indices.bits % 8 || indices.bits == 0 || indices.bits > 64)
    ThrowCorrupt("{}: dictionary indices of {} bits", where, indices.bits);
  const uint64_t index_bytes = indices.bits / 8;
  const uint64_t n = indices.count;
  if (indices.data.size() < n * index_bytes)
    ThrowCorrupt("{}: {} bytes of dictionary indices for {} values", where, indices.data.size(), n);
  std::vector<uint64_t> index(n);
  for (uint64_t k = 0; k < n; ++k) {
    index[k] = LoadIndex(indices.data.data() + k * index_bytes, index_bytes);
    if (index[k] >= dictionary.count)
      ThrowCorrupt("{}: dictionary index {} at value {} is past the {} dictionary items", where, index[k], k,
                   dictionary.count);
  }
  ValueBlock out;
  out.variable = dictionary.variable;
  out.bits = dictionary.bits;
  if (dictionary.variable) {
    out.offsets.resize(n + 1);
    for (uint64_t k = 0; k < n; ++k)
      out.offsets[k + 1] = out.offsets[k] + dictionary.offsets[index[k] + 1] - dictionary.offsets[index[k]];
    out.data.resize(out.offsets[n]);
    for (uint64_t k = 0; k < n; ++k)
      std::memcpy(out.data.data() + out.offsets[k], dictionary.data.data() + dictionary.offsets[index[k]],
                  out.offsets[k + 1] - out.offsets[k]);
    out.count = n;
  } else if (dictionary.bits % 8 == 0 && !dictionary.has_item_validity) {
    const uint64_t width = dictionary.bits / 8;
    if (dictionary.data.size() < dictionary.count * width)
      ThrowCorrupt("{}: dictionary of {} bytes for {} items", where, dictionary.data.size(), dictionary.count);
    out.dim = dictionary.dim;
    out.data.resize(n * width);
    for (uint64_t k = 0; k < n; ++k)
      std::memcpy(out.data.data() + k * width, dictionary.data.data() + index[k] * width, width);
    out.count = n;
  } else {
    for (uint64_t k = 0; k < n; ++k) out.AppendFrom(dictionary, index[k], 1);
  }
  return out;
}

}  // namespace lancelet::format::v21
