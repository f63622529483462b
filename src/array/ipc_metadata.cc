// Flatbuffer encoding of Arrow schemas and messages (Schema.fbs, Message.fbs, File.fbs).
#include <string>

#include "array/dictionary_array.h"
#include "array/ipc_internal.h"
#include "lancelet/error.h"

namespace lancelet::ipc {
namespace {

// Schema.fbs Type union members that lancelet maps to a TypeId.
enum TypeTag : uint8_t {
  kTagNull = 1, kTagInt = 2, kTagFloatingPoint = 3, kTagBinary = 4, kTagUtf8 = 5, kTagBool = 6,
  kTagDecimal = 7, kTagDate = 8, kTagTime = 9, kTagTimestamp = 10, kTagInterval = 11,
  kTagList = 12, kTagStruct = 13, kTagUnion = 14, kTagFixedSizeBinary = 15,
  kTagFixedSizeList = 16, kTagMap = 17, kTagDuration = 18, kTagLargeBinary = 19,
  kTagLargeUtf8 = 20, kTagLargeList = 21, kTagRunEndEncoded = 22, kTagBinaryView = 23,
  kTagUtf8View = 24, kTagListView = 25, kTagLargeListView = 26,
};

const char* TagName(uint8_t tag) {
  static const char* const kNames[] = {
      "NONE", "Null", "Int", "FloatingPoint", "Binary", "Utf8", "Bool", "Decimal", "Date",
      "Time", "Timestamp", "Interval", "List", "Struct", "Union", "FixedSizeBinary",
      "FixedSizeList", "Map", "Duration", "LargeBinary", "LargeUtf8", "LargeList",
      "RunEndEncoded", "BinaryView", "Utf8View", "ListView", "LargeListView"};
  return tag < std::size(kNames) ? kNames[tag] : "unknown";
}


constexpr int16_t kDateDay = 0, kDateMillisecond = 1;
constexpr int16_t kHalf = 0, kSingle = 1, kDouble = 2;

fb::Ref BuildMetadata(fb::FlatBufferBuilder& b, const Metadata& metadata) {
  std::vector<fb::Ref> pairs;
  for (const auto& [key, value] : metadata) {
    fb::Ref k = b.CreateString(key);
    fb::Ref v = b.CreateString(value);
    b.StartTable();
    b.AddRef(0, k);
    b.AddRef(1, v);
    pairs.push_back(b.EndTable());
  }
  return b.CreateOffsetVector(pairs);
}

fb::Ref EmptyTable(fb::FlatBufferBuilder& b) {
  b.StartTable();
  return b.EndTable();
}

fb::Ref IntTable(fb::FlatBufferBuilder& b, int32_t bits, bool is_signed) {
  b.StartTable();
  b.AddInt32(0, bits);
  b.AddBool(1, is_signed);
  return b.EndTable();
}

fb::Ref ShortTable(fb::FlatBufferBuilder& b, int16_t v) {
  b.StartTable();
  b.AddInt16(0, v);
  return b.EndTable();
}

fb::Ref Int32Table(fb::FlatBufferBuilder& b, int32_t v) {
  b.StartTable();
  b.AddInt32(0, v);
  return b.EndTable();
}

// Returns the union tag and builds the type table.
std::pair<uint8_t, fb::Ref> BuildType(fb::FlatBufferBuilder& b, const DataType& type) {
  switch (type.id()) {
    case TypeId::kBool: return {kTagBool, EmptyTable(b)};
    case TypeId::kInt8: return {kTagInt, IntTable(b, 8, true)};
    case TypeId::kInt16: return {kTagInt, IntTable(b, 16, true)};
    case TypeId::kInt32: return {kTagInt, IntTable(b, 32, true)};
    case TypeId::kInt64: return {kTagInt, IntTable(b, 64, true)};
    case TypeId::kUInt8: return {kTagInt, IntTable(b, 8, false)};
    case TypeId::kUInt16: return {kTagInt, IntTable(b, 16, false)};
    case TypeId::kUInt32: return {kTagInt, IntTable(b, 32, false)};
    case TypeId::kUInt64: return {kTagInt, IntTable(b, 64, false)};
    case TypeId::kFloat16: return {kTagFloatingPoint, ShortTable(b, kHalf)};
    case TypeId::kFloat32: return {kTagFloatingPoint, ShortTable(b, kSingle)};
    case TypeId::kFloat64: return {kTagFloatingPoint, ShortTable(b, kDouble)};
    case TypeId::kUtf8: return {kTagUtf8, EmptyTable(b)};
    case TypeId::kLargeUtf8: return {kTagLargeUtf8, EmptyTable(b)};
    case TypeId::kBinary: return {kTagBinary, EmptyTable(b)};
    case TypeId::kLargeBinary: return {kTagLargeBinary, EmptyTable(b)};
    case TypeId::kFixedSizeBinary: return {kTagFixedSizeBinary, Int32Table(b, type.fixed_size())};
    case TypeId::kFixedSizeList: return {kTagFixedSizeList, Int32Table(b, type.fixed_size())};
    case TypeId::kList: return {kTagList, EmptyTable(b)};
    case TypeId::kLargeList: return {kTagLargeList, EmptyTable(b)};
    case TypeId::kStruct: return {kTagStruct, EmptyTable(b)};
    case TypeId::kDate32: return {kTagDate, ShortTable(b, kDateDay)};
    case TypeId::kDate64: return {kTagDate, ShortTable(b, kDateMillisecond)};
    case TypeId::kTimestamp: {
      fb::Ref tz = type.timezone().empty() ? 0 : b.CreateString(type.timezone());
      b.StartTable();
      b.AddInt16(0, static_cast<int16_t>(type.unit()));
      if (tz != 0) b.AddRef(1, tz);
      return {kTagTimestamp, b.EndTable()};
    }
    case TypeId::kTime32:
    case TypeId::kTime64:
      b.StartTable();
      b.AddInt16(0, static_cast<int16_t>(type.unit()));
      b.AddInt32(1, type.bit_width());
      return {kTagTime, b.EndTable()};
    case TypeId::kDuration: return {kTagDuration, ShortTable(b, static_cast<int16_t>(type.unit()))};
    case TypeId::kDecimal128:
    case TypeId::kDecimal256:
      b.StartTable();
      b.AddInt32(0, type.precision());
      b.AddInt32(1, type.scale());
      b.AddInt32(2, type.bit_width());
      return {kTagDecimal, b.EndTable()};
    case TypeId::kNull: return {kTagNull, EmptyTable(b)};
    case TypeId::kMap:
      b.StartTable();
      b.AddBool(0, type.keys_sorted());
      return {kTagMap, b.EndTable()};
  }
  ThrowInvalid("Arrow IPC: cannot encode type {}", type.ToString());
}

// `next_dictionary_id` numbers the dictionary-encoded fields in pre-order (as
// DictionaryEncodedFields does).
fb::Ref BuildField(fb::FlatBufferBuilder& b, const Field& field, int64_t& next_dictionary_id) {
  fb::Ref dictionary = 0;
  if (WritesDictionary(field)) {
    auto [key_tag, key_ref] = BuildType(b, *field.dictionary_index);
    (void)key_tag;
    b.StartTable();
    b.AddInt64(0, next_dictionary_id++);  // id
    b.AddRef(1, key_ref);                 // indexType
    dictionary = b.EndTable();            // isOrdered: false
  }
  std::vector<fb::Ref> children;
  for (const auto& child : field.type->children()) children.push_back(BuildField(b, *child, next_dictionary_id));
  fb::Ref children_ref = b.CreateOffsetVector(children);
  fb::Ref name = b.CreateString(field.name);
  auto [tag, type_ref] = BuildType(b, *field.type);
  fb::Ref metadata = field.metadata.empty() ? 0 : BuildMetadata(b, field.metadata);
  b.StartTable();
  if (dictionary != 0) b.AddRef(kFieldDictionary, dictionary);
  b.AddRef(kFieldName, name);
  b.AddBool(kFieldNullable, field.nullable);
  b.AddUInt8(kFieldTypeType, tag);
  b.AddRef(kFieldType, type_ref);
  b.AddRef(kFieldChildren, children_ref);
  if (metadata != 0) b.AddRef(kFieldMetadata, metadata);
  return b.EndTable();
}

std::string FinishMessage(fb::FlatBufferBuilder& b, MessageType type, fb::Ref header,
                          int64_t body_length) {
  b.StartTable();
  b.AddInt16(kMessageVersion, kMetadataV5);
  b.AddUInt8(kMessageHeaderType, static_cast<uint8_t>(type));
  b.AddRef(kMessageHeader, header);
  b.AddInt64(kMessageBodyLength, body_length);
  return b.Finish(b.EndTable());
}

// ---- decoding ----

[[noreturn]] void FailField(const fb::FlatTable& t, std::string_view field, std::string_view why) {
  ThrowCorrupt("{}: Arrow field '{}' at byte {}: {}", t.source_name(), field, t.abs_offset(), why);
}

Metadata DecodeMetadata(const fb::FlatVector& pairs) {
  Metadata metadata;
  for (uint32_t i = 0; i < pairs.size(); ++i) {
    fb::FlatTable kv = pairs.TableAt(i);
    metadata[std::string(kv.GetString(0))] = std::string(kv.GetString(1));
  }
  return metadata;
}

FieldPtr DecodeField(const fb::FlatTable& t, int depth, DictionaryFields* dictionaries);

TypePtr DecodeType(const fb::FlatTable& field, const std::string& name,
                   const std::vector<FieldPtr>& children) {
  uint8_t tag = field.GetUInt8(kFieldTypeType, 0);
  fb::FlatTable type = field.GetTable(kFieldType);
  if (!type.valid()) FailField(field, name, "type table is missing");
  auto want_children = [&](size_t n) {
    if (children.size() != n)
      FailField(field, name, fmt::format("{} needs {} child field(s), found {}", TagName(tag), n,
                                         children.size()));
  };
  auto unsupported = [&](std::string_view what) -> TypePtr {
    ThrowNotSupported("{}: Arrow field '{}' at byte {} has type {}, which lancelet does not support",
                      field.source_name(), name, field.abs_offset(), what);
  };
  switch (tag) {
    case kTagBool: return DataType::Bool();
    case kTagInt: {
      int32_t bits = type.GetInt32(0, 0);
      bool is_signed = type.GetBool(1, false);
      switch (bits) {
        case 8: return is_signed ? DataType::Int8() : DataType::UInt8();
        case 16: return is_signed ? DataType::Int16() : DataType::UInt16();
        case 32: return is_signed ? DataType::Int32() : DataType::UInt32();
        case 64: return is_signed ? DataType::Int64() : DataType::UInt64();
      }
      FailField(field, name, fmt::format("Int bitWidth {} is not 8, 16, 32 or 64", bits));
    }
    case kTagFloatingPoint:
      switch (type.GetInt16(0, kHalf)) {
        case kHalf: return DataType::Float16();
        case kSingle: return DataType::Float32();
        case kDouble: return DataType::Float64();
      }
      FailField(field, name, "unknown FloatingPoint precision");
    case kTagUtf8: return DataType::Utf8();
    case kTagLargeUtf8: return DataType::LargeUtf8();
    case kTagBinary: return DataType::Binary();
    case kTagLargeBinary: return DataType::LargeBinary();
    case kTagFixedSizeBinary: {
      int32_t width = type.GetInt32(0, 0);
      if (width < 0) FailField(field, name, "negative FixedSizeBinary byteWidth");
      return DataType::FixedSizeBinary(width);
    }
    case kTagFixedSizeList: {
      want_children(1);
      int32_t size = type.GetInt32(0, 0);
      if (size < 0) FailField(field, name, "negative FixedSizeList listSize");
      return DataType::FixedSizeList(children[0], size);
    }
    case kTagList: want_children(1); return DataType::List(children[0]);
    case kTagLargeList: want_children(1); return DataType::LargeList(children[0]);
    case kTagStruct: return DataType::Struct(children);
    case kTagDate:
      switch (type.GetInt16(0, kDateMillisecond)) {
        case kDateDay: return DataType::Date32();
        case kDateMillisecond: return DataType::Date64();
      }
      FailField(field, name, "unknown Date unit");
    case kTagTimestamp: {
      int16_t unit = type.GetInt16(0, 0);
      if (unit < 0 || unit > 3) FailField(field, name, "unknown Timestamp unit");
      return DataType::Timestamp(static_cast<TimeUnit>(unit), std::string(type.GetString(1)));
    }
    case kTagTime: {
      // Schema.fbs defaults: unit MILLISECOND, bitWidth 32.
      int16_t unit = type.GetInt16(0, 1);
      int32_t bits = type.GetInt32(1, 32);
      if (unit < 0 || unit > 3) FailField(field, name, "unknown Time unit");
      if (bits == 32 && unit <= 1) return DataType::Time32(static_cast<TimeUnit>(unit));
      if (bits == 64 && unit >= 2) return DataType::Time64(static_cast<TimeUnit>(unit));
      FailField(field, name, fmt::format("Time of {} bits cannot hold unit {}", bits, unit));
    }
    case kTagDuration: {
      int16_t unit = type.GetInt16(0, 1);  // default MILLISECOND
      if (unit < 0 || unit > 3) FailField(field, name, "unknown Duration unit");
      return DataType::Duration(static_cast<TimeUnit>(unit));
    }
    case kTagDecimal: {
      int32_t precision = type.GetInt32(0, 0), scale = type.GetInt32(1, 0), bits = type.GetInt32(2, 128);
      try {
        if (bits == 128) return DataType::Decimal128(precision, scale);
        if (bits == 256) return DataType::Decimal256(precision, scale);
      } catch (const Error& e) {
        FailField(field, name, e.what());
      }
      return unsupported(fmt::format("Decimal{}({}, {})", bits, precision, scale));
    }
    case kTagNull: return DataType::Null();
    case kTagMap: {
      want_children(1);
      try {
        return DataType::Map(children[0], type.GetBool(0, false));
      } catch (const Error& e) {
        FailField(field, name, e.what());
      }
    }
    default: return unsupported(TagName(tag));
  }
}

FieldPtr DecodeField(const fb::FlatTable& t, int depth, DictionaryFields* dictionaries) {
  if (depth > 64) FailField(t, "?", "types nested deeper than 64 levels");
  std::string name(t.GetString(kFieldName));
  fb::FlatTable dictionary = t.GetTable(kFieldDictionary);
  if (dictionary.valid() && !dictionaries)
    ThrowNotSupported("{}: Arrow field '{}' at byte {} is dictionary-encoded; lancelet does not "
                      "read Arrow dictionaries here",
                      t.source_name(), name, t.abs_offset());
  std::vector<FieldPtr> children;
  fb::FlatVector child_tables = t.GetVector(kFieldChildren);
  for (uint32_t i = 0; i < child_tables.size(); ++i)
    children.push_back(DecodeField(child_tables.TableAt(i), depth + 1, dictionaries));
  TypePtr type = DecodeType(t, name, children);
  FieldPtr field = Field::Make(name, std::move(type), t.GetBool(kFieldNullable, false),
                               DecodeMetadata(t.GetVector(kFieldMetadata)));
  if (dictionary.valid()) {
    // DictionaryEncoding: id (0), indexType (1, default int32), isOrdered (2).
    DictionaryEncoding encoding{dictionary.GetInt64(0, 0), DataType::Int32()};
    if (fb::FlatTable index = dictionary.GetTable(1); index.valid()) {
      int32_t bits = index.GetInt32(0, 0);
      bool is_signed = index.GetBool(1, false);
      switch (bits) {
        case 8: encoding.index_type = is_signed ? DataType::Int8() : DataType::UInt8(); break;
        case 16: encoding.index_type = is_signed ? DataType::Int16() : DataType::UInt16(); break;
        case 32: encoding.index_type = is_signed ? DataType::Int32() : DataType::UInt32(); break;
        case 64: encoding.index_type = is_signed ? DataType::Int64() : DataType::UInt64(); break;
        default: FailField(t, name, fmt::format("dictionary index bitWidth {} is not 8, 16, 32 or 64", bits));
      }
    }
    auto keyed = std::make_shared<Field>(*field);
    keyed->dictionary_index = encoding.index_type;
    field = std::move(keyed);
    (*dictionaries)[field.get()] = encoding;
  }
  return field;
}

}  // namespace

bool WritesDictionary(const Field& field) {
  return field.dictionary_index && CanDictionaryEncode(*field.dictionary_index, *field.type);
}

fb::Ref BuildSchema(fb::FlatBufferBuilder& b, const Schema& schema) {
  std::vector<fb::Ref> fields;
  int64_t next_dictionary_id = 0;
  for (const auto& field : schema.fields()) fields.push_back(BuildField(b, *field, next_dictionary_id));
  fb::Ref fields_ref = b.CreateOffsetVector(fields);
  fb::Ref metadata = schema.metadata().empty() ? 0 : BuildMetadata(b, schema.metadata());
  b.StartTable();
  b.AddInt16(kSchemaEndianness, 0);  // little endian
  b.AddRef(kSchemaFields, fields_ref);
  if (metadata != 0) b.AddRef(kSchemaMetadata, metadata);
  return b.EndTable();
}

std::string EncodeSchemaMessage(const Schema& schema) {
  fb::FlatBufferBuilder b;
  fb::Ref header = BuildSchema(b, schema);
  return FinishMessage(b, MessageType::kSchema, header, 0);
}

std::string EncodeRecordBatchMessage(int64_t length, const std::vector<FieldNode>& nodes,
                                     const std::vector<BufferSpec>& buffers, int64_t body_length,
                                     std::optional<CompressionCodec> codec) {
  fb::FlatBufferBuilder b;
  fb::Ref nodes_ref = b.CreateStructVector(nodes.data(), nodes.size(), sizeof(FieldNode), 8);
  fb::Ref buffers_ref = b.CreateStructVector(buffers.data(), buffers.size(), sizeof(BufferSpec), 8);
  fb::Ref compression = 0;
  if (codec) {
    b.StartTable();
    // Written even when equal to the default so readers see the codec explicitly.
    b.AddUInt8(kCompressionCodec, static_cast<uint8_t>(*codec));
    b.AddUInt8(kCompressionMethod, kCompressionMethodBuffer);
    compression = b.EndTable();
  }
  b.StartTable();
  b.AddInt64(kBatchLength, length);
  b.AddRef(kBatchNodes, nodes_ref);
  b.AddRef(kBatchBuffers, buffers_ref);
  if (compression != 0) b.AddRef(kBatchCompression, compression);
  fb::Ref batch = b.EndTable();
  return FinishMessage(b, MessageType::kRecordBatch, batch, body_length);
}

std::string EncodeDictionaryBatchMessage(int64_t id, int64_t length, const std::vector<FieldNode>& nodes,
                                         const std::vector<BufferSpec>& buffers, int64_t body_length) {
  fb::FlatBufferBuilder b;
  fb::Ref nodes_ref = b.CreateStructVector(nodes.data(), nodes.size(), sizeof(FieldNode), 8);
  fb::Ref buffers_ref = b.CreateStructVector(buffers.data(), buffers.size(), sizeof(BufferSpec), 8);
  b.StartTable();
  b.AddInt64(kBatchLength, length);
  b.AddRef(kBatchNodes, nodes_ref);
  b.AddRef(kBatchBuffers, buffers_ref);
  fb::Ref data = b.EndTable();
  b.StartTable();
  b.AddInt64(0, id);    // id
  b.AddRef(1, data);    // data; isDelta: false, a dictionary replaces any before it
  return FinishMessage(b, MessageType::kDictionaryBatch, b.EndTable(), body_length);
}

std::string EncodeFooter(const Schema& schema, const std::vector<Block>& dictionary_blocks,
                         const std::vector<Block>& batches) {
  fb::FlatBufferBuilder b;
  fb::Ref schema_ref = BuildSchema(b, schema);
  fb::Ref dictionaries = b.CreateStructVector(dictionary_blocks.data(), dictionary_blocks.size(), sizeof(Block), 8);
  fb::Ref blocks = b.CreateStructVector(batches.data(), batches.size(), sizeof(Block), 8);
  b.StartTable();
  b.AddInt16(kFooterVersion, kMetadataV5);
  b.AddRef(kFooterSchema, schema_ref);
  b.AddRef(kFooterDictionaries, dictionaries);
  b.AddRef(kFooterRecordBatches, blocks);
  return b.Finish(b.EndTable());
}

SchemaPtr DecodeSchema(const fb::FlatTable& schema, bool* big_endian, DictionaryFields* dictionaries) {
  const bool big = schema.GetInt16(kSchemaEndianness, 0) != 0;
  if (big && !big_endian)
    ThrowNotSupported("{}: Arrow schema at byte {} is big endian; lancelet reads little endian only",
                      schema.source_name(), schema.abs_offset());
  if (big_endian) *big_endian = big;
  std::vector<FieldPtr> fields;
  fb::FlatVector tables = schema.GetVector(kSchemaFields);
  for (uint32_t i = 0; i < tables.size(); ++i) fields.push_back(DecodeField(tables.TableAt(i), 0, dictionaries));
  return std::make_shared<Schema>(std::move(fields), DecodeMetadata(schema.GetVector(kSchemaMetadata)));
}

}  // namespace lancelet::ipc
