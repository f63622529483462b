// Arrow IPC internals shared by the writer and the reader: the flatbuffer encoding of
// schemas and messages (ipc_metadata.cc) and message framing constants.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "array/flatbuffer.h"
#include "lancelet/record_batch.h"

namespace lancelet::ipc {

// Message.fbs MessageHeader union.
enum class MessageType : uint8_t { kNone = 0, kSchema = 1, kDictionaryBatch = 2, kRecordBatch = 3 };
constexpr int16_t kMetadataV5 = 4;
constexpr uint32_t kContinuation = 0xFFFFFFFFu;
constexpr char kFileMagic[] = "ARROW1";
constexpr size_t kFileMagicSize = 6;

// Table field ids, in declaration order of the .fbs files.
namespace field_id {
constexpr uint16_t kFieldName = 0, kFieldNullable = 1, kFieldTypeType = 2, kFieldType = 3,
                   kFieldDictionary = 4, kFieldChildren = 5, kFieldMetadata = 6;
constexpr uint16_t kSchemaEndianness = 0, kSchemaFields = 1, kSchemaMetadata = 2;
constexpr uint16_t kMessageVersion = 0, kMessageHeaderType = 1, kMessageHeader = 2,
                   kMessageBodyLength = 3;
constexpr uint16_t kBatchLength = 0, kBatchNodes = 1, kBatchBuffers = 2, kBatchCompression = 3;
constexpr uint16_t kCompressionCodec = 0, kCompressionMethod = 1;
constexpr uint16_t kFooterVersion = 0, kFooterSchema = 1, kFooterDictionaries = 2,
                   kFooterRecordBatches = 3;
}  // namespace field_id
using namespace field_id;

// Schema.fbs FieldNode and Buffer structs (16 bytes each).
struct FieldNode {
  int64_t length;
  int64_t null_count;
};
struct BufferSpec {
  int64_t offset;
  int64_t length;
};
// File.fbs Block struct (24 bytes: int64, int32, 4 padding, int64).
struct Block {
  int64_t offset;
  int32_t metadata_length;
  int32_t padding;
  int64_t body_length;
};
static_assert(sizeof(FieldNode) == 16 && sizeof(BufferSpec) == 16 && sizeof(Block) == 24);

// Message.fbs CompressionType; the only BodyCompressionMethod is BUFFER (0): each buffer
// compressed on its own behind an int64 little-endian uncompressed-length prefix.
enum class CompressionCodec : uint8_t { kLz4Frame = 0, kZstd = 1 };
constexpr uint8_t kCompressionMethodBuffer = 0;
// Prefix value meaning "the bytes after the prefix are stored raw".
constexpr int64_t kUncompressedLengthRaw = -1;

const char* CodecName(CompressionCodec codec);

// One body buffer after undoing its compression, or where and why that failed.
struct DecompressedBuffer {
  std::span<const uint8_t> bytes;  // into the input (raw or empty buffers) or into storage
  std::string error;               // empty on success
  int64_t error_at = 0;            // offset into the compressed buffer where decoding failed
};
// Decodes one compressed body buffer (prefix + payload; empty means empty). Output memory
// grows only as the payload really produces bytes, so a lying prefix cannot make it
// allocate much more than the real content.
DecompressedBuffer DecompressBuffer(CompressionCodec codec, std::span<const uint8_t> buffer,
                                    std::vector<uint8_t>* storage);

// Builds the Schema table in `b` and returns it.
fb::Ref BuildSchema(fb::FlatBufferBuilder& b, const Schema& schema);
// A Message flatbuffer wrapping a Schema.
std::string EncodeSchemaMessage(const Schema& schema);
// A Message flatbuffer wrapping a RecordBatch. lancelet writes uncompressed bodies; a
// codec (tests only) just adds the BodyCompression table, the caller compresses buffers.
std::string EncodeRecordBatchMessage(int64_t length, const std::vector<FieldNode>& nodes,
                                     const std::vector<BufferSpec>& buffers, int64_t body_length,
                                     std::optional<CompressionCodec> codec = std::nullopt);
// A Message flatbuffer wrapping a DictionaryBatch (not a delta) whose values are the body.
std::string EncodeDictionaryBatchMessage(int64_t id, int64_t length, const std::vector<FieldNode>& nodes,
                                         const std::vector<BufferSpec>& buffers, int64_t body_length);
// The Footer flatbuffer of the file format.
std::string EncodeFooter(const Schema& schema, const std::vector<Block>& dictionary_blocks,
                         const std::vector<Block>& batches);
// Whether a field is written dictionary-encoded: it has a key type (Field::dictionary_index)
// and CanDictionaryEncode its values. Such fields get ids in pre-order from 0.
bool WritesDictionary(const Field& field);
// Whether the field or a field below it WritesDictionary.
bool HasDictionaries(const Field& field);

// Decodes a Schema table. Throws NotSupported for dictionary fields and unknown types.
// A dictionary-encoded field's encoding (Schema.fbs DictionaryEncoding). The schema
// lancelet reports gives such a field its value type: batches carry the values.
struct DictionaryEncoding {
  int64_t id = 0;
  TypePtr index_type;
};
using DictionaryFields = std::unordered_map<const Field*, DictionaryEncoding>;

// `big_endian`, when given, receives the schema's endianness; without it a big-endian
// schema is refused. `dictionaries`, when given, receives the dictionary-encoded fields;
// without it such a field is refused.
SchemaPtr DecodeSchema(const fb::FlatTable& schema, bool* big_endian = nullptr,
                       DictionaryFields* dictionaries = nullptr);

// One framed message: the encapsulated metadata and the body that follows it. The body
// is a list of parts, so that a batch's buffers are written where they are instead of
// being copied into one string first; `held` keeps what the parts point into alive.
struct EncodedMessage {
  std::string metadata;                      // flatbuffer, unpadded
  std::vector<std::string_view> body;        // in order; together padded to 8 bytes
  std::vector<std::shared_ptr<const void>> held;
  size_t body_size = 0;                      // the parts' total length

  // A message whose body is `body`, owned (already padded).
  static EncodedMessage Of(std::string metadata, std::string body = {});
  // The parts joined.
  std::string Body() const;
};
// Continuation marker, padded metadata length, padded metadata, body.
std::string FrameMessage(const EncodedMessage& message);
// The same without the body.
std::string FramePrefix(const EncodedMessage& message);
// Size of the framing prefix plus padded metadata (the Block's metaDataLength).
int32_t FramedMetadataSize(const EncodedMessage& message);
EncodedMessage EncodeSchema(const Schema& schema);
// Throws InvalidArgument when the columns do not match the schema.
void CheckBatch(const Schema& schema, const RecordBatch& batch);
// Throws InvalidArgument when the columns do not match the schema. A dictionary-encoded
// field's values become keys into a dictionary of this batch's values; `dictionaries`
// receives their DictionaryBatch messages, in id order (required when the schema has such
// fields). Throws InvalidArgument too when a batch has more distinct values than a key
// type indexes.
EncodedMessage EncodeBatch(const Schema& schema, const RecordBatch& batch,
                           std::vector<EncodedMessage>* dictionaries = nullptr);
std::string EndOfStream();

}  // namespace lancelet::ipc
