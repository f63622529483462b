#include "sql/exec.h"

#include <algorithm>

#include "lancelet/builder.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lancelet/decimal.h"
#include "expr/cast.h"
#include "io/object_store.h"
#include "lancelet/scalar.h"
#include "lancelet/text.h"
#include "table/manifest_store.h"
#include "lancelet/progress.h"
#include "sql/interrupt.h"
#include "sql/profile.h"

namespace lancelet::sql {

int64_t DefaultMemoryBudget() {
  const char* text = std::getenv("LANCELET_SQL_MEMORY_MB");
  const long long mb = text && *text ? std::atoll(text) : 0;
  return (mb > 0 ? mb : 256) << 20;
}

std::string TablePathIn(const std::string& db_dir, const std::string& table) {
  return io::JoinPath(db_dir, table + ".lance");
}

bool TableExistsIn(const std::string& db_dir, const std::string& table, const StorageOptions& options) {
  auto [store, path] = io::OpenStore(TablePathIn(db_dir, table), options);
  const std::string versions = io::JoinPath(path, table::kVersionsDir);
  return store->Exists(versions) || !store->List(versions).empty();
}

std::string Context::TablePath(const std::string& table) const { return TablePathIn(db_dir, table); }

void Context::Fail(int position, const std::string& detail) const {
  throw ParseError(detail, position, text ? *text : std::string());
}

bool TableExists(const Context& ctx, const std::string& name) {
  return TableExistsIn(ctx.db_dir, name, ctx.storage_options);
}

namespace {

// TIMESTAMP AS OF t: the latest version committed at or before t.
uint64_t VersionAsOf(const Context& ctx, const TableRef& ref, const OpenOptions& options) {
  Scalar at;
  try {
    at = EvaluateConstant(*ref.as_of, DataType::Timestamp(TimeUnit::kMicro));
  } catch (const Error&) {
    ctx.Fail(ref.as_of->position, "TIMESTAMP AS OF takes a timestamp, such as '2024-01-31 12:00:00' (UTC)");
  }
  if (at.is_null()) ctx.Fail(ref.as_of->position, "TIMESTAMP AS OF takes a timestamp, not NULL");
  const int64_t at_micros = at.as_int();
  std::optional<uint64_t> version;
  for (const VersionInfo& v : Dataset::Open(ctx.TablePath(ref.name), std::nullopt, options)->ListVersions())
    if (v.timestamp_nanos / 1000 <= at_micros) version = v.version;
  if (!version)
    ctx.Fail(ref.as_of->position, fmt::format("table '{}' has no version committed at or before {} (UTC)", ref.name,
                                              FormatValue(*MakeArray(at.type, {at}), 0, ValueStyle::kTable)));
  return *version;
}

}  // namespace

DatasetPtr OpenTable(const Context& ctx, const TableRef& ref) {
  if (!TableExists(ctx, ref.name)) ctx.Fail(ref.position, fmt::format("table '{}' does not exist", ref.name));
  try {
    OpenOptions options;
    options.storage_options = ctx.storage_options;
    if (ref.as_of) return Dataset::Open(ctx.TablePath(ref.name), VersionAsOf(ctx, ref, options), options);
    return Dataset::Open(ctx.TablePath(ref.name), ref.version, options);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kNotFound && ref.version)
      ctx.Fail(ref.position, fmt::format("table '{}' has no version {}", ref.name, *ref.version));
    throw;
  }
}

namespace {

// Resolves a read_csv / read_json path: as given (relative to the working directory),
// else relative to the database directory.
std::string ResolveFilePath(const Context& ctx, const TableRef& ref) {
  auto exists = [&](const std::string& uri) {
    auto [store, path] = io::OpenStore(uri, ctx.storage_options);
    return store->Exists(path);
  };
  if (ref.name.starts_with("/") || ref.name.find("://") != std::string::npos || exists(ref.name)) return ref.name;
  const std::string in_db = io::JoinPath(ctx.db_dir, ref.name);
  if (exists(in_db)) return in_db;
  ctx.Fail(ref.position, fmt::format("file '{}' does not exist", ref.name));
}

}  // namespace

ArrayPtr Strings(const std::vector<std::string>& values) {
  BinaryBuilder b(DataType::Utf8());
  for (const auto& v : values) b.Append(v);
  return b.Finish();
}

ArrayPtr UInt64s(const std::vector<uint64_t>& values) {
  FixedWidthBuilder<uint64_t> b(DataType::UInt64());
  for (uint64_t v : values) b.Append(v);
  return b.Finish();
}

std::vector<std::string> ListTables(const std::string& db_dir, const StorageOptions& options) {
  auto [store, dir] = io::OpenStore(db_dir, options);
  std::vector<std::string> names;
  for (const std::string& entry : store->List(dir)) {
    if (entry.size() <= 6 || !entry.ends_with(".lance")) continue;
    std::string name = entry.substr(0, entry.size() - 6);
    if (TableExistsIn(db_dir, name, options)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

std::unique_ptr<RecordBatchReader> OpenSourceRows(const Context& ctx, const TableRef& ref, bool with_row_id,
                                                  bool with_row_address, const ExprPtr& filter,
                                                  const SchemaPtr& column_types,
                                                  const std::optional<std::vector<std::string>>& columns,
                                                  DatasetPtr opened) {
  if (ctx.schema_only && ref.kind != TableRef::Kind::kSubquery) {
    Context reading = ctx;
    reading.schema_only = false;
    const SchemaPtr schema = OpenSourceRows(reading, ref, with_row_id, with_row_address, filter, column_types, columns,
                                        std::move(opened))->schema();
    return BatchesReader(schema, {});
  }
  if (ref.kind == TableRef::Kind::kSubquery && !ref.view.empty()) {
    // Positions in a view's query are its own text's: the error names the view instead.
    try {
      return OpenSelect(ctx, *ref.subquery);
    } catch (const ParseError& e) {
      ctx.Fail(ref.position, fmt::format("view '{}': {}", ref.view, e.detail()));
    }
  }
  if (ref.kind == TableRef::Kind::kSubquery) return OpenSelect(ctx, *ref.subquery);
  if (ref.kind == TableRef::Kind::kSeries) return OpenSeries(ctx, ref);
  if (ref.kind == TableRef::Kind::kFunctions) return OpenFunctionCatalog();
  if (ref.kind == TableRef::Kind::kVectorSearch) {
    DatasetPtr ds = opened ? std::move(opened) : OpenTable(ctx, ref);
    VectorQuery query = *ref.search;
    if (with_row_id || with_row_address) {
      query.columns.emplace();
      for (const auto& f : ds->schema()->fields())
        if (f->name != query.column) query.columns->push_back(f->name);
      if (with_row_id) query.columns->push_back("_rowid");
      if (with_row_address) query.columns->push_back("_rowaddr");
    }
    return ds->Search(query);
  }
  if (ref.kind == TableRef::Kind::kChanges) {
    DatasetPtr ds = opened ? std::move(opened) : OpenTable(ctx, ref);
    ChangesOptions options;
    options.to_version = ref.changes_to;
    return ds->Changes(ref.changes_from, options);
  }
  if (ref.kind == TableRef::Kind::kTable) {
    DatasetPtr ds = opened ? std::move(opened) : OpenTable(ctx, ref);
    auto scan = ds->NewScan();
    if (columns) scan.Columns(*columns);
    scan.Filter(filter);  // the statement's own expression: no trip through text
    scan.WithRowId(with_row_id).WithRowAddress(with_row_address);
    auto reader = ReadAhead(scan.Open());
    if (!ctx.progress) return reader;
    return CountedOn(std::move(reader), std::make_unique<ProgressLine>(true, "scanning " + ref.name, ds->CountRows()));
  }
  std::string path = ResolveFilePath(ctx, ref);
  TextReadOptions options;
  options.delimiter = ref.delimiter;
  options.header = ref.header;
  options.schema = ref.columns;
  if (!options.schema) options.column_types = column_types;
  options.storage_options = ctx.storage_options;
  return ReadAhead(ref.kind == TableRef::Kind::kCsv ? OpenCsv(path, options) : OpenJsonLines(path, options));
}

}  // namespace

std::unique_ptr<RecordBatchReader> OpenSource(const Context& ctx, const TableRef& ref, bool with_row_id,
                                              bool with_row_address, const ExprPtr& filter,
                                              const SchemaPtr& column_types,
                                              const std::optional<std::vector<std::string>>& columns,
                                              DatasetPtr opened) {
  // Every operator pulls its rows from a source, so a statement stops within a batch of Ctrl-C.
  auto name = [&] {
    std::string name;
    switch (ref.kind) {
      case TableRef::Kind::kTable: name = "scan " + ref.name; break;
      case TableRef::Kind::kCsv: name = "read_csv '" + ref.name + "'"; break;
      case TableRef::Kind::kJson: name = "read_json '" + ref.name + "'"; break;
      case TableRef::Kind::kSubquery: name = ref.view.empty() ? "subquery " + ref.qualifier() : "view " + ref.view; break;
      case TableRef::Kind::kVectorSearch: name = "vector_search " + ref.name; break;
      case TableRef::Kind::kChanges: name = "table_changes " + ref.name; break;
      case TableRef::Kind::kSeries: case TableRef::Kind::kFunctions: name = ref.name + "()"; break;
    }
    if (filter) name += " WHERE " + ToString(*filter);
    if (columns) name += columns->empty() ? " (no columns)" : fmt::format(" ({})", fmt::join(*columns, ", "));
    return name;
  };
  return Profiled(ctx, name,
                  Interruptible(OpenSourceRows(ctx, ref, with_row_id, with_row_address, filter, column_types, columns,
                                               std::move(opened))));
}

namespace {

class InMemoryReader final : public RecordBatchReader {
 public:
  InMemoryReader(SchemaPtr schema, std::vector<RecordBatchPtr> batches)
      : schema_(std::move(schema)), batches_(std::move(batches)) {}
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override { return next_ < batches_.size() ? batches_[next_++] : nullptr; }

 private:
  SchemaPtr schema_;
  std::vector<RecordBatchPtr> batches_;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<RecordBatchReader> BatchesReader(SchemaPtr schema, std::vector<RecordBatchPtr> batches) {
  return std::make_unique<InMemoryReader>(std::move(schema), std::move(batches));
}

RecordBatchPtr ReadAll(RecordBatchReader& reader) {
  std::vector<RecordBatchPtr> batches;
  while (auto b = reader.Next()) batches.push_back(b);
  if (batches.size() == 1) return batches[0];
  return RecordBatch::Concatenate(reader.schema(), batches);
}

RecordBatchPtr ReadSource(const Context& ctx, const TableRef& ref, bool with_row_id, bool with_row_address,
                          const ExprPtr& filter, const SchemaPtr& column_types,
                          const std::optional<std::vector<std::string>>& columns, DatasetPtr opened) {
  return ReadAll(*OpenSource(ctx, ref, with_row_id, with_row_address, filter, column_types, columns, std::move(opened)));
}

ExprPtr MapColumns(const ExprPtr& expr, const std::function<ExprPtr(const Expr&)>& map) {
  if (!expr) return expr;
  if (expr->kind == ExprKind::kColumn) {
    ExprPtr replaced = map(*expr);
    return replaced ? replaced : expr;
  }
  bool changed = false;
  std::vector<ExprPtr> args;
  for (const auto& a : expr->args) {
    args.push_back(MapColumns(a, map));
    changed |= args.back() != a;
  }
  if (!changed) return expr;
  auto copy = std::make_shared<Expr>(*expr);
  copy->args = std::move(args);
  return copy;
}

ExprPtr LiteralAt(const Expr& at, Scalar value) {
  auto node = std::make_shared<Expr>();
  node->kind = ExprKind::kLiteral;
  node->position = at.position;
  node->source = at.source;
  node->literal = std::move(value);
  return node;
}

ExprPtr RenamedColumn(const Expr& column, std::vector<std::string> path) {
  auto copy = std::make_shared<Expr>(column);
  copy->path = std::move(path);
  return copy;
}

bool HasSubquery(const ExprPtr& e) {
  if (!e) return false;
  return e->kind == ExprKind::kSubquery || std::any_of(e->args.begin(), e->args.end(), HasSubquery);
}

bool ContainsWindow(const ExprPtr& e) {
  if (!e) return false;
  if (e->kind == ExprKind::kCall && e->window) return true;
  return std::any_of(e->args.begin(), e->args.end(), ContainsWindow);
}

void AndOnto(ExprPtr& to, const ExprPtr& term) { to = to ? Expr::Binary(BinaryOp::kAnd, to, term) : term; }

std::vector<ExprPtr> Conjuncts(const ExprPtr& e) {
  if (!e) return {};
  if (e->kind != ExprKind::kBinary || e->binary_op != BinaryOp::kAnd) return {e};
  std::vector<ExprPtr> terms = Conjuncts(e->args[0]);
  for (auto& t : Conjuncts(e->args[1])) terms.push_back(std::move(t));
  return terms;
}

ExprPtr StripQualifier(const ExprPtr& expr, const std::vector<std::string>& qualifiers) {
  return MapColumns(expr, [&](const Expr& c) -> ExprPtr {
    if (c.path.size() < 2) return nullptr;
    for (const auto& q : qualifiers)
      if (c.path[0] == q) return RenamedColumn(c, std::vector<std::string>(c.path.begin() + 1, c.path.end()));
    return nullptr;
  });
}

ArrayPtr EvaluateOn(const ExprPtr& expr, const RecordBatch& batch) {
  return Evaluate(*Bind(*expr, *batch.schema()), batch);
}

ArrayPtr AssignColumn(const ArrayPtr& values, const Field& column) {
  if (values->type->Equals(*column.type)) return values;
  try {
    return AssignArray(*values, column.type);
  } catch (const Error& e) {
    ThrowInvalid("column '{}': {}", column.name, e.what());
  }
}

namespace {

int Sign(double d) { return d < 0 ? -1 : d > 0 ? 1 : 0; }

}  // namespace

int CompareScalars(const Scalar& a, const Scalar& b) {
  const auto& x = a.value;
  const auto& y = b.value;
  if (std::holds_alternative<double>(x) || std::holds_alternative<double>(y)) {
    double p = a.as_double(), q = b.as_double();
    bool pn = std::isnan(p), qn = std::isnan(q);
    if (pn || qn) return pn == qn ? 0 : pn ? 1 : -1;  // NaN sorts above every number
    return Sign(p - q);
  }
  if (std::holds_alternative<int64_t>(x) && std::holds_alternative<int64_t>(y)) {
    int64_t p = std::get<int64_t>(x), q = std::get<int64_t>(y);
    return p < q ? -1 : p > q ? 1 : 0;
  }
  if (std::holds_alternative<uint64_t>(x) && std::holds_alternative<uint64_t>(y)) {
    uint64_t p = std::get<uint64_t>(x), q = std::get<uint64_t>(y);
    return p < q ? -1 : p > q ? 1 : 0;
  }
  if (std::holds_alternative<int64_t>(x) && std::holds_alternative<uint64_t>(y)) {
    int64_t p = std::get<int64_t>(x);
    return p < 0 ? -1 : CompareScalars(Scalar{b.type, uint64_t(p)}, b);
  }
  if (std::holds_alternative<uint64_t>(x) && std::holds_alternative<int64_t>(y)) return -CompareScalars(b, a);
  if (std::holds_alternative<bool>(x) && std::holds_alternative<bool>(y)) return int(a.as_bool()) - int(b.as_bool());
  if (std::holds_alternative<std::string>(x) && std::holds_alternative<std::string>(y)) {
    if (a.type && a.type->is_decimal()) return CompareDecimals(a.as_string(), b.as_string());
    int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (std::holds_alternative<std::vector<Scalar>>(x) && std::holds_alternative<std::vector<Scalar>>(y)) {
    const auto& p = a.as_list();
    const auto& q = b.as_list();
    for (size_t i = 0; i < p.size() && i < q.size(); ++i) {
      if (p[i].is_null() || q[i].is_null()) {
        if (p[i].is_null() != q[i].is_null()) return p[i].is_null() ? 1 : -1;
        continue;
      }
      if (int c = CompareScalars(p[i], q[i])) return c;
    }
    return p.size() < q.size() ? -1 : p.size() > q.size() ? 1 : 0;
  }
  ThrowInvalid("cannot compare values of types {} and {}", a.type ? a.type->ToString() : "null",
               b.type ? b.type->ToString() : "null");
}

std::string ValueKey(const ArrayData& array, int64_t row) {
  if (array.IsNull(row)) return "\x01";
  return "\x02" + FormatValue(array, row, ValueStyle::kJson);
}

RecordBatchPtr EmptyRowsBatch(int64_t rows) {
  return std::make_shared<RecordBatch>(std::make_shared<Schema>(), std::vector<ArrayPtr>{}, rows);
}

std::string RowCount(uint64_t n) { return fmt::format("{} row{}", n, n == 1 ? "" : "s"); }

}  // namespace lancelet::sql
