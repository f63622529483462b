// Arrow IPC writing: record batch bodies, message framing, the stream and file formats.
#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>

#include "array/dictionary_array.h"
#include "array/ipc_internal.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"

namespace lancelet::ipc {
namespace {

constexpr size_t kBodyAlignment = 8;

size_t PaddedSize(size_t n) { return (n + 7) & ~size_t{7}; }

void AppendU32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

// Lays out the buffers of one record batch, depth first, as the IPC body.
class BodyWriter {
 public:
  void Visit(const ArrayData& array) {
    nodes_.push_back({array.length, array.null_count});
    if (array.type->id() == TypeId::kNull) return;  // Arrow's null layout has no buffers
    if (array.null_count > 0 && array.buffers[0]) {
      AddBuffer(array.buffers[0], (array.length + 7) / 8);
    } else {
      AddBytes(nullptr, 0, 0);  // all valid: an empty validity buffer
    }
    const DataType& type = *array.type;
    switch (type.id()) {
      case TypeId::kFixedSizeBinary:
        AddBuffer(array.buffers[1], array.length * type.fixed_size());
        return;
      case TypeId::kUtf8:
      case TypeId::kLargeUtf8:
      case TypeId::kBinary:
      case TypeId::kLargeBinary: {
        auto [start, end] = AddOffsets(array);
        message_.held.push_back(array.buffers[2]);
        AddBytes(array.buffers[2]->data() + start, end - start, end - start);
        return;
      }
      case TypeId::kList:
      case TypeId::kMap:
      case TypeId::kLargeList: {
        auto [start, end] = AddOffsets(array);
        const ArrayData& items = *array.child(0);
        if (start == 0 && items.length == end) {
          Visit(items);
        } else {
          Visit(*Slice(items, start, end - start));
        }
        return;
      }
      case TypeId::kFixedSizeList: {
        const ArrayData& items = *array.child(0);
        int64_t need = array.length * type.fixed_size();
        items.length == need ? Visit(items) : Visit(*Slice(items, 0, need));
        return;
      }
      case TypeId::kStruct:
        for (const auto& child : array.children) {
          child->length == array.length ? Visit(*child) : Visit(*Slice(*child, 0, array.length));
        }
        return;
      default: {
        int bits = type.bit_width();
        int64_t need = bits == 1 ? (array.length + 7) / 8 : array.length * (bits / 8);
        AddBuffer(array.buffers[1], need);
        return;
      }
    }
  }

  EncodedMessage Finish(int64_t length) {
    message_.metadata = EncodeRecordBatchMessage(length, nodes_, buffers_, message_.body_size);
    return std::move(message_);
  }

  EncodedMessage FinishDictionary(int64_t id, int64_t length) {
    message_.metadata = EncodeDictionaryBatchMessage(id, length, nodes_, buffers_, message_.body_size);
    return std::move(message_);
  }

 private:
  void AddBuffer(const BufferPtr& buffer, int64_t need) {
    message_.held.push_back(buffer);
    AddBytes(buffer->data(), std::min<size_t>(buffer->size(), need), need);
  }

  // Adds `avail` bytes (which must outlive the message: `held` keeps their owner),
  // zero-fills up to `need`, pads to the body alignment.
  void AddBytes(const uint8_t* data, size_t avail, size_t need) {
    buffers_.push_back({static_cast<int64_t>(message_.body_size), static_cast<int64_t>(need)});
    if (avail > 0) AddPart({reinterpret_cast<const char*>(data), avail});
    AddZeros(need - avail + PaddedSize(need) - need);
    static_assert(kBodyAlignment == 8);
  }

  void AddZeros(size_t n) {
    static constexpr char kZeros[64] = {};
    if (n <= sizeof(kZeros)) return AddPart({kZeros, n});
    auto zeros = std::make_shared<const std::string>(n, '\0');
    AddPart(*zeros);
    message_.held.push_back(std::move(zeros));
  }

  void AddPart(std::string_view part) {
    if (part.empty()) return;
    message_.body.push_back(part);
    message_.body_size += part.size();
  }

  // Writes the offsets rebased to start at 0; returns the original first and last offset.
  std::pair<int64_t, int64_t> AddOffsets(const ArrayData& array) {
    int64_t n = array.length;
    int64_t start = array.offset(0), end = array.offset(n);
    bool large = array.type->has_large_offsets();
    size_t width = large ? 8 : 4;
    if (start == 0) {
      AddBuffer(array.buffers[1], (n + 1) * width);
      return {start, end};
    }
    auto rebased = std::make_shared<std::string>((n + 1) * width, '\0');
    for (int64_t i = 0; i <= n; ++i) {
      int64_t v = array.offset(i) - start;
      if (large) {
        std::memcpy(rebased->data() + i * 8, &v, 8);
      } else {
        int32_t v32 = static_cast<int32_t>(v);
        std::memcpy(rebased->data() + i * 4, &v32, 4);
      }
    }
    AddBytes(reinterpret_cast<const uint8_t*>(rebased->data()), rebased->size(), rebased->size());
    message_.held.push_back(std::move(rebased));
    return {start, end};
  }

  EncodedMessage message_;
  std::vector<FieldNode> nodes_;
  std::vector<BufferSpec> buffers_;
};

// `array` with the values of each dictionary-encoded field below `field` (itself included)
// replaced by keys; the dictionaries go to `out` as messages, ids in pre-order.
ArrayPtr KeyDictionaries(const Field& field, const ArrayPtr& array, int64_t& next_id,
                         std::vector<EncodedMessage>& out) {
  if (WritesDictionary(field)) {
    DictionaryArrays encoded =
        EncodeDictionary(*array, field.dictionary_index,
                         fmt::format("Arrow IPC: field '{}' ({} keys): a batch", field.name,
                                     field.dictionary_index->ToString()));
    BodyWriter body;
    body.Visit(*encoded.values);
    out.push_back(body.FinishDictionary(next_id++, encoded.values->length));
    return encoded.keys;
  }
  if (!HasDictionaries(field)) return array;
  auto copy = std::make_shared<ArrayData>(*array);
  const auto& children = field.type->children();
  for (size_t i = 0; i < children.size(); ++i)
    copy->children[i] = KeyDictionaries(*children[i], array->children[i], next_id, out);
  return copy;
}

}  // namespace

bool HasDictionaries(const Field& field) {
  if (WritesDictionary(field)) return true;
  for (const auto& child : field.type->children())
    if (HasDictionaries(*child)) return true;
  return false;
}

EncodedMessage EncodeSchema(const Schema& schema) { return EncodedMessage::Of(EncodeSchemaMessage(schema)); }

void CheckBatch(const Schema& schema, const RecordBatch& batch) {
  if (batch.num_columns() != schema.num_fields())
    ThrowInvalid("Arrow IPC: record batch has {} columns but the stream schema has {} fields",
                 batch.num_columns(), schema.num_fields());
  for (size_t i = 0; i < batch.num_columns(); ++i) {
    const ArrayData& column = *batch.column(i);
    const Field& field = *schema.field(i);
    if (!column.type->Equals(*field.type))
      ThrowInvalid("Arrow IPC: column {} ('{}') has type {} but the stream schema says {}", i,
                   field.name, column.type->ToString(), field.type->ToString());
    if (column.length != batch.num_rows())
      ThrowInvalid("Arrow IPC: column {} ('{}') has {} rows, the batch {}", i, field.name,
                   column.length, batch.num_rows());
  }
}

EncodedMessage EncodeBatch(const Schema& schema, const RecordBatch& batch, std::vector<EncodedMessage>* dictionaries) {
  CheckBatch(schema, batch);
  BodyWriter body;
  int64_t next_dictionary_id = 0;
  for (size_t i = 0; i < batch.num_columns(); ++i) {
    const Field& field = *schema.field(i);
    if (!HasDictionaries(field)) {
      body.Visit(*batch.column(i));
      continue;
    }
    if (!dictionaries) ThrowInvalid("Arrow IPC: field '{}' is dictionary-encoded, and nothing takes its dictionary", field.name);
    body.Visit(*KeyDictionaries(field, batch.column(i), next_dictionary_id, *dictionaries));
  }
  return body.Finish(batch.num_rows());
}

int32_t FramedMetadataSize(const EncodedMessage& message) {
  return static_cast<int32_t>(8 + PaddedSize(message.metadata.size()));
}

std::string FramePrefix(const EncodedMessage& message) {
  std::string out;
  size_t padded = PaddedSize(message.metadata.size());
  out.reserve(8 + padded);
  AppendU32(out, kContinuation);
  AppendU32(out, static_cast<uint32_t>(padded));
  out += message.metadata;
  out.append(padded - message.metadata.size(), '\0');
  return out;
}

EncodedMessage EncodedMessage::Of(std::string metadata, std::string body) {
  EncodedMessage message;
  message.metadata = std::move(metadata);
  auto owned = std::make_shared<const std::string>(std::move(body));
  if (!owned->empty()) message.body.push_back(*owned);
  message.body_size = owned->size();
  message.held.push_back(std::move(owned));
  return message;
}

std::string EncodedMessage::Body() const {
  std::string out;
  out.reserve(body_size);
  for (std::string_view part : body) out += part;
  return out;
}

std::string FrameMessage(const EncodedMessage& message) { return FramePrefix(message) + message.Body(); }

std::string EndOfStream() {
  std::string out;
  AppendU32(out, kContinuation);
  AppendU32(out, 0);
  return out;
}

}  // namespace lancelet::ipc

namespace lancelet {

void IpcStreamWriter::Emit(std::string_view bytes) {
  out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out_) ThrowIo("Arrow IPC stream: write of {} bytes at byte {} failed", bytes.size(), bytes_written_);
  bytes_written_ += static_cast<int64_t>(bytes.size());
}

void IpcStreamWriter::WriteSchema(const Schema& schema) {
  if (schema_) ThrowInvalid("Arrow IPC stream: WriteSchema called twice");
  schema_ = std::make_shared<Schema>(schema);
  Emit(ipc::FrameMessage(ipc::EncodeSchema(schema)));
}

void IpcStreamWriter::WriteBatch(const RecordBatch& batch) {
  if (!schema_) ThrowInvalid("Arrow IPC stream: WriteBatch called before WriteSchema");
  if (closed_) ThrowInvalid("Arrow IPC stream: WriteBatch called after Close");
  ipc::CheckBatch(*schema_, batch);
  std::vector<ipc::EncodedMessage> dictionaries;
  std::optional<ipc::EncodedMessage> message;
  try {
    message = ipc::EncodeBatch(*schema_, batch, &dictionaries);
  } catch (const Error& e) {
    // The batch checked out, so this is more distinct values than a key type indexes:
    // halves get dictionaries of their own (a stream's dictionaries replace those before).
    if (e.kind() != ErrorKind::kInvalidArgument || batch.num_rows() < 2) throw;
    const int64_t half = batch.num_rows() / 2;
    WriteBatch(*batch.Slice(0, half));
    WriteBatch(*batch.Slice(half, batch.num_rows() - half));
    return;
  }
  // Prefix and body go out as they are: framing them into one string would copy the body.
  for (const auto& dictionary : dictionaries) Emit(ipc::FrameMessage(dictionary));
  Emit(ipc::FramePrefix(*message));
  for (std::string_view part : message->body) Emit(part);
}

void IpcStreamWriter::Close() {
  if (closed_) return;
  if (!schema_) ThrowInvalid("Arrow IPC stream: Close called before WriteSchema");
  Emit(ipc::EndOfStream());
  closed_ = true;
  out_.flush();
}

std::string WriteIpcStream(const Schema& schema, const std::vector<RecordBatchPtr>& batches) {
  std::ostringstream out;
  IpcStreamWriter writer(out);
  writer.WriteSchema(schema);
  for (const auto& batch : batches) writer.WriteBatch(*batch);
  writer.Close();
  return std::move(out).str();
}

namespace {

// The field without dictionary encodings at any depth (values written as they are).
FieldPtr WithoutDictionaries(const FieldPtr& field) {
  if (!ipc::HasDictionaries(*field)) return field;
  auto plain = std::make_shared<Field>(*field);
  plain->dictionary_index = nullptr;
  const DataType& type = *field->type;
  std::vector<FieldPtr> children;
  for (const auto& child : type.children()) children.push_back(WithoutDictionaries(child));
  switch (type.id()) {
    case TypeId::kStruct: plain->type = DataType::Struct(std::move(children)); break;
    case TypeId::kList: plain->type = DataType::List(children[0]); break;
    case TypeId::kLargeList: plain->type = DataType::LargeList(children[0]); break;
    case TypeId::kFixedSizeList: plain->type = DataType::FixedSizeList(children[0], type.fixed_size()); break;
    case TypeId::kMap: plain->type = DataType::Map(children[0], type.keys_sorted()); break;
    default: break;
  }
  return plain;
}

Schema WithoutDictionaries(const Schema& schema) {
  std::vector<FieldPtr> fields;
  for (const auto& field : schema.fields()) fields.push_back(WithoutDictionaries(field));
  return Schema(std::move(fields), schema.metadata());
}

}  // namespace

std::string WriteIpcFile(const Schema& schema_in, const std::vector<RecordBatchPtr>& batches) {
  // A file holds one dictionary per field for all its batches, so they are written as one.
  Schema schema = schema_in;
  std::vector<ipc::EncodedMessage> dictionaries, messages;
  bool keyed = false;
  for (const auto& field : schema.fields()) keyed = keyed || ipc::HasDictionaries(*field);
  for (const auto& batch : batches) ipc::CheckBatch(schema, *batch);
  if (keyed && !batches.empty()) {
    RecordBatchPtr joined = batches.size() == 1 ? batches[0] : RecordBatch::Concatenate(batches[0]->schema(), batches);
    try {
      messages.push_back(ipc::EncodeBatch(schema, *joined, &dictionaries));
    } catch (const Error& e) {  // the batches checked out: more distinct values than the keys index
      if (e.kind() != ErrorKind::kInvalidArgument) throw;
      schema = WithoutDictionaries(schema);  // too many distinct values for the keys
      dictionaries.clear();
    }
  }
  if (messages.empty())
    for (const auto& batch : batches) messages.push_back(ipc::EncodeBatch(schema, *batch));
  std::string out(ipc::kFileMagic, ipc::kFileMagicSize);
  out.append(2, '\0');  // pad the magic to 8 bytes
  out += ipc::FrameMessage(ipc::EncodeSchema(schema));
  std::vector<ipc::Block> dictionary_blocks, blocks;
  for (const auto& dictionary : dictionaries) {
    dictionary_blocks.push_back({static_cast<int64_t>(out.size()), ipc::FramedMetadataSize(dictionary), 0,
                                 static_cast<int64_t>(dictionary.body_size)});
    out += ipc::FrameMessage(dictionary);
  }
  for (const auto& message : messages) {
    blocks.push_back({static_cast<int64_t>(out.size()), ipc::FramedMetadataSize(message), 0,
                      static_cast<int64_t>(message.body_size)});
    out += ipc::FrameMessage(message);
  }
  out += ipc::EndOfStream();
  std::string footer = ipc::EncodeFooter(schema, dictionary_blocks, blocks);
  out += footer;
  int32_t footer_size = static_cast<int32_t>(footer.size());
  out.append(reinterpret_cast<const char*>(&footer_size), 4);
  out.append(ipc::kFileMagic, ipc::kFileMagicSize);
  return out;
}

}  // namespace lancelet
