// Picks the encodings of a file version.
#include "format/field_codec.h"

#include "lancelet/error.h"

namespace lancelet::format {
namespace {

bool IsV20(FileVersion version) { return version.major == 2 && version.minor == 0; }
bool IsV21Family(FileVersion version) { return version.major == 2 && (version.minor == 1 || version.minor == 2); }

[[noreturn]] void UnknownVersion(FileVersion version) {
  ThrowNotSupported("Lance file version {}.{} is not supported (2.0, 2.1 and 2.2 are)", version.major,
                    version.minor);
}

}  // namespace

uint32_t NumColumns(FileVersion version, const LanceField& field) {
  if (IsV20(version)) return v20::NumColumns(field);
  if (IsV21Family(version)) return v21::NumColumns(field);
  UnknownVersion(version);
}

uint32_t StoredColumns(FileVersion version, const LanceField& field,
                       std::span<const lance::file::v2::ColumnMetadata> columns) {
  if (IsV20(version)) return v20::StoredColumns(field, columns);
  return NumColumns(version, field);
}

std::unique_ptr<FieldEncoder> MakeFieldEncoder(FileVersion version, const LanceField& field,
                                               const FileWriterOptions& options) {
  if (IsV20(version)) return v20::MakeEncoder(field, options);
  if (IsV21Family(version)) return v21::MakeEncoder(version, field, options);
  UnknownVersion(version);
}

std::unique_ptr<FieldDecoder> MakeFieldDecoder(FileVersion version, const LanceField& field,
                                               std::vector<ColumnRef> columns, const ByteSource& source) {
  if (IsV20(version)) return v20::MakeDecoder(field, std::move(columns), source);
  if (IsV21Family(version)) return v21::MakeDecoder(version, field, std::move(columns), source);
  UnknownVersion(version);
}

}  // namespace lancelet::format
