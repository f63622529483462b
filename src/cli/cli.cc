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
#include <filesystem>
#include <map>
#include <iostream>
#include <sstream>
#include <thread>
#include <atomic>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "lancelet/progress.h"
#include "lancelet/dataset.h"
#include "lancelet/error.h"
#include "lancelet/ipc.h"
#include "lancelet/merge_insert.h"
#include "lancelet/sql.h"
#include "lancelet/text.h"
#include "lancelet/vector_search.h"
#include "lancelet/builder.h"
#include <fstream>
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

StorageOptions& CommandLineStorageOptions();

// The input read against `schema_text` if given, else against `fallback` (an append's
// dataset schema), else with an inferred schema.
// `progress`, when given, shows the share of the input file read, where its size is known
// (not for standard input, nor for Arrow IPC, read by record batch).
std::unique_ptr<RecordBatchReader> OpenInput(const std::string& path, const std::string& schema_text,
                                             InputFormat format, SchemaPtr fallback = nullptr,
                                             ProgressLine* progress = nullptr) {
  TextReadOptions options;
  options.format = format;
  options.schema = schema_text.empty() ? std::move(fallback) : Schema::Parse(schema_text);
  options.storage_options = CommandLineStorageOptions();
  if (path != "-") options.progress = progress;
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


// What every subcommand shares: the numeric options, checked after parsing, and whether
// progress is drawn (known only after parsing).
struct Context {
  NumberOptions numbers;
  bool progress = false;
};

// The store options of the command line (--storage-option KEY=VALUE, repeatable), for
// every dataset and database a command opens.
StorageOptions& CommandLineStorageOptions() {
  static StorageOptions options;
  return options;
}

// The tag a reading command was given (--tag NAME, in place of --version): one subcommand
// runs per process, so the one option is shared by all.
std::string& CommandLineTag() {
  static std::string tag;
  return tag;
}

DatasetPtr OpenDataset(const std::string& uri, std::optional<uint64_t> version = std::nullopt) {
  OpenOptions options;
  options.storage_options = CommandLineStorageOptions();
  if (!CommandLineTag().empty()) return Dataset::OpenTag(uri, CommandLineTag(), options);
  return Dataset::Open(uri, version, options);
}

void ParseStorageOptions(const std::vector<std::string>& given) {
  for (const std::string& option : given) {
    const size_t eq = option.find('=');
    if (eq == std::string::npos || eq == 0)
      ThrowInvalid("--storage-option '{}': expected KEY=VALUE (e.g. timeout=60s)", option);
    CommandLineStorageOptions()[option.substr(0, eq)] = option.substr(eq + 1);
  }
}

// Runs a parsed subcommand; returns the exit code.
using Runner = std::function<int()>;

// A subcommand as CLI11 parsed it and what runs it.
struct Command {
  CLI::App* app;
  Runner run;
};

// Registers subcommands (their options bound to state the runners keep) on `app`.
using CommandAdder = void (*)(CLI::App& app, Context& context, std::vector<Command>& commands);

CLI::App* AddDatasetCommand(CLI::App& parent, const std::string& name, const std::string& description,
                            std::string& dataset) {
  auto* cmd = parent.add_subcommand(name, description);
  cmd->add_option("dataset", dataset, "Dataset directory")->required();
  return cmd;
}

void AddVersionOption(CLI::App* cmd, Context& context, std::optional<uint64_t>& version,
                      const std::string& help = "Read this version") {
  context.numbers.Whole(cmd, "--version", version, uint64_t{1}, std::numeric_limits<uint64_t>::max(), help);
  cmd->add_option("--tag", CommandLineTag(), "Read the version this tag names")->excludes("--version");
}

void AddMaxRowsPerFileOption(CLI::App* cmd, Context& context, int64_t& max_rows_per_file) {
  context.numbers.Whole(cmd, "--max-rows-per-file", max_rows_per_file, int64_t{1}, int64_t(kMaxRowsPerFile),
                        "Rows per fragment (default 1048576)");
}

struct InputOptions {
  std::string from;
  InputFormat format = InputFormat::kUnknown;
};

void AddInputOptions(CLI::App* cmd, InputOptions& input) {
  static const std::map<std::string, InputFormat> kInputFormats = {
      {"csv", InputFormat::kCsv}, {"jsonl", InputFormat::kJsonLines}, {"arrow", InputFormat::kArrowIpc}};
  cmd->add_option("--from", input.from, "Input file (.csv, .jsonl/.json, .arrow/.arrows/.ipc), or - for stdin")
      ->required();
  cmd->add_option("--input-format", input.format, "The input's format when its name does not say it")
      ->transform(CLI::Validator(
          [](std::string& value) -> std::string {
            const auto it = kInputFormats.find(value);
            if (it == kInputFormats.end()) return "'" + value + "' is not an input format (csv, jsonl, arrow)";
            value = std::to_string(int(it->second));
            return {};
          },
          ""))
      ->option_text("csv|jsonl|arrow");
}

void AddCreate(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, schema_text, file_version = WriteOptions{}.file_version;
    InputOptions input;
    int64_t max_rows_per_file = 1024 * 1024;
    bool stable_row_ids = false, overwrite = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "create", "Create a dataset from a CSV, JSON lines or Arrow IPC file", o->dataset);
  AddInputOptions(cmd, o->input);
  cmd->add_option("--schema", o->schema_text,
                  "Schema, e.g. \"id:int32,name:utf8,v:fixed_size_list<float32,4>\" (SQL's names too: BIGINT, "
                  "VARCHAR, DOUBLE, TIMESTAMP, ...)");
  AddMaxRowsPerFileOption(cmd, context, o->max_rows_per_file);
  cmd->add_option("--file-version", o->file_version, "Lance file version")
      ->check(CLI::IsMember({"2.0", "2.1", "2.2"}))
      ->capture_default_str();
  cmd->add_flag("--stable-row-ids", o->stable_row_ids, "Give rows stable ids");
  cmd->add_flag("--overwrite", o->overwrite, "Replace the dataset if it exists");
  commands.push_back({cmd, [o, &context] {
                        WriteOptions options;
                        options.mode = o->overwrite ? WriteMode::kOverwrite : WriteMode::kCreate;
                        options.file_version = o->file_version;
                        options.max_rows_per_file = o->max_rows_per_file;
                        options.enable_stable_row_ids = o->stable_row_ids;
                        auto line = std::make_unique<ProgressLine>(context.progress, "creating " + o->dataset);
                        auto input = OpenInput(o->input.from, o->schema_text, o->input.format, nullptr, line.get());
                        input = CountedOn(std::move(input), std::move(line));
                        options.storage_options = CommandLineStorageOptions();
                        auto ds = Dataset::Write(o->dataset, *input, options);
                        std::cout << fmt::format("created {} at version {}: {} rows in {} fragments\n", o->dataset,
                                                 ds->version(), ds->CountRows(), ds->CountFragments());
                        return 0;
                      }});
}

void AddAppend(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, schema_text;
    InputOptions input;
    int64_t max_rows_per_file = 1024 * 1024;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "append", "Append rows to a dataset", o->dataset);
  AddInputOptions(cmd, o->input);
  cmd->add_option("--schema", o->schema_text, "Schema of the input (default: the dataset's)");
  AddMaxRowsPerFileOption(cmd, context, o->max_rows_per_file);
  commands.push_back({cmd, [o, &context] {
                        WriteOptions options;
                        options.max_rows_per_file = o->max_rows_per_file;
                        auto ds = OpenDataset(o->dataset);
                        // Input is read against the dataset's schema (--schema, if given, is the
                        // input's own and is then assigned to the dataset's).
                        auto line = std::make_unique<ProgressLine>(context.progress, "appending to " + o->dataset);
                        auto input = CountedOn(
                            ConformInput(OpenInput(o->input.from, o->schema_text, o->input.format, ds->schema(),
                                                   line.get()),
                                         ds->schema(), o->input.from),
                            std::move(line));
                        CountingReader counted(*input);
                        auto next = ds->Append(counted, options);
                        std::cout << fmt::format("appended {} rows to {}; now version {}\n", counted.rows(),
                                                 o->dataset, next->version());
                        return 0;
                      }});
}

void AddDelete(CLI::App& app, Context&, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, where;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "delete", "Delete the rows matching a predicate", o->dataset);
  cmd->add_option("--where", o->where, "SQL predicate")->required();
  commands.push_back({cmd, [o] {
                        auto ds = OpenDataset(o->dataset);
                        uint64_t deleted = 0;
                        auto next = ds->Delete(o->where, &deleted);
                        if (deleted == 0) {
                          std::cout << fmt::format("no rows matched; {} unchanged at version {}\n", o->dataset,
                                                   ds->version());
                        } else {
                          std::cout << fmt::format("deleted {} rows from {}; now version {}\n", deleted, o->dataset,
                                                   next->version());
                        }
                        return 0;
                      }});
}

// "column = expression" clauses of `update --set` and `add-columns --expr` (`option`); a
// double-quoted column loses its quotes.
std::vector<Dataset::SetClause> ParseSetClauses(const std::vector<std::string>& clauses, const char* option) {
  std::vector<Dataset::SetClause> set;
  for (const auto& clause : clauses) {
    size_t eq = clause.find('=');
    if (eq == std::string::npos || clause.substr(0, eq).find_first_not_of(" \t") == std::string::npos ||
        clause.find_first_not_of(" \t", eq + 1) == std::string::npos)
      ThrowInvalid("{} '{}': expected 'column = expression'", option, clause);
    std::string column = clause.substr(0, eq);
    column.erase(0, column.find_first_not_of(" \t"));
    column.erase(column.find_last_not_of(" \t") + 1);
    if (column.size() >= 2 && column.front() == '"' && column.back() == '"') column = column.substr(1, column.size() - 2);
    set.push_back({column, clause.substr(eq + 1)});
  }
  return set;
}

int RunUpdate(const std::string& dataset, const std::vector<std::string>& set_clauses, const std::string& where,
              const std::string& update_mode) {
  std::vector<Dataset::SetClause> set = ParseSetClauses(set_clauses, "--set");
  UpdateMode mode = ParseUpdateMode(update_mode, "--mode"), chosen = UpdateMode::kOverlay;
  auto ds = OpenDataset(dataset);
  uint64_t updated = 0;
  WriteOutcome outcome;
  auto next = ds->Update(set, where, &updated, mode, &chosen, &outcome);
  if (updated == 0) {
    std::cout << fmt::format("no rows matched; {} unchanged at version {}\n", dataset, ds->version());
    return 0;
  }
  const char* how = chosen == UpdateMode::kColumns ? " (columns rewritten)"
                    : chosen == UpdateMode::kRows  ? " (rows moved to a new fragment)"
                                                   : "";
  std::cout << fmt::format("updated {} rows of {}{}; now version {}{}\n", updated, dataset, how, next->version(),
                           LayerMergeNote(outcome));
  for (const std::string& notice : {FirstOverlayNotice(*ds, *next, dataset), OverlaysOffNotice(*ds, mode, chosen, dataset)})
    if (!notice.empty()) std::cerr << notice << "\n";
  return 0;
}

void AddUpdate(CLI::App& app, Context&, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, where, mode = "auto";
    std::vector<std::string> set_clauses;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(
      app, "update", "Change cells: as data overlay files, a column rewrite or moved rows (--mode; default: cost model)",
      o->dataset);
  cmd->add_option("--set", o->set_clauses, "column = expression (repeatable)")->required();
  cmd->add_option("--where", o->where, "SQL predicate (default: every row)");
  cmd->add_option("--mode", o->mode,
                  "overlay (changed cells only), columns (rewrite the SET columns), rows (move the changed rows) "
                  "or auto (table config lancelet.update.mode, else the cost model)")
      ->capture_default_str();
  commands.push_back({cmd, [o] { return RunUpdate(o->dataset, o->set_clauses, o->where, o->mode); }});
}

void AddScan(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, columns, where;
    int64_t limit = -1, offset = 0;
    std::optional<uint64_t> version;
    bool with_row_id = false, with_row_address = false, no_index = false;
    OutputOptions out;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "scan", "Print rows", o->dataset);
  cmd->add_option("--columns", o->columns, "Comma-separated columns (also _rowid, _rowaddr)");
  cmd->add_option("--where", o->where, "SQL predicate");
  context.numbers.Whole(cmd, "--limit", o->limit, int64_t{0}, std::numeric_limits<int64_t>::max(),
                        "At most this many rows");
  context.numbers.Whole(cmd, "--offset", o->offset, int64_t{0}, std::numeric_limits<int64_t>::max(),
                        "Skip this many rows first");
  AddVersionOption(cmd, context, o->version);
  cmd->add_flag("--with-rowid", o->with_row_id, "Add the _rowid column");
  cmd->add_flag("--with-rowaddr", o->with_row_address, "Add the _rowaddr column");
  cmd->add_flag("--no-index", o->no_index, "Filter every row instead of using indexes (same rows)");
  AddFormatOption(cmd, o->out);
  commands.push_back({cmd, [o, &context] {
                        auto ds = OpenDataset(o->dataset, o->version);
                        auto builder = ds->NewScan();
                        if (!o->columns.empty()) builder.Columns(SplitList(o->columns));
                        if (!o->where.empty()) builder.Filter(o->where);
                        builder.Limit(o->limit)
                            .Offset(o->offset)
                            .WithRowId(o->with_row_id)
                            .WithRowAddress(o->with_row_address)
                            .UseIndex(!o->no_index);
                        // Progress when the rows go elsewhere than the terminal (an export to a file).
                        const bool drawn = context.progress && isatty(STDOUT_FILENO) == 0;
                        const uint64_t total = drawn && o->where.empty() && o->limit < 0 ? ds->CountRows() : 0;
                        auto reader = CountedOn(builder.Open(),
                                                std::make_unique<ProgressLine>(drawn, "scanning " + o->dataset, total));
                        Emit(*reader, o->out.format);
                        return 0;
                      }});
}

// `take --rows`: comma-separated whole numbers.
std::vector<uint64_t> ParseRowNumbers(const std::string& rows) {
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
  return ids;
}

void AddTake(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, rows, columns;
    bool by_address = false;
    std::optional<uint64_t> version;
    OutputOptions out;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "take", "Print rows by offset (or by row address)", o->dataset);
  cmd->add_option("--rows", o->rows, "Comma-separated row offsets")->required();
  cmd->add_flag("--addresses", o->by_address, "Treat --rows as row addresses (fragment << 32 | offset)");
  cmd->add_option("--columns", o->columns, "Comma-separated columns");
  AddVersionOption(cmd, context, o->version);
  AddFormatOption(cmd, o->out);
  commands.push_back({cmd, [o] {
                        auto ds = OpenDataset(o->dataset, o->version);
                        std::vector<uint64_t> ids = ParseRowNumbers(o->rows);
                        auto cols = o->columns.empty() ? std::vector<std::string>{} : SplitList(o->columns);
                        auto batch = o->by_address ? ds->TakeRowAddresses(ids, cols) : ds->Take(ids, cols);
                        SingleBatchReader reader(batch);
                        Emit(reader, o->out.format);
                        return 0;
                      }});
}

void AddChanges(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, columns, change_types;
    uint64_t from = 0;
    std::optional<uint64_t> to;
    bool allow_full = false;
    OutputOptions out;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "changes", "Print the rows the commits after --from changed (the change feed)",
                                o->dataset);
  context.numbers.Whole(cmd, "--from", o->from, uint64_t{0}, std::numeric_limits<uint64_t>::max(),
                        "Changes committed after this version (0: from the start)");
  cmd->get_option("--from")->required();
  context.numbers.Whole(cmd, "--to", o->to, uint64_t{1}, std::numeric_limits<uint64_t>::max(),
                        "Up to and including this version (default: the latest)");
  cmd->add_option("--columns", o->columns, "Comma-separated data columns (default: all)");
  cmd->add_option("--change-types", o->change_types,
                  "Comma-separated kinds kept: insert, delete, update (both images), update_preimage, update_postimage");
  cmd->add_flag("--allow-full", o->allow_full, "Feed every row of an Overwrite or Restore, however many");
  AddFormatOption(cmd, o->out);
  commands.push_back({cmd, [o] {
                        ChangesOptions options;
                        options.to_version = o->to;
                        if (!o->columns.empty()) options.columns = SplitList(o->columns);
                        if (!o->change_types.empty()) options.change_types = SplitList(o->change_types);
                        options.allow_full = o->allow_full;
                        auto reader = OpenDataset(o->dataset, std::nullopt)->Changes(o->from, options);
                        Emit(*reader, o->out.format);
                        return 0;
                      }});
}

void AddCount(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, where;
    std::optional<uint64_t> version;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "count", "Count rows", o->dataset);
  cmd->add_option("--where", o->where, "SQL predicate");
  AddVersionOption(cmd, context, o->version);
  commands.push_back({cmd, [o] {
                        std::cout << OpenDataset(o->dataset, o->version)->CountRows(o->where) << "\n";
                        return 0;
                      }});
}

void AddVersions(CLI::App& app, Context&, std::vector<Command>& commands) {
  auto dataset = std::make_shared<std::string>();
  auto* cmd = AddDatasetCommand(app, "versions", "List versions", *dataset);
  commands.push_back({cmd, [dataset] {
                        for (const auto& v : OpenDataset(*dataset)->ListVersions()) {
                          time_t secs = time_t(v.timestamp_nanos / 1000000000);
                          char when[32];
                          std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&secs));
                          std::cout << fmt::format("{}\t{}\t{}\n", v.version, when, v.operation);
                        }
                        return 0;
                      }});
}

void AddInspect(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset;
    std::optional<uint64_t> version;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "inspect", "Show a version's manifest: flags, schema, fragments", o->dataset);
  AddVersionOption(cmd, context, o->version, "Inspect this version");
  commands.push_back({cmd, [o] {
                        std::cout << OpenDataset(o->dataset, o->version)->Inspect();
                        return 0;
                      }});
}

struct IndexCreateOptions {
  std::string column, type = "btree", name;
  bool replace = false;
  VectorIndexOptions vector;
};

IndexType ParseIndexType(const std::string& text) {
  if (auto type = IndexTypeNamed(text)) return *type;
  ThrowInvalid("--type '{}': expected btree, bitmap, ivf_flat or ivf_pq", text);
}

Runner IndexCreateRunner(std::shared_ptr<const std::string> dataset, std::shared_ptr<IndexCreateOptions> o,
                         const bool& progress) {
  return [dataset, o, &progress] {
    const IndexType type = ParseIndexType(o->type);
    // One progress line per pass over the column (sampling, then indexing).
    std::unique_ptr<ProgressLine> line;
    std::string pass;
    uint64_t counted = 0;
    VectorIndexOptions vector = o->vector;
    vector.progress = [&](const char* what, uint64_t rows, uint64_t) {
      if (what != pass) {
        line = std::make_unique<ProgressLine>(progress, std::string(what) + " " + o->column);
        pass = what;
        counted = 0;
      }
      line->Add(rows - counted);
      counted = rows;
    };
    auto next = OpenDataset(*dataset)->CreateIndex(o->column, type, vector, o->name, o->replace);
    line.reset();
    std::cout << fmt::format("created index {} on {} of {}; now version {}\n",
                             o->name.empty() ? o->column + "_idx" : o->name, o->column, *dataset, next->version());
    return 0;
  };
}

int RunIndexList(const std::string& dataset) {
  for (const auto& i : OpenDataset(dataset)->ListIndices()) {
    std::string cols;
    for (const auto& c : i.columns) cols += (cols.empty() ? "" : ",") + c;
    std::string type = i.type;
    if (!i.distance.empty()) {
      type += fmt::format(" (partitions={}", i.partitions);
      if (i.bits) type += fmt::format(", sub_vectors={}, bits={}", i.sub_vectors, i.bits);
      type += fmt::format(", distance={})", i.distance);
    }
    std::cout << fmt::format("{}\t{}\t{}\tbuilt from version {}\t{} segments\t{} fragments indexed, {} not\t"
                             "{} stale rows\n",
                             i.name, type, cols, i.dataset_version, i.segments, i.indexed_fragments,
                             i.unindexed_fragments, i.stale_rows);
  }
  return 0;
}

int RunIndexOptimize(const std::string& dataset) {
  auto ds = OpenDataset(dataset);
  auto next = ds->OptimizeIndices();
  if (next->version() == ds->version())
    std::cout << fmt::format("every index of {} covers every fragment; unchanged at version {}\n", dataset,
                             ds->version());
  else
    std::cout << fmt::format("indexed the new fragments of {}; now version {}\n", dataset, next->version());
  return 0;
}

int RunIndexStats(const std::string& dataset, const std::string& index_name) {
  for (const auto& seg : OpenDataset(dataset)->IndexStats(index_name)) {
    std::string fragments = seg.covers_every_fragment ? "every" : "";
    for (uint64_t f : seg.fragments) fragments += (fragments.empty() ? "" : ",") + std::to_string(f);
    std::cout << fmt::format("segment {}: built from version {}, fragments [{}], {} rows, {} bytes, {} stale rows\n",
                             seg.uuid, seg.dataset_version, fragments, seg.rows, seg.bytes, seg.stale_rows);
  }
  return 0;
}

// `index` and its subcommands create, list, optimize, stats and drop (all bound to one
// dataset and one name: CLI11 parses one of them).
void AddIndex(CLI::App& app, Context& context, std::vector<Command>& commands) {
  auto dataset = std::make_shared<std::string>(), name = std::make_shared<std::string>();
  auto o = std::make_shared<IndexCreateOptions>();
  auto* index = app.add_subcommand("index", "Create, list and drop scalar and vector indexes");
  index->require_subcommand(1);
  auto* create = AddDatasetCommand(*index, "create", "Build an index on a column and commit it", *dataset);
  create->add_option("column", o->column, "Column (a struct field as a.b)")->required();
  create->add_option("--type", o->type, "btree (default), bitmap, ivf_flat or ivf_pq");
  create->add_option("--name", o->name, "Index name (default: <column>_idx)");
  create->add_flag("--replace", o->replace, "Replace an index of the same name");
  create->add_option("--partitions", o->vector.num_partitions, "IVF partitions (default: sqrt of the rows)");
  create->add_option("--sub-vectors", o->vector.num_sub_vectors, "IVF_PQ sub-vectors, dividing the dimension "
                                                                   "(default: dim / 16)");
  create->add_option("--bits", o->vector.num_bits, "IVF_PQ bits per code: 8, or 4 (16 codes a sub-vector; sub-vectors even)");
  create->add_option("--distance", o->vector.distance, "IVF distance: l2 (default), cosine or dot");
  create->add_option("--sample-rate", o->vector.sample_rate, "k-means trains on at most this x k rows (256)");
  create->add_option("--max-iterations", o->vector.max_iterations, "k-means iterations at most (50)");
  create->add_option("--seed", o->vector.seed, "Of the training sample and the initial centroids (42)");
  commands.push_back({create, IndexCreateRunner(dataset, o, context.progress)});
  auto* list = AddDatasetCommand(*index, "list", "List indexes: name, type, columns, coverage, stale rows", *dataset);
  commands.push_back({list, [dataset] { return RunIndexList(*dataset); }});
  auto* optimize = AddDatasetCommand(
      *index, "optimize", "Index the fragments appended since each index was built (a new segment)", *dataset);
  commands.push_back({optimize, [dataset] { return RunIndexOptimize(*dataset); }});
  auto* stats = AddDatasetCommand(*index, "stats", "Show an index's segments: version, fragments, rows, bytes", *dataset);
  stats->add_option("name", *name, "Index name")->required();
  commands.push_back({stats, [dataset, name] { return RunIndexStats(*dataset, *name); }});
  auto* drop = AddDatasetCommand(*index, "drop", "Remove an index", *dataset);
  drop->add_option("name", *name, "Index name")->required();
  commands.push_back({drop, [dataset, name] {
                        auto next = OpenDataset(*dataset)->DropIndex(*name);
                        std::cout << fmt::format("dropped index {} of {}; now version {}\n", *name, *dataset,
                                                 next->version());
                        return 0;
                      }});
}

void AddRestore(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset;
    std::optional<uint64_t> version;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "restore", "Make an old version the latest again (a new version)", o->dataset);
  AddVersionOption(cmd, context, o->version, "The version to restore");
  commands.push_back({cmd, [o] {
                        if (!o->version && CommandLineTag().empty())
                          ThrowInvalid("restore: name the version to restore with --version N or --tag NAME");
                        auto old = OpenDataset(o->dataset, o->version);
                        auto next = old->Restore();
                        std::cout << fmt::format("restored version {} of {}; now version {}\n", old->version(),
                                                 o->dataset, next->version());
                        return 0;
                      }});
}

// `tag` and its subcommands create, update, delete and list (one dataset, one name).
void AddTag(CLI::App& app, Context& context, std::vector<Command>& commands) {
  auto dataset = std::make_shared<std::string>(), name = std::make_shared<std::string>();
  auto version = std::make_shared<std::optional<uint64_t>>();
  auto* tag = app.add_subcommand("tag", "Name versions: create, update, delete and list tags");
  tag->require_subcommand(1);
  auto latest_or = [dataset, version] {
    auto ds = OpenDataset(*dataset);
    return version->value_or(ds->version());
  };
  auto* create = AddDatasetCommand(*tag, "create", "Tag a version (default: the latest)", *dataset);
  create->add_option("name", *name, "Tag name")->required();
  context.numbers.Whole(create, "--version", *version, uint64_t{1}, std::numeric_limits<uint64_t>::max(),
                        "The version to tag");
  commands.push_back({create, [=] {
                        uint64_t v = latest_or();
                        OpenDataset(*dataset)->CreateTag(*name, v);
                        std::cout << fmt::format("tagged version {} of {} as {}\n", v, *dataset, *name);
                        return 0;
                      }});
  auto* update = AddDatasetCommand(*tag, "update", "Point a tag at another version (default: the latest)", *dataset);
  update->add_option("name", *name, "Tag name")->required();
  context.numbers.Whole(update, "--version", *version, uint64_t{1}, std::numeric_limits<uint64_t>::max(),
                        "The version to tag");
  commands.push_back({update, [=] {
                        uint64_t v = latest_or();
                        OpenDataset(*dataset)->UpdateTag(*name, v);
                        std::cout << fmt::format("tag {} of {} now names version {}\n", *name, *dataset, v);
                        return 0;
                      }});
  auto* remove = AddDatasetCommand(*tag, "delete", "Delete a tag (the version stays)", *dataset);
  remove->add_option("name", *name, "Tag name")->required();
  commands.push_back({remove, [=] {
                        OpenDataset(*dataset)->DeleteTag(*name);
                        std::cout << fmt::format("deleted tag {} of {}\n", *name, *dataset);
                        return 0;
                      }});
  auto* list = AddDatasetCommand(*tag, "list", "List tags: name, version, manifest bytes", *dataset);
  commands.push_back({list, [=] {
                        for (const auto& t : OpenDataset(*dataset)->ListTags())
                          std::cout << fmt::format("{}\t{}\t{}\n", t.name, t.version, t.manifest_size);
                        return 0;
                      }});
}

void AddExplain(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, where;
    std::optional<uint64_t> version;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "explain", "Show how a filtered scan runs: which indexes, which rows", o->dataset);
  cmd->add_option("--where", o->where, "SQL predicate")->required();
  AddVersionOption(cmd, context, o->version);
  commands.push_back({cmd, [o] {
                        std::cout << OpenDataset(o->dataset, o->version)->Explain(o->where);
                        return 0;
                      }});
}

void AddOptimize(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset;
    OptimizeOptions optimize;
    bool plan = false, no_index = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(
      app, "optimize", "Compact: fold overlays into base columns, merge small fragments, drop deleted rows", o->dataset);
  cmd->add_flag("--plan", o->plan, "Print what would be done to each fragment, and why; write nothing");
  context.numbers.Whole(cmd, "--target-rows-per-fragment", o->optimize.target_rows_per_fragment, uint64_t{1},
                        kMaxRowsPerFile, "Fragments with fewer rows are merged with their neighbours (default 1048576)");
  cmd->add_option("--materialize-deletions", o->optimize.materialize_deletions,
                  "Rewrite fragments with many deleted rows (true/false)")
      ->capture_default_str();
  context.numbers.Fraction(cmd, "--materialize-deletions-threshold", o->optimize.materialize_deletions_threshold, 0.0,
                           1.0, "Deleted fraction above which a fragment is rewritten (default 0.1; 1: never)");
  cmd->add_flag("--merge-overlays", o->optimize.merge_overlays_instead_of_fold,
                "Merge each fragment's overlays into one instead of folding them into base columns");
  cmd->add_flag("--no-rewrite", [o](int64_t) { o->optimize.rewrite_rows = false; },
                "Only compact overlays; rows never move");
  cmd->add_flag("--no-index", o->no_index, "Do not index the fragments indexes stopped covering");
  commands.push_back({cmd, [o] {
                        auto ds = OpenDataset(o->dataset);
                        o->optimize.optimize_indices = !o->no_index;
                        if (o->plan) {
                          std::cout << FormatOptimizePlan(ds->PlanOptimize(o->optimize));
                        } else {
                          OptimizeStats stats;
                          auto next = ds->Optimize(o->optimize, &stats);
                          std::cout << FormatOptimizeStats(stats, o->dataset, next->version());
                        }
                        return 0;
                      }});
}

int RunCleanup(const std::string& dataset, const CleanupOptions& options) {
  auto stats = OpenDataset(dataset)->Cleanup(options);
  for (const auto& path : stats.removed) std::cout << (options.dry_run ? "would remove " : "removed ") << path << "\n";
  std::cout << fmt::format("{} {} versions, {} files, {} bytes\n", options.dry_run ? "would free" : "freed",
                           stats.versions_removed, stats.files_removed, stats.bytes_freed);
  if (stats.uploads_aborted > 0) std::cout << fmt::format("aborted {} unfinished uploads\n", stats.uploads_aborted);
  if (stats.versions_kept_recent > 0)
    std::cout << fmt::format("kept {} versions superseded within the last hour: a scan may still read them and a "
                             "writer may have read them; --force removes them (such a scan then fails, such a "
                             "writer recomputes or fails)\n",
                             stats.versions_kept_recent);
  return 0;
}

void AddCleanup(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, older_than;
    std::optional<uint64_t> keep_versions;
    bool dry_run = false, delete_unverified = false, force = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "cleanup", "Delete old versions and the files only they use", o->dataset);
  cmd->add_option("--older-than", o->older_than, "Remove versions older than this (e.g. 30s, 15m, 12h, 7d, 2w)");
  context.numbers.Whole(cmd, "--keep", o->keep_versions, uint64_t{1}, std::numeric_limits<uint64_t>::max(),
                        "Keep the newest N versions");
  cmd->add_flag("--dry-run", o->dry_run, "List what would be removed; remove nothing");
  cmd->add_flag("--force", o->force,
                "Also remove versions superseded within the last hour (a scan still reading one fails)");
  cmd->add_flag("--delete-unverified", o->delete_unverified,
                "Also remove unreferenced files younger than 7 days (only when no writer is running)");
  commands.push_back({cmd, [o] {
                        CleanupOptions options;
                        if (!o->older_than.empty()) options.older_than_seconds = ParseDurationSeconds(o->older_than);
                        options.keep_versions = o->keep_versions;
                        options.dry_run = o->dry_run;
                        options.delete_unverified = o->delete_unverified;
                        options.force = o->force;
                        return RunCleanup(o->dataset, options);
                      }});
}

int RunConfig(const std::string& dataset, const std::vector<std::string>& set, const std::vector<std::string>& unset) {
  std::map<std::string, std::optional<std::string>> changes;
  for (const auto& kv : set) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) ThrowInvalid("--set '{}': expected key=value", kv);
    changes[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& key : unset) changes[key] = std::nullopt;
  auto ds = OpenDataset(dataset)->UpdateConfig(changes);
  for (const auto& [key, value] : ds->Config()) std::cout << key << "=" << value << "\n";
  if (!changes.empty()) std::cout << fmt::format("{} now at version {}\n", dataset, ds->version());
  return 0;
}

void AddConfig(CLI::App& app, Context&, std::vector<Command>& commands) {
  struct Options {
    std::string dataset;
    std::vector<std::string> set, unset;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      AddDatasetCommand(app, "config", "Show or change the table config (e.g. lance.compaction.*)", o->dataset);
  cmd->add_option("--set", o->set, "key=value (repeatable)");
  cmd->add_option("--unset", o->unset, "key (repeatable)");
  commands.push_back({cmd, [o] { return RunConfig(o->dataset, o->set, o->unset); }});
}

// add-columns, drop-columns and alter-columns: schema changes that rewrite no existing file.
void PrintSchemaChange(const std::string& dataset, const DatasetPtr& ds) {
  std::cout << fmt::format("{} now at version {}: {}\n", dataset, ds->version(), ds->schema()->ToString());
}

void AddAddColumns(CLI::App& app, Context&, std::vector<Command>& commands) {
  struct Options {
    std::string dataset;
    std::vector<std::string> exprs;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "add-columns", "Add columns computed from SQL expressions (a new data file per "
                                                    "fragment; no existing file rewritten)", o->dataset);
  cmd->add_option("--expr", o->exprs, "name = SQL expression over the columns (repeatable)")->required();
  commands.push_back({cmd, [o] {
                        std::vector<Dataset::NewColumn> columns;
                        for (auto& [name, expression] : ParseSetClauses(o->exprs, "--expr"))
                          columns.push_back({std::move(name), std::move(expression)});
                        PrintSchemaChange(o->dataset, OpenDataset(o->dataset)->AddColumns(columns));
                        return 0;
                      }});
}

void AddDropColumns(CLI::App& app, Context&, std::vector<Command>& commands) {
  struct Options {
    std::string dataset;
    std::vector<std::string> columns;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "drop-columns", "Drop columns (the data files stay until cleanup)", o->dataset);
  cmd->add_option("columns", o->columns, "Columns to drop (s.a for a nested one)")->required();
  commands.push_back({cmd, [o] {
                        PrintSchemaChange(o->dataset, OpenDataset(o->dataset)->DropColumns(o->columns));
                        return 0;
                      }});
}

void AddAlterColumns(CLI::App& app, Context&, std::vector<Command>& commands) {
  struct Options {
    std::string dataset;
    std::vector<std::string> rename, nullable, not_null;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "alter-columns", "Rename columns or change their nullability", o->dataset);
  cmd->add_option("--rename", o->rename, "old=new (repeatable; s.a=b renames a nested column)");
  cmd->add_option("--nullable", o->nullable, "Column that may hold NULL (repeatable)");
  cmd->add_option("--not-null", o->not_null, "Column that may not hold NULL; refused if it does (repeatable)");
  commands.push_back({cmd, [o] {
                        std::vector<Dataset::ColumnAlteration> changes;
                        for (const auto& r : o->rename) {
                          const size_t eq = r.find('=');
                          if (eq == std::string::npos || eq == 0 || eq + 1 == r.size())
                            ThrowInvalid("--rename '{}': expected old=new", r);
                          changes.push_back({r.substr(0, eq), r.substr(eq + 1), std::nullopt});
                        }
                        for (const auto& c : o->nullable) changes.push_back({c, std::nullopt, true});
                        for (const auto& c : o->not_null) changes.push_back({c, std::nullopt, false});
                        if (changes.empty()) ThrowInvalid("alter-columns: nothing to change (--rename, --nullable, --not-null)");
                        PrintSchemaChange(o->dataset, OpenDataset(o->dataset)->AlterColumns(changes));
                        return 0;
                      }});
}

// merge-insert: pylance's merge_insert from a file (lancelet/merge_insert.h), one commit.
void AddMergeInsert(CLI::App& app, Context&, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, schema_text;
    InputOptions input;
    MergeInsertOptions merge;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "merge-insert", "Update, insert and delete rows by key from a file, in one commit",
                                o->dataset);
  AddInputOptions(cmd, o->input);
  cmd->add_option("--schema", o->schema_text, "Schema of the input (default: inferred; read as the dataset's types)");
  cmd->add_option("--on", o->merge.on, "Key column (repeatable)")->required();
  cmd->add_flag("--when-matched-update-all", o->merge.when_matched_update_all, "Rows whose keys match take the file's values");
  cmd->add_option("--matched-condition", o->merge.matched_condition, "... only where this holds (target.c, source.c)");
  cmd->add_flag("--when-not-matched-insert-all", o->merge.when_not_matched_insert_all, "Rows of the file no row matches are inserted");
  cmd->add_flag("--when-not-matched-by-source-delete", o->merge.when_not_matched_by_source_delete,
                "Rows the file has no key of are deleted");
  cmd->add_option("--by-source-condition", o->merge.by_source_condition, "... only where this holds");
  commands.push_back({cmd, [o] {
                        auto ds = OpenDataset(o->dataset);
                        auto input = OpenInput(o->input.from, o->schema_text, o->input.format);
                        auto r = MergeInsert(ds, *input, o->merge);
                        std::cout << fmt::format("merge-insert: {} updated, {} deleted, {} inserted; {} {} version {}\n",
                                                 r.updated, r.deleted, r.inserted, o->dataset,
                                                 r.dataset == ds ? "unchanged at" : "now at", r.dataset->version());
                        return 0;
                      }});
}

// search: exact nearest neighbours (Dataset::Search, lancelet/vector_search.h).

// A JSON array of numbers ("[0.1, -2, 3e-1]") as doubles; `where` names it in errors.
std::vector<double> ParseVectorText(const std::string& text, const std::string& where) {
  const size_t open = text.find_first_not_of(" \t\r"), close = text.find_last_not_of(" \t\r");
  if (open == std::string::npos || text[open] != '[' || text[close] != ']')
    ThrowInvalid("{}: expected a JSON array of numbers like [0.1, 0.2], got '{}'", where, text);
  std::vector<double> values;
  const std::string inner = text.substr(open + 1, close - open - 1);
  if (inner.find_first_not_of(" \t") == std::string::npos) return values;
  std::stringstream items(inner);
  std::string item;
  while (std::getline(items, item, ',')) {
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    double v = 0;
    const char* first = b == std::string::npos ? item.data() : item.data() + b;
    const char* last = b == std::string::npos ? first : item.data() + e + 1;
    auto [end, ec] = std::from_chars(first, last, v);
    if (first == last || ec != std::errc() || end != last)
      ThrowInvalid("{}: '{}' is not a number (expected a JSON array of numbers)", where, std::string(first, last));
    values.push_back(v);
  }
  return values;
}

// Every query's rows in turn, each batch led by `_query` (the query's 0-based line). The
// queries are answered kWindow at a time on ReadAheadThreads() threads (a search is one
// core's work, so one at a time left the other cores idle), their rows held until
// emitted in line order; an error is raised when its query's turn comes, after the
// rows of the lines before it, as answering them one by one would.
class QueriesReader final : public RecordBatchReader {
 public:
  QueriesReader(DatasetPtr dataset, VectorQuery query, std::vector<std::vector<double>> vectors)
      : dataset_(std::move(dataset)), query_(std::move(query)), vectors_(std::move(vectors)) {
    AnswerFrom(0);
    std::vector<FieldPtr> fields{Field::Make("_query", DataType::Int64(), false)};
    for (const auto& f : first_schema_->fields()) fields.push_back(f);
    schema_ = std::make_shared<Schema>(fields);
  }
  SchemaPtr schema() const override { return schema_; }
  RecordBatchPtr Next() override {
    while (index_ < vectors_.size()) {
      if (index_ >= window_start_ + answers_.size()) AnswerFrom(index_);
      Answer& answer = answers_[index_ - window_start_];
      if (answer.error) std::rethrow_exception(answer.error);
      if (next_batch_ < answer.batches.size()) {
        const RecordBatchPtr batch = std::move(answer.batches[next_batch_++]);
        FixedWidthBuilder<int64_t> line(DataType::Int64());
        for (int64_t r = 0; r < batch->num_rows(); ++r) line.Append(int64_t(index_));
        std::vector<ArrayPtr> columns{line.Finish()};
        for (size_t c = 0; c < size_t(batch->num_columns()); ++c) columns.push_back(batch->column(c));
        return RecordBatch::Make(schema_, columns);
      }
      ++index_;
      next_batch_ = 0;
    }
    return nullptr;
  }

 private:
  static constexpr size_t kWindow = 256;
  struct Answer {
    std::vector<RecordBatchPtr> batches;
    std::exception_ptr error;
  };

  // Queries start.. (kWindow of them at most) answered into answers_.
  void AnswerFrom(size_t start) {
    window_start_ = start;
    answers_.assign(std::min(kWindow, vectors_.size() - start), Answer{});
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next++) < answers_.size();) {
        VectorQuery query = query_;
        query.vector = vectors_[start + i];
        try {
          auto reader = dataset_->Search(query);
          if (start + i == 0) first_schema_ = reader->schema();
          while (auto batch = reader->Next()) answers_[i].batches.push_back(std::move(batch));
        } catch (const Error& e) {
          answers_[i].error =
              std::make_exception_ptr(Error(e.kind(), fmt::format("query on line {}: {}", start + i + 1, e.what())));
        } catch (...) {
          answers_[i].error = std::current_exception();
        }
      }
    };
    if (start == 0) {
      // The first query alone: it opens the index and fills the version's caches, which
      // threads starting together would each do in full.
      answers_.resize(1);
      work();
      if (answers_[0].error) std::rethrow_exception(answers_[0].error);
      answers_.resize(std::min(kWindow, vectors_.size()));
      next = 1;
    }
    std::vector<std::thread> pool;
    const size_t threads = std::min(answers_.size(), size_t(std::max(1, ReadAheadThreads())));
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
  }

  DatasetPtr dataset_;
  VectorQuery query_;
  std::vector<std::vector<double>> vectors_;
  SchemaPtr first_schema_;
  size_t window_start_ = 0;
  std::vector<Answer> answers_;
  size_t index_ = 0;       // the query being emitted
  size_t next_batch_ = 0;  // its next batch
  SchemaPtr schema_;
};

std::vector<std::vector<double>> ReadQueryFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) ThrowInvalid("--queries: cannot open '{}': {}", path, std::strerror(errno));
  std::vector<std::vector<double>> vectors;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    vectors.push_back(ParseVectorText(line, fmt::format("{} line {}", path, number)));
  }
  if (vectors.empty()) ThrowInvalid("--queries: '{}' holds no query (one JSON array per line)", path);
  return vectors;
}

void AddSearch(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string dataset, column, vector, queries, distance, where, columns;
    int64_t k = 10;
    std::optional<int64_t> nprobes, refine;
    bool exact = false, postfilter = false, explain = false;
    std::optional<uint64_t> version;
    OutputOptions out;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = AddDatasetCommand(app, "search", "Nearest neighbours of a vector (through the column's IVF index, else exact)", o->dataset);
  cmd->add_option("--column", o->column, "Vector column (default: the only one)");
  auto* vector = cmd->add_option("--vector", o->vector, "Query vector as a JSON array, e.g. \"[0.1, 0.2]\"");
  auto* queries = cmd->add_option("--queries", o->queries, "File of queries, one JSON array per line");
  vector->excludes(queries);
  context.numbers.Whole(cmd, "-k", o->k, int64_t{1}, std::numeric_limits<int64_t>::max(), "Rows per query (default 10)");
  cmd->add_flag("--exact", o->exact, "Score every row, even when the column has a vector index");
  context.numbers.Whole(cmd, "--nprobes", o->nprobes, int64_t{1}, std::numeric_limits<int64_t>::max(),
                        "IVF partitions to probe (default 20)");
  context.numbers.Whole(cmd, "--refine", o->refine, int64_t{1}, std::numeric_limits<int64_t>::max(),
                        "Re-rank k * N index candidates with their own vectors");
  cmd->add_option("--distance", o->distance, "l2 (default; hamming for uint8 vectors), cosine, dot or hamming");
  cmd->add_option("--where", o->where, "SQL predicate (a prefilter unless --postfilter)");
  cmd->add_flag("--postfilter", o->postfilter, "Apply --where to the k nearest rows (fewer may remain)");
  cmd->add_option("--columns", o->columns, "Comma-separated columns (default: all but the vector column)");
  cmd->add_flag("--explain", o->explain,
                "Print how the search is answered (index, nprobes, candidates, stale rows re-scored, fragments "
                "searched flat) instead of its rows");
  AddVersionOption(cmd, context, o->version);
  AddFormatOption(cmd, o->out);
  commands.push_back({cmd, [o] {
                        if (o->vector.empty() == o->queries.empty()) ThrowInvalid("search: give --vector or --queries");
                        if (o->explain && o->vector.empty()) ThrowInvalid("search: --explain takes --vector, not --queries");
                        VectorQuery query;
                        query.column = o->column;
                        query.k = o->k;
                        if (!o->distance.empty()) query.distance = ParseDistanceType(o->distance);
                        query.filter = o->where;
                        query.postfilter = o->postfilter;
                        query.exact = o->exact;
                        query.nprobes = o->nprobes;
                        query.refine_factor = o->refine;
                        if (!o->columns.empty()) query.columns = SplitList(o->columns);
                        auto ds = OpenDataset(o->dataset, o->version);
                        std::unique_ptr<RecordBatchReader> reader;
                        if (!o->vector.empty()) {
                          query.vector = ParseVectorText(o->vector, "--vector");
                          if (o->explain) {
                            std::cout << ds->ExplainSearch(query);
                            return 0;
                          }
                          reader = ds->Search(query);
                        } else {
                          reader = std::make_unique<QueriesReader>(ds, query, ReadQueryFile(o->queries));
                        }
                        Emit(*reader, o->out.format);
                        return 0;
                      }});
}

// sql: statements over a directory of datasets (src/sql, include/lancelet/sql.h).
void AddSql(CLI::App& app, Context& context, std::vector<Command>& commands) {
  struct Options {
    std::string db_dir = ".", script;
    bool echo = false;
    OutputOptions out;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("sql", "Run SQL statements on the datasets NAME.lance of a directory");
  cmd->add_option("--db", o->db_dir, "Directory holding the datasets (default: the current directory)");
  cmd->add_option("statements", o->script, "Statements separated by ';' (default: read them from stdin)");
  cmd->add_option("-c", o->script, "Statements to run, as the positional (DuckDB's -c)");
  cmd->add_flag("--echo", o->echo, "Print each statement before its result");
  cmd->add_option("--format", o->out.format, "Output format")
      ->check(CLI::IsMember({"table", "box", "csv", "jsonl", "markdown", "line", "arrow"}))
      ->capture_default_str();
  commands.push_back({cmd, [o, &context] {
                        SqlShellOptions options;
                        options.format = o->out.format;
                        options.echo = o->echo;
                        options.progress = context.progress;
                        options.prompt = o->script.empty() && isatty(STDIN_FILENO) != 0;
                        if (options.prompt) {
                          // As DuckDB's shell: editing and history, and a screenful of rows at most.
                          options.edit = true;
                          if (const char* home = std::getenv("HOME"); home && *home)
                            options.history_path = std::string(home) + "/.lancelet_history";
                          if (options.format == "table" || options.format == "box") options.max_rows = 40;
                        }
                        options.storage_options = CommandLineStorageOptions();
                        // A local directory that is not there is a mistyped path more often than a
                        // new database: say so rather than show no tables.
                        std::error_code error;
                        if (o->db_dir.find("://") == std::string::npos && !std::filesystem::is_directory(o->db_dir, error))
                          ThrowNotFound("--db '{}' is not a directory (to start a new database, create it first)",
                                        o->db_dir);
                        return RunSqlShell(o->db_dir, o->script, std::cin, std::cout, std::cerr, options);
                      }});
}

// The long option names of a command, space separated.
std::string OptionNames(const CLI::App& cmd) {
  std::string names;
  for (const CLI::Option* option : cmd.get_options())
    for (const std::string& name : option->get_lnames()) names += (names.empty() ? "--" : " --") + name;
  return names;
}

// A bash completion function made from the commands and options registered on `app` (two
// levels: `lancelet index create`), so it stays true; zsh runs it through bashcompinit.
std::string CompletionScript(const CLI::App& app, const std::string& shell) {
  std::string commands, cases;
  for (const CLI::App* cmd : app.get_subcommands({})) {
    commands += (commands.empty() ? "" : " ") + cmd->get_name();
    std::string nested;
    for (const CLI::App* sub : cmd->get_subcommands({})) {
      nested += (nested.empty() ? "" : " ") + sub->get_name();
      cases += fmt::format("    \"{} {}\") opts=\"{}\" ;;\n", cmd->get_name(), sub->get_name(), OptionNames(*sub));
    }
    cases += fmt::format("    \"{} \"*) opts=\"{}\" ; words=\"{}\" ;;\n", cmd->get_name(), OptionNames(*cmd), nested);
  }
  std::string script = shell == "zsh" ? "autoload -U +X bashcompinit && bashcompinit\n" : "";
  script += fmt::format(
      "# lancelet completion for {0}: eval \"$(lancelet completion {0})\"\n"
      "_lancelet() {{\n"
      "  local cur=\"${{COMP_WORDS[COMP_CWORD]}}\" opts=\"\" words=\"\"\n"
      "  if [[ $COMP_CWORD -eq 1 ]]; then\n"
      "    COMPREPLY=($(compgen -W \"{1} --help --version --storage-option\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  case \"${{COMP_WORDS[1]}} ${{COMP_WORDS[2]}}\" in\n"
      "{2}"
      "  esac\n"
      "  if [[ $cur == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
      "  elif [[ $COMP_CWORD -eq 2 && -n $words ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "  else\n"
      "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "  fi\n"
      "}}\n"
      "complete -o filenames -F _lancelet lancelet\n",
      shell, commands, cases);
  return script;
}

// completion: the script above for bash or zsh.
void AddCompletion(CLI::App& app, Context&, std::vector<Command>& commands) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script: eval \"$(lancelet completion bash)\"");
  cmd->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  commands.push_back({cmd, [shell, &app] {
                        std::cout << CompletionScript(app, *shell);
                        return 0;
                      }});
}

// The subcommands in the order `--help` lists them.
constexpr CommandAdder kCommands[] = {AddCreate, AddAppend,  AddDelete,   AddUpdate,  AddScan,  AddSearch,
                                      AddTake,   AddChanges, AddCount,   AddVersions, AddRestore, AddTag, AddInspect, AddIndex,
                                      AddExplain, AddOptimize, AddCleanup, AddConfig, AddAddColumns, AddDropColumns,
                                      AddAlterColumns, AddMergeInsert, AddSql, AddCompletion};

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app{"lancelet: a native C++ implementation of the Lance table format"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "lancelet " LANCELET_VERSION_STRING);
  app.footer(
      "Examples:\n"
      "  lancelet create people.lance --from people.csv --schema \"id:BIGINT,name:VARCHAR,score:DOUBLE\"\n"
      "  lancelet scan people.lance --columns id,name --where \"score > 0.5\" --limit 10\n"
      "  lancelet update people.lance --set \"score = score * 2\" --where \"id < 100\"\n"
      "  lancelet sql --db . \"SELECT name, avg(score) FROM people GROUP BY ALL ORDER BY 2 DESC\"\n"
      "  lancelet sql --db .            (an interactive shell, .help lists its commands)\n"
      "  eval \"$(lancelet completion bash)\"\n"
      "Each command's --help lists its options.");
  // Subcommands inherit fallthrough when added: their unknown options go to the app.
  app.fallthrough();
  std::vector<std::string> storage_options;
  app.add_option("--storage-option", storage_options,
                 "KEY=VALUE for the store holding the datasets, keyed as the reference's storage_options "
                 "(repeatable; before or after the subcommand)");
  int threads = 0;
  app.add_option("--threads", threads,
                 "Threads a command may use (default: LANCELET_THREADS, else the cores the process may run on)")
      ->check(CLI::Range(1, 1024));
  Context context;
  std::vector<Command> commands;
  for (CommandAdder add : kCommands) add(app, context, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  // Progress of long commands is drawn on stderr when it is a terminal.
  context.progress = isatty(STDERR_FILENO) != 0;
  try {
    ParseStorageOptions(storage_options);
    if (threads > 0) SetReadAheadThreads(threads);
    context.numbers.Apply();
    for (const Command& command : commands)
      if (*command.app) return command.run();
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
