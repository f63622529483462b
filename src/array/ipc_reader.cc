// Arrow IPC reading: message framing, the stream and file formats, record batch bodies.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>

#include "array/dictionary_array.h"
#include "array/ipc_internal.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"

namespace lancelet::ipc {
namespace {

// One body buffer: where it lies in memory and, for messages, in the source.
struct BodySlice {
  const uint8_t* data;
  int64_t length;
  int64_t abs_offset;
};

// Decodes the body of one RecordBatch message into arrays with our invariants.
class BatchDecoder {
 public:
  // With a codec every buffer is decompressed as it is taken; slices then point into
  // storage owned by the decoder, so arrays must copy out before the decoder goes away.
  BatchDecoder(const fb::FlatTable& batch, const uint8_t* body, int64_t body_length,
               int64_t body_abs_offset, std::optional<CompressionCodec> codec, bool big_endian,
               const DictionaryFields& dictionary_fields, const std::map<int64_t, ArrayPtr>& dictionaries)
      : batch_(batch),
        nodes_(batch.GetVector(kBatchNodes)),
        buffers_(batch.GetVector(kBatchBuffers)),
        body_(body),
        body_length_(body_length),
        body_abs_(body_abs_offset),
        codec_(codec),
        big_endian_(big_endian),
        dictionary_fields_(dictionary_fields),
        dictionaries_(dictionaries) {}

  ArrayPtr Read(const Field& field) {
    if (auto it = dictionary_fields_.find(&field); it != dictionary_fields_.end()) return ReadKeyed(field, it->second);
    FieldNode node = NextNode(field);
    const DataType& type = *field.type;
    if (type.id() == TypeId::kNull) return MakeNullArray(field.type, node.length);  // no buffers
    auto out = std::make_shared<ArrayData>();
    out->type = field.type;
    out->length = node.length;
    out->buffers.push_back(ReadValidity(field, node, &out->null_count));
    int64_t n = node.length;
    switch (type.id()) {
      case TypeId::kFixedSizeBinary:
        out->buffers.push_back(CopyBuffer(field, NextBuffer(field), Mul(field, n, type.fixed_size()), "values"));
        break;
      case TypeId::kUtf8:
      case TypeId::kLargeUtf8:
      case TypeId::kBinary:
      case TypeId::kLargeBinary: {
        auto [offsets, start, end] = ReadOffsets(field, n);
        BodySlice data = NextBuffer(field);
        if (data.length < end) Fail(field, data.abs_offset, "data buffer is shorter than the offsets say");
        out->buffers.push_back(offsets);
        out->buffers.push_back(Buffer::Copy(data.data + start, size_t(end - start)));
        break;
      }
      case TypeId::kList:
      case TypeId::kMap:
      case TypeId::kLargeList: {
        auto [offsets, start, end] = ReadOffsets(field, n);
        out->buffers.push_back(offsets);
        out->children.push_back(Fit(field, Read(*type.child(0)), start, end - start));
        break;
      }
      case TypeId::kFixedSizeList:
        out->children.push_back(Fit(field, Read(*type.child(0)), 0, Mul(field, n, type.fixed_size())));
        break;
      case TypeId::kStruct:
        for (const auto& child : type.children()) out->children.push_back(Fit(field, Read(*child), 0, n));
        break;
      default: {
        int bits = type.bit_width();
        int64_t need = bits == 1 ? (n + 7) / 8 : Mul(field, n, bits / 8);
        out->buffers.push_back(CopyBuffer(field, NextBuffer(field), need, "values"));
        // Big-endian input: each value's bytes reversed (a decimal is one wide integer).
        if (big_endian_ && bits > 8)
          for (uint8_t* v = out->buffers.back()->mutable_data(), *end = v + need; v < end; v += bits / 8)
            std::reverse(v, v + bits / 8);
        break;
      }
    }
    return out;
  }

  int64_t batch_abs_offset() const { return batch_.abs_offset(); }

  // A dictionary-encoded field: its keys, replaced by the dictionary's values.
  ArrayPtr ReadKeyed(const Field& field, const DictionaryEncoding& encoding) {
    Field keys_field{field.name, encoding.index_type, field.nullable, {}, nullptr};
    ArrayPtr keys = Read(keys_field);
    auto dictionary = dictionaries_.find(encoding.id);
    if (dictionary == dictionaries_.end())
      Fail(field, batch_.abs_offset(), fmt::format("no dictionary batch with id {} comes before it", encoding.id));
    try {
      return DecodeDictionary(*keys, *dictionary->second);
    } catch (const Error& e) {
      Fail(field, batch_.abs_offset(), fmt::format("{} of dictionary {}", e.what(), encoding.id));
    }
  }

 private:
  [[noreturn]] void Fail(const Field& field, int64_t at, std::string_view what) const {
    ThrowCorrupt("{}: Arrow record batch at byte {}, field '{}': {} (at byte {})",
                 batch_.source_name(), batch_.abs_offset(), field.name, what, at);
  }

  FieldNode NextNode(const Field& field) {
    if (node_index_ >= nodes_.size())
      Fail(field, batch_.abs_offset(), "the batch has fewer field nodes than the schema needs");
    FieldNode node;
    std::memcpy(&node, nodes_.StructAt(node_index_++, sizeof(FieldNode)), sizeof(FieldNode));
    // A null array's null_count says nothing (apache-arrow JS writes -1 for a sliced one).
    if (field.type->id() == TypeId::kNull) node.null_count = node.length;
    if (node.length < 0 || node.null_count < 0 || node.null_count > node.length)
      Fail(field, batch_.abs_offset(), fmt::format("bad field node (length {}, null_count {})",
                                                   node.length, node.null_count));
    return node;
  }

  BodySlice NextBuffer(const Field& field) {
    if (buffer_index_ >= buffers_.size())
      Fail(field, batch_.abs_offset(), "the batch has fewer buffers than the schema needs");
    BufferSpec spec;
    std::memcpy(&spec, buffers_.StructAt(buffer_index_++, sizeof(BufferSpec)), sizeof(BufferSpec));
    if (spec.offset < 0 || spec.length < 0 || spec.offset > body_length_ ||
        spec.length > body_length_ - spec.offset)
      Fail(field, body_abs_ + spec.offset,
           fmt::format("buffer [{}, +{}) lies outside the {}-byte body", spec.offset, spec.length,
                       body_length_));
    BodySlice slice{body_ + spec.offset, spec.length, body_abs_ + spec.offset};
    return codec_ ? Decompress(field, slice) : slice;
  }

  // The decoded bytes keep the compressed buffer's offset: later errors point at it.
  BodySlice Decompress(const Field& field, const BodySlice& slice) {
    std::vector<uint8_t>& storage = decompressed_.emplace_back();
    DecompressedBuffer out =
        DecompressBuffer(*codec_, {slice.data, size_t(slice.length)}, &storage);
    if (!out.error.empty())
      Fail(field, slice.abs_offset + out.error_at,
           fmt::format("{} buffer {}: {}", CodecName(*codec_), buffer_index_ - 1, out.error));
    // An empty result may carry a null pointer; keep the body's, which memcpy accepts.
    if (out.bytes.empty()) return {slice.data, 0, slice.abs_offset};
    return {out.bytes.data(), int64_t(out.bytes.size()), slice.abs_offset};
  }

  // a * b for sizes taken from the input; overflow means the input is corrupt.
  int64_t Mul(const Field& field, int64_t a, int64_t b) {
    int64_t out;
    if (__builtin_mul_overflow(a, b, &out))
      Fail(field, batch_.abs_offset(), fmt::format("size {} * {} overflows", a, b));
    return out;
  }

  BufferPtr CopyBuffer(const Field& field, const BodySlice& slice, int64_t need, const char* what) {
    if (slice.length < need)
      Fail(field, slice.abs_offset,
           fmt::format("{} buffer has {} bytes, {} needed", what, slice.length, need));
    return Buffer::Copy(slice.data, size_t(need));
  }

  // A null_count of 0 means all valid whatever the buffer holds (often nothing).
  BufferPtr ReadValidity(const Field& field, const FieldNode& node, int64_t* null_count) {
    BodySlice slice = NextBuffer(field);
    *null_count = 0;
    if (node.null_count == 0) return nullptr;
    BufferPtr bits = CopyBuffer(field, slice, (node.length + 7) / 8, "validity");
    *null_count = CountNulls(bits->data(), node.length);
    if (*null_count != node.null_count)
      Fail(field, slice.abs_offset,
           fmt::format("field node says {} nulls, the validity bitmap has {}", node.null_count,
                       *null_count));
    return bits;
  }

  struct Offsets {
    BufferPtr buffer;  // rebased to start at 0
    int64_t start;
    int64_t end;
  };

  template <typename T>
  Offsets RebaseOffsets(const Field& field, const BodySlice& slice, int64_t n) {
    if (n == 0 && slice.length < int64_t(sizeof(T))) return {Buffer::Allocate(sizeof(T)), 0, 0};  // may be omitted
    if (slice.length / int64_t(sizeof(T)) < n + 1)
      Fail(field, slice.abs_offset,
           fmt::format("offsets buffer has {} bytes, {} entries needed", slice.length, n + 1));
    auto out = Buffer::Allocate(size_t(n + 1) * sizeof(T));
    T* dst = out->mutable_as<T>();
    auto load = [&](int64_t i) {
      T v;
      std::memcpy(&v, slice.data + i * sizeof(T), sizeof(T));
      if (!big_endian_) return v;
      if constexpr (sizeof(T) == 4) return T(__builtin_bswap32(uint32_t(v)));
      else return T(__builtin_bswap64(uint64_t(v)));
    };
    T start = load(0);
    if (start < 0) Fail(field, slice.abs_offset, "negative first offset");
    T prev = start;
    for (int64_t i = 0; i <= n; ++i) {
      T v = load(i);
      if (v < prev) Fail(field, slice.abs_offset, fmt::format("offsets decrease at row {}", i - 1));
      dst[i] = v - start;
      prev = v;
    }
    return {out, int64_t(start), int64_t(prev)};
  }

  Offsets ReadOffsets(const Field& field, int64_t n) {
    BodySlice slice = NextBuffer(field);
    return field.type->has_large_offsets() ? RebaseOffsets<int64_t>(field, slice, n)
                                           : RebaseOffsets<int32_t>(field, slice, n);
  }

  // Children may be longer than the parent uses (sliced arrays); keep [start, start+length).
  ArrayPtr Fit(const Field& field, ArrayPtr child, int64_t start, int64_t length) {
    if (child->length < start + length)
      Fail(field, batch_.abs_offset(),
           fmt::format("child has {} rows, {} needed", child->length, start + length));
    if (start == 0 && child->length == length) return child;
    return Slice(*child, start, length);
  }

  fb::FlatTable batch_;
  fb::FlatVector nodes_;
  fb::FlatVector buffers_;
  uint32_t node_index_ = 0;
  uint32_t buffer_index_ = 0;
  const uint8_t* body_;
  int64_t body_length_;
  int64_t body_abs_;
  std::optional<CompressionCodec> codec_;
  bool big_endian_;  // offsets and values are converted to little endian as they are read
  const DictionaryFields& dictionary_fields_;
  const std::map<int64_t, ArrayPtr>& dictionaries_;  // by id, as the batches so far left them
  std::deque<std::vector<uint8_t>> decompressed_;  // deque: earlier slices stay valid
};

// A message parsed in place. Holds the FlatSource its tables point into, so it is neither
// copied nor moved.
struct Message {
  Message() = default;
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;

  fb::FlatSource source;
  fb::FlatTable root;
  MessageType type = MessageType::kNone;
  fb::FlatTable header;
  int64_t start = 0;       // of the framing
  int64_t body_start = 0;
  int64_t body_length = 0;
  int64_t end = 0;         // first byte after the body
};

class IpcReader final : public RecordBatchReader {
 public:
  IpcReader(std::shared_ptr<const void> owner, std::string_view bytes, std::string_view name, IpcRelease release)
      : owner_(std::move(owner)), bytes_(bytes), name_(name), release_(std::move(release)) {
    if (bytes_.empty()) ThrowCorrupt("{}: empty input is not an Arrow IPC stream or file", name_);
    if (bytes_.compare(0, kFileMagicSize, kFileMagic, kFileMagicSize) == 0) {
      OpenFile();
    } else {
      OpenStream();
    }
  }

  // Over bytes read front to back (a pipe): the window holds the message being decoded,
  // not the stream. A file (ARROW1 magic) needs its footer first, so it is read whole.
  IpcReader(IpcReadSome read, std::string_view name) : read_(std::move(read)), name_(name) {
    Need(0, kFileMagicSize);
    if (window_.empty()) ThrowCorrupt("{}: empty input is not an Arrow IPC stream or file", name_);
    if (window_.compare(0, kFileMagicSize, kFileMagic, kFileMagicSize) == 0) {
      Need(0, INT64_MAX);
      read_ = nullptr;
      OpenFile();
    } else {
      OpenStream();
    }
  }

  SchemaPtr schema() const override { return schema_; }

  RecordBatchPtr Next() override {
    if (is_file_) {
      if (next_block_ >= blocks_.size()) return nullptr;
      const Block& block = blocks_[next_block_++];
      Message message;
      if (!Parse(block.offset, &message))
        ThrowCorrupt("{}: Arrow file block at byte {} holds an end-of-stream marker", name_, block.offset);
      RecordBatchPtr batch = DecodeBatch(message);
      Release(message);
      return batch;
    }
    while (!done_) {
      Message message;
      if (!Parse(pos_, &message)) {
        done_ = true;
        break;
      }
      pos_ = message.end;
      switch (message.type) {
        case MessageType::kRecordBatch: {
          RecordBatchPtr batch = DecodeBatch(message);
          Release(message);
          return batch;
        }
        case MessageType::kDictionaryBatch:
          ReadDictionaryBatch(message);
          Release(message);
          break;
        case MessageType::kSchema:
          ThrowCorrupt("{}: second Arrow schema message at byte {}", name_, message.start);
        default:
          ThrowNotSupported("{}: Arrow message at byte {} has header type {}, expected a record batch",
                            name_, message.start, int(message.type));
      }
    }
    return nullptr;
  }

 private:
  // The byte at absolute offset `pos` (held: between base_ and size()).
  const uint8_t* data(int64_t pos = 0) const { return reinterpret_cast<const uint8_t*>(bytes_.data()) + (pos - base_); }
  // The end of the bytes held: the input's size unless it is being streamed.
  int64_t size() const { return base_ + int64_t(bytes_.size()); }

  // Streaming: drops the held bytes before `pos` (messages already decoded).
  void Drop(int64_t pos) const {
    if (!read_ || pos <= base_) return;
    window_.erase(0, size_t(std::min(pos, size()) - base_));
    base_ = std::min(pos, size());
    bytes_ = window_;
  }

  // Streaming: reads until [pos, pos + n) is held or the input ends. Held bytes may move:
  // pointers into them are taken after.
  void Need(int64_t pos, int64_t n) const {
    if (!read_) return;
    auto held = [&] { return base_ + int64_t(window_.size()) - pos; };  // bytes from pos on
    if (held() < n && !ended_) window_.reserve(size_t(std::min<int64_t>(n - held(), 64 << 20)) + window_.size());
    while (!ended_ && held() < n) {
      chunk_.resize(1 << 20);  // once; reading into window_ directly would zero-fill it first
      const size_t got = read_(chunk_.data(), chunk_.size());
      window_.append(chunk_.data(), got);
      ended_ = got == 0;
    }
    bytes_ = window_;
  }

  template <typename T>
  T LoadAt(int64_t pos, std::string_view what) const {
    Need(pos, int64_t(sizeof(T)));
    if (pos < base_ || pos > size() - int64_t(sizeof(T)))
      ThrowCorrupt("{}: truncated Arrow IPC data: {} at byte {} runs past the end ({} bytes)", name_,
                   what, pos, size());
    T v;
    std::memcpy(&v, data(pos), sizeof(T));
    return v;
  }

  // Once decoded, a message's bytes are no longer needed: what was decoded is a copy.
  void Release(const Message& message) const {
    if (release_) release_(message.start, message.end - message.start);
  }

  // DictionaryBatch: id (0), data (1, a record batch of one column), isDelta (2).
  void ReadDictionaryBatch(const Message& message) {
    const fb::FlatTable& header = message.header;
    const int64_t id = header.GetInt64(0, 0);
    const Field* value_field = nullptr;
    for (const auto& [field, encoding] : dictionary_fields_)
      if (encoding.id == id) value_field = field;
    if (!value_field)
      ThrowCorrupt("{}: Arrow dictionary batch at byte {} has id {}, which no field of the schema uses", name_,
                   message.start, id);
    fb::FlatTable data = header.GetTable(1);
    if (!data.valid()) ThrowCorrupt("{}: Arrow dictionary batch at byte {} has no data", name_, message.start);
    // The values are read as the field's type; a dictionary-encoded field inside them (a
    // nested dictionary) looks up a dictionary that came before.
    BatchDecoder decoder(data, this->data(message.body_start), message.body_length, message.body_start,
                         ReadCompression(data, message), big_endian_, dictionary_fields_, dictionaries_);
    Field values_field{value_field->name, value_field->type, true, {}, nullptr};
    ArrayPtr values = decoder.Read(values_field);
    ArrayPtr& slot = dictionaries_[id];
    slot = header.GetBool(2, false) && slot ? Concatenate({slot, values}) : values;
  }

  // Parses the message framed at `pos`; false at an end-of-stream marker or at the end
  // of the data (streams written by some tools stop without the marker).
  bool Parse(int64_t pos, Message* m) const {
    Drop(pos);
    Need(pos, 1);
    if (pos == size()) return false;
    m->start = pos;
    uint32_t first = LoadAt<uint32_t>(pos, "message length");
    int64_t meta_start = pos + 4;
    int64_t meta_len = first;
    if (first == kContinuation) {
      meta_len = LoadAt<int32_t>(pos + 4, "message length");
      meta_start = pos + 8;
    }
    if (meta_len == 0) return false;
    Need(pos, meta_start + meta_len - pos);
    if (meta_len < 0 || meta_len > size() - meta_start)
      ThrowCorrupt("{}: Arrow message at byte {}: metadata length {} runs past the end ({} bytes)",
                   name_, pos, meta_len, size());
    ParseMetadata(m, meta_start, meta_len);
    int16_t version = m->root.GetInt16(kMessageVersion, 0);
    if (version < 3)
      ThrowNotSupported("{}: Arrow message at byte {} uses metadata version V{}; lancelet reads V4 and V5",
                        name_, pos, version + 1);
    if (!m->header.valid()) ThrowCorrupt("{}: Arrow message at byte {} has no header", name_, pos);
    m->body_start = meta_start + meta_len;
    m->body_length = m->root.GetInt64(kMessageBodyLength, 0);
    if (read_ && m->body_length > 0) {
      Need(pos, m->body_start + m->body_length - pos);
      ParseMetadata(m, meta_start, meta_len);  // the held bytes may have moved
    }
    if (m->body_length < 0 || m->body_length > size() - m->body_start)
      ThrowCorrupt("{}: Arrow message at byte {}: body of {} bytes runs past the end ({} bytes)", name_,
                   pos, m->body_length, size());
    m->end = m->body_start + m->body_length;
    return true;
  }

  void ParseMetadata(Message* m, int64_t meta_start, int64_t meta_len) const {
    m->source = {data(meta_start), size_t(meta_len), name_, meta_start};
    m->root = fb::FlatTable::Root(m->source);
    m->type = MessageType(m->root.GetUInt8(kMessageHeaderType, 0));
    m->header = m->root.GetTable(kMessageHeader);
  }

  void OpenStream() {
    Message message;
    if (!Parse(0, &message)) ThrowCorrupt("{}: Arrow stream ends before its schema message", name_);
    if (message.type != MessageType::kSchema)
      ThrowCorrupt("{}: Arrow stream starts with message type {} at byte 0, expected a schema", name_,
                   int(message.type));
    schema_ = DecodeSchema(message.header, &big_endian_, &dictionary_fields_);
    pos_ = message.end;
  }

  void OpenFile() {
    is_file_ = true;
    int64_t trailer = size() - int64_t(kFileMagicSize) - 4;
    if (trailer < 8 || bytes_.compare(size_t(size()) - kFileMagicSize, kFileMagicSize, kFileMagic) != 0)
      ThrowCorrupt("{}: Arrow file of {} bytes does not end with the ARROW1 magic", name_, size());
    int32_t footer_len = LoadAt<int32_t>(trailer, "footer length");
    int64_t footer_start = trailer - footer_len;
    if (footer_len <= 0 || footer_start < 8)
      ThrowCorrupt("{}: Arrow file footer length {} at byte {} is impossible for a {}-byte file", name_,
                   footer_len, trailer, size());
    footer_source_ = {data() + footer_start, size_t(footer_len), name_, footer_start};
    fb::FlatTable footer = fb::FlatTable::Root(footer_source_);
    fb::FlatTable schema = footer.GetTable(kFooterSchema);
    if (!schema.valid()) ThrowCorrupt("{}: Arrow file footer at byte {} has no schema", name_, footer_start);
    schema_ = DecodeSchema(schema, &big_endian_, &dictionary_fields_);
    fb::FlatVector dictionary_blocks = footer.GetVector(kFooterDictionaries);
    for (uint32_t i = 0; i < dictionary_blocks.size(); ++i) {
      Block block;
      std::memcpy(&block, dictionary_blocks.StructAt(i, sizeof(Block)), sizeof(Block));
      Message message;
      if (block.offset < 8 || block.offset >= footer_start || !Parse(block.offset, &message) ||
          message.type != MessageType::kDictionaryBatch)
        ThrowCorrupt("{}: Arrow file dictionary block {} at byte {} holds no dictionary batch", name_, i,
                     block.offset);
      ReadDictionaryBatch(message);
      Release(message);
    }
    fb::FlatVector blocks = footer.GetVector(kFooterRecordBatches);
    for (uint32_t i = 0; i < blocks.size(); ++i) {
      Block block;
      std::memcpy(&block, blocks.StructAt(i, sizeof(Block)), sizeof(Block));
      if (block.offset < 8 || block.offset >= footer_start)
        ThrowCorrupt("{}: Arrow file block {} points at byte {}, outside the data", name_, i, block.offset);
      blocks_.push_back(block);
    }
  }

  // `batch`: a record batch table (a dictionary batch's data is one).
  std::optional<CompressionCodec> ReadCompression(const fb::FlatTable& batch, const Message& message) const {
    fb::FlatTable compression = batch.GetTable(kBatchCompression);
    if (!compression.valid()) return std::nullopt;
    uint8_t codec = compression.GetUInt8(kCompressionCodec, 0);
    uint8_t method = compression.GetUInt8(kCompressionMethod, kCompressionMethodBuffer);
    if (codec > uint8_t(CompressionCodec::kZstd))
      ThrowNotSupported("{}: Arrow record batch at byte {} uses compression codec {}; lancelet reads "
                        "LZ4_FRAME (0) and ZSTD (1)",
                        name_, message.start, codec);
    if (method != kCompressionMethodBuffer)
      ThrowNotSupported("{}: Arrow record batch at byte {} uses body compression method {}; lancelet "
                        "reads BUFFER (0) only",
                        name_, message.start, method);
    return CompressionCodec(codec);
  }

  RecordBatchPtr DecodeBatch(const Message& message) const {
    if (message.type != MessageType::kRecordBatch)
      ThrowCorrupt("{}: Arrow message at byte {} has type {}, expected a record batch", name_,
                   message.start, int(message.type));
    const fb::FlatTable& batch = message.header;
    int64_t rows = batch.GetInt64(kBatchLength, 0);
    BatchDecoder decoder(batch, data(message.body_start), message.body_length, message.body_start,
                         ReadCompression(batch, message), big_endian_, dictionary_fields_, dictionaries_);
    std::vector<ArrayPtr> columns;
    for (const auto& field : schema_->fields()) {
      ArrayPtr column = decoder.Read(*field);
      if (column->length != rows)
        ThrowCorrupt("{}: Arrow record batch at byte {}: column '{}' has {} rows, the batch {}", name_,
                     message.start, field->name, column->length, rows);
      ValidateArray(*column, fmt::format("{}: Arrow record batch at byte {}, column '{}'", name_,
                                         message.start, field->name));
      columns.push_back(std::move(column));
    }
    return std::make_shared<RecordBatch>(schema_, std::move(columns), rows);
  }

  std::shared_ptr<const void> owner_;  // keeps bytes_ alive
  // Streaming (read_ set): bytes_ views window_, which holds the input from offset base_.
  IpcReadSome read_;
  mutable std::string window_, chunk_;
  mutable int64_t base_ = 0;
  mutable bool ended_ = false;
  mutable std::string_view bytes_;
  std::string name_;
  IpcRelease release_;
  SchemaPtr schema_;
  bool is_file_ = false;
  bool big_endian_ = false;
  DictionaryFields dictionary_fields_;
  std::map<int64_t, ArrayPtr> dictionaries_;  // by dictionary id
  // file
  fb::FlatSource footer_source_;
  std::vector<Block> blocks_;
  size_t next_block_ = 0;
  // stream
  int64_t pos_ = 0;
  bool done_ = false;
};

}  // namespace
}  // namespace lancelet::ipc

namespace lancelet {

std::unique_ptr<RecordBatchReader> ReadIpc(std::string bytes, std::string_view source_name) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  return ReadIpc(owned, *owned, source_name);
}

std::unique_ptr<RecordBatchReader> ReadIpcStream(IpcReadSome read, std::string_view source_name) {
  return std::make_unique<ipc::IpcReader>(std::move(read), source_name);
}

std::unique_ptr<RecordBatchReader> ReadIpc(std::shared_ptr<const void> owner, std::string_view bytes,
                                           std::string_view source_name, IpcRelease release) {
  return std::make_unique<ipc::IpcReader>(std::move(owner), bytes, source_name, std::move(release));
}

}  // namespace lancelet
