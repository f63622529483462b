// Repetition / definition levels of 2.1 leaf columns: turning nested arrays into levels
// (Shred) and levels back into nested arrays (Unravel, Assemble).
//
// Conventions (shared with the reference):
// - Layers are stored innermost first: the leaf item, then each struct / list on the way up.
// - Definition 0 means "valid all the way down". Each layer that can be null or empty gets
//   its own levels, numbered upwards from the innermost layer; a list layer with both null
//   and empty lists uses two (null = lower, empty = higher).
// - Repetition of an item is the level of the outermost list that starts a new element at
//   that item (outermost list = number of lists = "new row"); 0 continues the innermost list.
// - Null or empty lists, and nulls of any layer above the innermost list, are items without
//   a value ("invisible"); every other item has a slot in the leaf values.
#include <algorithm>
#include <cstring>

#include "format/v21_internal.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

bool IsListLayer(pb::RepDefLayer layer) {
  return layer == pb::REPDEF_ALL_VALID_LIST || layer == pb::REPDEF_NULLABLE_LIST ||
         layer == pb::REPDEF_EMPTYABLE_LIST || layer == pb::REPDEF_NULL_AND_EMPTY_LIST;
}

int NumDefLevels(pb::RepDefLayer layer) {
  switch (layer) {
    case pb::REPDEF_NULLABLE_ITEM:
    case pb::REPDEF_NULLABLE_LIST:
    case pb::REPDEF_EMPTYABLE_LIST:
      return 1;
    case pb::REPDEF_NULL_AND_EMPTY_LIST:
      return 2;
    default:
      return 0;
  }
}

LevelScheme::LevelScheme(const std::vector<pb::RepDefLayer>& layers) {
  const size_t n = layers.size();
  null_level.assign(n, 0);
  empty_level.assign(n, 0);
  is_list.assign(n, false);
  uint16_t base = 0;
  bool seen_list = false;
  for (size_t j = 0; j < n; ++j) {
    const size_t p = n - 1 - j;  // outermost-first index
    const pb::RepDefLayer layer = layers[j];
    is_list[p] = IsListLayer(layer);
    switch (layer) {
      case pb::REPDEF_NULLABLE_ITEM:
      case pb::REPDEF_NULLABLE_LIST:
        null_level[p] = base + 1;
        break;
      case pb::REPDEF_EMPTYABLE_LIST:
        empty_level[p] = base + 1;
        break;
      case pb::REPDEF_NULL_AND_EMPTY_LIST:
        null_level[p] = base + 1;
        empty_level[p] = base + 2;
        break;
      default:
        break;
    }
    if (is_list[p]) {
      ++max_rep;
      seen_list = true;
    } else if (!seen_list) {
      max_visible_def = uint16_t(max_visible_def + NumDefLevels(layer));
    }
    base = uint16_t(base + NumDefLevels(layer));
  }
  if (!seen_list) max_visible_def = base;
}

// ------------------------------------------------------------------------------ paths

namespace {

bool IsFixedWidthLeaf(const DataType& type) {
  return type.is_fixed_width() || type.id() == TypeId::kFixedSizeBinary;
}

void CollectPaths(const LanceField& field, LeafPath& prefix, std::vector<LeafPath>& out) {
  const DataType& type = *field.type;
  if (IsPackedStructField(field) || IsBlobV2Field(field)) {  // one column of packed rows
    prefix.push_back({PathNode::kLeaf, &field, 0});
    out.push_back(prefix);
    prefix.pop_back();
    return;
  }
  if (type.id() == TypeId::kStruct) {
    if (field.children.empty())
      ThrowNotSupported("field '{}': empty structs cannot be stored in a 2.1 file", field.name);
    for (size_t c = 0; c < field.children.size(); ++c) {
      prefix.push_back({PathNode::kStruct, &field, c});
      CollectPaths(field.children[c], prefix, out);
      prefix.pop_back();
    }
    return;
  }
  if (type.is_list()) {
    if (field.children.size() != 1) ThrowCorrupt("list field '{}' has {} children", field.name, field.children.size());
    prefix.push_back({PathNode::kList, &field, 0});
    CollectPaths(field.children[0], prefix, out);
    prefix.pop_back();
    return;
  }
  if (type.id() == TypeId::kFixedSizeList) {
    const DataType& item = *type.child(0)->type;
    if (!IsFixedWidthLeaf(item) || item.id() == TypeId::kBool)
      ThrowNotSupported("field '{}': fixed_size_list of {} is not supported by the 2.1 encodings", field.name,
                        item.ToString());
  } else if (!IsFixedWidthLeaf(type) && !type.is_variable_binary() && type.id() != TypeId::kNull) {
    // (A null column is a leaf without values: always the all-null layout.)
    ThrowNotSupported("field '{}': type {} is not supported by the 2.1 encodings", field.name, type.ToString());
  }
  prefix.push_back({PathNode::kLeaf, &field, 0});
  out.push_back(prefix);
  prefix.pop_back();
}

}  // namespace

std::vector<LeafPath> LeafPaths(const LanceField& field) {
  std::vector<LeafPath> out;
  LeafPath prefix;
  CollectPaths(field, prefix, out);
  return out;
}

// ----------------------------------------------------------------------------- shredding

namespace {

// Walks the rows of one leaf path depth-first, emitting one item per leaf value reached and
// one per null / empty list (or null above the innermost list). Definition levels are first
// recorded symbolically (layer, null-or-empty) because the numbering depends on which
// layers turn out to have nulls or empty lists.
class Shredder {
 public:
  Shredder(const LeafPath& path, ShreddedLeaf& out) : path_(path), out_(out) {
    const size_t n = path.size();
    saw_null_.assign(n, false);
    saw_empty_.assign(n, false);
    list_rep_.assign(n, 0);
    uint16_t lists = 0;
    for (const auto& node : path) lists += node.kind == PathNode::kList;
    max_rep_ = lists;
    uint16_t level = lists;
    visible_from_ = 0;
    for (size_t p = 0; p < n; ++p) {
      if (path[p].kind == PathNode::kList) {
        list_rep_[p] = level--;
        visible_from_ = p + 1;
      }
    }
  }

  void Run(const ArrayData& root) {
    for (int64_t i = 0; i < root.length; ++i) Descend(0, root, i, max_rep_);
  }

  void Finish() {
    const size_t n = path_.size();
    out_.layers.clear();
    for (size_t j = 0; j < n; ++j) {
      const size_t p = n - 1 - j;
      if (path_[p].kind == PathNode::kList) {
        if (saw_null_[p] && saw_empty_[p]) out_.layers.push_back(pb::REPDEF_NULL_AND_EMPTY_LIST);
        else if (saw_null_[p]) out_.layers.push_back(pb::REPDEF_NULLABLE_LIST);
        else if (saw_empty_[p]) out_.layers.push_back(pb::REPDEF_EMPTYABLE_LIST);
        else out_.layers.push_back(pb::REPDEF_ALL_VALID_LIST);
      } else {
        out_.layers.push_back(saw_null_[p] ? pb::REPDEF_NULLABLE_ITEM : pb::REPDEF_ALL_VALID_ITEM);
      }
    }
    const LevelScheme scheme(out_.layers);
    bool any_def = false;
    for (size_t p = 0; p < n; ++p) any_def = any_def || saw_null_[p] || saw_empty_[p];
    out_.levels.has_rep = max_rep_ > 0;
    out_.levels.has_def = any_def;
    if (any_def) {
      out_.levels.def.resize(codes_.size());
      for (size_t k = 0; k < codes_.size(); ++k) {
        const uint32_t code = codes_[k];
        if (code == 0) {
          out_.levels.def[k] = 0;
          continue;
        }
        const size_t p = (code - 1) >> 1;
        out_.levels.def[k] = ((code - 1) & 1) ? scheme.empty_level[p] : scheme.null_level[p];
      }
    }
    if (!out_.levels.has_rep) out_.levels.rep.clear();
    out_.num_items = codes_.size();
  }

 private:
  void Emit(uint16_t rep, uint32_t code, int64_t slot, bool visible) {
    if (max_rep_ > 0) out_.levels.rep.push_back(rep);
    codes_.push_back(code);
    if (visible) {
      out_.slots.push_back(slot);
      out_.slot_valid.push_back(code == 0);
      out_.num_valid += code == 0;
    }
  }

  void Descend(size_t p, const ArrayData& array, int64_t i, uint16_t rep_in) {
    const PathNode& node = path_[p];
    if (array.null_count > 0 && array.IsNull(i)) {
      saw_null_[p] = true;
      // Below the innermost list a struct element and its leaf share the index.
      Emit(rep_in, uint32_t(p << 1) + 1, i, p >= visible_from_);
      return;
    }
    switch (node.kind) {
      case PathNode::kLeaf:
        Emit(rep_in, 0, i, true);
        return;
      case PathNode::kStruct:
        Descend(p + 1, *array.children.at(node.child), i, rep_in);
        return;
      case PathNode::kList: {
        const int64_t begin = array.offset(i), end = array.offset(i + 1);
        if (begin == end) {
          saw_empty_[p] = true;
          Emit(rep_in, uint32_t(p << 1) + 2, 0, false);
          return;
        }
        const ArrayData& items = *array.children.at(0);
        const uint16_t continuation = uint16_t(list_rep_[p] - 1);
        for (int64_t k = begin; k < end; ++k) Descend(p + 1, items, k, k == begin ? rep_in : continuation);
        return;
      }
    }
  }

  const LeafPath& path_;
  ShreddedLeaf& out_;
  std::vector<bool> saw_null_, saw_empty_;
  std::vector<uint16_t> list_rep_;
  std::vector<uint32_t> codes_;  // 0 = valid, else ((layer << 1) | is_empty) + 1
  uint16_t max_rep_ = 0;
  size_t visible_from_ = 0;
};

const ArrayData* LeafArray(const LeafPath& path, const ArrayData& root) {
  const ArrayData* array = &root;
  for (const auto& node : path) {
    if (node.kind == PathNode::kStruct) array = array->children.at(node.child).get();
    else if (node.kind == PathNode::kList) array = array->children.at(0).get();
  }
  return array;
}

}  // namespace

ShreddedLeaf Shred(const LeafPath& path, const ArrayData& root) {
  ShreddedLeaf out;
  out.num_rows = uint64_t(root.length);
  out.leaf = LeafArray(path, root);
  Shredder shredder(path, out);
  shredder.Run(root);
  shredder.Finish();
  return out;
}

// --------------------------------------------------------------------------- value blocks

namespace {

void CopyBits(std::string& dst, uint64_t dst_bit, const uint8_t* src, uint64_t src_bit, uint64_t n) {
  const uint64_t need = (dst_bit + n + 7) / 8;
  if (dst.size() < need) dst.resize(need, '\0');
  auto* d = reinterpret_cast<uint8_t*>(dst.data());
  if (dst_bit % 8 == 0 && src_bit % 8 == 0) {
    std::memcpy(d + dst_bit / 8, src + src_bit / 8, n / 8);
    for (uint64_t k = n / 8 * 8; k < n; ++k) SetBitTo(d, int64_t(dst_bit + k), GetBit(src, int64_t(src_bit + k)));
    return;
  }
  for (uint64_t k = 0; k < n; ++k) SetBitTo(d, int64_t(dst_bit + k), GetBit(src, int64_t(src_bit + k)));
}

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Appends the `width`-byte values at `slots` of `src`, a run of consecutive slots (the
// common case: rows without nulls) in one copy, and without zero-filling first.
template <typename Slots>
void AppendSlots(std::string& out, const uint8_t* src, const Slots& slots, uint64_t width) {
  out.reserve(out.size() + slots.size() * width);
  for (size_t k = 0; k < slots.size();) {
    size_t end = k + 1;
    while (end < slots.size() && slots[end] == slots[end - 1] + 1) ++end;
    out.append(reinterpret_cast<const char*>(src) + uint64_t(slots[k]) * width, (end - k) * width);
    k = end;
  }
}

}  // namespace

void ValueBlock::AppendFrom(const ValueBlock& other, uint64_t start, uint64_t n) {
  if (count == 0) {
    variable = other.variable;
    bits = other.bits;
    dim = other.dim;
    has_item_validity = other.has_item_validity;
  }
  if (start + n > other.count) ThrowCorrupt("value range {}+{} exceeds the {} decoded values", start, n, other.count);
  if (variable) {
    const uint64_t base = other.offsets[start];
    for (uint64_t k = start; k < start + n; ++k) offsets.push_back(offsets.back() + (other.offsets[k + 1] - other.offsets[k]));
    data.append(other.data, base, other.offsets[start + n] - base);
  } else if (bits % 8 == 0) {
    data.append(other.data, start * (bits / 8), n * (bits / 8));
  } else {
    CopyBits(data, count * bits, Bytes(other.data), start * bits, n * bits);
  }
  if (has_item_validity) CopyBits(item_validity, count * dim, Bytes(other.item_validity), start * dim, n * dim);
  count += n;
}

void ValueBlock::AppendEmpty(uint64_t n) {
  if (variable) {
    offsets.insert(offsets.end(), n, offsets.back());
  } else {
    data.resize((((count + n) * bits) + 7) / 8, '\0');
  }
  if (has_item_validity) item_validity.resize(((count + n) * dim + 7) / 8, '\0');
  count += n;
}

ValueBlock GatherValues(const LeafPath& path, const ShreddedLeaf& leaf) {
  const ArrayData& array = *leaf.leaf;
  const DataType& type = *path.back().field->type;
  ValueBlock out;
  const uint64_t n = leaf.slots.size();
  out.count = n;
  if (type.is_variable_binary()) {
    out.variable = true;
    out.offsets.reserve(n + 1);
    for (uint64_t k = 0; k < n; ++k) {
      if (leaf.slot_valid[k]) {
        const std::string_view v = array.GetView(leaf.slots[k]);
        out.data.append(v.data(), v.size());
      }
      out.offsets.push_back(out.data.size());
    }
    return out;
  }
  if (type.id() == TypeId::kBool) {
    out.bits = 1;
    out.data.assign((n + 7) / 8, '\0');
    auto* d = reinterpret_cast<uint8_t*>(out.data.data());
    const uint8_t* src = array.buffers[1]->data();
    for (uint64_t k = 0; k < n; ++k)
      if (GetBit(src, leaf.slots[k])) SetBit(d, int64_t(k));
    return out;
  }
  if (type.id() == TypeId::kFixedSizeList) {
    const ArrayData& items = *array.children.at(0);
    const uint64_t dim = uint64_t(type.fixed_size());
    const uint64_t item_bytes = uint64_t(items.type->bit_width() / 8);
    out.dim = uint32_t(dim);
    out.bits = dim * item_bytes * 8;
    const uint8_t* src = items.buffers[1]->data();
    bool item_nulls = false;
    if (items.null_count > 0)
      for (uint64_t k = 0; k < n && !item_nulls; ++k)
        for (uint64_t j = 0; j < dim; ++j)
          if (items.IsNull(int64_t(leaf.slots[k] * dim + j))) { item_nulls = true; break; }
    AppendSlots(out.data, src, leaf.slots, dim * item_bytes);
    if (item_nulls) {
      out.has_item_validity = true;
      out.item_validity.assign((n * dim + 7) / 8, '\0');
      auto* d = reinterpret_cast<uint8_t*>(out.item_validity.data());
      for (uint64_t k = 0; k < n; ++k)
        for (uint64_t j = 0; j < dim; ++j)
          if (items.IsValid(int64_t(leaf.slots[k] * dim + j))) SetBit(d, int64_t(k * dim + j));
    }
    return out;
  }
  const uint64_t width = uint64_t(type.byte_width());
  out.bits = width * 8;
  AppendSlots(out.data, array.buffers[1]->data(), leaf.slots, width);
  return out;
}

// ------------------------------------------------------------------------------ unravel

namespace {

BufferPtr ValidityBuffer(const std::vector<uint8_t>& valid, int64_t* null_count) {
  int64_t nulls = 0;
  for (uint8_t v : valid) nulls += v == 0;
  *null_count = nulls;
  if (nulls == 0) return nullptr;
  auto buffer = Buffer::Allocate((valid.size() + 7) / 8);
  for (size_t k = 0; k < valid.size(); ++k)
    if (valid[k]) SetBit(buffer->mutable_data(), int64_t(k));
  return buffer;
}

// The first `size` bytes of `s`, zero-extended when `s` is shorter.
BufferPtr CopyString(const std::string& s, size_t size) {
  auto buffer = Buffer::AllocateUninitialized(size);
  const size_t copied = std::min(size, s.size());
  std::memcpy(buffer->mutable_data(), s.data(), copied);
  std::memset(buffer->mutable_data() + copied, 0, size - copied);
  return buffer;
}

ArrayPtr MakeLeafArray(const TypePtr& type, const ValueBlock& values, const std::vector<uint8_t>& valid,
                       const std::string& where) {
  const int64_t n = int64_t(valid.size());
  if (values.count != uint64_t(n)) ThrowCorrupt("{}: {} values decoded for {} visible items", where, values.count, n);
  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = n;
  out->buffers.push_back(ValidityBuffer(valid, &out->null_count));
  const DataType& t = *type;
  if (t.id() == TypeId::kStruct) return MakePackedStructArray(type, values, valid, where);
  if (t.is_variable_binary()) {
    if (!values.variable) ThrowCorrupt("{}: fixed-width values stored for a {} column", where, t.ToString());
    const bool large = t.has_large_offsets();
    auto offsets = Buffer::AllocateUninitialized(size_t(n + 1) * (large ? 8 : 4));  // all written below
    for (int64_t k = 0; k <= n; ++k) {
      if (large) offsets->mutable_as<int64_t>()[k] = int64_t(values.offsets[k]);
      else {
        if (values.offsets[k] > uint64_t(INT32_MAX)) ThrowCorrupt("{}: values exceed 2 GiB for a {} column", where, t.ToString());
        offsets->mutable_as<int32_t>()[k] = int32_t(values.offsets[k]);
      }
    }
    out->buffers.push_back(offsets);
    out->buffers.push_back(CopyString(values.data, values.data.size()));
    return out;
  }
  if (values.variable) ThrowCorrupt("{}: variable-width values stored for a {} column", where, t.ToString());
  if (t.id() == TypeId::kFixedSizeList) {
    const TypePtr& item_type = t.child(0)->type;
    const int64_t dim = t.fixed_size();
    const uint64_t item_bits = uint64_t(item_type->bit_width());
    if (values.bits != item_bits * uint64_t(dim))
      ThrowCorrupt("{}: {} bits per value stored for {}", where, values.bits, t.ToString());
    auto items = std::make_shared<ArrayData>();
    items->type = item_type;
    items->length = n * dim;
    if (values.has_item_validity) {
      std::vector<uint8_t> item_valid(size_t(n * dim));
      for (int64_t k = 0; k < n * dim; ++k) item_valid[size_t(k)] = GetBit(Bytes(values.item_validity), k);
      items->buffers.push_back(ValidityBuffer(item_valid, &items->null_count));
    } else {
      items->buffers.push_back(nullptr);
    }
    items->buffers.push_back(CopyString(values.data, size_t(n * dim) * item_bits / 8));
    out->children.push_back(items);
    return out;
  }
  const uint64_t bits = t.id() == TypeId::kBool ? 1 : uint64_t(t.byte_width()) * 8;
  if (values.bits != bits) ThrowCorrupt("{}: {} bits per value stored for a {} column", where, values.bits, t.ToString());
  out->buffers.push_back(CopyString(values.data, size_t((uint64_t(n) * bits + 7) / 8)));
  return out;
}

}  // namespace

DecodedPath Unravel(const LeafPath& path, const std::vector<pb::RepDefLayer>& layers, PageItems&& items,
                    const std::string& where) {
  const size_t n = path.size();
  if (layers.size() != n)
    ThrowCorrupt("{}: page has {} rep/def layers but the field path has {}", where, layers.size(), n);
  const LevelScheme scheme(layers);
  for (size_t p = 0; p < n; ++p)
    if (scheme.is_list[p] != (path[p].kind == PathNode::kList))
      ThrowCorrupt("{}: rep/def layer {} does not match the schema", where, p);

  // k[p] = lists above layer p; first_at_depth[d] = first layer with k >= d.
  std::vector<uint16_t> lists_above(n, 0);
  for (size_t p = 1; p < n; ++p) lists_above[p] = uint16_t(lists_above[p - 1] + scheme.is_list[p - 1]);
  std::vector<size_t> first_at_depth(scheme.max_rep + 1, 0);
  for (uint16_t d = 0; d <= scheme.max_rep; ++d) {
    size_t p = 0;
    while (p < n && lists_above[p] < d) ++p;
    first_at_depth[d] = p;
  }
  // def level -> (layer, is_empty)
  uint16_t max_def = 0;
  for (size_t p = 0; p < n; ++p) max_def = std::max({max_def, scheme.null_level[p], scheme.empty_level[p]});
  std::vector<std::pair<size_t, bool>> def_stop(size_t(max_def) + 1, {n, false});
  for (size_t p = 0; p < n; ++p) {
    if (scheme.null_level[p]) def_stop[scheme.null_level[p]] = {p, false};
    if (scheme.empty_level[p]) def_stop[scheme.empty_level[p]] = {p, true};
  }

  const Levels& lv = items.levels;
  const size_t num_levels = lv.has_rep ? lv.rep.size() : lv.has_def ? lv.def.size() : items.values.count;
  if (lv.has_rep && lv.has_def && lv.rep.size() != lv.def.size())
    ThrowCorrupt("{}: {} repetition levels but {} definition levels", where, lv.rep.size(), lv.def.size());
  if (scheme.max_rep > 0 && !lv.has_rep && num_levels > 0)
    ThrowCorrupt("{}: list layers without repetition levels", where);

  DecodedPath out;
  out.layers.resize(n > 0 ? n - 1 : 0);
  std::vector<uint8_t> leaf_valid;
  uint64_t rows = 0;
  if (n == 1 && !lv.has_rep) {
    // A top-level leaf: every item is a row of its own (the walk below would start and end
    // each one at the leaf), valid unless its definition level says null.
    leaf_valid.assign(num_levels, 1);
    if (lv.has_def) {
      for (size_t k = 0; k < num_levels; ++k) {
        const uint16_t d = lv.def[k];
        if (d > max_def || (d > 0 && def_stop[d].first == n))
          ThrowCorrupt("{}: definition level {} has no meaning in this page", where, d);
        leaf_valid[k] = d == 0;
      }
    }
    rows = num_levels;
  }
  for (size_t k = rows; k < num_levels; ++k) {  // (starts past the end when the fast path took every level)
    const uint16_t r = lv.has_rep ? lv.rep[k] : scheme.max_rep;
    const uint16_t d = lv.has_def ? lv.def[k] : 0;
    if (r > scheme.max_rep) ThrowCorrupt("{}: repetition level {} above the maximum {}", where, r, scheme.max_rep);
    if (d > max_def || (d > 0 && def_stop[d].first == n))
      ThrowCorrupt("{}: definition level {} has no meaning in this page", where, d);
    if (r == scheme.max_rep) ++rows;
    else if (k == 0) ThrowCorrupt("{}: the first item does not start a row", where);
    const size_t start = first_at_depth[scheme.max_rep - r];
    const auto [stop, stop_empty] = d == 0 ? std::pair<size_t, bool>{n, false} : def_stop[d];
    if (start > stop) ThrowCorrupt("{}: item at level {} starts below the layer it ends at", where, k);
    for (size_t p = start; p < n; ++p) {
      if (p > 0 && path[p - 1].kind == PathNode::kList) ++out.layers[p - 1].offsets.back();
      if (p == n - 1) {
        leaf_valid.push_back(d == 0);
        break;
      }
      DecodedLayer& layer = out.layers[p];
      const bool is_list = path[p].kind == PathNode::kList;
      layer.valid.push_back(p < stop || (p == stop && stop_empty));
      if (is_list) {
        layer.offsets.push_back(layer.offsets.back());
        if (p >= stop) break;  // null, empty, or under a null struct: no items
      }
    }
  }
  if (rows != items.num_rows) ThrowCorrupt("{}: levels describe {} rows, expected {}", where, rows, items.num_rows);
  out.num_rows = rows;
  out.leaves.push_back(MakeLeafArray(DecodedLeafType(*path.back().field), items.values, leaf_valid, where));
  return out;
}

void DecodedPath::Append(DecodedPath&& other) {
  if (layers.empty() && leaves.empty()) {
    *this = std::move(other);
    return;
  }
  for (size_t p = 0; p < layers.size(); ++p) {
    DecodedLayer& a = layers[p];
    const DecodedLayer& b = other.layers[p];
    a.valid.insert(a.valid.end(), b.valid.begin(), b.valid.end());
    const int64_t base = a.offsets.back();
    for (size_t k = 1; k < b.offsets.size(); ++k) a.offsets.push_back(base + b.offsets[k]);
  }
  for (auto& leaf : other.leaves) leaves.push_back(std::move(leaf));
  num_rows += other.num_rows;
}

namespace {

ArrayPtr Build(const LanceField& node, size_t depth, const std::vector<LeafPath>& paths,
               std::vector<DecodedPath>& decoded, const std::vector<size_t>& ids) {
  const PathNode& first = paths[ids[0]][depth];
  if (first.kind == PathNode::kLeaf) {
    auto& parts = decoded[ids[0]].leaves;
    if (parts.empty()) return MakeEmptyArray(node.type);
    if (parts.size() > 1) {
      ArrayPtr merged = Concatenate(parts);
      parts.assign(1, merged);
    }
    return parts[0];
  }
  const DecodedLayer& layer = decoded[ids[0]].layers[depth];
  auto out = std::make_shared<ArrayData>();
  out->type = node.type;
  out->length = int64_t(layer.valid.size());
  out->buffers.push_back(ValidityBuffer(layer.valid, &out->null_count));
  if (first.kind == PathNode::kStruct) {
    for (size_t c = 0; c < node.children.size(); ++c) {
      std::vector<size_t> sub;
      for (size_t id : ids)
        if (paths[id][depth].child == c) sub.push_back(id);
      if (sub.empty()) ThrowCorrupt("struct field '{}' child {} has no column", node.name, c);
      out->children.push_back(Build(node.children[c], depth + 1, paths, decoded, sub));
    }
    return out;
  }
  const bool large = node.type->has_large_offsets();
  auto offsets = Buffer::Allocate(layer.offsets.size() * (large ? 8 : 4));
  for (size_t k = 0; k < layer.offsets.size(); ++k) {
    if (large) offsets->mutable_as<int64_t>()[k] = layer.offsets[k];
    else offsets->mutable_as<int32_t>()[k] = int32_t(layer.offsets[k]);
  }
  out->buffers.push_back(offsets);
  out->children.push_back(Build(node.children[0], depth + 1, paths, decoded, ids));
  if (out->children[0]->length != layer.offsets.back())
    ThrowCorrupt("list field '{}': offsets end at {} but {} items were decoded", node.name, layer.offsets.back(),
                 out->children[0]->length);
  return out;
}

}  // namespace

ArrayPtr Assemble(const LanceField& field, const std::vector<LeafPath>& paths, std::vector<DecodedPath>& decoded) {
  std::vector<size_t> ids(paths.size());
  for (size_t k = 0; k < ids.size(); ++k) ids[k] = k;
  return Build(field, 0, paths, decoded, ids);
}

}  // namespace lancelet::format::v21
