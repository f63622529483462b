// A record batch with one column of every TypeId (and nested combinations), each with
// nulls, shared by the IPC and C Data Interface tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lancelet/record_batch.h"
#include "lancelet/scalar.h"

namespace lancelet::testing {

inline Scalar Val(const TypePtr& type, Scalar::Payload value) { return Scalar{type, std::move(value)}; }
inline Scalar Nul(const TypePtr& type) { return Scalar::Null(type); }
inline Scalar I(int64_t v, TypePtr type = DataType::Int64()) { return Val(type, v); }
inline Scalar U(uint64_t v, TypePtr type = DataType::UInt64()) { return Val(type, v); }
inline Scalar D(double v, TypePtr type = DataType::Float64()) { return Val(type, v); }
inline Scalar Str(std::string v, TypePtr type = DataType::Utf8()) { return Val(type, std::move(v)); }
inline Scalar Items(const TypePtr& type, std::vector<Scalar> items) { return Val(type, std::move(items)); }

struct TestColumn {
  FieldPtr field;
  std::vector<Scalar> values;
};

// Three rows per column; row 1 is null in every nullable column.
inline std::vector<TestColumn> AllTypeColumns() {
  std::vector<TestColumn> cols;
  auto add = [&](std::string name, TypePtr type, std::vector<Scalar> values, bool nullable = true,
                 Metadata metadata = {}) {
    cols.push_back({Field::Make(std::move(name), type, nullable, std::move(metadata)), std::move(values)});
  };
  auto t = [](TypeId id) { return DataType::Primitive(id); };
  add("bool", t(TypeId::kBool), {Val(t(TypeId::kBool), true), Nul(t(TypeId::kBool)), Val(t(TypeId::kBool), false)});
  add("i8", t(TypeId::kInt8), {I(-128, t(TypeId::kInt8)), Nul(t(TypeId::kInt8)), I(127, t(TypeId::kInt8))});
  add("i16", t(TypeId::kInt16), {I(-32768, t(TypeId::kInt16)), Nul(t(TypeId::kInt16)), I(7, t(TypeId::kInt16))});
  add("i32", t(TypeId::kInt32), {I(-5, t(TypeId::kInt32)), Nul(t(TypeId::kInt32)), I(2147483647, t(TypeId::kInt32))});
  add("i64", t(TypeId::kInt64), {I(INT64_MIN), Nul(t(TypeId::kInt64)), I(42)});
  add("u8", t(TypeId::kUInt8), {U(255, t(TypeId::kUInt8)), Nul(t(TypeId::kUInt8)), U(0, t(TypeId::kUInt8))});
  add("u16", t(TypeId::kUInt16), {U(65535, t(TypeId::kUInt16)), Nul(t(TypeId::kUInt16)), U(1, t(TypeId::kUInt16))});
  add("u32", t(TypeId::kUInt32), {U(4294967295u, t(TypeId::kUInt32)), Nul(t(TypeId::kUInt32)), U(2, t(TypeId::kUInt32))});
  add("u64", t(TypeId::kUInt64), {U(UINT64_MAX), Nul(t(TypeId::kUInt64)), U(3)});
  add("f16", t(TypeId::kFloat16), {D(1.5, t(TypeId::kFloat16)), Nul(t(TypeId::kFloat16)), D(-2, t(TypeId::kFloat16))});
  add("f32", t(TypeId::kFloat32), {D(0.25, t(TypeId::kFloat32)), Nul(t(TypeId::kFloat32)), D(-1e10, t(TypeId::kFloat32))});
  add("f64", t(TypeId::kFloat64), {D(3.5), Nul(t(TypeId::kFloat64)), D(-0.125)});
  add("utf8", t(TypeId::kUtf8), {Str("a"), Nul(t(TypeId::kUtf8)), Str("h\xc3\xa9llo")});
  add("large_utf8", t(TypeId::kLargeUtf8),
      {Str("", t(TypeId::kLargeUtf8)), Nul(t(TypeId::kLargeUtf8)), Str("large", t(TypeId::kLargeUtf8))});
  add("binary", t(TypeId::kBinary),
      {Str(std::string("\0\x01", 2), t(TypeId::kBinary)), Nul(t(TypeId::kBinary)), Str("zz", t(TypeId::kBinary))});
  add("large_binary", t(TypeId::kLargeBinary),
      {Str("xyz", t(TypeId::kLargeBinary)), Nul(t(TypeId::kLargeBinary)), Str("", t(TypeId::kLargeBinary))});
  TypePtr fsb = DataType::FixedSizeBinary(3);
  add("fsb", fsb, {Str("abc", fsb), Nul(fsb), Str("xyz", fsb)});
  TypePtr i32 = t(TypeId::kInt32);
  TypePtr fsl = DataType::FixedSizeList(Field::Make("item", i32), 2);
  add("fsl", fsl, {Items(fsl, {I(1, i32), I(2, i32)}), Nul(fsl), Items(fsl, {I(3, i32), Nul(i32)})});
  TypePtr list = DataType::List(Field::Make("item", t(TypeId::kUtf8)));
  add("list", list, {Items(list, {Str("x"), Nul(t(TypeId::kUtf8))}), Nul(list), Items(list, {})});
  TypePtr large_list = DataType::LargeList(Field::Make("element", t(TypeId::kInt64), false));
  add("large_list", large_list, {Items(large_list, {I(1), I(2), I(3)}), Nul(large_list), Items(large_list, {})});
  TypePtr st = DataType::Struct({Field::Make("a", i32), Field::Make("b", t(TypeId::kUtf8))});
  add("struct", st, {Items(st, {I(1, i32), Str("p")}), Nul(st), Items(st, {Nul(i32), Str("q")})});
  TypePtr list_of_struct = DataType::List(Field::Make("item", st));
  add("list_of_struct", list_of_struct,
      {Items(list_of_struct, {Items(st, {I(7, i32), Nul(t(TypeId::kUtf8))}), Nul(st)}), Nul(list_of_struct),
       Items(list_of_struct, {Items(st, {I(8, i32), Str("r")})})});
  TypePtr fsl_f32 = DataType::FixedSizeList(Field::Make("item", t(TypeId::kFloat32)), 3);
  TypePtr list_of_fsl = DataType::LargeList(Field::Make("item", fsl_f32));
  add("list_of_fsl", list_of_fsl,
      {Items(list_of_fsl, {Items(fsl_f32, {D(1, t(TypeId::kFloat32)), D(2, t(TypeId::kFloat32)), D(3, t(TypeId::kFloat32))})}),
       Nul(list_of_fsl), Items(list_of_fsl, {Nul(fsl_f32)})});
  add("date32", t(TypeId::kDate32), {I(19000, t(TypeId::kDate32)), Nul(t(TypeId::kDate32)), I(-1, t(TypeId::kDate32))});
  add("date64", t(TypeId::kDate64),
      {I(1700000000000, t(TypeId::kDate64)), Nul(t(TypeId::kDate64)), I(0, t(TypeId::kDate64))});
  TypePtr ts_s = DataType::Timestamp(TimeUnit::kSecond);
  TypePtr ts_ms = DataType::Timestamp(TimeUnit::kMilli, "UTC");
  TypePtr ts_us = DataType::Timestamp(TimeUnit::kMicro, "America/New_York");
  TypePtr ts_ns = DataType::Timestamp(TimeUnit::kNano, "+01:00");
  add("ts_s", ts_s, {I(1, ts_s), Nul(ts_s), I(-1, ts_s)});
  add("ts_ms", ts_ms, {I(1700000000123, ts_ms), Nul(ts_ms), I(0, ts_ms)});
  add("ts_us", ts_us, {I(1700000000123456, ts_us), Nul(ts_us), I(5, ts_us)});
  add("ts_ns", ts_ns, {I(1700000000123456789, ts_ns), Nul(ts_ns), I(6, ts_ns)});
  TypePtr time_s = DataType::Time32(TimeUnit::kSecond), time_ns = DataType::Time64(TimeUnit::kNano);
  add("time32_s", time_s, {I(86399, time_s), Nul(time_s), I(0, time_s)});
  add("time64_ns", time_ns, {I(86399999999999, time_ns), Nul(time_ns), I(1, time_ns)});
  TypePtr dur_ms = DataType::Duration(TimeUnit::kMilli);
  add("duration_ms", dur_ms, {I(INT64_MIN, dur_ms), Nul(dur_ms), I(-1, dur_ms)});
  // Little-endian two's complement: 1 and -1 at 128 bits, 2^64 at 256 bits.
  TypePtr dec128 = DataType::Decimal128(38, 2), dec256 = DataType::Decimal256(76, -3);
  add("decimal128", dec128,
      {Str(std::string("\x01") + std::string(15, '\0'), dec128), Nul(dec128), Str(std::string(16, '\xff'), dec128)});
  add("decimal256", dec256,
      {Str(std::string(8, '\0') + "\x01" + std::string(23, '\0'), dec256), Nul(dec256), Str(std::string(32, '\0'), dec256)});
  add("null", DataType::Null(), {Nul(DataType::Null()), Nul(DataType::Null()), Nul(DataType::Null())});
  TypePtr map = DataType::Map(t(TypeId::kUtf8), i32);
  TypePtr entries = map->child(0)->type;
  add("map", map, {Items(map, {Items(entries, {Str("k"), I(1, i32)})}), Nul(map), Items(map, {})});
  // Not nullable, no nulls, with field metadata.
  add("id", i32, {I(10, i32), I(11, i32), I(12, i32)}, false, {{"comment", "row id"}, {"k", ""}});
  return cols;
}

inline SchemaPtr AllTypesSchema() {
  std::vector<FieldPtr> fields;
  for (const auto& c : AllTypeColumns()) fields.push_back(c.field);
  return std::make_shared<Schema>(fields, Metadata{{"origin", "lancelet test"}, {"empty", ""}});
}

inline RecordBatchPtr AllTypesBatch() {
  std::vector<ArrayPtr> columns;
  for (const auto& c : AllTypeColumns()) columns.push_back(MakeArray(c.field->type, c.values));
  return RecordBatch::Make(AllTypesSchema(), columns);
}

// Names, types, nullability and metadata of fields, recursively through nested types.
inline void ExpectFieldsIdentical(const Field& want, const Field& got) {
  EXPECT_EQ(want.name, got.name);
  EXPECT_EQ(want.nullable, got.nullable) << want.name;
  EXPECT_EQ(want.metadata, got.metadata) << want.name;
  EXPECT_EQ(want.type->ToString(), got.type->ToString()) << want.name;
  ASSERT_EQ(want.type->children().size(), got.type->children().size()) << want.name;
  for (size_t i = 0; i < want.type->children().size(); ++i)
    ExpectFieldsIdentical(*want.type->child(i), *got.type->child(i));
}

inline void ExpectSchemasIdentical(const Schema& want, const Schema& got) {
  EXPECT_EQ(want.metadata(), got.metadata());
  ASSERT_EQ(want.num_fields(), got.num_fields());
  for (size_t i = 0; i < want.num_fields(); ++i) ExpectFieldsIdentical(*want.field(i), *got.field(i));
}

inline void ExpectBatchesEqual(const RecordBatch& want, const RecordBatch& got) {
  ASSERT_EQ(want.num_columns(), got.num_columns());
  EXPECT_EQ(want.num_rows(), got.num_rows());
  for (size_t i = 0; i < want.num_columns(); ++i) {
    const ArrayData& w = *want.column(i);
    const ArrayData& g = *got.column(i);
    EXPECT_TRUE(ArraysEqual(w, g)) << want.schema()->field(i)->name;
    EXPECT_EQ(w.null_count, g.null_count) << want.schema()->field(i)->name;
    EXPECT_EQ(w.buffers[0] == nullptr, g.buffers[0] == nullptr) << want.schema()->field(i)->name;
    for (size_t r = 0; r < size_t(w.length); ++r)
      EXPECT_TRUE(GetScalar(w, int64_t(r)).Equals(GetScalar(g, int64_t(r))))
          << want.schema()->field(i)->name << " row " << r;
  }
}

}  // namespace lancelet::testing
