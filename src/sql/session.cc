// SqlSession: splitting scripts, dispatching statements, and turning failures into
// SqlError with a position in the statement.
#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "array/ascii_case.h"
#include "io/object_store.h"
#include "lancelet/sql.h"
#include "sql/exec.h"
#include "sql/transaction.h"

namespace lancelet {

namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::string OneLine(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

}  // namespace

SqlError::SqlError(ErrorKind kind, std::string detail, std::string statement, int position)
    : Error(kind, position > 0 ? fmt::format("{} at position {}", detail, position) : detail),
      detail_(std::move(detail)),
      statement_(std::move(statement)),
      position_(position) {}

std::string SqlError::Render() const {
  std::string out = what();
  if (position_ <= 0 || statement_.empty()) return out;
  // The statement on one line, then a caret under the failing byte.
  std::string line = OneLine(statement_);
  out += "\n  " + line + "\n  " + std::string(size_t(position_ - 1), ' ') + "^";
  return out;
}

SqlSession::SqlSession(std::string db_dir, StorageOptions storage_options)
    : db_dir_(std::move(db_dir)), storage_options_(io::CheckStorageOptions(storage_options)) {}

SqlSession::~SqlSession() {
  if (!transaction_) return;
  try {
    transaction_->Rollback(db_dir_, storage_options_, temp_views_);
  } catch (const Error&) {
  }
}

std::vector<std::string> SqlSession::Tables() const { return sql::ListTables(db_dir_, storage_options_); }

std::vector<std::string> SqlSession::Views() const {
  std::vector<std::string> names = sql::ListViews(db_dir_, storage_options_);
  for (const auto& [name, query] : temp_views_) names.push_back(name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::optional<std::string> SqlSession::ViewQuery(const std::string& name,
                                                 std::optional<std::vector<std::string>>& listed) const {
  // A TEMP view first, then the database's; a table of the same name hides the latter
  // (a view cannot be made under a table's name, but a table can be made after it). The
  // database's views are listed once, at the first name a statement looks up, so that a
  // statement naming several tables asks the store once, not once per table.
  if (auto it = temp_views_.find(name); it != temp_views_.end()) return it->second;
  if (!listed) listed = sql::ListViews(db_dir_, storage_options_);
  if (!std::binary_search(listed->begin(), listed->end(), name)) return std::nullopt;
  std::optional<std::string> query = sql::ReadView(db_dir_, name, storage_options_);
  if (query && sql::TableExistsIn(db_dir_, name, storage_options_)) return std::nullopt;
  return query;
}

sql::Statement SqlSession::Parse(const std::string& statement) const {
  std::optional<std::vector<std::string>> listed;
  return sql::ParseStatement(statement, [&](const std::string& name) { return ViewQuery(name, listed); });
}

DatasetPtr SqlSession::OpenTable(const std::string& name) const {
  if (!sql::TableExistsIn(db_dir_, name, storage_options_)) ThrowNotFound("no table '{}' in {}", name, db_dir_);
  OpenOptions options;
  options.storage_options = storage_options_;
  return Dataset::Open(sql::TablePathIn(db_dir_, name), std::nullopt, options);
}

std::vector<std::string> SqlSession::SplitStatements(const std::string& script) {
  std::vector<std::string> out;
  std::string current;
  char quote = 0;
  for (size_t i = 0; i < script.size(); ++i) {
    char c = script[i];
    if (quote) {
      current += c;
      if (c == quote) quote = 0;  // a doubled quote reopens on the next character
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      current += c;
    } else if (c == '-' && i + 1 < script.size() && script[i + 1] == '-') {
      while (i < script.size() && script[i] != '\n') current += script[i++];
      if (i < script.size()) current += '\n';
    } else if (c == '/' && i + 1 < script.size() && script[i + 1] == '*') {
      // Kept whole (the parser skips it, or reports it unterminated); a ';' inside splits nothing.
      const size_t end = script.find("*/", i + 2);
      const size_t stop = end == std::string::npos ? script.size() : end + 2;
      current.append(script, i, stop - i);
      i = stop - 1;
    } else if (c == ';') {
      if (auto s = Trim(current); !s.empty()) out.push_back(s);
      current.clear();
    } else {
      current += c;
    }
  }
  if (auto s = Trim(current); !s.empty()) out.push_back(s);
  return out;
}

namespace {

// Parse and execution errors as SqlError: a position only where it points into the
// statement itself (errors from expressions re-parsed elsewhere carry other text).
template <typename Fn>
auto AsSqlError(const std::string& statement, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const SqlError&) {
    throw;
  } catch (const ParseError& e) {
    throw SqlError(e.kind(), e.detail(), statement, e.source() == statement ? e.position() : 0);
  } catch (const Error& e) {
    throw SqlError(e.kind(), e.what(), statement, 0);
  }
}

// A SELECT's stream, its errors as SqlError. It owns the statement it reads.
class SqlErrorReader final : public RecordBatchReader {
 public:
  SqlErrorReader(std::shared_ptr<const sql::Statement> statement, std::unique_ptr<sql::Context> ctx)
      : statement_(std::move(statement)), ctx_(std::move(ctx)) {
    input_ = AsSqlError(*ctx_->text, [&] { return sql::OpenSelect(*ctx_, *statement_->select); });
  }
  SchemaPtr schema() const override { return input_->schema(); }
  RecordBatchPtr Next() override {
    return AsSqlError(*ctx_->text, [&] { return input_->Next(); });
  }

 private:
  std::shared_ptr<const sql::Statement> statement_;
  std::unique_ptr<sql::Context> ctx_;
  std::unique_ptr<RecordBatchReader> input_;
};

// SET memory_limit's value: a size with a unit, DuckDB's: B, KB, MB, GB, TB (powers of
// 1000) or KiB, MiB, GiB, TiB (of 1024); a bare number is bytes.
int64_t ParseMemoryLimit(const sql::Context& ctx, const sql::SetStmt& set) {
  const std::string& text = set.value;
  size_t digits = 0;
  double amount = 0;
  try {
    amount = std::stod(text, &digits);
  } catch (const std::exception&) {
    digits = 0;
  }
  std::string unit = AsciiLower(Trim(text.substr(digits)));
  static const std::vector<std::pair<std::string, double>> kUnits = {
      {"", 1},       {"b", 1},         {"bytes", 1},     {"kb", 1e3},      {"mb", 1e6},
      {"gb", 1e9},   {"tb", 1e12},     {"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", double(1 << 30)},
      {"tib", 1099511627776.0}};
  const auto it = std::find_if(kUnits.begin(), kUnits.end(), [&](const auto& u) { return u.first == unit; });
  if (digits == 0 || it == kUnits.end() || !(amount * it->second >= 1 << 20) || amount * it->second > 9e18)
    ctx.Fail(set.value_position, fmt::format("memory_limit '{}' is not a size of at least 1 MiB, such as '512MB' or "
                                             "'4GiB'", text));
  return int64_t(amount * it->second);
}

int ParseThreads(const sql::Context& ctx, const sql::SetStmt& set) {
  int threads = 0;
  const auto [end, error] = std::from_chars(set.value.data(), set.value.data() + set.value.size(), threads);
  if (error != std::errc() || end != set.value.data() + set.value.size() || threads < 1)
    ctx.Fail(set.value_position, fmt::format("threads must be a whole number of at least 1, not '{}'", set.value));
  return threads;
}

SqlResult Run(const sql::Context& ctx, const sql::Statement& s) {
  SqlResult result;
  switch (s.kind) {
    case sql::Statement::Kind::kSelect: result.rows = sql::RunSelect(ctx, *s.select); break;
    case sql::Statement::Kind::kInsert: result.message = sql::RunInsert(ctx, *s.insert); break;
    case sql::Statement::Kind::kUpdate: result.message = sql::RunUpdate(ctx, *s.update); break;
    case sql::Statement::Kind::kDelete: result.message = sql::RunDelete(ctx, *s.del); break;
    case sql::Statement::Kind::kCreateTable: result.message = sql::RunCreateTable(ctx, *s.create); break;
    case sql::Statement::Kind::kDropTable: result.message = sql::RunDropTable(ctx, *s.drop); break;
    case sql::Statement::Kind::kMerge: result.message = sql::RunMerge(ctx, *s.merge); break;
    case sql::Statement::Kind::kCreateIndex: result.message = sql::RunCreateIndex(ctx, *s.create_index); break;
    case sql::Statement::Kind::kDropIndex: result.message = sql::RunDropIndex(ctx, *s.drop_index); break;
    case sql::Statement::Kind::kOptimize: result.message = sql::RunOptimize(ctx, *s.optimize); break;
    case sql::Statement::Kind::kShowIndexes: result.rows = sql::RunShowIndexes(ctx, *s.show_indexes); break;
    case sql::Statement::Kind::kExplain:
      if (s.analyze) result.rows = sql::RunExplainAnalyze(ctx, *s.select);
      else result.message = sql::RunExplain(ctx, *s.select);
      break;
    case sql::Statement::Kind::kDescribe:
      result.rows = s.select ? sql::RunDescribeQuery(ctx, *s.select) : sql::RunDescribe(ctx, s.show_indexes->table);
      break;
    case sql::Statement::Kind::kSummarize: result.rows = sql::RunSummarize(ctx, s.show_indexes->table); break;
    case sql::Statement::Kind::kShowTables:  // SqlSession::RunHere, which knows the session's views
    case sql::Statement::Kind::kCreateView:
    case sql::Statement::Kind::kDropView:
    case sql::Statement::Kind::kBegin:  // and its transaction
    case sql::Statement::Kind::kCommit:
    case sql::Statement::Kind::kRollback: break;
    case sql::Statement::Kind::kAlterTable: result.message = sql::RunAlterTable(ctx, *s.alter); break;
    case sql::Statement::Kind::kCopy: result.message = sql::RunCopy(ctx, *s.copy); break;
    case sql::Statement::Kind::kSet: break;  // SqlSession::Set, which holds the settings
  }
  return result;
}

}  // namespace

void SqlSession::Check(const std::string& raw) {
  std::string statement = Trim(raw);
  AsSqlError(statement, [&] { return sql::ParseStatement(statement); });
}

std::unique_ptr<sql::Context> SqlSession::NewContext(const std::string& statement) const {
  auto ctx = std::make_unique<sql::Context>();
  ctx->db_dir = db_dir_;
  ctx->storage_options = storage_options_;
  ctx->text = std::make_shared<const std::string>(Trim(statement));
  ctx->progress = progress_;
  if (memory_budget_ > 0) ctx->memory_budget = memory_budget_;
  return ctx;
}

SqlResult SqlSession::Set(const sql::Context& ctx, const sql::SetStmt& set) {
  SqlResult result;
  if (set.name == "memory_limit" || set.name == "max_memory") {
    memory_budget_ = set.reset ? 0 : ParseMemoryLimit(ctx, set);
    result.message = fmt::format("SET memory_limit = {} MiB", (memory_budget_ > 0 ? memory_budget_ : sql::DefaultMemoryBudget()) >> 20);
  } else if (set.name == "threads" || set.name == "worker_threads") {
    SetReadAheadThreads(set.reset ? 0 : ParseThreads(ctx, set));
    result.message = fmt::format("SET threads = {} (for the whole process)", ReadAheadThreads());
  } else {
    ctx.Fail(set.name_position, fmt::format("unknown setting '{}' (memory_limit, threads)", set.name));
  }
  return result;
}

void SqlSession::CheckNoCycle(const sql::Context& ctx, const sql::ViewStmt& view) const {
  // Reading the view as it would be: a view that reads itself, directly or through
  // others, nests without end.
  const std::string read = "SELECT * FROM \"" + view.name + "\"";
  std::optional<std::vector<std::string>> listed;
  try {
    sql::ParseStatement(read, [&](const std::string& name) -> std::optional<std::string> {
      return name == view.name ? view.query : ViewQuery(name, listed);
    });
  } catch (const ParseError& e) {
    if (e.detail().find("views nest more than") != std::string::npos)
      ctx.Fail(view.name_position, fmt::format("view '{}' would read itself, through the views its query reads", view.name));
  }
}

SqlResult SqlSession::RunHere(const sql::Context& ctx, const sql::Statement& s) {
  SqlResult result;
  switch (s.kind) {
    case sql::Statement::Kind::kBegin:
      if (transaction_) ctx.Fail(1, "a transaction is open already (COMMIT or ROLLBACK it first)");
      transaction_ = std::make_unique<sql::Transaction>();
      result.message = "BEGIN";
      return result;
    case sql::Statement::Kind::kCommit:
      if (!transaction_) ctx.Fail(1, "no transaction is open (BEGIN starts one)");
      transaction_.reset();
      result.message = "COMMIT";
      return result;
    case sql::Statement::Kind::kRollback: {
      if (!transaction_) ctx.Fail(1, "no transaction is open (BEGIN starts one)");
      const std::unique_ptr<sql::Transaction> undone = std::move(transaction_);
      result.message = undone->Rollback(db_dir_, storage_options_, temp_views_);
      return result;
    }
    default: break;
  }
  return InTransaction(ctx, s, [&] { return RunStatement(ctx, s); });
}

SqlResult SqlSession::InTransaction(const sql::Context& ctx, const sql::Statement& s,
                                    const std::function<SqlResult()>& run) {
  if (!transaction_) return run();
  auto roll_back = [&] {
    const std::unique_ptr<sql::Transaction> undone = std::move(transaction_);
    return "; the transaction is rolled back (" + undone->Rollback(db_dir_, storage_options_, temp_views_) + ")";
  };
  try {
    if (transaction_->Before(s, db_dir_, storage_options_, temp_views_)) return run();
  } catch (const ParseError& e) {
    throw ParseError(e.detail() + roll_back(), e.source() == *ctx.text ? e.position() : 0, *ctx.text);
  } catch (const Error& e) {
    throw Error(e.kind(), e.what() + roll_back());
  }
  return run();  // a read that fails leaves the transaction open
}

SqlResult SqlSession::RunStatement(const sql::Context& ctx, const sql::Statement& s) {
  SqlResult result;
  switch (s.kind) {
    case sql::Statement::Kind::kSet: return Set(ctx, *s.set);
    case sql::Statement::Kind::kCreateView:
      CheckNoCycle(ctx, *s.view);
      result.message = sql::RunCreateView(ctx, *s.view, temp_views_);
      break;
    case sql::Statement::Kind::kDropView: result.message = sql::RunDropView(ctx, *s.view, temp_views_); break;
    case sql::Statement::Kind::kShowTables: result.rows = sql::RunShowTables(ctx, Views()); break;
    default: return Run(ctx, s);
  }
  return result;
}

SqlResult SqlSession::Execute(const std::string& raw) {
  const std::unique_ptr<sql::Context> ctx = NewContext(raw);
  const std::string& statement = *ctx->text;
  return AsSqlError(statement, [&] {
    const sql::Statement parsed = Parse(statement);
    return RunHere(*ctx, parsed);
  });
}

SqlResult SqlSession::ExecuteStreaming(const std::string& raw) {
  std::unique_ptr<sql::Context> ctx = NewContext(raw);
  const std::string& statement = *ctx->text;
  auto parsed = AsSqlError(statement, [&] { return std::make_shared<const sql::Statement>(Parse(statement)); });
  if (parsed->kind != sql::Statement::Kind::kSelect)
    return AsSqlError(statement, [&] { return RunHere(*ctx, *parsed); });
  SqlResult result;
  result.stream = std::make_unique<SqlErrorReader>(parsed, std::move(ctx));
  return result;
}

std::vector<SqlResult> SqlSession::ExecuteScript(
    const std::string& script, const std::function<void(const std::string&, const SqlResult&)>& each) {
  std::vector<std::string> statements = SplitStatements(script);
  for (const auto& statement : statements) Check(statement);
  std::vector<SqlResult> results;
  for (const auto& statement : statements) {
    results.push_back(Execute(statement));
    if (each) each(statement, results.back());
  }
  return results;
}

}  // namespace lancelet
