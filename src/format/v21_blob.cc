// BlobLayout pages (2.1 legacy blobs: a LargeBinary field with "lance-encoding:blob").
// The page holds one (position: u64, size: u64) descriptor per row, written with an inner
// layout (a mini-block PackedStruct in practice) that has no levels of its own; the blob
// bytes live elsewhere in the same file. Row nulls are folded into the descriptors: a
// descriptor with size 0 and a non-zero position is a null item whose position is
// (def << 16) | rep; size 0 and position 0 is an empty value.
// The reader returns the descriptors (a struct<position, size>); ReadBlobBytes
// (blob_bytes.h) fetches the bytes.
// The writer puts each non-empty value's bytes in the file before the page that describes
// them (PageSink::WriteOutOfLine: 64-byte aligned, padded like page buffers), as the
// reference does; the descriptors are a mini-block PackedStruct([64, 64], Flat(128)) whose
// own layers are [ALL_VALID_ITEM], under the blob layout's layers.
//
// Blob v2 (2.2; a struct<data: binary, uri: utf8> tagged "lance.blob.v2"): each row
// becomes a descriptor (kind u8, position u64, size u64, blob_id u32, blob_uri utf8) in a
// full-zip VariablePackedStruct page. Where the bytes go follows the value's size, as the
// reference decides (thresholds from the field's metadata, or its defaults):
//   size > dedicated threshold (4 MiB)  kind 2, a sidecar file of its own;
//   size > inline threshold (64 KiB)    kind 1, appended to the current pack sidecar;
//   otherwise                           kind 0, out of line in the data file.
// External blobs (kind 3: a uri, no data) are refused: the reference stores them only under
// a base path registered in the manifest. A row whose data and uri are both null is null.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <initializer_list>

#include <google/protobuf/any.pb.h>

#include "format/blob_bytes.h"

#include "format/little_endian.h"
#include "format/v21_value_codecs.h"
#include "lancelet/error.h"

namespace lancelet::format::v21 {

namespace {

class BlobReader final : public PageReader {
 public:
  BlobReader(PageSource page, const pb::BlobLayout& layout) : where_(page.where) {
    for (int k = 0; k < layout.layers_size(); ++k) layers_.push_back(pb::RepDefLayer(layout.layers(k)));
    const LevelScheme scheme(layers_);
    if (scheme.max_rep > 0)
      ThrowNotSupported("{}: blobs inside lists are not supported (the blob page has list layers)", where_);
    has_def_ = false;
    for (auto layer : layers_) has_def_ = has_def_ || NumDefLevels(layer) > 0;
    if (!layout.has_inner_layout()) ThrowCorrupt("{}: blob layout without an inner layout", where_);
    if (layout.inner_layout().has_blob_layout()) ThrowCorrupt("{}: blob layout nested in a blob layout", where_);
    inner_ = MakePageReader(std::move(page), layout.inner_layout());
  }

  const std::vector<pb::RepDefLayer>& layers() const override { return layers_; }

  PageItems ReadRows(uint64_t start, uint64_t count) const override {
    PageItems items = inner_->ReadRows(start, count);
    if (items.levels.has_rep || items.levels.has_def)
      ThrowCorrupt("{}: blob descriptors carry their own rep/def levels", where_);
    const ValueBlock& v = items.values;
    if (v.variable || v.bits != 128 || v.count != count)
      ThrowCorrupt("{}: expected {} blob descriptors of 128 bits, got {} of {} bits", where_, count, v.count, v.bits);
    PageItems out;
    out.num_rows = count;
    out.values = std::move(items.values);
    out.levels.has_def = has_def_;
    if (has_def_) {
      out.levels.def.resize(count, 0);
      for (uint64_t r = 0; r < count; ++r) {
        const uint64_t position = LoadLE<uint64_t>(out.values.data.data() + r * 16);
        const uint64_t size = LoadLE<uint64_t>(out.values.data.data() + r * 16 + 8);
        if (size == 0 && position != 0) {
          out.levels.def[r] = uint16_t(position >> 16);
          if (out.levels.def[r] == 0) ThrowCorrupt("{}: blob row {} is null with definition level 0", where_, start + r);
        }
      }
    }
    return out;
  }

 private:
  std::string where_;
  std::vector<pb::RepDefLayer> layers_;
  bool has_def_ = false;
  std::unique_ptr<PageReader> inner_;
};

}  // namespace

std::unique_ptr<PageReader> MakeBlobReader(PageSource page, const pb::BlobLayout& layout) {
  return std::make_unique<BlobReader>(std::move(page), layout);
}

namespace {

// A blob v2 size threshold from the field's metadata `key`, or `fallback`.
uint64_t BlobThreshold(const LanceField& field, const char* key, uint64_t fallback, uint64_t minimum) {
  auto it = field.metadata.find(key);
  if (it == field.metadata.end()) return fallback;
  uint64_t value = 0;
  const std::string& text = it->second;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < minimum)
    ThrowInvalid("field '{}': metadata \"{}\" = '{}' is not a whole number of bytes (at least {})", field.name, key,
                 text, minimum);
  return value;
}

// The child of a blob v2 struct named `name`, or null; throws when its type is not one of `types`.
const ArrayData* BlobChild(const LanceField& field, const ArrayData& blobs, const std::string& name,
                           std::initializer_list<TypeId> types) {
  const auto& children = blobs.type->children();
  for (size_t c = 0; c < children.size(); ++c) {
    if (children[c]->name != name) continue;
    if (std::find(types.begin(), types.end(), children[c]->type->id()) == types.end())
      ThrowInvalid("field '{}': blob v2 child '{}' has type {}", field.name, name, children[c]->type->ToString());
    return blobs.children.at(c).get();
  }
  return nullptr;
}

pb::VariablePackedStruct BlobV2DescriptorEncoding() {
  pb::VariablePackedStruct out;
  for (uint64_t bits : {8, 64, 64, 32}) {
    auto* child = out.add_fields();
    child->mutable_value()->mutable_flat()->set_bits_per_value(bits);
    child->set_bits_per_value(bits);
  }
  auto* uri = out.add_fields();
  uri->mutable_value()->mutable_variable()->mutable_offsets()->mutable_flat()->set_bits_per_value(32);
  uri->set_bits_per_length(32);
  return out;
}

}  // namespace

EncodedPage EncodeBlobV2Page(const LanceField& field, const ShreddedLeaf& leaf, const EncodeOptions& options,
                             PageSink& sink) {
  constexpr uint64_t kInlineMax = 64 * 1024, kDedicatedThreshold = 4 * 1024 * 1024, kPackMax = uint64_t(1) << 30;
  const uint64_t inline_max = BlobThreshold(field, "lance-encoding:blob-inline-size-threshold", kInlineMax, 0);
  const uint64_t dedicated =
      BlobThreshold(field, "lance-encoding:blob-dedicated-size-threshold", kDedicatedThreshold, 1);
  const uint64_t pack_max = BlobThreshold(field, "lance-encoding:blob-pack-file-size-threshold", kPackMax, 1);
  const ArrayData& blobs = *leaf.leaf;
  for (const auto& child : blobs.type->children())
    if (child->name != "data" && child->name != "uri" && child->name != "position" && child->name != "size")
      ThrowInvalid("field '{}': blob v2 columns are struct<data: binary, uri: utf8> (optionally position, size: "
                   "uint64); '{}' is not one of them",
                   field.name, child->name);
  const ArrayData* data = BlobChild(field, blobs, "data", {TypeId::kLargeBinary, TypeId::kBinary});
  const ArrayData* uri = BlobChild(field, blobs, "uri", {TypeId::kUtf8, TypeId::kLargeUtf8});
  if (!data && !uri) ThrowInvalid("field '{}': a blob v2 column needs a 'data' or a 'uri' child", field.name);

  ValueBlock rows;  // one packed descriptor per visible item; nulls are empty
  rows.variable = true;
  rows.count = leaf.slots.size();
  for (size_t k = 0; k < leaf.slots.size(); ++k) {
    if (leaf.slot_valid[k]) {
      const int64_t slot = leaf.slots[k];
      uint8_t kind = 0;
      uint64_t position = 0, size = 0;
      uint32_t blob_id = 0;
      if (data && data->IsValid(slot)) {
        const std::string_view bytes = data->GetView(slot);
        size = bytes.size();
        if (size > dedicated) {
          kind = 2;
          blob_id = sink.blob_sidecars().Dedicate(bytes);
        } else if (size > inline_max) {
          kind = 1;
          const auto at = sink.blob_sidecars().Pack(bytes, pack_max);
          blob_id = at.blob_id;
          position = at.position;
        } else {
          position = sink.WriteOutOfLine(bytes);
        }
      } else if (uri && uri->IsValid(slot)) {
        // The reference stores an external blob only under a base path registered in the
        // manifest (not the dataset root), which lancelet does not register yet.
        ThrowNotSupported("field '{}': blob v2 row {} refers to the external blob '{}'; external blobs need a "
                          "registered base path, which lancelet does not write yet (store the bytes in 'data')",
                          field.name, slot, uri->GetView(slot));
      } else {
        ThrowInvalid("field '{}': blob v2 row {} has neither data nor a uri (a missing blob is a null row)",
                     field.name, slot);
      }
      rows.data.push_back(char(kind));
      AppendLE<uint64_t>(rows.data, position);
      AppendLE<uint64_t>(rows.data, size);
      AppendLE<uint32_t>(rows.data, blob_id);
      AppendLE<uint32_t>(rows.data, 0);  // blob_uri: empty
    }
    rows.offsets.push_back(rows.data.size());
  }
  const pb::VariablePackedStruct encoding = BlobV2DescriptorEncoding();
  EncodeOptions page_options;
  page_options.large_chunks = options.large_chunks;
  page_options.variable_packed = &encoding;
  return EncodeFullZip(leaf, std::move(rows), page_options);
}

EncodedPage EncodeLegacyBlobPage(const LanceField& field, const ShreddedLeaf& leaf, const EncodeOptions& options,
                                 PageSink& sink) {
  const Levels& lv = leaf.levels;
  if (lv.has_rep) ThrowNotSupported("field '{}': legacy blobs inside lists are not supported", field.name);
  ValueBlock descriptors;
  descriptors.count = leaf.num_rows;
  descriptors.bits = 128;
  descriptors.data.reserve(leaf.num_rows * 16);
  const uint16_t max_visible_def = LevelScheme(leaf.layers).max_visible_def;
  uint64_t next_slot = 0;
  for (uint64_t row = 0; row < leaf.num_rows; ++row) {
    const uint16_t def = lv.has_def ? lv.def[row] : 0;
    uint64_t position = 0, size = 0;
    if (def > 0) {
      position = uint64_t(def) << 16;  // a null: size 0, (def << 16) | rep, never 0
    } else {
      const std::string_view value = leaf.leaf->GetView(leaf.slots.at(next_slot));
      if (!value.empty()) {
        position = sink.WriteOutOfLine(value);
        size = value.size();
      }
    }
    if (def <= max_visible_def) ++next_slot;  // a visible item, null or not, has a slot
    AppendLE<uint64_t>(descriptors.data, position);
    AppendLE<uint64_t>(descriptors.data, size);
  }
  ShreddedLeaf packed;  // the descriptors: one per row, no levels of their own
  packed.layers = {pb::REPDEF_ALL_VALID_ITEM};
  packed.num_rows = packed.num_items = leaf.num_rows;
  packed.num_valid = leaf.num_rows;
  EncodeOptions packed_options;
  packed_options.large_chunks = options.large_chunks;
  packed_options.compress_values = false;
  packed_options.packed_child_bits = {64, 64};
  std::optional<EncodedPage> inner = EncodeMiniBlock(packed, descriptors, packed_options);
  if (!inner) ThrowInvalid("field '{}': blob descriptors did not fit a mini-block page", field.name);
  google::protobuf::Any any;
  pb::PageLayout inner_layout;
  if (!any.ParseFromString(inner->encoding) || !inner_layout.ParseFromString(any.value()))
    ThrowInvalid("field '{}': unreadable blob descriptor layout", field.name);
  pb::PageLayout layout;
  auto* blob = layout.mutable_blob_layout();
  *blob->mutable_inner_layout() = std::move(inner_layout);
  for (auto layer : leaf.layers) blob->add_layers(layer);
  inner->encoding = WrapAny(kPageLayoutUrl, layout);
  return std::move(*inner);
}

}  // namespace lancelet::format::v21
