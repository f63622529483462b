// Private to the 2.0 encodings (v20_*.cc).
//
// A 2.0 file stores one column per schema node, parents included:
//   - a leaf (primitive, binary, fixed_size_list, fixed_size_binary) is one column whose
//     pages hold a lance.encodings.ArrayEncoding tree;
//   - a list is its offsets column (List encoding) followed by its item's columns;
//   - a struct is a header column (one SimpleStruct page, no buffers) followed by its
//     children's columns;
//   - a packed struct and a legacy blob are a single column (PackedStruct encoding);
//   - lance 0.13 and earlier wrote a string or binary leaf as a list of u8: two columns,
//     List offsets and then the bytes (BytesStoredAsList); lancelet never writes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
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
// A string or binary node that lance 0.13 and earlier wrote as a list of u8: its first
// column (`column`) has List pages of offsets and the next one holds the bytes.
bool BytesStoredAsList(const LanceField& field, const lance::file::v2::ColumnMetadata& column);

// google.protobuf.Any wrapping with the reference's "/package.Message" type URLs.
std::string WrapAny(const std::string& type_url, const google::protobuf::MessageLite& message);
// Parses an Any whose type URL ends in `type_name`; false if it is another message.
bool UnwrapAny(const std::string& bytes, const std::string& type_name, google::protobuf::MessageLite* out);

// Undoes Flat.compression ("zstd": u64 LE length + zstd frame, or a bare frame; "lz4":
// u32 LE length + LZ4 block). `where` names the page for errors.
std::string Decompress(const std::string& scheme, const std::string& bytes, const std::string& where);

// --- bit-packed integers (v20_bitpacked.cc) -------------------------------------------
//
// Bitpacked (ArrayEncoding field 10): value k of a page occupies bits
// [k * width, (k + 1) * width) of its buffer, where bit b is bit b % 8 of byte b / 8 and
// the value's least significant bit comes first. It unpacks to `word_bits`-wide
// little-endian integers; when `signed` is set, bit width - 1 is the sign and is extended.
//
// BitpackedForNonNeg (field 12): values in chunks of 1024, each chunk packed the FastLanes
// way (v21_compression.h) into 1024 * width / 8 bytes; a last partial chunk is padded.
//
// Both require 1 <= width <= word_bits and word_bits in {8, 16, 32, 64}.

struct ByteRange {
  uint64_t begin = 0, end = 0;
};

// Throws Corrupt naming `where` unless the widths are as above and values
// [start, start + count) are few enough for their bit offsets to fit in 64 bits.
void CheckBitpackedRead(uint64_t width, uint64_t word_bits, uint64_t start, uint64_t count, const std::string& where);

// Bitpacked: the bytes holding values [start, start + count); the first value starts at
// bit (start * width) % 8 of the first byte.
ByteRange BitpackedBytes(uint64_t start, uint64_t count, uint64_t width);
// Unpacks `count` Bitpacked values, the first starting at bit `bit_offset` of `bytes`
// (which must hold them all), into `word_bits`-wide words.
BufferPtr UnpackBits(std::string_view bytes, uint32_t bit_offset, uint64_t count, uint32_t width, uint32_t word_bits,
                     bool sign_extend);

// BitpackedForNonNeg: the whole chunks holding values [start, start + count).
ByteRange FastLanesChunkBytes(uint64_t start, uint64_t count, uint64_t width);
// Unpacks values [start, start + count) from `chunks`, the bytes FastLanesChunkBytes named.
BufferPtr UnpackFastLanesChunks(std::string_view chunks, uint64_t start, uint64_t count, uint32_t width,
                                uint32_t word_bits);

// Root encoder / decoder of one top-level field.
std::unique_ptr<FieldEncoder> MakeFieldEncoderImpl(const LanceField& field, const FileWriterOptions& options);
std::unique_ptr<FieldDecoder> MakeFieldDecoderImpl(const LanceField& field, std::vector<ColumnRef> columns,
                                                   const ByteSource& source);

}  // namespace lancelet::format::v20
