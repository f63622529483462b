// The `lancelet` program: dataset commands over the C++ API.
#include "cli/cli.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <functional>
#include <limits>
#include <memory>
#include <cerrno>
#include <cstring>
#include <map>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/inspect.h"
#include "format/protobuf_logging.h"
#include "text/progress.h"
#include "table/dataset_state.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/sql.h"
#include "lancelet/text.h"
#include "lancelet/version.h"

namespace lancelet::cli {

namespace {

// Counts the rows it hands on: what an append added, whatever else landed meanwhile.
class CountingReader : public RecordBatchReader {
 public:
  explicit CountingReader(RecordBatchReader& inner) : inner_(inner) {}
  SchemaPtr schema() const override { return inner_.schema(); }
  RecordBatchPtr Next() override {
    auto batch = inner_.Next();
    if (batch) rows_ += uint64_t(batch->num_rows());
    return batch;
  }
  uint64_t rows() const { return rows_; }

 private:
  RecordBatchReader& inner_;
  uint64_t rows_ = 0;
};

struct OutputOptions {
  std::string format = "table";
};

void AddFormatOption(CLI::App* cmd, OutputOptions& out) {
  cmd->add_option("--format", out.format, "Output format")
      ->check(CLI::IsMember({"table", "csv", "jsonl", "arrow"}))
      ->capture_default_str();
}

// Writes every batch of `reader` to stdout in the chosen format.
void Emit(RecordBatchReader& reader, const std::string& format) {
  if (format == "arrow") {
    IpcStreamWriter writer(std::cout);
    writer.WriteSchema(*reader.schema());
    while (auto batch = reader.Next()) writer.WriteBatch(*batch);
    writer.Close();
    std::cout.flush();
    return;
  }
  OutputFormat f = format == "csv" ? OutputFormat::kCsv : format == "jsonl" ? OutputFormat::kJsonLines
                                                                            : OutputFormat::kTable;
  auto writer = MakeBatchWriter(f, std::cout, reader.schema());
  WriteAll(reader, *writer);
  std::cout.flush();
}

class SingleBatchReader final : public RecordBatchReader {
 public:
  explicit SingleBatchReader(RecordBatchPtr batch) : batch_(std::move(batch)) {}
  SchemaPtr schema() const override { return batch_->schema(); }
  RecordBatchPtr Next() override { return std::exchange(batch_done_, true) ? nullptr : batch_; }

 private:
  RecordBatchPtr batch_;
  bool batch_done_ = false;
};

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

// The input read against `schema_text` if given, else against `fallback` (an append's
// dataset schema), else with an inferred schema.
std::unique_ptr<RecordBatchReader> OpenInput(const std::string& path, const std::string& schema_text,
                                             InputFormat format, SchemaPtr fallback = nullptr) {
  TextReadOptions options;
  options.format = format;
  options.schema = schema_text.empty() ? std::move(fallback) : Schema::Parse(schema_text);
  // "-": standard input, a pipe read as it arrives (its format named by --input-format).
  return OpenTextInput(path == "-" ? "/dev/stdin" : path, options);
}

// Every numeric option is taken as text and checked here, after parsing, by one rule: a
// whole number or a fraction within a range, or one error line naming the option as
// typed. (CLI11 alone would read -1 into an unsigned option as 2^64 - 1.)
class NumberOptions {
 public:
  // `target`: a T or a std::optional<T>.
  template <typename Target, typename T>
  void Whole(CLI::App* cmd, const std::string& flag, Target& target, T min, T max, const std::string& help) {
    Add(cmd, flag, help, [&target, flag, min, max](const std::string& text) {
      target = T(ParseWhole(flag, text, uint64_t(min), uint64_t(max)));
    });
  }
  void Fraction(CLI::App* cmd, const std::string& flag, double& target, double min, double max, const std::string& help) {
    Add(cmd, flag, help, [&target, flag, min, max](const std::string& text) {
      double v = 0;
      size_t used = 0;
      try {
        v = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != text.size() || !(v >= min && v <= max))
        ThrowInvalid("{} '{}': expected a number from {} to {}", flag, text, min, max);
      target = v;
    });
  }
  // Checks and assigns every option given.
  void Apply() const {
    for (const auto& o : options_)
      if (o.option->count() > 0) o.assign(*o.text);
  }

 private:
  static uint64_t ParseWhole(const std::string& flag, const std::string& text, uint64_t min, uint64_t max) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
      ThrowInvalid("{} '{}': expected a whole number from {} to {}", flag, text, min, max);
    return v;
  }
  void Add(CLI::App* cmd, const std::string& flag, const std::string& help,
           std::function<void(const std::string&)> assign) {
    auto text = std::make_shared<std::string>();
    options_.push_back({cmd->add_option(flag, *text, help), text, std::move(assign)});
  }
  struct Entry {
    CLI::Option* option;
    std::shared_ptr<std::string> text;
    std::function<void(const std::string&)> assign;
  };
  std::vector<Entry> options_;
};

// "90", "30s", "15m", "12h", "7d", "2w" as seconds.
int64_t ParseDurationSeconds(const std::string& text) {
  size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(text, &used);
  } catch (const std::exception&) {
  }
  std::string unit = n < 0 ? "?" : text.substr(used);
  static const std::map<std::string, int64_t> kUnits = {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600},
                                                        {"d", 86400}, {"w", 7 * 86400}};
  auto it = kUnits.find(unit);
  if (n < 0 || text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) || it == kUnits.end())
    ThrowInvalid("--older-than '{}': expected a number with an optional unit s, m, h, d or w (e.g. 7d)", text);
  return int64_t(n) * it->second;
}

void RegisterArrowInput() {
  // A regular file is mapped, not read: its batches are decoded one at a time from the
  // page cache, so memory holds a batch, not the file (a 545 MB file read into a string
  // took 1.1 GB and a third of a `create`). Each message's pages leave the mapping once
  // decoded: mapped pages count in the process's memory, and a 3 GB input peaked at 3.1 GB.
  // Pipes are read as a stream (ReadIpcStream).
  SetArrowIpcOpener([](const std::string& path, const TextReadOptions&) -> std::unique_ptr<RecordBatchReader> {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) ThrowNotFound("cannot open '{}': {}", path, std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      std::unique_ptr<RecordBatchReader> reader;  // OpenTextInput conforms its batches
      try {
        reader = ReadIpcMapped(fd, size_t(st.st_size), path);
      } catch (...) {
        ::close(fd);
        throw;
      }
      ::close(fd);
      return reader;
    }
    // A pipe: read as it arrives, a message at a time, through a 1 MiB pipe buffer (64 KiB
    // by default: a read per 64 KiB).
#ifdef F_SETPIPE_SZ
    if (S_ISFIFO(st.st_mode)) ::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#endif
    auto input = std::shared_ptr<int>(new int(fd), [](int* f) {
      ::close(*f);
      delete f;
    });
    return ReadIpcStream(
        [input, path](char* out, size_t n) -> size_t {
          for (;;) {
            const ssize_t got = ::read(*input, out, n);
            if (got >= 0) return size_t(got);
            if (errno != EINTR) ThrowIo("cannot read '{}': {}", path, std::strerror(errno));
          }
        },
        path);
  });
}

}  // namespace

int Main(int argc, char** argv) {
  format::SilenceProtobufLogging();  // our one error line is the only one
  RegisterArrowInput();
  CLI::App app{"lancelet: a native C++ implementation of the Lance table format"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "lancelet " LANCELET_VERSION_STRING);
  NumberOptions numbers;

  // create / append
  std::string dataset, from, schema_text, file_version = WriteOptions{}.file_version;
  int64_t max_rows_per_file = 1024 * 1024;
  bool stable_row_ids = false, overwrite = false;
  auto* create = app.add_subcommand("create", "Create a dataset from a CSV, JSON lines or Arrow IPC file");
  create->add_option("dataset", dataset, "Dataset directory")->required();
  InputFormat input_format = InputFormat::kUnknown;
  const std::map<std::string, InputFormat> input_formats = {
      {"csv", InputFormat::kCsv}, {"jsonl", InputFormat::kJsonLines}, {"arrow", InputFormat::kArrowIpc}};
  auto add_input = [&](CLI::App* command) {
    command->add_option("--from", from, "Input file (.csv, .jsonl/.json, .arrow/.arrows/.ipc), or - for stdin")
        ->required();
    command->add_option("--input-format", input_format, "The input's format when its name does not say it")
        ->transform(CLI::CheckedTransformer(input_formats));
  };
  add_input(create);
  create->add_option("--schema", schema_text, "Schema, e.g. \"id:int32,name:utf8,v:fixed_size_list<float32,4>\"");
  numbers.Whole(create, "--max-rows-per-file", max_rows_per_file, int64_t{1}, int64_t(kMaxRowsPerFile),
                "Rows per fragment (default 1048576)");
  create->add_option("--file-version", file_version, "Lance file version")
      ->check(CLI::IsMember({"2.0", "2.1", "2.2"}))
      ->capture_default_str();
  create->add_flag("--stable-row-ids", stable_row_ids, "Give rows stable ids");
  create->add_flag("--overwrite", overwrite, "Replace the dataset if it exists");

  auto* append = app.add_subcommand("append", "Append rows to a dataset");
  append->add_option("dataset", dataset, "Dataset directory")->required();
  add_input(append);
  append->add_option("--schema", schema_text, "Schema of the input (default: the dataset's)");
  numbers.Whole(append, "--max-rows-per-file", max_rows_per_file, int64_t{1}, int64_t(kMaxRowsPerFile),
                "Rows per fragment (default 1048576)");

  std::string where;
  auto* del = app.add_subcommand("delete", "Delete the rows matching a predicate");
  del->add_option("dataset", dataset, "Dataset directory")->required();
  del->add_option("--where", where, "SQL predicate")->required();

  std::vector<std::string> set_clauses;
  auto* update = app.add_subcommand(
      "update", "Change cells: as data overlay files, a column rewrite or moved rows (--mode; default: cost model)");
  update->add_option("dataset", dataset, "Dataset directory")->required();
  update->add_option("--set", set_clauses, "column = expression (repeatable)")->required();
  update->add_option("--where", where, "SQL predicate (default: every row)");
  std::string update_mode = "auto";
  update->add_option("--mode", update_mode,
                     "overlay (changed cells only), columns (rewrite the SET columns), rows (move the changed rows) "
                     "or auto (table config lancelet.update.mode, else the cost model)")
      ->capture_default_str();

  std::string columns;
  int64_t limit = -1, offset = 0;
  std::optional<uint64_t> version;
  bool with_row_id = false, with_row_address = false;
  OutputOptions out;
  auto* scan = app.add_subcommand("scan", "Print rows");
  scan->add_option("dataset", dataset, "Dataset directory")->required();
  scan->add_option("--columns", columns, "Comma-separated columns (also _rowid, _rowaddr)");
  scan->add_option("--where", where, "SQL predicate");
  numbers.Whole(scan, "--limit", limit, int64_t{0}, std::numeric_limits<int64_t>::max(), "At most this many rows");
  numbers.Whole(scan, "--offset", offset, int64_t{0}, std::numeric_limits<int64_t>::max(), "Skip this many rows first");
  numbers.Whole(scan, "--version", version, uint64_t{1}, std::numeric_limits<uint64_t>::max(), "Read this version");
  scan->add_flag("--with-rowid", with_row_id, "Add the _rowid column");
  scan->add_flag("--with-rowaddr", with_row_address, "Add the _rowaddr column");
  bool no_index = false;
  scan->add_flag("--no-index", no_index, "Filter every row instead of using indexes (same rows)");
  AddFormatOption(scan, out);

  std::string rows;
  bool by_address = false;
  auto* take = app.add_subcommand("take", "Print rows by offset (or by row address)");
  take->add_option("dataset", dataset, "Dataset directory")->required();
  take->add_option("--rows", rows, "Comma-separated row offsets")->required();
  take->add_flag("--addresses", by_address, "Treat --rows as row addresses (fragment << 32 | offset)");
  take->add_option("--columns", columns, "Comma-separated columns");
  numbers.Whole(take, "--version", version, uint64_t{1}, std::numeric_limits<uint64_t>::max(), "Read this version");
  AddFormatOption(take, out);

  auto* count = app.add_subcommand("count", "Count rows");
  count->add_option("dataset", dataset, "Dataset directory")->required();
  count->add_option("--where", where, "SQL predicate");
  numbers.Whole(count, "--version", version, uint64_t{1}, std::numeric_limits<uint64_t>::max(), "Read this version");

  auto* versions = app.add_subcommand("versions", "List versions");
  versions->add_option("dataset", dataset, "Dataset directory")->required();

  auto* inspect = app.add_subcommand("inspect", "Show a version's manifest: flags, schema, fragments");
  inspect->add_option("dataset", dataset, "Dataset directory")->required();
  numbers.Whole(inspect, "--version", version, uint64_t{1}, std::numeric_limits<uint64_t>::max(), "Inspect this version");

  // sql: statements over a directory of datasets (src/sql, include/lancelet/sql.h).
  std::string db_dir, sql_script;
  bool sql_echo = false;
  auto* index = app.add_subcommand("index", "Create, list and drop scalar indexes");
  index->require_subcommand(1);
  std::string index_column, index_type = "btree", index_name;
  bool index_replace = false;
  auto* index_create = index->add_subcommand("create", "Build an index on a column and commit it");
  index_create->add_option("dataset", dataset, "Dataset directory")->required();
  index_create->add_option("column", index_column, "Top-level column")->required();
  index_create->add_option("--type", index_type, "btree (default) or bitmap");
  index_create->add_option("--name", index_name, "Index name (default: <column>_idx)");
  index_create->add_flag("--replace", index_replace, "Replace an index of the same name");
  auto* index_list = index->add_subcommand("list", "List indexes: name, type, columns, coverage, stale rows");
  index_list->add_option("dataset", dataset, "Dataset directory")->required();
  auto* index_optimize =
      index->add_subcommand("optimize", "Index the fragments appended since each index was built (a new segment)");
  index_optimize->add_option("dataset", dataset, "Dataset directory")->required();
  auto* index_stats = index->add_subcommand("stats", "Show an index's segments: version, fragments, rows, bytes");
  index_stats->add_option("dataset", dataset, "Dataset directory")->required();
  index_stats->add_option("name", index_name, "Index name")->required();
  auto* index_drop = index->add_subcommand("drop", "Remove an index");
  index_drop->add_option("dataset", dataset, "Dataset directory")->required();
  index_drop->add_option("name", index_name, "Index name")->required();
  auto* explain = app.add_subcommand("explain", "Show how a filtered scan runs: which indexes, which rows");
  explain->add_option("dataset", dataset, "Dataset directory")->required();
  explain->add_option("--where", where, "SQL predicate")->required();
  numbers.Whole(explain, "--version", version, uint64_t{1}, std::numeric_limits<uint64_t>::max(), "Read this version");

  OptimizeOptions optimize_options;
  bool optimize_plan = false, optimize_no_index = false;
  auto* optimize = app.add_subcommand(
      "optimize", "Compact: fold overlays into base columns, merge small fragments, drop deleted rows");
  optimize->add_option("dataset", dataset, "Dataset directory")->required();
  optimize->add_flag("--plan", optimize_plan, "Print what would be done to each fragment, and why; write nothing");
  numbers.Whole(optimize, "--target-rows-per-fragment", optimize_options.target_rows_per_fragment, uint64_t{1},
                kMaxRowsPerFile, "Fragments with fewer rows are merged with their neighbours (default 1048576)");
  optimize->add_option("--materialize-deletions", optimize_options.materialize_deletions,
                       "Rewrite fragments with many deleted rows (true/false)")
      ->capture_default_str();
  numbers.Fraction(optimize, "--materialize-deletions-threshold", optimize_options.materialize_deletions_threshold, 0.0,
                   1.0, "Deleted fraction above which a fragment is rewritten (default 0.1; 1: never)");
  optimize->add_flag("--merge-overlays", optimize_options.merge_overlays_instead_of_fold,
                     "Merge each fragment's overlays into one instead of folding them into base columns");
  optimize->add_flag("--no-rewrite", [&](int64_t) { optimize_options.rewrite_rows = false; },
                     "Only compact overlays; rows never move");
  optimize->add_flag("--no-index", optimize_no_index, "Do not index the fragments indexes stopped covering");

  std::string older_than;
  std::optional<uint64_t> keep_versions;
  bool cleanup_dry_run = false, delete_unverified = false;
  auto* cleanup = app.add_subcommand("cleanup", "Delete old versions and the files only they use");
  cleanup->add_option("dataset", dataset, "Dataset directory")->required();
  cleanup->add_option("--older-than", older_than, "Remove versions older than this (e.g. 30s, 15m, 12h, 7d, 2w)");
  numbers.Whole(cleanup, "--keep", keep_versions, uint64_t{1}, std::numeric_limits<uint64_t>::max(),
                "Keep the newest N versions");
  cleanup->add_flag("--dry-run", cleanup_dry_run, "List what would be removed; remove nothing");
  bool cleanup_force = false;
  cleanup->add_flag("--force", cleanup_force,
                    "Also remove versions superseded within the last hour (a scan still reading one fails)");
  cleanup->add_flag("--delete-unverified", delete_unverified,
                    "Also remove unreferenced files younger than 7 days (only when no writer is running)");

  std::vector<std::string> config_set, config_unset;
  auto* config = app.add_subcommand("config", "Show or change the table config (e.g. lance.compaction.*)");
  config->add_option("dataset", dataset, "Dataset directory")->required();
  config->add_option("--set", config_set, "key=value (repeatable)");
  config->add_option("--unset", config_unset, "key (repeatable)");

  auto* sql = app.add_subcommand("sql", "Run SQL statements on the datasets NAME.lance of a directory");
  sql->add_option("--db", db_dir, "Directory holding the datasets")->required();
  sql->add_option("statements", sql_script, "Statements separated by ';' (default: read them from stdin)");
  sql->add_flag("--echo", sql_echo, "Print each statement before its result");
  AddFormatOption(sql, out);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  // Progress of long commands is drawn on stderr when it is a terminal.
  const bool progress = isatty(STDERR_FILENO) != 0;
  try {
    numbers.Apply();
    if (*sql) {
      SqlShellOptions options;
      options.format = out.format;
      options.echo = sql_echo;
      options.progress = progress;
      options.prompt = sql_script.empty() && isatty(STDIN_FILENO) != 0;
      if (options.prompt) {
        // As DuckDB's shell: editing and history, and a screenful of rows at most.
        options.edit = true;
        if (const char* home = std::getenv("HOME"); home && *home)
          options.history_path = std::string(home) + "/.lancelet_history";
        if (options.format == "table") options.max_rows = 40;
      }
      return RunSqlShell(db_dir, sql_script, std::cin, std::cout, std::cerr, options);
    }
    if (*create) {
      WriteOptions options;
      options.mode = overwrite ? WriteMode::kOverwrite : WriteMode::kCreate;
      options.file_version = file_version;
      options.max_rows_per_file = max_rows_per_file;
      options.enable_stable_row_ids = stable_row_ids;
      auto input = CountedOn(OpenInput(from, schema_text, input_format),
                             std::make_unique<ProgressLine>(progress, "creating " + dataset));
      auto ds = Dataset::Write(dataset, *input, options);
      std::cout << fmt::format("created {} at version {}: {} rows in {} fragments\n", dataset, ds->version(),
                               ds->CountRows(), ds->state().manifest.fragments_size());
    } else if (*append) {
      WriteOptions options;
      options.max_rows_per_file = max_rows_per_file;
      auto ds = Dataset::Open(dataset);
      // Input is read against the dataset's schema (--schema, if given, is the input's own
      // and is then assigned to the dataset's).
      auto input = CountedOn(ConformInput(OpenInput(from, schema_text, input_format, ds->schema()), ds->schema(), from),
                             std::make_unique<ProgressLine>(progress, "appending to " + dataset));
      CountingReader counted(*input);
      auto next = ds->Append(counted, options);
      std::cout << fmt::format("appended {} rows to {}; now version {}\n", counted.rows(), dataset, next->version());
    } else if (*del) {
      auto ds = Dataset::Open(dataset);
      uint64_t deleted = 0;
      auto next = ds->Delete(where, &deleted);
      if (deleted == 0) {
        std::cout << fmt::format("no rows matched; {} unchanged at version {}\n", dataset, ds->version());
      } else {
        std::cout << fmt::format("deleted {} rows from {}; now version {}\n", deleted, dataset, next->version());
      }
    } else if (*update) {
      std::vector<Dataset::SetClause> set;
      for (const auto& clause : set_clauses) {
        size_t eq = clause.find('=');
        if (eq == std::string::npos || clause.substr(0, eq).find_first_not_of(" \t") == std::string::npos)
          ThrowInvalid("--set '{}': expected 'column = expression'", clause);
        std::string column = clause.substr(0, eq);
        column.erase(0, column.find_first_not_of(" \t"));
        column.erase(column.find_last_not_of(" \t") + 1);
        if (column.size() >= 2 && column.front() == '"' && column.back() == '"') column = column.substr(1, column.size() - 2);
        set.push_back({column, clause.substr(eq + 1)});
      }
      UpdateMode mode = ParseUpdateMode(update_mode, "--mode"), chosen = UpdateMode::kOverlay;
      auto ds = Dataset::Open(dataset);
      uint64_t updated = 0;
      WriteOutcome outcome;
      auto next = ds->Update(set, where, &updated, mode, &chosen, &outcome);
      if (updated == 0) {
        std::cout << fmt::format("no rows matched; {} unchanged at version {}\n", dataset, ds->version());
      } else {
        const char* how = chosen == UpdateMode::kColumns ? " (columns rewritten)"
                          : chosen == UpdateMode::kRows  ? " (rows moved to a new fragment)"
                                                         : "";
        std::cout << fmt::format("updated {} rows of {}{}; now version {}{}\n", updated, dataset, how,
                                 next->version(), LayerMergeNote(outcome));
        std::string notice = FirstOverlayNotice(*ds, *next, dataset);
        if (!notice.empty()) std::cerr << notice << "\n";
      }
    } else if (*scan) {
      auto ds = Dataset::Open(dataset, version);
      auto builder = ds->NewScan();
      if (!columns.empty()) builder.Columns(SplitList(columns));
      if (!where.empty()) builder.Filter(where);
      builder.Limit(limit).Offset(offset).WithRowId(with_row_id).WithRowAddress(with_row_address).UseIndex(!no_index);
      // Progress when the rows go elsewhere than the terminal (an export to a file).
      const bool drawn = progress && isatty(STDOUT_FILENO) == 0;
      const uint64_t total = drawn && where.empty() && limit < 0 ? ds->CountRows() : 0;
      auto reader = CountedOn(builder.Open(), std::make_unique<ProgressLine>(drawn, "scanning " + dataset, total));
      Emit(*reader, out.format);
    } else if (*take) {
      auto ds = Dataset::Open(dataset, version);
      std::vector<uint64_t> ids;
      for (const auto& r : SplitList(rows)) {
        size_t used = 0;
        unsigned long long v = 0;
        try {
          v = std::stoull(r, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != r.size() || r[0] == '-') ThrowInvalid("--rows: '{}' is not a row number", r);
        ids.push_back(v);
      }
      auto cols = columns.empty() ? std::vector<std::string>{} : SplitList(columns);
      auto batch = by_address ? ds->TakeRowAddresses(ids, cols) : ds->Take(ids, cols);
      SingleBatchReader reader(batch);
      Emit(reader, out.format);
    } else if (*count) {
      std::cout << Dataset::Open(dataset, version)->CountRows(where) << "\n";
    } else if (*versions) {
      auto ds = Dataset::Open(dataset);
      for (const auto& v : ds->ListVersions()) {
        time_t secs = time_t(v.timestamp_nanos / 1000000000);
        char when[32];
        std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&secs));
        std::cout << fmt::format("{}\t{}\t{}\n", v.version, when, v.operation);
      }
    } else if (*index_create) {
      IndexType type;
      if (index_type == "btree" || index_type == "BTREE") type = IndexType::kBTree;
      else if (index_type == "bitmap" || index_type == "BITMAP") type = IndexType::kBitmap;
      else ThrowInvalid("--type '{}': expected btree or bitmap", index_type);
      auto next = Dataset::Open(dataset)->CreateIndex(index_column, type, index_name, index_replace);
      std::cout << fmt::format("created index {} on {} of {}; now version {}\n",
                               index_name.empty() ? index_column + "_idx" : index_name, index_column, dataset,
                               next->version());
    } else if (*index_list) {
      for (const auto& i : Dataset::Open(dataset)->ListIndices()) {
        std::string cols;
        for (const auto& c : i.columns) cols += (cols.empty() ? "" : ",") + c;
        std::cout << fmt::format("{}\t{}\t{}\tbuilt from version {}\t{} segments\t{} fragments indexed, {} not\t"
                                 "{} stale rows\n",
                                 i.name, i.type, cols, i.dataset_version, i.segments, i.indexed_fragments,
                                 i.unindexed_fragments, i.stale_rows);
      }
    } else if (*index_optimize) {
      auto ds = Dataset::Open(dataset);
      auto next = ds->OptimizeIndices();
      if (next->version() == ds->version())
        std::cout << fmt::format("every index of {} covers every fragment; unchanged at version {}\n", dataset,
                                 ds->version());
      else
        std::cout << fmt::format("indexed the new fragments of {}; now version {}\n", dataset, next->version());
    } else if (*index_stats) {
      for (const auto& seg : Dataset::Open(dataset)->IndexStats(index_name)) {
        std::string fragments = seg.covers_every_fragment ? "every" : "";
        for (uint64_t f : seg.fragments) fragments += (fragments.empty() ? "" : ",") + std::to_string(f);
        std::cout << fmt::format("segment {}: built from version {}, fragments [{}], {} rows, {} bytes, {} stale rows\n",
                                 seg.uuid, seg.dataset_version, fragments, seg.rows, seg.bytes, seg.stale_rows);
      }
    } else if (*index_drop) {
      auto next = Dataset::Open(dataset)->DropIndex(index_name);
      std::cout << fmt::format("dropped index {} of {}; now version {}\n", index_name, dataset, next->version());
    } else if (*explain) {
      std::cout << Dataset::Open(dataset, version)->Explain(where);
    } else if (*optimize) {
      auto ds = Dataset::Open(dataset);
      optimize_options.optimize_indices = !optimize_no_index;
      if (optimize_plan) {
        std::cout << FormatOptimizePlan(ds->PlanOptimize(optimize_options));
      } else {
        OptimizeStats stats;
        auto next = ds->Optimize(optimize_options, &stats);
        std::cout << FormatOptimizeStats(stats, dataset, next->version());
      }
    } else if (*cleanup) {
      CleanupOptions options;
      if (!older_than.empty()) options.older_than_seconds = ParseDurationSeconds(older_than);
      options.keep_versions = keep_versions;
      options.dry_run = cleanup_dry_run;
      options.delete_unverified = delete_unverified;
      options.force = cleanup_force;
      auto stats = Dataset::Open(dataset)->Cleanup(options);
      for (const auto& path : stats.removed) std::cout << (options.dry_run ? "would remove " : "removed ") << path << "\n";
      std::cout << fmt::format("{} {} versions, {} files, {} bytes\n", options.dry_run ? "would free" : "freed",
                               stats.versions_removed, stats.files_removed, stats.bytes_freed);
      if (stats.versions_kept_recent > 0)
        std::cout << fmt::format("kept {} versions superseded within the last hour: a scan may still read them and a "
                                 "writer may have read them; --force removes them (such a scan then fails, such a "
                                 "writer recomputes or fails)\n",
                                 stats.versions_kept_recent);
    } else if (*config) {
      std::map<std::string, std::optional<std::string>> changes;
      for (const auto& kv : config_set) {
        size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) ThrowInvalid("--set '{}': expected key=value", kv);
        changes[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      for (const auto& key : config_unset) changes[key] = std::nullopt;
      auto ds = Dataset::Open(dataset)->UpdateConfig(changes);
      for (const auto& [key, value] : ds->Config()) std::cout << key << "=" << value << "\n";
      if (!changes.empty()) std::cout << fmt::format("{} now at version {}\n", dataset, ds->version());
    } else if (*inspect) {
      PrintInspect(*Dataset::Open(dataset, version), std::cout);
    }
  } catch (const Error& e) {
    // Last line of defense: whatever a message quotes, stderr gets valid UTF-8.
    std::cerr << "lancelet: " << EscapeForMessage(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "lancelet: internal error: " << EscapeForMessage(e.what()) << "\n";
    return 3;
  }
  return 0;
}

}  // namespace lancelet::cli
