#include "format/deletion_file.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "io/object_store.h"
#include "lancelet/array.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/record_batch.h"

namespace lancelet::format {

namespace {

constexpr const char* kRowIdColumn = "row_id";

SchemaPtr DeletionArrowSchema() {
  return std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make(kRowIdColumn, DataType::UInt32(), /*nullable=*/false)});
}

DeletionVector DecodeArrow(std::string bytes, uint64_t physical_rows, std::string_view context) {
  std::unique_ptr<RecordBatchReader> reader = ReadIpc(std::move(bytes), context);
  SchemaPtr schema = reader->schema();
  if (schema->num_fields() != 1 || schema->field(0)->name != kRowIdColumn ||
      schema->field(0)->type->id() != TypeId::kUInt32) {
    ThrowCorrupt("{}: deletion file schema is [{}], expected [row_id:uint32]", context,
                 schema->ToString());
  }
  RecordBatchPtr batch = reader->Next();
  if (batch == nullptr) ThrowCorrupt("{}: deletion file has no record batch", context);
  if (reader->Next() != nullptr) {
    ThrowCorrupt("{}: deletion file has more than one record batch", context);
  }
  const ArrayData& column = *batch->column(0);
  if (column.null_count != 0) {
    ThrowCorrupt("{}: {} of its offsets are null", context, column.null_count);
  }
  RoaringBitmap offsets;
  const uint32_t* values = column.length > 0 ? column.values<uint32_t>() : nullptr;
  for (int64_t i = 0; i < column.length; ++i) {
    if (values[i] >= physical_rows)
      ThrowCorrupt("{}: offset {} at position {} is beyond the fragment's {} rows", context, values[i], i,
                   physical_rows);
    if (offsets.Contains(values[i]))
      ThrowCorrupt("{}: offset {} at position {} appears twice", context, values[i], i);
    offsets.Add(values[i]);
  }
  return DeletionVector(std::move(offsets));
}

std::string EncodeArrow(const RoaringBitmap& offsets) {
  std::vector<uint32_t> values = offsets.ToVector();
  auto column = std::make_shared<ArrayData>();
  column->type = DataType::UInt32();
  column->length = static_cast<int64_t>(values.size());
  column->null_count = 0;
  column->buffers = {nullptr, Buffer::Copy(values.data(), values.size() * sizeof(uint32_t))};
  SchemaPtr schema = DeletionArrowSchema();
  return WriteIpcFile(*schema, {RecordBatch::Make(schema, {column})});
}

}  // namespace

std::string_view DeletionFileSuffix(DeletionFileType type) {
  return type == DeletionFileType::kBitmap ? "bin" : "arrow";
}

std::string DeletionFileName(uint64_t fragment_id, uint64_t read_version, uint64_t id, DeletionFileType type) {
  return fmt::format("{}-{}-{}.{}", fragment_id, read_version, id, DeletionFileSuffix(type));
}

std::string DeletionFilePath(uint64_t fragment_id, uint64_t read_version, uint64_t id,
                             DeletionFileType type) {
  return "_deletions/" + DeletionFileName(fragment_id, read_version, id, type);
}

DeletionFileType ChooseDeletionFileType(uint64_t count) {
  return count >= kDeletionBitmapThreshold ? DeletionFileType::kBitmap
                                           : DeletionFileType::kArrowArray;
}

DeletionVector DeletionVector::FromOffsets(std::span<const uint32_t> offsets) {
  return DeletionVector(RoaringBitmap::FromValues(offsets));
}

DeletionVector DeletionVector::Decode(std::string bytes, DeletionFileType type, uint64_t physical_rows,
                                      std::string_view context) {
  switch (type) {
    case DeletionFileType::kArrowArray:
      return DecodeArrow(std::move(bytes), physical_rows, context);
    case DeletionFileType::kBitmap: {
      RoaringBitmap offsets = RoaringBitmap::DeserializePortable(bytes, context);
      if (!offsets.IsEmpty() && offsets.Max() >= physical_rows)
        ThrowCorrupt("{}: offset {} is beyond the fragment's {} rows", context, offsets.Max(), physical_rows);
      return DeletionVector(std::move(offsets));
    }
  }
  ThrowCorrupt("{}: unknown deletion file type {}", context, static_cast<int>(type));
}

DeletionVector DeletionVector::Read(const io::ObjectStore& store, const std::string& path,
                                    DeletionFileType type, uint64_t fragment_id, uint64_t physical_rows) {
  std::string bytes = store.ReadObject(path);
  return Decode(std::move(bytes), type, physical_rows,
                fmt::format("deletion file '{}' of fragment {}", path, fragment_id));
}

std::string DeletionVector::Encode(DeletionFileType type) const {
  if (type == DeletionFileType::kBitmap) {
    return offsets_.SerializePortable(RoaringBitmap::RunContainers::kNone);
  }
  return EncodeArrow(offsets_);
}

DeletionVector::Encoded DeletionVector::Write() const {
  if (empty()) ThrowInvalid("an empty deletion vector has no deletion file");
  DeletionFileType type = ChooseDeletionFileType(size());
  return Encoded{Encode(type), type};
}

}  // namespace lancelet::format
