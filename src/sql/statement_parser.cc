// Recursive-descent parser for SQL statements, driving the expression parser's token
// stream: statement clauses are consumed here, expressions by Parser::ParseExpression.
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "array/ascii_case.h"
#include "expr/parser.h"
#include "sql/ast.h"
#include "sql/nearest.h"

namespace lancelet::sql {

namespace {

// Words after a table name that start the next clause rather than name an alias.
bool EndsTableRef(const Token& t) {
  if (t.kind != TokenKind::kIdentifier) return t.kind != TokenKind::kQuotedIdentifier;
  return IsReservedWord(t.text) || t.IsKeyword("VERSION") || t.IsKeyword("VALUES") || t.IsKeyword("WITH") ||
         t.IsKeyword("DEFAULT") || t.IsKeyword("QUALIFY");
}

// The reader of a file named by its path alone (FROM 'x.csv'), by its extension.
std::optional<TableRef::Kind> FileKindOf(const std::string& path) {
  const std::string lower = AsciiLower(path);
  if (lower.ends_with(".csv") || lower.ends_with(".tsv")) return TableRef::Kind::kCsv;
  if (lower.ends_with(".json") || lower.ends_with(".jsonl") || lower.ends_with(".ndjson")) return TableRef::Kind::kJson;
  return std::nullopt;
}

// A file's name without its directory and extension: the default alias of FROM 'x.csv'.
std::string FileStem(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  return name.substr(0, name.find('.'));
}

class StatementParser {
 public:
  // `depth`: how many views deep this text is (a view's query parses with depth + 1).
  StatementParser(const std::string& text, ViewLookup views, int depth = 0)
      : views_(std::move(views)), depth_(depth), p_(text) {
    p_.set_subquery_parser([this] { return std::shared_ptr<const void>(ParseSelect()); });
    p_.set_sql_division(true);
  }

 private:
  std::map<std::string, std::shared_ptr<const SelectStmt>> ctes_;  // WITH names
  ViewLookup views_;
  int depth_;

  // The query of view `name` (at `at` in this text), parsed, or null when it is no view.
  std::shared_ptr<const SelectStmt> ViewQuery(const std::string& name, const Token& at) {
    if (!views_ || ctes_.count(name)) return nullptr;
    const std::optional<std::string> query = views_(name);
    if (!query) return nullptr;
    constexpr int kMaxDepth = 32;
    if (depth_ >= kMaxDepth) p_.FailAt(at, fmt::format("views nest more than {} deep at '{}' (does a view read itself?)", kMaxDepth, name));
    try {
      return StatementParser(*query, views_, depth_ + 1).ParseViewQuery();
    } catch (const ParseError& e) {
      if (depth_ > 0) throw;  // named once, by the outermost view
      p_.FailAt(at, fmt::format("view '{}': {}", name, e.detail()));
    }
  }

  std::shared_ptr<const SelectStmt> ParseViewQuery() {
    if (!p_.Peek().IsKeyword("SELECT") && !p_.Peek().IsKeyword("WITH")) p_.Fail("SELECT");
    return Parse().select;
  }

 public:

  Statement Parse() {
    Statement s;
    if (p_.ConsumeKeyword("WITH")) {
      // WITH name AS (SELECT ...), ...: each name reads as its query in what follows.
      do {
        const Token at = p_.Peek();
        std::string name = ParseTableName();
        if (ctes_.count(name)) p_.FailAt(at, fmt::format("WITH names '{}' twice", name));
        p_.ExpectKeyword("AS");
        p_.ExpectSymbol("(");
        ctes_[name] = ParseSelect();
        p_.ExpectSymbol(")");
      } while (p_.ConsumeSymbol(","));
      if (!p_.Peek().IsKeyword("SELECT")) p_.Fail("SELECT after WITH");
    }
    const Token& first = p_.Peek();
    if (first.IsKeyword("SELECT")) {
      s.kind = Statement::Kind::kSelect;
      s.select = ParseSelect();
    } else if (first.IsKeyword("INSERT")) {
      s.kind = Statement::Kind::kInsert;
      s.insert = ParseInsert();
    } else if (first.IsKeyword("UPDATE")) {
      s.kind = Statement::Kind::kUpdate;
      s.update = ParseUpdate();
    } else if (first.IsKeyword("DELETE")) {
      s.kind = Statement::Kind::kDelete;
      s.del = ParseDelete();
    } else if (first.IsKeyword("CREATE") && p_.Peek(1).IsKeyword("INDEX")) {
      s.kind = Statement::Kind::kCreateIndex;
      s.create_index = ParseCreateIndex();
    } else if (first.IsKeyword("CREATE") && IsCreateView()) {
      s.kind = Statement::Kind::kCreateView;
      s.view = ParseCreateView();
    } else if (first.IsKeyword("DROP") && p_.Peek(1).IsKeyword("VIEW")) {
      s.kind = Statement::Kind::kDropView;
      s.view = std::make_shared<ViewStmt>();
      p_.Next();
      p_.Next();
      s.view->if_exists = ConsumeIfExists(false);
      s.view->name_position = p_.Peek().position;
      s.view->name = ParseTableName();
    } else if (first.IsKeyword("CREATE")) {
      s.kind = Statement::Kind::kCreateTable;
      s.create = ParseCreate();
    } else if (first.IsKeyword("DROP") && p_.Peek(1).IsKeyword("INDEX")) {
      s.kind = Statement::Kind::kDropIndex;
      s.drop_index = ParseDropIndex();
    } else if (first.IsKeyword("DROP")) {
      s.kind = Statement::Kind::kDropTable;
      s.drop = ParseDrop();
    } else if (first.IsKeyword("SHOW") && p_.Peek(1).IsKeyword("TABLES")) {
      p_.Next();
      p_.Next();
      s.kind = Statement::Kind::kShowTables;
    } else if (first.IsKeyword("DESCRIBE") && p_.Peek(1).IsKeyword("SELECT")) {
      p_.Next();
      s.kind = Statement::Kind::kDescribe;
      s.select = ParseSelect();
    } else if (first.IsKeyword("DESCRIBE") || first.IsKeyword("SUMMARIZE")) {
      p_.Next();
      s.kind = first.IsKeyword("DESCRIBE") ? Statement::Kind::kDescribe : Statement::Kind::kSummarize;
      s.show_indexes = std::make_shared<ShowIndexesStmt>();
      if (s.kind == Statement::Kind::kSummarize && p_.Peek().IsKeyword("SELECT")) {
        TableRef& query = s.show_indexes->table;
        query.position = p_.Peek().position;
        query.kind = TableRef::Kind::kSubquery;
        query.subquery = ParseSelect();
        query.name = "subquery";
      } else {
        p_.ConsumeKeyword("TABLE");
        const Token at = p_.Peek();
        s.show_indexes->table = ParseTableRef(false, false);
        if (auto view = ViewQuery(s.show_indexes->table.name, at)) {  // as DESCRIBE / SUMMARIZE SELECT
          TableRef& query = s.show_indexes->table;
          query.kind = TableRef::Kind::kSubquery;
          query.subquery = view;
          query.view = query.name;
          if (s.kind == Statement::Kind::kDescribe) {  // DESCRIBE SELECT * FROM view
            s.select = std::make_shared<SelectStmt>();
            s.select->items.emplace_back();
            s.select->items.back().star_position = query.position;
            s.select->from = query;
          }
        }
      }
    } else if (first.IsKeyword("SHOW")) {
      p_.Next();
      if (!p_.ConsumeKeyword("INDEXES")) p_.ExpectKeyword("INDEX");
      if (!p_.ConsumeKeyword("FROM")) p_.ExpectKeyword("ON");
      s.kind = Statement::Kind::kShowIndexes;
      s.show_indexes = std::make_shared<ShowIndexesStmt>();
      s.show_indexes->table = ParseTableRef(false, false);
    } else if (first.IsKeyword("EXPLAIN")) {
      p_.Next();
      s.kind = Statement::Kind::kExplain;
      s.analyze = p_.ConsumeKeyword("ANALYZE") || p_.ConsumeKeyword("ANALYSE");
      s.select = ParseSelect();
    } else if (first.IsKeyword("OPTIMIZE")) {
      p_.Next();
      p_.ConsumeKeyword("TABLE");
      s.kind = Statement::Kind::kOptimize;
      s.optimize = std::make_shared<OptimizeStmt>();
      s.optimize->table = ParseTableRef(false, false);
    } else if (first.IsKeyword("ALTER")) {
      s.kind = Statement::Kind::kAlterTable;
      s.alter = ParseAlterTable();
    } else if (first.IsKeyword("MERGE")) {
      s.kind = Statement::Kind::kMerge;
      s.merge = ParseMerge();
    } else if (first.IsKeyword("COPY")) {
      ParseCopy(s);
    } else if (first.IsKeyword("BEGIN") || first.IsKeyword("START")) {
      // BEGIN [TRANSACTION], START TRANSACTION
      if (p_.Next().IsKeyword("START")) p_.ExpectKeyword("TRANSACTION");
      else p_.ConsumeKeyword("TRANSACTION");
      s.kind = Statement::Kind::kBegin;
    } else if (first.IsKeyword("COMMIT") || first.IsKeyword("END")) {
      p_.Next();
      p_.ConsumeKeyword("TRANSACTION");
      s.kind = Statement::Kind::kCommit;
    } else if (first.IsKeyword("ROLLBACK") || first.IsKeyword("ABORT")) {
      p_.Next();
      p_.ConsumeKeyword("TRANSACTION");
      s.kind = Statement::Kind::kRollback;
    } else if (first.IsKeyword("SET") || first.IsKeyword("RESET")) {
      s.kind = Statement::Kind::kSet;
      s.set = ParseSet();
    } else {
      p_.Fail("a statement (SELECT, WITH, INSERT, UPDATE, DELETE, MERGE, CREATE TABLE, DROP TABLE, CREATE VIEW, "
              "DROP VIEW, CREATE INDEX, DROP INDEX, SHOW INDEXES, SHOW TABLES, DESCRIBE, SUMMARIZE, EXPLAIN, OPTIMIZE, "
              "ALTER TABLE, COPY, SET, BEGIN, COMMIT or ROLLBACK)");
    }
    p_.ConsumeSymbol(";");
    if (!p_.AtEnd()) p_.Fail("end of statement");
    return s;
  }

 private:
  int64_t ParseCount(const char* what) {
    const Token& t = p_.Peek();
    if (t.kind != TokenKind::kInteger) p_.Fail(std::string("a non-negative integer ") + what);
    Token n = p_.Next();
    try {
      return std::stoll(n.text);
    } catch (const std::exception&) {
      p_.FailAt(n, "integer " + n.text + " is out of range");
    }
  }

  std::string ParseTableName() { return p_.ExpectIdentifier("a table name"); }

  // An optional IF EXISTS (IF NOT EXISTS when `negated`); whether it was there.
  bool ConsumeIfExists(bool negated) {
    if (!p_.Peek().IsKeyword("IF")) return false;
    p_.Next();
    if (negated) p_.ExpectKeyword("NOT");
    p_.ExpectKeyword("EXISTS");
    return true;
  }

  // name [VERSION AS OF n] [[AS] alias], or read_csv('path') / read_json('path') (or
  // their _auto names, or a bare 'path' ending in a format's extension) /
  // vector_search(...) / table_changes(...) [[AS] alias].
  TableRef ParseTableRef(bool allow_functions, bool allow_version) {
    TableRef ref;
    ref.position = p_.Peek().position;
    const Token& t = p_.Peek();
    if (allow_functions && t.kind == TokenKind::kString) {
      const Token path = p_.Next();
      ref.name = path.value;
      const std::optional<TableRef::Kind> kind = FileKindOf(ref.name);
      if (!kind)
        p_.FailAt(path, fmt::format("cannot tell the format of '{}' from its name (.csv, .tsv, .json, .jsonl, "
                                    ".ndjson); use read_csv or read_json",
                                    ref.name));
      ref.kind = *kind;
      if (ref.name.ends_with(".tsv")) ref.delimiter = '\t';
      ref.alias = FileStem(ref.name);
    } else if (allow_functions && t.kind == TokenKind::kIdentifier && p_.Peek(1).IsSymbol("(") &&
        (t.IsKeyword("READ_CSV") || t.IsKeyword("READ_JSON") || t.IsKeyword("READ_CSV_AUTO") ||
         t.IsKeyword("READ_JSON_AUTO"))) {
      Token fn = p_.Next();
      ref.kind = fn.IsKeyword("READ_CSV") || fn.IsKeyword("READ_CSV_AUTO") ? TableRef::Kind::kCsv
                                                                             : TableRef::Kind::kJson;
      p_.ExpectSymbol("(");
      if (p_.Peek().kind != TokenKind::kString) p_.Fail("a file path in quotes");
      ref.name = p_.Next().value;
      while (p_.ConsumeSymbol(",")) ParseFileOption(ref);
      p_.ExpectSymbol(")");
      ref.alias = AsciiLower(fn.text);
    } else if (allow_functions && t.kind == TokenKind::kIdentifier && p_.Peek(1).IsSymbol("(") &&
               (t.IsKeyword("RANGE") || t.IsKeyword("GENERATE_SERIES"))) {
      ref.kind = TableRef::Kind::kSeries;
      ref.name = ref.alias = AsciiLower(p_.Next().text);
      p_.ExpectSymbol("(");
      do ref.series_args.push_back(p_.ParseExpression());
      while (p_.ConsumeSymbol(","));
      p_.ExpectSymbol(")");
      if (ref.series_args.size() > 3) p_.Fail(fmt::format("at most 3 arguments to {}: [start,] stop [, step]", ref.name));
    } else if (allow_functions && t.kind == TokenKind::kIdentifier && p_.Peek(1).IsSymbol("(") &&
               (t.IsKeyword("LANCELET_FUNCTIONS") || t.IsKeyword("DUCKDB_FUNCTIONS"))) {
      ref.kind = TableRef::Kind::kFunctions;
      ref.name = ref.alias = AsciiLower(p_.Next().text);
      p_.ExpectSymbol("(");
      if (!p_.Peek().IsSymbol(")")) p_.Fail(fmt::format("{}() takes no arguments", ref.name));
      p_.ExpectSymbol(")");
    } else if (allow_functions && t.kind == TokenKind::kIdentifier && p_.Peek(1).IsSymbol("(") &&
               t.IsKeyword("VECTOR_SEARCH")) {
      p_.Next();
      ParseVectorSearch(ref);
    } else if (allow_functions && t.kind == TokenKind::kIdentifier && p_.Peek(1).IsSymbol("(") &&
               t.IsKeyword("TABLE_CHANGES")) {
      p_.Next();
      p_.ExpectSymbol("(");
      ref.kind = TableRef::Kind::kChanges;
      ref.name = ExpectString("a table name in quotes");
      ref.alias = "table_changes";
      p_.ExpectSymbol(",");
      ref.changes_from = uint64_t(ParseCount("version to read the changes after"));
      if (p_.ConsumeSymbol(",")) ref.changes_to = uint64_t(ParseCount("version to read the changes up to"));
      p_.ExpectSymbol(")");
    } else if (allow_functions && t.IsSymbol("(") && p_.Peek(1).IsKeyword("SELECT")) {
      p_.Next();
      ref.kind = TableRef::Kind::kSubquery;
      ref.subquery = ParseSelect();
      p_.ExpectSymbol(")");
      ref.name = "subquery";
    } else {
      const Token at = p_.Peek();
      ref.name = ParseTableName();
      if (auto cte = ctes_.find(ref.name); cte != ctes_.end() && allow_functions) {
        ref.kind = TableRef::Kind::kSubquery;
        ref.subquery = cte->second;
      } else if (allow_functions && !p_.Peek().IsKeyword("VERSION") &&
                 !(p_.Peek().IsKeyword("TIMESTAMP") && p_.Peek(1).IsKeyword("AS"))) {
        if (auto view = ViewQuery(ref.name, at)) {
          ref.kind = TableRef::Kind::kSubquery;
          ref.subquery = std::move(view);
          ref.view = ref.name;
        }
      }
    }
    if (p_.Peek().IsKeyword("VERSION")) {
      if (!allow_version || ref.kind != TableRef::Kind::kTable) p_.Fail("end of the table reference");
      p_.Next();
      p_.ExpectKeyword("AS");
      p_.ExpectKeyword("OF");
      ref.version = uint64_t(ParseCount("version"));
    } else if (p_.Peek().IsKeyword("TIMESTAMP") && p_.Peek(1).IsKeyword("AS")) {
      if (!allow_version || ref.kind != TableRef::Kind::kTable) p_.Fail("end of the table reference");
      p_.Next();
      p_.ExpectKeyword("AS");
      p_.ExpectKeyword("OF");
      ref.as_of = p_.ParseExpression();
    }
    if (p_.ConsumeKeyword("AS")) {
      ref.alias = p_.ExpectIdentifier("an alias");
    } else if (!EndsTableRef(p_.Peek())) {
      ref.alias = p_.ExpectIdentifier("an alias");
    }
    return ref;
  }

  // COPY (SELECT ...) TO 'path' [(options)], COPY t TO 'path' [(options)], or COPY t FROM
  // 'path' [(options)] as INSERT INTO t SELECT * FROM the file. Options, DuckDB's: FORMAT
  // csv | json | arrow (default: the path's extension, else csv), HEADER [true|false],
  // DELIMITER (or DELIM, SEP) 'c'.
  void ParseCopy(Statement& s) {
    p_.ExpectKeyword("COPY");
    std::shared_ptr<SelectStmt> query;
    TableRef table;
    if (p_.Peek().IsSymbol("(")) {
      p_.Next();
      query = ParseSelect();
      p_.ExpectSymbol(")");
    } else {
      table.position = p_.Peek().position;
      table.name = ParseTableName();
    }
    const bool from = !query && p_.ConsumeKeyword("FROM");
    if (!from) p_.ExpectKeyword("TO");
    if (p_.Peek().kind != TokenKind::kString) p_.Fail("a file path in quotes");
    const Token path = p_.Next();
    auto copy = std::make_shared<CopyStmt>();
    copy->path = path.value;
    copy->path_position = path.position;
    const std::optional<TableRef::Kind> kind = FileKindOf(copy->path);
    copy->format = kind == TableRef::Kind::kJson ? "json" : copy->path.ends_with(".arrow") ? "arrow" : "csv";
    if (copy->path.ends_with(".tsv")) copy->delimiter = '\t';
    p_.ConsumeKeyword("WITH");
    if (p_.ConsumeSymbol("(")) {
      do ParseCopyOption(*copy);
      while (p_.ConsumeSymbol(","));
      p_.ExpectSymbol(")");
    }
    if (!from) {
      if (!query) {
        query = std::make_shared<SelectStmt>();
        query->items.push_back(SelectItem{});
        query->items.back().star_position = table.position;
        query->from = table;
      }
      s.kind = Statement::Kind::kCopy;
      s.copy = copy;
      copy->query = std::move(query);
      return;
    }
    if (copy->format == "arrow") p_.FailAt(path, "COPY ... FROM reads csv or json; FORMAT arrow is for COPY ... TO");
    TableRef file;
    file.kind = copy->format == "json" ? TableRef::Kind::kJson : TableRef::Kind::kCsv;
    file.name = copy->path;
    file.position = path.position;
    file.delimiter = copy->delimiter;
    file.header = copy->header;
    auto select = std::make_shared<SelectStmt>();
    select->items.push_back(SelectItem{});
    select->items.back().star_position = path.position;
    select->from = file;
    s.kind = Statement::Kind::kInsert;
    s.insert = std::make_shared<InsertStmt>();
    s.insert->table = table;
    s.insert->select = std::move(select);
  }

  std::shared_ptr<SetStmt> ParseSet() {
    auto set = std::make_shared<SetStmt>();
    set->reset = p_.Next().IsKeyword("RESET");
    if (!p_.ConsumeKeyword("GLOBAL")) p_.ConsumeKeyword("SESSION");
    set->name_position = p_.Peek().position;
    set->name = AsciiLower(p_.ExpectIdentifier("a setting (memory_limit, threads)"));
    if (set->reset) return set;
    if (!p_.ConsumeSymbol("=")) p_.ExpectKeyword("TO");
    const Token& value = p_.Peek();
    set->value_position = value.position;
    if (value.kind == TokenKind::kString) set->value = p_.Next().value;
    else if (value.kind == TokenKind::kInteger) set->value = p_.Next().text;
    else set->value = p_.ExpectIdentifier("a value");
    return set;
  }

  void ParseCopyOption(CopyStmt& copy) {
    const Token name = p_.Peek();
    const std::string option = AsciiLower(p_.ExpectIdentifier("a COPY option (FORMAT, HEADER, DELIMITER)"));
    if (option == "format") {
      const Token at = p_.Peek();
      std::string format = AsciiLower(at.kind == TokenKind::kString ? p_.Next().value : p_.ExpectIdentifier("a format"));
      if (format == "ndjson" || format == "jsonl" || format == "newline_delimited") format = "json";
      if (format != "csv" && format != "json" && format != "arrow")
        p_.FailAt(at, fmt::format("COPY FORMAT {} is not supported (csv, json, arrow)", format));
      copy.format = format;
    } else if (option == "header") {
      if (p_.ConsumeKeyword("FALSE")) copy.header = false;
      else if (p_.ConsumeKeyword("TRUE")) copy.header = true;
      else if (p_.Peek().kind == TokenKind::kInteger) copy.header = p_.Next().text != "0";
      else copy.header = true;  // HEADER alone
    } else if (option == "delimiter" || option == "delim" || option == "sep") {
      const Token at = p_.Peek();
      std::string d = ExpectString("a one-character delimiter in quotes");
      if (d == "\\t") d = "\t";
      if (d.size() != 1) p_.FailAt(at, "the delimiter must be one character");
      copy.delimiter = d[0];
    } else {
      p_.FailAt(name, fmt::format("unknown COPY option '{}' (FORMAT, HEADER, DELIMITER)", option));
    }
  }

  // vector_search('table', 'column', [..], k [, nprobes [, refine_factor]]), after its name.
  void ParseVectorSearch(TableRef& ref) {
    p_.ExpectSymbol("(");
    ref.kind = TableRef::Kind::kVectorSearch;
    ref.name = ExpectString("a table name in quotes");
    ref.alias = "vector_search";
    auto query = std::make_shared<VectorQuery>();
    p_.ExpectSymbol(",");
    query->column = ExpectString("a vector column name in quotes");
    p_.ExpectSymbol(",");
    const Token at = p_.Peek();
    const std::optional<std::vector<double>> vector = ConstantVector(p_.ParseExpression());
    if (!vector) p_.FailAt(at, "vector_search() expects a constant vector of numbers, such as [0.1, 0.2]");
    query->vector = *vector;
    p_.ExpectSymbol(",");
    query->k = ParseCount("k");
    if (p_.ConsumeSymbol(",")) query->nprobes = ParseCount("nprobes");
    if (p_.ConsumeSymbol(",")) query->refine_factor = ParseCount("refine_factor");
    p_.ExpectSymbol(")");
    ref.search = std::move(query);
  }

  std::string ExpectString(const char* what) {
    if (p_.Peek().kind != TokenKind::kString) p_.Fail(what);
    return p_.Next().value;
  }

  // One named argument of read_csv / read_json, DuckDB style: delim=';' (or sep),
  // header=false, columns={'id': 'int64', 'v': 'fixed_size_list<float32,4>'}, or
  // schema='id:int64,v:fixed_size_list<float32,4>'.
  void ParseFileOption(TableRef& ref) {
    const Token name = p_.Peek();
    std::string option = AsciiLower(p_.ExpectIdentifier("an option name (delim, header, columns, schema)"));
    p_.ExpectSymbol("=");
    const bool csv = ref.kind == TableRef::Kind::kCsv;
    if ((option == "delim" || option == "sep") && csv) {
      const Token at = p_.Peek();
      std::string d = ExpectString("a one-character delimiter in quotes");
      if (d == "\\t") d = "\t";
      if (d.size() != 1) p_.FailAt(at, "the delimiter must be one character");
      ref.delimiter = d[0];
    } else if (option == "header" && csv) {
      if (p_.ConsumeKeyword("TRUE")) {
        ref.header = true;
      } else {
        p_.ExpectKeyword("FALSE");
        ref.header = false;
      }
    } else if (option == "schema" || option == "columns") {
      const Token at = p_.Peek();
      std::string text;
      if (option == "schema") {
        text = ExpectString("a schema in quotes, e.g. 'id:int64,name:utf8'");
      } else {
        p_.ExpectSymbol("{");
        do {
          std::string column = ExpectString("a column name in quotes");
          p_.ExpectSymbol(":");
          text += (text.empty() ? "" : ",") + column + ":" + ExpectString("a type in quotes, e.g. 'int64'");
        } while (p_.ConsumeSymbol(","));
        p_.ExpectSymbol("}");
      }
      try {
        ref.columns = Schema::Parse(text);
      } catch (const Error& e) {
        p_.FailAt(at, fmt::format("invalid {}: {}", option, e.what()));
      }
    } else {
      p_.FailAt(name, fmt::format("unknown {} option '{}' ({})", csv ? "read_csv" : "read_json", option,
                                  csv ? "delim, sep, header, columns, schema" : "columns, schema"));
    }
  }

  // A SELECT, or SELECTs joined by UNION [ALL] with the ORDER BY / LIMIT after the last
  // one applying to them all.
  std::shared_ptr<SelectStmt> ParseSelect() {
    auto first = ParseSelectCore();
    if (!p_.Peek().IsKeyword("UNION")) {
      ParseOrderAndLimit(*first);
      return first;
    }
    auto compound = std::make_shared<SelectStmt>();
    compound->union_position = p_.Peek().position;
    compound->union_parts.push_back(first);
    while (p_.ConsumeKeyword("UNION")) {
      compound->union_all.push_back(p_.ConsumeKeyword("ALL"));
      compound->union_parts.push_back(ParseSelectCore());
    }
    ParseOrderAndLimit(*compound);
    return compound;
  }

  // SELECT ... through HAVING.
  std::shared_ptr<SelectStmt> ParseSelectCore() {
    auto s = std::make_shared<SelectStmt>();
    p_.ExpectKeyword("SELECT");
    if (p_.ConsumeKeyword("DISTINCT")) s->distinct = true;
    else p_.ConsumeKeyword("ALL");
    do {
      SelectItem item;
      if (p_.Peek().IsSymbol("*")) {
        item.star_position = p_.Next().position;
        ParseStarModifiers(item);
        s->items.push_back(item);
        continue;
      }
      const bool qualified_star = (p_.Peek().kind == TokenKind::kIdentifier ||
                                   p_.Peek().kind == TokenKind::kQuotedIdentifier) &&
                                  p_.Peek(1).IsSymbol(".") && p_.Peek(2).IsSymbol("*");
      if (qualified_star) {  // q.*: every column of the source q
        item.star_position = p_.Peek().position;
        item.star_qualifier = p_.ExpectIdentifier("a table name");
        p_.ExpectSymbol(".");
        p_.ExpectSymbol("*");
        ParseStarModifiers(item);
        s->items.push_back(item);
        continue;
      }
      item.expr = p_.ParseExpression();
      if (p_.ConsumeKeyword("AS")) {
        item.alias = p_.ExpectIdentifier("an alias");
      } else if ((p_.Peek().kind == TokenKind::kIdentifier && !IsReservedWord(p_.Peek().text)) ||
                 p_.Peek().kind == TokenKind::kQuotedIdentifier) {
        item.alias = p_.ExpectIdentifier("an alias");
      }
      s->items.push_back(item);
    } while (p_.ConsumeSymbol(","));
    if (p_.ConsumeKeyword("FROM")) {
      s->from = ParseTableRef(true, true);
      while (auto join = ParseJoin()) s->joins.push_back(std::move(*join));
    }
    if (p_.ConsumeKeyword("WHERE")) s->where = p_.ParseExpression();
    if (p_.ConsumeKeyword("GROUP")) {
      p_.ExpectKeyword("BY");
      if (p_.ConsumeKeyword("ALL")) {
        s->group_by_all = true;
      } else {
        do s->group_by.push_back(p_.ParseExpression());
        while (p_.ConsumeSymbol(","));
      }
    }
    if (p_.ConsumeKeyword("HAVING")) s->having = p_.ParseExpression();
    if (p_.ConsumeKeyword("QUALIFY")) s->qualify = p_.ParseExpression();
    return s;
  }

  // After * or q.*: EXCLUDE (a, ...) or EXCLUDE a, then REPLACE (expr AS a, ...).
  void ParseStarModifiers(SelectItem& item) {
    if (p_.ConsumeKeyword("EXCLUDE")) {
      const bool list = p_.ConsumeSymbol("(");
      do {
        const int at = p_.Peek().position;
        item.exclude.emplace_back(p_.ExpectIdentifier("a column to exclude"), at);
      } while (list && p_.ConsumeSymbol(","));
      if (list) p_.ExpectSymbol(")");
    }
    if (p_.ConsumeKeyword("REPLACE")) {
      const bool list = p_.ConsumeSymbol("(");
      do {
        ExprPtr e = p_.ParseExpression();
        p_.ExpectKeyword("AS");
        item.replace.emplace_back(p_.ExpectIdentifier("the column to replace"), std::move(e));
      } while (list && p_.ConsumeSymbol(","));
      if (list) p_.ExpectSymbol(")");
    }
  }

  void ParseOrderAndLimit(SelectStmt& stmt) {
    SelectStmt* s = &stmt;
    if (p_.ConsumeKeyword("ORDER")) {
      p_.ExpectKeyword("BY");
      do {
        OrderItem o;
        o.expr = p_.ParseExpression();
        if (p_.ConsumeKeyword("DESC")) o.descending = true;
        else p_.ConsumeKeyword("ASC");
        if (p_.Peek().IsKeyword("NULLS")) {
          p_.Next();
          if (p_.ConsumeKeyword("FIRST")) o.nulls_first = true;
          else if (p_.ConsumeKeyword("LAST")) o.nulls_first = false;
          else p_.Fail("FIRST or LAST");
        }
        s->order_by.push_back(o);
      } while (p_.ConsumeSymbol(","));
    }
    for (int i = 0; i < 2; ++i) {
      if (!s->limit && p_.ConsumeKeyword("LIMIT")) s->limit = ParseCount("after LIMIT");
      if (s->offset == 0 && p_.ConsumeKeyword("OFFSET")) s->offset = ParseCount("after OFFSET");
    }
  }

  // [INNER | LEFT [OUTER] | RIGHT [OUTER] | FULL [OUTER]] JOIN t (ON cond | USING (cols)),
  // CROSS JOIN t, or `, t`.
  std::optional<JoinClause> ParseJoin() {
    JoinClause join;
    join.position = p_.Peek().position;
    if (p_.ConsumeSymbol(",")) {
      join.kind = JoinClause::Kind::kCross;
      join.table = ParseTableRef(true, true);
      return join;
    }
    if (p_.ConsumeKeyword("CROSS")) {
      join.kind = JoinClause::Kind::kCross;
    } else if (p_.ConsumeKeyword("LEFT")) {
      join.kind = JoinClause::Kind::kLeft;
      p_.ConsumeKeyword("OUTER");
    } else if (p_.ConsumeKeyword("RIGHT")) {
      join.kind = JoinClause::Kind::kRight;
      p_.ConsumeKeyword("OUTER");
    } else if (p_.ConsumeKeyword("FULL")) {
      join.kind = JoinClause::Kind::kFull;
      p_.ConsumeKeyword("OUTER");
    } else if (!p_.ConsumeKeyword("INNER") && !p_.Peek().IsKeyword("JOIN")) {
      return std::nullopt;
    }
    p_.ExpectKeyword("JOIN");
    join.table = ParseTableRef(true, true);
    if (join.kind == JoinClause::Kind::kCross) return join;
    if (p_.ConsumeKeyword("USING")) {
      join.using_columns = ParseColumnList();
    } else {
      p_.ExpectKeyword("ON");
      join.on = p_.ParseExpression();
    }
    return join;
  }

  std::vector<std::string> ParseColumnList() {
    std::vector<std::string> columns;
    p_.ExpectSymbol("(");
    do columns.push_back(p_.ExpectIdentifier("a column name"));
    while (p_.ConsumeSymbol(","));
    p_.ExpectSymbol(")");
    return columns;
  }

  std::vector<ExprPtr> ParseValueRow() {
    std::vector<ExprPtr> row;
    p_.ExpectSymbol("(");
    do row.push_back(p_.ParseExpression());
    while (p_.ConsumeSymbol(","));
    p_.ExpectSymbol(")");
    return row;
  }

  std::shared_ptr<InsertStmt> ParseInsert() {
    auto s = std::make_shared<InsertStmt>();
    p_.ExpectKeyword("INSERT");
    p_.ExpectKeyword("INTO");
    s->table = ParseTableRef(false, false);
    if (p_.Peek().IsSymbol("(")) s->columns = ParseColumnList();
    ParseRowSource(s->values, s->select);
    return s;
  }

  // VALUES (...), (...) into `values`, or a SELECT into `select`: the rows of INSERT and
  // of CREATE TABLE ... AS.
  void ParseRowSource(std::vector<std::vector<ExprPtr>>& values, std::shared_ptr<SelectStmt>& select) {
    if (p_.ConsumeKeyword("VALUES")) {
      do values.push_back(ParseValueRow());
      while (p_.ConsumeSymbol(","));
    } else if (p_.Peek().IsKeyword("SELECT")) {
      select = ParseSelect();
    } else {
      p_.Fail("VALUES or SELECT");
    }
  }

  std::vector<SetItem> ParseSetList() {
    std::vector<SetItem> set;
    do {
      SetItem item;
      item.position = p_.Peek().position;
      item.column = p_.ExpectIdentifier("a column name");
      // SET t.col = ...: the qualifier is the target's and is dropped.
      if (p_.ConsumeSymbol(".")) item.column = p_.ExpectIdentifier("a column name");
      p_.ExpectSymbol("=");
      item.expr = p_.ParseExpression();
      set.push_back(item);
    } while (p_.ConsumeSymbol(","));
    return set;
  }

  std::shared_ptr<UpdateStmt> ParseUpdate() {
    auto s = std::make_shared<UpdateStmt>();
    p_.ExpectKeyword("UPDATE");
    s->table = ParseTableRef(false, false);
    p_.ExpectKeyword("SET");
    s->set = ParseSetList();
    if (p_.ConsumeKeyword("WHERE")) s->where = p_.ParseExpression();
    return s;
  }

  std::shared_ptr<DeleteStmt> ParseDelete() {
    auto s = std::make_shared<DeleteStmt>();
    p_.ExpectKeyword("DELETE");
    p_.ExpectKeyword("FROM");
    s->table = ParseTableRef(false, false);
    if (p_.ConsumeKeyword("WHERE")) s->where = p_.ParseExpression();
    return s;
  }

  // CREATE [OR REPLACE] [TEMP | TEMPORARY] VIEW ...
  bool IsCreateView() const {
    size_t k = 1;
    if (p_.Peek(k).IsKeyword("OR") && p_.Peek(k + 1).IsKeyword("REPLACE")) k += 2;
    if (p_.Peek(k).IsKeyword("TEMP") || p_.Peek(k).IsKeyword("TEMPORARY")) ++k;
    return p_.Peek(k).IsKeyword("VIEW");
  }

  std::shared_ptr<ViewStmt> ParseCreateView() {
    auto s = std::make_shared<ViewStmt>();
    p_.ExpectKeyword("CREATE");
    if (p_.ConsumeKeyword("OR")) {
      p_.ExpectKeyword("REPLACE");
      s->or_replace = true;
    }
    s->temporary = p_.ConsumeKeyword("TEMP") || p_.ConsumeKeyword("TEMPORARY");
    p_.ExpectKeyword("VIEW");
    s->if_exists = ConsumeIfExists(true);
    if (s->if_exists && s->or_replace) p_.Fail("IF NOT EXISTS or OR REPLACE, not both");
    s->name_position = p_.Peek().position;
    s->name = ParseTableName();
    p_.ExpectKeyword("AS");
    const Token& query = p_.Peek();
    if (!query.IsKeyword("SELECT") && !query.IsKeyword("WITH")) p_.Fail("SELECT");
    std::string text = p_.text()->substr(size_t(query.position - 1));
    while (!text.empty() && (text.back() == ';' || text.back() == ' ' || text.back() == '\n' || text.back() == '\t' ||
                             text.back() == '\r'))
      text.pop_back();
    s->query = std::move(text);
    if (query.IsKeyword("WITH")) {  // the view's WITH names are its own
      s->select = StatementParser(s->query, views_, depth_ + 1).ParseViewQuery();
      while (!p_.AtEnd()) p_.Next();
    } else {
      s->select = ParseSelect();
    }
    return s;
  }

  std::shared_ptr<CreateTableStmt> ParseCreate() {
    auto s = std::make_shared<CreateTableStmt>();
    p_.ExpectKeyword("CREATE");
    p_.ExpectKeyword("TABLE");
    s->if_not_exists = ConsumeIfExists(true);
    s->table.position = p_.Peek().position;
    s->table.name = ParseTableName();
    if (p_.ConsumeSymbol("(")) {
      do {
        ColumnDef c;
        c.name = p_.ExpectIdentifier("a column name");
        c.type = p_.ParseTypeName();
        if (p_.ConsumeKeyword("NOT")) {
          p_.ExpectKeyword("NULL");
          c.nullable = false;
        } else {
          p_.ConsumeKeyword("NULL");
        }
        s->columns.push_back(c);
      } while (p_.ConsumeSymbol(","));
      p_.ExpectSymbol(")");
    }
    if (p_.ConsumeKeyword("WITH")) {
      p_.ExpectSymbol("(");
      do {
        std::string key = AsciiLower(p_.ExpectIdentifier("an option name"));
        p_.ExpectSymbol("=");
        const Token& v = p_.Peek();
        if (v.kind == TokenKind::kIdentifier || v.kind == TokenKind::kString || v.kind == TokenKind::kInteger ||
            v.kind == TokenKind::kFloat) {
          Token value = p_.Next();
          s->with[key] = value.kind == TokenKind::kString ? value.value : AsciiLower(value.text);
        } else {
          p_.Fail("an option value");
        }
      } while (p_.ConsumeSymbol(","));
      p_.ExpectSymbol(")");
    }
    if (s->columns.empty()) {
      p_.ExpectKeyword("AS");
      if (!p_.Peek().IsKeyword("SELECT")) p_.Fail("SELECT");
      s->select = ParseSelect();
    } else if (p_.ConsumeKeyword("AS")) {
      ParseRowSource(s->values, s->select);
    }
    return s;
  }

  std::shared_ptr<CreateIndexStmt> ParseCreateIndex() {
    auto s = std::make_shared<CreateIndexStmt>();
    p_.ExpectKeyword("CREATE");
    p_.ExpectKeyword("INDEX");
    s->if_not_exists = ConsumeIfExists(true);
    s->name = p_.ExpectIdentifier("an index name");
    p_.ExpectKeyword("ON");
    s->table.position = p_.Peek().position;
    s->table.name = ParseTableName();
    p_.ExpectSymbol("(");
    s->column_position = p_.Peek().position;
    s->column = p_.ExpectIdentifier("a column name");
    while (p_.ConsumeSymbol("."))  // a struct field: s.a
      s->column += "." + p_.ExpectIdentifier("a struct field name");
    p_.ExpectSymbol(")");
    if (p_.ConsumeKeyword("USING")) {
      if (p_.ConsumeKeyword("BITMAP")) s->type = IndexType::kBitmap;
      else if (p_.ConsumeKeyword("BTREE")) s->type = IndexType::kBTree;
      else if (p_.ConsumeKeyword("IVF_FLAT")) s->type = IndexType::kIvfFlat;
      else if (p_.ConsumeKeyword("IVF_PQ")) s->type = IndexType::kIvfPq;
      else p_.Fail("BTREE, BITMAP, IVF_FLAT or IVF_PQ");
    }
    if (p_.ConsumeKeyword("WITH")) ParseVectorIndexOptions(s->vector);
    return s;
  }

  // (name = value, ...): the vector index options CreateIndexStmt names.
  void ParseVectorIndexOptions(VectorIndexOptions& o) {
    p_.ExpectSymbol("(");
    do {
      const Token at = p_.Peek();
      std::string key = p_.ExpectIdentifier("an index option");
      for (char& c : key) c = char(std::tolower(static_cast<unsigned char>(c)));
      p_.ExpectSymbol("=");
      if (key == "distance" || key == "metric") {
        if (p_.Peek().kind != TokenKind::kString) p_.Fail("a quoted distance ('l2', 'cosine' or 'dot')");
        o.distance = p_.Next().value;
        continue;
      }
      const int64_t n = ParseCount(("for " + key).c_str());
      if (n > int64_t(UINT32_MAX)) p_.Fail("a smaller " + key);
      if (key == "partitions" || key == "num_partitions") o.num_partitions = uint32_t(n);
      else if (key == "sub_vectors" || key == "num_sub_vectors") o.num_sub_vectors = uint32_t(n);
      else if (key == "bits" || key == "num_bits") o.num_bits = uint32_t(n);
      else if (key == "sample_rate") o.sample_rate = uint32_t(n);
      else if (key == "max_iterations" || key == "max_iters") o.max_iterations = uint32_t(n);
      else p_.FailAt(at, "an index option: partitions, sub_vectors, bits, distance, sample_rate or max_iterations");
    } while (p_.ConsumeSymbol(","));
    p_.ExpectSymbol(")");
  }

  std::shared_ptr<AlterTableStmt> ParseAlterTable() {
    using Action = AlterTableStmt::Action;
    p_.ExpectKeyword("ALTER");
    p_.ExpectKeyword("TABLE");
    auto s = std::make_shared<AlterTableStmt>();
    s->table.position = p_.Peek().position;
    s->table.name = ParseTableName();
    auto column = [&] {
      std::string path = p_.ExpectIdentifier("a column name");
      while (p_.ConsumeSymbol(".")) path += "." + p_.ExpectIdentifier("a nested column name");
      return path;
    };
    if (p_.ConsumeKeyword("ADD")) {
      p_.ConsumeKeyword("COLUMN");
      s->action = Action::kAddColumn;
      s->column = p_.ExpectIdentifier("the new column's name");
      const Token at = p_.Peek();
      const TypePtr type = p_.ParseTypeName();
      ExprPtr value = Expr::Literal(Scalar::Null(nullptr));
      if (p_.ConsumeKeyword("DEFAULT")) value = p_.ParseExpression();
      auto cast = std::make_shared<Expr>(*Expr::Cast(value, type));
      cast->position = at.position;
      s->value = cast;
    } else if (p_.ConsumeKeyword("DROP")) {
      p_.ConsumeKeyword("COLUMN");
      s->action = Action::kDropColumn;
      s->column = column();
    } else if (p_.ConsumeKeyword("RENAME")) {
      p_.ConsumeKeyword("COLUMN");
      s->action = Action::kRenameColumn;
      s->column = column();
      p_.ExpectKeyword("TO");
      s->new_name = p_.ExpectIdentifier("the new column name");
    } else if (p_.ConsumeKeyword("ALTER")) {
      p_.ConsumeKeyword("COLUMN");
      s->column = column();
      if (p_.ConsumeKeyword("SET")) {
        s->action = Action::kSetNotNull;
      } else {
        p_.ExpectKeyword("DROP");
        s->action = Action::kDropNotNull;
      }
      p_.ExpectKeyword("NOT");
      p_.ExpectKeyword("NULL");
    } else {
      p_.Fail("ADD COLUMN, DROP COLUMN, RENAME COLUMN or ALTER COLUMN");
    }
    return s;
  }

  std::shared_ptr<DropIndexStmt> ParseDropIndex() {
    auto s = std::make_shared<DropIndexStmt>();
    p_.ExpectKeyword("DROP");
    p_.ExpectKeyword("INDEX");
    s->if_exists = ConsumeIfExists(false);
    s->name_position = p_.Peek().position;
    s->name = p_.ExpectIdentifier("an index name");
    p_.ExpectKeyword("ON");
    s->table.position = p_.Peek().position;
    s->table.name = ParseTableName();
    return s;
  }

  std::shared_ptr<DropTableStmt> ParseDrop() {
    auto s = std::make_shared<DropTableStmt>();
    p_.ExpectKeyword("DROP");
    p_.ExpectKeyword("TABLE");
    s->if_exists = ConsumeIfExists(false);
    s->table.position = p_.Peek().position;
    s->table.name = ParseTableName();
    return s;
  }

  std::shared_ptr<MergeStmt> ParseMerge() {
    auto s = std::make_shared<MergeStmt>();
    p_.ExpectKeyword("MERGE");
    p_.ExpectKeyword("INTO");
    s->target = ParseTableRef(false, false);
    p_.ExpectKeyword("USING");
    s->source = ParseTableRef(true, true);
    p_.ExpectKeyword("ON");
    s->on = p_.ParseExpression();
    while (p_.Peek().IsKeyword("WHEN")) {
      MergeClause c;
      c.position = p_.Next().position;
      c.matched = !p_.ConsumeKeyword("NOT");
      p_.ExpectKeyword("MATCHED");
      if (!c.matched && p_.ConsumeKeyword("BY")) {
        if (p_.ConsumeKeyword("SOURCE"))
          c.by_source = true;
        else if (!p_.ConsumeKeyword("TARGET"))
          p_.Fail("SOURCE or TARGET");
      }
      if (p_.ConsumeKeyword("AND")) c.condition = p_.ParseExpression();
      p_.ExpectKeyword("THEN");
      const bool target_row = c.matched || c.by_source;  // the clause acts on a target row
      if (target_row && p_.ConsumeKeyword("UPDATE")) {
        c.action = MergeClause::Action::kUpdate;
        p_.ExpectKeyword("SET");
        c.set = ParseSetList();
      } else if (target_row && p_.ConsumeKeyword("DELETE")) {
        c.action = MergeClause::Action::kDelete;
      } else if (!target_row && p_.ConsumeKeyword("INSERT")) {
        c.action = MergeClause::Action::kInsert;
        if (p_.Peek().IsSymbol("(")) c.columns = ParseColumnList();
        p_.ExpectKeyword("VALUES");
        c.values = ParseValueRow();
      } else {
        p_.Fail(target_row ? "UPDATE or DELETE" : "INSERT");
      }
      s->clauses.push_back(std::move(c));
    }
    if (s->clauses.empty()) p_.Fail("WHEN MATCHED or WHEN NOT MATCHED");
    return s;
  }

  Parser p_;
};

}  // namespace

Statement ParseStatement(const std::string& text, const ViewLookup& views) {
  return StatementParser(text, views).Parse();
}

}  // namespace lancelet::sql
