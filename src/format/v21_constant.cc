// All-null and constant pages (PageLayout field 2: the 2.1 all-null layout, which 2.2
// generalises into ConstantLayout with the same field numbers), and the page dispatcher.
//
// Buffers:
//   none               every row is one null item (layers = [NULLABLE_ITEM]), or, with an
//                      inline value, every row is that value;
//   rep, def           raw u16 levels (either may be empty) when there is structure to keep;
//   value[, rep, def]  a scalar stored in a buffer (v21_constant_scalar.cc), for values that
//                      do not fit inline (strings, binary, wide values).
#include <algorithm>
#include <cstring>
#include <optional>

#include "format/little_endian.h"
#include "format/v21_compression.h"
#include "format/v21_internal.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

EncodedPage EncodeAllNull(const ShreddedLeaf& leaf, const EncodeOptions&) {
  pb::PageLayout layout;
  auto* constant = layout.mutable_constant_layout();
  for (auto layer : leaf.layers) constant->add_layers(layer);
  EncodedPage page;
  page.num_rows = leaf.num_rows;
  const bool simple = leaf.layers.size() == 1 && leaf.layers[0] == pb::REPDEF_NULLABLE_ITEM;
  if (!simple) {
    const Levels& lv = leaf.levels;
    page.buffers.push_back(lv.has_rep ? LevelBytes(lv.rep, 0, lv.rep.size()) : std::string());
    page.buffers.push_back(lv.has_def ? LevelBytes(lv.def, 0, lv.def.size()) : std::string());
    constant->set_num_rep_values(lv.has_rep ? lv.rep.size() : 0);
    constant->set_num_def_values(lv.has_def ? lv.def.size() : 0);
  }
  page.encoding = WrapAny(kPageLayoutUrl, layout);
  return page;
}

std::optional<EncodedPage> EncodeConstant(const ShreddedLeaf& leaf, const ValueBlock& values, const DataType& type) {
  constexpr size_t kMaxInlineBytes = 32;
  if (values.dim > 0 || values.has_item_validity || leaf.num_valid == 0) return std::nullopt;
  const bool boolean = type.id() == TypeId::kBool;
  if (!values.variable && !boolean && values.bits % 8) return std::nullopt;
  // The k-th value's bytes (a bool as one byte, 0 or 1).
  auto value = [&](uint64_t k) -> std::string_view {
    if (values.variable) return std::string_view(values.data).substr(values.offsets[k], values.offsets[k + 1] - values.offsets[k]);
    if (boolean) return GetBit(reinterpret_cast<const uint8_t*>(values.data.data()), int64_t(k)) ? "\1" : std::string_view("\0", 1);
    return std::string_view(values.data).substr(k * values.bits / 8, values.bits / 8);
  };
  std::optional<std::string_view> constant;
  for (uint64_t k = 0; k < values.count; ++k) {
    if (!leaf.slot_valid[k]) continue;
    if (!constant) constant = value(k);
    else if (value(k) != *constant) return std::nullopt;
  }
  pb::PageLayout layout;
  auto* description = layout.mutable_constant_layout();
  for (auto layer : leaf.layers) description->add_layers(layer);
  EncodedPage page;
  page.num_rows = leaf.num_rows;
  if (!values.variable && constant->size() <= kMaxInlineBytes) {
    description->set_inline_value(std::string(*constant));
  } else {
    // A one-value Arrow array's buffers: u32 count, u32 lengths, the buffers.
    std::vector<std::string> buffers;
    if (values.variable) {
      std::string offsets;
      if (type.has_large_offsets()) {
        AppendLE<uint64_t>(offsets, 0);
        AppendLE<uint64_t>(offsets, constant->size());
      } else {
        AppendLE<uint32_t>(offsets, 0);
        AppendLE<uint32_t>(offsets, uint32_t(constant->size()));
      }
      buffers.push_back(std::move(offsets));
    }
    buffers.emplace_back(*constant);
    std::string scalar;
    AppendLE<uint32_t>(scalar, uint32_t(buffers.size()));
    for (const auto& b : buffers) AppendLE<uint32_t>(scalar, uint32_t(b.size()));
    for (const auto& b : buffers) scalar += b;
    page.buffers.push_back(std::move(scalar));
  }
  const Levels& lv = leaf.levels;
  if (lv.has_rep || lv.has_def) {
    page.buffers.push_back(lv.has_rep ? LevelBytes(lv.rep, 0, lv.rep.size()) : std::string());
    page.buffers.push_back(lv.has_def ? LevelBytes(lv.def, 0, lv.def.size()) : std::string());
  }
  page.encoding = WrapAny(kPageLayoutUrl, layout);
  return page;
}

namespace {

class ConstantReader final : public PageReader {
 public:
  ConstantReader(PageSource page, const pb::ConstantLayout& layout) : page_(std::move(page)) {
    const std::string& where = page_.where;
    for (int k = 0; k < layout.layers_size(); ++k) layers_.push_back(pb::RepDefLayer(layout.layers(k)));
    const LevelScheme scheme(layers_);
    max_rep_ = scheme.max_rep;
    max_visible_def_ = scheme.max_visible_def;
    const size_t num_buffers = page_.buffers.size();
    if (layout.has_inline_value()) {
      if (num_buffers != 0 && num_buffers != 2)
        ThrowCorrupt("{}: constant page with an inline value and {} buffers", where, num_buffers);
      inline_value_ = layout.inline_value();
      has_value_ = true;
    } else if (num_buffers == 1 || num_buffers == 3) {
      has_value_ = true;  // parsed below, once the leaf's shape is known
      level_buffer_ = 1;
    } else if (num_buffers != 0 && num_buffers != 2) {
      ThrowCorrupt("{}: all-null page with {} buffers", where, num_buffers);
    }
    const LeafPath& path = *page_.path;
    const DataType& leaf_type = *path.back().field->type;
    shape_.variable = leaf_type.is_variable_binary();
    if (leaf_type.id() == TypeId::kFixedSizeList) {
      shape_.dim = uint32_t(leaf_type.fixed_size());
      shape_.bits = uint64_t(leaf_type.child(0)->type->bit_width()) * shape_.dim;
    } else if (leaf_type.id() == TypeId::kFixedSizeBinary) {
      shape_.bits = uint64_t(leaf_type.fixed_size()) * 8;
    } else if (!shape_.variable) {
      shape_.bits = uint64_t(leaf_type.bit_width());
    }
    if (has_value_ && level_buffer_ == 1) inline_value_ = ParseConstantScalar(page_.ReadBuffer(0), shape_.variable, where);
    if (has_value_ && shape_.variable) {
      // Any byte string is a valid binary / utf8 value.
    } else if (has_value_) {
      const bool fits = !shape_.variable && shape_.dim == 0 &&
                        (shape_.bits == 1 ? inline_value_.size() >= 1 : inline_value_.size() * 8 == shape_.bits);
      if (!fits)
        ThrowNotSupported("{}: constant value of {} bytes for a {} column is not supported", where, inline_value_.size(),
                          leaf_type.ToString());
    }
    if (num_buffers == 2 || num_buffers == 3) {
      if (layout.has_rep_compression()) CheckLevelCodec(layout.rep_compression(), "repetition", where);
      if (layout.has_def_compression()) CheckLevelCodec(layout.def_compression(), "definition", where);
      const std::string rep = page_.ReadBuffer(level_buffer_);
      const std::string def = page_.ReadBuffer(level_buffer_ + 1);
      levels_.has_rep = !rep.empty();
      levels_.has_def = !def.empty();
      // Raw u16 levels unless a level compression is given (then num_*_values says how many).
      auto read_levels = [&](bool compressed, const pb::CompressiveEncoding& e, const std::string& bytes, uint64_t n) {
        if (compressed) return DecodeLevels(e, bytes, n, where);
        if (bytes.size() % 2) ThrowCorrupt("{}: odd-sized level buffers", where);
        return ParseLevels(bytes, bytes.size() / 2, where);
      };
      if (levels_.has_rep)
        levels_.rep = read_levels(layout.has_rep_compression(), layout.rep_compression(), rep, layout.num_rep_values());
      if (levels_.has_def)
        levels_.def = read_levels(layout.has_def_compression(), layout.def_compression(), def, layout.num_def_values());
      if (levels_.has_rep && levels_.has_def && levels_.rep.size() != levels_.def.size())
        ThrowCorrupt("{}: {} repetition but {} definition levels", where, levels_.rep.size(), levels_.def.size());
    }
    if (max_rep_ > 0 && !levels_.has_rep && page_.num_rows > 0)
      ThrowCorrupt("{}: list layers but no repetition levels", where);
    if (!has_value_ && !levels_.has_def) {
      // Every item is null at the innermost layer that can be null.
      uint16_t level = 0;
      for (size_t p = scheme.num_layers(); p-- > 0;)
        if (!level && scheme.null_level[p]) level = scheme.null_level[p];
      if (!level) ThrowCorrupt("{}: all-null page whose layers cannot be null", where);
      null_level_ = level;
    }
    if (levels_.has_rep) {
      for (size_t k = 0; k < levels_.rep.size(); ++k)
        if (levels_.rep[k] == max_rep_) row_starts_.push_back(k);
      if (row_starts_.size() != page_.num_rows)
        ThrowCorrupt("{}: levels describe {} rows, the page {}", where, row_starts_.size(), page_.num_rows);
      row_starts_.push_back(levels_.rep.size());
    } else if (levels_.has_def && levels_.def.size() != page_.num_rows) {
      ThrowCorrupt("{}: {} definition levels for {} rows", where, levels_.def.size(), page_.num_rows);
    }
  }

  const std::vector<pb::RepDefLayer>& layers() const override { return layers_; }

  // A fixed-width value on every row, with no levels, is its bytes repeated (plain_rows.h).
  uint64_t PlainRowBytes() const override {
    const bool plain = has_value_ && !shape_.variable && shape_.dim == 0 && shape_.bits >= 8 && shape_.bits % 8 == 0 &&
                       !levels_.has_rep && !levels_.has_def && layers_.size() == 1;
    return plain ? shape_.bits / 8 : 0;
  }
  void ReadPlainRows(uint64_t start, uint64_t count, uint8_t* out) const override {
    if (start + count > page_.num_rows)
      ThrowInvalid("{}: rows {}+{} are outside the page of {} rows", page_.where, start, count, page_.num_rows);
    Repeat(out, count);
  }
  void TakePlainRows(std::span<const uint64_t> rows, uint64_t first_row, uint8_t* out) const override {
    for (uint64_t row : rows)
      if (row < first_row || row - first_row >= page_.num_rows)
        ThrowInvalid("{}: row {} is outside the page of {} rows", page_.where, row - first_row, page_.num_rows);
    Repeat(out, rows.size());
  }

  PageItems ReadRows(uint64_t start, uint64_t count) const override {
    if (start + count > page_.num_rows)
      ThrowInvalid("{}: rows {}+{} are outside the page of {} rows", page_.where, start, count, page_.num_rows);
    PageItems out;
    out.num_rows = count;
    uint64_t begin = start, end = start + count;
    if (levels_.has_rep) {
      begin = row_starts_[start];
      end = row_starts_[start + count];
      out.levels.has_rep = true;
      out.levels.rep.assign(levels_.rep.begin() + long(begin), levels_.rep.begin() + long(end));
    }
    out.levels.has_def = true;
    if (levels_.has_def) out.levels.def.assign(levels_.def.begin() + long(begin), levels_.def.begin() + long(end));
    else out.levels.def.assign(end - begin, has_value_ ? 0 : null_level_);
    if (!levels_.has_def && has_value_) out.levels.has_def = false;
    // Without definition levels every item is visible (a value) or every one null.
    uint64_t visible = levels_.has_def || !has_value_ ? 0 : end - begin;
    if (levels_.has_def || !has_value_)
      for (uint64_t k = begin; k < end; ++k) {
        const uint16_t d = levels_.has_def ? levels_.def[k] : null_level_;
        visible += d <= max_visible_def_;
      }
    ValueBlock& v = out.values;
    v.variable = shape_.variable;
    v.bits = shape_.bits;
    v.dim = shape_.dim;
    if (has_value_ && shape_.variable) {
      v.count = visible;
      v.data.reserve(visible * inline_value_.size());
      v.offsets.reserve(visible + 1);
      for (uint64_t k = 0; k < visible; ++k) {
        v.data += inline_value_;
        v.offsets.push_back(v.data.size());
      }
    } else if (has_value_ && shape_.bits == 1) {
      v.count = visible;
      v.data.assign((visible + 7) / 8, inline_value_[0] ? '\xff' : '\0');
      if (visible % 8 && inline_value_[0]) v.data.back() = char((1u << (visible % 8)) - 1);
    } else if (has_value_) {
      v.count = visible;
      v.data.resize(size_t(visible) * inline_value_.size());
      Repeat(reinterpret_cast<uint8_t*>(v.data.data()), visible);
    } else {
      v.AppendEmpty(visible);
    }
    return out;
  }

 private:
  // Writes the fixed-width value `count` times to `out`: copied once, then doubled.
  void Repeat(uint8_t* out, uint64_t count) const {
    const size_t width = inline_value_.size(), total = size_t(count) * width;
    if (total == 0) return;
    std::memcpy(out, inline_value_.data(), width);
    for (size_t filled = width; filled < total; filled *= 2) std::memcpy(out + filled, out, std::min(filled, total - filled));
  }

  PageSource page_;
  std::vector<pb::RepDefLayer> layers_;
  uint16_t max_rep_ = 0, max_visible_def_ = 0, null_level_ = 0;
  bool has_value_ = false;
  size_t level_buffer_ = 0;   // index of the rep buffer (def follows) when levels are stored
  std::string inline_value_;  // the constant's bytes (inline, or from the value buffer)
  Levels levels_;
  std::vector<uint64_t> row_starts_;
  ValueBlock shape_;
};

}  // namespace

std::unique_ptr<PageReader> MakePageReader(PageSource page, const pb::PageLayout& layout) {
  page.PrefetchWhole(kSmallPageBytes);
  switch (layout.layout_case()) {
    case pb::PageLayout::kMiniBlockLayout:
      return MakeMiniBlockReader(std::move(page), layout.mini_block_layout());
    case pb::PageLayout::kFullZipLayout:
      return MakeFullZipReader(std::move(page), layout.full_zip_layout());
    case pb::PageLayout::kConstantLayout:
      return std::make_unique<ConstantReader>(std::move(page), layout.constant_layout());
    case pb::PageLayout::kBlobLayout:
      return MakeBlobReader(std::move(page), layout.blob_layout());
    case pb::PageLayout::kSparseLayout:
      ThrowNotSupported("{}: sparse pages (file version 2.3) are not supported", page.where);
    default:
      ThrowCorrupt("{}: page layout is empty", page.where);
  }
}

}  // namespace lancelet::format::v21
