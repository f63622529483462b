#include "lancelet/c_data.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "array/arrow_test_data.h"
#include "lancelet/builder.h"
#include "lancelet/error.h"

namespace lancelet {
namespace {

using testing::AllTypeColumns;
using testing::AllTypesBatch;
using testing::ExpectBatchesEqual;
using testing::ExpectFieldsIdentical;
using testing::ExpectSchemasIdentical;

TEST(CData, FormatStrings) {
  auto f = [](const TypePtr& t) { return FormatString(*t); };
  EXPECT_EQ(f(DataType::Bool()), "b");
  EXPECT_EQ(f(DataType::Int8()), "c");
  EXPECT_EQ(f(DataType::UInt8()), "C");
  EXPECT_EQ(f(DataType::Int16()), "s");
  EXPECT_EQ(f(DataType::UInt16()), "S");
  EXPECT_EQ(f(DataType::Int32()), "i");
  EXPECT_EQ(f(DataType::UInt32()), "I");
  EXPECT_EQ(f(DataType::Int64()), "l");
  EXPECT_EQ(f(DataType::UInt64()), "L");
  EXPECT_EQ(f(DataType::Float16()), "e");
  EXPECT_EQ(f(DataType::Float32()), "f");
  EXPECT_EQ(f(DataType::Float64()), "g");
  EXPECT_EQ(f(DataType::Utf8()), "u");
  EXPECT_EQ(f(DataType::LargeUtf8()), "U");
  EXPECT_EQ(f(DataType::Binary()), "z");
  EXPECT_EQ(f(DataType::LargeBinary()), "Z");
  EXPECT_EQ(f(DataType::FixedSizeBinary(16)), "w:16");
  EXPECT_EQ(f(DataType::FixedSizeList(DataType::Float32(), 128)), "+w:128");
  EXPECT_EQ(f(DataType::List(DataType::Int32())), "+l");
  EXPECT_EQ(f(DataType::LargeList(DataType::Int32())), "+L");
  EXPECT_EQ(f(DataType::Struct({Field::Make("a", DataType::Int32())})), "+s");
  EXPECT_EQ(f(DataType::Date32()), "tdD");
  EXPECT_EQ(f(DataType::Date64()), "tdm");
  EXPECT_EQ(f(DataType::Timestamp(TimeUnit::kSecond, "UTC")), "tss:UTC");
  EXPECT_EQ(f(DataType::Timestamp(TimeUnit::kMilli)), "tsm:");
  EXPECT_EQ(f(DataType::Timestamp(TimeUnit::kMicro)), "tsu:");
  EXPECT_EQ(f(DataType::Timestamp(TimeUnit::kNano, "Europe/Paris")), "tsn:Europe/Paris");
  EXPECT_EQ(f(DataType::Time32(TimeUnit::kSecond)), "tts");
  EXPECT_EQ(f(DataType::Time32(TimeUnit::kMilli)), "ttm");
  EXPECT_EQ(f(DataType::Time64(TimeUnit::kMicro)), "ttu");
  EXPECT_EQ(f(DataType::Time64(TimeUnit::kNano)), "ttn");
  EXPECT_EQ(f(DataType::Duration(TimeUnit::kSecond)), "tDs");
  EXPECT_EQ(f(DataType::Duration(TimeUnit::kNano)), "tDn");
  EXPECT_EQ(f(DataType::Decimal128(10, 2)), "d:10,2");
  EXPECT_EQ(f(DataType::Decimal256(40, -3)), "d:40,-3,256");
  EXPECT_EQ(f(DataType::Null()), "n");
}

TEST(CData, ExportImportEveryColumnWithNulls) {
  for (const auto& col : AllTypeColumns()) {
    SCOPED_TRACE(col.field->name);
    ArrayPtr array = MakeArray(col.field->type, col.values);
    ArrowArray c_array;
    ArrowSchema c_schema;
    ExportArray(array, &c_array);
    ExportField(*col.field, &c_schema);
    EXPECT_EQ(c_array.length, 3);
    EXPECT_EQ(c_array.offset, 0);
    EXPECT_STREQ(c_schema.name, col.field->name.c_str());
    EXPECT_EQ(c_schema.flags, col.field->nullable ? ARROW_FLAG_NULLABLE : 0);
    FieldPtr field = ImportField(&c_schema);
    EXPECT_EQ(c_schema.release, nullptr);
    ExpectFieldsIdentical(*col.field, *field);
    ArrayPtr back = ImportArray(&c_array, field->type);
    EXPECT_EQ(c_array.release, nullptr);
    EXPECT_TRUE(ArraysEqual(*array, *back));
    EXPECT_EQ(array->null_count, back->null_count);
  }
}

TEST(CData, ExportKeepsArrayAliveUntilRelease) {
  ArrayPtr array = MakeArray(DataType::Utf8(), {testing::Str("a"), testing::Nul(DataType::Utf8())});
  long before = array.use_count();
  ArrowArray c_array;
  ExportArray(array, &c_array);
  EXPECT_GT(array.use_count(), before);
  EXPECT_EQ(c_array.n_buffers, 3);
  EXPECT_EQ(c_array.null_count, 1);
  EXPECT_EQ(c_array.buffers[1], array->buffers[1]->data());  // no copy
  const uint8_t* data_before = array->buffers[2]->data();
  array.reset();  // the export alone keeps the data alive
  EXPECT_EQ(std::memcmp(c_array.buffers[2], data_before, 1), 0);
  EXPECT_EQ(static_cast<const char*>(c_array.buffers[2])[0], 'a');
  c_array.release(&c_array);
  EXPECT_EQ(c_array.release, nullptr);
}

TEST(CData, SchemaRoundTripKeepsMetadataAndNullability) {
  auto schema = AllTypesBatch()->schema();
  ArrowSchema c_schema;
  ExportSchema(*schema, &c_schema);
  EXPECT_STREQ(c_schema.format, "+s");
  EXPECT_EQ(c_schema.n_children, int64_t(schema->num_fields()));
  ASSERT_NE(c_schema.metadata, nullptr);
  int32_t pairs;
  std::memcpy(&pairs, c_schema.metadata, 4);
  EXPECT_EQ(pairs, 2);
  SchemaPtr back = ImportSchema(&c_schema);
  ExpectSchemasIdentical(*schema, *back);
}

TEST(CData, RecordBatchRoundTrip) {
  RecordBatchPtr batch = AllTypesBatch();
  ArrowArray c_array;
  ArrowSchema c_schema;
  ExportRecordBatch(*batch, &c_array, &c_schema);
  EXPECT_EQ(c_array.n_children, int64_t(batch->num_columns()));
  SchemaPtr schema = ImportSchema(&c_schema);
  RecordBatchPtr back = ImportRecordBatch(&c_array, schema);
  ExpectBatchesEqual(*batch, *back);
}

// A field with a key type exports keys and a dictionary of the batch's values, and imports
// back as those values with the key type on the field.
TEST(CData, DictionaryFieldsExportKeysAndADictionary) {
  auto colour = std::make_shared<Field>(*Field::Make("colour", DataType::Utf8()));
  colour->dictionary_index = DataType::UInt8();
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{colour});
  BinaryBuilder values(DataType::Utf8());
  for (const char* v : {"red", "blue", "red", "", "blue"}) values.Append(v);
  values.AppendNull();
  RecordBatchPtr batch = RecordBatch::Make(schema, {values.Finish()});

  ArrowArray c_array;
  ArrowSchema c_schema;
  ExportRecordBatch(*batch, &c_array, &c_schema);
  ASSERT_EQ(c_schema.n_children, 1);
  EXPECT_STREQ(c_schema.children[0]->format, "C");
  ASSERT_NE(c_schema.children[0]->dictionary, nullptr);
  EXPECT_STREQ(c_schema.children[0]->dictionary->format, "u");
  ASSERT_NE(c_array.children[0]->dictionary, nullptr);
  EXPECT_EQ(c_array.children[0]->dictionary->length, 3);  // red, blue, ""
  EXPECT_EQ(c_array.children[0]->null_count, 1);

  SchemaPtr back_schema = ImportSchema(&c_schema);
  ASSERT_TRUE(back_schema->field(0)->dictionary_index);
  EXPECT_EQ(back_schema->field(0)->dictionary_index->ToString(), "uint8");
  ExpectBatchesEqual(*batch, *ImportRecordBatch(&c_array, back_schema));
}

// ---- hand-built imports with offsets ----

// A C array over caller-owned buffers; release only counts its calls.
struct HandArray {
  ArrowArray array{};
  std::vector<const void*> buffers;
  std::vector<ArrowArray*> children;
  int* released;
  HandArray(int64_t length, int64_t null_count, int64_t offset, std::vector<const void*> bufs,
            int* release_count, std::vector<ArrowArray*> kids = {})
      : buffers(std::move(bufs)), children(std::move(kids)), released(release_count) {
    array.length = length;
    array.null_count = null_count;
    array.offset = offset;
    array.n_buffers = int64_t(buffers.size());
    array.n_children = int64_t(children.size());
    array.buffers = buffers.data();
    array.children = children.empty() ? nullptr : children.data();
    array.release = [](ArrowArray* a) {
      ++*static_cast<int*>(a->private_data);
      a->release = nullptr;
    };
    array.private_data = released;
  }
};

TEST(CData, ImportHonoursOffsetsAtEveryLevel) {
  int released = 0;
  // int32 [_, _, 3, null, 5] with offset 2, length 3: validity bits 1,1,1,0,1.
  const uint8_t validity[] = {0b10111};
  const int32_t ints[] = {1, 2, 3, 4, 5};
  HandArray int_array(3, 1, 2, {validity, ints}, &released);
  ArrayPtr a = ImportArray(&int_array.array, DataType::Int32());
  EXPECT_EQ(released, 1);
  ASSERT_EQ(a->length, 3);
  EXPECT_EQ(a->null_count, 1);
  EXPECT_EQ(a->values<int32_t>()[0], 3);
  EXPECT_TRUE(a->IsNull(1));
  EXPECT_EQ(a->values<int32_t>()[2], 5);

  // bool with offset 3: bits of 0b1010'1000 from bit 3 -> 1,0,1,0,1.
  const uint8_t bools[] = {0b10101000};
  HandArray bool_array(4, 0, 3, {nullptr, bools}, &released);
  ArrayPtr b = ImportArray(&bool_array.array, DataType::Bool());
  EXPECT_EQ(b->buffers[0], nullptr);
  EXPECT_TRUE(GetBit(b->values<uint8_t>(), 0));
  EXPECT_FALSE(GetBit(b->values<uint8_t>(), 1));
  EXPECT_TRUE(GetBit(b->values<uint8_t>(), 2));
  EXPECT_FALSE(GetBit(b->values<uint8_t>(), 3));

  // utf8 ["hello", "ab", "", "xyz"] at offset 1, length 2 -> ["ab", ""].
  const int32_t offsets[] = {0, 5, 7, 7, 10};
  const char chars[] = "helloabxyz";
  HandArray str_array(2, 0, 1, {nullptr, offsets, chars}, &released);
  ArrayPtr s = ImportArray(&str_array.array, DataType::Utf8());
  EXPECT_EQ(s->offset(0), 0);
  EXPECT_EQ(s->offset(2), 2);
  EXPECT_EQ(s->GetView(0), "ab");
  EXPECT_EQ(s->GetView(1), "");
  EXPECT_EQ(s->buffers[2]->size(), 2u);

  // list<int64> at offset 1 whose items have their own offset 1:
  // items (after their offset) = [10, 20, 30, 40]; list offsets [0, 1, 3, 4] -> [[20, 30], [40]].
  const int64_t items_values[] = {0, 10, 20, 30, 40};
  HandArray items(4, 0, 1, {nullptr, items_values}, &released);
  const int32_t list_offsets[] = {0, 1, 3, 4};
  HandArray list_array(2, 0, 1, {nullptr, list_offsets}, &released, {&items.array});
  ArrayPtr l = ImportArray(&list_array.array, DataType::List(DataType::Int64()));
  EXPECT_EQ(l->offset(1), 2);
  EXPECT_EQ(l->offset(2), 3);
  ASSERT_EQ(l->child(0)->length, 3);
  EXPECT_EQ(l->child(0)->values<int64_t>()[0], 20);
  EXPECT_EQ(l->child(0)->values<int64_t>()[2], 40);

  // struct<a:int16> with offset 2 and a child with offset 1: struct slot k is child slot k.
  const int16_t shorts[] = {0, 1, 2, 3, 4, 5};
  HandArray field_a(5, 0, 1, {nullptr, shorts}, &released);
  HandArray struct_array(2, 0, 2, {nullptr}, &released, {&field_a.array});
  ArrayPtr st = ImportArray(&struct_array.array, DataType::Struct({Field::Make("a", DataType::Int16())}));
  ASSERT_EQ(st->child(0)->length, 2);
  EXPECT_EQ(st->child(0)->values<int16_t>()[0], 3);
  EXPECT_EQ(st->child(0)->values<int16_t>()[1], 4);

  // fixed_size_list<uint8, 2> at offset 1 -> items from slot 2.
  const uint8_t bytes[] = {1, 2, 3, 4, 5, 6};
  HandArray fsl_items(6, 0, 0, {nullptr, bytes}, &released);
  HandArray fsl_array(2, 0, 1, {nullptr}, &released, {&fsl_items.array});
  ArrayPtr fsl = ImportArray(&fsl_array.array, DataType::FixedSizeList(DataType::UInt8(), 2));
  ASSERT_EQ(fsl->child(0)->length, 4);
  EXPECT_EQ(fsl->child(0)->values<uint8_t>()[0], 3);
  EXPECT_EQ(fsl->child(0)->values<uint8_t>()[3], 6);
  // Only the parents' release callbacks are called (they own their children).
  EXPECT_EQ(released, 6);
}

TEST(CData, ImportRejectsBadStructsAndReleasesThem) {
  int released = 0;
  const int32_t ints[] = {1, 2};
  HandArray wrong_buffers(2, 0, 0, {nullptr, ints, ints}, &released);
  EXPECT_THROW(ImportArray(&wrong_buffers.array, DataType::Int32()), Error);
  EXPECT_EQ(released, 1);

  HandArray short_child(1, 0, 0, {nullptr, ints}, &released);
  HandArray fsl(1, 0, 0, {nullptr}, &released, {&short_child.array});
  try {
    ImportArray(&fsl.array, DataType::FixedSizeList(DataType::Int32(), 2));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("child has 1 slots, 2 needed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(released, 2);

  ArrowSchema null_type{};  // an interval: a type lancelet has no counterpart for
  null_type.format = "tiM";
  null_type.name = "nothing";
  null_type.release = [](ArrowSchema* s) { s->release = nullptr; };
  try {
    ImportField(&null_type);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotSupported);
    EXPECT_NE(std::string(e.what()).find("'nothing' has format 'tiM'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(null_type.release, nullptr);

  ArrowSchema dict_values{};
  dict_values.format = "u";
  dict_values.release = [](ArrowSchema* s) { s->release = nullptr; };
  ArrowSchema dict{};
  dict.format = "f";  // float keys
  dict.name = "d";
  dict.dictionary = &dict_values;
  dict.release = [](ArrowSchema* s) { s->release = nullptr; };
  try {
    ImportField(&dict);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("field 'd' has dictionary keys of type float32; keys are integers"),
              std::string::npos)
        << e.what();
  }
}

// A dictionary-encoded array (pandas' categoricals arrive so) imports as its values; the
// field keeps its key type, so that a dataset created from it stores it dictionary-encoded.
TEST(CData, ImportDecodesDictionaryArrays) {
  auto schema_of = [](const char* key_format, ArrowSchema* values) {
    ArrowSchema s{};
    s.format = key_format;
    s.name = "colour";
    s.flags = ARROW_FLAG_NULLABLE;
    s.dictionary = values;
    s.release = [](ArrowSchema* x) { x->release = nullptr; };
    return s;
  };
  ArrowSchema values_schema{};
  values_schema.format = "u";
  values_schema.release = [](ArrowSchema* s) { s->release = nullptr; };
  ArrowSchema schema = schema_of("c", &values_schema);
  FieldPtr field = ImportField(&schema);
  EXPECT_EQ(field->type->ToString(), "utf8");
  ASSERT_TRUE(field->dictionary_index);
  EXPECT_EQ(field->dictionary_index->ToString(), "int8");

  int released = 0;
  // Dictionary ["red", "green", "blue"] at offset 1 -> ["green", "blue"]; keys [_, 1, 0, null, 1]
  // at offset 1: blue, green, NULL, blue.
  const int32_t offsets[] = {0, 3, 8, 12};
  const char chars[] = "redgreenblue";
  HandArray values(2, 0, 1, {nullptr, offsets, chars}, &released);
  const uint8_t validity[] = {0b10111};
  const int8_t keys[] = {5, 1, 0, 7, 1};
  HandArray keyed(4, 1, 1, {validity, keys}, &released);
  keyed.array.dictionary = &values.array;
  values_schema.release = [](ArrowSchema* s) { s->release = nullptr; };
  schema = schema_of("c", &values_schema);
  ArrayPtr a = ImportArray(&keyed.array, &schema);
  ASSERT_EQ(a->type->ToString(), "utf8");
  ASSERT_EQ(a->length, 4);
  EXPECT_EQ(a->GetView(0), "blue");
  EXPECT_EQ(a->GetView(1), "green");
  EXPECT_TRUE(a->IsNull(2));
  EXPECT_EQ(a->GetView(3), "blue");
  EXPECT_EQ(a->null_count, 1);

  // A key past the dictionary is refused.
  const int8_t bad_keys[] = {2};
  HandArray bad(1, 0, 0, {nullptr, bad_keys}, &released);
  HandArray two(2, 0, 1, {nullptr, offsets, chars}, &released);
  bad.array.dictionary = &two.array;
  values_schema.release = [](ArrowSchema* s) { s->release = nullptr; };
  schema = schema_of("c", &values_schema);
  try {
    ImportArray(&bad.array, &schema);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dictionary key 2 at row 0 is outside the 2 values"), std::string::npos)
        << e.what();
  }
}

// ---- streams ----

class VectorReader : public RecordBatchReader {
 public:
  VectorReader(SchemaPtr schema, std::vector<RecordBatchPtr> batches, bool fail_at_end = false)
      : schema_(std::move(schema)), batches_(std::move(batches)), fail_at_end_(fail_at_end) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    if (next_ < batches_.size()) return batches_[next_++];
    if (fail_at_end_) ThrowCorrupt("disk on fire at byte 42");
    return nullptr;
  }

 private:
  SchemaPtr schema_;
  std::vector<RecordBatchPtr> batches_;
  size_t next_ = 0;
  bool fail_at_end_;
};

TEST(CData, StreamRoundTrip) {
  RecordBatchPtr batch = AllTypesBatch();
  ArrowArrayStream stream;
  ExportRecordBatchReader(
      std::make_shared<VectorReader>(batch->schema(), std::vector<RecordBatchPtr>{batch, batch->Slice(1, 1)}),
      &stream);
  auto reader = ImportArrayStream(&stream);
  EXPECT_EQ(stream.release, nullptr);  // taken over
  ExpectSchemasIdentical(*batch->schema(), *reader->schema());
  auto first = reader->Next();
  ASSERT_NE(first, nullptr);
  ExpectBatchesEqual(*batch, *first);
  auto second = reader->Next();
  ASSERT_NE(second, nullptr);
  ExpectBatchesEqual(*batch->Slice(1, 1), *second);
  EXPECT_EQ(reader->Next(), nullptr);
  EXPECT_EQ(reader->Next(), nullptr);
}

TEST(CData, StreamErrorsCarryTheProducersMessage) {
  RecordBatchPtr batch = AllTypesBatch();
  ArrowArrayStream stream;
  ExportRecordBatchReader(std::make_shared<VectorReader>(batch->schema(), std::vector<RecordBatchPtr>{}, true),
                          &stream);
  ArrowArray out;
  EXPECT_EQ(stream.get_next(&stream, &out), EIO);
  EXPECT_STREQ(stream.get_last_error(&stream), "disk on fire at byte 42");
  auto reader = ImportArrayStream(&stream);
  try {
    reader->Next();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("disk on fire at byte 42"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lancelet
