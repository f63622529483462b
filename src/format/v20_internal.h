// Private to the 2.0 encodings (v20_*.cc).
//
// A 2.0 file stores one column per schema node, parents included:
//   - a leaf (primitive, binary, fixed_size_list, fixed_size_binary) is one column whose
//     pages hold a lance.encodings.ArrayEncoding tree;
//   - a list is its offsets column (List encoding) followed by its item's columns;
//   - a struct is a header column (one SimpleStruct page, no buffers) followed by its
//     children's columns;
//   - a packed struct and a legacy blob are a single column (PackedStruct encoding).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "encodings_v2_0.pb.h"
#include "format/field_codec.h"

namespace lancelet::format::v20 {

inline constexpr const char* kArrayEncodingUrl = "/lance.encodings.ArrayEncoding";
inline constexpr const char* kColumnEncodingUrl = "/lance.encodings.ColumnEncoding";

// Field metadata keys that change how a field is stored (values as the reference uses them).
inline constexpr const char* kPackedKey = "lance-encoding:packed";
inline constexpr const char* kPackedLegacyKey = "packed";
inline constexpr const char* kBlobKey = "lance-encoding:blob";

bool IsPackedStruct(const LanceField& field);
bool IsBlob(const LanceField& field);

// google.protobuf.Any wrapping with the reference's "/package.Message" type URLs.
std::string WrapAny(const std::string& type_url, const google::protobuf::MessageLite& message);
// Parses an Any whose type URL ends in `type_name`; false if it is another message.
bool UnwrapAny(const std::string& bytes, const std::string& type_name, google::protobuf::MessageLite* out);

// Undoes Flat.compression ("zstd": u64 LE length + zstd frame, or a bare frame; "lz4":
// u32 LE length + LZ4 block). `where` names the page for errors.
std::string Decompress(const std::string& scheme, const std::string& bytes, const std::string& where);

// Root encoder / decoder of one top-level field.
std::unique_ptr<FieldEncoder> MakeFieldEncoderImpl(const LanceField& field, const FileWriterOptions& options);
std::unique_ptr<FieldDecoder> MakeFieldDecoderImpl(const LanceField& field, std::vector<ColumnRef> columns,
                                                   const ByteSource& source);

}  // namespace lancelet::format::v20
