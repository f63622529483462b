// CREATE INDEX, DROP INDEX, SHOW INDEXES, EXPLAIN SELECT, OPTIMIZE and ALTER TABLE (the SQL
// faces of Dataset::CreateIndex, DropIndex, ListIndices, Explain, Optimize, DropColumns and
// AlterColumns), DESCRIBE and SHOW TABLES.
#include <algorithm>

#include <fmt/format.h>

#include "lancelet/builder.h"
#include "sql/correlated.h"
#include "sql/exec.h"
#include "sql/join.h"
#include "sql/nearest.h"
#include "table/dataset_state.h"

namespace lancelet::sql {

namespace {

bool HasIndex(const Dataset& ds, const std::string& name) {
  for (const auto& i : ds.ListIndices())
    if (i.name == name) return true;
  return false;
}

}  // namespace

std::string RunCreateIndex(const Context& ctx, const CreateIndexStmt& stmt) {
  auto ds = OpenTable(ctx, stmt.table);
  if (HasIndex(*ds, stmt.name)) {
    if (stmt.if_not_exists) return fmt::format("CREATE INDEX: {} already exists on {}", stmt.name, stmt.table.name);
    ctx.Fail(stmt.table.position, fmt::format("table '{}' already has an index named '{}'", stmt.table.name, stmt.name));
  }
  if (!table::StateOf(ds).schema.StructPathNamed(stmt.column))  // a column, or a struct field as s.a
    ctx.Fail(stmt.column_position, fmt::format("no column '{}' in table '{}'", stmt.column, stmt.table.name));
  auto next = ds->CreateIndex(stmt.column, stmt.type, stmt.vector, stmt.name);
  return fmt::format("CREATE INDEX {} ({}: version {})", stmt.name, stmt.table.name, next->version());
}

std::string RunDropIndex(const Context& ctx, const DropIndexStmt& stmt) {
  auto ds = OpenTable(ctx, stmt.table);
  if (!HasIndex(*ds, stmt.name)) {
    if (stmt.if_exists) return fmt::format("DROP INDEX: {} does not exist on {}", stmt.name, stmt.table.name);
    ctx.Fail(stmt.name_position, fmt::format("table '{}' has no index named '{}'", stmt.table.name, stmt.name));
  }
  auto next = ds->DropIndex(stmt.name);
  return fmt::format("DROP INDEX {} ({}: version {})", stmt.name, stmt.table.name, next->version());
}

std::string RunOptimize(const Context& ctx, const OptimizeStmt& stmt) {
  auto ds = OpenTable(ctx, stmt.table);
  OptimizeStats stats;
  auto next = ds->Optimize({}, &stats);
  std::string text = FormatOptimizeStats(stats, stmt.table.name, next->version());
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return "OPTIMIZE: " + text;
}

std::string RunAlterTable(const Context& ctx, const AlterTableStmt& stmt) {
  using Action = AlterTableStmt::Action;
  auto ds = OpenTable(ctx, stmt.table);
  DatasetPtr next;
  switch (stmt.action) {
    case Action::kDropColumn: next = ds->DropColumns({stmt.column}); break;
    case Action::kRenameColumn: next = ds->AlterColumns({{stmt.column, stmt.new_name, std::nullopt}}); break;
    case Action::kSetNotNull: next = ds->AlterColumns({{stmt.column, std::nullopt, false}}); break;
    case Action::kDropNotNull: next = ds->AlterColumns({{stmt.column, std::nullopt, true}}); break;
    case Action::kAddColumn: next = ds->AddColumns({{stmt.column, "", stmt.value}}); break;
  }
  return fmt::format("ALTER TABLE {} ({}: version {})", stmt.table.name, stmt.table.name, next->version());
}

RecordBatchPtr RunShowTables(const Context& ctx, const std::vector<std::string>& views) {
  std::vector<std::string> names = ListTables(ctx.db_dir, ctx.storage_options);
  names.insert(names.end(), views.begin(), views.end());
  std::sort(names.begin(), names.end());
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{Field::Make("name", DataType::Utf8())});
  return std::make_shared<RecordBatch>(schema, std::vector<ArrayPtr>{Strings(names)}, int64_t(names.size()));
}

RecordBatchPtr RunShowIndexes(const Context& ctx, const ShowIndexesStmt& stmt) {
  std::vector<std::string> names, types, columns;
  std::vector<uint64_t> versions, segments, indexed, unindexed, stale;
  for (const auto& i : OpenTable(ctx, stmt.table)->ListIndices()) {
    names.push_back(i.name);
    types.push_back(i.type);
    std::string cols;
    for (const auto& c : i.columns) cols += (cols.empty() ? "" : ",") + c;
    columns.push_back(cols);
    versions.push_back(i.dataset_version);
    segments.push_back(i.segments);
    indexed.push_back(i.indexed_fragments);
    unindexed.push_back(i.unindexed_fragments);
    stale.push_back(i.stale_rows);
  }
  auto schema = std::make_shared<Schema>(std::vector<FieldPtr>{
      Field::Make("name", DataType::Utf8()), Field::Make("type", DataType::Utf8()),
      Field::Make("columns", DataType::Utf8()), Field::Make("built_from_version", DataType::UInt64()),
      Field::Make("segments", DataType::UInt64()), Field::Make("indexed_fragments", DataType::UInt64()),
      Field::Make("unindexed_fragments", DataType::UInt64()), Field::Make("stale_rows", DataType::UInt64())});
  return std::make_shared<RecordBatch>(
      schema,
      std::vector<ArrayPtr>{Strings(names), Strings(types), Strings(columns), UInt64s(versions), UInt64s(segments),
                            UInt64s(indexed), UInt64s(unindexed), UInt64s(stale)},
      int64_t(names.size()));
}

namespace {

// A line per correlated subquery of `stmt`: how it runs. `marked`: the statement with
// their markers, which name the outer columns they read.
std::string CorrelatedLines(const Context& ctx, const SelectStmt& stmt, SelectStmt* marked = nullptr) {
  Correlations correlated;
  SelectStmt with_markers = MarkCorrelated(ctx, stmt, correlated);
  if (marked) *marked = std::move(with_markers);
  std::string lines;
  for (size_t k = 0; k < correlated.size(); ++k)
    lines += fmt::format("\ncorrelated subquery {}: {}", k + 1, correlated[k]->Describe());
  return lines;
}

}  // namespace

std::string RunExplain(const Context& ctx, const SelectStmt& stmt) {
  if (stmt.from && !stmt.joins.empty()) {  // a line per side, then the WHERE over the joined rows
    const JoinedSource joined(ctx, stmt, /*plan_only=*/true);
    std::string plan = fmt::format("{}", fmt::join(joined.plan(), "\n"));
    if (stmt.where) plan += "\nfilter over the joined rows: " + ToString(*stmt.where);
    return plan + CorrelatedLines(ctx, stmt);
  }
  if (stmt.from && stmt.from->kind == TableRef::Kind::kVectorSearch) {
    std::string plan = OpenTable(ctx, *stmt.from)->ExplainSearch(*stmt.from->search);
    if (!plan.empty() && plan.back() == '\n') plan.pop_back();
    if (stmt.where) plan += "\nfilter after the search: " + ToString(*stmt.where);
    return plan + CorrelatedLines(ctx, stmt);
  }
  if (!stmt.from || stmt.from->kind != TableRef::Kind::kTable) ctx.Fail(1, "EXPLAIN needs a SELECT from a table");
  auto ds = OpenTable(ctx, *stmt.from);
  // Terms with subqueries are evaluated after the scan; the others go into it.
  ExprPtr scanned;
  std::vector<std::string> after;
  for (const auto& term : Conjuncts(StripQualifier(stmt.where, {stmt.from->qualifier()}))) {
    if (HasSubquery(term)) after.push_back(ToString(*term));
    else AndOnto(scanned, term);
  }
  SelectStmt marked;
  const std::string correlated = CorrelatedLines(ctx, stmt, &marked);
  std::optional<NearestPlan> nearest;
  if (after.empty() && correlated.empty()) nearest = PlanNearest(stmt, scanned, *ds);
  const auto columns = nearest ? nearest->columns : ColumnsRead(marked, *ds->schema());
  const std::string read = !columns ? "all" : columns->empty() ? "none" : fmt::format("{}", fmt::join(*columns, ", "));
  std::string plan = nearest ? ExplainNearest(*nearest, stmt, *ds) : ds->Explain(scanned);
  if (!plan.empty() && plan.back() == '\n') plan.pop_back();
  if (!after.empty()) plan += fmt::format("\nfilter after the scan: {}", fmt::join(after, " AND "));
  return plan + "\ncolumns: " + read + correlated;
}

}  // namespace lancelet::sql
