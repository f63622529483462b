#include "format/lance_schema.h"

#include <gtest/gtest.h>

#include "file.pb.h"
#include "lancelet/error.h"

namespace lancelet::format {
namespace {

using google::protobuf::RepeatedPtrField;

TEST(LogicalTypeName, SpellsEveryTypeAsLanceDoes) {
  EXPECT_EQ(LogicalTypeName(*DataType::Bool()), "bool");
  EXPECT_EQ(LogicalTypeName(*DataType::Int8()), "int8");
  EXPECT_EQ(LogicalTypeName(*DataType::Int16()), "int16");
  EXPECT_EQ(LogicalTypeName(*DataType::Int32()), "int32");
  EXPECT_EQ(LogicalTypeName(*DataType::Int64()), "int64");
  EXPECT_EQ(LogicalTypeName(*DataType::UInt8()), "uint8");
  EXPECT_EQ(LogicalTypeName(*DataType::UInt16()), "uint16");
  EXPECT_EQ(LogicalTypeName(*DataType::UInt32()), "uint32");
  EXPECT_EQ(LogicalTypeName(*DataType::UInt64()), "uint64");
  EXPECT_EQ(LogicalTypeName(*DataType::Float16()), "halffloat");
  EXPECT_EQ(LogicalTypeName(*DataType::Float32()), "float");
  EXPECT_EQ(LogicalTypeName(*DataType::Float64()), "double");
  EXPECT_EQ(LogicalTypeName(*DataType::Utf8()), "string");
  EXPECT_EQ(LogicalTypeName(*DataType::LargeUtf8()), "large_string");
  EXPECT_EQ(LogicalTypeName(*DataType::Binary()), "binary");
  EXPECT_EQ(LogicalTypeName(*DataType::LargeBinary()), "large_binary");
  EXPECT_EQ(LogicalTypeName(*DataType::FixedSizeBinary(16)), "fixed_size_binary:16");
  EXPECT_EQ(LogicalTypeName(*DataType::FixedSizeList(DataType::Float32(), 128)), "fixed_size_list:float:128");
  EXPECT_EQ(LogicalTypeName(*DataType::FixedSizeList(DataType::FixedSizeList(DataType::Int8(), 2), 3)),
            "fixed_size_list:fixed_size_list:int8:2:3");
  EXPECT_EQ(LogicalTypeName(*DataType::List(DataType::Int32())), "list");
  EXPECT_EQ(LogicalTypeName(*DataType::LargeList(DataType::Utf8())), "large_list");
  auto st = DataType::Struct({Field::Make("a", DataType::Int32())});
  EXPECT_EQ(LogicalTypeName(*DataType::List(st)), "list.struct");
  EXPECT_EQ(LogicalTypeName(*DataType::LargeList(st)), "large_list.struct");
  EXPECT_EQ(LogicalTypeName(*st), "struct");
  EXPECT_EQ(LogicalTypeName(*DataType::Date32()), "date32:day");
  EXPECT_EQ(LogicalTypeName(*DataType::Date64()), "date64:ms");
  EXPECT_EQ(LogicalTypeName(*DataType::Timestamp(TimeUnit::kMicro)), "timestamp:us:-");
  EXPECT_EQ(LogicalTypeName(*DataType::Timestamp(TimeUnit::kNano, "UTC")), "timestamp:ns:UTC");
  EXPECT_EQ(LogicalTypeName(*DataType::Timestamp(TimeUnit::kSecond)), "timestamp:s:-");
  EXPECT_EQ(LogicalTypeName(*DataType::Timestamp(TimeUnit::kMilli)), "timestamp:ms:-");
}

TEST(LogicalTypeName, RejectsFixedSizeListOfNested) {
  auto t = DataType::FixedSizeList(DataType::List(DataType::Int32()), 2);
  try {
    LogicalTypeName(*t);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotSupported);
  }
}

Schema NestedSchema() {
  auto point = DataType::Struct({Field::Make("x", DataType::Float64(), false), Field::Make("y", DataType::Utf8())});
  return Schema({Field::Make("id", DataType::Int64(), false),
                 Field::Make("tags", DataType::List(Field::Make("item", DataType::Utf8()))),
                 Field::Make("vec", DataType::FixedSizeList(DataType::Float32(), 4)),
                 Field::Make("pt", point, true, {{"k", "v"}}),
                 Field::Make("ts", DataType::Timestamp(TimeUnit::kMicro))},
                {{"schema-key", "schema-value"}});
}

TEST(LanceSchema, FromArrowNumbersNodesInPreOrderWithoutFixedSizeListItems) {
  auto s = LanceSchema::FromArrow(NestedSchema(), 10);
  ASSERT_EQ(s.fields().size(), 5u);
  EXPECT_EQ(s.fields()[0].id, 10);
  EXPECT_EQ(s.fields()[1].id, 11);
  ASSERT_EQ(s.fields()[1].children.size(), 1u);
  EXPECT_EQ(s.fields()[1].children[0].id, 12);
  EXPECT_EQ(s.fields()[1].children[0].name, "item");
  EXPECT_EQ(s.fields()[2].id, 13);
  EXPECT_TRUE(s.fields()[2].children.empty());
  EXPECT_EQ(s.fields()[3].id, 14);
  EXPECT_EQ(s.fields()[3].children[0].id, 15);
  EXPECT_EQ(s.fields()[3].children[1].id, 16);
  EXPECT_EQ(s.fields()[4].id, 17);
  EXPECT_EQ(s.MaxId(), 17);
  EXPECT_EQ(s.FindById(16)->name, "y");
  EXPECT_EQ(s.FindById(99), nullptr);
  EXPECT_EQ(s.FindByName("pt")->id, 14);
  EXPECT_EQ(s.FindByName("x"), nullptr);  // top level only
}

TEST(LanceSchema, ProtoMatchesTheReferenceLayout) {
  auto s = LanceSchema::FromArrow(NestedSchema());
  RepeatedPtrField<lance::file::Field> pb;
  s.ToProto(&pb);
  ASSERT_EQ(pb.size(), 8);
  const char* names[] = {"id", "tags", "item", "vec", "pt", "x", "y", "ts"};
  const char* types[] = {"int64", "list", "string", "fixed_size_list:float:4", "struct", "double", "string",
                         "timestamp:us:-"};
  const int parents[] = {-1, -1, 1, -1, -1, 4, 4, -1};
  const int encodings[] = {lance::file::PLAIN, lance::file::PLAIN,      lance::file::VAR_BINARY,
                           lance::file::PLAIN, lance::file::NONE,       lance::file::PLAIN,
                           lance::file::VAR_BINARY, lance::file::PLAIN};
  for (int i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(pb[i].name(), names[i]);
    EXPECT_EQ(pb[i].id(), i);
    EXPECT_EQ(pb[i].parent_id(), parents[i]);
    EXPECT_EQ(pb[i].logical_type(), types[i]);
    EXPECT_EQ(pb[i].encoding(), encodings[i]);
    EXPECT_EQ(pb[i].type(), 0);
  }
  EXPECT_FALSE(pb[0].nullable());
  EXPECT_TRUE(pb[1].nullable());
  EXPECT_FALSE(pb[5].nullable());
  EXPECT_EQ(pb[4].metadata().at("k"), "v");
}

TEST(LanceSchema, ProtoRoundTripRestoresArrowSchema) {
  Schema arrow = NestedSchema();
  auto s = LanceSchema::FromArrow(arrow);
  RepeatedPtrField<lance::file::Field> pb;
  s.ToProto(&pb);
  auto back = LanceSchema::FromProto(pb, arrow.metadata());
  EXPECT_TRUE(back.ToArrow()->Equals(arrow)) << back.ToArrow()->ToString();
  EXPECT_EQ(back.metadata().at("schema-key"), "schema-value");
  EXPECT_EQ(back.fields()[3].metadata.at("k"), "v");
  EXPECT_EQ(back.fields()[3].children[1].id, 6);
  EXPECT_EQ(back.fields()[2].type->fixed_size(), 4);
}

TEST(LanceSchema, FromProtoParsesReferenceSpellings) {
  RepeatedPtrField<lance::file::Field> pb;
  auto add = [&](const char* name, int id, int parent, const char* lt) {
    auto* f = pb.Add();
    f->set_name(name);
    f->set_id(id);
    f->set_parent_id(parent);
    f->set_logical_type(lt);
    f->set_nullable(true);
  };
  add("a", 0, -1, "fixed_size_binary:3");
  add("b", 1, -1, "date64:ms");
  add("c", 2, -1, "timestamp:ns:America/New_York");
  add("d", 3, -1, "large_list.struct");
  add("item", 4, 3, "struct");
  add("z", 5, 4, "halffloat");
  add("e", 6, -1, "json");
  auto s = LanceSchema::FromProto(pb, {});
  EXPECT_TRUE(s.fields()[0].type->Equals(*DataType::FixedSizeBinary(3)));
  EXPECT_TRUE(s.fields()[1].type->Equals(*DataType::Date64()));
  EXPECT_TRUE(s.fields()[2].type->Equals(*DataType::Timestamp(TimeUnit::kNano, "America/New_York")));
  auto expected = DataType::LargeList(Field::Make("item", DataType::Struct({Field::Make("z", DataType::Float16())})));
  EXPECT_TRUE(s.fields()[3].type->Equals(*expected)) << s.fields()[3].type->ToString();
  EXPECT_TRUE(s.fields()[4].type->Equals(*DataType::LargeBinary()));
}

TEST(LanceSchema, FromProtoRejectsUnknownTypesAndDanglingParents) {
  RepeatedPtrField<lance::file::Field> pb;
  auto* f = pb.Add();
  f->set_name("a");
  f->set_id(0);
  f->set_parent_id(-1);
  f->set_logical_type("decimal128-ish");
  try {
    LanceSchema::FromProto(pb, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("decimal128-ish"), std::string::npos);
  }
  // The reference's spellings of the types lancelet reads; malformed ones are corrupt.
  for (auto [lance_type, spelling] : std::vector<std::pair<const char*, const char*>>{
           {"decimal:128:10:2", "decimal128<10,2>"}, {"decimal:256:40:-3", "decimal256<40,-3>"},
           {"time32:s", "time32<s>"}, {"time64:us", "time64<us>"}, {"duration:ms", "duration<ms>"},
           {"null", "null"}, {"time32:us", nullptr}, {"decimal:128:39:0", nullptr}, {"decimal:64:5:1", nullptr},
           {"decimal:128:10", nullptr}, {"map", nullptr},  // a map without its entries child
           {"dict:string:int32:false", "utf8"}, {"dict:double:uint16:false", "float64"},
           {"dict:string:int32", nullptr}, {"dict:string:float:false", nullptr}}) {
    f->set_logical_type(lance_type);
    if (spelling) {
      LanceSchema schema = LanceSchema::FromProto(pb, {});
      EXPECT_EQ(schema.ToArrow()->field(0)->type->ToString(), spelling);
      // Written back under the name it was read by.
      RepeatedPtrField<lance::file::Field> back;
      schema.ToProto(&back);
      EXPECT_EQ(back.Get(0).logical_type(), lance_type);
      continue;
    }
    try {
      LanceSchema::FromProto(pb, {});
      FAIL() << lance_type;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kCorrupt) << e.what();
      EXPECT_NE(std::string(e.what()).find(lance_type), std::string::npos) << e.what();
    }
  }
  f->set_logical_type("int32");
  auto* g = pb.Add();
  g->set_name("b");
  g->set_id(1);
  g->set_parent_id(7);
  g->set_logical_type("int32");
  try {
    LanceSchema::FromProto(pb, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("parent id 7"), std::string::npos);
  }
}

// Arrow input that arrives dictionary-encoded is stored so, as the reference stores it,
// where lancelet writes such dictionaries; a dictionary of other values is stored plain.
TEST(LanceSchema, DictionaryEncodedArrowFieldsStayDictionaryEncoded) {
  auto keyed = [](const std::string& name, TypePtr values, TypePtr keys) {
    auto field = std::make_shared<Field>(*Field::Make(name, std::move(values)));
    field->dictionary_index = std::move(keys);
    return FieldPtr(field);
  };
  Schema arrow({keyed("s", DataType::Utf8(), DataType::Int8()), keyed("u", DataType::Int64(), DataType::UInt16()),
                keyed("b", DataType::Bool(), DataType::Int32()),
                keyed("l", DataType::List(DataType::Int32()), DataType::Int32())});
  LanceSchema schema = LanceSchema::FromArrow(arrow);
  RepeatedPtrField<lance::file::Field> pb;
  schema.ToProto(&pb);
  ASSERT_EQ(pb.size(), 5);
  EXPECT_EQ(pb.Get(0).logical_type(), "dict:string:int8:false");
  EXPECT_EQ(pb.Get(0).encoding(), lance::file::DICTIONARY);
  EXPECT_EQ(pb.Get(1).logical_type(), "dict:int64:uint16:false");
  EXPECT_EQ(pb.Get(2).logical_type(), "bool");
  EXPECT_EQ(pb.Get(3).logical_type(), "list");
  // Read back, the key type is on the Arrow field again.
  SchemaPtr back = LanceSchema::FromProto(pb, {}).ToArrow();
  ASSERT_TRUE(back->field(0)->dictionary_index);
  EXPECT_EQ(back->field(0)->dictionary_index->ToString(), "int8");
  EXPECT_EQ(back->field(0)->type->ToString(), "utf8");
  EXPECT_FALSE(back->field(2)->dictionary_index);
}

TEST(LanceSchema, ProjectKeepsRequestedOrderAndFailsOnMissing) {
  auto s = LanceSchema::FromArrow(NestedSchema());
  auto p = s.Project({"ts", "id"});
  ASSERT_EQ(p.fields().size(), 2u);
  EXPECT_EQ(p.fields()[0].name, "ts");
  EXPECT_EQ(p.fields()[0].id, 7);
  EXPECT_EQ(p.fields()[1].id, 0);
  try {
    s.Project({"nope"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
}

}  // namespace
}  // namespace lancelet::format
