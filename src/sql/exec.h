// Shared pieces of SQL execution: the statement context, reading sources, rewriting
// column references, comparing values and casting columns.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/expr.h"
#include "lancelet/record_batch.h"
#include "lancelet/sql.h"
#include "sql/ast.h"

namespace lancelet::sql {

// What a statement's sorts may hold in memory before they spill to temporary files:
// LANCELET_SQL_MEMORY_MB megabytes, 256 by default.
int64_t DefaultMemoryBudget();

struct Profile;

struct Context {
  std::string db_dir;
  StorageOptions storage_options;  // of the database's store, for every table it opens
  std::shared_ptr<const std::string> text;  // the statement, for error positions
  bool progress = false;
  int64_t memory_budget = DefaultMemoryBudget();
  // Sources give their schema and no rows (DESCRIBE of a query runs it over nothing).
  bool schema_only = false;
  // EXPLAIN ANALYZE: the operators count their rows and time here (sql/profile.h).
  std::shared_ptr<Profile> profile;

  std::string TablePath(const std::string& table) const;
  // Throws ParseError at `position` (a column of the statement).
  [[noreturn]] void Fail(int position, const std::string& detail) const;
};

// Result columns built from values.
ArrayPtr Strings(const std::vector<std::string>& values);
ArrayPtr UInt64s(const std::vector<uint64_t>& values);
// A database is a directory (or a memory:// tree) of NAME.lance datasets, read through
// its store, opened with the database's storage options. The path of table NAME, whether
// it exists (has a _versions/ directory), and the names of those that do, sorted.
std::string TablePathIn(const std::string& db_dir, const std::string& table);
bool TableExistsIn(const std::string& db_dir, const std::string& table, const StorageOptions& options);
std::vector<std::string> ListTables(const std::string& db_dir, const StorageOptions& options);

// Opens the dataset of a table; a missing table is an error at ref.position.
DatasetPtr OpenTable(const Context& ctx, const TableRef& ref);
bool TableExists(const Context& ctx, const std::string& name);

// The top-level columns of `table` a SELECT from it reads, in table order; none when it
// reads every one (SELECT *, or a name it does not know, reported later).
std::optional<std::vector<std::string>> ColumnsRead(const SelectStmt& stmt, const Schema& table);

// Reads a source. For tables, `with_row_id` / `with_row_address`
// add the pseudo-columns; `filter` (already validated) is pushed into the scan. A file
// is read with its options; without a `columns` option, the columns named in
// `column_types` (those an INSERT or MERGE stores into or compares with a table's
// columns) are read as those types and the others inferred.
// `columns`, when set, are the only top-level columns a table's scan returns (a file is
// read whole). `opened`: the table `ref` names, already opened by the caller, so that one
// statement reads one version (and its manifest once).
std::unique_ptr<RecordBatchReader> OpenSource(const Context& ctx, const TableRef& ref, bool with_row_id,
                                              bool with_row_address, const ExprPtr& filter = nullptr,
                                              const SchemaPtr& column_types = nullptr,
                                              const std::optional<std::vector<std::string>>& columns = std::nullopt,
                                              DatasetPtr opened = nullptr);
// OpenSource read to its end, as one batch.
RecordBatchPtr ReadSource(const Context& ctx, const TableRef& ref, bool with_row_id, bool with_row_address,
                          const ExprPtr& filter = nullptr, const SchemaPtr& column_types = nullptr,
                          const std::optional<std::vector<std::string>>& columns = std::nullopt,
                          DatasetPtr opened = nullptr);

// Rebuilds `expr` with every column node replaced by map(node) (null: keep the node).
ExprPtr MapColumns(const ExprPtr& expr, const std::function<ExprPtr(const Expr&)>& map);
// Drops a leading table qualifier from column paths: `u.age` -> `age` when u is one of
// `qualifiers`.
ExprPtr StripQualifier(const ExprPtr& expr, const std::vector<std::string>& qualifiers);
// The terms of an AND chain, left to right (`e` alone when it is no AND; none for null).
std::vector<ExprPtr> Conjuncts(const ExprPtr& e);
// Whether `e` holds a subquery (SELECT ...), EXISTS or IN (SELECT ...).
bool HasSubquery(const ExprPtr& e);
// Whether `e` holds a window function call (f(...) OVER (...)).
bool ContainsWindow(const ExprPtr& e);
// `to` AND `term` into `to` (`term` alone when `to` is null).
void AndOnto(ExprPtr& to, const ExprPtr& term);
// A literal node holding `value`, placed where `at` is in the statement.
ExprPtr LiteralAt(const Expr& at, Scalar value);
// Copy of a column node with a new path (keeping its position, for error messages).
ExprPtr RenamedColumn(const Expr& column, std::vector<std::string> path);

// `expr` with its subqueries run and their values in place: (SELECT ...) as a literal
// (NULL without rows), EXISTS (SELECT ...) as true or false, x IN (SELECT ...) as an IN
// list. Correlated subqueries are planned before (sql/correlated.h); a column this
// cannot resolve fails as an unknown column.
ExprPtr WithSubqueryValues(const Context& ctx, const ExprPtr& expr);

// Binds and evaluates over `batch`; errors point into the statement.
ArrayPtr EvaluateOn(const ExprPtr& expr, const RecordBatch& batch);

// `values` stored into `column`: exact conversions only, errors name the column.
ArrayPtr AssignColumn(const ArrayPtr& values, const Field& column);

// Total order for sorting and MIN/MAX: non-null values of one type (or both numeric).
int CompareScalars(const Scalar& a, const Scalar& b);
// A key that is equal for equal values (NULL included), for grouping and hash joins.
std::string ValueKey(const ArrayData& array, int64_t row);

// A batch of `schema` from values for some of its columns (`targets`: schema indices),
// assigned to the column types (AssignColumn); the other columns are NULL.
RecordBatchPtr FillBatch(const Schema& schema, const std::vector<int>& targets, const std::vector<ArrayPtr>& values,
                         int64_t rows);

// A batch with no columns and `rows` rows (SELECT without FROM).
RecordBatchPtr EmptyRowsBatch(int64_t rows);

std::string RowCount(uint64_t n);  // "1 row", "3 rows"

// A stream of batches already in memory.
std::unique_ptr<RecordBatchReader> BatchesReader(SchemaPtr schema, std::vector<RecordBatchPtr> batches);
// Every batch of a stream, as one.
RecordBatchPtr ReadAll(RecordBatchReader& reader);

// Statement runners.
// A SELECT as a stream: batches are read, filtered, aggregated and projected as they
// come, so memory holds aggregate state, sort buffers (ORDER BY) and one batch, not the
// input. `column_types`: passed to OpenSource for a file source (INSERT ... SELECT).
std::unique_ptr<RecordBatchReader> OpenSelect(const Context& ctx, const SelectStmt& stmt,
                                              const SchemaPtr& column_types = nullptr);
// `column_types`: passed to ReadSource for a file source (INSERT ... SELECT).
RecordBatchPtr RunSelect(const Context& ctx, const SelectStmt& stmt, const SchemaPtr& column_types = nullptr);
std::string RunInsert(const Context& ctx, const InsertStmt& stmt);
std::string RunUpdate(const Context& ctx, const UpdateStmt& stmt);
std::string RunDelete(const Context& ctx, const DeleteStmt& stmt);
std::string RunCreateTable(const Context& ctx, const CreateTableStmt& stmt);
std::string RunDropTable(const Context& ctx, const DropTableStmt& stmt);
std::string RunMerge(const Context& ctx, const MergeStmt& stmt);

struct MergeCounts {
  uint64_t updated = 0, deleted = 0, inserted = 0;
};
struct MergeOutcome {
  DatasetPtr dataset;      // the version written (after any overlay-layer merge), else the target
  bool committed = false;  // false: the MERGE changed nothing
  MergeCounts counts;
  WriteOutcome layers;     // what bounding the overlay layers did
  bool overlays_off = false;  // matched rows were moved: the target does not enable overlays
};
// A MERGE on `target` in one commit, planned again on the latest version after a
// RetryableConflict. `source`: the source rows already read (the statement's source is
// then only its qualifier), or null to read stmt.source.
MergeOutcome MergeInto(const Context& ctx, const MergeStmt& stmt, const DatasetPtr& target,
                       const RecordBatchPtr& source);
std::string RunCreateIndex(const Context& ctx, const CreateIndexStmt& stmt);
std::string RunDropIndex(const Context& ctx, const DropIndexStmt& stmt);
std::string RunOptimize(const Context& ctx, const OptimizeStmt& stmt);
std::string RunAlterTable(const Context& ctx, const AlterTableStmt& stmt);
std::string RunCopy(const Context& ctx, const CopyStmt& stmt);
RecordBatchPtr RunShowIndexes(const Context& ctx, const ShowIndexesStmt& stmt);
// DESCRIBE t: a row per column (column_name, column_type, null = YES / NO).
RecordBatchPtr RunDescribe(const Context& ctx, const TableRef& table);
// range(...) / generate_series(...): their numbers, a batch at a time.
std::unique_ptr<RecordBatchReader> OpenSeries(const Context& ctx, const TableRef& ref);
// lancelet_functions(): the function catalog, a row per function (function_name,
// function_type, arguments, description).
std::unique_ptr<RecordBatchReader> OpenFunctionCatalog();
RecordBatchPtr RunDescribeQuery(const Context& ctx, const SelectStmt& query);
RecordBatchPtr RunSummarize(const Context& ctx, const TableRef& source);
// SHOW TABLES: a row per table and view (name), sorted.
RecordBatchPtr RunShowTables(const Context& ctx, const std::vector<std::string>& views);
std::string RunExplain(const Context& ctx, const SelectStmt& stmt);  // the plan's lines
// EXPLAIN ANALYZE (profile.cc): runs the SELECT, its rows read and dropped, and gives a row
// per operator (operator, rows, seconds), the output end first, after a row for the whole
// query.
RecordBatchPtr RunExplainAnalyze(const Context& ctx, const SelectStmt& stmt);

// Views (views.cc): a database's view's SELECT as written (nullopt: no such view), the
// names of its views, sorted, and CREATE VIEW / DROP VIEW, of the database's views or,
// TEMP ones, of `temp_views` (the session's).
std::optional<std::string> ReadView(const std::string& db_dir, const std::string& name,
                                    const StorageOptions& options);
std::vector<std::string> ListViews(const std::string& db_dir, const StorageOptions& options);
// Puts a database's view back as `query` says: that SELECT, or no view.
void RestoreView(const std::string& db_dir, const std::string& name, const std::optional<std::string>& query,
                 const StorageOptions& options);
std::string RunCreateView(const Context& ctx, const ViewStmt& stmt, std::map<std::string, std::string>& temp_views);
std::string RunDropView(const Context& ctx, const ViewStmt& stmt, std::map<std::string, std::string>& temp_views);

}  // namespace lancelet::sql
