#include "table/legacy_dictionaries.h"

#include <cstring>
#include <functional>

#include "format/little_endian.h"
#include "lancelet/error.h"

namespace lancelet::table {
namespace {

ArrayPtr ReadDictionary(const io::ReadableFile& file, const std::string& path, const format::LanceField& field,
                        int64_t offset, int64_t length) {
  const DataType& type = *field.type;
  const uint64_t size = file.size();
  auto out = std::make_shared<ArrayData>();
  out->type = field.type;
  out->length = length;
  if (offset < 0 || length < 0)
    ThrowCorrupt("manifest '{}': field '{}' (id {}) has a dictionary at offset {} of {} values", path, field.name,
                 field.id, offset, length);
  if (type.is_variable_binary()) {
    if (uint64_t(offset) > size || uint64_t(length) + 1 > (size - uint64_t(offset)) / 8)
      ThrowCorrupt("manifest '{}': the {} dictionary positions of field '{}' at offset {} run past the file's {} bytes",
                   path, length + 1, field.name, offset, size);
    const std::string raw = file.Read(uint64_t(offset), uint64_t(length + 1) * 8);
    std::vector<int64_t> positions(size_t(length) + 1);
    for (size_t k = 0; k < positions.size(); ++k) positions[k] = format::LoadLE<int64_t>(raw.data() + 8 * k);
    for (size_t k = 0; k < positions.size(); ++k)
      if (positions[k] < 0 || positions[k] > offset || (k > 0 && positions[k] < positions[k - 1]))
        ThrowCorrupt("manifest '{}': dictionary position {} of field '{}' is {}, not ascending before offset {}", path,
                     k, field.name, positions[k], offset);
    const std::string bytes = file.Read(uint64_t(positions.front()), uint64_t(positions.back() - positions.front()));
    const bool large = type.has_large_offsets();
    auto offsets = Buffer::Allocate(positions.size() * (large ? 8 : 4));
    BufferPtr validity;
    for (size_t k = 0; k < positions.size(); ++k) {
      const int64_t at = positions[k] - positions.front();
      if (large) offsets->mutable_as<int64_t>()[k] = at;
      else offsets->mutable_as<int32_t>()[k] = int32_t(at);
      if (k > 0 && field.nullable && positions[k] == positions[k - 1]) {
        if (!validity) {
          validity = Buffer::Allocate(size_t(length + 7) / 8);
          std::memset(validity->mutable_data(), 0xff, validity->size());
        }
        ClearBit(validity->mutable_data(), int64_t(k - 1));
        ++out->null_count;
      }
    }
    out->buffers = {std::move(validity), std::move(offsets), Buffer::Copy(bytes.data(), bytes.size())};
    return out;
  }
  const uint64_t width = uint64_t(type.byte_width());
  if (width == 0 || type.id() == TypeId::kFixedSizeList)
    ThrowNotSupported("manifest '{}': field '{}' keeps a dictionary of {} values, which lancelet does not read", path,
                      field.name, type.ToString());
  if (uint64_t(offset) > size || uint64_t(length) > (size - uint64_t(offset)) / width)
    ThrowCorrupt("manifest '{}': the {} dictionary values of field '{}' at offset {} run past the file's {} bytes", path,
                 length, field.name, offset, size);
  const std::string bytes = file.Read(uint64_t(offset), uint64_t(length) * width);
  out->buffers = {nullptr, Buffer::Copy(bytes.data(), bytes.size())};
  return out;
}

format::LanceField* FindNode(std::vector<format::LanceField>& fields, int32_t id) {
  for (auto& field : fields) {
    if (field.id == id) return &field;
    if (auto* found = FindNode(field.children, id)) return found;
  }
  return nullptr;
}

// 2.x manifests carry an empty Field.dictionary for a dictionary field: its values are in
// the data files.
bool KeepsDictionary(const lance::file::Field& field) {
  return field.has_dictionary() && (field.dictionary().offset() != 0 || field.dictionary().length() != 0);
}

}  // namespace

bool HasLegacyDictionaries(const lance::table::Manifest& manifest) {
  for (const auto& field : manifest.fields())
    if (KeepsDictionary(field)) return true;
  return false;
}

void LoadLegacyDictionaries(const io::ObjectStore& store, const std::string& manifest_path,
                            const lance::table::Manifest& manifest, format::LanceSchema& schema) {
  if (!HasLegacyDictionaries(manifest)) return;
  auto file = store.OpenRead(manifest_path);
  for (const auto& proto : manifest.fields()) {
    if (!KeepsDictionary(proto)) continue;
    format::LanceField* node = FindNode(schema.mutable_fields(), proto.id());
    if (!node || !node->dictionary_index) continue;  // a dropped field, or not a dictionary field
    node->legacy_dictionary =
        ReadDictionary(*file, manifest_path, *node, proto.dictionary().offset(), proto.dictionary().length());
  }
}

void CopyLegacyDictionaries(const format::LanceSchema& from, format::LanceSchema& to) {
  std::function<void(std::vector<format::LanceField>&)> copy = [&](std::vector<format::LanceField>& fields) {
    for (auto& field : fields) {
      if (field.dictionary_index)
        if (const format::LanceField* known = from.FindById(field.id)) field.legacy_dictionary = known->legacy_dictionary;
      copy(field.children);
    }
  };
  copy(to.mutable_fields());
}

void AppendLegacyDictionaries(const format::LanceSchema& schema, lance::table::Manifest& manifest, std::string& out) {
  for (auto& proto : *manifest.mutable_fields()) {
    if (!KeepsDictionary(proto)) continue;
    const format::LanceField* node = schema.FindById(proto.id());
    if (!node || !node->legacy_dictionary) {
      ThrowInvalid("field '{}' (id {}) keeps its dictionary in the manifest, but its values were not loaded",
                   proto.name(), proto.id());
    }
    const ArrayData& values = *node->legacy_dictionary;
    auto* dictionary = proto.mutable_dictionary();
    dictionary->set_length(values.length);
    if (values.type->is_variable_binary()) {
      std::vector<int64_t> positions;
      for (int64_t k = 0; k <= values.length; ++k) positions.push_back(int64_t(out.size()) + values.offset(k) - values.offset(0));
      out.append(reinterpret_cast<const char*>(values.buffers[2]->data()) + values.offset(0),
                 size_t(values.offset(values.length) - values.offset(0)));
      dictionary->set_offset(int64_t(out.size()));
      for (int64_t p : positions) format::AppendLE<int64_t>(out, p);
    } else {
      dictionary->set_offset(int64_t(out.size()));
      out.append(reinterpret_cast<const char*>(values.buffers[1]->data()),
                 size_t(values.length) * size_t(values.type->byte_width()));
    }
  }
}

}  // namespace lancelet::table
