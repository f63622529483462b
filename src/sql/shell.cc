// `lancelet sql`: scripts and the line-by-line loop over stdin.
#include <istream>
#include <iterator>
#include <ostream>

#include <fmt/format.h>

#include "lancelet/ipc.h"
#include "lancelet/sql.h"
#include "lancelet/text.h"

namespace lancelet {

namespace {

void PrintRows(const RecordBatch& rows, std::ostream& out, const std::string& format) {
  if (format == "arrow") {
    IpcStreamWriter writer(out);
    writer.WriteSchema(*rows.schema());
    if (rows.num_rows() > 0) writer.WriteBatch(rows);
    writer.Close();
    return;
  }
  OutputFormat f = format == "csv" ? OutputFormat::kCsv : format == "jsonl" ? OutputFormat::kJsonLines
                                                                            : OutputFormat::kTable;
  auto writer = MakeBatchWriter(f, out, rows.schema());
  if (rows.num_rows() > 0) writer->Write(rows);
  writer->Finish();
}

// Runs one statement and prints its result or its error. Returns false on error.
bool RunOne(SqlSession& session, const std::string& statement, std::ostream& out, std::ostream& err,
            const SqlShellOptions& options, bool& printed_rows) {
  if (options.echo) {
    out << "> " << statement << ";\n";
    out.flush();
  }
  try {
    SqlResult r = session.Execute(statement);
    if (r.rows) {
      if (printed_rows && options.format == "table" && !options.echo) out << "\n";
      PrintRows(*r.rows, out, options.format);
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

// True when the text ends (ignoring blanks and a trailing -- comment) with ';' outside
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
    } else if (c == ';') {
      ends = true;
    } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      ends = false;
    }
  }
  return ends && !quote;
}

}  // namespace

int RunSqlShell(const std::string& db_dir, const std::string& script, std::istream& in, std::ostream& out,
                std::ostream& err, const SqlShellOptions& options) {
  SqlSession session(db_dir);
  session.set_progress(options.progress);
  bool printed_rows = false;
  // A script (given, or piped in) with a syntax error anywhere reports it having run
  // nothing. Otherwise a given script stops at its first failing statement; piped input,
  // like the interactive loop, goes on after one.
  auto run_script = [&](const std::string& text, bool stop_at_error) {
    auto statements = SqlSession::SplitStatements(text);
    try {
      for (const auto& statement : statements) session.Check(statement);
    } catch (const SqlError& e) {
      err << "lancelet: " << e.Render() << "\n";
      return 1;
    }
    int status = 0;
    for (const auto& statement : statements) {
      if (RunOne(session, statement, out, err, options, printed_rows)) continue;
      status = 1;
      if (stop_at_error) break;
    }
    return status;
  };
  if (!script.empty()) return run_script(script, true);
  if (!options.prompt) return run_script(std::string(std::istreambuf_iterator<char>(in), {}), false);
  int status = 0;
  std::string pending, line;
  auto prompt = [&] {
    if (options.prompt) err << (pending.empty() ? "lancelet> " : "     ...> ") << std::flush;
  };
  prompt();
  while (std::getline(in, line)) {
    pending += line + "\n";
    if (EndsStatement(pending)) {
      for (const auto& statement : SqlSession::SplitStatements(pending))
        if (!RunOne(session, statement, out, err, options, printed_rows)) status = 1;
      pending.clear();
    }
    prompt();
  }
  for (const auto& statement : SqlSession::SplitStatements(pending))
    if (!RunOne(session, statement, out, err, options, printed_rows)) status = 1;
  if (options.prompt) err << "\n";
  return status;
}

}  // namespace lancelet
