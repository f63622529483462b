// Full-zip pages (FullZipLayout), for wide values (vectors, long strings): every item is
// stored as [control word][value], so that a row is one contiguous byte range.
//
// Buffers of a page:
//   0  the zipped items. The control word holds rep (high bits) and def (low bits) in
//      1, 2 or 4 bytes (bits_rep + bits_def <= 8, 16, 32), and is absent when both are 0.
//      Fixed-width values follow every visible item (nulls included); variable-width values
//      follow only valid visible items, as a u32/u64 length and the bytes.
//   1  (variable width or lists) the repetition index: rows + 1 byte offsets of row starts
//      in buffer 0, each 1, 2, 4 or 8 bytes wide (the width is size / (rows + 1)).
// A fixed_size_list value with item nulls is ceil(dim / 8) validity bytes, then the items.
#include <algorithm>
#include <cstring>

#include "format/little_endian.h"
#include "format/v21_compression.h"
#include "format/v21_internal.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

size_t WordBytes(int bits) { return bits == 0 ? 0 : bits <= 8 ? 1 : bits <= 16 ? 2 : 4; }

// The repetition index: where each row starts in the page's bytes, and where they end,
// each in the fewest bytes that hold the page's size.
std::string RowIndex(std::vector<uint64_t>& row_starts, uint64_t data_size) {
  row_starts.push_back(data_size);
  const size_t width = data_size <= UINT8_MAX ? 1 : data_size <= UINT16_MAX ? 2 : data_size <= UINT32_MAX ? 4 : 8;
  std::string index;
  index.reserve(row_starts.size() * width);
  for (uint64_t off : row_starts)
    for (size_t b = 0; b < width; ++b) index.push_back(char((off >> (8 * b)) & 0xFF));
  return index;
}

// What EncodeFullZip decided about a page's bytes, for its layout.
struct FullZipShape {
  int bits_rep = 0, bits_def = 0;
  size_t length_bytes = 4;      // of each variable value's length
  uint64_t validity_bytes = 0;  // per fixed-size-list value
  uint64_t num_items = 0;
  bool per_value = false;       // each variable value zstd-compressed
};

pb::PageLayout DescribeFullZip(const ShreddedLeaf& leaf, const ValueBlock& values, const EncodeOptions& options,
                               const FullZipShape& shape) {
  pb::PageLayout layout;
  auto* fz = layout.mutable_full_zip_layout();
  fz->set_bits_rep(uint32_t(shape.bits_rep));
  fz->set_bits_def(uint32_t(shape.bits_def));
  auto* vc = fz->mutable_value_compression();
  if (values.variable && options.variable_packed) {
    fz->set_bits_per_offset(uint32_t(shape.length_bytes * 8));
    *vc->mutable_variable_packed_struct() = *options.variable_packed;
  } else if (values.variable) {
    fz->set_bits_per_offset(uint32_t(shape.length_bytes * 8));
    const GeneralCompression zstd{pb::COMPRESSION_ALGORITHM_ZSTD, 0};
    vc = DescribeFsst(options, DescribeGeneral(shape.per_value ? std::optional(zstd) : std::nullopt, vc));
    vc->mutable_variable()->mutable_offsets()->mutable_flat()->set_bits_per_value(shape.length_bytes * 8);
  } else if (values.dim > 0) {
    fz->set_bits_per_value(uint32_t(values.bits + shape.validity_bytes * 8));
    auto* fsl = vc->mutable_fixed_size_list();
    fsl->set_items_per_value(values.dim);
    fsl->set_has_validity(values.has_item_validity);
    fsl->mutable_values()->mutable_flat()->set_bits_per_value(values.bits / values.dim);
  } else {
    fz->set_bits_per_value(uint32_t(values.bits));
    vc->mutable_flat()->set_bits_per_value(values.bits);
  }
  fz->set_num_items(uint32_t(shape.num_items));
  fz->set_num_visible_items(uint32_t(values.count));
  for (auto layer : leaf.layers) fz->add_layers(layer);
  return layout;
}

}  // namespace

EncodedPage EncodeFullZip(const ShreddedLeaf& leaf, ValueBlock values, const EncodeOptions& options) {
  const Levels& lv = leaf.levels;
  const LevelScheme scheme(leaf.layers);
  uint16_t max_rep = 0, max_def = 0;
  for (uint16_t r : lv.rep) max_rep = std::max(max_rep, r);
  for (uint16_t d : lv.def) max_def = std::max(max_def, d);
  const int bits_rep = lv.has_rep ? BitWidth(max_rep) : 0;
  const int bits_def = lv.has_def ? BitWidth(max_def) : 0;
  const size_t word_bytes = WordBytes(bits_rep + bits_def);
  const uint64_t num_items = lv.has_rep ? lv.rep.size() : lv.has_def ? lv.def.size() : values.count;
  const bool large_offsets = leaf.leaf && leaf.leaf->type->has_large_offsets();
  const size_t length_bytes = large_offsets ? 8 : 4;
  const uint64_t validity_bytes = values.has_item_validity ? (values.dim + 7) / 8 : 0;
  const uint64_t value_bytes = values.bits / 8;
  const bool per_value = values.variable && options.compress_each_value;
  const GeneralCompression zstd{pb::COMPRESSION_ALGORITHM_ZSTD, 0};

  std::string data, compressed;
  std::vector<uint64_t> row_starts;
  uint64_t v = 0;
  // Fixed-width values with no control word, no item validity and no index (vectors
  // without nulls): the page is the values themselves, moved rather than copied.
  const bool page_is_values = word_bytes == 0 && !lv.has_rep && !values.variable && !values.has_item_validity &&
                              num_items == values.count;
  if (page_is_values) {
    data = std::move(values.data);
    v = values.count;
  } else {
    // Sized up front: a page is about 8 MB, and growing it by doubling copies it and touches
    // fresh memory at every step.
    data.reserve(num_items * word_bytes + (values.variable ? values.offsets[values.count] - values.offsets[0] +
                                                                 values.count * length_bytes
                                                           : values.count * (validity_bytes + value_bytes)));
  }
  for (uint64_t k = page_is_values ? num_items : 0; k < num_items; ++k) {
    const uint16_t r = lv.has_rep ? lv.rep[k] : 0;
    const uint16_t d = lv.has_def ? lv.def[k] : 0;
    if (!lv.has_rep || r == scheme.max_rep) row_starts.push_back(data.size());
    const uint32_t word = (uint32_t(r) << bits_def) | d;
    if (word_bytes == 1) AppendLE<uint8_t>(data, uint8_t(word));
    else if (word_bytes == 2) AppendLE<uint16_t>(data, uint16_t(word));
    else if (word_bytes == 4) AppendLE<uint32_t>(data, word);
    if (lv.has_def && d > scheme.max_visible_def) continue;
    if (values.variable) {
      if (d == 0) {
        std::string_view value(values.data.data() + values.offsets[v], values.offsets[v + 1] - values.offsets[v]);
        if (per_value) {
          compressed.clear();
          AppendCompressed(zstd, value, compressed);
          value = compressed;
        }
        if (length_bytes == 8) AppendLE<uint64_t>(data, value.size());
        else AppendLE<uint32_t>(data, uint32_t(value.size()));
        data.append(value);
      }
    } else {
      if (values.has_item_validity) {
        for (uint64_t j = 0; j < validity_bytes; ++j) {
          uint8_t byte = 0;
          for (uint64_t b = 0; b < 8 && j * 8 + b < values.dim; ++b)
            if (GetBit(reinterpret_cast<const uint8_t*>(values.item_validity.data()), int64_t(v * values.dim + j * 8 + b)))
              byte |= uint8_t(1u << b);
          data.push_back(char(byte));
        }
      }
      data.append(values.data, v * value_bytes, value_bytes);
    }
    ++v;
  }
  if (v != values.count) ThrowInvalid("full-zip page: {} visible items but {} values", v, values.count);

  EncodedPage page;
  page.num_rows = leaf.num_rows;
  const bool indexed = lv.has_rep || values.variable;
  std::string index = indexed ? RowIndex(row_starts, data.size()) : std::string();
  page.buffers.push_back(std::move(data));
  if (indexed) page.buffers.push_back(std::move(index));
  const FullZipShape shape{bits_rep, bits_def, length_bytes, validity_bytes, num_items, per_value};
  page.encoding = WrapAny(kPageLayoutUrl, DescribeFullZip(leaf, values, options, shape));
  return page;
}

// ------------------------------------------------------------------------------- reading

namespace {

class FullZipReader final : public PageReader {
 public:
  FullZipReader(PageSource page, const pb::FullZipLayout& layout) : page_(std::move(page)), layout_(layout) {
    const std::string& where = page_.where;
    for (int k = 0; k < layout.layers_size(); ++k) layers_.push_back(pb::RepDefLayer(layout.layers(k)));
    const LevelScheme scheme(layers_);
    max_rep_ = scheme.max_rep;
    max_visible_def_ = scheme.max_visible_def;
    bits_rep_ = int(layout.bits_rep());
    bits_def_ = int(layout.bits_def());
    if (bits_rep_ + bits_def_ > 32) ThrowCorrupt("{}: control words of {} bits", where, bits_rep_ + bits_def_);
    word_bytes_ = WordBytes(bits_rep_ + bits_def_);
    if (max_rep_ > 0 && bits_rep_ == 0) ThrowCorrupt("{}: list layers but no repetition bits", where);
    codec_ = ParseValueCodec(layout.value_compression(), where);
    // Full-zip values are compressed one by one; only General (of variable-width values)
    // applies per value.
    if (codec_.compressed && (codec_.compressed->compression_case() != pb::CompressiveEncoding::kGeneral ||
                              !codec_.variable))
      ThrowNotSupported("{}: this value compression is not supported in full-zip pages yet", where);
    if (layout.details_case() == pb::FullZipLayout::kBitsPerOffset) {
      if (!codec_.variable) ThrowCorrupt("{}: bits_per_offset with fixed-width values", where);
      if (layout.bits_per_offset() != 32 && layout.bits_per_offset() != 64)
        ThrowCorrupt("{}: bits_per_offset {}", where, layout.bits_per_offset());
      length_bytes_ = layout.bits_per_offset() / 8;
    } else if (layout.details_case() == pb::FullZipLayout::kBitsPerValue) {
      if (codec_.variable) ThrowCorrupt("{}: bits_per_value with variable-width values", where);
      if (layout.bits_per_value() % 8 || layout.bits_per_value() != codec_.bits)
        ThrowCorrupt("{}: bits_per_value {} does not match the value encoding ({} bits)", where,
                     layout.bits_per_value(), codec_.bits);
    } else {
      ThrowCorrupt("{}: full-zip layout without bits_per_value or bits_per_offset", where);
    }
    if (page_.buffers.size() > 1) {
      const uint64_t size = page_.buffers[1].second;
      index_width_ = size / (page_.num_rows + 1);
      if (size % (page_.num_rows + 1) || (index_width_ != 1 && index_width_ != 2 && index_width_ != 4 && index_width_ != 8))
        ThrowCorrupt("{}: repetition index of {} bytes for {} rows", where, size, page_.num_rows);
    } else if (codec_.variable || max_rep_ > 0) {
      ThrowCorrupt("{}: full-zip page without a repetition index", where);
    }
  }

  const std::vector<pb::RepDefLayer>& layers() const override { return layers_; }

  // Without control words, item validity or a repetition index, row r is value bytes
  // [r * bits / 8, (r + 1) * bits / 8) of buffer 0: exactly the bytes ReadRows appends.
  uint64_t PlainRowBytes() const override {
    const bool plain = word_bytes_ == 0 && index_width_ == 0 && !codec_.variable && !codec_.has_item_validity &&
                       !codec_.compressed && !codec_.fsst && !codec_.variable_packed && codec_.bits % 8 == 0;
    return plain ? codec_.bits / 8 : 0;
  }

  void ReadPlainRows(uint64_t start, uint64_t count, uint8_t* out) const override {
    const uint64_t row_bytes = PlainRowBytes();
    if (row_bytes == 0) PageReader::ReadPlainRows(start, count, out);
    if (start + count > page_.num_rows)
      ThrowInvalid("{}: rows {}+{} are outside the page of {} rows", page_.where, start, count, page_.num_rows);
    page_.ReadExactInto(0, start * row_bytes, count * row_bytes, out);
  }

  // Each run of consecutive rows is one range, all read together: a take of scattered
  // rows from a remote file then costs a few merged requests, not one per row.
  void TakePlainRows(std::span<const uint64_t> rows, uint64_t first_row, uint8_t* out) const override {
    const uint64_t row_bytes = PlainRowBytes();
    if (row_bytes == 0) return PageReader::TakePlainRows(rows, first_row, out);
    std::vector<io::ByteRange> ranges;
    for (size_t k = 0; k < rows.size();) {
      size_t j = k + 1;
      while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
      const uint64_t start = rows[k] - first_row;
      if (rows[k] < first_row || start + (j - k) > page_.num_rows)
        ThrowInvalid("{}: rows {}+{} are outside the page of {} rows", page_.where, start, j - k, page_.num_rows);
      ranges.push_back({start * row_bytes, (j - k) * row_bytes, out + k * row_bytes});
      k = j;
    }
    page_.ReadRangesInto(0, std::move(ranges));
  }

  // Fixed-width rows lie at a stride; otherwise the repetition index says where each run
  // starts and ends, and its entries are fetched first (one more round trip).
  void PrefetchRows(std::span<const std::pair<uint64_t, uint64_t>> runs) const override {
    std::vector<io::ByteRange> ranges;
    for (const auto& [start, count] : runs)
      if (count == 0 || start + count > page_.num_rows) return;  // ReadRows reports it
    if (index_width_) {
      for (const auto& [start, count] : runs) {
        ranges.push_back({start * index_width_, index_width_, nullptr});
        ranges.push_back({(start + count) * index_width_, index_width_, nullptr});
      }
      if (!page_.Prefetch(1, ranges)) return;  // the store reads as fast without the hint
      ranges.clear();
      for (const auto& [start, count] : runs) {
        const uint64_t begin = LoadLE(page_.ReadRange(1, start * index_width_, index_width_).data(), index_width_);
        const uint64_t end = LoadLE(page_.ReadRange(1, (start + count) * index_width_, index_width_).data(), index_width_);
        if (end < begin || end > page_.buffers[0].second) return;
        ranges.push_back({begin, end - begin, nullptr});
      }
    } else {
      const uint64_t stride = word_bytes_ + codec_.bits / 8;
      for (const auto& [start, count] : runs) ranges.push_back({start * stride, count * stride, nullptr});
    }
    page_.Prefetch(0, std::move(ranges));
  }

  PageItems ReadRows(uint64_t start, uint64_t count) const override {
    const std::string& where = page_.where;
    PageItems out;
    out.num_rows = count;
    out.levels.has_rep = bits_rep_ > 0;
    out.levels.has_def = bits_def_ > 0;
    ValueBlock& v = out.values;
    v.variable = codec_.variable;
    v.bits = codec_.dim ? codec_.item_bits * codec_.dim : codec_.bits;
    v.dim = codec_.dim;
    v.has_item_validity = codec_.has_item_validity;
    if (count == 0) return out;
    if (start + count > page_.num_rows)
      ThrowInvalid("{}: rows {}+{} are outside the page of {} rows", where, start, count, page_.num_rows);
    uint64_t begin, end;
    if (index_width_) {
      const std::string a = page_.ReadRange(1, start * index_width_, index_width_);
      const std::string b = page_.ReadRange(1, (start + count) * index_width_, index_width_);
      begin = LoadLE(a.data(), index_width_);
      end = LoadLE(b.data(), index_width_);
      if (end < begin) ThrowCorrupt("{}: repetition index goes backwards at row {}", where, start);
    } else {
      const uint64_t stride = word_bytes_ + codec_.bits / 8;
      begin = start * stride;
      end = (start + count) * stride;
    }
    std::string bytes(end - begin, '\0');
    page_.ReadExactInto(0, begin, end - begin, bytes.data());
    const uint64_t value_bytes = codec_.bits / 8;
    const uint64_t validity_bytes = codec_.has_item_validity ? (codec_.dim + 7) / 8 : 0;
    const uint32_t def_mask = bits_def_ ? (uint32_t(1) << bits_def_) - 1 : 0;
    size_t pos = 0;
    uint64_t rows = 0;
    auto need = [&](uint64_t n) {
      if (pos + n > bytes.size()) ThrowCorrupt("{}: item at byte {} runs past the rows' {} bytes", where, begin + pos, bytes.size());
    };
    while (pos < bytes.size()) {
      uint32_t word = 0;
      if (word_bytes_) {
        need(word_bytes_);
        word = uint32_t(LoadLE(bytes.data() + pos, word_bytes_));
        pos += word_bytes_;
      }
      const uint16_t r = uint16_t(bits_rep_ ? word >> bits_def_ : 0);
      const uint16_t d = uint16_t(word & def_mask);
      if (bits_rep_) out.levels.rep.push_back(r);
      if (bits_def_) out.levels.def.push_back(d);
      if (!bits_rep_ || r == max_rep_) ++rows;
      if (bits_def_ && d > max_visible_def_) continue;
      if (codec_.variable) {
        uint64_t len = 0;
        if (d == 0) {
          need(length_bytes_);
          len = LoadLE(bytes.data() + pos, length_bytes_);
          pos += length_bytes_;
          need(len);
          if (codec_.compressed) {
            const std::string plain = DecompressBuffer(codec_.compressed->general().compression(),
                                                       std::string_view(bytes).substr(pos, len), where);
            v.data += plain;
            pos += len;
            len = plain.size();
          } else {
            v.data.append(bytes, pos, len);
            pos += len;
          }
        }
        v.offsets.push_back(v.offsets.back() + len);
      } else {
        need(validity_bytes + value_bytes - validity_bytes);
        if (validity_bytes) {
          v.item_validity.resize((v.count + 1) * codec_.dim / 8 + 1, '\0');
          auto* dst = reinterpret_cast<uint8_t*>(v.item_validity.data());
          const auto* src = reinterpret_cast<const uint8_t*>(bytes.data() + pos);
          for (uint64_t j = 0; j < codec_.dim; ++j) SetBitTo(dst, int64_t(v.count * codec_.dim + j), GetBit(src, int64_t(j)));
        }
        v.data.append(bytes, pos + validity_bytes, value_bytes - validity_bytes);
        pos += value_bytes;
      }
      ++v.count;
    }
    if (rows != count) ThrowCorrupt("{}: bytes of rows {}+{} hold {} rows", where, start, count, rows);
    FinishValues(codec_, v, where);
    return out;
  }

 private:
  PageSource page_;
  pb::FullZipLayout layout_;
  std::vector<pb::RepDefLayer> layers_;
  uint16_t max_rep_ = 0, max_visible_def_ = 0;
  int bits_rep_ = 0, bits_def_ = 0;
  size_t word_bytes_ = 0;
  size_t length_bytes_ = 4;
  uint64_t index_width_ = 0;
  ValueCodec codec_;
};

}  // namespace

std::unique_ptr<PageReader> MakeFullZipReader(PageSource page, const pb::FullZipLayout& layout) {
  return std::make_unique<FullZipReader>(std::move(page), layout);
}

}  // namespace lancelet::format::v21
