#include "lancelet/ipc.h"

#include <gtest/gtest.h>
#include <lz4frame.h>
#include <zstd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "array/arrow_test_data.h"
#include "array/flatbuffer.h"
#include "array/ipc_internal.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"
#include "support/test_env.h"

namespace lancelet {
namespace {

using testing::AllTypesBatch;
using testing::AllTypesSchema;
using testing::ExpectBatchesEqual;
using testing::ExpectSchemasIdentical;

std::vector<RecordBatchPtr> ReadAll(RecordBatchReader& reader) {
  std::vector<RecordBatchPtr> out;
  while (auto batch = reader.Next()) out.push_back(batch);
  return out;
}

uint32_t U32At(const std::string& s, size_t pos) {
  uint32_t v;
  std::memcpy(&v, s.data() + pos, 4);
  return v;
}

// Expects `fn` to throw an Error of `kind` whose message contains every `parts`.
template <typename Fn>
void ExpectError(Fn fn, ErrorKind kind, std::vector<std::string> parts) {
  try {
    fn();
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(ErrorKindName(e.kind()), std::string(ErrorKindName(kind))) << e.what();
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------------------ flatbuffers

TEST(FlatBuffer, TableRoundTripWithDefaultsStringsAndVectors) {
  fb::FlatBufferBuilder b;
  fb::Ref name = b.CreateString("hello");
  fb::Ref longs = b.CreateInt64Vector({1, -2, 3});
  b.StartTable();
  b.AddInt16(0, 12);
  b.AddRef(2, name);
  b.AddInt64(3, -77);
  b.AddBool(4, true);
  b.AddRef(5, longs);
  fb::Ref inner = b.EndTable();
  b.StartTable();
  b.AddRef(1, inner);
  std::string bytes = b.Finish(b.EndTable());
  EXPECT_EQ(bytes.size() % 8, 0u);

  fb::FlatSource src{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "buf", 0};
  fb::FlatTable root = fb::FlatTable::Root(src);
  EXPECT_FALSE(root.GetTable(0).valid());
  fb::FlatTable t = root.GetTable(1);
  ASSERT_TRUE(t.valid());
  EXPECT_EQ(t.GetInt16(0, 5), 12);
  EXPECT_EQ(t.GetInt32(1, 99), 99);  // absent: default
  EXPECT_EQ(t.GetString(2), "hello");
  EXPECT_EQ(t.GetInt64(3, 0), -77);
  EXPECT_TRUE(t.GetBool(4, false));
  fb::FlatVector v = t.GetVector(5);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v.Int64At(0), 1);
  EXPECT_EQ(v.Int64At(1), -2);
  EXPECT_EQ(v.Int64At(2), 3);
  EXPECT_EQ(t.GetVector(9).size(), 0u);
  EXPECT_EQ(t.GetString(9), "");
}

TEST(FlatBuffer, OutOfBoundsRootThrowsCorruptWithOffset) {
  std::string bytes("\xF0\x00\x00\x00", 4);
  fb::FlatSource src{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "meta.bin", 100};
  ExpectError([&] { fb::FlatTable::Root(src); }, ErrorKind::kCorrupt, {"meta.bin", "byte 340"});
}

// ------------------------------------------------------------------ round trips

TEST(Ipc, FileRoundTripEveryTypeWithNulls) {
  RecordBatchPtr batch = AllTypesBatch();
  std::string bytes = WriteIpcFile(*batch->schema(), {batch, batch->Slice(1, 2)});
  auto reader = ReadIpc(bytes, "all.arrow");
  ExpectSchemasIdentical(*batch->schema(), *reader->schema());
  auto batches = ReadAll(*reader);
  ASSERT_EQ(batches.size(), 2u);
  ExpectBatchesEqual(*batch, *batches[0]);
  ExpectBatchesEqual(*batch->Slice(1, 2), *batches[1]);
}

TEST(Ipc, StreamRoundTripEveryTypeWithNulls) {
  RecordBatchPtr batch = AllTypesBatch();
  std::string bytes = WriteIpcStream(*batch->schema(), {batch, batch->Slice(0, 1), batch});
  auto reader = ReadIpc(bytes, "all.arrows");
  ExpectSchemasIdentical(*batch->schema(), *reader->schema());
  auto batches = ReadAll(*reader);
  ASSERT_EQ(batches.size(), 3u);
  ExpectBatchesEqual(*batch, *batches[0]);
  ExpectBatchesEqual(*batch->Slice(0, 1), *batches[1]);
  ExpectBatchesEqual(*batch, *batches[2]);
  EXPECT_EQ(reader->Next(), nullptr);
}

// A field with a key type (Field::dictionary_index) is written dictionary-encoded and read
// back as its values with the key type on the field again.
SchemaPtr DictionarySchema(TypePtr keys) {
  auto colour = std::make_shared<Field>(*Field::Make("colour", DataType::Utf8()));
  colour->dictionary_index = std::move(keys);
  return std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("id", DataType::Int32()), colour});
}

RecordBatchPtr ColourBatch(const SchemaPtr& schema, int rows, int distinct) {
  FixedWidthBuilder<int32_t> ids(DataType::Int32());
  BinaryBuilder colours(DataType::Utf8());
  for (int i = 0; i < rows; ++i) {
    ids.Append(i);
    if (i % 5 == 4) colours.AppendNull();
    else colours.Append("c" + std::to_string(i % distinct));
  }
  return RecordBatch::Make(schema, {ids.Finish(), colours.Finish()});
}

// Counts the messages of a stream by header type.
int CountMessages(const std::string& stream, ipc::MessageType type) {
  int n = 0;
  for (size_t pos = 0; pos + 8 <= stream.size();) {
    int32_t length;
    std::memcpy(&length, stream.data() + pos + 4, 4);
    if (length == 0) break;
    const fb::FlatSource source{reinterpret_cast<const uint8_t*>(stream.data()) + pos + 8, size_t(length), "s",
                                int64_t(pos + 8)};
    auto root = fb::FlatTable::Root(source);  // keeps a reference to the source
    if (ipc::MessageType(root.GetUInt8(ipc::kMessageHeaderType, 0)) == type) ++n;
    pos += 8 + size_t(length) + size_t(root.GetInt64(ipc::kMessageBodyLength, 0));
  }
  return n;
}

TEST(Ipc, DictionaryFieldsAreWrittenDictionaryEncoded) {
  SchemaPtr schema = DictionarySchema(DataType::Int8());
  RecordBatchPtr a = ColourBatch(schema, 40, 3), b = ColourBatch(schema, 20, 7);
  const std::string stream = WriteIpcStream(*schema, {a, b});
  EXPECT_EQ(CountMessages(stream, ipc::MessageType::kDictionaryBatch), 2) << "one dictionary per batch";
  auto reader = ReadIpc(stream, "d.arrows");
  ASSERT_TRUE(reader->schema()->field(1)->dictionary_index);
  EXPECT_EQ(reader->schema()->field(1)->dictionary_index->ToString(), "int8");
  auto batches = ReadAll(*reader);
  ASSERT_EQ(batches.size(), 2u);
  ExpectBatchesEqual(*a, *batches[0]);
  ExpectBatchesEqual(*b, *batches[1]);

  // A file keeps one dictionary for all its rows (written as one batch).
  auto file = ReadIpc(WriteIpcFile(*schema, {a, b}), "d.arrow");
  ASSERT_TRUE(file->schema()->field(1)->dictionary_index);
  auto rows = ReadAll(*file);
  ASSERT_EQ(rows.size(), 1u);
  ExpectBatchesEqual(*RecordBatch::Concatenate(schema, {a, b}), *rows[0]);
}

// More distinct values than the keys index: a stream splits the batch, each part with its
// own dictionary; a file writes the values plain.
TEST(Ipc, DictionaryFieldsBeyondTheirKeysRangeStillWrite) {
  SchemaPtr schema = DictionarySchema(DataType::Int8());
  RecordBatchPtr batch = ColourBatch(schema, 300, 300);  // 240 distinct values; 120 in each half
  const std::string stream = WriteIpcStream(*schema, {batch});
  EXPECT_EQ(CountMessages(stream, ipc::MessageType::kDictionaryBatch), 2);
  EXPECT_EQ(CountMessages(stream, ipc::MessageType::kRecordBatch), 2);
  auto reader = ReadIpc(stream, "d.arrows");
  ExpectBatchesEqual(*batch, *RecordBatch::Concatenate(schema, ReadAll(*reader)));

  auto file = ReadIpc(WriteIpcFile(*schema, {batch}), "d.arrow");
  EXPECT_FALSE(file->schema()->field(1)->dictionary_index);
  ExpectBatchesEqual(*batch, *ReadAll(*file)[0]);

  // The same below a struct: the file's schema loses the encoding at any depth.
  auto wrapped = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("s", DataType::Struct(schema->fields()), false)});
  auto data = std::make_shared<ArrayData>();
  data->type = wrapped->field(0)->type;
  data->length = batch->num_rows();
  data->buffers = {nullptr};
  data->children = batch->columns();
  RecordBatchPtr nested = RecordBatch::Make(wrapped, {data});
  auto nested_file = ReadIpc(WriteIpcFile(*wrapped, {nested}), "n.arrow");
  EXPECT_FALSE(nested_file->schema()->field(0)->type->child(1)->dictionary_index);
  ExpectBatchesEqual(*nested, *ReadAll(*nested_file)[0]);
  auto nested_stream = ReadIpc(WriteIpcStream(*wrapped, {nested}), "n.arrows");
  EXPECT_TRUE(nested_stream->schema()->field(0)->type->child(1)->dictionary_index);
  ExpectBatchesEqual(*nested, *RecordBatch::Concatenate(wrapped, ReadAll(*nested_stream)));
}

TEST(Ipc, NoBatchesAndEmptyBatch) {
  RecordBatchPtr batch = AllTypesBatch();
  for (bool file : {false, true}) {
    auto empty = batch->Slice(0, 0);
    std::string bytes = file ? WriteIpcFile(*batch->schema(), {}) : WriteIpcStream(*batch->schema(), {});
    auto reader = ReadIpc(bytes, "none");
    EXPECT_EQ(reader->schema()->num_fields(), batch->num_columns());
    EXPECT_EQ(reader->Next(), nullptr);
    bytes = file ? WriteIpcFile(*batch->schema(), {empty}) : WriteIpcStream(*batch->schema(), {empty});
    reader = ReadIpc(bytes, "empty");
    auto got = reader->Next();
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->num_rows(), 0);
    ExpectBatchesEqual(*empty, *got);
  }
}

TEST(Ipc, StreamLayoutHasContinuationMarkersAndEndMarker) {
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("x", DataType::Int32())});
  auto batch = RecordBatch::Make(schema, {MakeArray(DataType::Int32(), {testing::I(7, DataType::Int32())})});
  std::string bytes = WriteIpcStream(*schema, {batch});
  EXPECT_EQ(U32At(bytes, 0), 0xFFFFFFFFu);
  uint32_t schema_len = U32At(bytes, 4);
  EXPECT_EQ(schema_len % 8, 0u);
  size_t batch_pos = 8 + schema_len;
  EXPECT_EQ(U32At(bytes, batch_pos), 0xFFFFFFFFu);
  EXPECT_EQ(bytes.size() % 8, 0u);
  EXPECT_EQ(bytes.substr(bytes.size() - 8), std::string("\xFF\xFF\xFF\xFF\0\0\0\0", 8));
  // The body: an empty validity buffer and one int32 padded to 8 bytes.
  uint32_t batch_meta = U32At(bytes, batch_pos + 4);
  EXPECT_EQ(bytes.size(), batch_pos + 8 + batch_meta + 8 + 8);
  EXPECT_EQ(U32At(bytes, batch_pos + 8 + batch_meta), 7u);
}

TEST(Ipc, FileLayoutHasMagicPaddingAndFooter) {
  RecordBatchPtr batch = AllTypesBatch();
  std::string bytes = WriteIpcFile(*batch->schema(), {batch});
  EXPECT_EQ(bytes.substr(0, 8), std::string("ARROW1\0\0", 8));
  EXPECT_EQ(bytes.substr(bytes.size() - 6), "ARROW1");
  int32_t footer_len;
  std::memcpy(&footer_len, bytes.data() + bytes.size() - 10, 4);
  size_t footer_start = bytes.size() - 10 - size_t(footer_len);
  EXPECT_EQ(footer_start % 8, 0u);
  // The stream's end marker sits just before the footer.
  EXPECT_EQ(bytes.substr(footer_start - 8, 8), std::string("\xFF\xFF\xFF\xFF\0\0\0\0", 8));
  // The schema message follows the magic.
  EXPECT_EQ(U32At(bytes, 8), 0xFFFFFFFFu);
}

TEST(Ipc, StreamWriterWritesToOstreamLikeWriteIpcStream) {
  RecordBatchPtr batch = AllTypesBatch();
  std::ostringstream out;
  IpcStreamWriter writer(out);
  writer.WriteSchema(*batch->schema());
  writer.WriteBatch(*batch);
  writer.Close();
  writer.Close();  // idempotent
  EXPECT_EQ(out.str(), WriteIpcStream(*batch->schema(), {batch}));
  EXPECT_EQ(writer.bytes_written(), int64_t(out.str().size()));
}

TEST(Ipc, StreamWriterRejectsMisuse) {
  RecordBatchPtr batch = AllTypesBatch();
  std::ostringstream out;
  IpcStreamWriter writer(out);
  ExpectError([&] { writer.WriteBatch(*batch); }, ErrorKind::kInvalidArgument, {"before WriteSchema"});
  writer.WriteSchema(*batch->schema());
  ExpectError([&] { writer.WriteSchema(*batch->schema()); }, ErrorKind::kInvalidArgument, {"twice"});
  auto other = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("x", DataType::Int32())});
  auto wrong = RecordBatch::Make(other, {MakeArray(DataType::Int32(), {testing::I(1, DataType::Int32())})});
  ExpectError([&] { writer.WriteBatch(*wrong); }, ErrorKind::kInvalidArgument, {"columns"});
  writer.Close();
  ExpectError([&] { writer.WriteBatch(*batch); }, ErrorKind::kInvalidArgument, {"after Close"});
}

TEST(Ipc, ColumnsWithoutNullsReadBackWithoutValidity) {
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("s", DataType::Utf8())});
  auto batch = RecordBatch::Make(schema, {MakeArray(DataType::Utf8(), {testing::Str("a"), testing::Str("bc")})});
  auto got = ReadIpc(WriteIpcStream(*schema, {batch}), "s")->Next();
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->column(0)->buffers[0], nullptr);
  EXPECT_EQ(got->column(0)->null_count, 0);
  EXPECT_EQ(got->column(0)->GetView(1), "bc");
}

// A batch's body is written from the batch's own buffers, not from a copy of them, and
// the message keeps them alive after the batch is gone.
TEST(Ipc, BatchBodyPointsIntoTheBatchBuffersAndHoldsThem) {
  auto schema = std::make_shared<Schema>(
      std::vector<FieldPtr>{Field::Make("x", DataType::Int64()), Field::Make("s", DataType::Utf8())});
  auto batch = RecordBatch::Make(schema, {MakeArray(DataType::Int64(), {testing::I(5), testing::I(6), testing::I(7)}),
                                          MakeArray(DataType::Utf8(), {testing::Str("ab"), testing::Str("cde"), testing::Str("")})});
  const std::string expected = ipc::FrameMessage(ipc::EncodeBatch(*schema, *batch));
  ipc::EncodedMessage message = ipc::EncodeBatch(*schema, *batch);
  const auto* values = reinterpret_cast<const char*>(batch->column(0)->buffers[1]->data());
  const auto* bytes = reinterpret_cast<const char*>(batch->column(1)->buffers[2]->data());
  auto part_at = [&](const char* data) {
    return std::count_if(message.body.begin(), message.body.end(), [&](std::string_view p) { return p.data() == data; });
  };
  EXPECT_EQ(part_at(values), 1);
  EXPECT_EQ(part_at(bytes), 1);
  size_t total = 0;
  for (std::string_view part : message.body) total += part.size();
  EXPECT_EQ(total, message.body_size);
  // int64 values 24, offsets 16, bytes 5 padded to 8; both validity buffers are empty.
  EXPECT_EQ(message.body_size, 48u);
  batch.reset();
  EXPECT_EQ(ipc::FrameMessage(message), expected);
}

// ------------------------------------------------------------------ other writers' layouts

struct HandBatch {
  std::vector<ipc::FieldNode> nodes;
  std::vector<ipc::BufferSpec> buffers;
  std::string body;
  void Add(const std::string& bytes) {
    buffers.push_back({int64_t(body.size()), int64_t(bytes.size())});
    body += bytes;
    body.append((8 - body.size() % 8) % 8, '\0');
  }
};

template <typename T>
std::string Bytes(std::vector<T> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

ipc::EncodedMessage HandMessage(const HandBatch& batch, int64_t rows,
                                std::optional<ipc::CompressionCodec> codec) {
  return ipc::EncodedMessage::Of(
      ipc::EncodeRecordBatchMessage(rows, batch.nodes, batch.buffers, int64_t(batch.body.size()), codec), batch.body);
}

std::string HandStream(const Schema& schema, const HandBatch& batch, int64_t rows,
                       std::optional<ipc::CompressionCodec> codec = std::nullopt) {
  return ipc::FrameMessage(ipc::EncodeSchema(schema)) + ipc::FrameMessage(HandMessage(batch, rows, codec)) +
         ipc::EndOfStream();
}

// A mapped input drops each message's pages once decoded (the CLI's IpcRelease): the
// released ranges tile the messages in order, and batches already returned hold copies,
// so scribbling over released bytes changes nothing that was read.
TEST(Ipc, ReleasedMessagesAreNoLongerRead) {
  SchemaPtr schema = DictionarySchema(DataType::Int8());
  RecordBatchPtr a = ColourBatch(schema, 40, 3), b = ColourBatch(schema, 20, 7);
  for (bool file : {false, true}) {
    SCOPED_TRACE(file ? "file" : "stream");
    auto bytes = std::make_shared<std::string>(file ? WriteIpcFile(*schema, {a, b}) : WriteIpcStream(*schema, {a, b}));
    std::vector<std::pair<int64_t, int64_t>> released;
    auto scribble = [&](int64_t offset, int64_t length) {
      released.emplace_back(offset, length);
      std::memset(bytes->data() + offset, 0xAB, size_t(length));
    };
    auto reader = ReadIpc(bytes, *bytes, "d.arrows", scribble);
    const size_t at_open = released.size();  // a file's dictionaries are read when it opens
    EXPECT_EQ(at_open, file ? 1u : 0u);
    std::vector<RecordBatchPtr> batches = ReadAll(*reader);
    if (file) {
      ASSERT_EQ(batches.size(), 1u);
      ExpectBatchesEqual(*RecordBatch::Concatenate(schema, {a, b}), *batches[0]);
      EXPECT_EQ(released.size(), 2u);  // the dictionary, the batch
    } else {
      ASSERT_EQ(batches.size(), 2u);
      ExpectBatchesEqual(*a, *batches[0]);
      ExpectBatchesEqual(*b, *batches[1]);
      ASSERT_EQ(released.size(), 4u);  // dictionary, batch, dictionary, batch
      for (size_t k = 1; k < released.size(); ++k)
        EXPECT_EQ(released[k].first, released[k - 1].first + released[k - 1].second) << "message " << k;
    }
    for (auto [offset, length] : released) EXPECT_GT(length, 0);
  }
}

// The same layout WriteIpcFile produces, around a hand-built batch.
std::string HandFile(const Schema& schema, const HandBatch& batch, int64_t rows,
                     std::optional<ipc::CompressionCodec> codec) {
  std::string out("ARROW1\0\0", 8);
  out += ipc::FrameMessage(ipc::EncodeSchema(schema));
  ipc::EncodedMessage message = HandMessage(batch, rows, codec);
  ipc::Block block{int64_t(out.size()), ipc::FramedMetadataSize(message), 0, int64_t(message.body.size())};
  out += ipc::FrameMessage(message) + ipc::EndOfStream();
  std::string footer = ipc::EncodeFooter(schema, {}, {block});
  int32_t footer_size = int32_t(footer.size());
  out += footer + std::string(reinterpret_cast<const char*>(&footer_size), 4) + "ARROW1";
  return out;
}

TEST(Ipc, ReadsSlicedOffsetsLongChildrenAndUnneededValidity) {
  TypePtr list = DataType::List(Field::Make("item", DataType::Int32()));
  TypePtr st = DataType::Struct({Field::Make("a", DataType::Int16())});
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("s", DataType::Utf8()), Field::Make("l", list), Field::Make("st", st)});
  HandBatch hb;
  // s: offsets start at 3 (a slice of a larger array); a validity buffer although no nulls.
  hb.nodes.push_back({2, 0});
  hb.Add("\x00");
  hb.Add(Bytes<int32_t>({3, 5, 6}));
  hb.Add("xxxabcd");
  // l: [[1], null] with offsets [1, 2, 2], the item child holds 5 values.
  hb.nodes.push_back({2, 1});
  hb.Add("\x01");
  hb.Add(Bytes<int32_t>({1, 2, 2}));
  hb.nodes.push_back({5, 0});
  hb.Add("");
  hb.Add(Bytes<int32_t>({9, 1, 9, 9, 9}));
  // st: a child longer than the struct.
  hb.nodes.push_back({2, 0});
  hb.Add("");
  hb.nodes.push_back({4, 0});
  hb.Add("");
  hb.Add(Bytes<int16_t>({5, 6, 7, 8}));

  auto got = ReadIpc(HandStream(*schema, hb, 2), "hand")->Next();
  ASSERT_NE(got, nullptr);
  const ArrayData& s = *got->column(0);
  EXPECT_EQ(s.buffers[0], nullptr);
  EXPECT_EQ(s.offset(0), 0);
  EXPECT_EQ(s.GetView(0), "ab");
  EXPECT_EQ(s.GetView(1), "c");
  const ArrayData& l = *got->column(1);
  EXPECT_EQ(l.null_count, 1);
  EXPECT_EQ(l.offset(0), 0);
  EXPECT_EQ(l.offset(1), 1);
  EXPECT_EQ(l.offset(2), 1);
  ASSERT_EQ(l.child(0)->length, 1);
  EXPECT_EQ(l.child(0)->values<int32_t>()[0], 1);
  const ArrayData& stc = *got->column(2);
  ASSERT_EQ(stc.child(0)->length, 2);
  EXPECT_EQ(stc.child(0)->values<int16_t>()[1], 6);
}

TEST(Ipc, ReadsLegacyFramingWithoutContinuationMarker) {
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("x", DataType::Int64())});
  auto batch = RecordBatch::Make(schema, {MakeArray(DataType::Int64(), {testing::I(5), testing::I(6)})});
  auto legacy = [](const ipc::EncodedMessage& m) {
    std::string meta = m.metadata;
    meta.append((8 - (meta.size() + 4) % 8) % 8, '\0');
    uint32_t len = uint32_t(meta.size());
    return std::string(reinterpret_cast<const char*>(&len), 4) + meta + m.Body();
  };
  std::string bytes = legacy(ipc::EncodeSchema(*schema)) + legacy(ipc::EncodeBatch(*schema, *batch)) +
                      std::string(4, '\0');
  auto reader = ReadIpc(bytes, "legacy");
  auto got = reader->Next();
  ASSERT_NE(got, nullptr);
  ExpectBatchesEqual(*batch, *got);
  EXPECT_EQ(reader->Next(), nullptr);
}

// A source handing out at most `step` bytes per read, counting what it gave.
struct Trickle {
  std::string bytes;
  size_t step;
  size_t given = 0;
  IpcReadSome Reader() {
    return [this](char* out, size_t n) {
      const size_t k = std::min({n, step, bytes.size() - given});
      std::memcpy(out, bytes.data() + given, k);
      given += k;
      return k;
    };
  }
};

// A stream read as it arrives (a pipe) decodes as the whole bytes do, a message at a time:
// after the first batch, the later batches have not been read yet.
TEST(Ipc, StreamsArriveAMessageAtATime) {
  RecordBatchPtr batch = AllTypesBatch();
  SchemaPtr schema = DictionarySchema(DataType::Int8());
  RecordBatchPtr a = ColourBatch(schema, 40, 3), b = ColourBatch(schema, 20, 7);
  for (size_t step : {size_t(3), size_t(1) << 20}) {
    SCOPED_TRACE(step);
    Trickle plain{WriteIpcStream(*batch->schema(), {batch, batch->Slice(1, 2), batch}), step};
    auto reader = ReadIpcStream(plain.Reader(), "pipe");
    ExpectSchemasIdentical(*batch->schema(), *reader->schema());
    ExpectBatchesEqual(*batch, *reader->Next());
    if (step == 3) {  // read up to the first batch's end (and a short read past it), no further
      const size_t first_batch_end = WriteIpcStream(*batch->schema(), {batch}).size() - 8;
      EXPECT_LT(plain.given, first_batch_end + step);
    }
    ExpectBatchesEqual(*batch->Slice(1, 2), *reader->Next());
    ExpectBatchesEqual(*batch, *reader->Next());
    EXPECT_EQ(reader->Next(), nullptr);
    EXPECT_EQ(plain.given, plain.bytes.size());

    Trickle dictionaries{WriteIpcStream(*schema, {a, b}), step};
    std::vector<RecordBatchPtr> got = ReadAll(*ReadIpcStream(dictionaries.Reader(), "pipe"));
    ASSERT_EQ(got.size(), 2u);
    ExpectBatchesEqual(*a, *got[0]);
    ExpectBatchesEqual(*b, *got[1]);

    // The file format keeps its footer last: it is read whole, then decoded.
    Trickle file{WriteIpcFile(*batch->schema(), {batch}), step};
    got = ReadAll(*ReadIpcStream(file.Reader(), "pipe"));
    ASSERT_EQ(got.size(), 1u);
    ExpectBatchesEqual(*batch, *got[0]);
  }
}

TEST(Ipc, TruncatedStreamsNameTheOffsetAsWholeInputDoes) {
  RecordBatchPtr batch = AllTypesBatch();
  std::string bytes = WriteIpcStream(*batch->schema(), {batch});
  uint32_t schema_len = U32At(bytes, 4);
  Trickle cut{bytes.substr(0, 8 + schema_len + 20), 5};
  auto reader = ReadIpcStream(cut.Reader(), "cut.arrows");
  ExpectError([&] { reader->Next(); }, ErrorKind::kCorrupt, {"cut.arrows", fmt::format("byte {}", 8 + schema_len)});
  Trickle tiny{bytes.substr(0, 6), 5};
  ExpectError([&] { ReadIpcStream(tiny.Reader(), "tiny"); }, ErrorKind::kCorrupt, {"tiny", "byte 4"});
  Trickle nothing{"", 5};
  ExpectError([&] { ReadIpcStream(nothing.Reader(), "nothing"); }, ErrorKind::kCorrupt, {"nothing", "empty"});
}

// ------------------------------------------------------------------ errors

TEST(Ipc, TruncatedInputNamesSourceAndOffset) {
  RecordBatchPtr batch = AllTypesBatch();
  std::string bytes = WriteIpcStream(*batch->schema(), {batch});
  uint32_t schema_len = U32At(bytes, 4);
  std::string cut = bytes.substr(0, 8 + schema_len + 20);
  auto reader = ReadIpc(cut, "cut.arrows");
  ExpectError([&] { reader->Next(); }, ErrorKind::kCorrupt,
              {"cut.arrows", fmt::format("byte {}", 8 + schema_len)});
  ExpectError([&] { ReadIpc(bytes.substr(0, 6), "tiny"); }, ErrorKind::kCorrupt, {"tiny", "byte 4"});
  ExpectError([&] { ReadIpc("", "nothing"); }, ErrorKind::kCorrupt, {"nothing", "empty"});
  std::string file = WriteIpcFile(*batch->schema(), {batch});
  ExpectError([&] { ReadIpc(file.substr(0, file.size() - 3), "f.arrow"); }, ErrorKind::kCorrupt,
              {"f.arrow", "ARROW1"});
}

// Every single-byte corruption either still decodes or throws lancelet::Error (run under
// ASan/UBSan this also proves no out-of-bounds read).
TEST(Ipc, CorruptedBytesThrowErrorsOnly) {
  RecordBatchPtr all = AllTypesBatch();
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> columns;
  for (const char* name : {"i32", "utf8", "fsl", "list_of_struct", "ts_us"}) {
    fields.push_back(all->schema()->field(size_t(all->schema()->FieldIndex(name))));
    columns.push_back(all->column(name));
  }
  auto batch = RecordBatch::Make(std::make_shared<Schema>(fields), columns);
  for (bool file : {false, true}) {
    std::string good = file ? WriteIpcFile(*batch->schema(), {batch}) : WriteIpcStream(*batch->schema(), {batch});
    int errors = 0;
    for (size_t pos = 0; pos < good.size(); ++pos) {
      for (uint8_t flip : {0xFF}) {
        std::string bad = good;
        bad[pos] = char(uint8_t(bad[pos]) ^ flip);
        try {
          auto reader = ReadIpc(bad, "bad");
          while (reader->Next()) {
          }
        } catch (const Error&) {
          ++errors;
        }
      }
    }
    EXPECT_GT(errors, 0);
  }
}

TEST(Ipc, BufferOutsideBodyIsCorrupt) {
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("x", DataType::Int32())});
  HandBatch hb;
  hb.nodes.push_back({4, 0});
  hb.Add("");
  hb.Add(Bytes<int32_t>({1, 2}));  // 8 bytes, 16 needed
  ExpectError([&] { ReadIpc(HandStream(*schema, hb, 4), "short")->Next(); }, ErrorKind::kCorrupt,
              {"short", "'x'", "values buffer has 8 bytes, 16 needed"});
  hb.buffers[1] = {0, 64};
  ExpectError([&] { ReadIpc(HandStream(*schema, hb, 4), "out")->Next(); }, ErrorKind::kCorrupt,
              {"out", "outside the 8-byte body"});
}

// ------------------------------------------------------------------ compressed bodies

std::string Int64Prefix(int64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); }

// A body buffer in the BodyCompression BUFFER layout: uncompressed length, then one frame.
std::string Compress(ipc::CompressionCodec codec, const std::string& raw) {
  std::string frame;
  if (codec == ipc::CompressionCodec::kZstd) {
    frame.resize(ZSTD_compressBound(raw.size()));
    size_t n = ZSTD_compress(frame.data(), frame.size(), raw.data(), raw.size(), 3);
    EXPECT_FALSE(ZSTD_isError(n));
    frame.resize(n);
  } else {
    frame.resize(LZ4F_compressFrameBound(raw.size(), nullptr));
    size_t n = LZ4F_compressFrame(frame.data(), frame.size(), raw.data(), raw.size(), nullptr);
    EXPECT_FALSE(LZ4F_isError(n));
    frame.resize(n);
  }
  return Int64Prefix(int64_t(raw.size())) + frame;
}

// The -1 prefix: the bytes follow uncompressed.
std::string RawPrefixed(const std::string& raw) { return Int64Prefix(-1) + raw; }

const ipc::CompressionCodec kCodecs[] = {ipc::CompressionCodec::kZstd, ipc::CompressionCodec::kLz4Frame};

SchemaPtr XsSchema() {
  return std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("x", DataType::Int32(), true),
                                                        Field::Make("s", DataType::Utf8(), false)});
}

// x = [1, null, 3, 4, 5], s = ["a", "bb", "", "ccc", ""]. Mixes compressed buffers, a raw
// (-1) one and an empty one (no prefix at all).
HandBatch XsBatch(ipc::CompressionCodec codec) {
  HandBatch hb;
  hb.nodes.push_back({5, 1});
  hb.Add(Compress(codec, "\x1D"));
  hb.Add(Compress(codec, Bytes<int32_t>({1, 0, 3, 4, 5})));
  hb.nodes.push_back({5, 0});
  hb.Add("");
  hb.Add(RawPrefixed(Bytes<int32_t>({0, 1, 3, 3, 6, 6})));
  hb.Add(Compress(codec, "abbccc"));
  return hb;
}

void ExpectXs(const RecordBatch& got) {
  ASSERT_EQ(got.num_rows(), 5);
  const ArrayData& x = *got.column(0);
  EXPECT_EQ(x.null_count, 1);
  EXPECT_TRUE(x.IsNull(1));
  EXPECT_EQ((std::vector<int32_t>(x.values<int32_t>(), x.values<int32_t>() + 5)),
            (std::vector<int32_t>{1, 0, 3, 4, 5}));
  const ArrayData& s = *got.column(1);
  EXPECT_EQ(s.buffers[0], nullptr);
  std::vector<std::string> strings;
  for (int64_t i = 0; i < 5; ++i) strings.emplace_back(s.GetView(i));
  EXPECT_EQ(strings, (std::vector<std::string>{"a", "bb", "", "ccc", ""}));
}

// Absolute offset of the body in a HandStream.
size_t BodyStart(const std::string& stream, const HandBatch& hb) { return stream.size() - 8 - hb.body.size(); }

TEST(IpcCompression, ReadsZstdAndLz4FrameStreamsAndFiles) {
  for (auto codec : kCodecs) {
    SCOPED_TRACE(ipc::CodecName(codec));
    HandBatch hb = XsBatch(codec);
    for (bool file : {false, true}) {
      std::string bytes = file ? HandFile(*XsSchema(), hb, 5, codec) : HandStream(*XsSchema(), hb, 5, codec);
      auto reader = ReadIpc(bytes, "zipped");
      auto got = reader->Next();
      ASSERT_NE(got, nullptr);
      ExpectXs(*got);
      EXPECT_EQ(reader->Next(), nullptr);
    }
  }
}

TEST(IpcCompression, RawBuffersUnderACodecReadAsIs) {
  // What lance writes for deletion files: ZSTD declared, every buffer stored raw.
  HandBatch hb;
  hb.nodes.push_back({5, 1});
  hb.Add(RawPrefixed("\x1D"));
  hb.Add(RawPrefixed(Bytes<int32_t>({1, 0, 3, 4, 5})));
  hb.nodes.push_back({5, 0});
  hb.Add("");
  hb.Add(RawPrefixed(Bytes<int32_t>({0, 1, 3, 3, 6, 6})));
  hb.Add(RawPrefixed("abbccc"));
  auto got = ReadIpc(HandStream(*XsSchema(), hb, 5, ipc::CompressionCodec::kZstd), "raw")->Next();
  ASSERT_NE(got, nullptr);
  ExpectXs(*got);
}

TEST(IpcCompression, ZeroLengthPrefixAndEmptyBatch) {
  for (auto codec : kCodecs) {
    SCOPED_TRACE(ipc::CodecName(codec));
    HandBatch hb;
    hb.nodes.push_back({0, 0});
    hb.Add(Int64Prefix(0));  // declared empty: nothing follows
    hb.Add(Compress(codec, ""));
    hb.nodes.push_back({0, 0});
    hb.Add("");
    hb.Add(Compress(codec, Bytes<int32_t>({0})));
    hb.Add("");
    auto got = ReadIpc(HandStream(*XsSchema(), hb, 0, codec), "empty")->Next();
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->num_rows(), 0);
    EXPECT_EQ(got->column(1)->offset(0), 0);
  }
}

TEST(IpcCompression, LargeBufferDecodesPastTheFirstOutputChunk) {
  // 8 MB of int64 that compress to a few KB: the output must grow many times.
  const int64_t rows = 1 << 20;
  std::vector<int64_t> values(rows);
  for (int64_t i = 0; i < rows; ++i) values[size_t(i)] = i % 7;
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("v", DataType::Int64())});
  for (auto codec : kCodecs) {
    SCOPED_TRACE(ipc::CodecName(codec));
    HandBatch hb;
    hb.nodes.push_back({rows, 0});
    hb.Add("");
    hb.Add(Compress(codec, Bytes<int64_t>(values)));
    EXPECT_LT(hb.body.size(), 200'000u);
    auto got = ReadIpc(HandStream(*schema, hb, rows, codec), "big")->Next();
    ASSERT_NE(got, nullptr);
    const int64_t* v = got->column(0)->values<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(v, v + rows), values);
  }
}

// XsBatch with the x values buffer (buffer 1) replaced.
HandBatch XsBatchWithValues(ipc::CompressionCodec codec, const std::string& values_buffer) {
  HandBatch hb;
  HandBatch good = XsBatch(codec);
  hb.nodes = good.nodes;
  std::string validity = Compress(codec, "\x1D");
  hb.Add(validity);
  hb.Add(values_buffer);
  hb.Add("");
  hb.Add(RawPrefixed(Bytes<int32_t>({0, 1, 3, 3, 6, 6})));
  hb.Add(Compress(codec, "abbccc"));
  return hb;
}

// Expects a Corrupt error naming the source, column x and `what`, and, unless
// at_in_buffer < 0, the absolute byte offset of the values buffer's start + at_in_buffer.
void ExpectValuesError(ipc::CompressionCodec codec, const std::string& values_buffer,
                       const std::string& what, int64_t at_in_buffer) {
  HandBatch hb = XsBatchWithValues(codec, values_buffer);
  std::string bytes = HandStream(*XsSchema(), hb, 5, codec);
  std::vector<std::string> parts{"zipped.arrows", "field 'x'", what};
  if (at_in_buffer >= 0)
    parts.push_back(fmt::format("(at byte {})", BodyStart(bytes, hb) + size_t(hb.buffers[1].offset + at_in_buffer)));
  ExpectError([&] { ReadIpc(bytes, "zipped.arrows")->Next(); }, ErrorKind::kCorrupt, parts);
}

TEST(IpcCompression, CorruptFrameNamesSourceAndOffset) {
  std::string raw = Bytes<int32_t>({1, 0, 3, 4, 5});
  for (auto codec : kCodecs) {
    SCOPED_TRACE(ipc::CodecName(codec));
    std::string bad = Compress(codec, raw);
    bad[8] = char(uint8_t(bad[8]) ^ 0xFF);  // the frame's magic number
    ExpectValuesError(codec, bad,
                      std::string(ipc::CodecName(codec)) + " buffer 1: " +
                          (codec == ipc::CompressionCodec::kZstd ? "corrupt zstd data: Unknown frame descriptor"
                                                                 : "corrupt LZ4 frame data: ERROR_frameType_unknown"),
                      8);
  }
}

TEST(IpcCompression, LengthMismatchAndTruncationAreCorrupt) {
  std::string raw = Bytes<int32_t>({1, 0, 3, 4, 5});
  for (auto codec : kCodecs) {
    SCOPED_TRACE(ipc::CodecName(codec));
    std::string name = codec == ipc::CompressionCodec::kZstd ? "zstd" : "LZ4 frame";
    std::string good = Compress(codec, raw);
    int64_t frame_end = int64_t(good.size());
    ExpectValuesError(codec, Int64Prefix(21) + good.substr(8),
                      name + " data decodes to 20 bytes, its prefix declares 21", frame_end);
    // Output stops one byte past the declared 19; the decoder has not reached the frame end.
    ExpectValuesError(codec, Int64Prefix(19) + good.substr(8),
                      name + " data decodes to more than the 19 bytes its prefix declares", -1);
    std::string cut = good.substr(0, good.size() - 3);
    ExpectValuesError(codec, cut, name + " data ends inside a frame", int64_t(cut.size()));
  }
}

TEST(IpcCompression, BadPrefixIsCorrupt) {
  for (auto codec : kCodecs) {
    SCOPED_TRACE(ipc::CodecName(codec));
    ExpectValuesError(codec, std::string("\x14\0\0\0", 4), "compressed buffer of 4 bytes is shorter than its 8-byte length prefix", 0);
    ExpectValuesError(codec, Int64Prefix(-2) + Bytes<int32_t>({1, 0, 3, 4, 5}),
                      "negative uncompressed length -2 in the buffer prefix", 0);
    // A raw buffer that is too short fails like an uncompressed one.
    ExpectValuesError(codec, RawPrefixed(Bytes<int32_t>({1, 0})), "values buffer has 8 bytes, 20 needed", 0);
  }
}

// _deletions/0-1-*.arrow written by lance 12.0.0 (via tests/oracle: 200 int64 rows,
// delete "c_int64 % 17 = 3 OR c_int64 IS NULL"): ZSTD body, a raw (-1) 3-byte validity
// buffer and a really compressed row_id buffer (prefix 96, then a 63-byte zstd frame).
const char* kLanceDeletionFileHex =
    "4152524f57310000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000ffffffff780000001000000000000a000c000a0009000400"
    "0a00000010000000000104000800080000000400080000000400000001000000140000001000160010000000"
    "0f0004000000080010000000180000001c000000000000021800000000000600080004000600000020000000"
    "0000000006000000726f775f69640000ffffffffb8000000100000000c00140012001100040008000c000000"
    "1c000000c000000000000000000304000c001c0010000c00080004000c0000005c0000002c00000010000000"
    "1800000000000000000000000100000018000000000000000000000000000000000000000200000000000000"
    "000000000b000000000000004000000000000000470000000000000000000600080007000600000000000001"
    "0000000000000000000000000000000000000000000000000000000000000000ffffffffffffffffffffff00"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000600000000000000028b52ffd2060b5010002860c16d0670e00b4f8f3631155aacee4be1c"
    "ec2de98a85650a2fce8ebcb971e7ede8e9cf9727672e1cb8bafbbbf2e0c4d7871f0100000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "00000000ffffffff0000000014000000000000000c00140012000c00080004000c0000006c00000088000000"
    "100000000000040008000800000004000800000004000000010000001400000010001600100000000f000400"
    "0000080010000000180000001c00000000000002180000000000060008000400060000002000000000000000"
    "06000000726f775f6964000001000000c000000000000000c000000000000000c00000000000000000000000"
    "00000000a80000004152524f5731";

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += char(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  return out;
}

TEST(IpcCompression, ReadsLanceDeletionFileWithZstdValues) {
  std::string bytes = Unhex(kLanceDeletionFileHex);
  ASSERT_EQ(bytes.size(), 762u);
  auto reader = ReadIpc(bytes, "0-1.arrow");
  EXPECT_EQ(reader->schema()->ToString(), "row_id:uint32 not null");
  auto got = reader->Next();
  ASSERT_NE(got, nullptr);
  ASSERT_EQ(got->num_rows(), 24);
  const uint32_t* v = got->column(0)->values<uint32_t>();
  EXPECT_EQ(std::vector<uint32_t>(v, v + 24),
            (std::vector<uint32_t>{110, 81, 33, 98, 71, 161, 61, 59, 31, 64, 73, 171, 153, 162, 199, 24,
                                   1, 53, 186, 106, 180, 123, 44, 102}));
  EXPECT_EQ(reader->Next(), nullptr);
}

// A stream whose one batch carries BodyCompression{codec, method} and no buffers.
std::string BatchWithCompressionTable(uint8_t codec, uint8_t method, size_t* batch_pos) {
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("x", DataType::Int32())});
  fb::FlatBufferBuilder b;
  b.StartTable();
  b.AddUInt8(ipc::kCompressionCodec, codec);
  b.AddUInt8(ipc::kCompressionMethod, method);
  fb::Ref compression = b.EndTable();
  b.StartTable();
  b.AddInt64(ipc::kBatchLength, 0);
  b.AddRef(ipc::kBatchCompression, compression);
  fb::Ref header = b.EndTable();
  b.StartTable();
  b.AddInt16(ipc::kMessageVersion, ipc::kMetadataV5);
  b.AddUInt8(ipc::kMessageHeaderType, uint8_t(ipc::MessageType::kRecordBatch));
  b.AddRef(ipc::kMessageHeader, header);
  std::string message = b.Finish(b.EndTable());
  std::string schema_msg = ipc::FrameMessage(ipc::EncodeSchema(*schema));
  *batch_pos = schema_msg.size();
  return schema_msg + ipc::FrameMessage(ipc::EncodedMessage::Of(message)) + ipc::EndOfStream();
}

TEST(IpcCompression, UnknownCodecOrMethodIsNotSupported) {
  size_t pos = 0;
  std::string bytes = BatchWithCompressionTable(2, 0, &pos);
  ExpectError([&] { ReadIpc(bytes, "odd")->Next(); }, ErrorKind::kNotSupported,
              {"odd", fmt::format("byte {}", pos), "compression codec 2"});
  bytes = BatchWithCompressionTable(1, 1, &pos);
  ExpectError([&] { ReadIpc(bytes, "odd")->Next(); }, ErrorKind::kNotSupported,
              {"odd", fmt::format("byte {}", pos), "body compression method 1"});
}

// Every single-byte corruption of a compressed stream either decodes or throws
// lancelet::Error (prefix corruptions must not turn into huge allocations).
TEST(IpcCompression, CorruptedBytesThrowErrorsOnly) {
  for (auto codec : kCodecs) {
    SCOPED_TRACE(ipc::CodecName(codec));
    HandBatch hb = XsBatch(codec);
    std::string good = HandStream(*XsSchema(), hb, 5, codec);
    int errors = 0;
    for (size_t pos = 0; pos < good.size(); ++pos) {
      for (uint8_t flip : {0x01, 0x80, 0xFF}) {
        std::string bad = good;
        bad[pos] = char(uint8_t(bad[pos]) ^ flip);
        try {
          auto reader = ReadIpc(bad, "bad");
          while (reader->Next()) {
          }
        } catch (const Error&) {
          ++errors;
        }
      }
    }
    EXPECT_GT(errors, 0);
  }
}

TEST(IpcCompression, WriterStaysUncompressed) {
  RecordBatchPtr batch = AllTypesBatch();
  std::string bytes = WriteIpcStream(*batch->schema(), {batch});
  uint32_t schema_len = U32At(bytes, 4);
  size_t meta_start = 8 + schema_len + 8;
  fb::FlatSource src{reinterpret_cast<const uint8_t*>(bytes.data()) + meta_start, U32At(bytes, 8 + schema_len + 4),
                     "w", int64_t(meta_start)};
  fb::FlatTable batch_table = fb::FlatTable::Root(src).GetTable(ipc::kMessageHeader);
  ASSERT_TRUE(batch_table.valid());
  EXPECT_TRUE(batch_table.Has(ipc::kBatchLength));
  EXPECT_FALSE(batch_table.Has(ipc::kBatchCompression));
}

TEST(Ipc, ADictionaryBatchNoFieldUsesIsCorrupt) {
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("x", DataType::Int32())});
  fb::FlatBufferBuilder b;
  b.StartTable();
  b.AddInt64(0, 1);
  fb::Ref header = b.EndTable();
  b.StartTable();
  b.AddInt16(ipc::kMessageVersion, ipc::kMetadataV5);
  b.AddUInt8(ipc::kMessageHeaderType, uint8_t(ipc::MessageType::kDictionaryBatch));
  b.AddRef(ipc::kMessageHeader, header);
  std::string message = b.Finish(b.EndTable());
  std::string bytes = ipc::FrameMessage(ipc::EncodeSchema(*schema)) + ipc::FrameMessage(ipc::EncodedMessage::Of(message));
  ExpectError([&] { ReadIpc(bytes, "dict")->Next(); }, ErrorKind::kCorrupt,
              {"dict: Arrow dictionary batch at byte", "has id 1, which no field of the schema uses"});
}

TEST(Ipc, DictionaryFieldsReadAsTheirValuesAndUnknownTypesAreNotSupported) {
  auto schema_message = [](uint8_t type_tag, bool dictionary) {
    fb::FlatBufferBuilder b;
    fb::Ref name = b.CreateString("col");
    b.StartTable();
    fb::Ref type = b.EndTable();
    fb::Ref dict = 0;
    if (dictionary) {
      b.StartTable();
      b.AddInt64(0, 0);
      dict = b.EndTable();
    }
    b.StartTable();
    b.AddRef(ipc::kFieldName, name);
    b.AddUInt8(ipc::kFieldTypeType, type_tag);
    b.AddRef(ipc::kFieldType, type);
    if (dict) b.AddRef(ipc::kFieldDictionary, dict);
    fb::Ref field = b.EndTable();
    fb::Ref fields = b.CreateOffsetVector({field});
    b.StartTable();
    b.AddRef(ipc::kSchemaFields, fields);
    fb::Ref schema = b.EndTable();
    b.StartTable();
    b.AddInt16(ipc::kMessageVersion, ipc::kMetadataV5);
    b.AddUInt8(ipc::kMessageHeaderType, uint8_t(ipc::MessageType::kSchema));
    b.AddRef(ipc::kMessageHeader, schema);
    return ipc::FrameMessage(ipc::EncodedMessage::Of(b.Finish(b.EndTable()))) + ipc::EndOfStream();
  };
  // A dictionary-encoded utf8 field reports utf8 (its batches carry the values).
  EXPECT_EQ(ReadIpc(schema_message(5, true), "d.arrows")->schema()->ToString(), "col:utf8 not null");
  ExpectError([&] { ReadIpc(schema_message(11, false), "n.arrows"); }, ErrorKind::kNotSupported,
              {"n.arrows", "'col'", "Interval"});
  ExpectError([&] { ReadIpc(schema_message(14, false), "u.arrows"); }, ErrorKind::kNotSupported,
              {"Union"});
  // Null, Duration, Time and Decimal read, with Schema.fbs's defaults for absent fields
  // (MILLISECOND; 32-bit time; 128-bit decimal).
  EXPECT_EQ(ReadIpc(schema_message(1, false), "n")->schema()->ToString(), "col:null not null");
  EXPECT_EQ(ReadIpc(schema_message(18, false), "d")->schema()->ToString(), "col:duration<ms> not null");
  EXPECT_EQ(ReadIpc(schema_message(9, false), "t")->schema()->ToString(), "col:time32<ms> not null");
  ExpectError([&] { ReadIpc(schema_message(7, false), "dec.arrows"); }, ErrorKind::kCorrupt,
              {"dec.arrows", "'col'", "precision must be in 1..38, got 0"});
  // Utf8 with no dictionary reads fine, nullable defaults to false.
  auto reader = ReadIpc(schema_message(5, false), "ok");
  EXPECT_EQ(reader->schema()->ToString(), "col:utf8 not null");
  EXPECT_FALSE(reader->schema()->field(0)->nullable);
}


// ------------------------------------------------------------------ apache-arrow interop
//
// Run by hand (or by ctest once wired) together with tests/array/arrow_js_check.mjs:
//   node tests/array/arrow_js_check.mjs write DIR
//   LANCELET_ARROW_JS_DIR=DIR test_array --gtest_filter='ArrowJs.*'
//   node tests/array/arrow_js_check.mjs check DIR
// Skipped when LANCELET_ARROW_JS_DIR is not set.

// The value dump arrow_js_check.mjs writes, computed from our arrays.
std::string Cell(const ArrayData& a, int64_t i) {
  if (a.IsNull(i)) return "null";
  const DataType& t = *a.type;
  auto hex = [](std::string_view bytes) {
    std::string out;
    for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
    return out;
  };
  auto join = [](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t k = 0; k < cells.size(); ++k) out += (k ? "," : "") + cells[k];
    return out;
  };
  switch (t.id()) {
    case TypeId::kBool: return GetBit(a.values<uint8_t>(), i) ? "true" : "false";
    case TypeId::kInt8: return std::to_string(a.values<int8_t>()[i]);
    case TypeId::kInt16: return std::to_string(a.values<int16_t>()[i]);
    case TypeId::kInt32: case TypeId::kDate32: case TypeId::kTime32: return std::to_string(a.values<int32_t>()[i]);
    case TypeId::kInt64: case TypeId::kDate64: case TypeId::kTimestamp: case TypeId::kTime64: case TypeId::kDuration:
      return std::to_string(a.values<int64_t>()[i]);
    case TypeId::kNull: return "null";
    case TypeId::kUInt8: return std::to_string(a.values<uint8_t>()[i]);
    case TypeId::kUInt16: case TypeId::kFloat16: return std::to_string(a.values<uint16_t>()[i]);
    case TypeId::kUInt32: return std::to_string(a.values<uint32_t>()[i]);
    case TypeId::kUInt64: return std::to_string(a.values<uint64_t>()[i]);
    case TypeId::kFloat32: return fmt::format("{}", a.values<float>()[i]);
    case TypeId::kFloat64: return fmt::format("{}", a.values<double>()[i]);
    case TypeId::kUtf8: case TypeId::kLargeUtf8: case TypeId::kBinary: case TypeId::kLargeBinary:
    case TypeId::kFixedSizeBinary: case TypeId::kDecimal128: case TypeId::kDecimal256:
      return hex(a.GetView(i));
    case TypeId::kList: case TypeId::kLargeList: case TypeId::kMap: {
      std::vector<std::string> items;
      for (int64_t k = a.offset(i); k < a.offset(i + 1); ++k) items.push_back(Cell(*a.child(0), k));
      return "[" + join(items) + "]";
    }
    case TypeId::kFixedSizeList: {
      std::vector<std::string> items;
      int64_t n = t.fixed_size();
      for (int64_t k = i * n; k < (i + 1) * n; ++k) items.push_back(Cell(*a.child(0), k));
      return "[" + join(items) + "]";
    }
    case TypeId::kStruct: {
      std::vector<std::string> fields;
      for (const auto& child : a.children) fields.push_back(Cell(*child, i));
      return "{" + join(fields) + "}";
    }
  }
  return "?";
}

std::string Dump(const Schema& schema, const std::vector<RecordBatchPtr>& batches) {
  std::string out;
  for (size_t c = 0; c < schema.num_fields(); ++c) {
    out += schema.field(c)->name + "=";
    bool first = true;
    for (const auto& batch : batches)
      for (int64_t i = 0; i < batch->num_rows(); ++i) {
        out += (first ? "" : "|") + Cell(*batch->column(c), i);
        first = false;
      }
    out += "\n";
  }
  return out;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteWhole(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// apache-arrow (JS, installed beside the oracle) writes files for us to read, then checks
// the files we write (arrow_js_check.mjs). With LANCELET_ARROW_JS_DIR set, the test only
// does its own half in that directory, for running the two sides by hand.
TEST(ArrowJs, ReadsApacheArrowFilesAndWritesFilesForIt) {
  const char* dir_env = std::getenv("LANCELET_ARROW_JS_DIR");
  testing::TempDir temp;
  const std::string script = std::string(LANCELET_SOURCE_DIR) + "/tests/array/arrow_js_check.mjs";
  if (!dir_env) {
    REQUIRE_ORACLE();
    testing::ExpectOk(testing::RunCommand("node " + testing::ShellQuote(script) + " write " + temp.path()),
                      "apache-arrow writing its files");
  }
  std::string dir = dir_env ? dir_env : temp.path();

  // Our side: every column apache-arrow can read (it has no large_list).
  RecordBatchPtr all = AllTypesBatch();
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> columns;
  for (size_t c = 0; c < all->num_columns(); ++c) {
    const auto& field = all->schema()->field(c);
    if (field->name == "large_list" || field->name == "list_of_fsl") continue;
    fields.push_back(field);
    columns.push_back(all->column(c));
  }
  auto schema = std::make_shared<Schema>(fields, all->schema()->metadata());
  auto batch = RecordBatch::Make(schema, columns);
  std::vector<RecordBatchPtr> batches{batch, batch->Slice(1, 2)};
  WriteWhole(dir + "/lancelet.arrow", WriteIpcFile(*schema, batches));
  WriteWhole(dir + "/lancelet.arrows", WriteIpcStream(*schema, batches));
  WriteWhole(dir + "/lancelet.txt", Dump(*schema, batches));

  // Their side.
  const std::map<std::string, std::string> want_types = {
      {"f16", "float16"}, {"large_utf8", "large_utf8"}, {"large_binary", "large_binary"},
      {"fsb", "fixed_size_binary<3>"}, {"fsl", "fixed_size_list<int32,2>"}, {"list", "list<utf8>"},
      {"struct", "struct<a:int32,b:utf8>"}, {"date32", "date32"}, {"date64", "date64"},
      {"ts_s", "timestamp<s>"}, {"ts_ms", "timestamp<ms,UTC>"},
      {"ts_us", "timestamp<us,America/New_York>"}, {"ts_ns", "timestamp<ns,+01:00>"}};
  for (std::string name : {"js.arrow", "js.arrows", "js_sliced.arrow", "js_sliced.arrows"}) {
    SCOPED_TRACE(name);
    std::string stem = name.substr(0, name.find('.'));
    auto reader = ReadIpc(ReadWhole(dir + "/" + name), name);
    const Schema& got = *reader->schema();
    EXPECT_EQ(got.metadata().at("origin"), "apache-arrow");
    for (const auto& [field, type] : want_types) {
      int index = got.FieldIndex(field);
      if (index < 0 && stem == "js_sliced" && field.starts_with("large_")) continue;
      ASSERT_GE(index, 0) << field;
      EXPECT_EQ(got.field(size_t(index))->type->ToString(), type) << field;
    }
    const Field& id = *got.field(size_t(got.FieldIndex("id")));
    EXPECT_FALSE(id.nullable);
    EXPECT_EQ(id.metadata, (Metadata{{"comment", "row id"}}));
    auto read = ReadAll(*reader);
    EXPECT_EQ(read.size(), 2u);
    EXPECT_EQ(Dump(got, read), ReadWhole(dir + "/" + stem + ".txt"));
  }
  if (!dir_env)
    testing::ExpectOk(testing::RunCommand("node " + testing::ShellQuote(script) + " check " + dir),
                      "apache-arrow reading lancelet's files");
}

}  // namespace
}  // namespace lancelet
