// Packed structs in 2.1 / 2.2 files: a struct whose children are stored together in one
// column, one row after another ("row major"), instead of one column per child.
//   PackedStruct(bits_per_value = [w0, w1, ...], values = Flat(sum w)): every row is the
//     children's fixed-width values back to back (widths are whole bytes).
//   VariablePackedStruct(fields): every row is, per child, either its fixed-width bytes or
//     a length prefix (bits_per_length) followed by that many bytes; the rows themselves are
//     variable-width values of the page layout.
// Blob descriptors (legacy blobs and blob v2) are such packed structs.
#include <cctype>
#include <cstring>

#include "format/little_endian.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

// Byte width of a fixed-width packed child (bools and other sub-byte types are not packed).
uint64_t FixedChildBytes(const DataType& type) {
  if (type.id() == TypeId::kFixedSizeBinary) return uint64_t(type.fixed_size());
  if (type.id() == TypeId::kBool || !type.is_fixed_width() || type.bit_width() % 8) return 0;
  return uint64_t(type.bit_width() / 8);
}

}  // namespace

bool IsPackedStructField(const LanceField& field) {
  return field.type->id() == TypeId::kStruct &&
         (MetadataIs(field, "packed", "true") || MetadataIs(field, "lance-encoding:packed", "true"));
}

bool IsLegacyBlobField(const LanceField& field) {
  return field.type->id() == TypeId::kLargeBinary &&
         (MetadataIs(field, "lance-encoding:blob", "true") || MetadataIs(field, "lance-schema:storage-class", "blob"));
}

bool IsBlobV2Field(const LanceField& field) {
  return MetadataIs(field, "ARROW:extension:name", "lance.blob.v2");
}

TypePtr LegacyBlobDescriptorType() {
  return DataType::Struct({Field::Make("position", DataType::UInt64(), false),
                           Field::Make("size", DataType::UInt64(), false)});
}

TypePtr BlobV2DescriptorType() {
  return DataType::Struct({Field::Make("kind", DataType::UInt8(), false),
                           Field::Make("position", DataType::UInt64(), false),
                           Field::Make("size", DataType::UInt64(), false),
                           Field::Make("blob_id", DataType::UInt32(), false),
                           Field::Make("blob_uri", DataType::Utf8(), false)});
}

TypePtr DecodedLeafType(const LanceField& leaf) {
  if (IsBlobV2Field(leaf)) return BlobV2DescriptorType();
  if (IsLegacyBlobField(leaf)) return LegacyBlobDescriptorType();
  return leaf.type;
}

ValueCodec ParsePackedCodec(const pb::CompressiveEncoding& e, const std::string& where) {
  ValueCodec codec;
  if (e.has_packed_struct()) {
    const auto& packed = e.packed_struct();
    uint64_t total = 0;
    for (uint64_t bits : packed.bits_per_value()) {
      if (bits == 0 || bits % 8) ThrowNotSupported("{}: packed struct child of {} bits is not supported", where, bits);
      total += bits;
    }
    if (!packed.values().has_flat() || packed.values().flat().has_data())
      ThrowNotSupported("{}: packed struct rows must be Flat values", where);
    if (packed.values().flat().bits_per_value() != total)
      ThrowCorrupt("{}: packed struct rows of {} bits but children of {} bits", where,
                   packed.values().flat().bits_per_value(), total);
    codec.bits = codec.item_bits = total;
    return codec;
  }
  if (e.has_variable_packed_struct()) {
    for (const auto& f : e.variable_packed_struct().fields()) {
      const auto& v = f.value();
      if (f.has_bits_per_value()) {
        if (!v.has_flat() || v.flat().has_data() || v.flat().bits_per_value() != f.bits_per_value() ||
            f.bits_per_value() % 8 || f.bits_per_value() == 0)
          ThrowNotSupported("{}: variable packed struct child of {} bits must be plain Flat", where, f.bits_per_value());
      } else if (f.has_bits_per_length()) {
        if (!v.has_variable() || v.variable().has_values() || (f.bits_per_length() != 32 && f.bits_per_length() != 64))
          ThrowNotSupported("{}: variable packed struct child must be plain Variable with 32/64-bit lengths", where);
      } else {
        ThrowCorrupt("{}: variable packed struct child without a layout", where);
      }
    }
    codec.variable = true;
    codec.offset_bits = 32;
    return codec;
  }
  ThrowCorrupt("{}: not a packed struct encoding", where);
}

void NormalizeVariablePackedRows(const pb::VariablePackedStruct& encoding, ValueBlock& rows, const std::string& where) {
  if (!rows.variable) ThrowCorrupt("{}: variable packed struct rows must be variable-width", where);
  std::string data;
  std::vector<uint64_t> offsets{0};
  for (uint64_t r = 0; r < rows.count; ++r) {
    const uint64_t begin = rows.offsets[r], end = rows.offsets[r + 1];
    uint64_t pos = begin;
    auto need = [&](uint64_t n) {
      if (pos + n > end) ThrowCorrupt("{}: packed row {} ends early ({} bytes)", where, r, end - begin);
    };
    // A null row may be stored with no bytes at all; it normalizes to an empty row.
    if (begin != end) {
      for (const auto& f : encoding.fields()) {
        if (f.has_bits_per_value()) {
          const uint64_t width = f.bits_per_value() / 8;
          need(width);
          data.append(rows.data, pos, width);
          pos += width;
        } else {
          const size_t width = size_t(f.bits_per_length() / 8);
          need(width);
          const uint64_t len = LoadLE(rows.data.data() + pos, width);
          pos += width;
          need(len);
          for (size_t b = 0; b < 8; ++b) data.push_back(char((len >> (8 * b)) & 0xFF));
          data.append(rows.data, pos, len);
          pos += len;
        }
      }
      if (pos != end) ThrowCorrupt("{}: packed row {} has {} bytes left over", where, r, end - pos);
    }
    offsets.push_back(data.size());
  }
  rows.data = std::move(data);
  rows.offsets = std::move(offsets);
}

ValueBlock PackStructRows(const LanceField& field, const ArrayData& array, const std::vector<int64_t>& slots,
                          std::vector<uint64_t>& child_bits) {
  const size_t num_children = array.children.size();
  std::vector<uint64_t> widths(num_children);
  uint64_t row_bytes = 0;
  for (size_t c = 0; c < num_children; ++c) {
    const ArrayData& child = *array.children[c];
    widths[c] = FixedChildBytes(*child.type);
    if (widths[c] == 0)
      ThrowNotSupported("field '{}': packed struct child '{}' of type {} cannot be packed (fixed-width children only)",
                        field.name, field.type->child(c)->name, child.type->ToString());
    if (child.null_count > 0)
      ThrowInvalid("field '{}': packed struct child '{}' holds nulls, which packed rows cannot store", field.name,
                   field.type->child(c)->name);
    row_bytes += widths[c];
  }
  child_bits.clear();
  for (uint64_t w : widths) child_bits.push_back(w * 8);
  ValueBlock rows;
  rows.count = slots.size();
  rows.bits = row_bytes * 8;
  rows.data.resize(slots.size() * row_bytes);
  char* out = rows.data.data();
  for (int64_t slot : slots)
    for (size_t c = 0; c < num_children; ++c) {
      std::memcpy(out, array.children[c]->buffers[1]->data() + uint64_t(slot) * widths[c], widths[c]);
      out += widths[c];
    }
  return rows;
}

ArrayPtr MakePackedStructArray(const TypePtr& type, const ValueBlock& rows, const std::vector<uint8_t>& valid,
                               const std::string& where) {
  const DataType& t = *type;
  const int64_t n = int64_t(valid.size());
  if (rows.count != uint64_t(n)) ThrowCorrupt("{}: {} packed rows decoded for {} items", where, rows.count, n);
  const size_t num_children = t.children().size();
  std::vector<uint64_t> widths(num_children);
  for (size_t c = 0; c < num_children; ++c) {
    const DataType& ct = *t.child(c)->type;
    widths[c] = FixedChildBytes(ct);
    if (widths[c] == 0 && !(rows.variable && ct.is_variable_binary()))
      ThrowNotSupported("{}: packed struct child '{}' of type {} is not supported", where, t.child(c)->name,
                        ct.ToString());
  }
  // Child buffers: fixed values, or offsets + bytes.
  std::vector<std::string> fixed(num_children);
  std::vector<std::vector<uint64_t>> ends(num_children);
  std::vector<std::string> bytes(num_children);
  auto take_row = [&](const char* p, uint64_t size, uint64_t r) {
    uint64_t pos = 0;
    for (size_t c = 0; c < num_children; ++c) {
      if (widths[c]) {
        if (size == 0) {  // empty (null) row
          fixed[c].append(widths[c], '\0');
          continue;
        }
        if (pos + widths[c] > size) ThrowCorrupt("{}: packed row {} is too short for child {}", where, r, c);
        fixed[c].append(p + pos, widths[c]);
        pos += widths[c];
      } else {
        uint64_t len = 0;
        if (size != 0) {
          if (pos + 8 > size) ThrowCorrupt("{}: packed row {} is too short for child {}", where, r, c);
          len = LoadLE(p + pos, 8);
          pos += 8;
          if (pos + len > size) ThrowCorrupt("{}: packed row {} child {} runs past the row", where, r, c);
          bytes[c].append(p + pos, len);
          pos += len;
        }
        ends[c].push_back(bytes[c].size());
      }
    }
    if (pos != size) ThrowCorrupt("{}: packed row {} has {} bytes left over", where, r, size - pos);
  };
  if (rows.variable) {
    for (int64_t r = 0; r < n; ++r)
      take_row(rows.data.data() + rows.offsets[r], rows.offsets[r + 1] - rows.offsets[r], uint64_t(r));
  } else {
    uint64_t row_bytes = 0;
    for (uint64_t w : widths) row_bytes += w;
    if (rows.bits != row_bytes * 8)
      ThrowCorrupt("{}: packed rows of {} bits for a {} column", where, rows.bits, t.ToString());
    if (rows.data.size() < uint64_t(n) * row_bytes) ThrowCorrupt("{}: packed rows are truncated", where);
    for (int64_t r = 0; r < n; ++r) take_row(rows.data.data() + uint64_t(r) * row_bytes, row_bytes, uint64_t(r));
  }

  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = n;
  int64_t nulls = 0;
  for (uint8_t v : valid) nulls += v == 0;
  out->null_count = nulls;
  if (nulls > 0) {
    auto bitmap = Buffer::Allocate(size_t(n + 7) / 8);
    std::memset(bitmap->mutable_data(), 0, bitmap->size());
    for (int64_t k = 0; k < n; ++k)
      if (valid[size_t(k)]) SetBit(bitmap->mutable_data(), k);
    out->buffers.push_back(bitmap);
  } else {
    out->buffers.push_back(nullptr);
  }
  for (size_t c = 0; c < num_children; ++c) {
    auto child = std::make_shared<ArrayData>();
    child->type = t.child(c)->type;
    child->length = n;
    child->buffers.push_back(nullptr);
    if (widths[c]) {
      child->buffers.push_back(Buffer::Copy(fixed[c].data(), fixed[c].size()));
    } else {
      const bool large = child->type->has_large_offsets();
      auto offsets = Buffer::Allocate(size_t(n + 1) * (large ? 8 : 4));
      for (int64_t k = 0; k <= n; ++k) {
        const uint64_t off = k == 0 ? 0 : ends[c][size_t(k - 1)];
        if (large) offsets->mutable_as<int64_t>()[k] = int64_t(off);
        else offsets->mutable_as<int32_t>()[k] = int32_t(off);
      }
      child->buffers.push_back(offsets);
      child->buffers.push_back(Buffer::Copy(bytes[c].data(), bytes[c].size()));
    }
    out->children.push_back(child);
  }
  return out;
}

}  // namespace lancelet::format::v21
