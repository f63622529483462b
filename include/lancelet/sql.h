// SQL over a directory of Lance datasets: SELECT, INSERT, UPDATE, DELETE, MERGE INTO,
// CREATE TABLE. A table name resolves to <db>/<name>.lance.
//
//   lancelet::SqlSession db("/data");
//   for (auto& r : db.ExecuteScript("UPDATE users SET age = age + 1 WHERE id = 2; SELECT * FROM users"))
//     if (r.rows) ...;
//
// Every statement is at most one commit, so a failed statement changes nothing; a script
// is parsed whole before its first statement runs. BEGIN ... COMMIT groups statements for
// undo, not isolation: each still commits as it runs (Lance has no commit across tables),
// and ROLLBACK, a failing statement inside, or a session that ends inside the transaction
// restores every table and view it wrote to its state at BEGIN (sql/transaction.h). Errors
// are SqlError: what() is one line; Render() adds the statement with a caret under the
// failing position.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/record_batch.h"
#include "lancelet/storage_options.h"

namespace lancelet {

namespace sql {
struct Context;
struct SetStmt;
struct Statement;
struct ViewStmt;
class Transaction;
}  // namespace sql

struct SqlResult {
  RecordBatchPtr rows;   // the result of a query; null for other statements
  std::string message;   // for other statements, e.g. "UPDATE 2 (users: version 3)"
  // From ExecuteStreaming: a SELECT's rows as they are computed (rows is then null).
  // Reading it may throw SqlError.
  std::unique_ptr<RecordBatchReader> stream;
};

class SqlError : public Error {
 public:
  // `position`: 1-based byte column in `statement`, 0 when unknown.
  SqlError(ErrorKind kind, std::string detail, std::string statement, int position);
  const std::string& statement() const { return statement_; }
  int position() const { return position_; }
  const std::string& detail() const { return detail_; }
  // "<message>\n<statement>\n<spaces>^" (just the message when there is no position).
  std::string Render() const;

 private:
  std::string detail_;
  std::string statement_;
  int position_;
};

class SqlSession {
 public:
  // `db_dir`: a directory, or any URI io's OpenStore takes (memory://NAME), of NAME.lance
  // tables; `storage_options` are its store's (lancelet/storage_options.h).
  explicit SqlSession(std::string db_dir, StorageOptions storage_options = {});
  // Rolls back a transaction left open (errors ignored: a destructor cannot report them).
  ~SqlSession();
  SqlSession(const SqlSession&) = delete;
  SqlSession& operator=(const SqlSession&) = delete;

  // One statement (a trailing ';' is allowed). Throws SqlError.
  SqlResult Execute(const std::string& statement);
  // As Execute, but a SELECT's rows come as a stream, so that a caller printing them
  // holds one batch at a time.
  SqlResult ExecuteStreaming(const std::string& statement);
  // Parses one statement without running it; throws the SqlError Execute would for a
  // syntax error.
  void Check(const std::string& statement);
  // Statements separated by ';'. Every statement is parsed first: a syntax error anywhere
  // throws before any statement runs. Then they run in order, each its own commit, and
  // the first error stops the script (statements before it stay committed).
  // `each` is called after each statement with its text and result.
  std::vector<SqlResult> ExecuteScript(
      const std::string& script,
      const std::function<void(const std::string& statement, const SqlResult&)>& each = nullptr);

  // Splits a script at ';' outside strings, quoted names and comments; pieces are trimmed
  // and empty ones dropped.
  static std::vector<std::string> SplitStatements(const std::string& script);

  // The database's tables (NAME of each NAME.lance dataset holding a version), sorted, and
  // one of them opened as a statement opens it: through the database's store, with the
  // session's storage options. A missing table is NotFound "no table 'NAME' in DB".
  std::vector<std::string> Tables() const;
  DatasetPtr OpenTable(const std::string& name) const;
  // The views a statement can read: the database's (CREATE VIEW) and this session's
  // (CREATE TEMP VIEW), sorted.
  std::vector<std::string> Views() const;

  // Between BEGIN and COMMIT / ROLLBACK.
  bool InTransaction() const { return transaction_ != nullptr; }

  // Show a progress bar on stderr for long work (the CLI sets it when stderr is a tty).
  void set_progress(bool on) { progress_ = on; }
  const std::string& db_dir() const { return db_dir_; }

 private:
  std::unique_ptr<sql::Context> NewContext(const std::string& statement) const;
  // Parses with the views this session sees: the SELECT of view `name`, or nullopt;
  // `listed` holds the database's view names once a lookup has listed them.
  sql::Statement Parse(const std::string& statement) const;
  std::optional<std::string> ViewQuery(const std::string& name, std::optional<std::vector<std::string>>& listed) const;
  // Statements that read or change the session's state (SET, views, SHOW TABLES), and
  // the others through sql::Run.
  SqlResult RunHere(const sql::Context& ctx, const sql::Statement& s);
  SqlResult RunStatement(const sql::Context& ctx, const sql::Statement& s);
  // Runs `run` (a statement); inside a transaction, first notes what it writes, and when it
  // fails rolls the transaction back and says so in its error.
  SqlResult InTransaction(const sql::Context& ctx, const sql::Statement& s, const std::function<SqlResult()>& run);
  // CREATE VIEW: fails when the view would read itself.
  void CheckNoCycle(const sql::Context& ctx, const sql::ViewStmt& view) const;
  // SET / RESET of memory_limit (this session's) or threads (the process's).
  SqlResult Set(const sql::Context& ctx, const sql::SetStmt& set);

  std::string db_dir_;
  StorageOptions storage_options_;
  bool progress_ = false;
  int64_t memory_budget_ = 0;  // SET memory_limit's; 0: LANCELET_SQL_MEMORY_MB or 256 MiB
  std::map<std::string, std::string> temp_views_;  // CREATE TEMP VIEW: name -> SELECT
  std::unique_ptr<sql::Transaction> transaction_;  // BEGIN's, until COMMIT or ROLLBACK
};

}  // namespace lancelet

#include <iosfwd>

namespace lancelet {

struct SqlShellOptions {
  std::string format = "table";  // table, csv, jsonl or arrow
  bool echo = false;             // print each statement (prefixed "> ") before its result
  bool progress = false;         // progress bars on stderr
  bool prompt = false;           // interactive: a prompt, dot commands, line by line
  bool edit = false;             // interactive on a terminal: line editing and history (libedit)
  std::string history_path;      // where the history is kept (empty: nowhere)
  int64_t max_rows = 0;          // table format: show at most this many rows (0: all)
  StorageOptions storage_options = {};  // for the store of the database and its tables
};

// The `lancelet sql` command. Runs `script` (statements separated by ';'), or, when it is
// empty, reads statements from `in` line by line (a statement ends at a ';' that ends a
// line, or at the end of input). Query rows go to `out` in the chosen format; other
// statements print their message line (to `out` in table format, else to `err`, so that
// csv / jsonl / arrow output stays machine-readable). An error prints
// "lancelet: <message>", the statement and a caret line to `err`; a script stops there,
// the interactive loop and piped input go on. A script, and input that is not a terminal,
// is parsed whole first: a syntax error anywhere is reported before any statement runs.
// The interactive loop also takes dot commands (.help lists them) on a line of their own.
// Returns 0, or 1 if any statement failed.
int RunSqlShell(const std::string& db_dir, const std::string& script, std::istream& in, std::ostream& out,
                std::ostream& err, const SqlShellOptions& options);

}  // namespace lancelet
