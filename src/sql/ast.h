// Syntax trees of SQL statements. Expressions are the expression layer's Expr, whose
// positions point into the statement text.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/expr.h"
#include "lancelet/vector_search.h"

namespace lancelet::sql {

// A FROM / USING source: a table of the database, or read_csv('path', options...) /
// read_json('path', options...).
struct SelectStmt;

struct TableRef {
  enum class Kind { kTable, kCsv, kJson, kSubquery, kVectorSearch, kChanges, kSeries, kFunctions } kind = Kind::kTable;
  std::string name;   // table name, or the file path of read_csv / read_json
  std::string alias;  // empty: the table name (or "read_csv" / "read_json")
  std::optional<uint64_t> version;  // VERSION AS OF n
  ExprPtr as_of;  // TIMESTAMP AS OF t (UTC): the latest version committed at or before t
  int position = 0;
  // read_csv / read_json options: delim (or sep), header, and the file's complete schema
  // as columns={'id': 'int64', ...} or schema='id:int64,...' (null: inferred).
  char delimiter = ',';
  bool header = true;
  SchemaPtr columns;
  // kSubquery: FROM (SELECT ...), or a WITH name (the query it names), or a view (its
  // query; `view` is then its name).
  std::shared_ptr<const SelectStmt> subquery;
  std::string view;
  // kVectorSearch: vector_search('table', 'column', [..], k [, nprobes [, refine_factor]]),
  // the table's k rows nearest the vector with their _distance (Dataset::Search); `name`
  // is the table's.
  std::shared_ptr<const VectorQuery> search;
  // kChanges: table_changes('table', from [, to]), the table's change feed
  // (Dataset::Changes) after version `changes_from` up to `changes_to` (default: the latest).
  uint64_t changes_from = 0;
  std::optional<uint64_t> changes_to;
  // kSeries: range([start,] stop [, step]) (stop excluded) or generate_series(...) (stop
  // included), DuckDB's: one int64 column named as the function; `name` is its name.
  std::vector<ExprPtr> series_args;
  // kFunctions: lancelet_functions() (or duckdb_functions()), the function catalog.

  const std::string& qualifier() const { return alias.empty() ? name : alias; }
};

struct SelectItem {
  SelectItem() = default;
  SelectItem(ExprPtr e, std::string a) : expr(std::move(e)), alias(std::move(a)) {}
  ExprPtr expr;  // null for * and q.*
  std::string alias;
  std::string star_qualifier;  // q of q.*
  int star_position = 0;
  // * EXCLUDE (a, b) and * REPLACE (expr AS a), as DuckDB: columns the star leaves out,
  // and columns it takes from an expression instead (in their place, under their name).
  std::vector<std::pair<std::string, int>> exclude;  // name, position
  std::vector<std::pair<std::string, ExprPtr>> replace;
};

struct OrderItem {
  ExprPtr expr;
  bool descending = false;
  std::optional<bool> nulls_first;  // default: NULLS LAST for ASC and DESC, as DuckDB
};

// `JOIN table ON cond`, `JOIN table USING (a, b)`, or `CROSS JOIN table` (also
// `FROM a, b`), joined to everything before it in the FROM clause.
struct JoinClause {
  enum class Kind { kInner, kLeft, kRight, kFull, kCross } kind = Kind::kInner;
  TableRef table;
  ExprPtr on;                               // null for CROSS and USING
  std::vector<std::string> using_columns;  // USING (...)
  int position = 0;                         // of the JOIN keyword
};

struct SelectStmt {
  bool distinct = false;  // SELECT DISTINCT
  std::vector<SelectItem> items;
  std::optional<TableRef> from;
  std::vector<JoinClause> joins;  // FROM from JOIN joins[0] JOIN joins[1] ...
  ExprPtr where;
  std::vector<ExprPtr> group_by;
  bool group_by_all = false;  // GROUP BY ALL: every select item without an aggregate
  ExprPtr having;
  ExprPtr qualify;  // QUALIFY: keeps the rows it holds for, after the window functions
  std::vector<OrderItem> order_by;
  std::optional<int64_t> limit;
  int64_t offset = 0;
  // A UNION: the parts' rows, then this statement's ORDER BY / LIMIT / OFFSET over them
  // (its other fields are unused). union_all[i] joins parts i and i + 1, left to right.
  std::vector<std::shared_ptr<const SelectStmt>> union_parts;
  std::vector<bool> union_all;
  int union_position = 0;  // of the first UNION keyword
};

struct SetItem {
  std::string column;
  ExprPtr expr;
  int position = 0;  // of the column name
};

struct InsertStmt {
  TableRef table;
  std::vector<std::string> columns;  // empty: every column, in schema order
  std::vector<std::vector<ExprPtr>> values;  // VALUES rows, or
  std::shared_ptr<SelectStmt> select;        // INSERT ... SELECT
};

struct UpdateStmt {
  TableRef table;
  std::vector<SetItem> set;
  ExprPtr where;
};

struct DeleteStmt {
  TableRef table;
  ExprPtr where;
};

struct ColumnDef {
  std::string name;
  TypePtr type;
  bool nullable = true;
};

struct CreateTableStmt {
  TableRef table;
  std::vector<ColumnDef> columns;           // CREATE TABLE t (col type, ...) [AS ...], or
  std::shared_ptr<SelectStmt> select;       // CREATE TABLE t AS SELECT ...
  // CREATE TABLE t (cols) AS VALUES (...), ...: the first rows, in the same commit
  // (so a table can be created with its rows at version 1).
  std::vector<std::vector<ExprPtr>> values;
  std::map<std::string, std::string> with;  // WITH (stable_row_ids = true, ...), lower-case keys
  bool if_not_exists = false;
};

struct DropTableStmt {
  TableRef table;
  bool if_exists = false;
};

struct MergeClause {
  enum class Action { kUpdate, kDelete, kInsert } action = Action::kUpdate;
  bool matched = true;  // WHEN MATCHED / WHEN NOT MATCHED [BY TARGET]
  // WHEN NOT MATCHED BY SOURCE: a target row no source row matches (matched is false);
  // its condition and SET read only target columns.
  bool by_source = false;
  ExprPtr condition;    // AND cond (null: always)
  std::vector<SetItem> set;           // UPDATE SET
  std::vector<std::string> columns;   // INSERT (cols)
  std::vector<ExprPtr> values;        // INSERT VALUES (...)
  int position = 0;                   // of WHEN
};

struct MergeStmt {
  TableRef target;
  TableRef source;
  ExprPtr on;
  std::vector<MergeClause> clauses;
};

// CREATE INDEX [IF NOT EXISTS] name ON table (column) [USING BTREE|BITMAP|IVF_FLAT|IVF_PQ]
//   [WITH (partitions = N, sub_vectors = N, bits = N, distance = 'l2', sample_rate = N,
//          max_iterations = N)]
struct CreateIndexStmt {
  std::string name;
  TableRef table;
  std::string column;
  int column_position = 0;
  IndexType type = IndexType::kBTree;
  VectorIndexOptions vector;
  bool if_not_exists = false;
};
// DROP INDEX [IF EXISTS] name ON table
struct DropIndexStmt {
  std::string name;
  int name_position = 0;
  TableRef table;
  bool if_exists = false;
};
// SHOW INDEXES (FROM | ON) table
struct ShowIndexesStmt {
  TableRef table;
};
// OPTIMIZE table: Dataset::Optimize with default options.
struct OptimizeStmt {
  TableRef table;
};
// ALTER TABLE t DROP COLUMN c | RENAME COLUMN c TO d | ALTER COLUMN c {SET | DROP} NOT NULL
// | ADD [COLUMN] c type [DEFAULT expr] (c may be s.a, a nested column, but for ADD).
struct AlterTableStmt {
  enum class Action { kDropColumn, kRenameColumn, kSetNotNull, kDropNotNull, kAddColumn } action = Action::kDropColumn;
  TableRef table;
  std::string column;
  std::string new_name;  // kRenameColumn
  ExprPtr value;         // kAddColumn: CAST(DEFAULT expression, or NULL, AS type)
};
// COPY (SELECT ...) TO 'path' or COPY t TO 'path', with options (FORMAT csv | json |
// arrow, HEADER, DELIMITER). COPY t FROM 'path' parses as INSERT INTO t SELECT * FROM
// read_csv / read_json('path').
struct CopyStmt {
  std::shared_ptr<SelectStmt> query;
  std::string path;
  int path_position = 0;
  std::string format;  // "csv", "json" (JSON lines) or "arrow" (the IPC stream format)
  bool header = true;
  char delimiter = ',';
};

// SET [GLOBAL | SESSION] name {= | TO} value, or RESET name: a setting of the session.
struct SetStmt {
  bool reset = false;
  std::string name;   // lower-case
  std::string value;  // as written (a string's contents, a number's or a word's text)
  int name_position = 0;
  int value_position = 0;
};

// CREATE [OR REPLACE] [TEMP | TEMPORARY] VIEW [IF NOT EXISTS] name AS SELECT ..., or
// DROP VIEW [IF EXISTS] name.
struct ViewStmt {
  std::string name;
  int name_position = 0;
  bool temporary = false;
  bool or_replace = false;
  bool if_exists = false;  // IF NOT EXISTS of CREATE, IF EXISTS of DROP
  std::string query;       // CREATE: the SELECT as written
  std::shared_ptr<const SelectStmt> select;  // CREATE: the SELECT parsed
};

struct Statement {
  enum class Kind {
    kSelect, kInsert, kUpdate, kDelete, kCreateTable, kDropTable, kMerge,
    kCreateIndex, kDropIndex, kShowIndexes, kExplain,  // kExplain: EXPLAIN SELECT (in `select`)
    kOptimize, kShowTables,
    kDescribe,   // DESCRIBE t (in show_indexes->table) or DESCRIBE SELECT ... (in select)
    kSummarize,  // SUMMARIZE t or SUMMARIZE SELECT ... (in show_indexes->table)
    kAlterTable, kCopy, kSet,
    kCreateView, kDropView,  // in `view`
    kBegin, kCommit, kRollback,
  } kind = Kind::kSelect;
  std::shared_ptr<SelectStmt> select;
  std::shared_ptr<InsertStmt> insert;
  std::shared_ptr<UpdateStmt> update;
  std::shared_ptr<DeleteStmt> del;
  std::shared_ptr<CreateTableStmt> create;
  std::shared_ptr<DropTableStmt> drop;
  std::shared_ptr<MergeStmt> merge;
  std::shared_ptr<CreateIndexStmt> create_index;
  std::shared_ptr<DropIndexStmt> drop_index;
  std::shared_ptr<ShowIndexesStmt> show_indexes;
  std::shared_ptr<OptimizeStmt> optimize;
  std::shared_ptr<AlterTableStmt> alter;
  std::shared_ptr<CopyStmt> copy;
  std::shared_ptr<SetStmt> set;
  std::shared_ptr<ViewStmt> view;
  bool analyze = false;  // EXPLAIN ANALYZE: run the SELECT and report each operator's rows and time
};

// The SELECT a view name stands for (as written when it was created), or nullopt when
// the name is not a view's.
using ViewLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Parses one statement (an optional trailing ';' is allowed). Throws ParseError whose
// position is a column of `text`. With `views`, a table name in FROM (or DESCRIBE,
// SUMMARIZE) that names no WITH query but a view reads as the view's query.
Statement ParseStatement(const std::string& text, const ViewLookup& views = nullptr);

}  // namespace lancelet::sql
