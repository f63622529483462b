// `lancelet sql`: scripts and the line-by-line loop over stdin.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <istream>
#include <iterator>
#include <optional>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "io/object_store.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/sql.h"
#include "lancelet/text.h"
#include "sql/completion.h"
#include "sql/exec.h"
#include "sql/interrupt.h"
#include "sql/line_editor.h"

namespace lancelet {

namespace {

// The aligned formats, in which statements' messages go with the rows (to `out`).
bool IsTable(const std::string& format) { return format == "table" || format == "box"; }

// Prints a query's rows batch by batch, as they are computed.
void PrintRows(RecordBatchReader& rows, std::ostream& out, const SqlShellOptions& options) {
  const std::string& format = options.format;
  if (format == "arrow") {
    IpcStreamWriter writer(out);
    writer.WriteSchema(*rows.schema());
    while (auto batch = rows.Next())
      if (batch->num_rows() > 0) writer.WriteBatch(*batch);
    writer.Close();
    return;
  }
  std::unique_ptr<BatchWriter> writer;
  if (format == "table" || format == "box") {
    TableWriteOptions table;
    table.max_rows = options.max_rows;
    table.box = format == "box";
    writer = MakeTableWriter(out, rows.schema(), table);
  } else if (format == "markdown") {
    writer = MakeMarkdownWriter(out, rows.schema());
  } else if (format == "line") {
    writer = MakeLineWriter(out, rows.schema());
  } else {
    writer = MakeBatchWriter(format == "csv" ? OutputFormat::kCsv : OutputFormat::kJsonLines, out, rows.schema());
  }
  WriteAll(rows, *writer);
}

// Runs one statement and prints its result or its error. Returns false on error.
bool RunOne(SqlSession& session, const std::string& statement, std::ostream& out, std::ostream& err,
            const SqlShellOptions& options, bool& printed_rows) {
  if (options.echo) {
    out << "> " << statement << ";\n";
    out.flush();
  }
  try {
    SqlResult r = session.ExecuteStreaming(statement);
    if (r.rows) r.stream = sql::BatchesReader(r.rows->schema(), {r.rows});
    if (r.stream) r.stream = sql::Interruptible(std::move(r.stream));  // printing stops on Ctrl-C too
    if (r.stream) {
      if (printed_rows && IsTable(options.format) && !options.echo) out << "\n";
      PrintRows(*r.stream, out, options);
      printed_rows = true;
    } else {
      (IsTable(options.format) ? out : err) << r.message << "\n";
    }
    if (options.echo && IsTable(options.format)) out << "\n";
    out.flush();
    return true;
  } catch (const SqlError& e) {
    out.flush();
    err << "lancelet: " << e.Render() << "\n";
    err.flush();
    return false;
  } catch (const Error& e) {  // Ctrl-C while the rows printed
    out << "\n";
    out.flush();
    err << "lancelet: " << e.what() << "\n";
    err.flush();
    return false;
  }
}

// True when the text ends (ignoring blanks and trailing comments) with ';' outside
// quotes, i.e. holds complete statements.
bool EndsStatement(const std::string& text) {
  char quote = 0;
  bool ends = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      ends = false;
    } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t end = text.find("*/", i + 2);
      if (end == std::string::npos) return false;  // the comment goes on: not complete
      i = end + 1;
    } else if (c == ';') {
      ends = true;
    } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      ends = false;
    }
  }
  return ends && !quote;
}

constexpr const char* kDotHelp =
    ".help              this list\n"
    ".tables            the tables (NAME.lance datasets of the directory) and views\n"
    ".schema [TABLE]    each table's and view's columns and types\n"
    ".mode table|box|csv|jsonl|markdown|line\n"
    "                   how rows are printed\n"
    ".output [FILE]     print results to FILE from now on (none: back to the screen)\n"
    ".once FILE         print the next result to FILE\n"
    ".read FILE         run the statements and dot commands in FILE\n"
    ".import FILE TABLE append a CSV or JSON-lines file's rows to TABLE (made if missing)\n"
    ".maxrows N         table mode: show at most N rows (0: all)\n"
    ".timer on|off      print each statement's wall time\n"
    ".bail on|off       stop at the first failing statement\n"
    ".quit, .exit       leave\n";

// .import FILE TABLE: the file's rows (CSV, or JSON lines by its extension) appended to
// the table, which is made from them when it does not exist; one statement, one commit.
bool ImportFile(SqlSession& session, const std::string& file, const std::string& table, std::ostream& out,
                std::ostream& err) {
  const bool json = file.ends_with(".json") || file.ends_with(".jsonl") || file.ends_with(".ndjson");
  std::string quoted = "'";
  for (char c : file) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  quoted += "'";
  const std::string source = fmt::format("{}({})", json ? "read_json" : "read_csv", quoted);
  const std::vector<std::string> tables = session.Tables();
  const bool exists = std::find(tables.begin(), tables.end(), table) != tables.end();
  const std::string statement = exists ? fmt::format("INSERT INTO \"{}\" SELECT * FROM {}", table, source)
                                       : fmt::format("CREATE TABLE \"{}\" AS SELECT * FROM {}", table, source);
  try {
    out << session.Execute(statement).message << "\n";
    return true;
  } catch (const SqlError& e) {
    err << "lancelet: .import: " << e.what() << "\n";
    return false;
  }
}

// The tables and views, sorted: what FROM can name.
std::vector<std::string> TablesAndViews(const SqlSession& session) {
  std::vector<std::string> names = session.Tables(), views = session.Views();
  names.insert(names.end(), views.begin(), views.end());
  std::sort(names.begin(), names.end());
  return names;
}

// The columns (name, type) of a table, or of a view: its query's, as DESCRIBE finds them
// without reading a row.
std::vector<std::pair<std::string, std::string>> ColumnsOf(SqlSession& session, const std::string& name, bool view) {
  std::vector<std::pair<std::string, std::string>> columns;
  if (!view) {
    for (const auto& f : session.OpenTable(name)->schema()->fields()) columns.push_back({f->name, f->type->ToString()});
    return columns;
  }
  const RecordBatchPtr described = session.Execute("DESCRIBE \"" + name + "\"").rows;
  for (int64_t r = 0; r < described->num_rows(); ++r)
    columns.push_back({GetScalar(*described->column(0), r).as_string(), GetScalar(*described->column(1), r).as_string()});
  return columns;
}

// At the end of the input, a transaction still open is rolled back, as DuckDB's shell
// does, and the shell says so.
void EndTransaction(SqlSession& session, std::ostream& err) {
  if (!session.InTransaction()) return;
  try {
    err << "lancelet: the input ended inside a transaction without COMMIT: " << session.Execute("ROLLBACK").message
        << "\n";
  } catch (const Error& e) {
    err << "lancelet: " << e.what() << "\n";
  }
}

bool ParseOnOff(const std::string& word, bool& value) {
  if (word == "on") value = true;
  else if (word == "off") value = false;
  else return false;
  return true;
}

// The shell's state beyond the options: what dot commands change.
struct ShellState {
  SqlShellOptions options;
  bool timer = false;
  bool bail = false;
  bool quit = false;
  // .output / .once: where results go instead, a file of any store, published whole when
  // it is closed (by the next .output or .once, after a .once statement, at the end).
  std::unique_ptr<io::ObjectOutputStream> output;
  bool output_once = false;

  std::ostream& Results(std::ostream& screen) { return output ? *output : screen; }
  // Publishes the output file, if any; false (having said why on `err`) when the store refused.
  bool CloseOutput(std::ostream& err) {
    std::unique_ptr<io::ObjectOutputStream> file = std::move(output);
    output_once = false;
    if (!file) return true;
    try {
      file->Finish();
      return true;
    } catch (const Error& e) {
      err << "lancelet: " << e.what() << "\n";
      return false;
    }
  }
  void StatementDone(std::ostream& err) {
    if (output_once) CloseOutput(err);
  }
};

// Runs a dot command; errors print one line to `err`. Returns false when it failed. The
// tables are the session's: read through its store with its storage options.
bool RunDotCommand(const std::string& line, SqlSession& session, ShellState& state, std::ostream& out,
                   std::ostream& err) {
  std::istringstream words(line);
  std::string command, arg, extra, more;
  words >> command >> arg >> extra >> more;
  auto fail = [&](const std::string& message) {
    err << "lancelet: " << message << "\n";
    return false;
  };
  if (command == ".import") {
    if (arg.empty() || extra.empty() || !more.empty()) return fail(".import takes a file and a table: .import FILE TABLE");
    return ImportFile(session, arg, extra, out, err);
  }
  if (!extra.empty()) return fail(fmt::format("{} takes at most one argument", command));
  if (command == ".output" || command == ".once") {
    if (arg.empty() && command == ".once") return fail(".once takes a file");
    if (!state.CloseOutput(err) || arg.empty()) return arg.empty();
    try {
      auto [store, path] = io::OpenStore(arg, state.options.storage_options);
      state.output = std::make_unique<io::ObjectOutputStream>(store->OpenWrite(path, /*no_overwrite=*/false));
    } catch (const Error& e) {
      return fail(fmt::format("cannot write '{}': {}", arg, e.what()));
    }
    state.output_once = command == ".once";
    return true;
  }
  if (command == ".help") {
    out << kDotHelp;
  } else if (command == ".quit" || command == ".exit") {
    state.quit = true;
  } else if (command == ".tables") {
    for (const auto& name : TablesAndViews(session)) out << name << "\n";
  } else if (command == ".schema") {
    const std::vector<std::string> views = session.Views();
    const std::vector<std::string> names = arg.empty() ? TablesAndViews(session) : std::vector<std::string>{arg};
    for (const auto& name : names) {
      try {
        const bool view = std::find(views.begin(), views.end(), name) != views.end();
        const auto columns = ColumnsOf(session, name, view);
        out << name << "(";
        for (size_t i = 0; i < columns.size(); ++i) out << (i ? ", " : "") << columns[i].first << " " << columns[i].second;
        out << (view ? ") -- view\n" : ")\n");
      } catch (const Error& e) {
        return fail(e.what());
      }
    }
  } else if (command == ".mode") {
    if (arg != "table" && arg != "box" && arg != "csv" && arg != "jsonl" && arg != "markdown" && arg != "line")
      return fail(".mode takes table, box, csv, jsonl, markdown or line");
    state.options.format = arg;
  } else if (command == ".maxrows") {
    int64_t n = -1;
    auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), n);
    if (arg.empty() || ec != std::errc() || end != arg.data() + arg.size() || n < 0)
      return fail(".maxrows takes a number of rows (0: all)");
    state.options.max_rows = n;
  } else if (command == ".timer") {
    if (!ParseOnOff(arg, state.timer)) return fail(".timer takes on or off");
  } else if (command == ".bail") {
    if (!ParseOnOff(arg, state.bail)) return fail(".bail takes on or off");
  } else {
    return fail(fmt::format("unknown command '{}'; .help lists the commands", command));
  }
  out.flush();
  return true;
}

}  // namespace

int RunSqlShell(const std::string& db_dir, const std::string& script, std::istream& in, std::ostream& out,
                std::ostream& err, const SqlShellOptions& options) {
  SqlSession session(db_dir, options.storage_options);
  session.set_progress(options.progress);
  bool printed_rows = false;
  // A script (given, or piped in) with a syntax error anywhere reports it having run
  // nothing. Otherwise a given script stops at its first failing statement; piped input,
  // like the interactive loop, goes on after one.
  auto check = [&](const std::string& text) {
    try {
      for (const auto& statement : SqlSession::SplitStatements(text)) session.Check(statement);
    } catch (const SqlError& e) {
      err << "lancelet: " << e.Render() << "\n";
      return false;
    }
    return true;
  };
  if (!script.empty()) {
    if (!check(script)) return 1;
    int status = 0;
    for (const auto& statement : SqlSession::SplitStatements(script))
      if (!RunOne(session, statement, out, err, options, printed_rows)) {
        status = 1;
        break;
      }
    EndTransaction(session, err);
    return status;
  }

  ShellState state;
  state.options = options;
  int status = 0;
  auto run = [&](const std::string& text) {
    for (const auto& statement : SqlSession::SplitStatements(text)) {
      if (state.quit) return;
      const auto start = std::chrono::steady_clock::now();
      const bool ok = RunOne(session, statement, state.Results(out), err, state.options, printed_rows);
      state.StatementDone(err);
      if (state.timer)
        out << fmt::format("Run Time: {:.3f} s\n",
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (!ok) {
        status = 1;
        if (state.bail) state.quit = true;
      }
      if (sql::InterruptRequested()) return;  // Ctrl-C drops the line's other statements too
    }
  };
  auto is_dot_command = [](const std::string& pending, const std::string& line) {
    const size_t first = line.find_first_not_of(" \t");
    return pending.find_first_not_of(" \t\n") == std::string::npos && first != std::string::npos && line[first] == '.';
  };
  // Piped input, or a file .read names: statements and, on lines of their own between
  // statements, dot commands (as DuckDB reads them). Every statement is parsed before
  // anything runs; false (having run nothing) on a syntax error.
  std::function<bool(std::istream&)> run_input;
  auto dot_command = [&](const std::string& line) {
    std::istringstream words(line);
    std::string command, file, extra;
    words >> command >> file >> extra;
    bool ok = true;
    if (command == ".read") {
      std::unique_ptr<std::istream> input;
      if (file.empty() || !extra.empty()) {
        err << "lancelet: .read takes a file\n";
        ok = false;
      } else {
        try {
          auto [store, path] = io::OpenStore(file, state.options.storage_options);
          input = store->OpenStream(path);
        } catch (const Error& e) {
          err << "lancelet: .read: " << e.what() << "\n";
          ok = false;
        }
      }
      if (input) ok = run_input(*input);
    } else {
      ok = RunDotCommand(line, session, state, out, err);
    }
    if (!ok) {
      status = 1;
      if (state.bail) state.quit = true;
    }
  };
  run_input = [&](std::istream& input) {
    std::vector<std::pair<bool, std::string>> parts;  // (dot command, text)
    std::string pending, line;
    while (std::getline(input, line)) {
      if (is_dot_command(pending, line)) {
        pending.clear();
        parts.push_back({true, line});
        continue;
      }
      pending += line + "\n";
      if (EndsStatement(pending)) parts.push_back({false, std::move(pending)}), pending.clear();
    }
    parts.push_back({false, pending});
    for (const auto& [dot, text] : parts)
      if (!dot && !check(text)) return false;
    for (const auto& [dot, text] : parts) {
      if (state.quit) break;
      if (dot) dot_command(text);
      else run(text);
    }
    return true;
  };

  if (!options.prompt) {
    const bool parsed = run_input(in);
    EndTransaction(session, err);
    return state.CloseOutput(err) && parsed ? status : 1;
  }

  // Ctrl-C stops the running statement (which commits nothing) or, at the prompt, drops
  // the statement being typed; it does not end the shell.
  sql::InterruptHandler on_interrupt;
  LineEditor editor(in, err, options.edit, options.history_path);
  std::string pending;
  // Tab: the candidates for the word under the cursor, read against the statement typed
  // so far (earlier lines too) and the database's tables as they are now.
  editor.SetCompleter([&](const std::string& line, size_t start, size_t end) {
    sql::CompletionSource source;
    try {
      source.tables = TablesAndViews(session);
    } catch (const Error&) {
    }
    source.columns = [&](const std::string& table) {
      std::vector<std::string> names;
      try {
        const std::vector<std::string> views = session.Views();
        const bool view = std::find(views.begin(), views.end(), table) != views.end();
        for (const auto& [column, type] : ColumnsOf(session, table, view)) names.push_back(column);
      } catch (const Error&) {
      }
      return names;
    };
    return sql::CompleteWord(pending + line, pending.size() + start, pending.size() + end, source);
  });
  while (!state.quit) {
    sql::ClearInterrupt();
    std::optional<std::string> line = editor.ReadLine(pending.empty() ? "lancelet> " : "     ...> ");
    if (sql::InterruptRequested()) {
      editor.Interrupted();
      pending.clear();
      err << "^C\n";
      continue;
    }
    if (!line) break;
    if (is_dot_command(pending, *line)) {
      editor.AddHistory(*line);
      dot_command(*line);
      continue;
    }
    pending += *line + "\n";
    if (EndsStatement(pending)) {
      std::string entry = pending;
      entry.pop_back();
      std::replace(entry.begin(), entry.end(), '\n', ' ');
      editor.AddHistory(entry);
      run(pending);
      pending.clear();
    }
  }
  run(pending);
  if (!state.CloseOutput(err)) status = 1;
  err << "\n";
  EndTransaction(session, err);
  return status;
}

}  // namespace lancelet
