#include <gtest/gtest.h>

#include "expr_test_util.h"

namespace lancelet {
namespace {

using expr_test::ErrorOf;

std::shared_ptr<Schema> TestSchema() {
  auto point = DataType::Struct({Field::Make("x", DataType::Float64()), Field::Make("Y", DataType::Int32())});
  return std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("id", DataType::Int32()), Field::Make("name", DataType::Utf8()),
      Field::Make("Score", DataType::Float32()), Field::Make("u8", DataType::UInt8()),
      Field::Make("u64", DataType::UInt64()), Field::Make("i8", DataType::Int8()),
      Field::Make("d", DataType::Date32()), Field::Make("ts", DataType::Timestamp(TimeUnit::kMilli)),
      Field::Make("pt", point), Field::Make("a.b", DataType::Int64()),
      Field::Make("vec", DataType::FixedSizeList(DataType::Float32(), 2)), Field::Make("flag", DataType::Bool()),
      Field::Make("_rowid", DataType::UInt64())});
}

BoundExprPtr B(const std::string& text) { return Bind(*ParseExpression(text), *TestSchema()); }
std::string TypeOf(const std::string& text) { return B(text)->type->ToString(); }
std::string BindError(const std::string& text) {
  return ErrorOf([&] { B(text); });
}

TEST(ExprBinder, ResolvesColumns) {
  auto b = B("id");
  EXPECT_EQ(b->kind, BoundKind::kColumn);
  EXPECT_EQ(b->column_index, 0);
  EXPECT_EQ(B("score")->column_name, "Score");  // unique case-insensitive match
  EXPECT_EQ(B("\"Score\"")->column_index, 2);
  auto y = B("pt.y");
  EXPECT_EQ(y->column_name, "pt");
  EXPECT_EQ(y->child_path, (std::vector<int>{1}));
  EXPECT_EQ(y->type->ToString(), "int32");
  EXPECT_EQ(B("a.b")->column_name, "a.b");  // a top-level name containing a dot
  EXPECT_EQ(B("_rowid")->type->ToString(), "uint64");
}

TEST(ExprBinder, ExactMatchBeatsCaseInsensitive) {
  Schema schema({Field::Make("x", DataType::Int32()), Field::Make("X", DataType::Utf8())});
  EXPECT_EQ(Bind(*ParseExpression("X"), schema)->column_index, 1);
  EXPECT_EQ(Bind(*ParseExpression("x"), schema)->column_index, 0);
  Schema two({Field::Make("ab", DataType::Int32()), Field::Make("AB", DataType::Utf8())});
  EXPECT_EQ(ErrorOf([&] { Bind(*ParseExpression("Ab = 1"), two); }),
            "column reference 'Ab' is ambiguous: it matches 'ab' and 'AB' at position 1 in \"Ab = 1\"");
}

TEST(ExprBinder, UnknownColumnsAndFields) {
  Schema small({Field::Make("id", DataType::Int32()), Field::Make("name", DataType::Utf8())});
  EXPECT_EQ(ErrorOf([&] { Bind(*ParseExpression("id > 1 AND nme = 'x'"), small); }),
            "unknown column 'nme' (columns: id, name) at position 12 in \"id > 1 AND nme = 'x'\"");
  EXPECT_EQ(BindError("pt.z"), "struct 'pt' has no field 'z' at position 1 in \"pt.z\"");
  EXPECT_EQ(BindError("id.z"), "'id' is int32, not a struct, so it has no field 'z' at position 1 in \"id.z\"");
}

TEST(ExprBinder, ArithmeticTypes) {
  EXPECT_EQ(TypeOf("i8 + i8"), "int8");
  EXPECT_EQ(TypeOf("id + i8"), "int32");
  EXPECT_EQ(TypeOf("id + 1"), "int64");
  EXPECT_EQ(TypeOf("u8 + u64"), "uint64");
  EXPECT_EQ(TypeOf("u8 + i8"), "int16");
  EXPECT_EQ(TypeOf("u64 + id"), "int64");
  EXPECT_EQ(TypeOf("id * 1.5"), "float64");
  EXPECT_EQ(TypeOf("score * score"), "float32");
  EXPECT_EQ(TypeOf("score + 1"), "float64");
  EXPECT_EQ(TypeOf("id / 2"), "int64");
  EXPECT_EQ(TypeOf("-u8"), "int64");
  EXPECT_EQ(TypeOf("-i8"), "int8");
  EXPECT_EQ(TypeOf("NULL + id"), "int32");
  EXPECT_EQ(TypeOf("NULL"), "bool");
}

TEST(ExprBinder, PredicateTypes) {
  EXPECT_EQ(TypeOf("id > 1 AND name LIKE 'x%'"), "bool");
  EXPECT_EQ(TypeOf("id IN (1, 2.5, NULL)"), "bool");
  EXPECT_EQ(TypeOf("d BETWEEN '2024-01-01' AND DATE '2024-02-01'"), "bool");
  EXPECT_EQ(TypeOf("vec = [1, 2]"), "bool");
  EXPECT_EQ(TypeOf("flag"), "bool");
}

TEST(ExprBinder, TypeErrorsNameTypesAndPosition) {
  EXPECT_EQ(BindError("name = 5"), "cannot compare utf8 with int64 at position 6 in \"name = 5\"");
  EXPECT_EQ(BindError("id < 'x'"), "cannot compare int32 with utf8 at position 4 in \"id < 'x'\"");
  EXPECT_EQ(BindError("flag = 1"), "cannot compare bool with int64 at position 6 in \"flag = 1\"");
  EXPECT_EQ(BindError("id IN (1, 'two')"), "cannot compare int32 with utf8 at position 4 in \"id IN (1, 'two')\"");
  EXPECT_EQ(BindError("name + 1"), "cannot apply + to utf8 and int64 at position 6 in \"name + 1\"");
  EXPECT_EQ(BindError("id AND flag"), "AND expects boolean operands, got int32 at position 4 in \"id AND flag\"");
  EXPECT_EQ(BindError("NOT name"), "NOT expects boolean operands, got utf8 at position 1 in \"NOT name\"");
  EXPECT_EQ(BindError("id LIKE 'x'"), "LIKE needs a string or binary value, got int32 at position 4 in \"id LIKE 'x'\"");
  EXPECT_EQ(BindError("-name"), "cannot negate a utf8 value at position 1 in \"-name\"");
  EXPECT_EQ(BindError("vec < [1, 2]"),
            "fixed_size_list<float32,2> values can only be compared with = and <> at position 5 in \"vec < [1, 2]\"");
  EXPECT_EQ(BindError("vec = [1, 2, 3]"),
            "cannot cast a list of 3 items to fixed_size_list<float32,2> at position 7 in \"vec = [1, 2, 3]\"");
  EXPECT_EQ(BindError("CAST(pt AS int32)"),
            "cannot cast struct<x:float64,Y:int32> to int32 at position 1 in \"CAST(pt AS int32)\"");
  EXPECT_EQ(BindError("d > 'soon'"), "cannot cast 'soon' to date32 at position 5 in \"d > 'soon'\"");
}

TEST(ExprBinder, Functions) {
  EXPECT_EQ(TypeOf("abs(i8)"), "int8");
  EXPECT_EQ(TypeOf("lower(name)"), "utf8");
  EXPECT_EQ(TypeOf("length(name)"), "int64");
  EXPECT_EQ(TypeOf("coalesce(id, i8, 0)"), "int64");
  EXPECT_EQ(TypeOf("coalesce(NULL, name)"), "utf8");
  EXPECT_EQ(TypeOf("round(score, 1)"), "float32");
  EXPECT_EQ(TypeOf("ROUND(id)"), "int32");
  EXPECT_EQ(BindError("nosuch(id)"),
            "unknown function 'nosuch' (SELECT * FROM lancelet_functions() lists every function) at position 1 in "
            "\"nosuch(id)\"");
  EXPECT_EQ(BindError("lenght(name)"),
            "unknown function 'lenght'; did you mean length? (SELECT * FROM lancelet_functions() lists every "
            "function) at position 1 in \"lenght(name)\"");
  EXPECT_EQ(BindError("abs(name)"), "abs() expects a number, got utf8 at position 1 in \"abs(name)\"");
  EXPECT_EQ(BindError("lower(id, 1)"), "lower() takes 1 argument, got 2 at position 1 in \"lower(id, 1)\"");
  EXPECT_EQ(BindError("coalesce(id, name)"),
            "coalesce() arguments have no common type: int32 and utf8 at position 1 in \"coalesce(id, name)\"");
  EXPECT_EQ(BindError("count(*)"), "count(*...) is an aggregate, which is not allowed here at position 1 in \"count(*)\"");
}

TEST(ExprBinder, LiteralsAreConvertedToTheColumnsType) {
  // Temporal literals meet the column at the finer unit.
  auto b = B("ts > DATE '2024-01-02'");
  ASSERT_EQ(b->args[1]->kind, BoundKind::kLiteral);
  EXPECT_TRUE(b->args[1]->literal.Equals(Scalar{DataType::Timestamp(TimeUnit::kMilli), int64_t(1704153600000)}));
  auto c = B("ts < TIMESTAMP '2024-01-02 00:00:00.000001'");
  EXPECT_EQ(c->args[0]->kind, BoundKind::kCast);  // the column is widened to microseconds
  EXPECT_EQ(c->args[0]->type->ToString(), "timestamp<us>");
  auto s = B("score = 0.1");
  EXPECT_TRUE(s->args[1]->literal.Equals(Scalar{DataType::Float32(), double(0.1f)}));
  auto v = B("vec = [1, 2]");
  EXPECT_EQ(v->args[1]->type->ToString(), "fixed_size_list<float32,2>");
}

}  // namespace
}  // namespace lancelet
