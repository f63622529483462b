#include "format/legacy_file.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "file.pb.h"
#include "format/little_endian.h"
#include "lancelet/error.h"
#include "table.pb.h"

namespace lancelet::format::legacy {

namespace {

// Footer: u64 position of the length-prefixed Metadata, u16 major, u16 minor, "LANC".
constexpr uint64_t kFooterBytes = 16;

std::vector<int64_t> ReadInt64s(const ByteSource& source, uint64_t position, uint64_t count) {
  std::vector<int64_t> out(count);
  source.ReadInto(position, count * 8, out.data());
  for (auto& v : out) v = LoadLE<int64_t>(&v);
  return out;
}

class LegacyDecoder final : public FieldDecoder {
 public:
  LegacyDecoder(const LanceField& field, std::shared_ptr<const Layout> layout, const ByteSource& source)
      : field_(field), layout_(std::move(layout)), source_(source) {}

  uint64_t num_rows() const override { return layout_->num_rows(); }

  ArrayPtr Read(uint64_t start, uint64_t count) const override {
    if (ArrayPtr flat = ReadFlat(start, count)) return flat;
    std::vector<ArrayPtr> pieces;
    ForEachBatchPart(start, count, [&](size_t batch, uint64_t first, uint64_t n, uint64_t) {
      pieces.push_back(Decode(field_, batch, first, first + n));
    });
    if (pieces.empty()) return MakeEmptyArray(field_.type);
    return pieces.size() == 1 ? pieces.front() : Concatenate(pieces);
  }

  // Fixed-width values (and fixed-size lists of them) land straight in one buffer, batch
  // after batch, instead of a buffer per batch and a concatenation; null for other types.
  ArrayPtr ReadFlat(uint64_t start, uint64_t count) const {
    const auto [leaf, per_row] = FlatItems(field_.type);
    const uint64_t row_bytes = per_row * ByteWidth(*leaf);
    if (row_bytes == 0 || field_.dictionary_index) return nullptr;
    auto values = Buffer::AllocateUninitialized(count * row_bytes);
    ForEachBatchPart(start, count, [&](size_t batch, uint64_t first, uint64_t n, uint64_t done) {
      const Layout::Page page = PageIn(field_, batch, first + n);
      source_.ReadInto(page.position + first * row_bytes, n * row_bytes, values->mutable_data() + done * row_bytes);
    });
    auto items = std::make_shared<ArrayData>();
    items->type = leaf;
    items->length = int64_t(count * per_row);
    items->buffers = {nullptr, std::move(values)};
    return WrapFixedSizeLists(field_.type, std::move(items));
  }

  // Reads each run of consecutive rows once, then puts the rows in the order asked.
  ArrayPtr Take(std::span<const uint64_t> rows) const override {
    const std::vector<uint64_t> unique = SortedUniqueRows(rows, false);
    std::vector<ArrayPtr> runs;
    for (size_t i = 0; i < unique.size();) {
      size_t j = i + 1;
      while (j < unique.size() && unique[j] == unique[j - 1] + 1) ++j;
      runs.push_back(Read(unique[i], j - i));
      i = j;
    }
    ArrayPtr all = runs.empty() ? MakeEmptyArray(field_.type) : runs.size() == 1 ? runs.front() : Concatenate(runs);
    std::vector<int64_t> at(rows.size());
    for (size_t k = 0; k < rows.size(); ++k)
      at[k] = std::lower_bound(unique.begin(), unique.end(), rows[k]) - unique.begin();
    return lancelet::Take(*all, at);
  }

 private:
  // Elements [s, e) of `node`'s page in batch b (rows of a top-level field or struct
  // child, items of a list's child).
  ArrayPtr Decode(const LanceField& node, size_t batch, uint64_t s, uint64_t e) const {
    const TypePtr& type = node.type;
    if (node.dictionary_index) return DecodeDictionaryKeys(node, batch, s, e);
    switch (type->id()) {
      case TypeId::kStruct: {
        auto out = std::make_shared<ArrayData>();
        out->type = type;
        out->length = int64_t(e - s);
        out->buffers = {nullptr};
        for (const auto& child : node.children) out->children.push_back(Decode(child, batch, s, e));
        return out;
      }
      case TypeId::kList:
      case TypeId::kLargeList:
        return DecodeList(node, batch, s, e);
      case TypeId::kUtf8:
      case TypeId::kLargeUtf8:
      case TypeId::kBinary:
      case TypeId::kLargeBinary:
        return DecodeBinary(node, batch, s, e);
      case TypeId::kNull:
        return MakeNullArray(type, int64_t(e - s));  // nothing stored
      default: {
        // A plain page; a fixed-size list's holds the flattened items of every level
        // (their type is part of the list's type, with no field of its own).
        const auto [leaf, per_row] = FlatItems(type);
        if (leaf->id() != TypeId::kBool && ByteWidth(*leaf) == 0)
          ThrowNotSupported("{}: field '{}' has type {}, which lancelet does not read from a legacy (0.1/0.2) data "
                            "file", source_.path(), node.name, type->ToString());
        const Layout::Page page = PageIn(node, batch, e);
        return WrapFixedSizeLists(type, ReadFixed(leaf, page.position, s * per_row, e * per_row));
      }
    }
  }

  // A dictionary field's page holds its keys, plain; the values are the dataset's
  // (LanceField::legacy_dictionary). A NULL row is not marked: its key names a value.
  ArrayPtr DecodeDictionaryKeys(const LanceField& node, size_t batch, uint64_t s, uint64_t e) const {
    if (!node.legacy_dictionary)
      ThrowCorrupt("{}: dictionary field '{}' (id {}) has no dictionary values in the dataset's manifest",
                   source_.path(), node.name, node.id);
    const DataType& key_type = *node.dictionary_index;
    const uint64_t width = ByteWidth(key_type);
    const Layout::Page page = PageIn(node, batch, e);
    const std::string bytes = source_.Read(page.position + s * width, (e - s) * width);
    const int64_t items = node.legacy_dictionary->length;
    std::vector<int64_t> keys(e - s);
    for (uint64_t k = 0; k < e - s; ++k) {
      uint64_t raw = 0;
      std::memcpy(&raw, bytes.data() + k * width, width);
      const int64_t key = key_type.is_signed_integer() && width < 8
                              ? int64_t(raw << (64 - 8 * width)) >> (64 - 8 * width)  // sign-extend
                              : int64_t(raw);
      if (key < 0 || key >= items)
        ThrowCorrupt("{}: field '{}' (id {}) batch {}: key {} at row {} is outside the {} dictionary values",
                     source_.path(), node.name, node.id, batch, key, s + k, items);
      keys[k] = key;
    }
    return lancelet::Take(*node.legacy_dictionary, keys);
  }

  // Calls fn(batch, first row in the batch, rows, rows before this part) for each batch
  // part of rows [start, start + count).
  template <typename Fn>
  void ForEachBatchPart(uint64_t start, uint64_t count, Fn&& fn) const {
    for (uint64_t done = 0; done < count;) {
      const size_t batch = layout_->BatchOf(start + done);
      const uint64_t first = start + done - layout_->batch_start(batch);
      const uint64_t n = std::min(count - done, layout_->batch_start(batch + 1) - (start + done));
      fn(batch, first, n, done);
      done += n;
    }
  }

  // The items under any nest of fixed-size lists (the type itself when it is not one),
  // and how many of them a row holds.
  static std::pair<TypePtr, uint64_t> FlatItems(TypePtr type) {
    uint64_t per_row = 1;
    while (type->id() == TypeId::kFixedSizeList) {
      per_row *= uint64_t(type->fixed_size());
      type = type->child(0)->type;
    }
    return {type, per_row};
  }

  // Bytes per value of a plain page; 0 for bool (bits) and for types with no plain page.
  static uint64_t ByteWidth(const DataType& type) { return uint64_t(type.byte_width()); }

  // The node's page in batch b, which must hold at least `end` elements.
  Layout::Page PageIn(const LanceField& node, size_t batch, uint64_t end) const {
    const Layout::Page page = layout_->PageOf(node.id, batch);
    if (page.length < end)
      ThrowCorrupt("{}: field '{}' (id {}) has {} values in batch {}, but {} are needed", source_.path(), node.name,
                   node.id, page.length, batch, end);
    return page;
  }

  // Elements [s, e) of a plain page at `position`: bits for bool, else fixed-width slots.
  ArrayPtr ReadFixed(const TypePtr& type, uint64_t position, uint64_t s, uint64_t e) const {
    auto out = std::make_shared<ArrayData>();
    out->type = type;
    out->length = int64_t(e - s);
    if (type->id() == TypeId::kBool) {
      const uint64_t first_byte = s / 8, end_byte = (e + 7) / 8;
      const std::string bytes = source_.Read(position + first_byte, end_byte - first_byte);
      auto bits = Buffer::Allocate((e - s + 7) / 8);
      const auto* from = reinterpret_cast<const uint8_t*>(bytes.data());
      for (uint64_t k = 0; k < e - s; ++k)
        if (GetBit(from, int64_t(s % 8 + k))) SetBit(bits->mutable_data(), int64_t(k));
      out->buffers = {nullptr, std::move(bits)};
      return out;
    }
    const uint64_t width = ByteWidth(*type);
    auto values = Buffer::AllocateUninitialized((e - s) * width);
    source_.ReadInto(position + s * width, (e - s) * width, values->mutable_data());
    out->buffers = {nullptr, std::move(values)};
    return out;
  }

  // `items` as `type`, a nest of fixed-size lists around them.
  static ArrayPtr WrapFixedSizeLists(const TypePtr& type, ArrayPtr items) {
    if (type->id() != TypeId::kFixedSizeList) return items;
    ArrayPtr child = WrapFixedSizeLists(type->child(0)->type, std::move(items));
    auto out = std::make_shared<ArrayData>();
    out->type = type;
    out->length = child->length / type->fixed_size();
    out->buffers = {nullptr};
    out->children = {std::move(child)};
    return out;
  }

  // Offsets [s, e] of a list, or the file positions of string values: ascending, and
  // (for strings) all before `limit`.
  std::vector<int64_t> CheckedOffsets(const LanceField& node, size_t batch, std::vector<int64_t> offsets,
                                      int64_t limit) const {
    for (size_t k = 0; k < offsets.size(); ++k)
      if (offsets[k] < 0 || offsets[k] > limit || (k > 0 && offsets[k] < offsets[k - 1]))
        ThrowCorrupt("{}: field '{}' (id {}) batch {}: offset {} is {}, outside [{}, {}]", source_.path(),
                     node.name, node.id, batch, k, offsets[k], k > 0 ? offsets[k - 1] : 0, limit);
    return offsets;
  }

  // Rebased offsets as an int32 or int64 buffer.
  BufferPtr OffsetsBuffer(const LanceField& node, const std::vector<int64_t>& offsets, bool large) const {
    const int64_t base = offsets.front();
    if (large) {
      auto out = Buffer::AllocateUninitialized(offsets.size() * 8);
      for (size_t k = 0; k < offsets.size(); ++k) out->mutable_as<int64_t>()[k] = offsets[k] - base;
      return out;
    }
    if (offsets.back() - base > std::numeric_limits<int32_t>::max())
      ThrowNotSupported("{}: field '{}': {} bytes in one batch do not fit {}'s 32-bit offsets", source_.path(),
                        node.name, offsets.back() - base, node.type->ToString());
    auto out = Buffer::AllocateUninitialized(offsets.size() * 4);
    for (size_t k = 0; k < offsets.size(); ++k) out->mutable_as<int32_t>()[k] = int32_t(offsets[k] - base);
    return out;
  }

  // A list page holds rows + 1 offsets (int32, or int64 for a large list) into the
  // batch's page of the item field.
  ArrayPtr DecodeList(const LanceField& node, size_t batch, uint64_t s, uint64_t e) const {
    if (node.children.size() != 1)
      ThrowCorrupt("{}: list field '{}' has {} item fields", source_.path(), node.name, node.children.size());
    const Layout::Page page = PageIn(node, batch, e + 1);
    const bool large = node.type->id() == TypeId::kLargeList;
    std::vector<int64_t> offsets(e - s + 1);
    if (large) {
      offsets = ReadInt64s(source_, page.position + s * 8, e - s + 1);
    } else {
      std::vector<int32_t> narrow(e - s + 1);
      source_.ReadInto(page.position + s * 4, narrow.size() * 4, narrow.data());
      for (size_t k = 0; k < narrow.size(); ++k) offsets[k] = LoadLE<int32_t>(&narrow[k]);
    }
    // The item pages bound the offsets when they are read (a struct item has no page).
    offsets = CheckedOffsets(node, batch, std::move(offsets), std::numeric_limits<int64_t>::max());
    auto out = std::make_shared<ArrayData>();
    out->type = node.type;
    out->length = int64_t(e - s);
    out->buffers = {nullptr, OffsetsBuffer(node, offsets, large)};
    out->children = {Decode(node.children[0], batch, uint64_t(offsets.front()), uint64_t(offsets.back()))};
    return out;
  }

  // A string page is the values' bytes, then rows + 1 int64 file positions of them; the
  // page table points at the positions.
  ArrayPtr DecodeBinary(const LanceField& node, size_t batch, uint64_t s, uint64_t e) const {
    const Layout::Page page = PageIn(node, batch, e);
    std::vector<int64_t> positions = CheckedOffsets(
        node, batch, ReadInt64s(source_, page.position + s * 8, e - s + 1), int64_t(page.position));
    auto out = std::make_shared<ArrayData>();
    out->type = node.type;
    out->length = int64_t(e - s);
    auto bytes = Buffer::AllocateUninitialized(uint64_t(positions.back() - positions.front()));
    source_.ReadInto(uint64_t(positions.front()), bytes->size(), bytes->mutable_data());
    BufferPtr validity;
    if (node.nullable) {  // an empty value was a NULL or "": the file cannot tell, and reads NULL
      for (size_t k = 0; k + 1 < positions.size(); ++k) {
        if (positions[k + 1] != positions[k]) continue;
        if (!validity) {
          validity = Buffer::Allocate((e - s + 7) / 8);
          std::memset(validity->mutable_data(), 0xff, validity->size());
        }
        ClearBit(validity->mutable_data(), int64_t(k));
        ++out->null_count;
      }
    }
    out->buffers = {std::move(validity), OffsetsBuffer(node, positions, node.type->has_large_offsets()),
                    std::move(bytes)};
    return out;
  }

  const LanceField field_;
  const std::shared_ptr<const Layout> layout_;
  const ByteSource& source_;
};

}  // namespace

namespace {

struct FileMetadata {
  uint16_t minor_version = 0;
  uint64_t position = 0;  // of the length-prefixed Metadata
  lance::file::Metadata metadata;
};

// The footer and the Metadata it points at. `listed` says how the caller knows the file
// for a legacy one, which a footer of another version contradicts.
FileMetadata ReadFileMetadata(const ByteSource& source, uint64_t size, const char* listed) {
  const std::string& path = source.path();
  if (size < kFooterBytes + 4)
    ThrowCorrupt("{}: {} bytes is too small for a legacy Lance file (the footer alone is {} bytes)", path, size,
                 kFooterBytes);
  const std::string footer = source.Read(size - kFooterBytes, kFooterBytes);
  if (footer.compare(12, 4, "LANC") != 0) ThrowCorrupt("{}: not a Lance file (the last 4 bytes are not \"LANC\")", path);
  const uint16_t major = LoadLE<uint16_t>(footer.data() + 8), minor = LoadLE<uint16_t>(footer.data() + 10);
  if (major != 0 || minor > 2)
    ThrowCorrupt("{}: {} a legacy (0.1/0.2) data file, but its footer says version {}.{}", path, listed, major, minor);
  FileMetadata out;
  out.minor_version = minor;
  const uint64_t metadata_at = LoadLE<uint64_t>(footer.data());
  const uint64_t footer_at = size - kFooterBytes;
  if (metadata_at > footer_at - 4)
    ThrowCorrupt("{}: the footer puts the metadata at byte {}, past the footer at {}", path, metadata_at, footer_at);
  const std::string length_bytes = source.Read(metadata_at, 4);
  const uint32_t metadata_size = LoadLE<uint32_t>(length_bytes.data());
  if (metadata_size > footer_at - metadata_at - 4)
    ThrowCorrupt("{}: the metadata at byte {} claims {} bytes, past the footer at {}", path, metadata_at,
                 metadata_size, footer_at);
  if (!out.metadata.ParseFromString(source.Read(metadata_at + 4, metadata_size)))
    ThrowCorrupt("{}: the {} bytes at {} are not a lance.file.Metadata", path, metadata_size, metadata_at + 4);
  out.position = metadata_at;
  return out;
}

}  // namespace

LanceSchema ReadOwnSchema(const ByteSource& source, uint64_t size) {
  const std::string& path = source.path();
  const FileMetadata file = ReadFileMetadata(source, size, "its footer marks it as");
  const uint64_t at = file.metadata.manifest_position();
  if (at == 0) ThrowCorrupt("{}: a legacy (0.1/0.2) Lance file with no schema of its own (manifest position 0)", path);
  if (at > file.position || file.position - at < 4)
    ThrowCorrupt("{}: the schema at byte {} does not lie before the metadata at {}", path, at, file.position);
  const uint32_t length = LoadLE<uint32_t>(source.Read(at, 4).data());
  if (length > file.position - at - 4)
    ThrowCorrupt("{}: the schema at byte {} claims {} bytes, past the metadata at {}", path, at, length, file.position);
  lance::table::Manifest manifest;
  if (!manifest.ParseFromString(source.Read(at + 4, length)))
    ThrowCorrupt("{}: the {} bytes at {} are not a lance.table.Manifest", path, length, at + 4);
  if (manifest.fields().empty()) ThrowCorrupt("{}: the file's own schema has no fields", path);
  Metadata metadata(manifest.schema_metadata().begin(), manifest.schema_metadata().end());
  LanceSchema schema = LanceSchema::FromProto(manifest.fields(), metadata);
  for (const auto& top : schema.fields()) {
    top.ForEach([&](const LanceField& field) {
      // Their values would be at Field.dictionary in the file; no index file has one.
      if (field.dictionary_index)
        ThrowNotSupported("{}: field '{}' is dictionary-encoded, which lancelet does not read from a legacy file "
                          "outside a dataset", path, field.name);
    });
  }
  return schema;
}

std::shared_ptr<const Layout> Layout::Read(const ByteSource& source, uint64_t size, int32_t min_id, int32_t max_id) {
  auto layout = std::make_shared<Layout>();
  const std::string& path = source.path();
  layout->path_ = path;
  const FileMetadata file = ReadFileMetadata(source, size, "the manifest lists it as");
  layout->minor_version_ = file.minor_version;
  const uint64_t metadata_at = file.position;
  const lance::file::Metadata& metadata = file.metadata;

  layout->batch_starts_ = {0};
  for (int k = 0; k < metadata.batch_offsets_size(); ++k) {
    const int64_t offset = metadata.batch_offsets(k);
    if ((k == 0 && offset != 0) || (k > 0 && offset < int64_t(layout->batch_starts_.back())))
      ThrowCorrupt("{}: batch offset {} is {}; batch offsets start at 0 and never decrease", path, k, offset);
    if (k > 0) layout->batch_starts_.push_back(uint64_t(offset));
  }

  layout->min_id_ = min_id;
  layout->max_id_ = max_id;
  const uint64_t fields = max_id >= min_id ? uint64_t(max_id - min_id) + 1 : 0;
  const uint64_t entries = fields * layout->num_batches();
  const uint64_t table_at = metadata.page_table_position();
  if (table_at > metadata_at || entries > (metadata_at - table_at) / 16)
    ThrowCorrupt("{}: a page table of {} fields x {} batches at byte {} runs past the metadata at {}", path, fields,
                 layout->num_batches(), table_at, metadata_at);
  const std::vector<int64_t> table = ReadInt64s(source, table_at, entries * 2);
  layout->pages_.resize(entries);
  for (uint64_t k = 0; k < entries; ++k) {
    if (table[2 * k] < 0 || table[2 * k + 1] < 0)
      ThrowCorrupt("{}: page table entry {} is ({}, {}); positions and lengths are never negative", path, k,
                   table[2 * k], table[2 * k + 1]);
    layout->pages_[k] = {uint64_t(table[2 * k]), uint64_t(table[2 * k + 1])};
  }
  return layout;
}

size_t Layout::BatchOf(uint64_t row) const {
  return size_t(std::upper_bound(batch_starts_.begin(), batch_starts_.end(), row) - batch_starts_.begin()) - 1;
}

Layout::Page Layout::PageOf(int32_t field_id, size_t batch) const {
  if (field_id < min_id_ || field_id > max_id_ || batch >= num_batches())
    ThrowCorrupt("{}: no page for field id {} in batch {} (the page table covers ids {} to {} in {} batches)", path_,
                 field_id, batch, min_id_, max_id_, num_batches());
  return pages_[uint64_t(field_id - min_id_) * num_batches() + batch];
}

std::unique_ptr<FieldDecoder> MakeDecoder(const LanceField& field, std::shared_ptr<const Layout> layout,
                                          const ByteSource& source) {
  return std::make_unique<LegacyDecoder>(field, std::move(layout), source);
}

}  // namespace lancelet::format::legacy
