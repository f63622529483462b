// DESCRIBE of a query (its columns, found by running it over no rows) and SUMMARIZE of a
// table or a query (per column: min, max, distinct values, mean, deviation, quartiles,
// count and NULL share, from one aggregate pass), shaped as DuckDB's.
#include <cmath>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "expr/function_catalog.h"
#include "sql/exec.h"

namespace lancelet::sql {

namespace {

// The rows of DESCRIBE: a column's name, type and whether it may hold NULLs.
RecordBatchPtr DescribeSchema(const Schema& described) {
  std::vector<std::string> names, types, nulls;
  for (const auto& f : described.fields()) {
    names.push_back(f->name);
    types.push_back(f->type->ToString());
    nulls.push_back(f->nullable ? "YES" : "NO");
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("column_name", DataType::Utf8()),
                                                               Field::Make("column_type", DataType::Utf8()),
                                                               Field::Make("null", DataType::Utf8())});
  return std::make_shared<RecordBatch>(schema, std::vector<ArrayPtr>{Strings(names), Strings(types), Strings(nulls)},
                                       int64_t(names.size()));
}

// The schema of `source`'s rows, without reading them.
SchemaPtr SourceSchema(const Context& ctx, const TableRef& source) {
  Context empty = ctx;
  empty.schema_only = true;
  return OpenSource(empty, source, false, false, nullptr, nullptr, std::nullopt)->schema();
}

bool Orderable(const DataType& t) {
  return t.is_numeric() || t.is_string() || t.is_temporal() || t.id() == TypeId::kBool || t.is_decimal();
}

ExprPtr Aggregate(const std::string& f, ExprPtr x, std::vector<ExprPtr> more = {}) {
  std::vector<ExprPtr> args = {std::move(x)};
  for (auto& m : more) args.push_back(std::move(m));
  return Expr::Call(f, std::move(args));
}

ExprPtr AsText(ExprPtr e) { return Expr::Cast(std::move(e), DataType::Utf8()); }

}  // namespace

RecordBatchPtr RunDescribe(const Context& ctx, const TableRef& table) {
  return DescribeSchema(*OpenTable(ctx, table)->schema());
}

RecordBatchPtr RunDescribeQuery(const Context& ctx, const SelectStmt& query) {
  Context empty = ctx;
  empty.schema_only = true;
  return DescribeSchema(*OpenSelect(empty, query)->schema());
}

RecordBatchPtr RunSummarize(const Context& ctx, const TableRef& source) {
  const SchemaPtr columns = SourceSchema(ctx, source);
  // One row: count(*), then per column min, max, count(DISTINCT), avg, stddev, the three
  // quartiles (numbers only) and count.
  constexpr size_t kPerColumn = 9;
  SelectStmt stmt;
  stmt.from = source;
  auto count_all = std::make_shared<Expr>(*Expr::Call("count", {}));
  count_all->star_argument = true;
  stmt.items.push_back({count_all, "__rows"});
  const ExprPtr null_text = Expr::Literal(Scalar::Null(DataType::Utf8()));
  for (const auto& f : columns->fields()) {
    const ExprPtr c = Expr::Column(f->name);
    const bool orderable = Orderable(*f->type), numeric = f->type->is_numeric();
    auto distinct = std::make_shared<Expr>(*Aggregate("count", c));
    distinct->distinct = true;
    const std::vector<ExprPtr> items = {
        orderable ? AsText(Aggregate("min", c)) : null_text,
        orderable ? AsText(Aggregate("max", c)) : null_text,
        orderable ? ExprPtr(distinct) : Expr::Literal(Scalar::Null(DataType::Int64())),
        numeric ? AsText(Aggregate("avg", c)) : null_text,
        numeric ? AsText(Aggregate("stddev", c)) : null_text,
        numeric ? AsText(Aggregate("quantile_cont", c, {Expr::Literal(Scalar{DataType::Float64(), 0.25})})) : null_text,
        numeric ? AsText(Aggregate("quantile_cont", c, {Expr::Literal(Scalar{DataType::Float64(), 0.5})})) : null_text,
        numeric ? AsText(Aggregate("quantile_cont", c, {Expr::Literal(Scalar{DataType::Float64(), 0.75})})) : null_text,
        Aggregate("count", c)};
    for (size_t k = 0; k < items.size(); ++k) stmt.items.push_back({items[k], fmt::format("__{}_{}", f->name, k)});
  }
  const RecordBatchPtr stats = RunSelect(ctx, stmt);

  const int64_t rows = GetScalar(*stats->column(0), 0).as_int();
  std::vector<std::string> names, types;
  std::vector<std::vector<std::optional<std::string>>> text(7);  // min, max, avg, std, q25, q50, q75
  FixedWidthBuilder<int64_t> unique(DataType::Int64()), counts(DataType::Int64());
  FixedWidthBuilder<double> null_share(DataType::Float64());
  const std::vector<size_t> text_items = {0, 1, 3, 4, 5, 6, 7};
  for (size_t i = 0; i < columns->num_fields(); ++i) {
    names.push_back(columns->field(i)->name);
    types.push_back(columns->field(i)->type->ToString());
    auto item = [&](size_t k) { return GetScalar(*stats->column(int(1 + i * kPerColumn + k)), 0); };
    for (size_t t = 0; t < text_items.size(); ++t) {
      const Scalar v = item(text_items[t]);
      text[t].push_back(v.is_null() ? std::nullopt : std::optional<std::string>(v.as_string()));
    }
    const Scalar distinct = item(2);
    if (distinct.is_null()) unique.AppendNull();
    else unique.Append(distinct.as_int());
    counts.Append(rows);
    const int64_t valid = item(8).as_int();
    null_share.Append(rows == 0 ? 0.0 : std::round(10000.0 * double(rows - valid) / double(rows)) / 100);
  }
  auto nullable_strings = [](const std::vector<std::optional<std::string>>& values) {
    BinaryBuilder b(DataType::Utf8());
    for (const auto& v : values) {
      if (v) b.Append(*v);
      else b.AppendNull();
    }
    return b.Finish();
  };
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> out;
  auto add = [&](const std::string& name, ArrayPtr a) {
    fields.push_back(Field::Make(name, a->type));
    out.push_back(std::move(a));
  };
  add("column_name", Strings(names));
  add("column_type", Strings(types));
  add("min", nullable_strings(text[0]));
  add("max", nullable_strings(text[1]));
  add("approx_unique", unique.Finish());
  add("avg", nullable_strings(text[2]));
  add("std", nullable_strings(text[3]));
  add("q25", nullable_strings(text[4]));
  add("q50", nullable_strings(text[5]));
  add("q75", nullable_strings(text[6]));
  add("count", counts.Finish());
  add("null_percentage", null_share.Finish());
  return std::make_shared<RecordBatch>(std::make_shared<Schema>(fields), std::move(out), int64_t(names.size()));
}

std::unique_ptr<RecordBatchReader> OpenFunctionCatalog() {
  std::vector<std::string> columns[4];
  for (const FunctionDoc& f : FunctionCatalog()) {
    columns[0].emplace_back(f.name);
    columns[1].emplace_back(f.kind);
    columns[2].emplace_back(f.arguments);
    columns[3].emplace_back(f.description);
  }
  const char* names[4] = {"function_name", "function_type", "arguments", "description"};
  std::vector<FieldPtr> fields;
  std::vector<ArrayPtr> arrays;
  for (int i = 0; i < 4; ++i) {
    fields.push_back(Field::Make(names[i], DataType::Utf8()));
    arrays.push_back(Strings(columns[i]));
  }
  auto schema = std::make_shared<Schema>(fields);
  const auto rows = int64_t(columns[0].size());
  return BatchesReader(schema, {std::make_shared<RecordBatch>(schema, std::move(arrays), rows)});
}

}  // namespace lancelet::sql
