// Shared pieces of the 2.0 encodings: column counts, Any wrapping, buffer decompression.
#include <google/protobuf/any.pb.h>
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "file2.pb.h"
#include "format/v20_internal.h"
#include "lancelet/error.h"

namespace lancelet::format::v20 {

bool IsPackedStruct(const LanceField& field) {
  if (field.type->id() != TypeId::kStruct) return false;
  if (auto it = field.metadata.find(kPackedLegacyKey); it != field.metadata.end()) return it->second == "true";
  return field.metadata.contains(kPackedKey);
}

bool IsBlob(const LanceField& field) {
  return field.type->is_variable_binary() && field.metadata.contains(kBlobKey);
}

uint32_t NumColumns(const LanceField& field) {
  if (IsPackedStruct(field)) return 1;
  uint32_t n = 1;  // the node's own column (leaf values, list offsets or struct header)
  for (const auto& child : field.children) n += NumColumns(child);
  return n;
}

bool BytesStoredAsList(const LanceField& field, const lance::file::v2::ColumnMetadata& column) {
  if (!field.type->is_variable_binary() || IsBlob(field) || column.pages_size() == 0) return false;
  const auto& encoding = column.pages(0).encoding();
  lance::encodings::ArrayEncoding array;
  return encoding.has_direct() && UnwrapAny(encoding.direct().encoding(), "lance.encodings.ArrayEncoding", &array) &&
         array.has_list();
}

uint32_t StoredColumns(const LanceField& field, std::span<const lance::file::v2::ColumnMetadata> columns) {
  if (IsPackedStruct(field)) return 1;
  if (!columns.empty() && BytesStoredAsList(field, columns.front())) return 2;
  uint32_t n = 1;
  for (const auto& child : field.children)
    n += StoredColumns(child, columns.subspan(std::min<size_t>(n, columns.size())));
  return n;
}

std::unique_ptr<FieldEncoder> MakeEncoder(const LanceField& field, const FileWriterOptions& options) {
  return MakeFieldEncoderImpl(field, options);
}

std::unique_ptr<FieldDecoder> MakeDecoder(const LanceField& field, std::vector<ColumnRef> columns,
                                          const ByteSource& source) {
  return MakeFieldDecoderImpl(field, std::move(columns), source);
}

std::string WrapAny(const std::string& type_url, const google::protobuf::MessageLite& message) {
  google::protobuf::Any any;
  any.set_type_url(type_url);
  any.set_value(message.SerializeAsString());
  return any.SerializeAsString();
}

bool UnwrapAny(const std::string& bytes, const std::string& type_name, google::protobuf::MessageLite* out) {
  google::protobuf::Any any;
  if (!any.ParseFromString(bytes)) return false;
  const std::string& url = any.type_url();
  if (!url.ends_with(type_name)) return false;
  // The character before the name must be the '/' that ends the URL prefix.
  if (url.size() > type_name.size() && url[url.size() - type_name.size() - 1] != '/') return false;
  return out->ParseFromString(any.value());
}

// A compressed buffer cannot expand past what its format allows (zstd: at most one
// 128 KiB block per 4 input bytes; LZ4: at most 255 bytes per input byte), so a larger
// claimed size is a corrupt length field, rejected before it is allocated (found by
// fuzz/v20_page_fuzz.cc).
constexpr uint64_t kMaxZstdExpansion = 32768, kMaxLz4Expansion = 255;

std::string Decompress(const std::string& scheme, const std::string& bytes, const std::string& where) {
  if (bytes.empty()) return {};
  if (scheme == "zstd") {
    // The reference writes a u64 LE uncompressed length and then a zstd frame; older
    // writers wrote the bare frame, recognisable by its magic number.
    // The test mirrors the reference's: magic 0xFD2FB528 and bit 4 of the frame header
    // descriptor clear (a length prefix could start with the magic by chance).
    uint32_t magic = 0;
    if (bytes.size() >= 4) std::memcpy(&magic, bytes.data(), 4);
    const bool bare_frame = bytes.size() < 8 ||
                            (magic == 0xFD2FB528u && (static_cast<uint8_t>(bytes[4]) & 0x10) == 0);
    std::string out;
    if (bare_frame) {
      unsigned long long size = ZSTD_getFrameContentSize(bytes.data(), bytes.size());
      if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
        ThrowNotSupported("{}: zstd frame without a content size", where);
      }
      if (size > bytes.size() * kMaxZstdExpansion) ThrowCorrupt("{}: zstd frame claims {} bytes", where, size);
      out.resize(size);
      size_t got = ZSTD_decompress(out.data(), out.size(), bytes.data(), bytes.size());
      if (ZSTD_isError(got) || got != size) ThrowCorrupt("{}: bad zstd buffer ({})", where, ZSTD_getErrorName(got));
      return out;
    }
    if (bytes.size() < 8) ThrowCorrupt("{}: zstd buffer of {} bytes has no length prefix", where, bytes.size());
    uint64_t size;
    std::memcpy(&size, bytes.data(), 8);
    if (size > (bytes.size() - 8) * kMaxZstdExpansion) ThrowCorrupt("{}: zstd buffer claims {} bytes", where, size);
    out.resize(size);
    size_t got = ZSTD_decompress(out.data(), out.size(), bytes.data() + 8, bytes.size() - 8);
    if (ZSTD_isError(got) || got != size) {
      ThrowCorrupt("{}: bad zstd buffer (expected {} bytes: {})", where, size,
                   ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
    }
    return out;
  }
  if (scheme == "lz4") {
    if (bytes.size() < 4) ThrowCorrupt("{}: lz4 buffer of {} bytes has no length prefix", where, bytes.size());
    uint32_t size;
    std::memcpy(&size, bytes.data(), 4);
    if (size > (bytes.size() - 4) * kMaxLz4Expansion + 16) ThrowCorrupt("{}: lz4 buffer claims {} bytes", where, size);
    std::string out(size, '\0');
    int got = LZ4_decompress_safe(bytes.data() + 4, out.data(), static_cast<int>(bytes.size() - 4),
                                  static_cast<int>(size));
    if (got < 0 || static_cast<uint32_t>(got) != size) {
      ThrowCorrupt("{}: bad lz4 buffer (expected {} bytes)", where, size);
    }
    return out;
  }
  ThrowNotSupported("{}: buffer compression '{}' is not supported", where, scheme);
}

}  // namespace lancelet::format::v20
