// INSERT, UPDATE, DELETE, CREATE TABLE and DROP TABLE. Each is at most one commit.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "io/object_store.h"
#include "lancelet/scalar.h"
#include "sql/correlated.h"
#include "sql/exec.h"

namespace lancelet::sql {

namespace {

const Field& FindColumn(const Context& ctx, const Schema& schema, const std::string& name, int position,
                        const std::string& table) {
  int i = schema.FieldIndex(name);
  if (i < 0) ctx.Fail(position, fmt::format("table '{}' has no column '{}' (columns: {})", table, name, schema.ToString()));
  return *schema.field(size_t(i));
}

// Target columns of an INSERT: the listed ones (each once), or all of them.
std::vector<int> TargetColumns(const Context& ctx, const Schema& schema, const std::vector<std::string>& names,
                               int position, const std::string& table) {
  std::vector<int> out;
  if (names.empty()) {
    for (size_t i = 0; i < schema.num_fields(); ++i) out.push_back(int(i));
    return out;
  }
  for (const auto& n : names) {
    FindColumn(ctx, schema, n, position, table);
    int i = schema.FieldIndex(n);
    if (std::find(out.begin(), out.end(), i) != out.end())
      ctx.Fail(position, fmt::format("column '{}' is listed twice", n));
    out.push_back(i);
  }
  return out;
}

// Options of CREATE TABLE ... WITH (...).
WriteOptions CreateOptions(const Context& ctx, const CreateTableStmt& stmt) {
  WriteOptions options;
  options.mode = WriteMode::kCreate;
  for (const auto& [key, value] : stmt.with) {
    if (key == "stable_row_ids") {
      if (value != "true" && value != "false")
        ctx.Fail(stmt.table.position, fmt::format("option stable_row_ids takes true or false, not '{}'", value));
      options.enable_stable_row_ids = value == "true";
    } else if (key == "file_version" || key == "data_storage_version") {
      if (value != "2.0" && value != "2.1" && value != "2.2")
        ctx.Fail(stmt.table.position, fmt::format("option {} takes 2.0, 2.1 or 2.2, not '{}'", key, value));
      options.file_version = value;
    } else if (key == "max_rows_per_file") {
      options.max_rows_per_file = std::stoll(value);
    } else {
      ctx.Fail(stmt.table.position,
               fmt::format("unknown table option '{}' (stable_row_ids, file_version, max_rows_per_file)", key));
    }
  }
  return options;
}

// The table's columns plus the pseudo-columns, for checking expressions.
Schema WithPseudoColumns(const Schema& schema) {
  auto fields = schema.fields();
  fields.push_back(Field::Make("_rowid", DataType::UInt64(), false));
  fields.push_back(Field::Make("_rowaddr", DataType::UInt64(), false));
  return Schema(fields);
}

std::string VersionNote(const std::string& table, const DatasetPtr& before, const DatasetPtr& after) {
  if (before && after->version() == before->version())
    return fmt::format("{} unchanged at version {}", table, after->version());
  return fmt::format("{} is now at version {}", table, after->version());
}

// The types a file source of INSERT ... SELECT is read with: SELECT * reads the target
// columns by name; a selected bare column reads as the column it is inserted into.
SchemaPtr InsertSourceTypes(const SelectStmt& select, const Schema& schema, const std::vector<int>& targets) {
  std::vector<FieldPtr> fields;
  auto add = [&](const std::string& name, const TypePtr& type) {
    for (const auto& f : fields)
      if (f->name == name) return;
    fields.push_back(Field::Make(name, type));
  };
  if (select.items.size() == 1 && !select.items[0].expr) {
    for (int t : targets) add(schema.field(size_t(t))->name, schema.field(size_t(t))->type);
  }
  for (size_t i = 0; i < select.items.size() && i < targets.size(); ++i) {
    const ExprPtr& e = select.items[i].expr;
    if (e && e->kind == ExprKind::kColumn && e->path.size() == 1) add(e->path[0], schema.field(size_t(targets[i]))->type);
  }
  return std::make_shared<Schema>(std::move(fields));
}

}  // namespace

// A batch of the table's schema from values for some of its columns (the rest NULL).
RecordBatchPtr FillBatch(const Schema& schema, const std::vector<int>& targets, const std::vector<ArrayPtr>& values,
                         int64_t rows) {
  std::vector<ArrayPtr> columns;
  for (size_t i = 0; i < schema.num_fields(); ++i) {
    auto it = std::find(targets.begin(), targets.end(), int(i));
    columns.push_back(it == targets.end() ? MakeNullArray(schema.field(i)->type, rows)
                                          : AssignColumn(values[size_t(it - targets.begin())], *schema.field(i)));
  }
  return std::make_shared<RecordBatch>(std::make_shared<Schema>(schema.fields()), columns, rows);
}

// The rows of a VALUES list, each value cast to its target column's type.
RecordBatchPtr ValuesBatch(const Context& ctx, const Schema& schema, const std::vector<int>& targets,
                           const std::vector<std::vector<ExprPtr>>& rows, int position) {
  std::vector<std::vector<Scalar>> values(targets.size());
  for (const auto& row : rows) {
    if (row.size() != targets.size())
      ctx.Fail(row.empty() ? position : row[0]->position,
               fmt::format("VALUES row has {} value{} but {} column{} are inserted", row.size(),
                           row.size() == 1 ? "" : "s", targets.size(), targets.size() == 1 ? "" : "s"));
    for (size_t i = 0; i < row.size(); ++i)
    {
      const Field& field = *schema.field(size_t(targets[i]));
      values[i].push_back(EvaluateConstant(*Expr::Assign(row[i], field.type, field.name)));
    }
  }
  std::vector<ArrayPtr> arrays;
  for (size_t i = 0; i < targets.size(); ++i)
    arrays.push_back(MakeArray(schema.field(size_t(targets[i]))->type, values[i]));
  return FillBatch(schema, targets, arrays, int64_t(rows.size()));
}

std::string RunInsert(const Context& ctx, const InsertStmt& stmt) {
  auto ds = OpenTable(ctx, stmt.table);
  const Schema& schema = *ds->schema();
  auto targets = TargetColumns(ctx, schema, stmt.columns, stmt.table.position, stmt.table.name);
  RecordBatchPtr batch;
  if (stmt.select) {
    // A bare NULL in the select list has no type of its own: it takes its column's, as in
    // DuckDB (INSERT INTO t SELECT id, NULL FROM s), rather than the boolean an untyped
    // expression gets elsewhere.
    SelectStmt select = *stmt.select;
    for (size_t i = 0; i < select.items.size() && i < targets.size(); ++i) {
      const ExprPtr& e = select.items[i].expr;
      if (e && e->kind == ExprKind::kLiteral && e->literal.is_null() && !e->literal.type) {
        auto typed = std::make_shared<Expr>(*e);
        typed->literal = Scalar::Null(schema.field(size_t(targets[i]))->type);
        select.items[i].expr = typed;
      }
    }
    auto rows = RunSelect(ctx, select, InsertSourceTypes(select, schema, targets));
    if (rows->num_columns() != targets.size())
      ctx.Fail(stmt.table.position, fmt::format("INSERT into {} column{} but the SELECT returns {}", targets.size(),
                                                targets.size() == 1 ? "" : "s", rows->num_columns()));
    batch = FillBatch(schema, targets, rows->columns(), rows->num_rows());
  } else {
    batch = ValuesBatch(ctx, schema, targets, stmt.values, stmt.table.position);
  }
  for (size_t i = 0; i < schema.num_fields(); ++i)
    if (!schema.field(i)->nullable && batch->column(i)->null_count > 0)
      ctx.Fail(stmt.table.position, fmt::format("column '{}' of {} is NOT NULL", schema.field(i)->name, stmt.table.name));
  if (batch->num_rows() == 0) return fmt::format("INSERT 0 rows; {}", VersionNote(stmt.table.name, ds, ds));
  auto next = ds->Append({batch});
  return fmt::format("INSERT {}; {}", RowCount(uint64_t(batch->num_rows())), VersionNote(stmt.table.name, ds, next));
}

namespace {

// `e` with its subqueries' values in place. A subquery that names a column of `table`
// (correlated) is refused: UPDATE and DELETE re-evaluate their predicate when they retry
// after a concurrent commit, which a per-row subquery value cannot be.
ExprPtr UncorrelatedValues(const Context& ctx, const TableRef& table, const ExprPtr& e, const char* clause) {
  SelectStmt probe;
  probe.from = table;
  probe.where = e;
  Correlations correlated;
  MarkCorrelated(ctx, probe, correlated);
  if (!correlated.empty())
    ctx.Fail(e->position, fmt::format("a subquery in {} may not name a column of '{}' (correlated); use MERGE INTO "
                                      "{} USING (SELECT ...) ON ..., or x IN (SELECT ...) without naming it",
                                      clause, table.qualifier(), table.name));
  return WithSubqueryValues(ctx, e);
}

}  // namespace

std::string RunUpdate(const Context& ctx, const UpdateStmt& stmt) {
  auto ds = OpenTable(ctx, stmt.table);
  const Schema& schema = *ds->schema();
  std::vector<std::string> qualifiers = {stmt.table.name, stmt.table.qualifier()};
  std::vector<Dataset::SetExpression> set;
  for (const auto& s : stmt.set) {
    const Field& field = FindColumn(ctx, schema, s.column, s.position, stmt.table.name);
    for (const auto& other : set)
      if (other.column == s.column) ctx.Fail(s.position, fmt::format("column '{}' is set twice", s.column));
    ExprPtr e = StripQualifier(UncorrelatedValues(ctx, stmt.table, s.expr, "UPDATE's SET"), qualifiers);
    Bind(*Expr::Assign(e, field.type, field.name), WithPseudoColumns(schema));  // errors point into the statement
    set.push_back({s.column, e});
  }
  // The expressions go to the table as they are (never printed and parsed again), so an
  // error evaluating them points into the statement.
  ExprPtr predicate;
  if (stmt.where) {
    predicate = StripQualifier(UncorrelatedValues(ctx, stmt.table, stmt.where, "UPDATE's WHERE"), qualifiers);
    Bind(*predicate, WithPseudoColumns(schema));
  }
  uint64_t matched = 0;
  WriteOutcome outcome;
  UpdateMode chosen = UpdateMode::kOverlay;
  auto next = ds->Update(set, predicate, &matched, UpdateMode::kAuto, &chosen, &outcome);
  std::string notices;
  for (const std::string& notice : {FirstOverlayNotice(*ds, *next, stmt.table.name),
                                    matched ? OverlaysOffNotice(*ds, UpdateMode::kAuto, chosen, ds->uri()) : ""})
    if (!notice.empty()) notices += "\n" + notice;
  return fmt::format("UPDATE {}; {}{}{}", RowCount(matched), VersionNote(stmt.table.name, ds, next),
                     LayerMergeNote(outcome), notices);
}

std::string RunDelete(const Context& ctx, const DeleteStmt& stmt) {
  auto ds = OpenTable(ctx, stmt.table);
  ExprPtr predicate = Expr::Literal(Scalar{DataType::Bool(), true});
  if (stmt.where) {
    predicate = StripQualifier(UncorrelatedValues(ctx, stmt.table, stmt.where, "DELETE's WHERE"),
                               {stmt.table.name, stmt.table.qualifier()});
    Bind(*predicate, WithPseudoColumns(*ds->schema()));
  }
  uint64_t matched = 0;
  auto next = ds->Delete(predicate, &matched);
  return fmt::format("DELETE {}; {}", RowCount(matched), VersionNote(stmt.table.name, ds, next));
}

std::string RunCreateTable(const Context& ctx, const CreateTableStmt& stmt) {
  if (TableExists(ctx, stmt.table.name)) {
    if (stmt.if_not_exists) return fmt::format("CREATE TABLE: {} already exists", stmt.table.name);
    ctx.Fail(stmt.table.position, fmt::format("table '{}' already exists", stmt.table.name));
  }
  WriteOptions options = CreateOptions(ctx, stmt);
  RecordBatchPtr batch;
  if (stmt.columns.empty()) {
    batch = RunSelect(ctx, *stmt.select);
    std::set<std::string> names;
    for (const auto& f : batch->schema()->fields())
      if (!names.insert(f->name).second)
        ctx.Fail(stmt.table.position, fmt::format("the SELECT returns column '{}' twice; name them with AS", f->name));
  } else {
    std::vector<FieldPtr> fields;
    for (const auto& c : stmt.columns) {
      for (const auto& f : fields)
        if (f->name == c.name) ctx.Fail(stmt.table.position, fmt::format("column '{}' is defined twice", c.name));
      fields.push_back(Field::Make(c.name, c.type, c.nullable));
    }
    Schema schema(fields);
    std::vector<int> targets;
    for (size_t i = 0; i < fields.size(); ++i) targets.push_back(int(i));
    if (stmt.select) {
      auto rows = RunSelect(ctx, *stmt.select);
      if (rows->num_columns() != fields.size())
        ctx.Fail(stmt.table.position, fmt::format("the table has {} columns but the SELECT returns {}", fields.size(),
                                                  rows->num_columns()));
      batch = FillBatch(schema, targets, rows->columns(), rows->num_rows());
    } else {
      batch = ValuesBatch(ctx, schema, targets, stmt.values, stmt.table.position);
    }
  }
  options.storage_options = ctx.storage_options;
  auto ds = Dataset::Write(ctx.TablePath(stmt.table.name), {batch}, options);
  return fmt::format("CREATE TABLE {}: {}; version {}", stmt.table.name, RowCount(ds->CountRows()), ds->version());
}

std::string RunDropTable(const Context& ctx, const DropTableStmt& stmt) {
  if (!TableExists(ctx, stmt.table.name)) {
    if (stmt.if_exists) return fmt::format("DROP TABLE: {} does not exist", stmt.table.name);
    ctx.Fail(stmt.table.position, fmt::format("table '{}' does not exist", stmt.table.name));
  }
  auto [store, path] = io::OpenStore(ctx.TablePath(stmt.table.name), ctx.storage_options);
  store->DeleteTree(path);
  return fmt::format("DROP TABLE {}", stmt.table.name);
}

}  // namespace lancelet::sql
