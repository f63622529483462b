// `lancelet sql`: scripts and the line-by-line loop over stdin.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <istream>
#include <iterator>
#include <optional>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/sql.h"
#include "lancelet/text.h"
#include "sql/exec.h"
#include "sql/line_editor.h"

namespace lancelet {

namespace {

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
  if (format == "table") {
    TableWriteOptions table;
    table.max_rows = options.max_rows;
    writer = MakeTableWriter(out, rows.schema(), table);
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
    if (r.stream) {
      if (printed_rows && options.format == "table" && !options.echo) out << "\n";
      PrintRows(*r.stream, out, options);
      printed_rows = true;
    } else {
      (options.format == "table" ? out : err) << r.message << "\n";
    }
    if (options.echo && options.format == "table") out << "\n";
    out.flush();
    return true;
  } catch (const SqlError& e) {
    out.flush();
    err << "lancelet: " << e.Render() << "\n";
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
    ".tables            the tables (NAME.lance datasets of the directory)\n"
    ".schema [TABLE]    each table's columns and types\n"
    ".mode table|csv|jsonl\n"
    "                   how rows are printed\n"
    ".maxrows N         table mode: show at most N rows (0: all)\n"
    ".timer on|off      print each statement's wall time\n"
    ".bail on|off       stop at the first failing statement\n"
    ".quit, .exit       leave\n";

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
};

// Runs a dot command; errors print one line to `err`. Returns false when it failed. The
// tables are the session's: read through its store with its storage options.
bool RunDotCommand(const std::string& line, const SqlSession& session, ShellState& state, std::ostream& out,
                   std::ostream& err) {
  std::istringstream words(line);
  std::string command, arg, extra;
  words >> command >> arg >> extra;
  auto fail = [&](const std::string& message) {
    err << "lancelet: " << message << "\n";
    return false;
  };
  if (!extra.empty()) return fail(fmt::format("{} takes at most one argument", command));
  if (command == ".help") {
    out << kDotHelp;
  } else if (command == ".quit" || command == ".exit") {
    state.quit = true;
  } else if (command == ".tables") {
    for (const auto& name : session.Tables()) out << name << "\n";
  } else if (command == ".schema") {
    const std::vector<std::string> names = arg.empty() ? session.Tables() : std::vector<std::string>{arg};
    for (const auto& name : names) {
      try {
        const SchemaPtr schema = session.OpenTable(name)->schema();
        out << name << "(";
        const auto& fields = schema->fields();
        for (size_t i = 0; i < fields.size(); ++i)
          out << (i ? ", " : "") << fields[i]->name << " " << fields[i]->type->ToString();
        out << ")\n";
      } catch (const Error& e) {
        return fail(e.what());
      }
    }
  } else if (command == ".mode") {
    if (arg != "table" && arg != "csv" && arg != "jsonl") return fail(".mode takes table, csv or jsonl");
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
    for (const auto& statement : SqlSession::SplitStatements(script))
      if (!RunOne(session, statement, out, err, options, printed_rows)) return 1;
    return 0;
  }

  ShellState state{options};
  int status = 0;
  auto run = [&](const std::string& text) {
    for (const auto& statement : SqlSession::SplitStatements(text)) {
      if (state.quit) return;
      const auto start = std::chrono::steady_clock::now();
      const bool ok = RunOne(session, statement, out, err, state.options, printed_rows);
      if (state.timer)
        out << fmt::format("Run Time: {:.3f} s\n",
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (!ok) {
        status = 1;
        if (state.bail) state.quit = true;
      }
    }
  };
  auto is_dot_command = [](const std::string& pending, const std::string& line) {
    const size_t first = line.find_first_not_of(" \t");
    return pending.find_first_not_of(" \t\n") == std::string::npos && first != std::string::npos && line[first] == '.';
  };
  auto dot_command = [&](const std::string& line) {
    if (!RunDotCommand(line, session, state, out, err)) {
      status = 1;
      if (state.bail) state.quit = true;
    }
  };

  if (!options.prompt) {
    // Piped input: statements and, on lines of their own between statements, dot commands
    // (as DuckDB reads them). Every statement is parsed before anything runs.
    std::vector<std::pair<bool, std::string>> parts;  // (dot command, text)
    std::string pending, line;
    while (std::getline(in, line)) {
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
      if (!dot && !check(text)) return 1;
    for (const auto& [dot, text] : parts) {
      if (state.quit) break;
      if (dot) dot_command(text);
      else run(text);
    }
    return status;
  }

  LineEditor editor(in, err, options.edit, options.history_path);
  std::string pending;
  while (!state.quit) {
    std::optional<std::string> line = editor.ReadLine(pending.empty() ? "lancelet> " : "     ...> ");
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
  err << "\n";
  return status;
}

}  // namespace lancelet
