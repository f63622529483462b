// The 2.0 writer: plain encodings, laid out as the reference's 2.0 writer lays them out.
//
// Page encodings written (buffer indices count the page's buffers in order):
//   fixed width (incl. bool, fixed_size_binary):  Nullable(NoNull(Flat) | SomeNull(Flat1, Flat) | AllNull)
//   fixed_size_list:  Nullable(... FixedSizeList(dim, items = Nullable(...)))
//   utf8/binary:      Binary(indices = Nullable(NoNull(Flat64)), bytes = Flat8, null_adjustment)
//   utf8, < 100 distinct values in a page of >= 100:  Dictionary(indices Flat8, items Binary)
//   list offsets:     List(offsets = Nullable(NoNull(Flat64)), null_offset_adjustment, num_items)
//   struct header:    SimpleStruct, one page at the end holding every row, no buffers
//   packed struct:    PackedStruct(inner = [Nullable(NoNull(Flat)) ...], rows interleaved)
//
// Paging: each leaf buffers values until `page_size_bytes` are waiting, then emits full
// pages of about that size and keeps the rest. A list emits its offsets page when its
// own offsets fill a page and then flushes its items, so no item page is shared by two
// offsets pages (the reference's readers rely on that).
#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "format/dictionary_keys.h"
#include "format/v20_internal.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"

namespace lancelet::format::v20 {
namespace {

namespace pb = lance::encodings;

std::string BytesOf(const void* data, size_t size) { return std::string(static_cast<const char*>(data), size); }

void SetFlat(pb::ArrayEncoding* enc, uint64_t bits, uint32_t buffer_index) {
  auto* flat = enc->mutable_flat();
  flat->set_bits_per_value(bits);
  flat->mutable_buffer()->set_buffer_index(buffer_index);
  flat->mutable_buffer()->set_buffer_type(pb::Buffer::page);
}

// Bits one value of a fixed-stride type occupies in a Flat buffer.
uint64_t FlatBits(const DataType& type) {
  if (type.id() == TypeId::kFixedSizeBinary) return uint64_t(type.fixed_size()) * 8;
  return uint64_t(type.bit_width());
}

// Bytes of the `length` values (or bits) of a fixed-width array.
std::string FixedWidthBytes(const ArrayData& a) {
  uint64_t bits = FlatBits(*a.type);
  uint64_t size = bits == 1 ? (uint64_t(a.length) + 7) / 8 : uint64_t(a.length) * bits / 8;
  if (size == 0) return {};
  return BytesOf(a.buffers[1]->data(), size);
}

std::string ValidityBytes(const ArrayData& a) { return BytesOf(a.buffers[0]->data(), (a.length + 7) / 8); }

void EncodeNullable(const ArrayData& a, pb::ArrayEncoding* enc, std::vector<std::string>& buffers);

// The values below a Nullable node: Flat, or a FixedSizeList over its items.
void EncodeValues(const ArrayData& a, pb::ArrayEncoding* enc, std::vector<std::string>& buffers) {
  if (a.type->id() == TypeId::kFixedSizeList) {
    auto* fsl = enc->mutable_fixed_size_list();
    fsl->set_dimension(uint32_t(a.type->fixed_size()));
    fsl->set_has_validity(false);
    EncodeNullable(*a.child(0), fsl->mutable_items(), buffers);
    return;
  }
  SetFlat(enc, FlatBits(*a.type), uint32_t(buffers.size()));
  buffers.push_back(FixedWidthBytes(a));
}

void EncodeNullable(const ArrayData& a, pb::ArrayEncoding* enc, std::vector<std::string>& buffers) {
  auto* nullable = enc->mutable_nullable();
  if (a.length > 0 && a.null_count == a.length) {
    nullable->mutable_all_nulls();
  } else if (a.null_count > 0) {
    auto* some = nullable->mutable_some_nulls();
    SetFlat(some->mutable_validity(), 1, uint32_t(buffers.size()));
    buffers.push_back(ValidityBytes(a));
    EncodeValues(a, some->mutable_values(), buffers);
  } else {
    EncodeValues(a, nullable->mutable_no_nulls()->mutable_values(), buffers);
  }
}

// Binary: the end offset of every value relative to the page's first byte; a null value
// adds null_adjustment (= total bytes + 1), which keeps every end recoverable.
void EncodeBinary(const ArrayData& a, pb::ArrayEncoding* enc, std::vector<std::string>& buffers) {
  const int64_t base = a.offset(0);
  const uint64_t total = uint64_t(a.offset(a.length) - base);
  const uint64_t adjustment = a.length == 0 ? 0 : total + 1;
  std::vector<uint64_t> ends(a.length);
  for (int64_t i = 0; i < a.length; ++i) {
    ends[i] = uint64_t(a.offset(i + 1) - base) + (a.IsNull(i) ? adjustment : 0);
  }
  auto* binary = enc->mutable_binary();
  binary->set_null_adjustment(adjustment);
  SetFlat(binary->mutable_indices()->mutable_nullable()->mutable_no_nulls()->mutable_values(), 64,
          uint32_t(buffers.size()));
  buffers.push_back(BytesOf(ends.data(), ends.size() * 8));
  SetFlat(binary->mutable_bytes(), 8, uint32_t(buffers.size()));
  buffers.push_back(total == 0 ? std::string() : BytesOf(a.buffers[2]->data() + base, total));
}

// The reference dictionary-encodes a utf8 page of at least 100 values with fewer than
// 100 distinct ones (it estimates; we count). Index 0 is null, k is item k-1.
constexpr size_t kDictionaryThreshold = 100;

bool WantsDictionary(const ArrayData& a) {
  if (a.type->id() != TypeId::kUtf8 || size_t(a.length) < kDictionaryThreshold) return false;
  std::unordered_set<std::string_view> seen;
  for (int64_t i = 0; i < a.length; ++i) {
    if (a.IsValid(i) && seen.insert(a.GetView(i)).second && seen.size() >= kDictionaryThreshold) return false;
  }
  return true;
}

void EncodeDictionary(const ArrayData& a, pb::ArrayEncoding* enc, std::vector<std::string>& buffers) {
  std::unordered_map<std::string_view, uint8_t> index_of;
  BinaryBuilder items(a.type);
  std::string indices(size_t(a.length), '\0');
  for (int64_t i = 0; i < a.length; ++i) {
    if (a.IsNull(i)) continue;
    auto [it, added] = index_of.emplace(a.GetView(i), uint8_t(index_of.size() + 1));
    if (added) items.Append(it->first);
    indices[size_t(i)] = char(it->second);
  }
  if (index_of.empty()) items.AppendNull();  // an all-null page keeps one null item, as the reference does
  ArrayPtr dictionary = items.Finish();
  auto* dict = enc->mutable_dictionary();
  dict->set_num_dictionary_items(uint32_t(dictionary->length));
  SetFlat(dict->mutable_indices()->mutable_nullable()->mutable_no_nulls()->mutable_values(), 8,
          uint32_t(buffers.size()));
  buffers.push_back(std::move(indices));
  EncodeBinary(*dictionary, dict->mutable_items(), buffers);
}

// A dictionary field's page (dict:<values>:<keys>): the page's distinct values as items in
// order of first appearance, and the Arrow keys from 0; a NULL row's key names a NULL item.
void EncodeKeyedDictionary(const LanceField& field, const ArrayData& a, pb::ArrayEncoding* enc,
                           std::vector<std::string>& buffers) {
  DictionaryKeyer keyer = PageKeyer(field);
  const bool variable = a.type->is_variable_binary();
  const size_t width = variable ? 0 : size_t(a.type->byte_width());
  const char* fixed = variable ? nullptr : reinterpret_cast<const char*>(a.buffers[1]->data());
  std::vector<uint64_t> keys(size_t(a.length));
  for (int64_t i = 0; i < a.length; ++i) {
    if (a.IsNull(i)) keys[size_t(i)] = keyer.NullKey(i);
    else keys[size_t(i)] = keyer.KeyOf(variable ? a.GetView(i) : std::string_view(fixed + size_t(i) * width, width), i);
  }
  ArrayPtr items = Take(a, keyer.item_sources());
  auto* dict = enc->mutable_dictionary();
  dict->set_num_dictionary_items(uint32_t(items->length));
  SetFlat(dict->mutable_indices()->mutable_nullable()->mutable_no_nulls()->mutable_values(), uint64_t(keyer.key_bits()),
          uint32_t(buffers.size()));
  buffers.push_back(keyer.KeyBytes(keys));
  if (variable) EncodeBinary(*items, dict->mutable_items(), buffers);
  else EncodeNullable(*items, dict->mutable_items(), buffers);
}

void EncodePacked(const ArrayData& a, pb::ArrayEncoding* enc, std::vector<std::string>& buffers) {
  auto* packed = enc->mutable_packed_struct();
  uint64_t row_bytes = 0;
  std::vector<uint64_t> widths;
  for (const auto& child : a.children) {
    uint64_t bits = FlatBits(*child->type);
    widths.push_back(bits / 8);
    row_bytes += bits / 8;
    SetFlat(packed->add_inner()->mutable_nullable()->mutable_no_nulls()->mutable_values(), bits, 0);
  }
  std::string out(row_bytes * a.length, '\0');
  uint64_t col = 0;
  for (size_t c = 0; c < a.children.size(); ++c) {
    const uint8_t* src = a.children[c]->buffers[1]->data();
    for (int64_t r = 0; r < a.length; ++r) std::memcpy(&out[r * row_bytes + col], src + r * widths[c], widths[c]);
    col += widths[c];
  }
  packed->mutable_buffer()->set_buffer_index(uint32_t(buffers.size()));
  packed->mutable_buffer()->set_buffer_type(pb::Buffer::page);
  buffers.push_back(std::move(out));
}

EncodedPage MakePage(const ArrayData& a, const pb::ArrayEncoding& enc, std::vector<std::string> buffers,
                     uint64_t first_row) {
  EncodedPage page;
  page.num_rows = uint64_t(a.length);
  page.buffers = std::move(buffers);
  page.encoding = WrapAny(kArrayEncodingUrl, enc);
  page.priority = first_row;
  return page;
}

// --- node encoders -------------------------------------------------------------------

class NodeEncoder {
 public:
  explicit NodeEncoder(uint32_t column) : column_(column) {}
  virtual ~NodeEncoder() = default;
  virtual void Append(const ArrayData& values, PageSink& sink) = 0;
  // Emits everything buffered.
  virtual void Flush(PageSink& sink) = 0;
  // Flush plus the pages only written at the end (struct headers).
  virtual void Finish(PageSink& sink) { Flush(sink); }

 protected:
  uint32_t column_;
};

std::unique_ptr<NodeEncoder> MakeNodeEncoder(const LanceField& field, uint32_t& next_column,
                                             const FileWriterOptions& options);

// Rejects nulls in non-nullable nodes, like the reference writer.
void CheckNullability(const LanceField& field, const ArrayData& values) {
  if (!field.nullable && values.null_count > 0) {
    ThrowInvalid("field '{}' is not nullable but the values written contain {} nulls", field.name,
                 values.null_count);
  }
}

void CheckType(const LanceField& field, const ArrayData& values) {
  if (!values.type->Equals(*field.type)) {
    ThrowInvalid("field '{}' has type {} but the values written have type {}", field.name,
                 field.type->ToString(), values.type->ToString());
  }
}

// Primitive, binary, fixed_size_list, fixed_size_binary and packed struct columns.
class LeafEncoder final : public NodeEncoder {
 public:
  LeafEncoder(const LanceField& field, uint32_t column, const FileWriterOptions& options)
      : NodeEncoder(column), field_(field), page_bytes_(std::max<uint64_t>(options.page_size_bytes, 1)) {
    const auto& type = *field.type;
    if (type.id() == TypeId::kFixedSizeList) {
      const DataType* item = type.child(0)->type.get();
      while (item->id() == TypeId::kFixedSizeList) item = item->child(0)->type.get();
      if (!item->is_fixed_width() && item->id() != TypeId::kFixedSizeBinary) {
        ThrowNotSupported("field '{}': 2.0 files store fixed_size_list items of fixed width only, not {}",
                          field.name, item->ToString());
      }
    }
    if (IsBlob(field)) {
      ThrowNotSupported("field '{}': writing blob columns (lance-encoding:blob) at file version 2.0 is not "
                        "supported; use 2.1 or newer", field.name);
    }
    if (IsPackedStruct(field)) {
      for (const auto& child : type.children()) {
        if (!child->type->is_fixed_width() || child->type->id() == TypeId::kBool) {
          ThrowNotSupported("field '{}': a packed struct needs byte-wide fixed-width children, not {} ('{}')",
                            field.name, child->type->ToString(), child->name);
        }
      }
    }
  }

  void Append(const ArrayData& values, PageSink& sink) override {
    if (values.length == 0) return;
    if (IsPackedStruct(field_)) {
      if (values.null_count > 0) {
        ThrowNotSupported("field '{}': a packed struct cannot hold null rows", field_.name);
      }
      for (size_t c = 0; c < values.children.size(); ++c) {
        if (values.child(c)->null_count > 0) {
          ThrowNotSupported("field '{}': packed struct child '{}' cannot hold nulls", field_.name,
                            field_.type->child(c)->name);
        }
      }
    }
    pending_.push_back(std::make_shared<ArrayData>(values));
    pending_bytes_ += Bytes(values, 0, values.length);
    if (pending_bytes_ >= page_bytes_) Emit(sink, /*all=*/false);
  }

  void Flush(PageSink& sink) override { Emit(sink, /*all=*/true); }

 private:
  // Approximate encoded bytes of rows [start, end).
  static uint64_t Bytes(const ArrayData& a, int64_t start, int64_t end) {
    if (a.type->is_variable_binary()) return uint64_t(a.offset(end) - a.offset(start)) + 8 * uint64_t(end - start);
    return RowBytes(*a.type) * uint64_t(end - start);
  }
  static uint64_t RowBytes(const DataType& type) {
    switch (type.id()) {
      case TypeId::kBool: return 1;  // an eighth, but one keeps the arithmetic simple
      case TypeId::kFixedSizeBinary: return uint64_t(type.fixed_size());
      case TypeId::kFixedSizeList: return RowBytes(*type.child(0)->type) * uint64_t(type.fixed_size());
      case TypeId::kStruct: {
        uint64_t n = 0;
        for (const auto& c : type.children()) n += RowBytes(*c->type);
        return n;
      }
      default: return std::max<uint64_t>(uint64_t(type.bit_width()) / 8, 1);
    }
  }
  // End of the page that starts at `start`: at least one row, at most page_bytes_.
  int64_t PageEnd(const ArrayData& a, int64_t start) const {
    if (a.type->is_variable_binary()) {
      int64_t end = start + 1;
      while (end < a.length && Bytes(a, start, end + 1) <= page_bytes_) ++end;
      return end;
    }
    uint64_t rows = std::max<uint64_t>(page_bytes_ / RowBytes(*a.type), 1);
    return std::min<int64_t>(a.length, start + int64_t(rows));
  }

  void Emit(PageSink& sink, bool all) {
    if (pending_.empty()) return;
    ArrayPtr data = pending_.size() == 1 ? pending_[0] : Concatenate(pending_);
    pending_.clear();
    int64_t start = 0;
    while (start < data->length) {
      int64_t end = PageEnd(*data, start);
      if (!all && end == data->length && Bytes(*data, start, end) < page_bytes_) break;  // keep a partial page
      ArrayPtr page = (start == 0 && end == data->length) ? data : Slice(*data, start, end - start);
      WritePage(*page, sink);
      start = end;
    }
    pending_bytes_ = 0;
    if (start < data->length) {
      pending_.push_back(start == 0 ? data : Slice(*data, start, data->length - start));
      pending_bytes_ = Bytes(*pending_.back(), 0, pending_.back()->length);
    }
  }

  void WritePage(const ArrayData& a, PageSink& sink) {
    pb::ArrayEncoding enc;
    std::vector<std::string> buffers;
    if (field_.dictionary_index) {
      EncodeKeyedDictionary(field_, a, &enc, buffers);
    } else if (WantsDictionary(a)) {
      EncodeDictionary(a, &enc, buffers);
    } else if (a.type->is_variable_binary()) {
      EncodeBinary(a, &enc, buffers);
    } else if (IsPackedStruct(field_)) {
      EncodePacked(a, &enc, buffers);
    } else {
      EncodeNullable(a, &enc, buffers);
    }
    sink.WritePage(column_, MakePage(a, enc, std::move(buffers), rows_written_));
    rows_written_ += uint64_t(a.length);
  }

  const LanceField& field_;
  uint64_t page_bytes_;
  std::vector<ArrayPtr> pending_;
  uint64_t pending_bytes_ = 0;
  uint64_t rows_written_ = 0;
};

class ListEncoder final : public NodeEncoder {
 public:
  ListEncoder(const LanceField& field, uint32_t& next_column, const FileWriterOptions& options)
      : NodeEncoder(next_column++), field_(field), page_bytes_(std::max<uint64_t>(options.page_size_bytes, 1)) {
    items_ = MakeNodeEncoder(field.children.at(0), next_column, options);
  }

  void Append(const ArrayData& values, PageSink& sink) override {
    if (values.length == 0) return;
    const ArrayData& items = *values.child(0);
    CheckNullability(field_.children[0], items);
    int64_t first = values.offset(0), last = values.offset(values.length);
    if (first == 0 && last == items.length) {
      items_->Append(items, sink);
    } else if (last > first) {
      items_->Append(*Slice(items, first, last - first), sink);
    }
    pending_.push_back(std::make_shared<ArrayData>(values));
    pending_rows_ += uint64_t(values.length);
    if (pending_rows_ * 8 >= page_bytes_) Flush(sink);
  }

  void Flush(PageSink& sink) override {
    if (!pending_.empty()) {
      // Offsets are the running end of each list relative to the page's first item;
      // a null list adds null_offset_adjustment (= items in the page + 1).
      uint64_t span = 0;
      for (const auto& a : pending_) span += uint64_t(a->offset(a->length) - a->offset(0));
      const uint64_t adjustment = span + 1;
      std::vector<uint64_t> ends;
      ends.reserve(pending_rows_);
      uint64_t base = 0;
      for (const auto& a : pending_) {
        const int64_t start = a->offset(0);
        for (int64_t i = 0; i < a->length; ++i) {
          ends.push_back(base + uint64_t(a->offset(i + 1) - start) + (a->IsNull(i) ? adjustment : 0));
        }
        base += uint64_t(a->offset(a->length) - start);
      }
      pb::ArrayEncoding enc;
      auto* list = enc.mutable_list();
      list->set_null_offset_adjustment(adjustment);
      list->set_num_items(span);
      SetFlat(list->mutable_offsets()->mutable_nullable()->mutable_no_nulls()->mutable_values(), 64, 0);
      EncodedPage page;
      page.num_rows = pending_rows_;
      page.buffers.push_back(BytesOf(ends.data(), ends.size() * 8));
      page.encoding = WrapAny(kArrayEncodingUrl, enc);
      page.priority = rows_written_;
      sink.WritePage(column_, std::move(page));
      rows_written_ += pending_rows_;
      pending_.clear();
      pending_rows_ = 0;
    }
    items_->Flush(sink);
  }

  void Finish(PageSink& sink) override {
    Flush(sink);
    items_->Finish(sink);
  }

 private:
  const LanceField& field_;
  uint64_t page_bytes_;
  std::unique_ptr<NodeEncoder> items_;
  std::vector<ArrayPtr> pending_;
  uint64_t pending_rows_ = 0;
  uint64_t rows_written_ = 0;
};

class StructEncoder final : public NodeEncoder {
 public:
  StructEncoder(const LanceField& field, uint32_t& next_column, const FileWriterOptions& options)
      : NodeEncoder(next_column++), field_(field) {
    for (const auto& child : field.children) children_.push_back(MakeNodeEncoder(child, next_column, options));
  }

  void Append(const ArrayData& values, PageSink& sink) override {
    if (values.null_count > 0) {
      ThrowNotSupported("field '{}': file version 2.0 cannot store null struct rows ({} found); write file "
                        "version 2.1 or newer (lancelet create --file-version 2.1)", field_.name, values.null_count);
    }
    for (size_t i = 0; i < children_.size(); ++i) {
      CheckNullability(field_.children[i], *values.child(i));
      children_[i]->Append(*values.child(i), sink);
    }
    rows_ += uint64_t(values.length);
  }

  void Flush(PageSink& sink) override {
    for (auto& c : children_) c->Flush(sink);
  }

  void Finish(PageSink& sink) override {
    for (auto& c : children_) c->Finish(sink);
    pb::ArrayEncoding enc;
    enc.mutable_struct_();
    EncodedPage page;
    page.num_rows = rows_;
    page.encoding = WrapAny(kArrayEncodingUrl, enc);
    sink.WritePage(column_, std::move(page));
  }

 private:
  const LanceField& field_;
  std::vector<std::unique_ptr<NodeEncoder>> children_;
  uint64_t rows_ = 0;
};

std::unique_ptr<NodeEncoder> MakeNodeEncoder(const LanceField& field, uint32_t& next_column,
                                             const FileWriterOptions& options) {
  if (field.type->is_list()) return std::make_unique<ListEncoder>(field, next_column, options);
  if (field.type->id() == TypeId::kStruct && !IsPackedStruct(field)) {
    return std::make_unique<StructEncoder>(field, next_column, options);
  }
  return std::make_unique<LeafEncoder>(field, next_column++, options);
}

// Pre-order: every node has its own column, except inside a packed struct (one column).
void AssignColumns(const LanceField& field, int32_t& next, std::vector<int32_t>& out) {
  out.push_back(next++);
  if (IsPackedStruct(field)) {
    for (const auto& c : field.children) c.ForEach([&](const LanceField&) { out.push_back(-1); });
    return;
  }
  for (const auto& c : field.children) AssignColumns(c, next, out);
}

class V20FieldEncoder final : public FieldEncoder {
 public:
  V20FieldEncoder(const LanceField& field, const FileWriterOptions& options) : field_(field) {
    uint32_t next = 0;
    root_ = MakeNodeEncoder(field_, next, options);
    num_columns_ = next;
  }

  uint32_t num_columns() const override { return num_columns_; }

  void Append(const ArrayData& values, PageSink& sink) override {
    CheckType(field_, values);
    CheckNullability(field_, values);
    root_->Append(values, sink);
  }

  void Finish(PageSink& sink) override { root_->Finish(sink); }

  std::string ColumnEncoding(uint32_t) const override {
    pb::ColumnEncoding enc;
    enc.mutable_values();
    return WrapAny(kColumnEncodingUrl, enc);
  }

  std::vector<int32_t> NodeIds() const override {
    std::vector<int32_t> out;
    field_.ForEach([&](const LanceField& node) { out.push_back(node.id); });
    return out;
  }

  std::vector<int32_t> NodeColumns() const override {
    std::vector<int32_t> out;
    int32_t next = 0;
    AssignColumns(field_, next, out);
    return out;
  }

 private:
  LanceField field_;  // owned copy: node encoders keep references into it
  std::unique_ptr<NodeEncoder> root_;
  uint32_t num_columns_ = 0;
};

}  // namespace

std::unique_ptr<FieldEncoder> MakeFieldEncoderImpl(const LanceField& field, const FileWriterOptions& options) {
  return std::make_unique<V20FieldEncoder>(field, options);
}

}  // namespace lancelet::format::v20
